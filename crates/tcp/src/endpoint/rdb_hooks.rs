//! Where the endpoint runs Redundant Data Bundling ([`crate::thin::rdb`], docs/spec/mechanisms.md
//! §5): widening a new segment backwards over unacknowledged data (`send_new`), widening a
//! retransmission forwards (seed and adaptive variants, `send_retransmission`), the patch variant's
//! hidden-loss reaction on an ACK (`process_ack`), and the adaptive variant's allowance (loss
//! signals from ACKs and retransmissions, [`crate::thin::rdb_adaptive`]). The decisions are the
//! pure functions of `thin::rdb` and `thin::rdb_adaptive`; this file gathers their inputs and
//! builds the payload, so that `output` and `input` carry one-line call sites.
//!
//! A bundle is the concatenation of the payloads of contiguous queued segments (each a `Bytes`
//! slice of the send buffer); it is copied into one buffer of at most one MSS. The queue keeps
//! one entry per original segment, so SACK, the scoreboard and recovery see no difference.

use super::Endpoint;
use crate::cc::{CongestionControl, CongestionEvent};
use crate::config::RdbVariant;
use crate::event::SendKind;
use crate::recovery::Phase;
use crate::thin::{detect, rdb, rdb_adaptive};
use crate::time::Instant;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;

/// Per-connection RDB state (patch variant's hidden-loss bookkeeping and counters).
#[derive(Clone, Debug, Default)]
pub(super) struct RdbState {
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

impl Endpoint {
    /// Patch variant: ACKs that revealed a loss hidden by redundancy.
    pub fn rdb_hidden_losses(&self) -> u64 {
        self.thin.rdb.hidden_losses
    }
    /// Patch variant: CWR reductions caused by hidden losses.
    pub fn rdb_cwr_events(&self) -> u64 {
        self.thin.rdb.cwr_events
    }

    /// Adaptive variant: the current allowance (permitted bundles).
    pub fn rdb_allowance(&self) -> u32 {
        self.thin.rdb.allowance
    }
    /// Adaptive variant: loss episodes that raised the allowance.
    pub fn rdb_loss_episodes(&self) -> u64 {
        self.thin.rdb.loss_episodes
    }
    /// Adaptive variant: sends that did not bundle although earlier data fitted, because the
    /// allowance was spent and because the write interval exceeded the RTO.
    pub fn rdb_skipped(&self) -> (u64, u64) {
        (
            self.thin.rdb.skipped_no_allowance,
            self.thin.rdb.skipped_too_slow,
        )
    }

    fn rdb_adaptive(&self) -> bool {
        self.cfg.mechanisms.rdb && self.cfg.rdb_variant == RdbVariant::Adaptive
    }

    /// Adaptive: a loss signal about data starting at `lost_seq` (counted once per episode).
    fn rdb_loss_signal(&mut self, lost_seq: u64) {
        let r = &mut self.thin.rdb;
        if rdb_adaptive::new_episode(lost_seq, r.loss_episode_end) {
            r.allowance = rdb_adaptive::after_loss(r.allowance);
            r.loss_episode_end = Some(self.snd.nxt);
            r.loss_episodes += 1;
        }
    }

    fn rdb_qseg(&self, i: usize) -> rdb::QSeg {
        let s = self.snd.get(i).expect("queued segment");
        rdb::QSeg {
            start: s.start,
            end: s.end,
            fin: s.fin,
        }
    }

    /// The payloads of queue entries `from..=to`, concatenated.
    fn rdb_concat(&self, from: usize, to: usize) -> Bytes {
        if from == to {
            return self.snd.get(from).expect("queued segment").payload.clone();
        }
        let len: usize = (from..=to)
            .map(|j| self.snd.get(j).expect("queued").payload.len())
            .sum();
        let mut b = BytesMut::with_capacity(len);
        for j in from..=to {
            b.extend_from_slice(&self.snd.get(j).expect("queued").payload);
        }
        b.freeze()
    }

