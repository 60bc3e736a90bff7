//! The event queue: a binary min-heap of small `Copy` events ordered by (time, insertion
//! counter), so simultaneous events run in the order they were scheduled.
//!
//! Events that come in nondecreasing time on a FIFO *lane* (a packet's arrivals at the end of
//! one link: a link never reorders) wait in that lane, and only each lane's first event is in
//! the heap. The order of events is exactly the heap's over all of them (a lane is sorted by
//! (time, counter), so its first event is its least), while the heap holds one event per busy
//! link instead of one per packet in flight.
//!
//! With many flows, events due beyond the next few hundred microseconds wait in a calendar of
//! time buckets instead (module `calendar`), so that the heap stays small enough to stay in
//! the cache; the order is the same.

use std::cmp::Ordering;

mod calendar;
use calendar::Calendar;

/// What happens. Indices point into the simulator's tables; nothing is boxed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A flow connects (client) and its server listens.
    FlowStart { flow: u32 },
    /// A flow's source generates its next write.
    AppTick { flow: u32 },
    /// A flow's source stops generating (`duration`).
    SourceStop { flow: u32 },
    /// A packet reaches the end of its current link.
    Arrive { packet: u32 },
    /// An endpoint's timer (endpoint = 2·flow + side); stale unless `generation` matches.
    Timer { endpoint: u32, generation: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds of virtual time.
    pub time: u64,
    /// Insertion counter: ties in `time` go in insertion order.
    pub seq: u64,
    pub kind: EventKind,
    /// The lane it waits in ([`EventQueue::push_lane`]), or [`NO_LANE`].
    pub lane: u32,
}

/// [`Event::lane`] of an event pushed with [`EventQueue::push`].
pub const NO_LANE: u32 = u32::MAX;

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we pop the earliest.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Min-queue of events by (time, insertion order): a binary min-heap on a `Vec`, comparing
/// one `u128` key (time, then insertion counter) per step. Keys are unique, so the pop order is
/// fully determined (the same as `std::collections::BinaryHeap` with [`Event`]'s `Ord`).
#[derive(Debug)]
pub struct EventQueue {
    heap: Vec<Event>,
    counter: u64,
    /// Per lane, its events in order; the first of each is also in the heap.
    lanes: Vec<std::collections::VecDeque<Event>>,
    /// Events waiting in lanes behind their lane's first.
    behind: usize,
    /// Many flows: the events due at or after `horizon` (`None`: all are in the heap).
    calendar: Option<Box<Calendar>>,
    /// The calendar's horizon (`u64::MAX` without one): one comparison with a field on the
    /// queue's own line decides where an event goes.
    horizon: u64,
}

/// Heap sizes above which a sift-down picks the lesser child without a branch. In a small heap
/// (a few flows) the pick repeats from event to event and a predicted branch is faster than
/// the data dependency of a conditional move (measured: docs/performance/many-flows.md).
const BRANCHLESS_FROM: usize = 16;

/// How far down a lane [`EventQueue::prefetch_lane_after`] fetches: two lines of 32-byte events
/// beyond the next, so that a lane read in order finds its lines fetched a few pops early.
const LANE_PREFETCH_AHEAD: usize = 5;

#[inline(always)]
fn key(e: &Event) -> u128 {
    ((e.time as u128) << 64) | e.seq as u128
}

