//! SACK scoreboard (RFC 6675 §3–§4, RFC 2018): marking SACKed segments, the IsLost rule and
//! NextSeg rule (1) (retransmit the lowest lost segment first). Pipe is computed Linux-style
//! from the queue's counters: `packets_out - (sacked_out + lost_out) + retrans_out`.
//!
//! A segment is marked SACKed only if a block covers it completely (segments are what we sent,
//! so a standard receiver's blocks fall on segment boundaries). A data segment carrying the FIN
//! counts as covered when its data is: FreeBSD's receiver reports an out-of-order segment's data
//! without the FIN's sequence number (`tcp_update_sack_list(th_seq, th_seq + tlen)`), Linux's
//! with it; the receiver holds the FIN either way, since it came in the same segment. IsLost: a segment is lost when
//! at least `dupthresh` SACKed segments lie above it (RFC 6675 §4, counted in segments; the
//! byte form `(DupThresh − 1)·SMSS` is not used). NextSeg rules (1) and (2) are implemented
//! (lost segments first, then new data, both while pipe < cwnd); rules (3) and (4) (rescue
//! retransmission) are replaced by the NewReno partial-ACK rule (`newreno.rs`).

use crate::send_queue::SendQueue;
use arrayvec::ArrayVec;

/// Mark every queued segment fully covered by one of `blocks` (stream offsets, `[l, r)`).
/// Returns how many segments became SACKed.
///
/// Work is proportional to what the blocks add, not to their size: the parts of a block that
/// the previous ACK's blocks already covered are skipped (every segment fully inside one of
/// those was marked then, and SACK marks stay until an RTO, which forgets the cache), as
/// Linux's `tcp_sacktag_write_queue` skips with its `recv_sack_cache`. Only the uncovered parts
/// are walked, plus, by binary search, the one segment at each cached block's edge (it may lie
/// across the edge, so no earlier block covered it whole).
pub fn apply_blocks(q: &mut SendQueue, blocks: &[(u64, u64)]) -> u32 {
    let cache = q.take_sack_cache();
    let mut newly = 0;
    for &(l, r) in blocks {
        for (from, to) in block_parts(&cache, l, r) {
            for i in part_indices(q, l, from, to) {
                let s = q.get(i).expect("index in range");
                if s.sack_end() > r {
                    break;
                }
                if s.start >= l && !s.sacked && s.start < s.seq_end() {
                    q.set_sacked(i);
                    newly += 1;
                }
            }
        }
    }
    q.set_sack_cache(blocks);
    newly
}

/// The parts of block `[l, r)` where a segment not yet SACKed may lie, given the blocks the
/// previous ACK applied (`cache`): what they did not cover, plus a one-byte probe at each of
/// their edges inside the block (a segment across an edge was covered by neither side).
pub fn block_parts(cache: &[(u64, u64)], l: u64, r: u64) -> ArrayVec<(u64, u64), 16> {
    let mut parts = ArrayVec::new();
    let mut from = l;
    for &(cl, cr) in cache.iter().filter(|&&(cl, cr)| cl < r && cr > l) {
        if cl > from {
            parts.push((from, cl));
        }
        for edge in [cl, cr] {
            if l < edge && edge < r {
                parts.push((edge, edge + 1));
            }
        }
        from = from.max(cr);
    }
    if from < r {
        parts.push((from, r));
    }
    parts
}

/// Indices of the segments that start in `[from, to)`, and of the one across `from` if it
/// starts at or after `l`.
pub fn part_indices(q: &SendQueue, l: u64, from: u64, to: u64) -> std::ops::Range<usize> {
    let mut i = q.index_from(from);
    if i > 0
        && q.get(i - 1)
            .is_some_and(|s| s.start >= l && s.seq_end() > from)
    {
        i -= 1;
    }
    i..q.index_from(to).max(i)
}

/// RFC 6675 IsLost for every segment: mark lost each un-SACKed segment with at least
/// `dupthresh` SACKed segments above it. Returns how many were newly marked. For the
/// thresholds recovery uses (1–3) the work is proportional to the segments newly below the
/// threshold (`crate::islost_index`), else a walk of the queue.
pub fn mark_lost(q: &mut SendQueue, dupthresh: u32) -> u32 {
    if q.sacked_out() < dupthresh {
        return 0; // no segment has that many SACKed above it (RACK's deferred threshold)
    }
    match q.kth_highest_sacked_end(dupthresh) {
        Some(limit) => q.mark_lost_below(limit),
        None => mark_lost_by_walk(q, dupthresh),
    }
}

