//! RACK and TLP as loss detectors (RFC 8985; docs/spec/mechanisms.md, RACK and TLP): the
//! decisions are the pure functions of [`crate::recovery::rack`] and [`crate::recovery::tlp`];
//! this file gathers their inputs. Both need SACK to have been negotiated.
//!
//! ACK path: `rack_advance` (step 1, before the cumulative ACK and the SACK blocks are applied,
//! while the delivered segments and their send times are still queued) advances RACK's segment;
//! `rack_on_ack` (step 6, after the scoreboard update, before the recovery state machine) runs
//! RACK loss detection, arms the reorder timer, starts fast recovery when RACK marked a loss,
//! and returns the dupthresh recovery uses: with RACK on, dupACK/SACK-count loss marking
//! defers to RACK (Linux `tcp_time_to_recover` with RACK: only a proven loss starts recovery;
//! RACK's `reo_wnd` drops to 0 once 3 segments are SACKed, which keeps the dupthresh
//! behaviour). `tlp_on_ack` (step 14) re-arms the probe after an ACK of new data.
//!
//! Attribution: retransmissions of segments RACK marked lost are `SendKind::RackRetransmit`
//! (counted in `retransmissions_rack`); a probe that retransmits is `SendKind::Tlp`
//! (`retransmissions_tlp`); a probe carrying new data is `SendKind::TlpNewData`.

use super::{AckInfo, Ctx, LossRecovery, Verdict};
use crate::recovery::dsack::ReoWindow;
use crate::recovery::dupack::DEFAULT_DUPTHRESH;
use crate::recovery::rack::{self, RackState, ReoInput};
use crate::recovery::tlp::{self, Probe};
use crate::recovery::{rto, sack, Phase};
use crate::rtt::RttEstimator;
use crate::send_queue::SendQueue;
use crate::time::ts_clock;
use crate::timers::TimerKind;
use arrayvec::ArrayVec;
use std::time::Duration;

/// The dupthresh handed to recovery while RACK decides losses: never reached.
const DUPTHRESH_DEFERRED: u32 = u32::MAX;

/// Per-connection state of RACK and TLP.
#[derive(Clone, Debug, Default)]
pub struct RackTlpState {
    pub rack: RackState,
    /// Linux `tlp_high_seq`: snd_nxt (sequence space) after this episode's probe.
    pub tlp_high_seq: Option<u64>,
    /// The probe timer expired: the probe to send at the next `poll_transmit`.
    pub probe: Option<Probe>,
    /// A new-data probe is being sent: it ignores cwnd and does not re-arm the probe timer.
    pub probing: bool,
    /// The D-SACK-adapted reordering window.
    pub reo: ReoWindow,
    /// Segments delivered (cumulatively ACKed or SACKed) so far (Linux `tp->delivered`).
    pub delivered: u64,
}

impl LossRecovery {
    pub(super) fn rack_active(c: &Ctx) -> bool {
        c.cfg.mechanisms.rack && c.sack
    }

    fn tlp_active(c: &Ctx) -> bool {
        c.cfg.mechanisms.tlp && c.sack
    }

    /// RACK's state (diagnostics, tests).
    pub fn rack_state(&self) -> &RackState {
        &self.rack_tlp.rack
    }

    /// A new-data probe is being sent (it ignores cwnd and does not re-arm the probe timer).
    pub fn probing(&self) -> bool {
        self.rack_tlp.probing
    }

    pub fn set_probing(&mut self, on: bool) {
        self.rack_tlp.probing = on;
    }

    /// RACK's current reordering window.
    pub fn rack_reo_wnd(&self, rtt: &RttEstimator, snd: &SendQueue) -> Duration {
        rack::reo_wnd(&ReoInput {
            min_rtt: rtt.min_rtt(),
            srtt: rtt.srtt(),
            reord_seen: self.rack_tlp.rack.reord_seen,
            in_recovery: self.rec.phase != Phase::Open,
            sacked_out: snd.sacked_out(),
            dupthresh: DEFAULT_DUPTHRESH,
            steps: self.rack_tlp.reo.steps,
        })
    }

