//! The retransmission timer as a loss detector (RFC 6298; the rules are the pure functions of
//! [`crate::recovery::rto`]): RTT samples of an ACK and the RTT round (Linux `rtt_seq`), the
//! timer on an ACK and after a fast retransmission of the head, and an expiry: Loss state
//! (go-back-N), exponential backoff or linear timeouts ([`crate::thin::linear_timeouts`]), the
//! timer restarted with the backed-off value (RFC 6298 §5.5–5.6).

use super::{AckInfo, Ctx, LossRecovery};
use crate::cc::{Cc, CongestionControl};
use crate::config::TcpConfig;
use crate::event::{Event, RecoveryEvent, SendKind};
use crate::recovery::rto;
use crate::rtt::{backed_off, RttEstimator};
use crate::send_queue::{AckedSummary, SendQueue};
use crate::thin::{detect, linear_timeouts};
use crate::time::ts_clock;
use crate::timers::TimerKind;
use std::time::Duration;

/// An RTO expiry the endpoint must act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoExpiry {
    /// `max_retries` expiries without progress: the connection times out.
    GiveUp,
}

impl LossRecovery {
    /// The current RTO: the estimator's, plus the seed variant's linear increment during an
    /// RTO episode, backed off.
    pub fn rto(&self, c_rtt: Duration, rto_max: Duration) -> Duration {
        backed_off(c_rtt + self.rto_linear_extra(), self.backoff, rto_max)
    }

    /// The additive part of the RTO (seed variant of linear timeouts), zero outside an RTO
    /// episode.
    fn rto_linear_extra(&self) -> Duration {
        if self.retries > 0 {
            self.linear_extra
        } else {
            Duration::ZERO
        }
    }

    pub(super) fn current_rto(&self, c: &Ctx) -> Duration {
        self.rto(c.rtt.rto(), c.cfg.rto_max)
    }

    /// Step 4 of an ACK: the RTT sample (Karn's rule, or the timestamp echo) and the one for
    /// congestion control; a sample ends the backoff, new data acknowledged the retry count.
    pub(super) fn rtt_on_ack(
        &mut self,
        c: &mut Ctx,
        ack: &AckInfo,
        summary: &AckedSummary,
    ) -> (Option<Duration>, Option<Duration>) {
        if !ack.acked_new {
            return (None, None);
        }
        let now = c.now;
        let ts = ack.ecr.and_then(|e| rto::ts_rtt(ts_clock(now), e));
        let sample = rto::rtt_sample(now, summary, ts);
        let ca_sample = rto::ca_rtt_sample(now, summary, ts);
        if let (Some(at), Some(ecr)) = (summary.last_retransmit_at, ack.ecr) {
            if rto::is_spurious(ecr, ts_clock(at)) {
                c.stats.spurious_retransmissions += 1;
            }
        }
        if let Some(r) = sample {
            // Linux: the ACK ends an RTT round if it covers data sent after the last one
            let ends_round = c.snd.una_seq() > self.rtt_seq;
            if ends_round {
                self.rtt_seq = c.snd.nxt_seq();
            }
            c.rtt.on_sample_in_round(r, ends_round);
            if let Some(s) = ca_sample {
                c.rtt.note_min_rtt(s);
            }
            self.backoff = 0;
        }
        self.retries = 0;
        (sample, ca_sample)
    }

    /// Step 13 of an ACK: stop the timer when nothing is outstanding, restart it on new data
    /// acknowledged (RFC 6298 §5.2–5.3; partial ACKs in recovery included, as Linux).
    pub(super) fn rto_on_ack(&mut self, c: &mut Ctx, acked_new: bool) {
        match rto::timer_on_ack(acked_new, !c.snd.is_empty()) {
            rto::TimerOnAck::Stop => c.timers.stop(TimerKind::Rto),
            rto::TimerOnAck::Restart => {
                let d = self.current_rto(c);
                c.timers.arm(TimerKind::Rto, c.now, d)
            }
            rto::TimerOnAck::Keep => {}
        }
    }

    /// A data transmission: RFC 6298 §5.1 arms the timer if it is not running; PRR counts it.
    pub fn on_data_sent(&mut self, c: &mut Ctx) {
        self.rec.on_transmit(); // PRR's prr_out
        if rto::arm_on_send(c.timers.is_armed(TimerKind::Rto)) {
            let d = self.current_rto(c);
            c.timers.arm(TimerKind::Rto, c.now, d);
        }
    }

