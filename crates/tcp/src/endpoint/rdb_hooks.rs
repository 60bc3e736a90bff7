//! Where the endpoint runs Redundant Data Bundling ([`crate::thin::rdb`], mechanisms.md §5):
//! widening a new segment backwards over unacknowledged data (`send_new`), widening a
//! retransmission forwards (seed variant, `send_retransmission`), and the patch variant's
//! hidden-loss reaction on an ACK (`process_ack`). The decisions are the pure functions of
//! `thin::rdb`; this file gathers their inputs and builds the payload, so that `output` and
//! `input` carry one-line call sites.
//!
//! A bundle is the concatenation of the payloads of contiguous queued segments (each a `Bytes`
//! slice of the send buffer); it is copied into one buffer of at most one MSS. The queue keeps
//! one entry per original segment, so SACK, the scoreboard and recovery see no difference.

use super::Endpoint;
use crate::cc::CongestionControl;
use crate::config::RdbVariant;
use crate::event::SendKind;
use crate::recovery::Phase;
use crate::thin::{detect, rdb};
use crate::time::Instant;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;

/// Per-connection RDB state (patch variant's hidden-loss bookkeeping and counters).
#[derive(Clone, Debug, Default)]
pub(super) struct RdbState {
    /// Patch: segments first sent in an RDB packet, `(start, end, rdb_start)`, in order.
    sent: VecDeque<(u64, u64, u64)>,
    /// Patch: snd_nxt (data) when the sender last entered CWR (Linux `high_seq`): a hidden
    /// loss of data sent before it belongs to the same window and does not reduce again.
    cwr_high: Option<u64>,
    /// Patch: ACKs that revealed a loss hidden by redundancy.
    hidden_losses: u64,
    /// Patch: times the sender entered CWR because of a hidden loss.
    cwr_events: u64,
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

    fn rdb_qseg(&self, i: usize) -> rdb::QSeg {
        let s = self.snd.get(i).expect("queued segment");
        rdb::QSeg { start: s.start, end: s.end, fin: s.fin }
    }

    /// The payloads of queue entries `from..=to`, concatenated.
    fn rdb_concat(&self, from: usize, to: usize) -> Bytes {
        if from == to {
            return self.snd.get(from).expect("queued segment").payload.clone();
        }
        let len: usize = (from..=to).map(|j| self.snd.get(j).expect("queued").payload.len()).sum();
        let mut b = BytesMut::with_capacity(len);
        for j in from..=to {
            b.extend_from_slice(&self.snd.get(j).expect("queued").payload);
        }
        b.freeze()
    }

    /// The payload range, payload and kind of the new segment just pushed as queue entry `i`:
    /// the entry itself (`New`), or a bundle starting at earlier unacknowledged data (`Rdb`).
    pub(super) fn rdb_on_send_new(&mut self, i: usize) -> (u64, u64, Bytes, SendKind) {
        let s = self.snd.get(i).expect("just pushed");
        let plain = (s.start, s.end, s.payload.clone(), SendKind::New);
        if !self.cfg.mechanisms.rdb || i == 0 {
            return plain;
        }
        let patch = self.cfg.rdb_variant == RdbVariant::Patch;
        if patch {
            // the patch: TCP_NODELAY required, and only while dpifl-thin (PIF before this one)
            let pif = self.snd.packets_out() - 1;
            if !self.cfg.nodelay || !detect::is_thin_dpifl(pif, self.rtt.srtt(), detect::DPIFL_ITT_LOWER_BOUND) {
                return plain;
            }
        }
        let mss = self.neg.send_mss as u64;
        let limit = rdb::byte_limit(mss, self.cfg.rdb_max_bytes);
        let new = self.rdb_qseg(i);
        let earlier = (0..i).rev().map(|j| self.rdb_qseg(j));
        let Some(start) = rdb::bundle_range(earlier, new, mss, limit, rdb::packet_limit(&self.cfg)) else {
            return plain;
        };
        let from = self.snd.index_from(start);
        debug_assert_eq!(self.snd.get(from).map(|s| s.start), Some(start));
        if patch {
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
        if !self.cfg.mechanisms.rdb || self.cfg.rdb_variant != RdbVariant::Seed {
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

    /// Patch variant, after an ACK of new data (cumulative part applied, congestion control
    /// told): the hidden-loss test of the segment ending at the new snd_una, and CWR.
    /// `una_before` is snd_una (data) before the ACK, `in_flight` the pipe before it.
    pub(super) fn rdb_on_ack(&mut self, now: Instant, una_before: u64, in_flight: u32) {
        if !self.cfg.mechanisms.rdb || self.cfg.rdb_variant != RdbVariant::Patch {
            return;
        }
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
        let Some((last_start, rdb_start)) = hit else { return };
        if !rdb::hidden_loss(una_before, last_start, rdb_start) {
            return;
        }
        self.thin.rdb.hidden_losses += 1;
        // enter CWR once per window of data (the first lost segment was sent after the last
        // reduction), and not on top of a recovery episode
        let first_lost = rdb_start.max(una_before);
        if self.thin.rdb.cwr_high.is_some_and(|h| first_lost < h) || self.rec.phase != Phase::Open {
            return;
        }
        self.cc.on_enter_recovery(now, in_flight);
        self.cc.on_exit_recovery(now);
        self.thin.rdb.cwr_high = Some(self.snd.nxt);
        self.thin.rdb.cwr_events += 1;
    }
}
