//! thinlab-trace: per-write delivery records and the latency metrics computed from them.
//!
//! Every driver (simulator, emulator, capture analyzer) feeds a [`FlowRecorder`] with the
//! application's writes and the endpoints' trace events; the recorder keeps one
//! [`WriteRecord`] per write plus packet counters ([`FlowRecords`]), and every metric of
//! `shared/notes/interface.md` is computed from those records only ([`metrics`]).
//! [`plot`] draws CDFs of application-layer latency as SVG.

pub mod flows;
pub mod metrics;
pub mod pcap;
pub mod plot;
pub mod records;

pub use metrics::{flow_metrics, latency_cdf, FlowMetrics, LatencyStats, Milestone, Origin};
pub use records::{FlowRecorder, FlowRecords, PacketCounters, WriteRecord};
