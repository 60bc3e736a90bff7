//! Where the endpoint uses D-SACK and undo (RFC 2883, RFC 3522/3708; the rules are in
//! [`crate::recovery::dsack`] and [`crate::recovery::undo`]); nothing here runs unless
//! `TcpConfig::dsack` is on and SACK was negotiated.
//!
//! Receiver: `dsack_note_arrival` remembers the duplicate part of an arriving segment; the
//! next segment sent carries it as its first SACK block (`output::segment`).
//!
//! Sender, per ACK: `dsack_on_blocks` (before the scoreboard update) recognises a D-SACK,
//! counts it, discounts it from the episode's retransmissions and flags RACK's window;
//! `dsack_after_ack` (after the recovery state machine) undoes a recovery that every
//! retransmission of which was D-SACKed, or that ends with timestamps showing the original
//! arrived, and advances RACK's reordering window by a round.

use super::options::ts_clock;
use super::Endpoint;
use crate::recovery::dsack::{dup_segments, is_dsack};
use crate::recovery::undo::Undo;
use crate::recovery::{rto, Phase, Transition};
use crate::time::Instant;

impl Endpoint {
    fn dsack_active(&self) -> bool {
        self.cfg.dsack && self.neg.sack
    }

    /// Receiver: a segment `[start, end)` arrived when `rcv_nxt` was `rcv_nxt_before`;
    /// `duplicate`: nothing of it was new.
    pub(super) fn dsack_note_arrival(
        &mut self,
        start: u64,
        end: u64,
        rcv_nxt_before: u64,
        duplicate: bool,
    ) {
        if !self.dsack_active() || start >= end {
            return;
        }
        let block = if start < rcv_nxt_before {
            // old data, or the old part of a segment straddling rcv_nxt (Linux tcp_data_queue)
            Some((start, end.min(rcv_nxt_before)))
        } else if duplicate {
            Some((start, end)) // already queued out of order (tcp_data_queue_ofo)
        } else {
            None
        };
        if block.is_some() {
            self.dsack_block = block;
        }
    }

    /// Sender: the ACK's SACK blocks (stream offsets, in their order) with cumulative ACK
    /// `ack`. Returns whether the first block was a D-SACK.
    pub(super) fn dsack_on_blocks(&mut self, blocks: &[(u64, u64)], ack: u64) -> bool {
        if !self.dsack_active() || !is_dsack(blocks, ack) {
            return false;
        }
        let (l, r) = blocks[0];
        let len = r - l;
        if len > self.max_snd_wnd.max(1) {
            return true; // dubious: larger than any window we were offered
        }
        let segs = dup_segments(len, self.neg.send_mss as u64);
        self.stats.dsack_dups += segs;
        let retransmitted = self.stats.retransmissions_rto
            + self.stats.retransmissions_fast
            + self.stats.retransmissions_early
            + self.stats.retransmissions_tlp
            + self.stats.retransmissions_rack
            + self.stats.retransmissions_early_threshold;
        if self.stats.dsack_dups > retransmitted {
            return true; // not our retransmissions (RDB bundles, network duplicates)
        }
        self.stats.dsacks += 1;
        self.stats.spurious_retransmissions += segs;
        let tlp_probe = self.rack_tlp.tlp_high_seq == Some(r) && len <= self.neg.send_mss as u64;
        if self.rack_tlp.rack.reord_seen && !tlp_probe {
            self.rack_tlp.reo.dsack_seen = true;
        }
        if let Some(u) = &mut self.rec.undo {
            u.on_dsack(segs as u32);
        }
        true
    }

    /// Sender, after the recovery state machine ran on this ACK: undo and the reordering
    /// window's round. `undo_before` is the episode's undo state before the ACK; `ecr` the
    /// ACK's timestamp echo; `prior_delivered` the delivered count before the ACK.
    pub(super) fn dsack_after_ack(
        &mut self,
        t: Transition,
        undo_before: Option<Undo>,
        ecr: Option<u32>,
        prior_delivered: u64,
    ) {
        if !self.dsack_active() {
            return;
        }
        if t == Transition::ExitedRecovery {
            let delayed = |u: &Undo| {
                u.first_retransmit
                    .zip(ecr)
                    .is_some_and(|(at, e)| rto::is_spurious(e, ts_clock(at)))
            };
            match undo_before {
                Some(u) if u.may_undo_at_exit(delayed(&u)) => {
                    self.rec.undo_recovery(&mut self.cc);
                    self.stats.undos += 1;
                }
                _ => self.rack_tlp.reo.on_recovery_without_undo(),
            }
        } else if self.rec.phase != Phase::Loss && self.rec.undo.is_some_and(|u| u.all_dsacked()) {
            // tcp_try_undo_dsack, in Recovery or after it ended (Open/Disorder)
            self.rec.undo_recovery(&mut self.cc);
            self.stats.undos += 1;
            self.rack_tlp.reo.on_dsack_undo();
        }
        let delivered = self.rack_tlp.delivered;
        self.rack_tlp.reo.on_ack(prior_delivered, delivered);
    }

    /// The D-SACK block to put first in the next segment, if any (taken once).
    pub(super) fn take_dsack_block(&mut self, _now: Instant) -> Option<(u64, u64)> {
        self.dsack_block.take()
    }
}