    /// Step 1 of an ACK: RACK update (RFC 8985 §6.2 step 2, Linux `tcp_rack_advance`) for
    /// every segment this ACK delivers: cumulatively acknowledged or newly SACKed.
    pub(super) fn rack_advance(&mut self, c: &mut Ctx, ack: &AckInfo) {
        if !Self::rack_active(c) {
            return;
        }
        self.rack_tlp.rack.advanced = false;
        let (lo, hi) = (c.snd.una_seq(), c.snd.nxt_seq());
        let blocks = ack.blocks_within(lo, hi);
        let cum_ack = ack.ack.max(0) as u64;
        let limit = blocks.iter().map(|b| b.1).max().unwrap_or(0).max(cum_ack);
        let min_rtt = c.rtt.min_rtt();
        // Only segments this ACK can deliver: those below the cumulative ACK and those that
        // start inside a SACK block and were not SACKed before (index ranges by binary search,
        // skipping what the previous ACK's blocks covered: `sack::block_parts`), visited once
        // each in sequence order (RACK.rtt keeps the last one's): proportional to what was
        // acked, not to the queue or the blocks.
        let mut ranges: ArrayVec<(usize, usize), 65> = ArrayVec::new();
        ranges.push((0, c.snd.index_from(cum_ack)));
        for &(l, r) in &blocks {
            for (from, to) in sack::block_parts(c.snd.sack_cache(), l, r) {
                let part = sack::part_indices(c.snd, l, from, to);
                ranges.push((part.start, part.end));
            }
        }
        ranges.sort_unstable();
        let r = &mut self.rack_tlp.rack;
        let prior_fack = r.fack;
        let mut next = 0;
        let indices = ranges.iter().flat_map(|&(a, b)| {
            let from = a.max(next);
            next = next.max(b);
            from..b
        });
        let now = c.now;
        for s in indices.map(|i| c.snd.get(i).expect("index in range")) {
            if s.start >= limit {
                break;
            }
            if s.sacked {
                continue;
            }
            let end = s.seq_end();
            let cum = ack.ack >= end as i64;
            let sacked = !cum
                && blocks
                    .iter()
                    .any(|&(l, r)| l <= s.start && s.sack_end() <= r && s.start < end);
            if !cum && !sacked {
                continue;
            }
            // Linux tcp_skb_spurious_retrans: the ACK echoes a transmission before the latest
            let ts_earlier = s.ever_retransmitted
                && ack
                    .ecr
                    .is_some_and(|e| rto::is_spurious(e, ts_clock(s.last_sent)));
            r.on_delivered(
                now,
                s.last_sent,
                end,
                s.ever_retransmitted,
                ts_earlier,
                min_rtt,
            );
            if !s.ever_retransmitted && end < prior_fack {
                r.reord_seen = true;
            }
            if sacked {
                r.fack = r.fack.max(end);
            }
        }
    }

    /// Step 6 of an ACK: RACK loss detection after the scoreboard update; returns the
    /// dupthresh for recovery.
    pub(super) fn rack_on_ack(&mut self, c: &mut Ctx, thresh: u32) -> u32 {
        if !Self::rack_active(c) {
            return thresh;
        }
        if self.rack_tlp.rack.advanced && !c.snd.is_empty() {
            self.rack_detect_and_arm(c);
        }
        DUPTHRESH_DEFERRED
    }

    /// RFC 8985 `RACK_detect_loss_and_arm_timer`, then Linux `tcp_time_to_recover`: a loss
    /// marked while Open starts fast recovery (its retransmissions are fast retransmissions).
    fn rack_detect_and_arm(&mut self, c: &mut Ctx) {
        let reo = self.rack_reo_wnd(c.rtt, c.snd);
        let (newly, wait) = rack::detect_loss(c.snd, &self.rack_tlp.rack, c.now, reo);
        let timer = match wait {
            Some(d) => {
                // Linux tcp_rack_reo_timeout arms remaining + TCP_TIMEOUT_MIN (2 jiffies)
                let slack = c.timers.wheel().map_or(Duration::ZERO, |w| 2 * w.jiffy());
                Verdict::Arm(TimerKind::Reorder, d + slack)
            }
            None => Verdict::Stop(TimerKind::Reorder),
        };
        self.apply(c, timer);
        if newly > 0 && self.rec.phase == Phase::Open {
            let enter = Verdict::EnterRecovery {
                dupthresh: DUPTHRESH_DEFERRED,
                early: None,
            };
            self.apply(c, enter);
            self.apply(c, Verdict::Stop(TimerKind::Tlp));
        }
    }

