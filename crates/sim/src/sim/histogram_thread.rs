//! A lone run's latency histograms, built on a thread of their own.
//!
//! A compacting recorder folds every write that reached all its milestones into six exact
//! latency histograms (`thinlab_trace::FlowRecorder::compacting`). Where the latencies are
//! mostly distinct (the dumbbell benchmark's 90 000 writes over a shared queue) that work, the
//! histograms' sorting and merging and the 8 MB they grow to, took 7–9 % of the simulation's
//! wall time (docs/performance/builds.md, "The latency histograms on the second core"). When a run
//! is alone and a core is free ([`super::Keep::histograms_on_thread`]), the recorders hand the
//! writes they retire to this collector instead, which passes them in batches to a thread
//! that builds the same histograms: each flow's latencies are added in write order, as the
//! recorder would have, so every result is the same.
//!
//! The thread starts only where it pays: once the run has retired `START_AFTER` writes (the
//! thin-stream benchmark's 12 858 never do), and only if at least a quarter of the latencies
//! added so far were new values (`NEW_SHARE`; asked again each time the retired writes double). Where
//! they repeat, as one stream's over a fixed path do, adding costs little, less than handing
//! the writes over: the 100-hour thin stream ran 1–3 % slower with the thread. Until then
//! the histograms are built on the run's thread, as a recorder would, and the thread takes
//! them over when it starts and goes on adding to them. If no thread can be started, every
//! histogram is built on the run's thread.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use thinlab_trace::{RetireSink, RetiredLatencies, WriteRecord};

/// Retired writes (over all flows) before the thread may start.
const START_AFTER: u64 = 16_384;
/// The thread starts when at least this share of the values added so far are held as pairs of
/// their own ([`RetiredLatencies::stored_and_added`]): a quarter, as (numerator, denominator).
const NEW_SHARE: (u64, u64) = (1, 4);
/// Retired writes per batch handed to the thread, never more: 96 bytes each, so that a batch
/// (96 KiB) is taken from the heap, not mapped afresh.
const BATCH: usize = 1024;
/// Batches that may wait for the thread: beyond them the run waits, so the memory in transit
/// stays bounded (about a dozen batches in all, with the one being filled, the one being added
/// and the emptied ones on their way back for reuse) however far the thread falls behind.
const QUEUED: usize = 4;

/// Retired writes, each with its flow.
type Batch = Vec<(u32, WriteRecord)>;

/// Collects the retired writes of a run's recorders and builds their histograms, on a thread
/// of their own where that pays.
pub(super) struct HistogramCollector(Arc<Mutex<Collector>>);

struct Collector {
    /// Writes retired so far, over all flows.
    retired: u64,
    /// Retired writes at which to ask again whether the thread would pay.
    next_ask: u64,
    /// Per flow, the histograms of the writes retired before the thread started, which then
    /// takes them (all of them when it could not start).
    here: Vec<RetiredLatencies>,
    batch: Batch,
    thread: Thread,
}

enum Thread {
    NotStarted,
    Running {
        to: SyncSender<Batch>,
        /// Emptied batches, for reuse.
        back: Receiver<Batch>,
        handle: JoinHandle<Vec<RetiredLatencies>>,
    },
    CouldNotStart,
    /// The histograms were collected ([`HistogramCollector::finish`]): no write may retire
    /// after that.
    Finished,
}

impl HistogramCollector {
    pub fn new(flows: usize) -> HistogramCollector {
        HistogramCollector(Arc::new(Mutex::new(Collector {
            retired: 0,
            next_ask: START_AFTER,
            here: vec![RetiredLatencies::default(); flows],
            batch: Vec::new(),
            thread: Thread::NotStarted,
        })))
    }

    /// The retire sink for flow `flow`'s recorder.
    pub fn sink(&self, flow: usize) -> RetireSink {
        let collector = Arc::clone(&self.0);
        let flow = flow as u32;
        Box::new(move |writes: &[WriteRecord]| lock(&collector).take(flow, writes))
    }

