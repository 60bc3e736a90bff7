//! What to send next (RFC 9293 §3.8.6, §3.10; RFC 5681; RFC 6675 NextSeg; RFC 896 Nagle).
//!
//! Priority, one segment per `poll_transmit` call: a pending RST; the SYN / SYN-ACK; the
//! lowest lost segment (retransmission, first of an episode regardless of cwnd, then while
//! pipe < cwnd); new data (cwnd in segments, the peer's window, sender SWS avoidance, Nagle
//! unless `nodelay`, FIN piggybacked on the last data); a zero-window probe; a pure ACK.
//! Every segment carries the current ACK, so a pending ACK rides on data and no separate pure
//! ACK is sent. Exactly one `Event::Sent` per segment.
//!
//! RDB (`recovery::manager`, `rdb.rs`) widens the payload of a new segment backwards over
//! unacked data in `send_new` and, in its seed variant, a retransmission forwards in
//! `send_retransmission`. The TLP probe goes before retransmissions and new data.

use super::options::ts_clock;
use super::select_window;
use super::{Endpoint, State};
use crate::cc::CongestionControl;
use crate::event::{Event, SendKind};
use crate::recovery::tlp::Probe;
use crate::rtt::backed_off;
use crate::seq::to_wire;
use crate::time::Instant;
use crate::timers::TimerKind;
use crate::wire::{Flags, Segment, TcpOptions};
use bytes::Bytes;

/// Nagle's algorithm (RFC 9293 §3.7.4, RFC 896): hold a sub-MSS segment while unacknowledged
/// data is outstanding. A segment carrying the FIN is not held (Linux `tcp_nagle_test`).
pub fn nagle_holds(nodelay: bool, len: u64, mss: u64, outstanding: bool, fin: bool) -> bool {
    !nodelay && len < mss && outstanding && !fin
}

/// Sender SWS avoidance (RFC 9293 §3.8.6.2.1) for a segment cut short by the peer's window:
/// send it only if it is at least half the largest window the peer ever offered.
pub fn sws_holds(len: u64, mss: u64, unsent: u64, max_snd_wnd: u64) -> bool {
    len < mss && len < unsent && len * 2 < max_snd_wnd
}

impl Endpoint {
    #[inline(never)]
    pub(super) fn next_segment(&mut self, now: Instant) -> Option<Segment> {
        if let Some(r) = self.rst_pending.take() {
            let seg = *r;
            self.emit(now, &seg, SendKind::Rst, 0, 0);
            return Some(seg);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent => return self.send_syn(now),
            State::SynReceived if self.syn_pending => return self.send_syn(now),
            _ => {}
        }
        if self.state == State::SynReceived {
            // only ACKs (replies to unacceptable segments) until our SYN is acknowledged
            return self.ack_now.then(|| self.pure_ack(now));
        }
        if std::mem::take(&mut self.handshake_ack_pending) && self.ack_now {
            return Some(self.pure_ack(now));
        }
        if let Some(s) = self.send_tlp_probe(now) {
            return Some(s); // RFC 8985 §7 loss probe
        }
        if let Some(s) = self.send_retransmission(now) {
            return Some(s);
        }
        if let Some(s) = self.send_new(now) {
            return Some(s);
        }
        if self.probe_pending {
            self.probe_pending = false;
            // Linux tcp_xmit_probe_skb: an old sequence number, no data; the peer answers
            // with an ACK carrying its current window.
            let seq = to_wire(self.iss, self.snd.una_seq()).wrapping_sub(1);
            let seg = self.segment(now, seq, Flags::ACK, Bytes::new());
            let una = self.snd.una;
            self.emit(now, &seg, SendKind::WindowProbe, una, una);
            return Some(seg);
        }
        if self.ack_now {
            return Some(self.pure_ack(now));
        }
        None
    }

    fn pure_ack(&mut self, now: Instant) -> Segment {
        let seq = to_wire(self.iss, self.snd.nxt_seq());
        let seg = self.segment(now, seq, Flags::ACK, Bytes::new());
        let nxt = self.snd.nxt;
        self.emit(now, &seg, SendKind::Ack, nxt, nxt);
        seg
    }

    fn send_syn(&mut self, now: Instant) -> Option<Segment> {
        if !self.syn_pending {
            return None;
        }
        self.syn_pending = false;
        let mut flags = Flags::SYN;
        if self.state == State::SynReceived {
            flags = flags | Flags::ACK;
        }
        let window = self.rcv_window().min(0xffff);
        self.rcv_adv = self.rcv_adv.max(window);
        self.rcv_wnd = window;
        let seg = Segment {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.syn_seq(),
            ack: if flags.ack() { to_wire(self.irs, 0) } else { 0 },
            flags,
            window: window as u16,
            options: self.our_handshake_options(now),
            payload: Bytes::new(),
        };
        if self.syn_sent_at.is_none() {
            self.syn_sent_at = Some(now);
        }
        let rto = backed_off(self.rtt.rto(), self.loss.backoff, self.cfg.rto_max);
        self.timers.arm(TimerKind::Rto, now, rto);
        self.emit(now, &seg, SendKind::Handshake, 0, 0);
        Some(seg)
    }

