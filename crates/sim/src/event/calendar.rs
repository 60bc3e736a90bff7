//! The events due beyond the heap's horizon, for queues of many flows: a ring of time buckets
//! (a calendar queue: R. Brown, "Calendar queues: a fast O(1) priority queue implementation for
//! the simulation event set problem", CACM 31(10), 1988), each bucket an unsorted vector.
//!
//! With 10 000 flows the event heap holds about 20 000 events, and each pop's sift-down waits
//! on a chain of cache misses through the heap's lower levels (the flows' state keeps pushing
//! them out of the caches). Here the heap holds only the events of the next few buckets, a
//! few dozen, and stays in the first-level cache: an event due later is appended to its bucket
//! (a store, which nothing waits for), and a bucket moves into the heap, read in order, when
//! the heap runs short. Events beyond the ring's span wait in an overflow heap, taken into the
//! ring as it turns.
//!
//! The order of events is untouched: the heap holds every event due before its horizon, and a
//! bucket moves in only when every earlier bucket has, so the heap's least is always the least
//! of all (the tests compare with `std`'s `BinaryHeap`).

use super::Event;
use std::collections::BinaryHeap;

#[derive(Debug)]
pub(super) struct Calendar {
    /// A bucket spans `1 << shift` ns.
    shift: u32,
    /// Number of buckets − 1 (a power of two − 1).
    mask: u64,
    /// Index (`time >> shift`) of the first bucket not yet moved into the heap; the heap holds
    /// every event before `horizon`, the time it starts at.
    next: u64,
    horizon: u64,
    /// Bucket `i` (for `next <= i < next + buckets`) is `buckets[i & mask]`.
    buckets: Vec<Vec<Event>>,
    /// One bit per bucket: not empty.
    occupied: Vec<u64>,
    /// Events at or beyond `next + buckets` (`Event`'s order is reversed: this pops the
    /// earliest).
    overflow: BinaryHeap<Event>,
    len: usize,
}

impl Calendar {
    /// `1 << bits` buckets of `1 << shift` ns each.
    pub(super) fn new(shift: u32, bits: u32) -> Self {
        assert!(
            (6..=20).contains(&bits) && shift < 40,
            "calendar of 2^{bits} buckets of 2^{shift} ns"
        );
        let n = 1usize << bits;
        Calendar {
            shift,
            mask: n as u64 - 1,
            next: 0,
            horizon: 0,
            buckets: (0..n).map(|_| Vec::new()).collect(),
            occupied: vec![0; n / 64],
            overflow: BinaryHeap::new(),
            len: 0,
        }
    }

    /// Events before this time belong in the heap, not here.
    #[inline(always)]
    pub(super) fn horizon(&self) -> u64 {
        self.horizon
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Takes an event due at or after [`horizon`](Self::horizon).
    #[inline]
    pub(super) fn put(&mut self, ev: Event) {
        debug_assert!(ev.time >= self.horizon);
        self.len += 1;
        let idx = ev.time >> self.shift;
        if idx - self.next <= self.mask {
            self.put_in_ring(idx, ev);
        } else {
            self.overflow.push(ev);
        }
    }

    #[inline(always)]
    fn put_in_ring(&mut self, idx: u64, ev: Event) {
        let slot = (idx & self.mask) as usize;
        self.buckets[slot].push(ev);
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// Moves the earliest non-empty bucket's events into `take` (unsorted; all of them before
    /// the new horizon, none before the old one). `spare` is an empty vector that takes the
    /// bucket's place, so that capacities circulate instead of being allocated.
    pub(super) fn take_next(&mut self, spare: &mut Vec<Event>) {
        debug_assert!(self.len > 0 && spare.is_empty());
        let idx = match self.first_occupied() {
            Some(idx) => idx,
            None => {
                // the ring is empty: turn it to the overflow's earliest
                let first = self.overflow.peek().expect("events are somewhere").time >> self.shift;
                self.advance_to(first);
                first
            }
        };
        let slot = (idx & self.mask) as usize;
        std::mem::swap(&mut self.buckets[slot], spare);
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        self.len -= spare.len();
        self.advance_to(idx + 1);
    }

    /// The index of the earliest non-empty bucket in the ring, if any.
    fn first_occupied(&self) -> Option<u64> {
        let start = (self.next & self.mask) as usize;
        let words = self.occupied.len();
        let (w0, b0) = (start / 64, start % 64);
        // the start word from the start bit, the other words in ring order, then the start
        // word's bits before the start bit
        let first = self.occupied[w0] & (!0u64 << b0);
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (1..=words).find_map(|k| {
                let w = (w0 + k) % words;
                let mut bits = self.occupied[w];
                if k == words {
                    bits &= !(!0u64 << b0);
                }
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        }?;
        let ahead = (found as u64).wrapping_sub(start as u64) & self.mask;
        Some(self.next + ahead)
    }

    /// Turns the ring so that its first bucket is `idx` (every bucket before it empty), taking
    /// the overflow's events that now fall within it.
    fn advance_to(&mut self, idx: u64) {
        self.next = idx;
        self.horizon = idx
            .checked_shl(self.shift)
            .filter(|h| h >> self.shift == idx)
            .unwrap_or(u64::MAX);
        while let Some(ev) = self.overflow.peek() {
            let i = ev.time >> self.shift;
            if i - self.next > self.mask {
                break;
            }
            let ev = self.overflow.pop().expect("peeked");
            self.put_in_ring(i, ev);
        }
    }
}