    /// Every flow's histograms, by flow index. Called once the run is over (no recorder
    /// retires a write after this). A panic of the thread is raised here, as if the run had
    /// panicked.
    pub fn finish(self) -> Vec<RetiredLatencies> {
        let mut c = lock(&self.0);
        let Thread::Running { to, handle, .. } = std::mem::replace(&mut c.thread, Thread::Finished)
        else {
            return std::mem::take(&mut c.here);
        };
        // An error means the thread has ended, by a panic that `join` returns.
        let _ = to.send(std::mem::take(&mut c.batch));
        drop(to);
        handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

impl Collector {
    fn take(&mut self, flow: u32, writes: &[WriteRecord]) {
        self.retired += writes.len() as u64;
        if matches!(self.thread, Thread::NotStarted) && self.retired >= self.next_ask {
            self.next_ask = 2 * self.retired;
            if new_share_reached(&self.here) {
                self.thread = start(&mut self.here);
                if matches!(self.thread, Thread::Running { .. }) {
                    self.batch = Vec::with_capacity(BATCH);
                }
            }
        }
        let Thread::Running { to, back, .. } = &mut self.thread else {
            assert!(
                !matches!(self.thread, Thread::Finished),
                "a write retired after the run's histograms were collected"
            );
            let h = &mut self.here[flow as usize];
            writes.iter().for_each(|w| h.add(w));
            return;
        };
        let mut rest = writes;
        while !rest.is_empty() {
            let room = BATCH - self.batch.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.batch.extend(now.iter().map(|w| (flow, *w)));
            rest = later;
            if self.batch.len() == BATCH {
                let empty = back
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                let full = std::mem::replace(&mut self.batch, empty);
                // An error means the thread has ended, by a panic that `finish` raises.
                let _ = to.send(full);
            }
        }
    }
}

/// Whether at least `NEW_SHARE` of the values added to `h` so far were new ones, which are
/// what makes adding costly.
fn new_share_reached(h: &[RetiredLatencies]) -> bool {
    let (stored, added) = h.iter().fold((0, 0), |(s, n), l| {
        let (ls, ln) = l.stored_and_added();
        (s + ls as u64, n + ln)
    });
    added > 0 && stored * NEW_SHARE.1 >= added * NEW_SHARE.0
}

#[cfg(test)]
thread_local! {
    /// Threads started from this thread (tests).
    static STARTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Starts the thread that goes on building the histograms `here` (which it takes) from the
/// batches it is sent; they stay `here` if it cannot be started.
fn start(here: &mut Vec<RetiredLatencies>) -> Thread {
    let (to, batches) = sync_channel::<Batch>(QUEUED);
    let (give_back, back) = sync_channel::<Batch>(QUEUED + 2);
    let (hand_over, handed) = sync_channel::<Vec<RetiredLatencies>>(1);
    let spawned = std::thread::Builder::new()
        .name("thinlab-histograms".into())
        .spawn(move || {
            let mut h = handed
                .recv()
                .expect("the histograms so far are handed over first");
            for mut batch in batches {
                for (flow, w) in &batch {
                    h[*flow as usize].add(w);
                }
                batch.clear();
                let _ = give_back.try_send(batch);
            }
            h
        });
    match spawned {
        Ok(handle) => {
            #[cfg(test)]
            STARTED.with(|n| n.set(n.get() + 1));
            let _ = hand_over.send(std::mem::take(here));
            Thread::Running { to, back, handle }
        }
        Err(_) => Thread::CouldNotStart,
    }
}

/// The collector, whether or not a recorder's sink panicked while holding it (it holds no
/// half-made state between calls).
fn lock(c: &Mutex<Collector>) -> MutexGuard<'_, Collector> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use thinlab_tcp::Instant;
    use thinlab_trace::metrics::{Milestone, Origin};

    fn write(i: u64, latency_ns: u64) -> WriteRecord {
        let at = Instant::from_nanos(i * 1_000_000);
        WriteRecord {
            write_time: at,
            start: i * 100,
            end: i * 100 + 100,
            first_send: Some(at),
            transport: Some(Instant::from_nanos(at.as_nanos() + latency_ns / 2)),
            app: Some(Instant::from_nanos(at.as_nanos() + latency_ns)),
            acked: Some(Instant::from_nanos(at.as_nanos() + 2 * latency_ns)),
        }
    }

    /// Histograms built through the collector, with its thread, equal those built by adding
    /// each flow's writes in write order (`RetiredLatencies::add`, what a recorder does): for
    /// retires of one write, of 32 and of 1 000 (which fill the thread's batches part way and
    /// overflow them).
    #[test]
    fn builds_what_the_recorders_would() {
        let flows = 3;
        let writes: Vec<(usize, WriteRecord)> = (0..START_AFTER + 3 * BATCH as u64 + 77)
            .map(|i| ((i % 3) as usize, write(i, 1_000 + (i * 7919) % 5_003)))
            .collect();
        let mut expected = vec![RetiredLatencies::default(); flows];
        for (f, w) in &writes {
            expected[*f].add(w);
        }
        for retire_len in [1, 32, 1000] {
            let t = HistogramCollector::new(flows);
            let mut sinks: Vec<RetireSink> = (0..flows).map(|f| t.sink(f)).collect();
            // each flow's writes, handed over `retire_len` at a time, the flows taking turns
            let by_flow: Vec<Vec<WriteRecord>> = (0..flows)
                .map(|f| writes.iter().filter(|w| w.0 == f).map(|w| w.1).collect())
                .collect();
            let turns = by_flow.iter().map(|w| w.len()).max().unwrap_or(0);
            for from in (0..turns).step_by(retire_len) {
                for (f, ws) in by_flow.iter().enumerate() {
                    if from < ws.len() {
                        sinks[f](&ws[from..(from + retire_len).min(ws.len())]);
                    }
                }
            }
            let started = matches!(lock(&t.0).thread, Thread::Running { .. });
            assert!(started, "{} writes started no thread", writes.len());
            drop(sinks);
            let got = t.finish();
            assert_eq!(got, expected, "retires of {retire_len}");
            let app = |h: &RetiredLatencies| {
                let mut r = thinlab_trace::records::RetiredWrites::default();
                r.set_latencies(h.clone());
                r.latency(Milestone::App, Origin::Write).len()
            };
            assert_eq!(app(&got[0]), by_flow[0].len() as u64);
        }
    }

    /// A run through the collector, whose thread starts (the dumbbell benchmark's first 25 s:
    /// 24 CBR flows' distinct latencies over a shared queue), has the results of a run without
    /// it.
    #[test]
    fn a_run_with_the_thread_has_the_same_results() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../bench/thinlab/dumbbell.toml"
        );
        let text = std::fs::read_to_string(path).expect("the dumbbell benchmark's scenario");
        let text = text.replace("duration = \"100s\"", "duration = \"25s\"");
        let s = crate::Scenario::from_toml_str(&text).expect("scenario");
        assert_eq!(s.duration, std::time::Duration::from_secs(25));
        let without = crate::sim::run(&s, s.seed);
        let before = STARTED.with(|n| n.get());
        let keep = crate::sim::Keep {
            histograms_on_thread: true,
            ..Default::default()
        };
        let with = crate::sim::run_keeping(&s, s.seed, keep, &mut |_| {});
        assert_eq!(STARTED.with(|n| n.get()), before + 1, "no thread started");
        // the CBR flows (the first 24) retired writes; the bulk flows' few large ones need not
        assert!(with.flows[..24].iter().all(|f| f.records.retired.count > 0));
        assert_eq!(with, without);
    }

