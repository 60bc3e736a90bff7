//! The endpoint's pending trace events ([`crate::event::Event`]): appended as they happen,
//! read in order by the driver, then forgotten.
//!
//! A `Vec` and a read cursor instead of a `VecDeque`: the driver reads every event after each
//! call into the endpoint and the log is then empty again, so it never wraps, and appending
//! and reading need no ring arithmetic (docs/performance/thin-stream.md, "Answers of nothing
//! without a call").

use crate::event::Event;

/// A reader that never empties the log (pops one event per event appended, say) has the
/// events it read dropped once they are at least this many and half of the log: the storage
/// then stays bounded by what is unread.
const COMPACT_FROM: usize = 64;

/// Pending trace events, oldest first.
#[derive(Debug, Default)]
pub struct EventLog {
    events: Vec<Event>,
    /// How many of `events` [`EventLog::pop_front`] has handed out.
    read: usize,
}

impl EventLog {
    /// Appends `ev` after the events not yet read.
    #[inline]
    pub fn push_back(&mut self, ev: Event) {
        self.events.push(ev);
    }

    /// The oldest unread event, moved out.
    pub fn pop_front(&mut self) -> Option<Event> {
        let ev = self.events.get(self.read)?.clone();
        self.read += 1;
        if self.read == self.events.len() {
            self.clear();
        } else if self.read >= COMPACT_FROM && 2 * self.read >= self.events.len() {
            self.events.drain(..self.read);
            self.read = 0;
        }
        Some(ev)
    }

    /// The unread events, oldest first.
    #[inline]
    pub fn unread(&self) -> &[Event] {
        &self.events[self.read..]
    }

    /// Forgets every event (keeps the storage).
    #[inline]
    pub fn clear(&mut self) {
        self.events.clear();
        self.read = 0;
    }

    /// The start of the storage and how many events it holds room for (for a prefetch).
    #[inline]
    pub fn storage(&self) -> (*const Event, usize) {
        (self.events.as_ptr(), self.events.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Instant;

    fn acked(una: u64) -> Event {
        Event::Acked {
            at: Instant::ZERO,
            una,
        }
    }

    #[test]
    fn events_come_out_in_order_and_each_once() {
        let mut log = EventLog::default();
        log.push_back(acked(1));
        log.push_back(acked(2));
        assert_eq!(log.pop_front(), Some(acked(1)));
        log.push_back(acked(3));
        assert_eq!(log.unread(), &[acked(2), acked(3)]);
        assert_eq!(log.pop_front(), Some(acked(2)));
        assert_eq!(log.pop_front(), Some(acked(3)));
        assert_eq!(log.pop_front(), None);
        assert!(log.unread().is_empty());
        // read to the end, the storage is reused from its start
        log.push_back(acked(4));
        assert_eq!(log.unread(), &[acked(4)]);
        log.clear();
        assert_eq!(log.pop_front(), None);
    }

    /// A reader that keeps a few events unread at all times does not make the log grow.
    #[test]
    fn a_log_never_read_to_its_end_stays_bounded() {
        let mut log = EventLog::default();
        for i in 0..3 {
            log.push_back(acked(i));
        }
        for i in 3..100_000 {
            log.push_back(acked(i));
            assert_eq!(log.pop_front(), Some(acked(i - 3)));
        }
        assert_eq!(log.unread(), &[acked(99_997), acked(99_998), acked(99_999)]);
        assert!(
            log.events.capacity() <= 4 * COMPACT_FROM,
            "{}",
            log.events.capacity()
        );
    }
}
