//! BIC-TCP (Xu, Harfoush, Rhee, "Binary Increase Congestion Control for Fast, Long Distance
//! Networks", INFOCOM 2004), as Linux's `tcp_bic.c` behaves (Linux 2.6.16's default congestion
//! control until CUBIC).
//!
//! * Below 14 segments (`low_window`) it is Reno. Above, the window grows by a binary search
//!   towards the window of the last loss (`last_max_cwnd`): an increase of the distance / 4 per
//!   RTT, at most 16 segments (`max_increment`), slowly near it (`smooth_part`), then probes
//!   beyond it (max probing), each expressed as `cnt`, the ACKed segments per one-segment
//!   increase, scaled by the measured ACK ratio (`delayed_ack`, a 1/16 filter of segments per
//!   ACK) and updated at most every 1/32 s for an unchanged window.
//! * A loss: ssthresh = max(0.8 × cwnd, 2) (half below `low_window`); with fast convergence
//!   the window of the loss is remembered lower when it shrank since the last one.
//! * A timeout resets the binary search (`bictcp_state` → `bictcp_reset` on entering Loss),
//!   after ssthresh was computed.

use super::reno::RenoWindow;
use super::{CongestionControl, CongestionEvent};
use crate::time::Instant;
use std::time::Duration;

const BETA: u64 = 819; // of 1024: the window keeps 80 % after a loss
const BETA_SCALE: u64 = 1024;
const LOW_WINDOW: u32 = 14;
const MAX_INCREMENT: u32 = 16;
const SMOOTH_PART: u32 = 20;
/// The binary search's divisor (`BICTCP_B`).
const B: u32 = 4;
/// Fixed-point shift of the ACK ratio.
const ACK_RATIO_SHIFT: u32 = 4;
/// An unchanged window is not recomputed more often than this (HZ/32).
const UPDATE_GAP: Duration = Duration::from_micros(31_250);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bic {
    w: RenoWindow,
    /// ACKed segments per one-segment increase.
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: Option<Instant>,
    /// Segments per ACK, << ACK_RATIO_SHIFT.
    delayed_ack: u32,
}

impl Bic {
    pub fn new(initial_window: u32) -> Self {
        Bic {
            w: RenoWindow::new(initial_window),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }

    /// The window of the last loss the search aims at (0: none yet).
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    fn reset(&mut self) {
        let w = self.w.clone();
        *self = Bic::new(1);
        self.w = w;
    }

    /// Linux `bictcp_update`: `cnt` for the window `cwnd`.
    fn update(&mut self, now: Instant, cwnd: u32) {
        if self.last_cwnd == cwnd
            && self
                .last_time
                .is_some_and(|t| now.saturating_duration_since(t) <= UPDATE_GAP)
        {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = Some(now);
        if cwnd <= LOW_WINDOW {
            self.cnt = cwnd;
            return;
        }
        let max = self.last_max_cwnd;
        self.cnt = if cwnd < max {
            let dist = (max - cwnd) / B;
            if dist > MAX_INCREMENT {
                cwnd / MAX_INCREMENT // linear increase
            } else if dist <= 1 {
                cwnd * SMOOTH_PART / B // binary search, close to the target
            } else {
                cwnd / dist // binary search
            }
        } else if cwnd < max + B {
            cwnd * SMOOTH_PART / B // slow start of max probing
        } else if cwnd < max + MAX_INCREMENT * (B - 1) {
            cwnd * (B - 1) / (cwnd - max)
        } else {
            cwnd / MAX_INCREMENT // linear increase
        };
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20; // no loss yet: grow faster
        }
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1)).max(1);
    }

    /// Linux `bictcp_recalc_ssthresh`, from the window `cwnd`.
    fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            // fast convergence: release bandwidth to newer flows
            (cwnd as u64 * (BETA_SCALE + BETA) / (2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        if cwnd <= LOW_WINDOW {
            (cwnd >> 1).max(2)
        } else {
            ((cwnd as u64 * BETA / BETA_SCALE) as u32).max(2)
        }
    }
}

impl CongestionControl for Bic {
    fn cwnd(&self) -> u32 {
        self.w.cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.w.ssthresh()
    }
    fn on_ack(&mut self, now: Instant, acked: u32, cwnd_limited: bool, _rtt: Option<Duration>) {
        // bictcp_acked, in the Open state (the controller hears ACKs outside recovery only)
        let ratio = self.delayed_ack >> ACK_RATIO_SHIFT;
        self.delayed_ack = (self.delayed_ack + acked).saturating_sub(ratio).max(1);
        let Some(acked) = self.w.ack_past_slow_start(acked, cwnd_limited) else {
            return;
        };
        self.update(now, self.w.cwnd());
        self.w.cong_avoid_ai(self.cnt, acked);
    }
    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, base: u32) {
        let ssthresh = if event == CongestionEvent::Timeout && self.w.in_rto_loss() {
            self.w.ssthresh() // a further timeout keeps the first one's
        } else {
            self.recalc_ssthresh(base)
        };
        self.w.reduce(event, ssthresh);
        if event == CongestionEvent::Timeout {
            self.reset();
        }
    }
    fn on_exit_recovery(&mut self, _now: Instant) {
        self.w.on_exit_recovery()
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.w.undo(prior_cwnd, prior_ssthresh)
    }
    fn on_idle_restart(&mut self, _now: Instant) {
        self.w.on_idle_restart()
    }
}
