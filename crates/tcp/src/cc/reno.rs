//! Reno window arithmetic in segments (RFC 5681; Linux `tcp_reno_cong_avoid`,
//! `tcp_slow_start`, `tcp_cong_avoid_ai`), shared by [`Reno`] and
//! [`super::NewReno`], which differ only in how the endpoint runs fast recovery.
//!
//! * Slow start (cwnd < ssthresh): cwnd += acked, stopping at ssthresh; the rest of `acked`
//!   goes to congestion avoidance (Linux ≥ 3.18 `tcp_slow_start`).
//! * Congestion avoidance: `cwnd_cnt` counts acked segments; every `cwnd` of them add one
//!   segment (Linux `snd_cwnd_cnt`, ≈ RFC 5681's cwnd += 1/cwnd per segment).
//! * Growth only while cwnd-limited, as the sender judges it (`crate::cwnd_validation`:
//!   Linux `tcp_is_cwnd_limited`; RFC 5681 §4.1/RFC 7661 intent). An application-limited thin
//!   stream therefore keeps its initial window.
//! * Loss by dupACK/SACK: ssthresh = max(base/2, 2), cwnd = ssthresh (RFC 5681 eq. (4);
//!   RFC 6582 §3.2 step 3 without the "+3" inflation). There is no window inflation or
//!   deflation per duplicate/partial ACK: as in Linux, the endpoint's recovery counts the
//!   packets in flight (RFC 6675 pipe or NewReno `sacked_out`) against this cwnd instead.
//!   Exit: cwnd = ssthresh. `base` is what the endpoint's `ReductionBase` says: cwnd (Linux
//!   `tcp_reno_ssthresh`, every profile but `rfc`) or FlightSize (RFC 5681, `rfc`).
//! * RTO: ssthresh = max(base/2, 2), cwnd = 1 (RFC 5681 §3.1 loss window). A further RTO
//!   before any new data is acknowledged keeps ssthresh (RFC 5681 §3.1: ssthresh is held
//!   constant when a segment already retransmitted by the timer times out again; Linux
//!   `tcp_enter_loss` recomputes it only when `icsk_retransmits` is 0).
//! * Restart after idle: ssthresh = max(ssthresh, 3/4·cwnd) (RFC 2861, Linux
//!   `tcp_current_ssthresh`), cwnd = min(cwnd, initial window) (RFC 5681 §4.1).

use super::{CongestionEvent, INFINITE_SSTHRESH};

/// The shared Reno window state and arithmetic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenoWindow {
    cwnd: u32,
    ssthresh: u32,
    /// Segments acknowledged in congestion avoidance since the last increase.
    cwnd_cnt: u32,
    initial_window: u32,
    /// An RTO fired and no new data has been acknowledged since.
    in_rto_loss: bool,
}

