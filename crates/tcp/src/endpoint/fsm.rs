//! The connection state machine: RFC 9293 §3.10.7 "SEGMENT ARRIVES" — CLOSED and LISTEN
//! handling, SYN-SENT (active open, simultaneous open), and for synchronized states the
//! acceptability test (§3.10.7.4 first, with the zero-window allowance for ACKs), RST
//! processing with the RFC 5961 §3 challenge ACK for in-window RSTs, SYN in a synchronized
//! state (RFC 5961 §4 challenge ACK), the SYN-RECEIVED → ESTABLISHED step, and the FIN
//! transitions. ACK, data and FIN processing proper are in `input`.

use super::options::{negotiate, Negotiated};
use super::{Endpoint, EndpointError, State};
use crate::event::{DropReason, Event};
use crate::seq::{from_wire, to_wire};
use crate::time::Instant;
use crate::wire::{Flags, Segment};

/// RFC 9293 §3.10.7.4 segment acceptability (all in peer sequence-space offsets).
pub fn acceptable(seg_start: i64, seg_len: u64, rcv_nxt: u64, rcv_wnd: u64) -> bool {
    let nxt = rcv_nxt as i64;
    let right = nxt + rcv_wnd as i64;
    let in_wnd = |x: i64| nxt <= x && x < right;
    match (seg_len, rcv_wnd) {
        (0, 0) => seg_start == nxt,
        (0, _) => in_wnd(seg_start),
        (_, 0) => false,
        (l, _) => in_wnd(seg_start) || in_wnd(seg_start + l as i64 - 1),
    }
}

impl Endpoint {
    pub(super) fn on_segment(&mut self, now: Instant, seg: Segment) {
        self.stats.segments_received += 1;
        match self.state {
            State::Closed => {
                if !seg.flags.rst() {
                    self.reply_rst(&seg);
                }
                self.drop_segment(now, DropReason::BadState);
            }
            State::Listen => self.on_listen(now, seg),
            _ if seg.dst_port != self.local_port || seg.src_port != self.remote_port => {
                self.drop_segment(now, DropReason::WrongConnection);
            }
            State::SynSent => self.on_syn_sent(now, seg),
            _ => self.on_synchronized(now, seg),
        }
    }

    /// RFC 9293 §3.10.7.1: the reset to send in reply to `seg`.
    pub(super) fn reply_rst(&mut self, seg: &Segment) {
        let mut r = Segment {
            src_port: seg.dst_port,
            dst_port: seg.src_port,
            ..Segment::default()
        };
        if seg.flags.ack() {
            r.seq = seg.ack;
            r.flags = Flags::RST;
        } else {
            r.seq = 0;
            r.ack = seg.seq.wrapping_add(seg.seq_len());
            r.flags = Flags::RST | Flags::ACK;
        }
        self.rst_pending = Some(Box::new(r));
    }

    fn on_listen(&mut self, now: Instant, seg: Segment) {
        if seg.dst_port != self.local_port {
            return self.drop_segment(now, DropReason::WrongConnection);
        }
        if seg.flags.rst() {
            return self.drop_segment(now, DropReason::BadState);
        }
        if seg.flags.ack() {
            self.reply_rst(&seg);
            return self.drop_segment(now, DropReason::BadAck);
        }
        if !seg.flags.syn() {
            return self.drop_segment(now, DropReason::BadState);
        }
        self.remote_port = seg.src_port;
        self.accept_syn(&seg);
        self.syn_pending = true;
        self.set_state(now, State::SynReceived);
    }

    /// Record the peer's SYN: initial sequence, options, window (never scaled in a SYN).
    fn accept_syn(&mut self, seg: &Segment) {
        self.irs = seg.seq;
        self.neg = negotiate(&self.cfg, &seg.options);
        self.loss.on_established(&self.cfg, self.neg.sack);
        if let Some((tsval, _)) = seg.options.timestamps {
            self.ts_recent = tsval;
        }
        self.peer_syn = Some(seg.options.clone());
        self.snd_wnd = seg.window as u64;
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = -1;
        self.snd_wl2 = 0;
        self.rcv_adv = self.rcv_window();
    }

