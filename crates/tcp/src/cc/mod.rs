//! Congestion control: one trait with no-op default hooks, dispatched through the [`Cc`] enum
//! built from config (mechanisms.md §8). Windows are counted in segments, as Linux does.
//! Loss *detection* and the recovery episode (NewReno partial ACKs, RFC 6675 pipe) live in
//! `recovery`; this module only says how the window reacts.

use crate::config::{CcAlgorithm, TcpConfig};
use crate::time::Instant;
use std::time::Duration;

/// What a congestion controller is told. All counts are in segments.
pub trait CongestionControl {
    /// Congestion window, segments.
    fn cwnd(&self) -> u32;
    /// Slow-start threshold, segments.
    fn ssthresh(&self) -> u32;
    /// New data was cumulatively acknowledged outside recovery. `acked` segments,
    /// `in_flight` before the ACK, `rtt` the sample if this ACK gave one.
    fn on_ack(&mut self, _now: Instant, _acked: u32, _in_flight: u32, _rtt: Option<Duration>) {}
    /// A loss was detected by duplicate ACKs / SACK: set ssthresh and the recovery cwnd.
    fn on_enter_recovery(&mut self, _now: Instant, _in_flight: u32) {}
    /// Recovery ended (the recovery point was acknowledged): deflate cwnd to ssthresh.
    fn on_exit_recovery(&mut self, _now: Instant) {}
    /// The retransmission timer expired: ssthresh from flight, cwnd to 1 (RFC 5681 §3.1).
    fn on_rto(&mut self, _now: Instant, _in_flight: u32) {}
    /// The sender was idle for longer than an RTO (RFC 5681 §4.1 restart window).
    fn on_idle_restart(&mut self, _now: Instant) {}
}

/// Enum dispatch over the algorithms of `CcAlgorithm`. (Interface fixed; implementation pending.)
#[derive(Clone, Debug)]
pub enum Cc {
    Pending,
}

impl Cc {
    pub fn new(_cfg: &TcpConfig) -> Cc {
        let _ = CcAlgorithm::NewReno;
        todo!()
    }
}