    /// The reorder timer expired (RFC 8985 §6.3, Linux `tcp_rack_reo_timeout`).
    pub(super) fn on_reorder_timer(&mut self, c: &mut Ctx) {
        if Self::rack_active(c) && c.synchronized && !c.snd.is_empty() {
            let phase_before = self.rec.phase;
            let losses_before = c.snd.losses();
            self.rack_detect_and_arm(c);
            if phase_before == Phase::Open && self.rec.phase == Phase::Recovery {
                // Linux tcp_rack_reo_timeout: tcp_cwnd_reduction(sk, 1, 0, 0)
                self.rec.prr_on_ack(c.snd, c.cc, 1, 0, false);
            }
            let undos = c.stats.undos;
            self.trace_recovery(c, phase_before, losses_before, undos);
        }
    }

    /// Whether the sender is in a state where a probe may be scheduled or sent: Linux
    /// `TCP_CA_Open` (not in recovery, nothing SACKed or marked lost: Linux's Disorder is left
    /// to RACK's reorder timer), data outstanding, no probe of this episode outstanding.
    pub(super) fn tlp_allowed(&self, c: &Ctx) -> bool {
        let open =
            self.rec.phase == Phase::Open && c.snd.sacked_out() == 0 && c.snd.lost_out() == 0;
        Self::tlp_active(c)
            && c.synchronized
            && tlp::may_arm(
                true,
                c.snd.packets_out(),
                open,
                self.rack_tlp.tlp_high_seq.is_some(),
            )
    }

    /// (Re)arm the probe timer from now, or stop it (Linux `tcp_schedule_loss_probe`).
    /// Called after new data is sent and after an ACK of new data.
    pub fn tlp_arm(&mut self, c: &mut Ctx) {
        if !Self::tlp_active(c) || self.rack_tlp.probing {
            return;
        }
        if !self.tlp_allowed(c) {
            self.apply(c, Verdict::Stop(TimerKind::Tlp));
            return;
        }
        let rto_at = c.timers.get(TimerKind::Rto);
        let at = match c.timers.wheel() {
            None => tlp::pto(c.now, c.rtt.srtt(), c.snd.packets_out(), rto_at),
            Some(w) => {
                let d = tlp::pto_jiffies(w, c.rtt.srtt(), c.snd.packets_out());
                let at = c.timers.fire_at(c.now, d);
                rto_at.map_or(at, |r| at.min(r.max(c.now)))
            }
        };
        self.apply(c, Verdict::ArmAt(TimerKind::Tlp, at));
    }

    /// Step 14 of an ACK: end the probe episode once the probe is acknowledged; re-arm on new
    /// data acknowledged, stop when recovery started or nothing is outstanding.
    pub(super) fn tlp_on_ack(&mut self, c: &mut Ctx, acked_new: bool) {
        if !Self::tlp_active(c) {
            return;
        }
        if let Some(h) = self.rack_tlp.tlp_high_seq {
            if tlp::episode_over(c.snd.una_seq(), h) {
                self.rack_tlp.tlp_high_seq = None;
            }
        }
        if acked_new || !self.tlp_allowed(c) {
            self.tlp_arm(c);
        }
    }

    /// The probe timer expired: choose the probe (RFC 8985 §7.3) and restart the RTO from now
    /// (Linux `tcp_send_loss_probe` clears the pending probe timer before `tcp_rearm_rto`, so
    /// the full RTO runs from the probe).
    pub(super) fn on_tlp_timer(&mut self, c: &mut Ctx) {
        if !self.tlp_allowed(c) {
            return;
        }
        let room = (c.snd.una + c.snd_wnd).saturating_sub(c.snd.nxt);
        self.rack_tlp.probe = Some(tlp::choose(c.snd.unsent_len(), room));
        let d = self.current_rto(c);
        self.apply(c, Verdict::Arm(TimerKind::Rto, d));
    }

    /// Whether a probe is pending (due, not yet taken): without one, [`Self::take_probe`]
    /// answers `None`.
    #[inline]
    pub fn probe_pending(&self) -> bool {
        self.rack_tlp.probe.is_some()
    }

    /// The pending probe, if one is due and still allowed (taken once).
    pub fn take_probe(&mut self, c: &Ctx) -> Option<Probe> {
        let probe = self.rack_tlp.probe.take()?;
        self.tlp_allowed(c).then_some(probe)
    }

    /// A probe went out: the episode's probe is outstanding until snd_nxt is acknowledged.
    pub fn on_probe_sent(&mut self, c: &mut Ctx) {
        self.rack_tlp.tlp_high_seq = Some(c.snd.nxt_seq());
        c.stats.tlp_probes += 1;
        self.apply(c, Verdict::Stop(TimerKind::Tlp));
    }
}