    fn on_syn_sent(&mut self, now: Instant, seg: Segment) {
        let f = seg.flags;
        let ack_ok = f.ack() && from_wire(self.iss, seg.ack, 0) == 0;
        if f.ack() && !ack_ok {
            if !f.rst() {
                self.reply_rst(&seg);
            }
            return self.drop_segment(now, DropReason::BadAck);
        }
        if f.rst() {
            if ack_ok {
                self.error = Some(EndpointError::Reset);
                self.set_state(now, State::Closed);
            } else {
                self.drop_segment(now, DropReason::BadState);
            }
            return;
        }
        if !f.syn() {
            return self.drop_segment(now, DropReason::BadState);
        }
        self.accept_syn(&seg);
        if ack_ok {
            self.handshake_acked(now);
            self.snd_wl1 = -1;
            self.snd_wl2 = 0;
            let to = if self.close_requested {
                State::FinWait1
            } else {
                State::Established
            };
            self.set_state(now, to);
            self.ack_now = true;
            self.handshake_ack_pending = self.cfg.handshake_ack_alone;
        } else {
            // simultaneous open: answer with a SYN-ACK carrying our original ISS
            self.syn_pending = true;
            self.set_state(now, State::SynReceived);
        }
    }

    /// Our SYN (or SYN-ACK) was acknowledged: RTT sample unless it was retransmitted (Karn),
    /// stop the handshake timer, clear the handshake backoff.
    fn handshake_acked(&mut self, now: Instant) {
        if !self.syn_retransmitted {
            if let Some(t) = self.syn_sent_at {
                self.rtt.on_sample(now - t);
            }
        }
        self.loss.backoff = 0;
        self.syn_pending = false;
        self.timers.stop(crate::timers::TimerKind::Rto);
    }

    fn on_synchronized(&mut self, now: Instant, seg: Segment) {
        let f = seg.flags;
        // the peer retransmitted its SYN: our SYN-ACK was lost, send it again
        if self.state == State::SynReceived
            && f.syn()
            && !f.ack()
            && !f.rst()
            && seg.seq == self.irs
        {
            self.syn_pending = true;
            return;
        }
        let rcv_nxt = self.rcv_nxt_seq();
        let start = from_wire(self.irs, seg.seq, rcv_nxt);
        let seg_len = seg.seq_len() as u64;
        if !seg.payload.is_empty() && !f.rst() {
            // every data segment that reaches the connection, as a capture would see it
            let end = start + seg.payload.len() as i64;
            self.events.push_back(Event::Arrived {
                at: now,
                start: start.max(0) as u64,
                end: end.max(0) as u64,
            });
        }
        let wnd = self.rcv_adv.saturating_sub(rcv_nxt);
        if !acceptable(start, seg_len, rcv_nxt, wnd) {
            if !f.rst() {
                self.ack_now = true;
                // A duplicate that reaches the ACK point last sent (a retransmission whose
                // ACK was lost) still refreshes TS.Recent, as Linux (`tcp_sequence` accepts
                // end_seq ≥ rcv_wup, then `tcp_replace_ts_recent`) and FreeBSD (`tcp_input`
                // after trimming the duplicate) do. Otherwise this dupACK echoes the first
                // transmission's TSval and hands the sender an RTT sample spanning the
                // whole outage (RFC 7323 §4.3 R2 rejects before R3 updates).
                if start + seg_len as i64 >= self.last_ack_sent as i64 {
                    self.update_ts_recent(&seg, start);
                }
                // RFC 2883: report old data as a D-SACK (Linux tcp_send_dupack)
                let len = seg.payload.len() as i64;
                if len > 0 && start >= 0 && start + len <= rcv_nxt as i64 {
                    let s = start as u64;
                    self.dsack_note_arrival(s, s + len as u64, rcv_nxt, true);
                }
                if self.state == State::TimeWait && f.fin() {
                    // a retransmitted FIN: acknowledge it and restart the 2·MSL timer
                    self.timers
                        .arm(crate::timers::TimerKind::TimeWait, now, self.cfg.time_wait);
                }
                // RFC 9293: with a zero window, valid ACKs are still processed.
                if wnd == 0 && start == rcv_nxt as i64 && f.ack() && !f.syn() {
                    self.process_ack(now, &seg, start);
                }
            }
            return self.drop_segment(now, DropReason::OutOfWindow);
        }
        if f.rst() {
            if start == rcv_nxt as i64 {
                if matches!(
                    self.state,
                    State::SynReceived
                        | State::Established
                        | State::FinWait1
                        | State::FinWait2
                        | State::CloseWait
                ) {
                    self.error = Some(EndpointError::Reset);
                }
                self.set_state(now, State::Closed);
            } else {
                // RFC 5961 §3.2: in-window but not exact: challenge ACK
                self.ack_now = true;
                self.drop_segment(now, DropReason::OutOfWindow);
            }
            return;
        }
        if f.syn() {
            // RFC 5961 §4.2 challenge ACK
            self.ack_now = true;
            return self.drop_segment(now, DropReason::BadState);
        }
        if !f.ack() {
            return self.drop_segment(now, DropReason::BadState);
        }
        if self.state == State::SynReceived {
            if from_wire(self.iss, seg.ack, 0) != 0 {
                self.reply_rst(&seg);
                return self.drop_segment(now, DropReason::BadAck);
            }
            self.handshake_acked(now);
            self.snd_wnd = (seg.window as u64) << self.neg.snd_wscale;
            self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
            self.snd_wl1 = start;
            self.snd_wl2 = 0;
            let to = if self.close_requested {
                State::FinWait1
            } else {
                State::Established
            };
            self.set_state(now, to);
        }
        if !self.process_ack(now, &seg, start) {
            return;
        }
        self.update_ts_recent(&seg, start);
        if !seg.payload.is_empty() {
            if matches!(
                self.state,
                State::Established | State::FinWait1 | State::FinWait2
            ) {
                self.on_data(now, start, seg.payload.clone());
            } else {
                // data after the peer's FIN (or in TIME-WAIT etc.): already covered, re-ACK
                self.ack_now = true;
            }
        }
        if f.fin() && self.fin_at.is_none() && start >= 0 {
            self.fin_at = Some(start as u64 + seg.payload.len() as u64);
            if self.fin_at != Some(self.rcv.rcv_nxt) {
                // out-of-order FIN: acknowledge (a duplicate ACK) at once
                self.ack_now = true;
            }
        }
        self.check_fin(now);
    }