    fn send_retransmission(&mut self, now: Instant) -> Option<Segment> {
        let i = self.snd.first_to_retransmit()?;
        let rec = &mut self.loss.rec;
        if !rec.force_retransmit && rec.pipe(&self.snd) >= rec.cwnd(&self.cc) {
            return None;
        }
        rec.force_retransmit = false;
        if self.cfg.retrans_collapse {
            let wnd_end = self.snd.una + self.snd_wnd;
            self.snd.collapse(i, self.neg.send_mss as u64, wnd_end);
        }
        let kind = rec.retransmit_kind();
        let s = self.snd.on_retransmit(i, now);
        self.loss.rec.on_retransmit(now); // undo accounting
        let (loss, mut c) = self.loss_ctx(now);
        let (end, payload) = loss.rdb_on_retransmit(&mut c, i); // RDB seed: bundle on retransmission
        match kind {
            SendKind::Rto => self.stats.retransmissions_rto += 1,
            SendKind::Early => self.stats.retransmissions_early += 1,
            SendKind::EarlyThreshold => self.stats.retransmissions_early_threshold += 1,
            SendKind::RackRetransmit => self.stats.retransmissions_rack += 1,
            _ => self.stats.retransmissions_fast += 1,
        }
        let mut flags = Flags::ACK | Flags::PSH;
        if s.fin {
            flags = flags | Flags::FIN;
        }
        let seg = self.segment(now, to_wire(self.iss, s.start), flags, payload);
        self.on_data_sent(now);
        let (loss, mut c) = self.loss_ctx(now);
        loss.restart_rto_on_head_retransmit(&mut c, kind, s.start);
        self.emit(now, &seg, kind, s.start, end);
        Some(seg)
    }

    /// The pending loss probe (RFC 8985 §7.3), if one is due: new data if the window allows,
    /// else a retransmission of the highest sent segment.
    fn send_tlp_probe(&mut self, now: Instant) -> Option<Segment> {
        if !self.loss.probe_pending() {
            return None;
        }
        let (loss, c) = self.loss_ctx(now);
        let probe = loss.take_probe(&c)?;
        let mut out = None;
        if probe == Probe::New {
            self.loss.set_probing(true);
            out = self.send_new(now);
            self.loss.set_probing(false);
        }
        let out = match out {
            Some(s) => s,
            None => self.send_tlp_retransmission(now)?,
        };
        let (loss, mut c) = self.loss_ctx(now);
        loss.on_probe_sent(&mut c);
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
        self.emit(now, &seg, SendKind::Tlp, s.start, s.end);
        Some(seg)
    }

    /// New data (or a lone FIN) if any may go now. Most transmit opportunities have none to
    /// send; that answer is given here, inlined into the caller, without the stack frame of
    /// the body ([`Self::send_new_segment`]).
    #[inline]
    pub(super) fn send_new(&mut self, now: Instant) -> Option<Segment> {
        if !self.snd.has_new_to_send() {
            return None;
        }
        self.send_new_segment(now)
    }