/// Puts `ev` in the binary min-heap `h` (a sift-up from its end).
#[inline(always)]
fn heap_insert(h: &mut Vec<Event>, ev: Event) {
    let k = key(&ev);
    let mut pos = h.len();
    h.push(ev);
    while pos > 0 {
        let parent = (pos - 1) / 2;
        if key(&h[parent]) <= k {
            break;
        }
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = ev;
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n),
            counter: 0,
            lanes: Vec::new(),
            behind: 0,
            calendar: None,
            horizon: u64::MAX,
        }
    }

    /// Keeps the events due beyond the next few `1 << shift` ns out of the heap, in a ring of
    /// `1 << bits` buckets (module `calendar`), so that the heap stays small. For many flows;
    /// the order of events is the same. Call before the first push.
    pub fn with_calendar(mut self, shift: u32, bits: u32) -> Self {
        assert!(
            self.heap.is_empty(),
            "a calendar is set up before the first event"
        );
        let calendar = Calendar::new(shift, bits);
        self.horizon = calendar.horizon();
        self.calendar = Some(Box::new(calendar));
        self
    }

    /// Schedules `kind` at `time` (ns).
    #[inline]
    pub fn push(&mut self, time: u64, kind: EventKind) {
        let ev = self.stamp(time, kind, NO_LANE);
        self.insert(ev);
    }

    /// Schedules `kind` at `time` (ns) on FIFO lane `lane`, whose events come in nondecreasing
    /// time (checked in debug builds).
    #[inline]
    pub fn push_lane(&mut self, lane: u32, time: u64, kind: EventKind) {
        let ev = self.stamp(time, kind, lane);
        let l = lane as usize;
        if self.lanes.len() <= l {
            self.lanes.resize_with(l + 1, Default::default);
        }
        let q = &mut self.lanes[l];
        debug_assert!(q.back().is_none_or(|b| b.time <= time), "lane out of order");
        q.push_back(ev);
        if q.len() == 1 {
            self.insert(ev);
        } else {
            self.behind += 1;
        }
    }

    #[inline]
    fn stamp(&mut self, time: u64, kind: EventKind, lane: u32) -> Event {
        let seq = self.counter;
        self.counter += 1;
        Event {
            time,
            seq,
            kind,
            lane,
        }
    }

    /// Puts `ev` in the heap, or in the calendar when it is due beyond the heap's horizon.
    #[inline]
    fn insert(&mut self, ev: Event) {
        if ev.time >= self.horizon {
            if let Some(c) = &mut self.calendar {
                c.put(ev);
                return;
            }
        }
        heap_insert(&mut self.heap, ev);
    }

    /// Moves the calendar's next bucket into the (empty) heap, if the calendar has one. Only an
    /// empty heap takes a bucket: the horizon then moves no further than the next event's
    /// bucket, so a lone event far ahead (a source's stop) cannot draw the heap's horizon
    /// past the events that will be scheduled before it.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> Option<Event> {
        debug_assert!(self.heap.is_empty());
        let c = self.calendar.as_mut()?;
        if c.len() > 0 {
            let heap = &mut self.heap;
            c.take_next(|ev| heap_insert(heap, ev));
            self.horizon = c.horizon();
        }
        self.heap.first().copied()
    }

    /// Removes and returns the earliest event (first inserted among equals). When it came from
    /// a lane with more events waiting, the lane's next event takes its place at the top of the
    /// heap (one sift-down, usually short: it is due soon after), instead of a removal and an
    /// insertion.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let top = match self.heap.first() {
            Some(&top) => top,
            None => self.refill()?,
        };
        if top.lane != NO_LANE {
            let q = &mut self.lanes[top.lane as usize];
            q.pop_front();
            if let Some(&next) = q.front() {
                self.behind -= 1;
                if next.time < self.horizon || self.calendar.is_none() {
                    self.sift_down_from_top(next);
                } else {
                    self.lane_next_to_calendar(next);
                }
                return Some(top);
            }
        }
        self.remove_top();
        Some(top)
    }

    /// A lane's next event is due beyond the horizon: the popped top leaves the heap, and the
    /// event waits in the calendar.
    #[cold]
    #[inline(never)]
    fn lane_next_to_calendar(&mut self, next: Event) {
        self.remove_top();
        self.insert(next);
    }

    /// Removes the heap's top (the last event takes its place and sifts down).
    #[inline(always)]
    fn remove_top(&mut self) {
        let last = self.heap.pop().expect("the heap has its top");
        if !self.heap.is_empty() {
            self.sift_down_from_top(last);
        }
    }

    /// Puts `ev` at the top of the (non-empty) heap in place of its top, and sifts it down.
    #[inline]
    fn sift_down_from_top(&mut self, ev: Event) {
        let h = &mut self.heap;
        let n = h.len();
        let k = key(&ev);
        let mut pos = 0;
        loop {
            let mut child = 2 * pos + 1;
            if child >= n {
                break;
            }
            if child + 1 < n {
                let right_less = key(&h[child + 1]) < key(&h[child]);
                if n > BRANCHLESS_FROM {
                    // Which child is lesser is a coin toss in a large heap, one the CPU would
                    // mispredict half the time at every level: chosen without a branch.
                    child += usize::from(right_less);
                } else if right_less {
                    child += 1;
                }
            }
            if key(&h[child]) >= k {
                break;
            }
            h[pos] = h[child];
            pos = child;
        }
        h[pos] = ev;
    }

    /// The next event to pop, when the heap holds it (with a calendar, an empty heap takes the
    /// next bucket only when popped; the prefetch's guess, never the order).
    #[inline]
    pub fn peek(&self) -> Option<&Event> {
        self.heap.first()
    }

    /// The event after the next one, as far as the heap knows now (the top's lesser child;
    /// a lane's next event may come before it).
    #[inline]
    pub fn peek_second(&self) -> Option<&Event> {
        match (self.heap.get(1), self.heap.get(2)) {
            (Some(a), Some(b)) => Some(if key(b) < key(a) { b } else { a }),
            (a, _) => a,
        }
    }

    /// Prefetches the events of `ev`'s lane that follow it, and returns the next two of them:
    /// when `ev` is the heap's top, its pop reads the next at once. A busy link's lane at 10 000
    /// thin streams holds the packets in flight (by the flows' rate and the RTT about 7 000
    /// events, 224 KB: computed, not counted), whose next line is otherwise a cache miss every
    /// second pop (docs/performance/many-flows.md, "Misses perf could still point at"). The
    /// two returned were fetched a few pops earlier, so reading them costs no miss.
    #[inline]
    pub fn prefetch_lane_after(&self, ev: &Event) -> [Option<&Event>; 2] {
        if ev.lane == NO_LANE {
            return [None, None];
        }
        let q = &self.lanes[ev.lane as usize];
        if let Some(e) = q.get(LANE_PREFETCH_AHEAD) {
            thinlab_tcp::prefetch::prefetch(e);
        }
        [q.get(1), q.get(2)]
    }

    /// The kinds of the heap's third level (four events that will come soon).
    #[inline]
    pub fn third_level(&self) -> impl Iterator<Item = EventKind> + '_ {
        self.heap.iter().skip(3).take(4).map(|e| e.kind)
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.behind + self.calendar.as_ref().map_or(0, |c| c.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, EventKind::AppTick { flow: 0 });
        q.push(3, EventKind::AppTick { flow: 1 });
        q.push(5, EventKind::AppTick { flow: 2 });
        q.push(3, EventKind::AppTick { flow: 3 });
        q.push(5, EventKind::AppTick { flow: 4 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|e| match e.kind {
                EventKind::AppTick { flow } => flow,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![1, 3, 0, 2, 4]);
    }

    /// The prefetch's view of a lane: the two events that follow the top on its lane, none
    /// for an event on no lane.
    #[test]
    fn the_events_after_the_top_on_its_lane() {
        let mut q = EventQueue::new();
        for (i, t) in [10, 20, 30, 40].into_iter().enumerate() {
            q.push_lane(3, t, EventKind::Arrive { packet: i as u32 });
        }
        q.push(15, EventKind::AppTick { flow: 9 });
        let top = *q.peek().expect("an event");
        let after = q.prefetch_lane_after(&top).map(|e| e.map(|e| e.kind));
        assert_eq!(
            after,
            [
                Some(EventKind::Arrive { packet: 1 }),
                Some(EventKind::Arrive { packet: 2 })
            ]
        );
        q.pop();
        let top = *q.peek().expect("an event");
        assert_eq!(top.kind, EventKind::AppTick { flow: 9 });
        assert_eq!(q.prefetch_lane_after(&top), [None, None]);
        q.pop();
        q.pop();
        q.pop();
        let top = *q.peek().expect("the lane's last");
        assert_eq!(q.prefetch_lane_after(&top), [None, None]);
    }

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 32);
    }

    /// The next value of a xorshift64 sequence: test inputs without a random-number crate.
    fn xorshift(mut x: u64) -> u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }

    #[test]
    fn same_order_as_std_binary_heap() {
        use std::collections::BinaryHeap;
        let mut q = EventQueue::new();
        let mut r: BinaryHeap<Event> = BinaryHeap::new();
        let mut counter = 0u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x = xorshift(x);
            if !x.is_multiple_of(3) {
                let time = (x >> 8) % 64;
                let kind = EventKind::AppTick {
                    flow: (x >> 20) as u32,
                };
                q.push(time, kind);
                r.push(Event {
                    time,
                    seq: counter,
                    kind,
                    lane: NO_LANE,
                });
                counter += 1;
            } else {
                assert_eq!(q.pop(), r.pop());
            }
            assert_eq!(q.len(), r.len());
        }
        while let Some(e) = r.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.pop().is_none());
    }

    /// Lanes change nothing in the order: events pushed on lanes (each in nondecreasing time)
    /// and directly pop exactly as from one heap of all of them.
    #[test]
    fn lanes_pop_in_the_order_of_one_heap() {
        pops_in_the_order_of_one_heap(EventQueue::new(), 0x2545_f491_4f6c_dd1d, 8, 0);
    }

    /// Neither does a calendar: buckets of 1 ns–1 µs in rings of 64–256, with events within a
    /// bucket, beyond a bucket's places in the ring's allocation (1 µs), across the ring,
    /// beyond it (the overflow) and after gaps that leave the ring empty.
    #[test]
    fn a_calendar_keeps_the_order_of_one_heap() {
        for (shift, bits) in [(0, 6), (2, 6), (4, 8), (1, 7), (10, 6)] {
            for (i, (spread, far)) in [(8, 0), (64, 0), (8, 5_000), (600, 100_000)]
                .into_iter()
                .enumerate()
            {
                let seed = 0x9e37_79b9_7f4a_7c15u64 ^ (shift as u64 * 31 + i as u64);
                let q = EventQueue::new().with_calendar(shift, bits);
                pops_in_the_order_of_one_heap(q, seed, spread, far);
            }
        }
    }

    /// A bucket of more events than its places in the ring's allocation keeps the rest apart
    /// (timers of many flows expiring together), and loses none of them.
    #[test]
    fn a_crowded_bucket_keeps_every_event() {
        let mut q = EventQueue::new().with_calendar(10, 6);
        let times: Vec<u64> = (0..500).map(|i| 5_000 + (i * 7919) % 1_000).collect();
        for (i, &t) in times.iter().enumerate() {
            q.push(t, EventKind::AppTick { flow: i as u32 });
        }
        let mut expected: Vec<(u64, u32)> = times.iter().zip(0..).map(|(&t, i)| (t, i)).collect();
        expected.sort();
        let popped: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|e| match e.kind {
                EventKind::AppTick { flow } => (e.time, flow),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(popped, expected);
    }

    /// Pushes (on five lanes and directly, `spread` ns ahead at most, and now and then `far`
    /// ns ahead) and pops at random, and checks every pop against `std`'s `BinaryHeap`.
    fn pops_in_the_order_of_one_heap(mut q: EventQueue, mut x: u64, spread: u64, far: u64) {
        use std::collections::BinaryHeap;
        let mut r: BinaryHeap<Event> = BinaryHeap::new();
        let mut lane_time = [0u64; 5];
        let mut counter = 0u64;
        let mut now = 0u64;
        for _ in 0..50_000 {
            x = xorshift(x);
            if !x.is_multiple_of(3) {
                let kind = EventKind::AppTick {
                    flow: (x >> 20) as u32,
                };
                let lane = ((x >> 8) % 7) as u32;
                let ahead = if far > 0 && (x >> 40).is_multiple_of(50) {
                    far + (x >> 12) % far
                } else {
                    (x >> 30) % spread
                };
                let (time, lane) = if lane < 5 {
                    // a lane: never earlier than its last event
                    let t = lane_time[lane as usize].max(now) + ahead / 2;
                    lane_time[lane as usize] = t;
                    q.push_lane(lane, t, kind);
                    (t, lane)
                } else {
                    let t = now + ahead;
                    q.push(t, kind);
                    (t, NO_LANE)
                };
                r.push(Event {
                    time,
                    seq: counter,
                    kind,
                    lane,
                });
                counter += 1;
            } else {
                let e = r.pop();
                assert_eq!(q.pop(), e);
                now = e.map_or(now, |e| e.time);
            }
            assert_eq!(q.len(), r.len());
            if let Some(next) = q.peek() {
                assert_eq!(Some(next), r.peek());
            }
            assert_eq!(q.is_empty(), r.is_empty());
        }
        while let Some(e) = r.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.pop().is_none());
    }
}