    /// Latencies that repeat start no thread, however many writes retire; the histograms are
    /// still built.
    #[test]
    fn repeated_latencies_start_no_thread() {
        let t = HistogramCollector::new(1);
        let mut sink = t.sink(0);
        let mut expected = RetiredLatencies::default();
        for i in 0..4 * START_AFTER {
            let w = write(i, 50_000_000 + (i % 3) * 1_000_000 * u64::from(i % 97 == 0));
            expected.add(&w);
            sink(std::slice::from_ref(&w));
        }
        assert!(matches!(lock(&t.0).thread, Thread::NotStarted));
        drop(sink);
        assert_eq!(t.finish(), vec![expected]);
    }

    /// A run that retires fewer writes than a batch starts no thread and still gets its
    /// histograms.
    #[test]
    fn few_writes_start_no_thread() {
        let t = HistogramCollector::new(2);
        let mut sink = t.sink(1);
        sink(&[write(1, 5_000), write(2, 6_000)]);
        assert!(matches!(lock(&t.0).thread, Thread::NotStarted));
        let got = t.finish();
        let mut expected = RetiredLatencies::default();
        expected.add(&write(1, 5_000));
        expected.add(&write(2, 6_000));
        assert_eq!(got, vec![RetiredLatencies::default(), expected]);
    }
}