    /// The payload range, payload and kind of the new segment just pushed as queue entry `i`:
    /// the entry itself (`New`), or a bundle starting at earlier unacknowledged data (`Rdb`).
    pub(super) fn rdb_on_send_new(
        &mut self,
        now: Instant,
        i: usize,
    ) -> (u64, u64, Bytes, SendKind) {
        let s = self.snd.get(i).expect("just pushed");
        let plain = (s.start, s.end, s.payload.clone(), SendKind::New);
        if !self.cfg.mechanisms.rdb {
            return plain;
        }
        let adaptive = self.cfg.rdb_variant == RdbVariant::Adaptive;
        let gap = if adaptive {
            self.thin.rdb.last_new_sent.replace(now).map(|t| now - t)
        } else {
            None
        };
        if i == 0 {
            return plain;
        }
        let patch = self.cfg.rdb_variant == RdbVariant::Patch;
        if patch {
            // the patch: TCP_NODELAY required, and only while dpifl-thin (PIF before this one)
            let pif = self.snd.packets_out() - 1;
            if !self.cfg.nodelay
                || !detect::is_thin_dpifl(pif, self.rtt.srtt(), detect::DPIFL_ITT_LOWER_BOUND)
            {
                return plain;
            }
        }
        let mss = self.neg.send_mss as u64;
        let limit = rdb::byte_limit(mss, self.cfg.rdb_max_bytes);
        let new = self.rdb_qseg(i);
        let max_packets = rdb::packet_limit(&self.cfg);
        if adaptive {
            let input = rdb_adaptive::SendInput {
                allowance: self.thin.rdb.allowance,
                write_gap: gap,
                rto: self.rto(),
            };
            let decision = rdb_adaptive::on_send(&input);
            if decision != rdb_adaptive::Decision::Bundle {
                // count the sends the seed variant would have bundled
                let earlier = (0..i).rev().map(|j| self.rdb_qseg(j));
                if rdb::bundle_range(earlier, new, mss, limit, None).is_some() {
                    let r = &mut self.thin.rdb;
                    match decision {
                        rdb_adaptive::Decision::TooSlow => r.skipped_too_slow += 1,
                        _ => r.skipped_no_allowance += 1,
                    }
                }
                return plain;
            }
        }
        let earlier = (0..i).rev().map(|j| self.rdb_qseg(j));
        let Some(start) = rdb::bundle_range(earlier, new, mss, limit, max_packets) else {
            return plain;
        };
        let from = self.snd.index_from(start);
        debug_assert_eq!(self.snd.get(from).map(|s| s.start), Some(start));
        if patch || adaptive {
            self.thin.rdb.sent.push_back((new.start, new.end, start));
        }
        (start, new.end, self.rdb_concat(from, i), SendKind::Rdb)
    }

    /// Seed variant: the retransmission of queue entry `i` (already recorded by
    /// `SendQueue::on_retransmit`) extended with the following sent-but-unacked segments up to
    /// the byte limit; the segments carried along are recorded as retransmitted too. Returns
    /// the payload end and the payload.
    pub(super) fn rdb_on_retransmit(&mut self, now: Instant, i: usize) -> (u64, Bytes) {
        let s = self.snd.get(i).expect("retransmitted segment");
        let plain = (s.end, s.payload.clone());
        if self.rdb_adaptive() {
            // a retransmission is a loss signal; then extend it as the seed variant does
            self.rdb_loss_signal(s.start);
        } else if !self.cfg.mechanisms.rdb || self.cfg.rdb_variant != RdbVariant::Seed {
            return plain;
        }
        let limit = rdb::byte_limit(self.neg.send_mss as u64, self.cfg.rdb_max_bytes);
        let following = (i + 1..self.snd.len()).map(|j| self.rdb_qseg(j));
        let (end, n) = rdb::retransmit_extent(following, self.rdb_qseg(i), limit);
        if n == 0 {
            return plain;
        }
        for j in i + 1..=i + n {
            self.snd.on_retransmit(j, now);
        }
        (end, self.rdb_concat(i, i + n))
    }

    /// Adaptive variant: an ACK that acknowledged nothing new but is a duplicate ACK or
    /// carries SACK blocks (a hole at snd_una) is a loss signal.
    pub(super) fn rdb_on_hole(&mut self) {
        if self.rdb_adaptive() {
            self.rdb_loss_signal(self.snd.una);
        }
    }

    /// Patch variant, after an ACK of new data (cumulative part applied, congestion control
    /// told): the hidden-loss test of the segment ending at the new snd_una, and CWR.
    /// `una_before` is snd_una (data) before the ACK, `in_flight` the pipe before it.
    pub(super) fn rdb_on_ack(&mut self, now: Instant, una_before: u64, in_flight: u32, hole: bool) {
        if !self.cfg.mechanisms.rdb || self.cfg.rdb_variant == RdbVariant::Seed {
            return;
        }
        let adaptive = self.cfg.rdb_variant == RdbVariant::Adaptive;
        let una = self.snd.una;
        let mut hit = None;
        while let Some(&(start, end, rdb_start)) = self.thin.rdb.sent.front() {
            if end > una {
                break;
            }
            self.thin.rdb.sent.pop_front();
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
                Some((_, rdb_start)) => self.rdb_loss_signal(rdb_start.max(una_before)),
                None if hole => self.rdb_loss_signal(self.snd.una),
                None => {
                    self.thin.rdb.allowance = rdb_adaptive::after_clean_ack(self.thin.rdb.allowance)
                }
            }
            return;
        }
        let Some((_, rdb_start)) = hidden else { return };
        self.thin.rdb.hidden_losses += 1;
        // enter CWR once per window of data (the first lost segment was sent after the last
        // reduction), and not on top of a recovery episode
        let first_lost = rdb_start.max(una_before);
        if self.thin.rdb.cwr_high.is_some_and(|h| first_lost < h) || self.rec.phase != Phase::Open {
            return;
        }
        let base = self.rec.reduction_base(&self.cc, in_flight);
        self.cc.on_congestion_event(now, CongestionEvent::Cwr, base);
        let (cwnd, ssthresh) = (self.cc.cwnd(), self.cc.ssthresh());
        self.events.push_back(crate::event::Event::Recovery {
            at: now,
            what: crate::event::RecoveryEvent::Reduction { cwnd, ssthresh },
        });
        self.thin.rdb.cwr_high = Some(self.snd.nxt);
        self.thin.rdb.cwr_events += 1;
    }
}
