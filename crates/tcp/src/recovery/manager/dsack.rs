//! D-SACK at the sender and undo (RFC 2883, RFC 3522/3708; the rules are in
//! [`crate::recovery::dsack`] and [`crate::recovery::undo`]); nothing here runs unless
//! `TcpConfig::dsack` is on and SACK was negotiated.
//!
//! Per ACK: `dsack_on_blocks` (step 3, before the scoreboard update) recognises a D-SACK,
//! counts it, discounts it from the episode's retransmissions and flags RACK's window;
//! `dsack_after_ack` (step 9, after the recovery state machine) undoes a recovery every
//! retransmission of which was D-SACKed, or that ends with timestamps showing the original
//! arrived, and advances RACK's reordering window by a round.

use super::{Ctx, LossRecovery};
use crate::recovery::dsack::{dup_segments, is_dsack};
use crate::recovery::undo::Undo;
use crate::recovery::{rto, Phase, Transition};
use crate::time::ts_clock;

impl LossRecovery {
    pub(super) fn dsack_active(c: &Ctx) -> bool {
        c.cfg.dsack && c.sack
    }

    /// Step 3: the ACK's SACK blocks (stream offsets, in their order) with cumulative ACK
    /// `ack`. Returns whether the first block was a D-SACK.
    pub(super) fn dsack_on_blocks(&mut self, c: &mut Ctx, blocks: &[(u64, u64)], ack: u64) -> bool {
        if !Self::dsack_active(c) || !is_dsack(blocks, ack) {
            return false;
        }
        let (l, r) = blocks[0];
        let len = r - l;
        if len > c.max_snd_wnd.max(1) {
            return true; // dubious: larger than any window we were offered
        }
        let segs = dup_segments(len, c.send_mss as u64);
        let s = &mut *c.stats;
        s.dsack_dups += segs;
        let retransmitted = s.retransmissions_rto
            + s.retransmissions_fast
            + s.retransmissions_early
            + s.retransmissions_tlp
            + s.retransmissions_rack
            + s.retransmissions_early_threshold;
        if s.dsack_dups > retransmitted {
            return true; // not our retransmissions (RDB bundles, network duplicates)
        }
        s.dsacks += 1;
        s.spurious_retransmissions += segs;
        let tlp_probe = self.rack_tlp.tlp_high_seq == Some(r) && len <= c.send_mss as u64;
        if self.rack_tlp.rack.reord_seen && !tlp_probe {
            self.rack_tlp.reo.dsack_seen = true;
        }
        if let Some(u) = &mut self.rec.undo {
            u.on_dsack(segs as u32);
        }
        true
    }

    /// Step 9: undo and the reordering window's round. `undo_before` is the episode's undo
    /// state before the ACK; `ecr` the ACK's timestamp echo; `prior_delivered` the delivered
    /// count before the ACK.
    pub(super) fn dsack_after_ack(
        &mut self,
        c: &mut Ctx,
        t: Transition,
        undo_before: Option<Undo>,
        ecr: Option<u32>,
        prior_delivered: u64,
    ) {
        if !Self::dsack_active(c) {
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
                    self.rec.undo_recovery(c.cc);
                    c.stats.undos += 1;
                }
                _ => self.rack_tlp.reo.on_recovery_without_undo(),
            }
        } else if self.rec.phase != Phase::Loss && self.rec.undo.is_some_and(|u| u.all_dsacked()) {
            // tcp_try_undo_dsack, in Recovery or after it ended (Open/Disorder)
            self.rec.undo_recovery(c.cc);
            c.stats.undos += 1;
            self.rack_tlp.reo.on_dsack_undo();
        }
        let delivered = self.rack_tlp.delivered;
        self.rack_tlp.reo.on_ack(prior_delivered, delivered);
    }
}
