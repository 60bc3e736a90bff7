//! Where the endpoint consults the thin-stream mechanisms (mechanisms.md §2–4, §6): the thin
//! test ([`crate::thin::detect`]), the dupthresh of each ACK (thin dupACK, Early Retransmit and
//! its Linux delay, the F-RTO threshold of seed 002), the backoff after an RTO expiry
//! (linear timeouts) and the Early Retransmit timer. The decisions are the pure functions of
//! those modules; this file only gathers their inputs from the endpoint's state, so that the
//! hot paths (`input`, `output`) carry one-line call sites.

use super::timers::TimerKind;
use super::{Endpoint, State};
use crate::cc::CongestionControl;
use crate::event::SendKind;
use crate::recovery::dupack::{self, ThreshInput};
use crate::recovery::er_threshold::{self, FrtoEstimator};
use crate::recovery::{early_retransmit, Phase};
use crate::thin::{detect, linear_timeouts};
use crate::time::Instant;
use std::time::Duration;

/// Per-connection state of the thin-stream mechanisms.
#[derive(Clone, Debug, Default)]
pub(super) struct ThinState {
    /// `SeedSrtt` linear timeouts: k·SRTT added to the base RTO after k linear expiries (only
    /// while `retries > 0`, i.e. until new data is acknowledged).
    pub linear_extra: Duration,
    /// SRTT', SVAR, RTT'min of the F-RTO threshold (fed only when `er-threshold` is on).
    pub frto: FrtoEstimator,
    /// Redundant Data Bundling (`rdb_hooks.rs`).
    pub rdb: super::rdb_hooks::RdbState,
}

impl Endpoint {
    /// Whether the stream is thin now, by the configured test (`TcpConfig::thin_detection`).
    pub fn is_thin(&self) -> bool {
        detect::is_thin(
            self.cfg.thin_detection,
            &detect::ThinInput {
                pif: self.snd.packets_out(),
                in_initial_slow_start: self.cc.in_initial_slow_start(),
                srtt: self.rtt.srtt(),
            },
        )
    }

    /// The F-RTO estimator of `er-threshold` (diagnostics, tests).
    pub fn frto_estimator(&self) -> &FrtoEstimator {
        &self.thin.frto
    }

    /// The additive part of the RTO (seed variant of linear timeouts), zero outside an RTO
    /// episode.
    pub(super) fn rto_linear_extra(&self) -> Duration {
        if self.retries > 0 {
            self.thin.linear_extra
        } else {
            Duration::ZERO
        }
    }

    /// Whether new data could be sent now (unsent data, cwnd room, peer-window room).
    fn can_send_new(&self) -> bool {
        self.snd.unsent_len() > 0
            && self.rec.cwnd_usage(&self.snd) < self.rec.cwnd(&self.cc)
            && self.snd.una + self.snd_wnd > self.snd.nxt
    }

