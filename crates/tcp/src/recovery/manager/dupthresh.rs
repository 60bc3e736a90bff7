//! The dupthresh family of loss detectors (docs/spec/mechanisms.md, thin dupACK, Early
//! Retransmit, the F-RTO threshold): RFC 5681's three duplicate ACKs, lowered to one by thin
//! dupACK while the stream is thin (Petlund et al.), to RFC 5827's ER_thresh by Early
//! Retransmit (with Linux's mode-2 delay when `early_retransmit_delay` is on), and the F-RTO
//! threshold of Yin et al. (a duplicate ACK arriving when the oldest segment has been out
//! longer than SRTT' + 4·SVAR). The rules are the pure functions of
//! [`crate::recovery::dupack`], [`crate::recovery::early_retransmit`] and
//! [`crate::recovery::er_threshold`]; this file gathers their inputs and states the verdict.

use super::{rto::is_thin, Ctx, LossRecovery, Verdict};
use crate::event::SendKind;
use crate::recovery::dupack::{self, ThreshInput};
use crate::recovery::er_threshold::{self, FrtoEstimator};
use crate::recovery::{early_retransmit, Phase};
use crate::time::Instant;
use crate::timers::TimerKind;
use std::time::Duration;

/// State of the dupthresh family.
#[derive(Clone, Debug, Default)]
pub struct DupthreshState {
    /// SRTT', SVAR, RTT'min of the F-RTO threshold (fed only when `er-threshold` is on).
    pub frto: FrtoEstimator,
}

/// What the dupthresh family concluded on one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DupthreshVerdict {
    /// The threshold recovery applies on this ACK.
    pub dupthresh: u32,
    /// An episode entered on this ACK was started by Early Retransmit or the F-RTO threshold.
    pub early: Option<SendKind>,
    /// Early Retransmit's Linux delay: start the episode at this time instead of now.
    pub delay_until: Option<Instant>,
}

impl LossRecovery {
    /// The F-RTO estimator of `er-threshold` (diagnostics, tests).
    pub fn frto_estimator(&self) -> &FrtoEstimator {
        &self.dupthresh.frto
    }

    /// Step 5 of an ACK (after the cumulative ACK and the SACK blocks, before the recovery state
    /// machine): the threshold for this ACK. Feeds the F-RTO estimator, cancels a pending ER
    /// delay on new data, and tells recovery whether an episode entered now is "early".
    pub(super) fn ack_dupthresh(
        &mut self,
        c: &mut Ctx,
        acked_new: bool,
        dup: bool,
        sample: Option<Duration>,
    ) -> u32 {
        if c.cfg.mechanisms.er_threshold {
            if let Some(r) = sample {
                self.dupthresh.frto.on_sample(r);
            }
        }
        if acked_new {
            // Linux: an ACK of new data cancels a pending early retransmission
            self.apply(c, Verdict::Stop(TimerKind::EarlyRetransmit));
        }
        let v = self.dupthresh_verdict(c, acked_new, dup);
        if let Some(at) = v.delay_until {
            if !c.timers.is_armed(TimerKind::EarlyRetransmit) {
                let after = at.saturating_duration_since(c.now);
                self.apply(c, Verdict::Arm(TimerKind::EarlyRetransmit, after));
            }
        }
        self.rec.next_episode_early = v.early;
        v.dupthresh
    }

    fn dupthresh_verdict(&self, c: &Ctx, acked_new: bool, dup: bool) -> DupthreshVerdict {
        let m = c.cfg.mechanisms;
        let th = dupack::thresholds(&ThreshInput {
            packets_out: c.snd.packets_out(),
            can_send_new: self.can_send_new(c),
            thin: is_thin(c),
            mechanisms: m,
        });
        let plain = |dupthresh| DupthreshVerdict {
            dupthresh,
            early: None,
            delay_until: None,
        };
        if self.rec.phase != Phase::Open || c.snd.is_empty() {
            // thin dupACK / ER decide when an episode starts; inside one, RFC 6675's 3
            return plain(dupack::DEFAULT_DUPTHRESH);
        }
        let dupacks = if acked_new {
            0
        } else {
            self.rec.dupacks + dup as u32
        };
        let sacked = if self.rec.sack { c.snd.sacked_out() } else { 0 };
        let fires = |t: u32| dupacks >= t || (self.rec.sack && sacked >= t);
        if fires(th.standard) {
            return plain(th.standard);
        }
        if let Some(er) = th.early.filter(|&e| fires(e)) {
            if c.cfg.early_retransmit_delay {
                let rto_at = c.timers.get(TimerKind::Rto);
                if let Some(at) = early_retransmit::delayed_until(c.now, c.rtt.srtt(), rto_at) {
                    return DupthreshVerdict {
                        delay_until: Some(at),
                        ..plain(th.standard)
                    };
                }
            }
            return DupthreshVerdict {
                early: Some(SendKind::Early),
                ..plain(er)
            };
        }
        if m.er_threshold && dup {
            let oldest = c.snd.front().map(|s| s.last_sent);
            if oldest
                .is_some_and(|t| er_threshold::fires(c.now, t, self.dupthresh.frto.threshold()))
            {
                return DupthreshVerdict {
                    early: Some(SendKind::EarlyThreshold),
                    ..plain(dupacks.max(1))
                };
            }
        }
        plain(th.standard)
    }

    /// The Linux mode-2 delay of Early Retransmit ran out: start the episode if ER still applies.
    pub(super) fn on_early_retransmit_timer(&mut self, c: &mut Ctx) {
        if !c.synchronized || self.rec.phase != Phase::Open || c.snd.is_empty() {
            return;
        }
        let Some(er) = early_retransmit::dupthresh(c.snd.packets_out(), self.can_send_new(c))
        else {
            return;
        };
        self.apply(
            c,
            Verdict::EnterRecovery {
                dupthresh: er,
                early: Some(SendKind::Early),
            },
        );
    }
}
