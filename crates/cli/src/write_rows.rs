//! Per-write rows: one application write's milestones, as `writes.parquet` and the Python
//! API's `Results.writes` give them. Times are nanoseconds of the run's clock (so they carry
//! over exactly between processes, e.g. from a Ray worker); latencies in ms are computed from
//! them exactly as the metrics compute theirs (`thinlab_trace::histogram::ns_to_ms`).

use serde::{Deserialize, Serialize};
use thinlab_trace::histogram::ns_to_ms;
use thinlab_trace::records::WriteRecord;

/// One write of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteRow {
    /// When the application wrote, ns since the start of the run.
    pub write_ns: u64,
    /// Bytes the write carried.
    pub bytes: u64,
    /// When its first byte was first sent, ns.
    pub first_send_ns: Option<u64>,
    /// When its last byte reached the receiver's TCP (all of it received, maybe out of order).
    pub transport_ns: Option<u64>,
    /// When its last byte was delivered in order to the receiving application.
    pub app_ns: Option<u64>,
    /// When its last byte was cumulatively acknowledged at the sender.
    pub acked_ns: Option<u64>,
}

impl WriteRow {
    pub fn from_record(w: &WriteRecord) -> Self {
        let ns = |t: thinlab_tcp::Instant| t.as_nanos();
        WriteRow {
            write_ns: ns(w.write_time),
            bytes: w.end - w.start,
            first_send_ns: w.first_send.map(ns),
            transport_ns: w.transport.map(ns),
            app_ns: w.app.map(ns),
            acked_ns: w.acked.map(ns),
        }
    }

    /// Milliseconds from the write to `milestone` (never negative), if it was reached.
    pub fn latency_ms(&self, milestone: Option<u64>) -> Option<f64> {
        milestone.map(|t| ns_to_ms(t.saturating_sub(self.write_ns)))
    }
}
