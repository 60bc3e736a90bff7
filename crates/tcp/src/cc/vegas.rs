//! TCP Vegas (Brakmo, Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 1995), as Linux's `tcp_vegas.c` behaves: once per RTT, compare the
//! window with the one the smallest RTT ever seen (`baseRTT`) would need, and keep between
//! `alpha` = 2 and `beta` = 4 segments queued in the network.
//!
//! * Per round (one RTT: in Linux until the ACK of the first segment sent after the round
//!   began; here, until the smallest RTT of the round has passed): `diff` = cwnd × (RTT −
//!   baseRTT) / baseRTT, with RTT the round's smallest sample. In slow start, `diff` > `gamma`
//!   = 1 ends it (cwnd = min(cwnd, target + 1)); in congestion avoidance, `diff` > `beta`
//!   shrinks cwnd by one, `diff` < `alpha` grows it by one. cwnd stays ≥ 2; ssthresh follows
//!   (`tcp_current_ssthresh`). Rounds with at most two RTT samples fall back to Reno.
//! * As in Linux, the Vegas rule does not ask whether the window was in use: an application-
//!   limited stream's window moves with the delay it sees.
//! * Losses: Reno's responses (`tcp_reno_ssthresh`); Vegas pauses outside the Open state and
//!   starts a new round when it resumes (here: the next ACK of new data outside recovery).

use super::reno::RenoWindow;
use super::{CongestionControl, CongestionEvent};
use crate::time::Instant;
use std::time::Duration;

const ALPHA: u64 = 2;
const BETA: u64 = 4;
const GAMMA: u64 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vegas {
    w: RenoWindow,
    /// Smallest RTT ever seen.
    base_rtt: Option<Duration>,
    /// Smallest RTT of this round, and the samples in it.
    min_rtt: Option<Duration>,
    cnt_rtt: u32,
    round_start: Option<Instant>,
    /// Vegas is on (the Open state); off from a congestion event to the next ACK after it.
    doing_vegas: bool,
}

impl Vegas {
    pub fn new(initial_window: u32) -> Self {
        Vegas {
            w: RenoWindow::new(initial_window),
            base_rtt: None,
            min_rtt: None,
            cnt_rtt: 0,
            round_start: None,
            doing_vegas: true,
        }
    }

    /// Linux `vegas_enable`: a new round from `now` (baseRTT is kept).
    fn enable(&mut self, now: Instant) {
        self.doing_vegas = true;
        self.round_start = Some(now);
        self.cnt_rtt = 0;
        self.min_rtt = None;
    }

    /// ssthresh = min(ssthresh, cwnd − 1) (Linux `tcp_vegas_ssthresh`).
    fn lower_ssthresh(&mut self) {
        let cwnd = self.w.cwnd();
        let ssthresh = self.w.ssthresh().min(cwnd.saturating_sub(1));
        self.w.set(cwnd, ssthresh);
    }

    /// The round's Vegas decision.
    fn end_round(&mut self, acked: u32, cwnd_limited: bool) {
        let (Some(base), Some(rtt)) = (self.base_rtt, self.min_rtt) else {
            return;
        };
        if self.cnt_rtt <= 2 {
            self.w.on_ack(acked, cwnd_limited);
            return;
        }
        let (base_us, rtt_us) = (base.as_micros().max(1) as u64, rtt.as_micros() as u64);
        let cwnd = self.w.cwnd() as u64;
        let target = cwnd * base_us / rtt_us.max(1);
        let diff = cwnd * rtt_us.saturating_sub(base_us) / base_us;
        if diff > GAMMA && self.w.in_slow_start() {
            // too much queued: leave slow start at the target window
            let w = (cwnd.min(target + 1)) as u32;
            self.w.set(w, self.w.ssthresh());
            self.lower_ssthresh();
        } else if self.w.in_slow_start() {
            self.w.slow_start(acked);
        } else if diff > BETA {
            self.w
                .set(self.w.cwnd().saturating_sub(1), self.w.ssthresh());
            self.lower_ssthresh();
        } else if diff < ALPHA {
            self.w.set(self.w.cwnd() + 1, self.w.ssthresh());
        }
        let cwnd = self.w.cwnd().max(2);
        // tcp_current_ssthresh: max(ssthresh, 3/4 cwnd)
        let ssthresh = self.w.ssthresh().max((cwnd >> 1) + (cwnd >> 2));
        self.w.set(cwnd, ssthresh);
    }
}

impl CongestionControl for Vegas {
    fn cwnd(&self) -> u32 {
        self.w.cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.w.ssthresh()
    }
    fn on_ack(&mut self, now: Instant, acked: u32, cwnd_limited: bool, rtt: Option<Duration>) {
        // tcp_vegas_pkts_acked: RTT samples, never zero
        if let Some(r) = rtt {
            let r = r + Duration::from_micros(1);
            self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.cnt_rtt += 1;
        }
        let resumed = !self.doing_vegas;
        self.w.note_acked(acked);
        if resumed {
            self.enable(now);
            self.w.on_ack(acked, cwnd_limited);
            return;
        }
        let start = *self.round_start.get_or_insert(now);
        let round = self.min_rtt.or(self.base_rtt);
        if round.is_some_and(|r| now.saturating_duration_since(start) >= r) {
            self.end_round(acked, cwnd_limited);
            self.round_start = Some(now);
            self.cnt_rtt = 0;
            self.min_rtt = None;
        } else if self.w.in_slow_start() && cwnd_limited {
            self.w.slow_start(acked);
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, base: u32) {
        self.doing_vegas = false;
        self.w.on_congestion_event(event, base)
    }
    fn on_exit_recovery(&mut self, _now: Instant) {
        self.w.on_exit_recovery()
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.w.undo(prior_cwnd, prior_ssthresh)
    }
    fn on_idle_restart(&mut self, now: Instant) {
        self.w.on_idle_restart();
        self.enable(now);
    }
}