/// [`mark_lost`] by walking the whole queue from the top (thresholds above 3, or 0).
pub fn mark_lost_by_walk(q: &mut SendQueue, dupthresh: u32) -> u32 {
    let mut sacked_above = 0u32;
    let mut newly = 0;
    for i in (0..q.len()).rev() {
        let s = q.get(i).expect("index in range");
        if s.sacked {
            sacked_above += 1;
        } else if sacked_above >= dupthresh && !s.lost {
            q.set_lost(i);
            newly += 1;
        }
    }
    newly
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Instant;

    fn queue(n: usize) -> SendQueue {
        let mut q = SendQueue::new(100_000);
        q.write(&vec![0u8; n * 100]);
        for _ in 0..n {
            q.push_new(Instant::ZERO, 100, false);
        }
        q
    }

    #[test]
    fn blocks_and_islost() {
        let mut q = queue(6);
        // segment 1 lost, 2..5 SACKed in one block; partial block does not count
        assert_eq!(apply_blocks(&mut q, &[(200, 550)]), 3);
        assert_eq!(q.sacked_out(), 3);
        assert_eq!(mark_lost(&mut q, 3), 2); // segments 0 and 1 have 3 SACKed above
        assert_eq!(q.lost_out(), 2);
        assert_eq!(q.first_to_retransmit(), Some(0));
    }

    /// The indexed IsLost marks exactly what the walk marks, whatever the SACK pattern, the
    /// thresholds and the cumulative ACKs in between.
    #[test]
    fn indexed_islost_equals_the_walk() {
        use proptest::prelude::*;
        let steps = proptest::collection::vec((0u64..40, 1u64..6, 0u32..5, any::<bool>()), 1..40);
        proptest!(|(steps in steps)| {
            let (mut a, mut b) = (queue(40), queue(40));
            for (l, len, thresh, ack) in steps {
                let block = [(l * 100, (l + len) * 100)];
                apply_blocks(&mut a, &block);
                apply_blocks(&mut b, &block);
                prop_assert_eq!(mark_lost(&mut a, thresh), mark_lost_by_walk(&mut b, thresh));
                if ack && !a.is_empty() {
                    let to = a.una_seq() + 100;
                    a.ack(to);
                    b.ack(to);
                }
                a.check().map_err(TestCaseError::fail)?;
                let flags = |q: &SendQueue| q.iter().map(|s| (s.start, s.sacked, s.lost)).collect::<Vec<_>>();
                prop_assert_eq!(flags(&a), flags(&b));
            }
        });
    }

    /// With the cache of the previous ACK's blocks, exactly the segments a full walk of every
    /// block marks are marked, whatever the blocks, cumulative ACKs, RTOs and collapses between.
    #[test]
    fn cached_blocks_mark_what_the_full_walk_marks() {
        use proptest::prelude::*;
        let block = (0u64..8, 0u64..4, 0u64..3, 0u64..3);
        let step = (proptest::collection::vec(block, 0..4), 0u8..10);
        proptest!(ProptestConfig::with_cases(2000), |(steps in proptest::collection::vec(step, 1..40))| {
            let (mut a, mut b) = (queue(12), queue(12));
            for (blocks, action) in steps {
                // blocks on and off segment boundaries
                let blocks: Vec<(u64, u64)> = blocks
                    .iter()
                    .map(|&(l, len, dl, dr)| (l * 100 + dl * 40, (l + len) * 100 + dr * 40))
                    .filter(|&(l, r)| l < r && a.una_seq() <= l && r <= a.nxt_seq())
                    .collect();
                apply_blocks(&mut a, &blocks);
                walk_blocks(&mut b, &blocks);
                let flags = |q: &SendQueue| {
                    q.iter().map(|s| (s.start, s.end, s.sacked, s.lost)).collect::<Vec<_>>()
                };
                prop_assert_eq!(flags(&a), flags(&b));
                match action {
                    0 | 1 if !a.is_empty() => {
                        let to = a.una_seq() + 60;
                        a.ack(to);
                        b.ack(to);
                    }
                    2 => {
                        a.mark_all_lost();
                        b.mark_all_lost();
                    }
                    // as before a retransmission: of an un-SACKed segment
                    3 if a.len() > 2 && a.get(1).is_some_and(|s| !s.sacked) => {
                        a.collapse(1, 300, u64::MAX);
                        b.collapse(1, 300, u64::MAX);
                    }
                    _ => {}
                }
                a.check().map_err(TestCaseError::fail)?;
                prop_assert_eq!(flags(&a), flags(&b));
            }
        });
    }

    /// The definition: every segment fully inside a block, by walking each block whole.
    fn walk_blocks(q: &mut SendQueue, blocks: &[(u64, u64)]) {
        for &(l, r) in blocks {
            let mut i = q.index_from(l);
            while let Some(s) = q.get(i) {
                if s.sack_end() > r {
                    break;
                }
                if s.start < s.seq_end() {
                    q.set_sacked(i);
                }
                i += 1;
            }
        }
    }

    #[test]
    fn a_data_and_fin_segment_is_sacked_by_its_data() {
        let mut q = SendQueue::new(100_000);
        q.write(&[0u8; 300]);
        q.push_new(Instant::ZERO, 100, false);
        q.push_new(Instant::ZERO, 100, false);
        q.push_new(Instant::ZERO, 100, true); // [200, 300) + FIN at 300
                                              // A FreeBSD receiver's block stops at the data end; a Linux one includes the FIN.
        assert_eq!(apply_blocks(&mut q, &[(100, 300)]), 2);
        let mut q2 = queue(2);
        q2.write(&[0u8; 100]);
        q2.push_new(Instant::ZERO, 100, true);
        assert_eq!(apply_blocks(&mut q2, &[(100, 301)]), 2);
        // A block short of the data does not cover it.
        let mut q3 = queue(2);
        q3.write(&[0u8; 100]);
        q3.push_new(Instant::ZERO, 100, true);
        assert_eq!(apply_blocks(&mut q3, &[(100, 299)]), 1);
    }
}
