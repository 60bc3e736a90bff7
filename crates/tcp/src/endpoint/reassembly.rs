//! Receive side: in-order delivery, out-of-order reassembly and SACK block generation
//! (RFC 9293 §3.10.7.4 "seventh, process the segment text"; RFC 2018 §4 SACK blocks).
//!
//! Offsets are the peer's stream offsets (0 = first byte after its SYN). A segment overlapping
//! `rcv_nxt` delivers only its new part (docs/spec/mechanisms.md, receiver behaviour — what makes
//! RDB transparent).
//! In-order data becomes readable at once; out-of-order pieces are kept non-overlapping in a
//! `BTreeMap` (deterministic order) until the hole before them is filled. Beside them, the
//! contiguous runs they form (touching pieces merged), so that the SACK block around an arriving
//! segment is found in O(log n), not by walking a run of thousands of pieces.
//!
//! SACK blocks (RFC 2018 §4): the first block contains the most recently received segment; the
//! others repeat the most recently reported blocks; blocks at or below `rcv_nxt` are dropped.

use crate::runs::Runs;
use arrayvec::ArrayVec;
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};

/// What inserting one segment's payload did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InsertOutcome {
    /// Newly readable in-order range, if any.
    pub delivered: Option<(u64, u64)>,
    /// The segment (or part of it) was queued out of order.
    pub out_of_order: bool,
    /// The segment advanced `rcv_nxt` while out-of-order data was queued (hole filled).
    pub filled_hole: bool,
    /// Nothing new at all (entirely old or already queued).
    pub duplicate: bool,
}

#[derive(Debug, Default)]
// In declaration order (repr(C)): the in-order path's fields first, the SACK blocks' array last
// (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct Reassembly {
    readable: VecDeque<Bytes>,
    pub rcv_nxt: u64,
    readable_len: usize,
    ooo_bytes: usize,
    ooo: BTreeMap<u64, Bytes>,
    /// The contiguous ranges `ooo` covers.
    runs: Runs,
    /// Most recently reported SACK blocks, most recent first.
    blocks: ArrayVec<(u64, u64), 4>,
}

impl Reassembly {
    /// Prefetches the readable queue's front ([`crate::prefetch`]).
    #[inline]
    pub fn prefetch_buffers(&self) {
        crate::prefetch::prefetch_front(&self.readable);
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes held (readable but unread, plus out-of-order).
    pub fn buffered(&self) -> usize {
        self.readable_len + self.ooo_bytes
    }
    pub fn has_ooo(&self) -> bool {
        !self.ooo.is_empty()
    }
    pub fn readable_len(&self) -> usize {
        self.readable_len
    }

    /// Whether [`Self::read`] has a chunk to return.
    #[inline]
    pub fn has_readable(&self) -> bool {
        !self.readable.is_empty()
    }

    pub fn read(&mut self) -> Option<Bytes> {
        let b = crate::prefetch::pop_front_rewinding(&mut self.readable)?;
        self.readable_len -= b.len();
        Some(b)
    }

    /// SACK blocks to report (most recent first), at most `max`.
    pub fn sack_blocks(&self, max: usize) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks.iter().copied().take(max)
    }

    /// Insert a payload starting at `start`; bytes at or beyond `limit` are discarded (outside
    /// the receive window).
    pub fn insert(&mut self, start: u64, mut payload: Bytes, limit: u64) -> InsertOutcome {
        let mut out = InsertOutcome::default();
        let end = (start + payload.len() as u64).min(limit);
        if end <= self.rcv_nxt || end <= start {
            out.duplicate = true;
            return out;
        }
        payload.truncate((end - start) as usize);
        if start <= self.rcv_nxt {
            let had_ooo = self.has_ooo();
            let from = self.rcv_nxt;
            let p = payload.slice((self.rcv_nxt - start) as usize..);
            self.push_readable(p);
            self.rcv_nxt = end;
            self.drain_ooo();
            out.filled_hole = had_ooo;
            out.delivered = Some((from, self.rcv_nxt));
            self.blocks.retain(|b| b.1 > self.rcv_nxt);
            for b in self.blocks.iter_mut() {
                b.0 = b.0.max(self.rcv_nxt);
            }
            return out;
        }
        // out of order: insert the parts not already queued
        let mut pieces: ArrayVec<(u64, u64), 8> = ArrayVec::new();
        let mut cur = start;
        let first = self
            .ooo
            .range(..=start)
            .next_back()
            .map(|(&k, _)| k)
            .unwrap_or(start);
        for (&ps, pb) in self.ooo.range(first..end) {
            let pe = ps + pb.len() as u64;
            if pe <= cur {
                continue;
            }
            if ps > cur {
                if pieces.is_full() {
                    break;
                }
                pieces.push((cur, ps.min(end)));
            }
            cur = cur.max(pe);
            if cur >= end {
                break;
            }
        }
        if cur < end && !pieces.is_full() {
            pieces.push((cur, end));
        }
        if pieces.is_empty() {
            out.duplicate = true;
        }
        for &(a, b) in &pieces {
            let p = payload.slice((a - start) as usize..(b - start) as usize);
            self.ooo_bytes += p.len();
            self.ooo.insert(a, p);
            self.runs.add(a, b);
        }
        out.out_of_order = true;
        let blk = self.block_around(start);
        self.note_block(blk);
        out
    }

