//! Redundant Data Bundling (Evensen et al.; [`crate::thin::rdb`], docs/spec/mechanisms.md,
//! RDB): widening a new segment backwards over unacknowledged data (called by the endpoint's
//! `send_new`), widening a retransmission forwards (seed and adaptive variants,
//! `send_retransmission`), and, as a loss detector on an ACK (step 12), the patch variant's
//! hidden loss (a loss the redundancy already repaired: a CWR verdict, no retransmission) and
//! the adaptive variant's allowance (loss signals from ACKs and retransmissions,
//! [`crate::thin::rdb_adaptive`]). The decisions are the pure functions of `thin::rdb` and
//! `thin::rdb_adaptive`; this file gathers their inputs and builds the payload.
//!
//! A bundle is the concatenation of the payloads of contiguous queued segments (each a `Bytes`
//! slice of the send buffer); it is copied into one buffer of at most one MSS. The queue keeps
//! one entry per original segment, so SACK, the scoreboard and recovery see no difference.

use super::{Ctx, LossRecovery, Verdict};
use crate::config::RdbVariant;
use crate::event::SendKind;
use crate::recovery::Phase;
use crate::thin::{detect, rdb, rdb_adaptive};
use crate::time::Instant;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;

/// Per-connection RDB state (patch variant's hidden-loss bookkeeping and counters).
#[derive(Clone, Debug, Default)]
pub struct RdbState {
    /// Patch and adaptive: segments first sent in an RDB packet, `(start, end, rdb_start)`.
    sent: VecDeque<(u64, u64, u64)>,
    /// Patch: snd_nxt (data) when the sender last entered CWR (Linux `high_seq`): a hidden
    /// loss of data sent before it belongs to the same window and does not reduce again.
    cwr_high: Option<u64>,
    /// Patch: ACKs that revealed a loss hidden by redundancy.
    hidden_losses: u64,
    /// Patch: times the sender entered CWR because of a hidden loss.
    cwr_events: u64,
    /// Adaptive: permitted bundles (Evensen (2008) §5.3).
    allowance: u32,
    /// Adaptive: snd_nxt (data) when the last loss was counted (one count per episode).
    loss_episode_end: Option<u64>,
    /// Adaptive: when the previous new data segment was sent (the write interval).
    last_new_sent: Option<Instant>,
    /// Adaptive: loss episodes counted.
    loss_episodes: u64,
    /// Adaptive: small segments sent alone although earlier unacked data would have fitted,
    /// because the allowance was spent / because the write interval exceeded the RTO.
    skipped_no_allowance: u64,
    skipped_too_slow: u64,
}

impl LossRecovery {
    /// Patch variant: ACKs that revealed a loss hidden by redundancy.
    pub fn rdb_hidden_losses(&self) -> u64 {
        self.rdb.hidden_losses
    }
    /// Patch variant: CWR reductions caused by hidden losses.
    pub fn rdb_cwr_events(&self) -> u64 {
        self.rdb.cwr_events
    }

    /// Adaptive variant: the current allowance (permitted bundles).
    pub fn rdb_allowance(&self) -> u32 {
        self.rdb.allowance
    }
    /// Adaptive variant: loss episodes that raised the allowance.
    pub fn rdb_loss_episodes(&self) -> u64 {
        self.rdb.loss_episodes
    }
    /// Adaptive variant: sends that did not bundle although earlier data fitted, because the
    /// allowance was spent and because the write interval exceeded the RTO.
    pub fn rdb_skipped(&self) -> (u64, u64) {
        (self.rdb.skipped_no_allowance, self.rdb.skipped_too_slow)
    }

    fn rdb_adaptive(c: &Ctx) -> bool {
        c.cfg.mechanisms.rdb && c.cfg.rdb_variant == RdbVariant::Adaptive
    }

