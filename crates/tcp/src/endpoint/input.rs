//! Processing of an acceptable segment's ACK field (RFC 9293 §3.10.7.4 "fifth"; RFC 5681,
//! RFC 6582, RFC 6675 via `recovery`; RFC 6298 timer rules and Karn's rule via
//! `recovery::rto`) and of its text (RFC 9293 "seventh", reassembly, delayed ACK).
//!
//! Order on an ACK: classify (duplicate ACK per docs/spec/mechanisms.md §4, judged against the
//! window we held *before* this segment), cumulative ACK (queue, `Event::Acked`), SACK blocks, RTT
//! sample and backoff reset, recovery state machine, congestion-window growth, RTO timer, window
//! update (SND.WL1/WL2), persist timer, FIN-acked transitions. The RTO timer is restarted on every
//! ACK of new data, partial ACKs in recovery included (RFC 6582 "Slow-but-Steady", as Linux).
//! Spurious retransmissions are counted by Eifel detection (RFC 3522) when timestamps are in use;
//! D-SACK is ignored.

use super::delayed_ack::{AckDecision, Arrival};
use super::timers::TimerKind;
use super::Endpoint;
use crate::cc::CongestionControl;
use crate::event::{DropReason, Event};
use crate::recovery::dupack::{is_dupack, AckFacts};
use crate::recovery::{rto, sack, AckEvent, Phase, Transition};
use crate::seq::from_wire;
use crate::time::Instant;
use crate::wire::Segment;
use arrayvec::ArrayVec;
use bytes::Bytes;