    /// The dupthresh for this ACK (called from ACK processing after the cumulative ACK and the
    /// SACK blocks are applied, before the recovery state machine). Also feeds the F-RTO
    /// estimator, arms/cancels the Early Retransmit delay and tells recovery whether an
    /// episode entered on this ACK is "early".
    pub(super) fn ack_dupthresh(
        &mut self,
        now: Instant,
        acked_new: bool,
        dup: bool,
        sample: Option<Duration>,
    ) -> u32 {
        let m = self.cfg.mechanisms;
        if m.er_threshold {
            if let Some(r) = sample {
                self.thin.frto.on_sample(r);
            }
        }
        if acked_new {
            // Linux: an ACK of new data cancels a pending early retransmission
            self.timers.stop(TimerKind::EarlyRetransmit);
        }
        let th = dupack::thresholds(&ThreshInput {
            packets_out: self.snd.packets_out(),
            can_send_new: self.can_send_new(),
            thin: self.is_thin(),
            mechanisms: m,
        });
        self.rec.next_episode_early = None;
        if self.rec.phase != Phase::Open || self.snd.is_empty() {
            // thin dupACK / ER decide when an episode starts; inside one, RFC 6675's 3
            return dupack::DEFAULT_DUPTHRESH;
        }
        let dupacks = if acked_new {
            0
        } else {
            self.rec.dupacks + dup as u32
        };
        let sacked = if self.rec.sack {
            self.snd.sacked_out()
        } else {
            0
        };
        let fires = |t: u32| dupacks >= t || (self.rec.sack && sacked >= t);
        if fires(th.standard) {
            return th.standard;
        }
        if let Some(er) = th.early.filter(|&e| fires(e)) {
            if self.cfg.early_retransmit_delay {
                let rto_at = self.timers.get(TimerKind::Rto);
                if let Some(at) = early_retransmit::delayed_until(now, self.rtt.srtt(), rto_at) {
                    self.timers.arm_if_idle(
                        TimerKind::EarlyRetransmit,
                        now,
                        at.saturating_duration_since(now),
                    );
                    return th.standard;
                }
            }
            self.rec.next_episode_early = Some(SendKind::Early);
            return er;
        }
        if m.er_threshold && dup {
            let oldest = self.snd.front().map(|s| s.last_sent);
            if oldest.is_some_and(|t| er_threshold::fires(now, t, self.thin.frto.threshold())) {
                self.rec.next_episode_early = Some(SendKind::EarlyThreshold);
                return dupacks.max(1);
            }
        }
        th.standard
    }

    /// A fast or early retransmission of the head segment restarts the retransmission timer
    /// (Linux `tcp_xmit_retransmit_queue`: `if (skb == tcp_write_queue_head(sk))
    /// inet_csk_reset_xmit_timer(...)`; FreeBSD stops REXMT on fast retransmit and
    /// `tcp_output` re-arms it; ns-2 `reset_rtx_timer`). Without it the timer armed by the
    /// original transmission fires before the retransmission can be acknowledged whenever
    /// recovery starts later than RTO − RTT after the loss, which is the common case for a thin
    /// stream under thin dupACK / Early Retransmit (a spurious RTO and go-back-N).
    pub(super) fn restart_rto_on_head_retransmit(
        &mut self,
        now: Instant,
        kind: SendKind,
        start: u64,
    ) {
        let fast_or_early = matches!(
            kind,
            SendKind::FastRetransmit
                | SendKind::RackRetransmit
                | SendKind::Early
                | SendKind::EarlyThreshold
        );
        if fast_or_early && start == self.snd.una {
            self.timers.arm(TimerKind::Rto, now, self.rto());
        }
    }

    /// The Linux mode-2 delay of Early Retransmit ran out: start the episode if ER still applies.
    pub(super) fn on_early_retransmit_timer(&mut self, now: Instant) {
        if !self.is_synchronized() || self.rec.phase != Phase::Open || self.snd.is_empty() {
            return;
        }
        let Some(er) = early_retransmit::dupthresh(self.snd.packets_out(), self.can_send_new())
        else {
            return;
        };
        let nxt = self.snd.nxt_seq();
        self.rec.enter_recovery(
            &mut self.snd,
            &mut self.cc,
            now,
            nxt,
            er,
            Some(SendKind::Early),
        );
    }

    /// Backoff after an RTO expiry (exponential, or linear timeouts). Called after `retries`
    /// was incremented and the recovery state entered Loss (so the first RTO of a connection
    /// is already outside the initial slow start, as in Linux).
    pub(super) fn rto_backoff_after_expiry(&mut self) {
        self.timers.stop(TimerKind::EarlyRetransmit);
        let next = linear_timeouts::next_rto(&linear_timeouts::Expiry {
            enabled: self.cfg.mechanisms.linear_timeouts,
            variant: self.cfg.linear_timeouts_variant,
            established: self.state == State::Established,
            thin: self.is_thin(),
            retransmissions: self.retries,
            backoff: self.backoff,
            linear_extra: self.rto_linear_extra(),
            srtt: self.rtt.srtt(),
        });
        self.backoff = next.backoff;
        self.thin.linear_extra = next.linear_extra;
    }
}
