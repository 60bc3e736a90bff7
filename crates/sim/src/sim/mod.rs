//! The run loop: flows (two endpoints, a source, a recorder each), timers, and the end rule.
//!
//! - Each flow is one TCP connection: at `flow.start` the client connects and the server
//!   listens (ISNs from the flow's own random stream). Data goes client → server unless
//!   `direction = "reverse"`. The source starts writing when the data sender's connection
//!   is established (the client's connect() returned, or the server accepted).
//! - Application writes of discrete sources are recorded as ONE `WriteRecord` each, at the
//!   time the application issued them, covering all their bytes, even when the send buffer
//!   takes them in several pieces: the rest stays pending and is offered again whenever the
//!   sender is serviced, so app latency includes time spent waiting for send-buffer space.
//!   A bulk source has no discrete writes: it fills the send buffer whenever the socket is
//!   writable as Linux defines it (free space ≥ half the queued bytes, i.e. ≥ a third of the
//!   buffer), and every chunk the endpoint accepts is one record.
//! - Timers are re-armed lazily: an endpoint's timer event is pushed only when its deadline is
//!   earlier than the one already queued; a later deadline is picked up when that event fires,
//!   which then only re-arms it (the endpoint had no input since it was last serviced). Stale
//!   events are recognised by a generation number.
//! - The run ends when every flow is done (its source stopped, nothing pending, all written
//!   bytes acknowledged, and for finite sources the FIN acknowledged — or the connection
//!   died), or at the drain bound [`drain_bound`] after `duration`.

#[cfg(test)]
mod calendar_tests;
#[cfg(test)]
mod done_tests;
#[cfg(test)]
mod early_timer_tests;
mod flow_end;
mod histogram_thread;
mod keep;
mod net;
mod prefetch;
mod shared_config;
mod window_trace;

use crate::app::Source;
use crate::event::{EventKind, EventQueue};
use crate::pcap_out::{CaptureOptions, RunCapture};
use crate::result::{FlowResult, RunResult};
use crate::rng::{stream, Component};
use crate::scenario::{Direction, Scenario};
use flow_end::{complete, flow_done, flow_status, service_may_end};
use histogram_thread::HistogramCollector;
pub use keep::Keep;
use net::Net;
use rand::Rng as _;
use shared_config::shared_configs;
use std::sync::Arc;
use std::time::Duration;
use thinlab_tcp::{Endpoint, Instant, State, Stats, TcpConfig};
use thinlab_trace::{FlowRecorder, FlowStatus};
use window_trace::{EventTrace, FlowTrace, WorstWindowTrace};
pub use window_trace::{TraceFilter, TracedWindow, WorstWindow};

/// Zero bytes: the content of every application write.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// `len` bytes of simulated payload: a slice of one static buffer, never copied or zeroed
/// (its content is never looked at; captures write zeros, as before).
fn zeros(len: usize) -> bytes::Bytes {
    bytes::Bytes::from_static(&ZEROS[..len])
}

const NS_PER_SEC: u64 = 1_000_000_000;
const SERVER_PORT: u16 = 5001;
/// Timer firings at one instant after which an endpoint is assumed stuck and pushed 1 ms on.
const SPIN_LIMIT: u32 = 10_000;

/// How long after `duration` a run may drain: max(120 s, 2 × the largest `rto_max`).
pub fn drain_bound(s: &Scenario) -> Duration {
    Duration::from_secs(120).max(s.max_rto_max().saturating_mul(2))
}

/// Runs `s` with `seed` (the scenario's seed, or seed + repetition).
pub fn run(s: &Scenario, seed: u64) -> RunResult {
    run_observed(s, seed, &mut |_| {})
}

/// Like [`run`], keeping every write's record in `FlowResult::records.writes` (memory grows
/// with the number of writes). [`run`] folds the records of writes that reached every
/// milestone into exact histograms as it goes (`thinlab_trace::FlowRecorder::compacting`);
/// every metric is the same either way.
pub fn run_keeping_writes(s: &Scenario, seed: u64) -> RunResult {
    let keep = Keep {
        all_writes: true,
        ..Keep::default()
    };
    run_keeping(s, seed, keep, &mut |_| {})
}