impl Endpoint {
    /// Process the ACK field. Returns false if the segment must be dropped (ACK of data never
    /// sent: an ACK is sent in reply, RFC 9293).
    pub(super) fn process_ack(&mut self, now: Instant, seg: &Segment, seg_start: i64) -> bool {
        let una = self.snd.una_seq();
        let nxt = self.snd.nxt_seq();
        let a = from_wire(self.iss, seg.ack, una);
        if a > nxt as i64 {
            self.ack_now = true;
            self.drop_segment(now, DropReason::BadAck);
            return false;
        }
        let wnd = (seg.window as u64) << self.neg.snd_wscale;
        let acked_new = a > una as i64;
        let facts = AckFacts {
            ack_equals_una: a == una as i64,
            seg_len: seg.seq_len(),
            window_unchanged: wnd == self.snd_wnd,
            outstanding: nxt > una,
        };
        let dup = is_dupack(&facts);
        if dup {
            self.stats.duplicate_acks_received += 1;
        }
        let in_flight_before = self.rec.pipe(&self.snd);
        // what this ACK delivers (PRR): packets that left the queue plus newly SACKed ones
        let (packets_before, left_before) = (self.snd.packets_out(), self.rec.left(&self.snd));
        let losses_before = self.snd.losses();
        let phase_at_start = self.rec.phase;
        let data_una_before = self.snd.una;
        let fin_acked_before = self.snd.fin_acked;
        self.rack_before_ack(now, seg, a); // RACK: send times of delivered segments (rack_tlp_hooks.rs)
        let mut summary = Default::default();
        if acked_new {
            summary = self.snd.ack(a as u64);
            if self.snd.una > data_una_before {
                self.events.push_back(Event::Acked {
                    at: now,
                    una: self.snd.una,
                });
            }
        }
        let undo_before = self.rec.undo;
        let prior_delivered = self.rack_tlp.delivered;
        if self.neg.sack && !seg.options.sack_blocks.is_empty() {
            // every block in stream offsets, once: the first may be a D-SACK (below snd_una or
            // inside the second); the scoreboard takes only valid blocks of outstanding data
            let raw: ArrayVec<(u64, u64), 4> = seg
                .options
                .sack_blocks
                .iter()
                .map(|&(l, r)| {
                    (
                        from_wire(self.iss, l, self.snd.una),
                        from_wire(self.iss, r, self.snd.una),
                    )
                })
                .filter(|&(l, r)| 0 <= l && l < r)
                .map(|(l, r)| (l as u64, r as u64))
                .collect();
            self.dsack_on_blocks(&raw, a.max(0) as u64);
            let (lo, hi) = (self.snd.una_seq(), self.snd.nxt_seq());
            let blocks: ArrayVec<(u64, u64), 4> = raw
                .into_iter()
                .filter(|&(l, r)| lo <= l && r <= hi)
                .collect();
            sack::apply_blocks(&mut self.snd, &blocks);
        }
        let mut sample = None;
        let mut ca_sample = None;
        if acked_new {
            let ts = if self.neg.timestamps {
                seg.options
                    .timestamps
                    .and_then(|(_, ecr)| rto::ts_rtt(super::options::ts_clock(now), ecr))
            } else {
                None
            };
            sample = rto::rtt_sample(now, &summary, ts);
            ca_sample = rto::ca_rtt_sample(now, &summary, ts);
            if let (Some(at), Some((_, ecr)), true) = (
                summary.last_retransmit_at,
                seg.options.timestamps,
                self.neg.timestamps,
            ) {
                if rto::is_spurious(ecr, super::options::ts_clock(at)) {
                    self.stats.spurious_retransmissions += 1;
                }
            }
            if let Some(r) = sample {
                // Linux: the ACK ends an RTT round if it covers data sent after the last one
                let ends_round = self.snd.una_seq() > self.rtt_seq;
                if ends_round {
                    self.rtt_seq = self.snd.nxt_seq();
                }
                self.rtt.on_sample_in_round(r, ends_round);
                if let Some(c) = ca_sample {
                    self.rtt.note_min_rtt(c);
                }
                self.backoff = 0;
            }
            self.retries = 0;
        }
        // thin dupACK, Early Retransmit, F-RTO threshold (thin_hooks.rs)
        let thresh = self.ack_dupthresh(now, acked_new, dup, sample);
        // RACK loss detection; with RACK on, dupthresh loss marking defers to it
        let thresh = self.rack_on_ack(now, thresh);
        let ev = AckEvent {
            now,
            acked_segments: summary.segments,
            acked_new,
            dupack: dup,
            una_seq: self.snd.una_seq(),
            nxt_seq: self.snd.nxt_seq(),
            dupthresh: thresh,
        };
        let phase_before = self.rec.phase;
        let t = self.rec.on_ack(&mut self.snd, &mut self.cc, &ev);
        let delivered = packets_before.saturating_sub(self.snd.packets_out()) as i64
            + self.rec.left(&self.snd) as i64
            - left_before as i64;
        let newly_lost = (self.snd.losses() - losses_before) as u32;
        self.rec.prr_on_ack(
            &self.snd,
            &self.cc,
            delivered.max(0) as u32,
            newly_lost,
            acked_new,
        );
        self.rack_tlp.delivered += delivered.max(0) as u64;
        let ecr = seg
            .options
            .timestamps
            .filter(|_| self.neg.timestamps)
            .map(|(_, e)| e);
        let undos_before = self.stats.undos;
        self.dsack_after_ack(t, undo_before, ecr, prior_delivered);
        self.trace_recovery(now, phase_at_start, losses_before, undos_before);
        if acked_new && phase_before != Phase::Recovery && t != Transition::EnteredRecovery {
            let limited = self.cwnd_limited(in_flight_before);
            self.cc.on_ack(now, summary.segments, limited, ca_sample);
        }
        // RDB patch: hidden loss → CWR; RDB adaptive: loss signals and the allowance
        let hole = dup || (self.neg.sack && !seg.options.sack_blocks.is_empty());
        if acked_new {
            self.rdb_on_ack(now, data_una_before, in_flight_before, hole);
        } else if hole {
            self.rdb_on_hole();
        }
        match rto::timer_on_ack(acked_new, !self.snd.is_empty()) {
            rto::TimerOnAck::Stop => self.timers.stop(TimerKind::Rto),
            rto::TimerOnAck::Restart => self.timers.arm(TimerKind::Rto, now, self.rto()),
            rto::TimerOnAck::Keep => {}
        }
        self.tlp_on_ack(now, acked_new); // TLP: re-arm after an ACK of new data
                                         // window update, RFC 9293 §3.10.7.4: only if SND.UNA =< SEG.ACK (an old ACK must not
                                         // move the window) and (SND.WL1 < SEG.SEQ or (= and SND.WL2 =< SEG.ACK))
        let ack_not_old = a >= una as i64;
        if ack_not_old
            && (self.snd_wl1 < seg_start || (self.snd_wl1 == seg_start && self.snd_wl2 <= a))
        {
            self.snd_wnd = wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(wnd);
            self.snd_wl1 = seg_start;
            self.snd_wl2 = a;
        }
        if self.snd_wnd > 0 && self.timers.is_armed(TimerKind::Persist) {
            self.timers.stop(TimerKind::Persist);
            self.persist_backoff = 0;
        }
        if self.snd.fin_acked && !fin_acked_before {
            self.on_fin_acked(now);
        }
        true
    }

