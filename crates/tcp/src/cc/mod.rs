//! Congestion control: one trait with no-op default hooks, dispatched through the [`Cc`] enum built
//! from config (the congestion-control section of docs/spec/mechanisms.md). Windows are counted in segments, as Linux does. Loss
//! *detection* and the recovery episode (NewReno partial ACKs, RFC 6675 pipe) live in `recovery`;
//! this module only says how the window reacts.
//!
//! Sources: RFC 5681 (slow start, congestion avoidance, loss responses, restart after idle),
//! RFC 6582 (NewReno), Linux `tcp_reno_cong_avoid`/`tcp_slow_start`/`tcp_cong_avoid_ai`.
//! Algorithms: [`reno`] (the shared window arithmetic and Reno), [`newreno`], [`cubic`]
//! (RFC 9438), [`pert`] (NewReno + delay-based early response), and Linux 2.6's [`bic`],
//! [`westwood`] (Westwood+) and [`vegas`]. Adding one: a module with a
//! type implementing [`CongestionControl`], a `CcAlgorithm` value, a [`Cc`] variant, one arm in
//! [`Cc::new`] and [`Cc::algorithm`], and one line in the `dispatch!` macro below.

pub mod bic;
pub mod cubic;
pub mod newreno;
pub mod pert;
pub mod pert_alpha;
pub mod reno;
pub mod vegas;
pub mod westwood;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_linux26;

pub use bic::Bic;
pub use cubic::Cubic;
pub use newreno::NewReno;
pub use pert::Pert;
pub use reno::{Reno, RenoWindow};
pub use vegas::Vegas;
pub use westwood::Westwood;

use crate::config::{CcAlgorithm, TcpConfig};
use crate::time::Instant;
use std::time::Duration;

/// Linux `TCP_INFINITE_SSTHRESH`: the initial ssthresh, "no slow-start threshold yet".
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// What a congestion controller is told. All counts are in segments.
pub trait CongestionControl {
    /// Congestion window, segments.
    fn cwnd(&self) -> u32;
    /// Slow-start threshold, segments.
    fn ssthresh(&self) -> u32;
    /// New data was cumulatively acknowledged outside recovery: `acked` segments; `cwnd_limited`
    /// whether the window was in use (the sender, not the controller, judges it: Linux
    /// `tcp_is_cwnd_limited`), `rtt` the sample if this ACK gave one.
    fn on_ack(&mut self, _now: Instant, _acked: u32, _cwnd_limited: bool, _rtt: Option<Duration>) {}
    /// A congestion signal: set ssthresh from `base` (cwnd, or the RFC 5681 FlightSize, as the
    /// profile says) and the window the event leaves.
    fn on_congestion_event(&mut self, _now: Instant, _event: CongestionEvent, _base: u32) {}
    /// Recovery ended (the recovery point was acknowledged): deflate cwnd to ssthresh.
    fn on_exit_recovery(&mut self, _now: Instant) {}
    /// A reduction proved spurious (Linux `tcp_undo_cwnd_reduction` with
    /// `tcp_reno_undo_cwnd`): cwnd = max(cwnd, prior_cwnd), ssthresh = max(ssthresh,
    /// prior_ssthresh).
    fn undo(&mut self, _prior_cwnd: u32, _prior_ssthresh: u32) {}
    /// The sender was idle for longer than an RTO (RFC 5681 §4.1 restart window).
    fn on_idle_restart(&mut self, _now: Instant) {}
    /// Still in the initial slow start (no loss response yet): Linux `tcp_in_initial_slowstart`,
    /// used by thin-stream detection (Evensen, "Improving TCP for time-dependent applications",
    /// §2.4; docs/spec/mechanisms.md, thin-stream detection).
    fn in_initial_slow_start(&self) -> bool {
        self.ssthresh() >= INFINITE_SSTHRESH
    }
}

/// The congestion signals a controller reacts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CongestionEvent {
    /// Loss detected by duplicate ACKs, SACK or RACK: fast recovery begins (RFC 5681 §3.2);
    /// cwnd comes down to ssthresh (PRR, where on, paces the way down in `recovery`).
    FastRecovery,
    /// A congestion signal without loss recovery (Linux CWR state: ECN, or a loss RDB's
    /// redundancy already repaired): the multiplicative decrease of a loss, applied at once;
    /// no retransmission follows.
    Cwr,
    /// The retransmission timer expired (RFC 5681 §3.1): ssthresh from `base`, cwnd to 1.
    Timeout,
}

