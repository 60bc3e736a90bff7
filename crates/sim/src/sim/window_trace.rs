//! Windows of a flow's trace events: what a time-sequence graph (tcptrace's, Shepard's
//! "TCP packet trace analysis") of a stretch of simulated time draws.
//!
//! - [`EventTrace`]: a window known before the run ([`super::run_traced`]).
//! - [`WorstWindowTrace`]: the window around the flow's worst write, known only once that write's
//!   latency is, found while the run goes: recent events are logged until no write that could
//!   still become the worst needs them, and the window of the current worst write is copied out
//!   of the log before the log forgets it. Same events, same order and same caps as a rerun
//!   traced with that window; when the log would grow past a bound the trace gives up and the
//!   caller reruns. The log takes every event as it comes (a copy, no filter) and is trimmed in
//!   batches: the filter runs only on what goes into a window (docs/performance/many-flows.md, "The
//!   worst write's window at less cost per event").

use super::TraceLog;
use std::collections::VecDeque;
use std::time::Duration;
use thinlab_tcp::{Event, Instant};
use thinlab_trace::series::WorstWrite;

/// What happened in flow `flow` between `from` and `to` ([`super::run_traced`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TracedWindow {
    /// `(true: at the data sender, the event)`: the endpoints' trace events the filter kept.
    pub events: Vec<(bool, Event)>,
    /// The application's writes: when, and the stream offset of their end (the first
    /// `per_class` of them).
    pub writes: Vec<(Instant, u64)>,
    /// Events kept so far per class of the filter.
    kept: Vec<usize>,
}

/// Which events a traced window keeps, so that its memory is bounded by what will be drawn:
/// `classify` puts an event (`true`: at the data sender) in a class, or drops it (`None`), and
/// each class keeps its first `per_class` events; the writes keep their first `per_class`.
#[derive(Clone, Copy, Debug)]
pub struct TraceFilter {
    pub classify: fn(bool, &Event) -> Option<usize>,
    pub per_class: usize,
}

impl TracedWindow {
    pub(super) fn keep_event(&mut self, f: &TraceFilter, at_sender: bool, ev: &Event) {
        let Some(class) = (f.classify)(at_sender, ev) else {
            return;
        };
        if self.kept.len() <= class {
            self.kept.resize(class + 1, 0);
        }
        if self.kept[class] < f.per_class {
            self.kept[class] += 1;
            self.events.push((at_sender, ev.clone()));
        }
    }

    pub(super) fn keep_write(&mut self, f: &TraceFilter, at: Instant, end: u64) {
        if self.writes.len() < f.per_class {
            self.writes.push((at, end));
        }
    }

    fn keep(&mut self, f: &TraceFilter, entry: &Entry) {
        match entry {
            Entry::Event(at_sender, ev) => self.keep_event(f, *at_sender, ev),
            Entry::Write(at, end) => self.keep_write(f, *at, *end),
        }
    }
}

/// The endpoints' trace events of one flow within a window of simulated time, ns, known
/// before the run ([`super::run_traced`]).
pub(super) struct EventTrace {
    pub from: u64,
    pub to: u64,
    pub filter: TraceFilter,
    /// Shared with the caller of [`super::run_traced`].
    pub log: TraceLog,
}

impl EventTrace {
    fn record(&self, now: u64, add: impl FnOnce(&mut TracedWindow, &TraceFilter)) {
        if (self.from..=self.to).contains(&now) {
            if let Ok(mut log) = self.log.lock() {
                add(&mut log, &self.filter);
            }
        }
    }
}

/// What is traced of one flow: windows known before the run, and the window around its worst
/// write.
#[derive(Default)]
pub(super) struct FlowTrace {
    pub windows: Vec<EventTrace>,
    pub worst: Option<WorstWindowTrace>,
}

impl FlowTrace {
    /// An endpoint's event at `now` (`at_sender`: at the data sender).
    pub fn event(&mut self, now: u64, at_sender: bool, ev: &Event) {
        for tr in &self.windows {
            tr.record(now, |log, f| log.keep_event(f, at_sender, ev));
        }
        if let Some(w) = &mut self.worst {
            w.event(now, at_sender, ev);
        }
    }

    /// The application wrote bytes ending at stream offset `end` at `now`.
    pub fn write(&mut self, now: u64, end: u64) {
        for tr in &self.windows {
            tr.record(now, |log, f| {
                log.keep_write(f, Instant::from_nanos(now), end)
            });
        }
        if let Some(w) = &mut self.worst {
            w.write(now, end);
        }
    }
}

/// Which window a run traces around each plotted flow's worst write: what `filter` keeps,
/// from `margin` before the write to `margin` after its delivery.
#[derive(Clone, Copy, Debug)]
pub struct WorstWindow {
    pub filter: TraceFilter,
    pub margin: Duration,
}

impl WorstWindow {
    /// `margin` in ns.
    fn margin_ns(&self) -> u64 {
        self.margin.as_nanos() as u64
    }

