//! TCP Westwood+ (Mascolo et al., "TCP Westwood: Bandwidth Estimation for Enhanced Transport
//! over Wireless Links", MobiCom 2001; Grieco & Mascolo's Westwood+ filter), as Linux's
//! `tcp_westwood.c` behaves: Reno's growth, and after a loss a window from the estimated
//! bandwidth instead of half the window.
//!
//! * Bandwidth: the segments acknowledged in a window of at least one RTT (and at least
//!   50 ms) over its length, smoothed twice with weight 1/8 (`westwood_filter`); the first
//!   sample seeds both estimates.
//! * `bw_rttmin` = max(bandwidth estimate × minimum RTT, 2) segments.
//! * Entering fast recovery: Reno's ssthresh (half the window, `tcp_reno_ssthresh`); when the
//!   reduction completes (end of recovery or CWR) cwnd = ssthresh = `bw_rttmin`
//!   (`CA_EVENT_COMPLETE_CWR`). A timeout: cwnd 1, ssthresh = `bw_rttmin` (`CA_EVENT_LOSS`),
//!   and the next RTT sample starts the minimum RTT afresh.
//! * Difference: the controller sees the ACKs of new data outside recovery only, so segments
//!   acknowledged during recovery do not enter the estimate (Linux counts duplicate ACKs as
//!   delivered segments).

use super::reno::RenoWindow;
use super::{CongestionControl, CongestionEvent};
use crate::time::Instant;
use std::time::Duration;

/// Shortest estimation window (Linux `TCP_WESTWOOD_RTT_MIN`, HZ/20).
const MIN_WINDOW: Duration = Duration::from_millis(50);

#[derive(Clone, Debug, PartialEq)]
pub struct Westwood {
    w: RenoWindow,
    /// Estimates, segments per second: once and twice filtered.
    bw_ns_est: f64,
    bw_est: f64,
    /// Segments acknowledged since the window began.
    bk: u32,
    window_start: Option<Instant>,
    /// Latest and smallest RTT samples.
    rtt: Option<Duration>,
    rtt_min: Option<Duration>,
    /// After a timeout the next sample replaces the minimum RTT (Linux `reset_rtt_min`).
    reset_rtt_min: bool,
}

impl Westwood {
    pub fn new(initial_window: u32) -> Self {
        Westwood {
            w: RenoWindow::new(initial_window),
            bw_ns_est: 0.0,
            bw_est: 0.0,
            bk: 0,
            window_start: None,
            rtt: None,
            rtt_min: None,
            reset_rtt_min: false,
        }
    }

    /// The bandwidth estimate, segments per second.
    pub fn bandwidth(&self) -> f64 {
        self.bw_est
    }

    /// max(bandwidth × minimum RTT, 2) segments (Linux `tcp_westwood_bw_rttmin`); None before
    /// there is an estimate.
    pub fn bw_rttmin(&self) -> Option<u32> {
        let rtt_min = self.rtt_min?;
        (self.bw_est > 0.0).then(|| ((self.bw_est * rtt_min.as_secs_f64()) as u32).max(2))
    }

    fn update_window(&mut self, now: Instant) {
        let start = *self.window_start.get_or_insert(now);
        let delta = now.saturating_duration_since(start);
        let Some(rtt) = self.rtt else { return };
        if delta > rtt.max(MIN_WINDOW) {
            let sample = self.bk as f64 / delta.as_secs_f64();
            if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = (7.0 * self.bw_ns_est + sample) / 8.0;
                self.bw_est = (7.0 * self.bw_est + self.bw_ns_est) / 8.0;
            }
            self.bk = 0;
            self.window_start = Some(now);
        }
    }

    /// cwnd = ssthresh = `bw_rttmin`, when the reduction completes.
    fn complete_reduction(&mut self) {
        if let Some(w) = self.bw_rttmin() {
            self.w.set(w, w);
        }
    }
}

impl CongestionControl for Westwood {
    fn cwnd(&self) -> u32 {
        self.w.cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.w.ssthresh()
    }
    fn on_ack(&mut self, now: Instant, acked: u32, cwnd_limited: bool, rtt: Option<Duration>) {
        if let Some(r) = rtt {
            self.rtt = Some(r);
            self.rtt_min = match (self.reset_rtt_min, self.rtt_min) {
                (false, Some(m)) => Some(m.min(r)),
                _ => Some(r),
            };
            self.reset_rtt_min = false;
        }
        self.bk = self.bk.saturating_add(acked);
        self.update_window(now);
        self.w.on_ack(acked, cwnd_limited);
    }
    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, base: u32) {
        match event {
            CongestionEvent::FastRecovery => self.w.on_enter_recovery(base),
            CongestionEvent::Cwr => {
                self.w.on_cwr(base);
                self.complete_reduction();
            }
            CongestionEvent::Timeout => {
                self.w.on_rto(base);
                if let Some(w) = self.bw_rttmin() {
                    self.w.set(1, w);
                }
                self.reset_rtt_min = true;
            }
        }
    }
    fn on_exit_recovery(&mut self, _now: Instant) {
        self.w.on_exit_recovery();
        self.complete_reduction();
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.w.undo(prior_cwnd, prior_ssthresh)
    }
    fn on_idle_restart(&mut self, _now: Instant) {
        self.w.on_idle_restart()
    }
}