    fn push_readable(&mut self, p: Bytes) {
        if !p.is_empty() {
            self.readable_len += p.len();
            self.readable.push_back(p);
        }
    }

    fn drain_ooo(&mut self) {
        // `is_empty` first: an emptied map keeps its root node, a cache miss to read per
        // segment with thousands of flows (`crate::runs`).
        while !self.ooo.is_empty() {
            let Some(entry) = self.ooo.first_entry() else {
                break;
            };
            let s = *entry.key();
            if s > self.rcv_nxt {
                break;
            }
            let p = entry.remove();
            self.ooo_bytes -= p.len();
            let e = s + p.len() as u64;
            if e > self.rcv_nxt {
                let q = p.slice((self.rcv_nxt - s) as usize..);
                self.push_readable(q);
                self.rcv_nxt = e;
            }
        }
        // the runs that began below rcv_nxt were delivered whole
        self.runs.trim_below(self.rcv_nxt);
    }

    /// The contiguous queued range containing offset `x` (`(x, x)` if none does).
    fn block_around(&self, x: u64) -> (u64, u64) {
        self.runs.containing(x).unwrap_or((x, x))
    }

    fn note_block(&mut self, blk: (u64, u64)) {
        let mut nb: ArrayVec<(u64, u64), 4> = ArrayVec::new();
        nb.push(blk);
        for &b in &self.blocks {
            let overlaps = b.0 <= blk.1 && blk.0 <= b.1;
            if !overlaps && b.1 > self.rcv_nxt && !nb.is_full() {
                nb.push(b);
            }
        }
        self.blocks = nb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(n: usize) -> Bytes {
        Bytes::from(vec![7u8; n])
    }

    #[test]
    fn in_order_then_hole_fill() {
        let mut r = Reassembly::new();
        let o = r.insert(0, b(10), 1000);
        assert_eq!(o.delivered, Some((0, 10)));
        let o = r.insert(20, b(10), 1000);
        assert!(o.out_of_order);
        assert_eq!(r.sack_blocks(4).collect::<Vec<_>>(), vec![(20, 30)]);
        let o = r.insert(40, b(10), 1000);
        assert!(o.out_of_order);
        assert_eq!(
            r.sack_blocks(4).collect::<Vec<_>>(),
            vec![(40, 50), (20, 30)]
        );
        let o = r.insert(30, b(10), 1000);
        assert_eq!(r.sack_blocks(4).collect::<Vec<_>>(), vec![(20, 50)]);
        assert!(!o.duplicate);
        let o = r.insert(5, b(15), 1000);
        assert!(o.filled_hole);
        assert_eq!(o.delivered, Some((10, 50)));
        assert_eq!(r.sack_blocks(4).count(), 0);
        assert_eq!(r.readable_len(), 50);
        assert!(r.insert(0, b(50), 1000).duplicate);
    }

    /// The runs give the SACK blocks the pieces give, whatever the arrival order, overlaps and
    /// window limit.
    #[test]
    fn runs_give_the_blocks_of_a_walk_over_the_pieces() {
        use proptest::prelude::*;
        let seg = (0u64..60, 1usize..30, 40u64..2000);
        proptest!(|(segs in proptest::collection::vec(seg, 1..80))| {
            let mut r = Reassembly::new();
            for (at, len, limit) in segs {
                r.insert(at * 10, b(len), limit);
                // the walk: pieces merged while they touch
                let mut merged: Vec<(u64, u64)> = Vec::new();
                for (&s, p) in &r.ooo {
                    let e = s + p.len() as u64;
                    match merged.last_mut() {
                        Some(m) if s <= m.1 => m.1 = m.1.max(e),
                        _ => merged.push((s, e)),
                    }
                }
                let runs: Vec<(u64, u64)> = r.runs.iter().collect();
                prop_assert_eq!(runs, merged);
                for blk in r.sack_blocks(4) {
                    prop_assert!(r.runs.iter().any(|(s, e)| s <= blk.0 && blk.1 <= e));
                }
            }
        });
    }

    #[test]
    fn window_limit_trims() {
        let mut r = Reassembly::new();
        let o = r.insert(0, b(100), 60);
        assert_eq!(o.delivered, Some((0, 60)));
    }
}
