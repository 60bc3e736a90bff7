//! The event queue: a binary min-heap of small `Copy` events ordered by (time, insertion
//! counter), so simultaneous events run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
}

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

/// Min-queue of events by (time, insertion order).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    counter: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            counter: 0,
        }
    }

    /// Schedules `kind` at `time` (ns).
    pub fn push(&mut self, time: u64, kind: EventKind) {
        let seq = self.counter;
        self.counter += 1;
        self.heap.push(Event { time, seq, kind });
    }

    /// Removes and returns the earliest event (first inserted among equals).
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 32);
    }
}