/// Like [`run_observed`], keeping what `keep` asks for.
pub fn run_keeping(
    s: &Scenario,
    seed: u64,
    keep: Keep<'_>,
    on_progress: &mut dyn FnMut(Duration),
) -> RunResult {
    let mut sim = Sim::new(s, seed);
    keep.apply(&mut sim);
    sim.run(on_progress)
}

/// What flows `windows` (flow, from, to) did, each between its `from` and `to`, as far as
/// `filter` keeps it: what a sequence diagram of that window draws. The run stops after the
/// last window's end (what happens in a run does not depend on what comes later), so its other
/// results are not returned.
pub fn run_traced(
    s: &Scenario,
    seed: u64,
    windows: &[(usize, Duration, Duration)],
    filter: TraceFilter,
) -> Vec<TracedWindow> {
    let mut sim = Sim::new(s, seed);
    let logs: Vec<TraceLog> = windows.iter().map(|_| TraceLog::default()).collect();
    for (&(flow, from, to), log) in windows.iter().zip(&logs) {
        if let Some(fl) = sim.flows.get_mut(flow) {
            fl.trace.get_or_insert_default().windows.push(EventTrace {
                from: from.as_nanos() as u64,
                to: to.as_nanos() as u64,
                filter,
                log: log.clone(),
            });
        }
    }
    sim.stop_after = windows.iter().map(|w| w.2.as_nanos() as u64).max();
    sim.run(&mut |_| {});
    logs.into_iter()
        .map(|log| std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner())))
        .collect()
}

/// Like [`run`], calling `on_progress` with the simulated time at most once per simulated second.
pub fn run_observed(s: &Scenario, seed: u64, on_progress: &mut dyn FnMut(Duration)) -> RunResult {
    Sim::new(s, seed).run(on_progress)
}

/// Like [`run_observed`], writing pcap files of the flows with `capture = true` (or of every
/// flow with `opts.all_flows`) into `opts.dir` ([`crate::pcap_out`]). Capturing does not change
/// the run. Fails if a file cannot be created or written.
pub fn run_captured(
    s: &Scenario,
    seed: u64,
    opts: &CaptureOptions,
    on_progress: &mut dyn FnMut(Duration),
) -> std::io::Result<RunResult> {
    run_captured_keeping(s, seed, opts, Keep::default(), on_progress)
}

/// [`run_captured`], keeping what `keep` asks for ([`run_keeping`]).
pub fn run_captured_keeping(
    s: &Scenario,
    seed: u64,
    opts: &CaptureOptions,
    keep: Keep<'_>,
    on_progress: &mut dyn FnMut(Duration),
) -> std::io::Result<RunResult> {
    let mut sim = Sim::new(s, seed);
    keep.apply(&mut sim);
    let flows: Vec<_> = s
        .flows
        .iter()
        .zip(&sim.flows)
        .map(|(f, fl)| (f.name.clone(), f.capture, fl.sender))
        .collect();
    sim.capture = Some(Box::new(RunCapture::create(opts, &flows)?));
    let mut capture = None;
    let result = sim.run_with(on_progress, &mut capture);
    capture.map_or(Ok(()), |c: Box<RunCapture>| c.finish())?;
    Ok(result)
}

#[derive(Default)]
struct TimerSlot {
    generation: u32,
    /// Deadline of the valid timer event in the queue, if any.
    scheduled: Option<u64>,
    spin_at: u64,
    spin_count: u32,
}

/// Where [`run_traced`] collects a window.
type TraceLog = std::sync::Arc<std::sync::Mutex<TracedWindow>>;