    /// Trace events for what recovery did on this ACK (phase changes, losses marked, the
    /// window reduced or restored).
    pub(super) fn trace_recovery(
        &mut self,
        now: Instant,
        phase_before: Phase,
        losses_before: u64,
        undos_before: u64,
    ) {
        use crate::event::RecoveryEvent as R;
        let mut push = |what| self.events.push_back(Event::Recovery { at: now, what });
        let marked = self.snd.losses() - losses_before;
        if marked > 0 {
            push(R::LossMarked {
                segments: marked as u32,
            });
        }
        let (cwnd, ssthresh) = (self.rec.cwnd(&self.cc), self.cc.ssthresh());
        match (phase_before, self.rec.phase) {
            (Phase::Open, Phase::Recovery) => {
                push(R::Entered);
                push(R::Reduction { cwnd, ssthresh });
            }
            (Phase::Recovery, Phase::Open) => push(R::Exited),
            _ => {}
        }
        if self.stats.undos > undos_before {
            push(R::Undo { cwnd, ssthresh });
        }
    }

    /// Whether the window was in use, so that this ACK may grow it: the flight before the ACK
    /// reached cwnd (Linux 2.6.22), or, with `cwnd_limited_window`, the window-usage rule of
    /// `cwnd_validation` (modern Linux `tcp_is_cwnd_limited`).
    fn cwnd_limited(&self, in_flight_before: u32) -> bool {
        let cwnd = self.cc.cwnd();
        if self.cfg.cwnd_limited_window {
            self.cwnd_usage.may_grow(cwnd, cwnd < self.cc.ssthresh())
        } else {
            in_flight_before >= cwnd
        }
    }

    /// Text of an acceptable segment in a state that receives data.
    pub(super) fn on_data(&mut self, now: Instant, start: i64, mut payload: Bytes) {
        let len = payload.len();
        let mut start = start;
        if start < 0 {
            // data riding on a retransmitted SYN: skip the part before offset 0
            let skip = ((-start) as usize).min(len);
            payload = payload.slice(skip..);
            start = 0;
        }
        let limit = self.rcv_adv.max(self.rcv.rcv_nxt);
        let rcv_nxt_before = self.rcv.rcv_nxt;
        let out = self.rcv.insert(start as u64, payload, limit);
        let end = (start as u64 + len as u64).min(limit);
        self.dsack_note_arrival(start as u64, end, rcv_nxt_before, out.duplicate);
        if let Some((a, b)) = out.delivered {
            self.events.push_back(Event::Delivered {
                at: now,
                start: a,
                end: b,
            });
        }
        let arrival = if out.out_of_order || out.filled_hole || out.duplicate {
            Arrival::Urgent
        } else {
            Arrival::InOrder
        };
        // only the bytes that advanced rcv_nxt count toward "ACK now" (Linux rcv_nxt - rcv_wup)
        let new_bytes = out.delivered.map_or(0, |(a, b)| b - a);
        let rto = self.rto();
        match self
            .delack
            .on_data(now, len, new_bytes, arrival, rto, self.rtt.srtt())
        {
            AckDecision::Now => self.ack_now = true,
            AckDecision::Delay(t) => self.timers.arm_if_idle(
                TimerKind::DelayedAck,
                now,
                t.saturating_duration_since(now),
            ),
        }
    }
}