    /// The window (ns, both ends included) around write `w`.
    pub fn around(&self, w: &WorstWrite) -> (u64, u64) {
        let margin = self.margin_ns();
        (
            w.write_time_ns.saturating_sub(margin),
            w.write_time_ns
                .saturating_add(w.latency_ns)
                .saturating_add(margin),
        )
    }
}

/// Most entries the log may keep after a trim before the trace gives up (a rerun traces the
/// window instead). The entries are unfiltered: the report's filter keeps about four in five of
/// a flow's events, so this keeps the bound of 2^16 filtered entries that the log had when it
/// filtered. Between trims the log grows to less than twice this: with 48-byte entries its
/// storage stays within 12 MiB per traced flow (the filtered log's reached 8 MiB).
const MAX_LOG: usize = 1 << 17;

/// The log is trimmed once it holds this many entries, or twice what the last trim kept, but
/// no later than at `TRIM_AT_MOST` entries: so that one service's events on top never take its
/// storage past 2 · `MAX_LOG` entries (12 MiB).
const TRIM_FROM: usize = 1 << 10;
const TRIM_AT_MOST: usize = 2 * MAX_LOG - MAX_LOG / 4;

/// A logged event or write.
#[derive(Debug)]
enum Entry {
    Event(bool, Event),
    Write(Instant, u64),
}

/// The window around the worst write so far.
#[derive(Debug)]
struct Candidate {
    worst: WorstWrite,
    from: u64,
    to: u64,
    /// Copied out of the log once the log was about to forget its start; from then on new
    /// entries go straight in.
    window: Option<TracedWindow>,
}

/// The window around a flow's worst write, traced during the run (module docs).
#[derive(Debug)]
pub(super) struct WorstWindowTrace {
    spec: WorstWindow,
    /// Entries (time ns, entry) in order, at least those since the start of the window of the
    /// oldest write whose latency is not yet known to the series (older ones until the next
    /// trim).
    log: VecDeque<(u64, Entry)>,
    /// Writes the series had taken at the last update.
    taken: u64,
    /// The log's length that triggers the next trim, and its least value (`TRIM_FROM`; tests
    /// change it).
    trim_at: usize,
    trim_from: usize,
    best: Option<Candidate>,
    gave_up: bool,
}

impl WorstWindowTrace {
    pub fn new(spec: WorstWindow) -> Self {
        WorstWindowTrace {
            spec,
            log: VecDeque::new(),
            taken: 0,
            trim_at: TRIM_FROM,
            trim_from: TRIM_FROM,
            best: None,
            gave_up: false,
        }
    }

    /// An endpoint's event at `now`.
    #[inline]
    pub fn event(&mut self, now: u64, at_sender: bool, ev: &Event) {
        if !self.gave_up {
            self.add(now, Entry::Event(at_sender, ev.clone()));
        }
    }

    /// The application wrote bytes ending at stream offset `end` at `now`.
    pub fn write(&mut self, now: u64, end: u64) {
        if !self.gave_up {
            self.add(now, Entry::Write(Instant::from_nanos(now), end));
        }
    }

    #[inline]
    fn add(&mut self, now: u64, entry: Entry) {
        if let Some(Candidate {
            to,
            window: Some(w),
            ..
        }) = &mut self.best
        {
            if now <= *to {
                w.keep(&self.spec.filter, &entry);
            }
        }
        self.log.push_back((now, entry));
    }

    fn give_up(&mut self) {
        self.gave_up = true;
        self.log = VecDeque::new();
        self.best = None;
    }

    /// After the recorder took its events at `now`: how many writes the series has taken, what
    /// gives its worst write so far (asked when that count moved: only a taken write can be a
    /// new worst), and what gives the write time (ns) of the oldest write the series has not
    /// taken yet (`None`: all taken; asked only when the log is trimmed).
    #[inline]
    pub fn update(
        &mut self,
        now: u64,
        taken: u64,
        worst: impl FnOnce() -> Option<WorstWrite>,
        oldest_pending: impl FnOnce() -> Option<u64>,
    ) {
        if self.gave_up {
            return;
        }
        if taken != self.taken {
            self.taken = taken;
            self.take_worst(worst());
        }
        if self.log.len() >= self.trim_at {
            self.trim(now, oldest_pending());
        }
    }

    /// The series' worst write so far: a new candidate if it changed.
    fn take_worst(&mut self, worst: Option<WorstWrite>) {
        if let Some(worst) = worst {
            if self.best.as_ref().is_none_or(|b| b.worst != worst) {
                let (from, to) = self.spec.around(&worst);
                self.best = Some(Candidate {
                    worst,
                    from,
                    to,
                    window: None,
                });
            }
        }
    }