// In declaration order (repr(C)): what every event reads first, the flow's start and end times
// last (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
struct FlowSim {
    /// Trace windows kept for [`run_traced`] and [`run_keeping`] (`None`: the hot
    /// path pays one branch).
    trace: Option<Box<FlowTrace>>,
    /// Side (0 client, 1 server) whose endpoint sends the data.
    sender: usize,
    /// Stream offset of the next byte the application issues.
    issued: u64,
    /// Issued bytes not yet accepted by the endpoint.
    pending: u64,
    /// The source starts when the data sender's connection is established.
    source_started: bool,
    done: bool,
    closed: bool,
    timers: [TimerSlot; 2],
    source: Source,
    /// [client, server]
    eps: [Option<Endpoint>; 2],
    recorder: FlowRecorder,
    /// When the data sender's connection was established (the source started).
    established_at: Option<u64>,
    /// When the flow became done (complete or dead).
    done_at: Option<u64>,
    start: u64,
}

struct Sim<'a> {
    s: &'a Scenario,
    seed: u64,
    q: EventQueue,
    net: Net,
    flows: Vec<FlowSim>,
    done: usize,
    stop: u64,
    /// pcap files being written (`None`: no capture, the hot path pays one branch).
    capture: Option<Box<RunCapture>>,
    /// Stop after the events of this time ([`run_traced`]: its windows are over).
    stop_after: Option<u64>,
    /// Prefetch the next event's state (many flows: their state exceeds the caches).
    prefetch: bool,
    /// Builds the retired writes' histograms beside the run ([`Keep::histograms_on_thread`]).
    histograms: Option<HistogramCollector>,
    /// Each flow's TCP configuration, one allocation for consecutive flows with equal ones.
    configs: Vec<Arc<TcpConfig>>,
    /// Tests: service the endpoint in full on a timer event whose deadline moved later, as
    /// before such events only re-armed the timer.
    #[cfg(test)]
    service_early_timers: bool,
    /// Tests: every service asks whether the flow is done, as before only the sender's and the
    /// client's did.
    #[cfg(test)]
    every_service_asks_done: bool,
}

/// Flows from which the event queue keeps far events in a calendar (`EventQueue::with_calendar`)
/// when their state exceeds the last-level cache. Measured with thin streams: the heap's
/// sift-down through its lower levels was 18 % of the time at 10 000 flows, where the calendar
/// gains 10–15 %; it breaks even at 5 000 and costs 4–8 % at 300–3 000
/// (docs/performance/many-flows.md, "An event calendar for many flows").
const CALENDAR_FROM_FLOWS: usize = 4096;

/// Buckets of 2^18 ns (262 µs: a few dozen events of 10 000 thin streams) in a ring of 2^11
/// (537 ms, beyond a thin stream's retransmission timeout).
const CALENDAR_SHIFT: u32 = 18;
const CALENDAR_BITS: u32 = 11;

/// Whether the event queue takes a calendar: many flows whose state is prefetched.
/// `THINLAB_CALENDAR=on` or `off` overrides (for measuring).
fn calendar_worth_it(flows: usize, prefetch: bool) -> bool {
    match std::env::var("THINLAB_CALENDAR").as_deref() {
        Ok("on") => true,
        Ok("off") => false,
        _ => prefetch && flows >= CALENDAR_FROM_FLOWS,
    }
}