    /// RFC 7323 §4.3: remember the peer's TSval if the segment covers Last.ACK.sent.
    fn update_ts_recent(&mut self, seg: &Segment, start: i64) {
        if !self.neg.timestamps {
            return;
        }
        if let Some((tsval, _)) = seg.options.timestamps {
            let newer = tsval.wrapping_sub(self.ts_recent) as i32 >= 0;
            if start <= self.last_ack_sent as i64 && newer {
                self.ts_recent = tsval;
            }
        }
    }

    /// The peer's FIN is in order: consume it and move the state machine.
    pub(super) fn check_fin(&mut self, now: Instant) {
        if self.fin_rcvd || self.fin_at != Some(self.rcv.rcv_nxt) {
            return;
        }
        self.fin_rcvd = true;
        self.ack_now = true;
        match self.state {
            State::SynReceived | State::Established => self.set_state(now, State::CloseWait),
            State::FinWait1 => {
                if self.snd.fin_acked {
                    self.set_state(now, State::TimeWait)
                } else {
                    self.set_state(now, State::Closing)
                }
            }
            State::FinWait2 => self.set_state(now, State::TimeWait),
            _ => {}
        }
    }

    /// Our FIN was acknowledged.
    pub(super) fn on_fin_acked(&mut self, now: Instant) {
        match self.state {
            State::FinWait1 => self.set_state(now, State::FinWait2),
            State::Closing => self.set_state(now, State::TimeWait),
            State::LastAck => self.set_state(now, State::Closed),
            _ => {}
        }
    }

    /// The options to put on our SYN or SYN-ACK.
    pub(super) fn our_handshake_options(&self, now: Instant) -> crate::wire::TcpOptions {
        let tsval = super::options::ts_clock(now);
        super::options::handshake_options(&self.cfg, self.peer_syn.as_ref(), tsval)
    }

    /// Sequence number of our SYN.
    pub(super) fn syn_seq(&self) -> u32 {
        to_wire(self.iss, 0).wrapping_sub(1)
    }

    #[allow(dead_code)]
    pub(super) fn negotiated_ref(&self) -> &Negotiated {
        &self.neg
    }
}

#[cfg(test)]
mod tests {
    use super::acceptable;

    #[test]
    fn acceptability_table() {
        assert!(acceptable(10, 0, 10, 0));
        assert!(!acceptable(11, 0, 10, 0));
        assert!(acceptable(15, 0, 10, 10));
        assert!(!acceptable(20, 0, 10, 10));
        assert!(!acceptable(10, 5, 10, 0));
        assert!(acceptable(5, 10, 10, 10)); // overlaps rcv_nxt
        assert!(!acceptable(0, 10, 10, 10)); // entirely old
        assert!(acceptable(19, 10, 10, 10));
        assert!(!acceptable(9, 0, 10, 10));
    }
}
