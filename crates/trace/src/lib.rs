//! thinlab-trace: per-write delivery records and the latency metrics computed from them.
//!
//! Every driver (simulator, emulator, capture analyzer) feeds a [`FlowRecorder`] with the
//! application's writes and the endpoints' trace events; the recorder keeps one [`WriteRecord`] per
//! write plus packet counters ([`FlowRecords`]), and every metric of `docs/spec/interface.md` is
//! computed from those records only ([`metrics`]). [`plot`] draws CDFs of application-layer latency
//! as SVG.
//!
//! Captures: [`pcap`] reads pcap/pcapng files into TCP packets (never panics, reports where
//! a truncated or corrupt file stopped), and [`flows`] reconstructs the connections in them
//! and feeds the same [`FlowRecorder`], so `thinlab analyze` computes the metrics with this
//! crate's code and definitions (latencies from first transmission: "first-send").

pub mod attribution;
pub mod clock;
pub mod flows;
pub mod histogram;
pub mod metrics;
pub mod palette;
pub mod pcap;
pub mod plot;
pub mod plot_layout;
pub mod records;
pub mod series;
pub mod status;
pub mod write_pattern;
pub mod xy_plot;

pub use metrics::{
    flow_metrics, flow_metrics_and_app_latency, latency_cdf, FlowMetrics, LatencyStats, Milestone,
    Origin,
};
pub use records::{
    FlowRecorder, FlowRecords, PacketCounters, RetireSink, RetiredLatencies, WriteRecord, WriteSink,
};
pub use status::FlowStatus;