    /// Forgets the entries no write that could still become the worst needs (those before
    /// `margin` ahead of the oldest pending write, or of `now`), first copying the current
    /// candidate's window out of the log if its start is among them. Forgetting later than
    /// that changes nothing: the entries stay in order, and a window is copied from them
    /// whenever it is.
    #[cold]
    fn trim(&mut self, now: u64, oldest_pending: Option<u64>) {
        let forget_before = oldest_pending
            .unwrap_or(now)
            .saturating_sub(self.spec.margin_ns());
        if self.log.front().is_some_and(|e| e.0 < forget_before) {
            if self
                .best
                .as_ref()
                .is_some_and(|b| b.window.is_none() && b.from < forget_before)
            {
                self.copy_out();
            }
            let old = self.log.partition_point(|e| e.0 < forget_before);
            self.log.drain(..old);
        }
        if self.log.len() > MAX_LOG {
            self.give_up();
            return;
        }
        self.trim_at = self.trim_from.max(2 * self.log.len()).min(TRIM_AT_MOST);
    }

    /// Copies the current candidate's window out of the log. Copying stays proportional to
    /// logging, however often the worst write changes: a trim copies at most once, at most what
    /// the log holds, and comes only when the log has doubled since the last one kept what it
    /// did (or reached `trim_from`; or, near the bound, grown by at least `MAX_LOG` · 3/4), so
    /// at most about three times what was logged since.
    fn copy_out(&mut self) {
        let Some(best) = &mut self.best else { return };
        let first = self.log.partition_point(|e| e.0 < best.from);
        let mut window = TracedWindow::default();
        for (_, entry) in self.log.range(first..).take_while(|e| e.0 <= best.to) {
            window.keep(&self.spec.filter, entry);
        }
        best.window = Some(window);
    }

    /// The run ended; `worst` is the series' final worst write. The window around it, unless
    /// the trace gave up.
    pub fn finish(mut self, worst: Option<WorstWrite>) -> Option<(WorstWrite, TracedWindow)> {
        if !self.gave_up {
            self.take_worst(worst);
        }
        if self.best.as_ref().is_some_and(|b| b.window.is_none()) {
            self.copy_out();
        }
        if self.gave_up {
            return None;
        }
        let best = self.best?;
        Some((best.worst, best.window.unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACKS: TraceFilter = TraceFilter {
        classify: |_, ev| matches!(ev, Event::Acked { .. }).then_some(0),
        per_class: 100,
    };

    fn ack(t: u64) -> Event {
        Event::Acked {
            at: Instant::from_nanos(t),
            una: t,
        }
    }

    fn times(w: &TracedWindow) -> Vec<u64> {
        w.events
            .iter()
            .map(|(_, e)| match e {
                Event::Acked { una, .. } => *una,
                _ => unreachable!(),
            })
            .collect()
    }

    fn sacked(t: u64) -> Event {
        Event::Sacked {
            at: Instant::from_nanos(t),
            start: t,
            end: t + 1,
        }
    }

    /// Worst write at 100 ns, 50 ns to deliver, margin 10: the window is 90..=160. The log is
    /// trimmed once it holds `trim_from` entries (1: at every update).
    fn traced(copy_early: bool, trim_from: usize) -> TracedWindow {
        let spec = WorstWindow {
            filter: ACKS,
            margin: Duration::from_nanos(10),
        };
        let worst = WorstWrite {
            write_time_ns: 100,
            latency_ns: 50,
            end: 1,
        };
        let mut tr = WorstWindowTrace::new(spec);
        tr.trim_from = trim_from;
        tr.trim_at = trim_from;
        for t in [80, 89, 90, 120] {
            tr.event(t, true, &ack(t));
            tr.event(t, true, &sacked(t));
            tr.update(t, 0, || None, || Some(100));
        }
        tr.write(125, 7);
        // The series takes the write at 130. With `copy_early` every write is then taken, so
        // the first trim from then on forgets what is older than now − margin and copies the
        // window out first (at 130 when every update trims, at 160 with `trim_from` 2, and
        // later entries go straight into the window); else a write of time 100 stays pending
        // and the window is copied out at the end, as it is when the log never reaches a trim.
        let pending = if copy_early { None } else { Some(100) };
        tr.update(130, 1, || Some(worst), || pending);
        for t in [159, 160, 161] {
            tr.event(t, true, &ack(t));
            tr.event(t, true, &sacked(t));
            tr.update(t, 1, || Some(worst), || pending);
        }
        let (w, window) = tr.finish(Some(worst)).unwrap();
        assert_eq!(w, worst);
        window
    }

    /// The log's bound in bytes (`MAX_LOG`) assumes 48-byte entries.
    #[test]
    fn log_entries_are_small() {
        assert!(std::mem::size_of::<(u64, Entry)>() <= 48);
    }

    #[test]
    fn the_window_keeps_both_ends_and_nothing_outside() {
        for (copy_early, trim_from) in [
            (false, 1),
            (true, 1),
            (false, 2),
            (true, 2),
            (true, TRIM_FROM),
        ] {
            let w = traced(copy_early, trim_from);
            assert_eq!(
                times(&w),
                vec![90, 120, 159, 160],
                "copy_early {copy_early}, trim_from {trim_from}"
            );
            assert_eq!(w.writes, vec![(Instant::from_nanos(125), 7)]);
        }
    }
}