impl<'a> Sim<'a> {
    fn new(s: &'a Scenario, seed: u64) -> Sim<'a> {
        let prefetch = prefetch::worth_it(s.flows.len());
        let calendar =
            calendar_worth_it(s.flows.len(), prefetch).then_some((CALENDAR_SHIFT, CALENDAR_BITS));
        Self::with_queue(s, seed, prefetch, calendar)
    }

    /// [`new`](Self::new) with the choice of prefetch and of the event calendar's
    /// `(shift, bits)` made.
    fn with_queue(
        s: &'a Scenario,
        seed: u64,
        prefetch: bool,
        calendar: Option<(u32, u32)>,
    ) -> Sim<'a> {
        let stop = s.duration.as_nanos() as u64;
        let mut q = EventQueue::with_capacity(1024);
        if let Some((shift, bits)) = calendar {
            q = q.with_calendar(shift, bits);
        }
        let flows = s
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let start = f.start.as_nanos() as u64;
                q.push(start, EventKind::FlowStart { flow: i as u32 });
                q.push_lane(
                    net::SOURCE_STOP_LANE,
                    stop,
                    EventKind::SourceStop { flow: i as u32 },
                );
                FlowSim {
                    eps: [None, None],
                    trace: None,
                    timers: Default::default(),
                    source: Source::new(
                        f.app.clone(),
                        stream(seed, Component::App(i as u32)),
                        stop,
                    ),
                    recorder: FlowRecorder::compacting().counting_rdb_repairs(),
                    sender: if f.direction == Direction::Forward {
                        0
                    } else {
                        1
                    },
                    issued: 0,
                    pending: 0,
                    closed: false,
                    source_started: false,
                    established_at: None,
                    done: false,
                    done_at: None,
                    start,
                }
            })
            .collect();
        Sim {
            s,
            seed,
            q,
            net: Net::new(s, seed),
            flows,
            done: 0,
            stop,
            capture: None,
            stop_after: None,
            prefetch,
            histograms: None,
            configs: shared_configs(s),
            #[cfg(test)]
            service_early_timers: false,
            #[cfg(test)]
            every_service_asks_done: false,
        }
    }

    fn run(self, on_progress: &mut dyn FnMut(Duration)) -> RunResult {
        self.run_with(on_progress, &mut None)
    }

    /// Runs to the end; the capture (if any) is handed back through `capture`.
    fn run_with(
        mut self,
        on_progress: &mut dyn FnMut(Duration),
        capture: &mut Option<Box<RunCapture>>,
    ) -> RunResult {
        let end_limit = self
            .stop
            .saturating_add(drain_bound(self.s).as_nanos() as u64);
        let mut now = 0u64;
        let mut events = 0u64;
        let mut drain_hit = false;
        let mut next_progress = NS_PER_SEC;
        while let Some(ev) = self.q.pop() {
            if ev.time > end_limit {
                drain_hit = true;
                now = end_limit;
                break;
            }
            if self.stop_after.is_some_and(|t| ev.time > t) {
                break;
            }
            now = ev.time;
            events += 1;
            if self.prefetch {
                self.prefetch_next();
            }
            if now >= next_progress {
                on_progress(Duration::from_nanos(now));
                next_progress = (now / NS_PER_SEC + 1) * NS_PER_SEC;
            }
            match ev.kind {
                EventKind::FlowStart { flow } => self.flow_start(now, flow as usize),
                EventKind::AppTick { flow } => self.app_tick(now, flow as usize),
                EventKind::SourceStop { flow } => {
                    let f = &mut self.flows[flow as usize];
                    f.source.stop();
                    let side = f.sender;
                    self.service(now, flow as usize, side);
                }
                EventKind::Arrive { packet } => {
                    if let Some(d) = self.net.arrive(now, packet, &mut self.q) {
                        let side = net::arrives_at(d.dir);
                        let f = d.flow as usize;
                        if let Some(ep) = self.flows[f].eps[side].as_mut() {
                            if let Some(c) = self.capture.as_deref_mut() {
                                c.arrived(f, side, now, &d.seg);
                            }
                            ep.handle_segment(Instant::from_nanos(now), d.seg);
                            self.service(now, f, side);
                        }
                    }
                }
                EventKind::Timer {
                    endpoint,
                    generation,
                } => self.timer(now, endpoint as usize, generation),
            }
            if self.done == self.flows.len() {
                break;
            }
        }
        *capture = self.capture.take();
        self.finish(now, events, drain_hit)
    }

    fn flow_start(&mut self, now: u64, f: usize) {
        let mut cfg = TcpConfig::clone(&self.configs[f]);
        let mut isn = stream(self.seed, Component::Isn(f as u32));
        // The congestion controller's draws (PERT): stream 1 of the flow's ISN generator, so the
        // ISNs (stream 0) are unchanged.
        let mut cc_rng = isn.clone();
        cc_rng.set_stream(1);
        cfg.cc_seed = cc_rng.gen();
        let t = Instant::from_nanos(now);
        let client_port = 32768 + (f % 28000) as u16;
        let fl = &mut self.flows[f];
        let mut server = Endpoint::listen(cfg.clone(), SERVER_PORT, isn.gen());
        let mut client = Endpoint::connect(t, cfg, client_port, SERVER_PORT, isn.gen());
        server.share_config(&self.configs[f]);
        client.share_config(&self.configs[f]);
        fl.eps = [Some(client), Some(server)];
        fl.recorder.on_connect(t);
        self.service(now, f, 1);
        self.service(now, f, 0);
    }

    fn app_tick(&mut self, now: u64, f: usize) {
        let fl = &mut self.flows[f];
        let next = {
            let FlowSim {
                source,
                recorder,
                trace,
                issued,
                pending,
                ..
            } = fl;
            source.tick(now, &mut |b| {
                issue(recorder, trace, issued, pending, now, b)
            })
        };
        if let Some(n) = next {
            self.q.push(n, EventKind::AppTick { flow: f as u32 });
        }
        let side = fl.sender;
        self.service(now, f, side);
    }

    fn timer(&mut self, now: u64, ep_id: usize, generation: u32) {
        let (f, side) = (ep_id / 2, ep_id % 2);
        let fl = &mut self.flows[f];
        let slot = &mut fl.timers[side];
        if slot.generation != generation {
            return;
        }
        slot.scheduled = None;
        let Some(ep) = fl.eps[side].as_mut() else {
            return;
        };
        match ep.poll_timeout() {
            Some(d) if d.as_nanos() <= now => {
                if slot.spin_at == now {
                    slot.spin_count += 1;
                } else {
                    slot.spin_at = now;
                    slot.spin_count = 0;
                }
                if slot.spin_count > SPIN_LIMIT {
                    // The endpoint does not move its deadline: do not hang the run.
                    arm_timer(slot, Some(now + 1_000_000), now, ep_id, &mut self.q);
                    return;
                }
                ep.handle_timeout(Instant::from_nanos(now));
                self.service(now, f, side);
            }
            // Queued for a deadline that has since moved later or gone (an ACK or a send
            // re-armed or stopped the timer): the endpoint had no input since it was last
            // serviced, so it has nothing to send and no event to record; only its timer is
            // re-armed.
            later => {
                #[cfg(test)]
                {
                    early_timer_tests::EARLY.with(|n| n.set(n.get() + 1));
                    if self.service_early_timers {
                        return self.service(now, f, side);
                    }
                }
                let later = later.map(Instant::as_nanos);
                if let Some(w) = fl.trace.as_deref_mut().and_then(|t| t.worst.as_mut()) {
                    update_worst_window(w, &fl.recorder, now);
                }
                arm_timer(&mut fl.timers[side], later, now, ep_id, &mut self.q);
            }
        }
    }

    /// After any input to endpoint `side` of flow `f`: read, write, transmit, record events,
    /// re-arm the timer, check whether the flow is done.
    fn service(&mut self, now: u64, f: usize, side: usize) {
        let Sim {
            flows,
            net,
            q,
            done,
            capture,
            ..
        } = self;
        let fl = &mut flows[f];
        let t = Instant::from_nanos(now);
        let is_sender = side == fl.sender;
        let FlowSim {
            eps,
            timers,
            source,
            recorder,
            issued,
            pending,
            closed,
            source_started,
            established_at,
            trace,
            ..
        } = fl;
        let Some(ep) = eps[side].as_mut() else { return };
        while ep.read().is_some() {}
        if is_sender
            && !*source_started
            && matches!(ep.state(), State::Established | State::CloseWait)
        {
            // The application starts writing once its connection is established, as streamzero and
            // tracepump did (Evensen (2008) §2.3) and as a server does after accept().
            *source_started = true;
            *established_at = Some(now);
            if let Some(n) = source.start(now, &mut |b| {
                issue(recorder, trace, issued, pending, now, b)
            }) {
                q.push(n, EventKind::AppTick { flow: f as u32 });
            }
        }
        if is_sender && *source_started {
            // A bulk writer sleeps until the socket is writable in Linux's sense
            // (`sk_stream_is_writeable`: free space ≥ half of what is queued), then fills it.
            if source.is_bulk() {
                let queued = ep.bytes_unacked();
                let free = (ep.config().send_buffer as u64).saturating_sub(queued);
                let writable = free > 0 && free >= queued / 2;
                while writable && source.bulk_budget() > 0 {
                    let budget = source.bulk_budget();
                    let chunk = budget.min(ZEROS.len() as u64) as usize;
                    match ep.write_bytes(t, zeros(chunk)) {
                        Ok(n) if n > 0 => {
                            note_write(recorder, trace, now, *issued, *issued + n as u64);
                            *issued += n as u64;
                            source.bulk_wrote(n as u64);
                            if n < chunk {
                                break;
                            }
                        }
                        _ => break,
                    }
                }
            } else {
                while *pending > 0 {
                    let chunk = (*pending).min(ZEROS.len() as u64) as usize;
                    match ep.write_bytes(t, zeros(chunk)) {
                        Ok(n) => {
                            *pending -= n as u64;
                            if n < chunk {
                                break;
                            }
                        }
                        Err(_) => break,
                    }
                }
            }
            if source.closes() && source.finished() && *pending == 0 && !*closed {
                ep.close(t);
                *closed = true;
                recorder.on_close();
            }
        }
        let dir = net::sent_by(side);
        while let Some(seg) = ep.poll_transmit(t) {
            if let Some(c) = capture.as_deref_mut() {
                c.sent(f, side, now, &seg);
            }
            net.send(now, f as u32, dir, seg, q);
        }
        ep.drain_events(|ev| {
            if let Some(tr) = trace.as_deref_mut() {
                tr.event(now, is_sender, ev);
            }
            if is_sender {
                recorder.on_sender_event(ev);
            } else {
                recorder.on_receiver_event(ev);
            }
        });
        if let Some(w) = trace.as_deref_mut().and_then(|t| t.worst.as_mut()) {
            update_worst_window(w, recorder, now);
        }
        let deadline = ep.poll_timeout().map(Instant::as_nanos);
        arm_timer(&mut timers[side], deadline, now, 2 * f + side, q);
        // Only a service that can change the answer asks whether the flow is done: asking would
        // read the sender's lines, which the prefetch does not fetch for the receiver's events
        // (docs/performance/many-flows.md, "Misses perf could still point at"). Debug builds check
        // that the answer is indeed unchanged.
        let may_change = service_may_end(fl, side);
        #[cfg(test)]
        let may_change = may_change || self.every_service_asks_done;
        debug_assert!(may_change || fl.done || !flow_done(fl));
        if may_change && !fl.done && flow_done(fl) {
            fl.done = true;
            fl.done_at = Some(now);
            *done += 1;
        }
    }

    fn finish(mut self, now: u64, events: u64, drain_bound_hit: bool) -> RunResult {
        let end = Instant::from_nanos(now);
        let mut latencies = self.histograms.take().map(HistogramCollector::finish);
        let stop = self.stop;
        let links = self.net.link_reports();
        let drops = self.net.drops();
        let flows = self
            .flows
            .into_iter()
            .enumerate()
            .map(|(i, fl)| {
                let completed = complete(&fl) && fl.recorder.records().bytes_delivered == fl.issued;
                let stats = |side: usize| {
                    fl.eps[side]
                        .as_ref()
                        .map(|e| e.stats().clone())
                        .unwrap_or_default()
                };
                let sender_stats: Stats = stats(fl.sender);
                let receiver_stats: Stats = stats(1 - fl.sender);
                let (status, status_reason) = flow_status(&fl, stop, drain_bound_hit);
                let fl_done_at = fl.done_at;
                let mut rec = fl.recorder;
                rec.set_spurious_retransmissions(sender_stats.spurious_retransmissions);
                let mut records = rec.finish();
                if let Some(l) = latencies.as_mut() {
                    records.retired.set_latencies(std::mem::take(&mut l[i]));
                }
                let worst = records.series.as_ref().and_then(|s| s.worst());
                let worst_window = fl
                    .trace
                    .and_then(|t| t.worst)
                    .and_then(|w| w.finish(worst))
                    .map(Box::new);
                // Undelivered writes are censored at the end of the run; a completed flow has
                // none, and its record ends when it did (independent of the other flows).
                records.observed_until = Some(match status {
                    FlowStatus::Completed => Instant::from_nanos(fl_done_at.unwrap_or(now)),
                    _ => end,
                });
                // Active time: connect → last delivery (the end of the run if none), so that
                // goodput counts only what was delivered within it (never above the link rate).
                let active_end = records.last_delivery.map_or(now, |t| t.as_nanos());
                let (dropped_loss, dropped_queue) = self.net.flow_drops(i);
                FlowResult {
                    name: self.s.flows[i].name.clone(),
                    records,
                    duration: Duration::from_nanos(active_end.saturating_sub(fl.start)),
                    sender_stats,
                    receiver_stats,
                    dropped_loss,
                    dropped_queue,
                    completed,
                    status,
                    status_reason,
                    worst_window,
                }
            })
            .collect();
        RunResult {
            flows,
            end_time: end,
            events_processed: events,
            drain_bound_hit,
            drops,
            links,
        }
    }
}

