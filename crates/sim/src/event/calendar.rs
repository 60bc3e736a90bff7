//! The events due beyond the heap's horizon, for queues of many flows: a ring of time buckets
//! (a calendar queue: R. Brown, "Calendar queues: a fast O(1) priority queue implementation for
//! the simulation event set problem", CACM 31(10), 1988), each bucket's events unsorted.
//!
//! With 10 000 flows the event heap holds about 20 000 events, and each pop's sift-down waits
//! on a chain of cache misses through the heap's lower levels (the flows' state keeps pushing
//! them out of the caches). Here the heap holds only the events of the next bucket, a few
//! dozen, and stays in the first-level cache: an event due later is appended to its bucket (a
//! store, which nothing waits for), and the earliest bucket moves into the heap, read in
//! order, when the heap is empty. Events beyond the ring's span wait in an overflow heap,
//! taken into the ring as it turns.
//!
//! The order of events is untouched: the heap holds every event due before its horizon, and a
//! bucket moves in only when every earlier bucket has, so the heap's least is always the least
//! of all (the tests compare with `std`'s `BinaryHeap`).

use super::{Event, EventKind, NO_LANE};
use std::collections::BinaryHeap;

/// Events a bucket holds in the ring's one allocation (2 KiB; 4 MiB for 2 048 buckets); more
/// go to a vector of the bucket's own, freed when the bucket is taken. A bucket of 10 000 thin
/// streams holds a few dozen events, but timers of many flows on the `linux` profile's timer
/// wheel expire together (5 000–7 000 in one bucket). Vectors per bucket that kept their
/// capacity grew the ring to 70 MB in a minute, as a burst's capacity was handed from bucket to
/// bucket; freed and allocated again at every turn they cost 4 % of the time, and kept at 128
/// events' capacity they scattered 2 048 allocations through the heap and raised the peak
/// memory by 27 MB (docs/performance/many-flows.md, "An event calendar for many flows").
const SLOT_EVENTS: usize = 64;

/// What an unused place in `Calendar::slots` holds (never read).
const PLACEHOLDER: Event = Event {
    time: 0,
    seq: 0,
    kind: EventKind::FlowStart { flow: 0 },
    lane: NO_LANE,
};

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
    /// Bucket `i` (for `next <= i < next + buckets`) is slot `i & mask`: its first events are
    /// `slots[slot * SLOT_EVENTS..][..filled[slot]]`, the rest `spilled[slot]`.
    slots: Vec<Event>,
    filled: Vec<u16>,
    spilled: Vec<Vec<Event>>,
    /// One bit per bucket: not empty (`filled[slot] > 0`, kept as bits so that the next
    /// non-empty bucket is found 64 buckets at a time).
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
            slots: vec![PLACEHOLDER; n * SLOT_EVENTS],
            filled: vec![0; n],
            spilled: (0..n).map(|_| Vec::new()).collect(),
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
        let n = self.filled[slot] as usize;
        if n < SLOT_EVENTS {
            self.slots[slot * SLOT_EVENTS + n] = ev;
            self.filled[slot] += 1;
        } else {
            self.spilled[slot].push(ev);
        }
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// Hands the earliest non-empty bucket's events to `into` (unsorted; all of them before the
    /// new horizon, none before the old one).
    pub(super) fn take_next(&mut self, mut into: impl FnMut(Event)) {
        debug_assert!(self.len > 0);
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
        let n = std::mem::take(&mut self.filled[slot]) as usize;
        self.slots[slot * SLOT_EVENTS..][..n]
            .iter()
            .for_each(|&ev| into(ev));
        let spilled = std::mem::take(&mut self.spilled[slot]);
        spilled.iter().for_each(|&ev| into(ev));
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        self.len -= n + spilled.len();
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