    #[inline(never)]
    fn send_new_segment(&mut self, now: Instant) -> Option<Segment> {
        if !matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait1 | State::LastAck
        ) {
            return None;
        }
        let unsent = self.snd.unsent_len();
        // a TLP probe of new data ignores cwnd (Linux tcp_write_xmit push_one = 2)
        let rec = &self.loss.rec;
        if rec.cwnd_usage(&self.snd) >= rec.cwnd(&self.cc) && !self.loss.probing() {
            self.note_cwnd_usage(true);
            return None;
        }
        let mss = self.neg.send_mss as u64;
        let usable = (self.snd.una + self.snd_wnd).saturating_sub(self.snd.nxt);
        let len = unsent.min(mss).min(usable);
        let force = std::mem::take(&mut self.sws_override);
        if unsent > 0 && (len == 0 || (!force && sws_holds(len, mss, unsent, self.max_snd_wnd))) {
            // window-limited: with nothing in flight to bring a window update, persist
            if self.snd.is_empty() && !self.timers.is_armed(TimerKind::Persist) {
                let d = backed_off(self.rtt.rto(), self.persist_backoff, self.cfg.rto_max);
                self.timers.arm(TimerKind::Persist, now, d);
            }
            return None;
        }
        let fin = self.snd.fin_queued && self.snd.nxt + len == self.snd.written;
        let outstanding = self.snd.nxt_seq() > self.snd.una_seq();
        if !force && nagle_holds(self.cfg.nodelay, len, mss, outstanding, fin) {
            return None;
        }
        // RFC 5681 §4.1: restart window after an idle period longer than the RTO
        if self.snd.is_empty() {
            if let Some(t) = self.last_send {
                if now - t > self.rto() {
                    self.cc.on_idle_restart(now);
                }
            }
        }
        let i = self.snd.push_new(now, len as usize, fin);
        // RDB: the new segment may carry earlier unacknowledged bytes
        let (loss, mut c) = self.loss_ctx(now);
        let (start, end, payload, kind) = loss.rdb_on_send_new(&mut c, i);
        let kind = match kind {
            SendKind::New if self.loss.probing() => SendKind::TlpNewData,
            k => k,
        };
        let mut flags = Flags::ACK;
        if len > 0 {
            flags = flags | Flags::PSH;
        }
        if fin {
            flags = flags | Flags::FIN;
        }
        let seg = self.segment(now, to_wire(self.iss, start), flags, payload);
        self.on_data_sent(now);
        let limited = self.loss.rec.cwnd_usage(&self.snd) >= self.loss.cwnd(&self.cc);
        self.note_cwnd_usage(limited);
        let (loss, mut c) = self.loss_ctx(now);
        loss.tlp_arm(&mut c); // (re)arm the loss probe
        if len > 0 {
            self.delack.on_data_sent(now);
        }
        self.emit(now, &seg, kind, start, end);
        Some(seg)
    }

    /// Linux `tcp_cwnd_validate` after a transmission opportunity (`limited`: the flight is at
    /// cwnd).
    fn note_cwnd_usage(&mut self, limited: bool) {
        if self.cfg.cwnd_limited_window {
            let (una, nxt) = (self.snd.una_seq(), self.snd.nxt_seq());
            let out = self.snd.packets_out();
            self.cwnd_usage.on_send(una, nxt, out, limited);
        }
    }

    /// Bookkeeping for any data/FIN transmission: PRR's count, RFC 6298 §5.1 timer arming.
    pub(super) fn on_data_sent(&mut self, now: Instant) {
        self.last_send = Some(now);
        let (loss, mut c) = self.loss_ctx(now);
        loss.on_data_sent(&mut c);
    }

    /// Our window field: Linux's window selection (`select_window.rs`), never shrinking the
    /// right edge (RFC 9293 §3.8.6.2.2).
    fn window_field(&mut self) -> u16 {
        let nxt = self.rcv.rcv_nxt;
        let ws = self.neg.rcv_wscale;
        let cur = self.rcv_adv.saturating_sub(nxt);
        let wnd = select_window::never_shrink(self.select_window(), cur, ws);
        let field = (wnd >> ws).min(0xffff);
        self.rcv_wnd = field << ws;
        self.rcv_adv = self.rcv_adv.max(nxt + (field << ws));
        field as u16
    }

    /// A segment of the synchronized states with ACK, window, timestamps and SACK blocks.
    pub(super) fn segment(
        &mut self,
        now: Instant,
        seq: u32,
        flags: Flags,
        payload: Bytes,
    ) -> Segment {
        let mut options = TcpOptions::default();
        let mut max_blocks = 4;
        if self.neg.timestamps {
            options.timestamps = Some((ts_clock(now), self.ts_recent));
            max_blocks = 3;
        }
        if self.neg.sack {
            if let Some((l, r)) = self.take_dsack_block(now) {
                options
                    .sack_blocks
                    .push((to_wire(self.irs, l), to_wire(self.irs, r)));
                max_blocks -= 1;
            }
            for (l, r) in self.rcv.sack_blocks(max_blocks) {
                options
                    .sack_blocks
                    .push((to_wire(self.irs, l), to_wire(self.irs, r)));
            }
        }
        Segment {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            ack: to_wire(self.irs, self.rcv_nxt_seq()),
            flags,
            window: self.window_field(),
            options,
            payload,
        }
    }

    fn rst_segment_inner(&self, seq: u32) -> Segment {
        Segment {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            flags: Flags::RST,
            ..Segment::default()
        }
    }

    /// A RST for our own connection (abort).
    pub(super) fn rst_segment(&self, seq: u32, _ack: Option<u32>) -> Segment {
        self.rst_segment_inner(seq)
    }

    /// Record one outgoing segment: exactly one `Event::Sent`, the counters, and the ACK it
    /// carries (clears a pending/delayed ACK).
    pub(super) fn emit(
        &mut self,
        now: Instant,
        seg: &Segment,
        kind: SendKind,
        start: u64,
        end: u64,
    ) {
        let len = seg.payload.len() as u64;
        self.stats.segments_sent += 1;
        if len > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.payload_bytes_sent += len;
        }
        if seg.flags.ack() && !seg.flags.rst() {
            self.ack_now = false;
            self.timers.stop(TimerKind::DelayedAck);
            self.delack.on_ack_sent();
            self.last_ack_sent = self.rcv_nxt_seq();
        }
        self.events.push_back(Event::Sent {
            at: now,
            start,
            end,
            kind,
            syn: seg.flags.syn(),
            fin: seg.flags.fin(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nagle_rule() {
        assert!(nagle_holds(false, 100, 1448, true, false));
        assert!(!nagle_holds(true, 100, 1448, true, false));
        assert!(!nagle_holds(false, 1448, 1448, true, false));
        assert!(!nagle_holds(false, 100, 1448, false, false));
        assert!(!nagle_holds(false, 100, 1448, true, true));
    }

    #[test]
    fn sws_rule() {
        assert!(sws_holds(100, 1448, 500, 1000));
        assert!(!sws_holds(600, 1448, 1000, 1000));
        assert!(!sws_holds(100, 1448, 100, 1000));
    }
}