    /// Adaptive: a loss signal about data starting at `lost_seq` (counted once per episode).
    fn rdb_loss_signal(&mut self, c: &Ctx, lost_seq: u64) {
        let r = &mut self.rdb;
        if rdb_adaptive::new_episode(lost_seq, r.loss_episode_end) {
            r.allowance = rdb_adaptive::after_loss(r.allowance);
            r.loss_episode_end = Some(c.snd.nxt);
            r.loss_episodes += 1;
        }
    }

    fn rdb_qseg(c: &Ctx, i: usize) -> rdb::QSeg {
        let s = c.snd.get(i).expect("queued segment");
        rdb::QSeg {
            start: s.start,
            end: s.end,
            fin: s.fin,
        }
    }

    /// The payloads of queue entries `from..=to`, concatenated.
    fn rdb_concat(c: &Ctx, from: usize, to: usize) -> Bytes {
        if from == to {
            return c.snd.get(from).expect("queued segment").payload.clone();
        }
        let len: usize = (from..=to)
            .map(|j| c.snd.get(j).expect("queued").payload.len())
            .sum();
        let mut b = BytesMut::with_capacity(len);
        for j in from..=to {
            b.extend_from_slice(&c.snd.get(j).expect("queued").payload);
        }
        b.freeze()
    }

    /// The payload range, payload and kind of the new segment just pushed as queue entry `i`:
    /// the entry itself (`New`), or a bundle starting at earlier unacknowledged data (`Rdb`).
    pub fn rdb_on_send_new(&mut self, c: &mut Ctx, i: usize) -> (u64, u64, Bytes, SendKind) {
        let now = c.now;
        let s = c.snd.get(i).expect("just pushed");
        let plain = (s.start, s.end, s.payload.clone(), SendKind::New);
        if !c.cfg.mechanisms.rdb {
            return plain;
        }
        let adaptive = c.cfg.rdb_variant == RdbVariant::Adaptive;
        let gap = if adaptive {
            self.rdb.last_new_sent.replace(now).map(|t| now - t)
        } else {
            None
        };
        if i == 0 {
            return plain;
        }
        let patch = c.cfg.rdb_variant == RdbVariant::Patch;
        if patch {
            // the patch: TCP_NODELAY required, and only while dpifl-thin (PIF before this one)
            let pif = c.snd.packets_out() - 1;
            if !c.cfg.nodelay
                || !detect::is_thin_dpifl(pif, c.rtt.srtt(), detect::DPIFL_ITT_LOWER_BOUND)
            {
                return plain;
            }
        }
        let mss = c.send_mss as u64;
        let limit = rdb::byte_limit(mss, c.cfg.rdb_max_bytes);
        let new = Self::rdb_qseg(c, i);
        let max_packets = rdb::packet_limit(c.cfg);
        if adaptive {
            let input = rdb_adaptive::SendInput {
                allowance: self.rdb.allowance,
                write_gap: gap,
                rto: self.current_rto(c),
            };
            let decision = rdb_adaptive::on_send(&input);
            if decision != rdb_adaptive::Decision::Bundle {
                // count the sends the seed variant would have bundled
                let earlier = (0..i).rev().map(|j| Self::rdb_qseg(c, j));
                if rdb::bundle_range(earlier, new, mss, limit, None).is_some() {
                    let r = &mut self.rdb;
                    match decision {
                        rdb_adaptive::Decision::TooSlow => r.skipped_too_slow += 1,
                        _ => r.skipped_no_allowance += 1,
                    }
                }
                return plain;
            }
        }
        let earlier = (0..i).rev().map(|j| Self::rdb_qseg(c, j));
        let Some(start) = rdb::bundle_range(earlier, new, mss, limit, max_packets) else {
            return plain;
        };
        let from = c.snd.index_from(start);
        debug_assert_eq!(c.snd.get(from).map(|s| s.start), Some(start));
        if patch || adaptive {
            self.rdb.sent.push_back((new.start, new.end, start));
        }
        (start, new.end, Self::rdb_concat(c, from, i), SendKind::Rdb)
    }