    /// A fast or early retransmission of the head segment restarts the retransmission timer
    /// (Linux `tcp_xmit_retransmit_queue`: `if (skb == tcp_write_queue_head(sk))
    /// inet_csk_reset_xmit_timer(...)`; FreeBSD stops REXMT on fast retransmit and
    /// `tcp_output` re-arms it; ns-2 `reset_rtx_timer`). Without it the timer armed by the
    /// original transmission fires before the retransmission can be acknowledged whenever
    /// recovery starts later than RTO − RTT after the loss, which is the common case for a thin
    /// stream under thin dupACK / Early Retransmit (a spurious RTO and go-back-N).
    pub fn restart_rto_on_head_retransmit(&mut self, c: &mut Ctx, kind: SendKind, start: u64) {
        let fast_or_early = matches!(
            kind,
            SendKind::FastRetransmit
                | SendKind::RackRetransmit
                | SendKind::Early
                | SendKind::EarlyThreshold
        );
        if fast_or_early && start == c.snd.una {
            let d = self.current_rto(c);
            c.timers.arm(TimerKind::Rto, c.now, d);
        }
    }

    /// The RTO timer expired. If the probe timer expires at the same instant (the probe
    /// timeout was capped at the RTO deadline), the probe goes first, as with Linux's single
    /// transmit timer; otherwise this is an ordinary retransmission timeout.
    pub(super) fn on_rto_deadline(&mut self, c: &mut Ctx) -> Option<RtoExpiry> {
        if c.timers.get(TimerKind::Tlp).is_some_and(|t| t <= c.now) && self.tlp_allowed(c) {
            c.timers.stop(TimerKind::Tlp);
            self.on_tlp_timer(c);
            return None;
        }
        self.on_rto_timer(c)
    }

    /// An RTO expiry with data outstanding: enter Loss and mark everything lost, back off
    /// (exponentially, or linearly while thin), restart the timer; the retransmission itself
    /// goes out at the next `poll_transmit`.
    fn on_rto_timer(&mut self, c: &mut Ctx) -> Option<RtoExpiry> {
        if c.snd.is_empty() {
            return None;
        }
        if self.retries >= c.cfg.max_retries {
            return Some(RtoExpiry::GiveUp);
        }
        let now = c.now;
        let expired = self.current_rto(c);
        c.stats.rto_events += 1;
        if let Some(t) = c.last_send {
            c.stats.frozen_time += now - t;
        }
        self.retries += 1;
        let losses_before = c.snd.losses();
        self.rec.on_rto(c.snd, c.cc, now);
        let marked = (c.snd.losses() - losses_before) as u32;
        let (cwnd, ssthresh) = (c.cc.cwnd(), c.cc.ssthresh());
        for what in [
            RecoveryEvent::LossMarked { segments: marked },
            RecoveryEvent::Reduction { cwnd, ssthresh },
        ] {
            c.events.push_back(Event::Recovery { at: now, what });
        }
        self.backoff_after_expiry(c);
        c.events.push_back(Event::RtoFired {
            at: now,
            rto: expired,
            backoff: self.backoff,
        });
        // RFC 6298 §5.6: restart with the backed-off RTO
        let d = self.current_rto(c);
        c.timers.arm(TimerKind::Rto, now, d);
        None
    }

    /// Backoff after an RTO expiry (exponential, or linear timeouts). Called after `retries`
    /// was incremented and the recovery state entered Loss (so the first RTO of a connection
    /// is already outside the initial slow start, as in Linux).
    fn backoff_after_expiry(&mut self, c: &mut Ctx) {
        c.timers.stop(TimerKind::EarlyRetransmit);
        let next = linear_timeouts::next_rto(&linear_timeouts::Expiry {
            enabled: c.cfg.mechanisms.linear_timeouts,
            variant: c.cfg.linear_timeouts_variant,
            established: c.established,
            thin: is_thin(c),
            retransmissions: self.retries,
            backoff: self.backoff,
            linear_extra: self.rto_linear_extra(),
            srtt: c.rtt.srtt(),
        });
        self.backoff = next.backoff;
        self.linear_extra = next.linear_extra;
    }
}

/// Whether the stream is thin now, by the configured test (`TcpConfig::thin_detection`).
pub(crate) fn is_thin(c: &Ctx) -> bool {
    thin_now(c.cfg, c.snd, c.cc, c.rtt)
}

/// Whether the stream is thin now, by the configured test (`TcpConfig::thin_detection`),
/// from the parts of the connection the test looks at.
pub fn thin_now(cfg: &TcpConfig, snd: &SendQueue, cc: &Cc, rtt: &RttEstimator) -> bool {
    detect::is_thin(
        cfg.thin_detection,
        &detect::ThinInput {
            pif: snd.packets_out(),
            in_initial_slow_start: cc.in_initial_slow_start(),
            srtt: rtt.srtt(),
        },
    )
}
