//! Per-endpoint counters. Metrics shown to users are computed by thinlab-trace from events;
//! these counters are for diagnostics, tests and the dropped-input accounting.

use std::time::Duration;

#[derive(Clone, Debug, Default, PartialEq)]
// In declaration order (repr(C)): the counters every segment updates first
// (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct Stats {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub payload_bytes_sent: u64,
    pub segments_received: u64,
    /// Fast recoveries undone (D-SACK or timestamps showed them spurious).
    pub undos: u64,
    pub duplicate_acks_received: u64,
    pub retransmissions_rto: u64,
    pub retransmissions_fast: u64,
    pub retransmissions_early: u64,
    pub retransmissions_tlp: u64,
    /// Fast retransmissions of segments RACK marked lost (not in `retransmissions_fast`).
    pub retransmissions_rack: u64,
    /// Early retransmissions by the F-RTO threshold (not in `retransmissions_early`).
    pub retransmissions_early_threshold: u64,
    pub rto_events: u64,
    /// Retransmissions found unnecessary (timestamps / DSACK evidence).
    pub spurious_retransmissions: u64,
    /// D-SACK blocks accepted as reports of our own unnecessary retransmissions.
    pub dsacks: u64,
    /// Duplicate segments reported by D-SACK, accepted or not (Linux `dsack_dups`).
    pub dsack_dups: u64,
    /// Tail loss probes sent, of new data and retransmissions (Linux `TCPLossProbes`).
    pub tlp_probes: u64,
    /// Total time spent waiting for an RTO to expire with nothing sent meanwhile.
    pub frozen_time: Duration,
    /// Incoming segments dropped, by reason (see `event::DropReason`).
    pub dropped_malformed: u64,
    pub dropped_wrong_connection: u64,
    pub dropped_out_of_window: u64,
    pub dropped_bad_ack: u64,
    pub dropped_bad_state: u64,
}