/// Enum dispatch over the algorithms of `CcAlgorithm`.
#[derive(Clone, Debug, PartialEq)]
// The tag first, then the algorithm's state (`repr(u8)`): without it the compiler kept the tag in
// a niche at the end of the largest variant's (PERT's) state, a cache line or more away from the
// state of the others, and every ACK read both lines (docs/performance/many-flows.md, "Misses perf
// could still point at").
#[repr(u8)]
pub enum Cc {
    Reno(Reno),
    NewReno(NewReno),
    Cubic(Cubic),
    Pert(Pert),
    Bic(Bic),
    Westwood(Westwood),
    Vegas(Vegas),
}

/// `dispatch!(self, c => expr)`: evaluate `expr` with `c` bound to the inner algorithm.
macro_rules! dispatch {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Cc::Reno($c) => $e,
            Cc::NewReno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Pert($c) => $e,
            Cc::Bic($c) => $e,
            Cc::Westwood($c) => $e,
            Cc::Vegas($c) => $e,
        }
    };
}

impl Cc {
    pub fn new(cfg: &TcpConfig) -> Cc {
        match cfg.cc {
            CcAlgorithm::Reno => Cc::Reno(Reno::new(cfg.initial_window)),
            CcAlgorithm::NewReno => Cc::NewReno(NewReno::new(cfg.initial_window)),
            CcAlgorithm::Cubic => Cc::Cubic(Cubic::new(cfg.initial_window)),
            CcAlgorithm::Pert => Cc::Pert(Pert::new(cfg.initial_window, cfg.cc_seed)),
            CcAlgorithm::PertAdaptive => Cc::Pert(Pert::adaptive(cfg.initial_window, cfg.cc_seed)),
            CcAlgorithm::Bic => Cc::Bic(Bic::new(cfg.initial_window)),
            CcAlgorithm::Westwood => Cc::Westwood(Westwood::new(cfg.initial_window)),
            CcAlgorithm::Vegas => Cc::Vegas(Vegas::new(cfg.initial_window)),
        }
    }

    /// The algorithm this controller runs.
    pub fn algorithm(&self) -> CcAlgorithm {
        match self {
            Cc::Reno(_) => CcAlgorithm::Reno,
            Cc::NewReno(_) => CcAlgorithm::NewReno,
            Cc::Cubic(_) => CcAlgorithm::Cubic,
            Cc::Pert(p) if p.is_adaptive() => CcAlgorithm::PertAdaptive,
            Cc::Pert(_) => CcAlgorithm::Pert,
            Cc::Bic(_) => CcAlgorithm::Bic,
            Cc::Westwood(_) => CcAlgorithm::Westwood,
            Cc::Vegas(_) => CcAlgorithm::Vegas,
        }
    }
}

impl CongestionControl for Cc {
    fn cwnd(&self) -> u32 {
        dispatch!(self, c => c.cwnd())
    }
    fn ssthresh(&self) -> u32 {
        dispatch!(self, c => c.ssthresh())
    }
    fn on_ack(&mut self, now: Instant, acked: u32, cwnd_limited: bool, rtt: Option<Duration>) {
        dispatch!(self, c => c.on_ack(now, acked, cwnd_limited, rtt))
    }
    fn on_congestion_event(&mut self, now: Instant, event: CongestionEvent, base: u32) {
        dispatch!(self, c => c.on_congestion_event(now, event, base))
    }
    fn on_exit_recovery(&mut self, now: Instant) {
        dispatch!(self, c => c.on_exit_recovery(now))
    }
    fn on_idle_restart(&mut self, now: Instant) {
        dispatch!(self, c => c.on_idle_restart(now))
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        dispatch!(self, c => c.undo(prior_cwnd, prior_ssthresh))
    }
    fn in_initial_slow_start(&self) -> bool {
        dispatch!(self, c => c.in_initial_slow_start())
    }
}