/// Queue endpoint `ep_id`'s timer event for `deadline` (ns; `None`: no timer) unless an event
/// at or before it is already queued: a later deadline is picked up when that event fires.
#[inline(always)]
fn arm_timer(
    slot: &mut TimerSlot,
    deadline: Option<u64>,
    now: u64,
    ep_id: usize,
    q: &mut EventQueue,
) {
    if let Some(d) = deadline {
        let d = d.max(now);
        if !matches!(slot.scheduled, Some(s) if s <= d) {
            slot.generation = slot.generation.wrapping_add(1);
            slot.scheduled = Some(d);
            q.push(
                d,
                EventKind::Timer {
                    endpoint: ep_id as u32,
                    generation: slot.generation,
                },
            );
        }
    }
}

/// After the recorder took its events at `now`: tell the worst-window trace how many writes the
/// series has taken, and how to find its worst write and the oldest write it has not taken yet
/// (asked only when needed: [`WorstWindowTrace::update`]).
#[cold]
#[inline(never)]
fn update_worst_window(w: &mut WorstWindowTrace, recorder: &FlowRecorder, now: u64) {
    let rec = recorder.records();
    let series = rec.series.as_ref();
    w.update(
        now,
        series.map_or(0, |s| s.count()),
        || series.and_then(|s| s.worst()),
        || rec.writes.first().map(|w| w.write_time.as_nanos()),
    );
}

/// The application issues a write of `bytes`: one record covering all of it, queued as pending.
fn issue(
    rec: &mut FlowRecorder,
    trace: &mut Option<Box<FlowTrace>>,
    issued: &mut u64,
    pending: &mut u64,
    now: u64,
    bytes: u64,
) {
    note_write(rec, trace, now, *issued, *issued + bytes);
    *issued += bytes;
    *pending += bytes;
}

/// The application wrote `[start, end)` at `now`: recorded, and traced if in a traced window.
fn note_write(
    rec: &mut FlowRecorder,
    trace: &mut Option<Box<FlowTrace>>,
    now: u64,
    start: u64,
    end: u64,
) {
    rec.on_write(Instant::from_nanos(now), start, end);
    if let Some(tr) = trace.as_deref_mut() {
        tr.write(now, end);
    }
}