    /// Seed variant: the retransmission of queue entry `i` (already recorded by
    /// `SendQueue::on_retransmit`) extended with the following sent-but-unacked segments up to
    /// the byte limit; the segments carried along are recorded as retransmitted too. Returns
    /// the payload end and the payload.
    pub fn rdb_on_retransmit(&mut self, c: &mut Ctx, i: usize) -> (u64, Bytes) {
        let now = c.now;
        let s = c.snd.get(i).expect("retransmitted segment");
        let plain = (s.end, s.payload.clone());
        if Self::rdb_adaptive(c) {
            // a retransmission is a loss signal; then extend it as the seed variant does
            self.rdb_loss_signal(c, s.start);
        } else if !c.cfg.mechanisms.rdb || c.cfg.rdb_variant != RdbVariant::Seed {
            return plain;
        }
        let limit = rdb::byte_limit(c.send_mss as u64, c.cfg.rdb_max_bytes);
        let following = (i + 1..c.snd.len()).map(|j| Self::rdb_qseg(c, j));
        let (end, n) = rdb::retransmit_extent(following, Self::rdb_qseg(c, i), limit);
        if n == 0 {
            return plain;
        }
        for j in i + 1..=i + n {
            c.snd.on_retransmit(j, now);
        }
        (end, Self::rdb_concat(c, i, i + n))
    }

    /// Adaptive variant: an ACK that acknowledged nothing new but is a duplicate ACK or
    /// carries SACK blocks (a hole at snd_una) is a loss signal.
    pub(super) fn rdb_on_hole(&mut self, c: &mut Ctx) {
        if Self::rdb_adaptive(c) {
            self.rdb_loss_signal(c, c.snd.una);
        }
    }

    /// Patch variant, after an ACK of new data (cumulative part applied, congestion control
    /// told): the hidden-loss test of the segment ending at the new snd_una, and CWR.
    /// `una_before` is snd_una (data) before the ACK, `in_flight` the pipe before it.
    pub(super) fn rdb_on_ack(&mut self, c: &mut Ctx, una_before: u64, in_flight: u32, hole: bool) {
        if !c.cfg.mechanisms.rdb || c.cfg.rdb_variant == RdbVariant::Seed {
            return;
        }
        let adaptive = c.cfg.rdb_variant == RdbVariant::Adaptive;
        let una = c.snd.una;
        let mut hit = None;
        while let Some(&(start, end, rdb_start)) = self.rdb.sent.front() {
            if end > una {
                break;
            }
            self.rdb.sent.pop_front();
            if end == una && una > una_before {
                hit = Some((start, rdb_start));
            }
        }
        let hidden = hit
            .filter(|&(last_start, rdb_start)| rdb::hidden_loss(una_before, last_start, rdb_start));
        if adaptive {
            // a bundle repaired a loss (or the ACK of the original was lost): a loss signal;
            // otherwise the ACK was clean and one unit of allowance drains
            match hidden {
                Some((_, rdb_start)) => self.rdb_loss_signal(c, rdb_start.max(una_before)),
                None if hole => self.rdb_loss_signal(c, c.snd.una),
                None => self.rdb.allowance = rdb_adaptive::after_clean_ack(self.rdb.allowance),
            }
            return;
        }
        let Some((_, rdb_start)) = hidden else { return };
        self.rdb.hidden_losses += 1;
        // enter CWR once per window of data (the first lost segment was sent after the last
        // reduction), and not on top of a recovery episode
        let first_lost = rdb_start.max(una_before);
        if self.rdb.cwr_high.is_some_and(|h| first_lost < h) || self.rec.phase != Phase::Open {
            return;
        }
        let base = self.rec.reduction_base(c.cc, in_flight);
        self.apply(c, Verdict::EnterCwr { base });
        self.rdb.cwr_high = Some(c.snd.nxt);
        self.rdb.cwr_events += 1;
    }
}
