//! Where the endpoint consults RACK and TLP (RFC 8985; docs/spec/mechanisms.md §7): the decisions
//! are the pure functions of [`crate::recovery::rack`] and [`crate::recovery::tlp`]; this file
//! gathers their inputs from the endpoint's state so that `input`, `output` and the timer dispatch
//! carry one-line call sites. Both mechanisms need SACK to have been negotiated.
//!
//! ACK path: `rack_before_ack` (before the cumulative ACK and the SACK blocks are applied, while
//! the delivered segments and their send times are still queued) advances RACK's segment;
//! `rack_on_ack` (after the scoreboard update, before the recovery state machine) runs RACK
//! loss detection, arms the reorder timer, starts fast recovery when RACK marked a loss, and
//! returns the dupthresh recovery uses: with RACK on, dupACK/SACK-count loss marking defers to
//! RACK (Linux `tcp_time_to_recover` with RACK: only a proven loss starts recovery; RACK's
//! `reo_wnd` drops to 0 once 3 segments are SACKed, which keeps the dupthresh behaviour).
//! `tlp_on_ack` re-arms the probe after an ACK of new data.
//!
//! Attribution: retransmissions of segments RACK marked lost go through the existing recovery
//! machinery and are `SendKind::RackRetransmit` (counted in `retransmissions_rack`); a probe
//! that retransmits is `SendKind::Tlp` (`retransmissions_tlp`); a probe carrying new data is
//! an ordinary new segment.

use super::options::ts_clock;
use super::timers::TimerKind;
use super::Endpoint;
use crate::event::SendKind;
use crate::recovery::dsack::ReoWindow;
use crate::recovery::dupack::DEFAULT_DUPTHRESH;
use crate::recovery::rack::{self, RackState, ReoInput};
use crate::recovery::tlp::{self, Probe};
use crate::recovery::{rto, Phase};
use crate::seq::{from_wire, to_wire};
use crate::time::Instant;
use crate::wire::{Flags, Segment};
use arrayvec::ArrayVec;
use std::time::Duration;

/// The dupthresh handed to recovery while RACK decides losses: never reached.
const DUPTHRESH_DEFERRED: u32 = u32::MAX;

/// Per-connection state of RACK and TLP.
#[derive(Clone, Debug, Default)]
pub(super) struct RackTlpState {
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

impl Endpoint {
    fn rack_active(&self) -> bool {
        self.cfg.mechanisms.rack && self.neg.sack
    }

    fn tlp_active(&self) -> bool {
        self.cfg.mechanisms.tlp && self.neg.sack
    }

    /// RACK's state (diagnostics, tests).
    pub fn rack_state(&self) -> &RackState {
        &self.rack_tlp.rack
    }

    /// RACK's current reordering window.
    pub fn rack_reo_wnd(&self) -> Duration {
        rack::reo_wnd(&ReoInput {
            min_rtt: self.rtt.min_rtt(),
            srtt: self.rtt.srtt(),
            reord_seen: self.rack_tlp.rack.reord_seen,
            in_recovery: self.rec.phase != Phase::Open,
            sacked_out: self.snd.sacked_out(),
            dupthresh: DEFAULT_DUPTHRESH,
            steps: self.rack_tlp.reo.steps,
        })
    }