impl RenoWindow {
    pub fn new(initial_window: u32) -> Self {
        let iw = initial_window.max(1);
        RenoWindow {
            cwnd: iw,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            initial_window: iw,
            in_rto_loss: false,
        }
    }

    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    /// Linux `tcp_in_slow_start`: cwnd < ssthresh.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    /// Slow start: grow by `acked` up to ssthresh; returns the segments left over.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd.min(INFINITE_SSTHRESH);
        left
    }

    /// Additive increase: one segment per `w` segments acknowledged (Linux `tcp_cong_avoid_ai`).
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd = self.cwnd.saturating_add(1);
        }
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd = self.cwnd.saturating_add(delta);
        }
        self.cwnd = self.cwnd.min(INFINITE_SSTHRESH);
    }

    /// Linux `tcp_reno_cong_avoid`.
    pub fn on_ack(&mut self, acked: u32, cwnd_limited: bool) {
        if let Some(acked) = self.ack_past_slow_start(acked, cwnd_limited) {
            self.cong_avoid_ai(self.cwnd, acked);
        }
    }

    /// The part of an ACK every controller shares: notes the acknowledgement, grows the window
    /// in slow start if it limited the sender, and returns the segments left for congestion
    /// avoidance (`None` when there are none, or the sender was not cwnd-limited).
    pub fn ack_past_slow_start(&mut self, acked: u32, cwnd_limited: bool) -> Option<u32> {
        self.note_acked(acked);
        if !cwnd_limited {
            return None;
        }
        let mut acked = acked;
        if self.in_slow_start() {
            acked = self.slow_start(acked);
        }
        (acked > 0).then_some(acked)
    }

    /// RFC 5681 eq. (4): max(FlightSize / 2, 2).
    fn halved(in_flight: u32) -> u32 {
        (in_flight / 2).max(2)
    }

    pub fn on_enter_recovery(&mut self, in_flight: u32) {
        self.in_rto_loss = false;
        self.ssthresh = Self::halved(in_flight);
        self.cwnd = self.ssthresh;
        self.cwnd_cnt = 0;
    }

    pub fn on_exit_recovery(&mut self) {
        self.cwnd = self.ssthresh;
        self.cwnd_cnt = 0;
    }

    pub fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.cwnd = self.cwnd.max(prior_cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }

    /// The multiplicative decrease of a congestion signal without recovery (Linux CWR):
    /// ssthresh and cwnd to half of `base` at once.
    pub fn on_cwr(&mut self, base: u32) {
        self.on_enter_recovery(base);
        self.on_exit_recovery();
    }

    /// Reno's response to a congestion event.
    pub fn on_congestion_event(&mut self, event: CongestionEvent, base: u32) {
        match event {
            CongestionEvent::FastRecovery => self.on_enter_recovery(base),
            CongestionEvent::Cwr => self.on_cwr(base),
            CongestionEvent::Timeout => self.on_rto(base),
        }
    }

    pub fn on_rto(&mut self, in_flight: u32) {
        if !self.in_rto_loss {
            self.ssthresh = Self::halved(in_flight);
        }
        self.in_rto_loss = true;
        self.cwnd = 1;
        self.cwnd_cnt = 0;
    }

    /// A reduction that is not a loss response (PERT's early response): cwnd =
    /// ⌊cwnd·keep_num/keep_den⌋ (at least 1), ssthresh = max(that, 2), so that the flow continues
    /// in congestion avoidance from the reduced window.
    pub fn scale_down(&mut self, keep_num: u32, keep_den: u32) {
        let w = (self.cwnd as u64 * keep_num as u64 / keep_den.max(1) as u64) as u32;
        self.in_rto_loss = false; // only called on an ACK of new data
        self.ssthresh = w.max(2);
        self.cwnd = w.max(1);
        self.cwnd_cnt = 0;
    }

    /// New data was acknowledged (clears the RTO loss state), for controllers that grow the
    /// window themselves.
    pub fn note_acked(&mut self, acked: u32) {
        if acked > 0 {
            self.in_rto_loss = false;
        }
    }

    /// Sets cwnd (at least 1) and ssthresh (at least 2), as a controller's own rule decides.
    pub fn set(&mut self, cwnd: u32, ssthresh: u32) {
        self.cwnd = cwnd.clamp(1, INFINITE_SSTHRESH);
        self.ssthresh = ssthresh.clamp(2, INFINITE_SSTHRESH);
    }

    /// A congestion event with the controller's own ssthresh: fast recovery and CWR bring
    /// cwnd to it, a timeout to 1 (and a further timeout before new data is acknowledged
    /// keeps the ssthresh of the first, as [`RenoWindow::on_rto`]).
    pub fn reduce(&mut self, event: CongestionEvent, ssthresh: u32) {
        let ssthresh = ssthresh.max(2);
        match event {
            CongestionEvent::FastRecovery | CongestionEvent::Cwr => {
                self.in_rto_loss = false;
                self.ssthresh = ssthresh;
                self.cwnd = ssthresh;
            }
            CongestionEvent::Timeout => {
                if !self.in_rto_loss {
                    self.ssthresh = ssthresh;
                }
                self.in_rto_loss = true;
                self.cwnd = 1;
            }
        }
        self.cwnd_cnt = 0;
    }

    /// An RTO fired and no new data has been acknowledged since.
    pub fn in_rto_loss(&self) -> bool {
        self.in_rto_loss
    }

    pub fn on_idle_restart(&mut self) {
        let three_quarters = (self.cwnd >> 1) + (self.cwnd >> 2);
        self.ssthresh = self.ssthresh.max(three_quarters);
        self.cwnd = self.cwnd.min(self.initial_window);
        self.cwnd_cnt = 0;
    }
}

/// Implements [`CongestionControl`] for a newtype around [`RenoWindow`] (field `w`).
macro_rules! reno_family_cc {
    ($ty:ty) => {
        impl $crate::cc::CongestionControl for $ty {
            fn cwnd(&self) -> u32 {
                self.w.cwnd()
            }
            fn ssthresh(&self) -> u32 {
                self.w.ssthresh()
            }
            fn on_ack(
                &mut self,
                _now: $crate::time::Instant,
                acked: u32,
                cwnd_limited: bool,
                _rtt: Option<::std::time::Duration>,
            ) {
                self.w.on_ack(acked, cwnd_limited)
            }
            fn on_congestion_event(
                &mut self,
                _now: $crate::time::Instant,
                event: $crate::cc::CongestionEvent,
                base: u32,
            ) {
                self.w.on_congestion_event(event, base)
            }
            fn on_exit_recovery(&mut self, _now: $crate::time::Instant) {
                self.w.on_exit_recovery()
            }
            fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
                self.w.undo(prior_cwnd, prior_ssthresh)
            }
            fn on_idle_restart(&mut self, _now: $crate::time::Instant) {
                self.w.on_idle_restart()
            }
        }
    };
}
pub(crate) use reno_family_cc;

/// Reno (RFC 5681): Reno's window; its fast recovery, which ends at the first ACK of new data,
/// is run by `recovery` (`FastRecoveryExit::FirstNewAck`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reno {
    w: RenoWindow,
}

impl Reno {
    pub fn new(initial_window: u32) -> Self {
        Reno {
            w: RenoWindow::new(initial_window),
        }
    }
    /// The window state (for tests and tracing).
    pub fn window(&self) -> &RenoWindow {
        &self.w
    }
}

reno_family_cc!(Reno);
