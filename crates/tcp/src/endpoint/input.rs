//! Processing of an acceptable segment's ACK field (RFC 9293 §3.10.7.4 "fifth") and of its text
//! (RFC 9293 "seventh", reassembly, delayed ACK).
//!
//! Order on an ACK: parse it once (`recovery::manager::AckInfo`: duplicate ACK per
//! docs/spec/mechanisms.md, judged against the window we held *before* this segment; SACK blocks
//! in stream offsets), the loss-recovery component's steps (cumulative ACK, SACK and D-SACK, RTT,
//! the loss detectors, the recovery state machine, PRR, undo, window growth, RDB, the RTO and
//! probe timers: the numbered list in `recovery::manager`), then the window update
//! (SND.WL1/WL2), the persist timer and the FIN-acked transitions.

use super::delayed_ack::{AckDecision, Arrival};
use super::Endpoint;
use crate::event::{DropReason, Event};
use crate::recovery::manager::{AckInfo, AckParse};
use crate::time::Instant;
use crate::timers::TimerKind;
use crate::wire::Segment;
use bytes::Bytes;

impl Endpoint {
    /// Process the ACK field: parse it once, let the loss-recovery component run its steps
    /// (`recovery::manager`), then the window update, the persist timer and the FIN.
    /// Returns false if the segment must be dropped (ACK of data never sent: an ACK is sent in
    /// reply, RFC 9293).
    pub(super) fn process_ack(&mut self, now: Instant, seg: &Segment, seg_start: i64) -> bool {
        let parse = AckParse {
            iss: self.iss,
            una_seq: self.snd.una_seq(),
            nxt_seq: self.snd.nxt_seq(),
            una: self.snd.una,
            snd_wnd: self.snd_wnd,
            snd_wscale: self.neg.snd_wscale,
            sack: self.neg.sack,
            timestamps: self.neg.timestamps,
        };
        let Some(ack) = AckInfo::parse(seg, &parse) else {
            self.ack_now = true;
            self.drop_segment(now, DropReason::BadAck);
            return false;
        };
        if ack.dupack {
            self.stats.duplicate_acks_received += 1;
        }
        let una_before = parse.una_seq;
        let fin_acked_before = self.snd.fin_acked;
        let (loss, mut c) = self.loss_ctx(now);
        loss.on_ack(&mut c, &ack);
        // window update, RFC 9293 §3.10.7.4: only if SND.UNA =< SEG.ACK (an old ACK must not
        // move the window) and (SND.WL1 < SEG.SEQ or (= and SND.WL2 =< SEG.ACK))
        let a = ack.ack;
        if a >= una_before as i64
            && (self.snd_wl1 < seg_start || (self.snd_wl1 == seg_start && self.snd_wl2 <= a))
        {
            self.snd_wnd = ack.window;
            self.max_snd_wnd = self.max_snd_wnd.max(ack.window);
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