    /// RACK update (RFC 8985 §6.2 step 2, Linux `tcp_rack_advance`) for every segment this ACK
    /// delivers: cumulatively acknowledged at `ack` (sequence space) or newly SACKed.
    pub(super) fn rack_before_ack(&mut self, now: Instant, seg: &Segment, ack: i64) {
        if !self.rack_active() {
            return;
        }
        self.rack_tlp.rack.advanced = false;
        let (lo, hi) = (self.snd.una_seq() as i64, self.snd.nxt_seq() as i64);
        let mut blocks: ArrayVec<(u64, u64), 4> = ArrayVec::new();
        for &(l, r) in &seg.options.sack_blocks {
            let (l, r) = (
                from_wire(self.iss, l, self.snd.una),
                from_wire(self.iss, r, self.snd.una),
            );
            if lo <= l && l < r && r <= hi {
                blocks.push((l as u64, r as u64));
            }
        }
        let limit = blocks
            .iter()
            .map(|b| b.1)
            .max()
            .unwrap_or(0)
            .max(ack.max(0) as u64);
        let ecr = if self.neg.timestamps {
            seg.options.timestamps.map(|(_, e)| e)
        } else {
            None
        };
        let min_rtt = self.rtt.min_rtt();
        // Only segments this ACK can deliver: those below the cumulative ACK and those that
        // start inside a SACK block (index ranges by binary search), visited once each in
        // sequence order (RACK.rtt keeps the last one's): proportional to what was acked, not
        // to the queue.
        let mut ranges: ArrayVec<(usize, usize), 5> = ArrayVec::new();
        ranges.push((0, self.snd.index_from(ack.max(0) as u64)));
        for &(l, r) in &blocks {
            ranges.push((self.snd.index_from(l), self.snd.index_from(r)));
        }
        ranges.sort_unstable();
        let r = &mut self.rack_tlp.rack;
        let prior_fack = r.fack;
        let mut next = 0;
        let indices = ranges.into_iter().flat_map(|(a, b)| {
            let from = a.max(next);
            next = next.max(b);
            from..b
        });
        for s in indices.map(|i| self.snd.get(i).expect("index in range")) {
            if s.start >= limit {
                break;
            }
            if s.sacked {
                continue;
            }
            let end = s.seq_end();
            let cum = ack >= end as i64;
            let sacked = !cum
                && blocks
                    .iter()
                    .any(|&(l, r)| l <= s.start && s.sack_end() <= r && s.start < end);
            if !cum && !sacked {
                continue;
            }
            // Linux tcp_skb_spurious_retrans: the ACK echoes a transmission before the latest
            let ts_earlier = s.ever_retransmitted
                && ecr.is_some_and(|e| rto::is_spurious(e, ts_clock(s.last_sent)));
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

    /// RACK loss detection after the scoreboard update; returns the dupthresh for recovery.
    pub(super) fn rack_on_ack(&mut self, now: Instant, thresh: u32) -> u32 {
        if !self.rack_active() {
            return thresh;
        }
        if self.rack_tlp.rack.advanced && !self.snd.is_empty() {
            self.rack_detect_and_arm(now);
        }
        DUPTHRESH_DEFERRED
    }

    /// RFC 8985 `RACK_detect_loss_and_arm_timer`, then Linux `tcp_time_to_recover`: a loss
    /// marked while Open starts fast recovery (its retransmissions are fast retransmissions).
    fn rack_detect_and_arm(&mut self, now: Instant) {
        let reo = self.rack_reo_wnd();
        let (newly, wait) = rack::detect_loss(&mut self.snd, &self.rack_tlp.rack, now, reo);
        match wait {
            Some(d) => {
                // Linux tcp_rack_reo_timeout arms remaining + TCP_TIMEOUT_MIN (2 jiffies)
                let slack = self
                    .timers
                    .wheel()
                    .map_or(Duration::ZERO, |w| 2 * w.jiffy());
                self.timers.arm(TimerKind::Reorder, now, d + slack)
            }
            None => self.timers.stop(TimerKind::Reorder),
        }
        if newly > 0 && self.rec.phase == Phase::Open {
            let nxt = self.snd.nxt_seq();
            self.rec.enter_recovery(
                &mut self.snd,
                &mut self.cc,
                now,
                nxt,
                DUPTHRESH_DEFERRED,
                None,
            );
            self.timers.stop(TimerKind::Tlp);
        }
    }

    /// The reorder timer expired (RFC 8985 §6.3, Linux `tcp_rack_reo_timeout`).
    pub(super) fn on_reorder_timer(&mut self, now: Instant) {
        if self.rack_active() && self.is_synchronized() && !self.snd.is_empty() {
            let phase_before = self.rec.phase;
            let losses_before = self.snd.losses();
            self.rack_detect_and_arm(now);
            if phase_before == Phase::Open && self.rec.phase == Phase::Recovery {
                // Linux tcp_rack_reo_timeout: tcp_cwnd_reduction(sk, 1, 0, 0)
                self.rec.prr_on_ack(&self.snd, &self.cc, 1, 0, false);
            }
            let undos = self.stats.undos;
            self.trace_recovery(now, phase_before, losses_before, undos);
        }
    }

    /// Whether the sender is in a state where a probe may be scheduled or sent: Linux
    /// `TCP_CA_Open` (not in recovery, nothing SACKed or marked lost: Linux's Disorder is left
    /// to RACK's reorder timer), data outstanding, no probe of this episode outstanding.
    fn tlp_allowed(&self) -> bool {
        let open =
            self.rec.phase == Phase::Open && self.snd.sacked_out() == 0 && self.snd.lost_out() == 0;
        self.tlp_active()
            && self.is_synchronized()
            && tlp::may_arm(
                true,
                self.snd.packets_out(),
                open,
                self.rack_tlp.tlp_high_seq.is_some(),
            )
    }

    /// (Re)arm the probe timer from `now`, or stop it (Linux `tcp_schedule_loss_probe`).
    /// Called after new data is sent and after an ACK of new data.
    pub(super) fn tlp_arm(&mut self, now: Instant) {
        if !self.tlp_active() || self.rack_tlp.probing {
            return;
        }
        if !self.tlp_allowed() {
            self.timers.stop(TimerKind::Tlp);
            return;
        }
        let rto_at = self.timers.get(TimerKind::Rto);
        let at = match self.timers.wheel() {
            None => tlp::pto(now, self.rtt.srtt(), self.snd.packets_out(), rto_at),
            Some(w) => {
                let d = tlp::pto_jiffies(w, self.rtt.srtt(), self.snd.packets_out());
                let at = self.timers.fire_at(now, d);
                rto_at.map_or(at, |r| at.min(r.max(now)))
            }
        };
        self.timers.set(TimerKind::Tlp, at);
    }

    /// After an ACK: end the probe episode once the probe is acknowledged; re-arm on new data
    /// acknowledged, stop when recovery started or nothing is outstanding.
    pub(super) fn tlp_on_ack(&mut self, now: Instant, acked_new: bool) {
        if !self.tlp_active() {
            return;
        }
        if let Some(h) = self.rack_tlp.tlp_high_seq {
            if tlp::episode_over(self.snd.una_seq(), h) {
                self.rack_tlp.tlp_high_seq = None;
            }
        }
        if acked_new || !self.tlp_allowed() {
            self.tlp_arm(now);
        }
    }

    /// The probe timer expired: choose the probe (RFC 8985 §7.3) and restart the RTO from now
    /// (Linux `tcp_send_loss_probe` clears the pending probe timer before `tcp_rearm_rto`, so
    /// the full RTO runs from the probe).
    pub(super) fn on_tlp_timer(&mut self, now: Instant) {
        if !self.tlp_allowed() {
            return;
        }
        let room = (self.snd.una + self.snd_wnd).saturating_sub(self.snd.nxt);
        self.rack_tlp.probe = Some(tlp::choose(self.snd.unsent_len(), room));
        self.timers.arm(TimerKind::Rto, now, self.rto());
    }

    /// The RTO timer expired. If the probe timer expires at the same instant (the probe
    /// timeout was capped at the RTO deadline), the probe goes first, as with Linux's single
    /// transmit timer; otherwise this is an ordinary retransmission timeout.
    pub(super) fn on_rto_deadline(&mut self, now: Instant) {
        if self.timers.get(TimerKind::Tlp).is_some_and(|t| t <= now) && self.tlp_allowed() {
            self.timers.stop(TimerKind::Tlp);
            self.on_tlp_timer(now);
            return;
        }
        self.on_rto_timer(now);
    }

    /// The pending probe, if any (called first by `next_segment` among data transmissions).
    pub(super) fn send_tlp_probe(&mut self, now: Instant) -> Option<Segment> {
        let probe = self.rack_tlp.probe.take()?;
        if !self.tlp_allowed() {
            return None;
        }
        let mut out = None;
        if probe == Probe::New {
            self.rack_tlp.probing = true;
            out = self.send_new(now);
            self.rack_tlp.probing = false;
        }
        let out = match out {
            Some(s) => s,
            None => self.send_tlp_retransmission(now)?,
        };
        self.rack_tlp.tlp_high_seq = Some(self.snd.nxt_seq());
        self.stats.tlp_probes += 1;
        self.timers.stop(TimerKind::Tlp);
        Some(out)
    }

    /// Retransmit the highest sent segment as the probe (`SendKind::Tlp`).
    fn send_tlp_retransmission(&mut self, now: Instant) -> Option<Segment> {
        let i = self.snd.len().checked_sub(1)?;
        let s = self.snd.on_retransmit(i, now);
        self.stats.retransmissions_tlp += 1;
        let mut flags = Flags::ACK | Flags::PSH;
        if s.fin {
            flags = flags | Flags::FIN;
        }
        let seg = self.segment(now, to_wire(self.iss, s.start), flags, s.payload);
        self.on_data_sent(now);
        Some(self.emit(now, seg, SendKind::Tlp, s.start, s.end))
    }
}
