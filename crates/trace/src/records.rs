//! Per-write delivery records (docs/architecture.md, thinlab-trace) built from trace events.
//!
//! Definitions (docs/spec/interface.md, "Results"): for each application write `[start, end)` of
//! the sender's stream,
//! - `first_send`: first transmission of the write's first byte;
//! - `transport`: the write's last byte first arrives at the receiving host, in any segment;
//! - `app`: the write's last byte is delivered in order to the receiving application;
//! - `acked`: the write's last byte is cumulatively acknowledged at the sender.
//!
//! Memory is one `WriteRecord` per write and nothing else per write: the milestones are found
//! by cursors over the writes (sorted by stream offset), and an arrival out of order (a range
//! above a hole) is located by binary search among the writes not yet fully arrived.

use crate::histogram::LatencyHistogram;
use crate::metrics::{write_latency_ns, Milestone, Origin};
use crate::series::LatencySeries;
use std::collections::BTreeMap;
use thinlab_tcp::event::{Event, SendKind};
use thinlab_tcp::Instant;

/// One application write and when it reached each milestone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    pub write_time: Instant,
    pub start: u64,
    pub end: u64,
    pub first_send: Option<Instant>,
    pub transport: Option<Instant>,
    pub app: Option<Instant>,
    pub acked: Option<Instant>,
}

/// Counters over the packets the sender emitted (data-carrying segments only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
// In declaration order (repr(C)): the counters of every data packet first
// (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct PacketCounters {
    pub data_packets_sent: u64,
    pub payload_bytes_sent: u64,
    /// Bytes sent for the first time (beyond the highest byte sent before).
    pub unique_bytes_sent: u64,
    /// `payload_bytes_sent - unique_bytes_sent`: retransmitted or redundantly bundled bytes.
    pub redundant_bytes_sent: u64,
    /// Packets that carried redundant (RDB) bytes together with new data.
    pub rdb_bundles: u64,
    /// Losses RDB repaired: a bundle whose redundant bytes held the receiver's next expected
    /// byte, not received before, so that its arrival advanced in-order delivery without a
    /// retransmission (or overtook a delayed original). `None` when the driver cannot tell
    /// which arrival advanced delivery (captures, the emulator): only the simulator counts it.
    pub rdb_repaired: Option<u64>,
    pub retrans_rto: u64,
    pub retrans_fast: u64,
    pub retrans_early: u64,
    pub retrans_tlp: u64,
    /// Fast retransmissions of segments RACK marked lost.
    pub retrans_rack: u64,
    /// Early retransmissions by the F-RTO threshold (`er-threshold`).
    pub retrans_er_threshold: u64,
    /// Tail loss probes of either kind (new data or a retransmission).
    pub tlp_probes: u64,
    pub rto_events: u64,
    pub spurious_retransmissions: u64,
    /// Total time between the last transmission and an RTO expiry, summed over expiries, ns.
    pub frozen_time_ns: u64,
}

impl PacketCounters {
    pub fn retransmissions(&self) -> u64 {
        self.retrans_rto
            + self.retrans_fast
            + self.retrans_rack
            + self.retrans_early
            + self.retrans_er_threshold
            + self.retrans_tlp
    }
}

/// Everything the metrics of one flow are computed from.
#[derive(Clone, Debug, Default, PartialEq)]
// In declaration order (repr(C)): what each delivery updates first, the retired writes' histograms
// (updated once per batch of writes) last (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct FlowRecords {
    pub writes: Vec<WriteRecord>,
    /// When the last byte was delivered to the receiving application.
    pub last_delivery: Option<Instant>,
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// The application latency of every delivered write, in write order, as a bounded series
    /// (when the recorder was asked for it: [`FlowRecorder::with_series`]); complete once the
    /// recorder finished.
    pub series: Option<Box<LatencySeries>>,
    pub packets: PacketCounters,
    /// When the flow's connection was initiated (connect call).
    pub connect_time: Option<Instant>,
    /// Until when the flow was observed (the end of the run), if every milestone could have
    /// been seen until then: writes that had not reached a milestone by this time enter the
    /// latency statistics as censored samples (`metrics`). `None`: no censoring.
    pub observed_until: Option<Instant>,
    /// Whether the application closed the stream after its last write (finite transfer).
    pub finite: bool,
    /// Writes a compacting recorder ([`FlowRecorder::compacting`]) no longer holds: every
    /// milestone reached, folded into counts and exact latency histograms. `writes` holds the
    /// rest, in order, after these.
    pub retired: RetiredWrites,
}

/// What is kept of writes that reached every milestone once a compacting recorder dropped them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetiredWrites {
    /// How many (all were delivered).
    pub count: u64,
    /// End offset of the last one.
    pub end: u64,
    latency: RetiredLatencies,
}

/// The exact latency histograms of retired writes, `[milestone][origin]` (app, transport, ack ×
/// write, first send).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetiredLatencies([[LatencyHistogram; 2]; 3]);

impl RetiredLatencies {
    /// The pairs the six histograms hold and the values added to them
    /// ([`LatencyHistogram::stored`], [`LatencyHistogram::len`]).
    pub fn stored_and_added(&self) -> (usize, u64) {
        self.0
            .iter()
            .flatten()
            .fold((0, 0), |(s, n), h| (s + h.stored(), n + h.len()))
    }

    /// Adds the latencies of write `w` (those of the milestones it reached).
    pub fn add(&mut self, w: &WriteRecord) {
        for m in [Milestone::App, Milestone::Transport, Milestone::Ack] {
            for o in [Origin::Write, Origin::FirstSend] {
                if let Some(ns) = write_latency_ns(w, m, o) {
                    self.0[m as usize][o as usize].add(ns);
                }
            }
        }
    }
}

impl RetiredWrites {
    /// The exact histogram of one latency of the retired writes.
    pub fn latency(&self, milestone: Milestone, origin: Origin) -> &LatencyHistogram {
        &self.latency.0[milestone as usize][origin as usize]
    }

    /// Puts in the histograms built elsewhere from the writes a recorder handed to its retire
    /// sink ([`FlowRecorder::with_retire_sink`]).
    pub fn set_latencies(&mut self, latencies: RetiredLatencies) {
        self.latency = latencies;
    }

    /// Counts `w` as retired (its latencies go to the histograms separately: here or to a retire
    /// sink).
    fn note_retired(&mut self, w: &WriteRecord) {
        self.count += 1;
        self.end = w.end;
    }
}

impl FlowRecords {
    pub fn bytes_written(&self) -> u64 {
        self.writes.last().map_or(self.retired.end, |w| w.end)
    }

    /// Writes the application made, retired or held.
    pub fn write_count(&self) -> u64 {
        self.retired.count + self.writes.len() as u64
    }

    /// Writes delivered to the receiving application (their `app` milestone is known).
    pub fn writes_delivered(&self) -> u64 {
        self.retired.count + self.writes.iter().filter(|w| w.app.is_some()).count() as u64
    }
}

/// Where a recorder hands every write's final record, in write order
/// ([`FlowRecorder::with_sink`]).
pub type WriteSink = Box<dyn FnMut(&WriteRecord) + Send>;

/// Takes each batch of writes a compacting recorder retires, in write order, to build their
/// latency histograms somewhere else ([`FlowRecorder::with_retire_sink`]).
pub type RetireSink = Box<dyn FnMut(&[WriteRecord]) + Send>;

/// A sink the recorder may hold ([`WriteSink`], [`RetireSink`]), opaque to `Debug`.
struct Opaque<T>(Option<T>);

impl<T> Default for Opaque<T> {
    fn default() -> Self {
        Opaque(None)
    }
}

impl<T> std::fmt::Debug for Opaque<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

impl Opaque<WriteSink> {
    fn take_all(&mut self, writes: &[WriteRecord]) {
        if let Some(sink) = &mut self.0 {
            writes.iter().for_each(sink);
        }
    }
}

/// Builds [`FlowRecords`] incrementally from writes and events.
#[derive(Debug, Default)]
// In declaration order (repr(C)): the recorder's cursors first, then the records
// (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct FlowRecorder {
    /// Index of the first write whose `first_send` is unknown.
    next_first_send: usize,
    /// Index of the first write not yet delivered / acknowledged.
    next_app: usize,
    next_acked: usize,
    /// Index of the first write whose last byte has not arrived yet (every earlier write's
    /// `transport` is set; later writes may have theirs set by out-of-order arrivals).
    next_transport: usize,
    /// Some write ended at or before its predecessor (never in a simulation: writes are
    /// consecutive). Arrivals then scan all writes after `next_transport` instead of searching.
    /// Beside the cursors: `maybe_retire` reads both flags on every acknowledgement.
    unsorted: bool,
    /// Retire writes that reached every milestone (`compacting`).
    compact: bool,
    highest_sent: u64,
    last_sent_at: Option<Instant>,
    /// The range of the last data segment that arrived at the receiver.
    last_arrival: Option<(u64, u64)>,
    /// RDB bundles in flight, `(start, end) → end of their redundant part`, until delivered
    /// (`rdb_repaired`). A later non-bundle transmission of the same range removes the entry.
    rdb_in_flight: BTreeMap<(u64, u64), u64>,
    /// Takes each write's record when it is retired or, still held, when the recording ends.
    sink: Opaque<WriteSink>,
    rec: FlowRecords,
    /// Builds the retired writes' histograms instead of `rec.retired` (`None`: they are built
    /// here). Last: the prefetch takes the recorder up to the histograms.
    retire_to: Opaque<RetireSink>,
}

/// A compacting recorder retires complete writes in batches of at least this many (and at
/// least half of those held), so that retiring is amortised O(1) per write.
const RETIRE_BATCH: usize = 32;

impl FlowRecorder {
    /// Prefetches the recorder's own fields an event updates: all but the retired writes'
    /// histograms, which change once per batch of writes (`thinlab_tcp::prefetch`).
    #[inline]
    pub fn prefetch_hot(&self) {
        let histograms =
            std::mem::offset_of!(FlowRecorder, rec) + std::mem::offset_of!(FlowRecords, retired);
        thinlab_tcp::prefetch::prefetch_bytes(self as *const Self, histograms);
        thinlab_tcp::prefetch::prefetch(&self.rec.retired.count);
        thinlab_tcp::prefetch::prefetch(&self.rec.retired.end);
    }

    /// Prefetches the cursors an acknowledgement moves, the flags `maybe_retire` reads on every
    /// acknowledgement (`unsorted`, `compact`: declared beside them) and the held writes'
    /// vector, not the series and histograms of [`FlowRecorder::prefetch_hot`]. This set
    /// measured −2.3 % against `prefetch_hot` at 10 000 thin streams
    /// (docs/performance/many-flows.md, "Timer events that only re-arm").
    #[inline]
    pub fn prefetch_cursors(&self) {
        let from = std::mem::offset_of!(FlowRecorder, next_acked);
        let to = std::mem::offset_of!(FlowRecorder, compact) + 1;
        thinlab_tcp::prefetch::prefetch_bytes(&self.next_acked, to - from);
        thinlab_tcp::prefetch::prefetch(&self.rec.writes);
    }

    /// Prefetches the held writes an event will look at (the cursors'), for callers that run
    /// many flows (`thinlab_tcp::prefetch`).
    #[inline]
    pub fn prefetch_buffers(&self) {
        let w = &self.rec.writes;
        for i in [self.next_transport, self.next_acked, self.next_first_send] {
            if let Some(x) = w.get(i) {
                thinlab_tcp::prefetch::prefetch(x);
            }
        }
        if let Some(x) = w.last() {
            thinlab_tcp::prefetch::prefetch(x);
        }
    }

    /// A recorder that keeps every write's record (`FlowRecords::writes` holds them all).
    pub fn new() -> Self {
        Self::default()
    }

    /// A recorder whose memory does not grow with the number of writes: writes that reached
    /// every milestone are folded into exact latency histograms (`FlowRecords::retired`); only
    /// the writes still in progress keep a record. Every metric is the same as with [`new`].
    ///
    /// [`new`]: FlowRecorder::new
    pub fn compacting() -> Self {
        FlowRecorder {
            compact: true,
            ..Self::default()
        }
    }

    /// Count the losses RDB repaired (`PacketCounters::rdb_repaired`). Only for a driver whose
    /// receiver reports each arrival and the delivery it caused together, in that order (the
    /// simulator's endpoint does).
    pub fn counting_rdb_repairs(mut self) -> Self {
        self.rec.packets.rdb_repaired = Some(0);
        self
    }

    /// Also keep the application latency series of the delivered writes, in at most
    /// `max_points` points (`FlowRecords::series`).
    pub fn with_series(mut self, max_points: usize) -> Self {
        self.rec.series = Some(Box::new(LatencySeries::new(max_points)));
        self
    }

    /// Also hand every write's final record, in write order, to `sink`: a compacting recorder
    /// as each write is retired, and the writes still held when the recording ends
    /// ([`FlowRecorder::finish`]); every write exactly once. Per-write records then need no
    /// memory here: the sink can write them out.
    pub fn with_sink(mut self, sink: WriteSink) -> Self {
        self.sink = Opaque(Some(sink));
        self
    }

    /// Hand the writes this compacting recorder retires to `sink`, in batches and in write
    /// order, instead of adding their latencies to `FlowRecords::retired`'s histograms here:
    /// whoever owns the sink builds them (on another thread, say) and puts them back with
    /// [`RetiredWrites::set_latencies`] before they are read. Counts, offsets and everything
    /// else are kept here as before.
    pub fn with_retire_sink(mut self, sink: RetireSink) -> Self {
        self.retire_to = Opaque(Some(sink));
        self
    }

    /// Retire the complete prefix of the held writes when it is large enough.
    fn maybe_retire(&mut self) {
        if !self.compact || self.unsorted {
            return;
        }
        let done = self
            .next_first_send
            .min(self.next_app)
            .min(self.next_acked)
            .min(self.next_transport);
        if done < RETIRE_BATCH || done * 2 < self.rec.writes.len() {
            return;
        }
        let retired = &mut self.rec.retired;
        let writes = &self.rec.writes[..done];
        writes.iter().for_each(|w| retired.note_retired(w));
        match &mut self.retire_to.0 {
            Some(to) => to(writes),
            None => writes.iter().for_each(|w| retired.latency.add(w)),
        }
        if let Some(series) = &mut self.rec.series {
            push_delivered(series, &self.rec.writes[..done]);
        }
        self.sink.take_all(&self.rec.writes[..done]);
        self.rec.writes.drain(..done);
        self.next_first_send -= done;
        self.next_app -= done;
        self.next_acked -= done;
        self.next_transport -= done;
    }

    pub fn on_connect(&mut self, now: Instant) {
        self.rec.connect_time.get_or_insert(now);
    }

    /// The application wrote `[start, end)` of the stream at `now`. Empty writes are ignored.
    pub fn on_write(&mut self, now: Instant, start: u64, end: u64) {
        if end <= start {
            return;
        }
        if self
            .rec
            .writes
            .last()
            .map_or(self.rec.retired.end, |w| w.end)
            >= end
            && self.rec.write_count() > 0
        {
            self.unsorted = true;
        }
        self.rec.writes.push(WriteRecord {
            write_time: now,
            start,
            end,
            first_send: None,
            transport: None,
            app: None,
            acked: None,
        });
    }

    /// The application closed the stream after its last write.
    pub fn on_close(&mut self) {
        self.rec.finite = true;
    }

    /// An event of the sending endpoint (its `Sent`, `Acked`, `RtoFired`).
    pub fn on_sender_event(&mut self, ev: &Event) {
        match *ev {
            Event::Sent {
                at,
                start,
                end,
                kind,
                syn,
                fin,
            } => {
                // Pure ACKs do not end a frozen period: only data, SYN or FIN do.
                if end > start || syn || fin {
                    self.last_sent_at = Some(at);
                }
                self.on_sent(at, start, end, kind)
            }
            Event::Acked { at, una } => {
                let writes = &mut self.rec.writes;
                while self.next_acked < writes.len() && writes[self.next_acked].end <= una {
                    writes[self.next_acked].acked = Some(at);
                    self.next_acked += 1;
                }
                self.maybe_retire();
            }
            Event::RtoFired { at, .. } => {
                self.rec.packets.rto_events += 1;
                if let Some(last) = self.last_sent_at {
                    // saturating: a corrupted capture's times can be anything
                    let frozen = (at - last).as_nanos() as u64;
                    let total = &mut self.rec.packets.frozen_time_ns;
                    *total = total.saturating_add(frozen);
                }
            }
            _ => {}
        }
    }

    /// An event of the receiving endpoint (its `Arrived`, `Delivered`).
    pub fn on_receiver_event(&mut self, ev: &Event) {
        match *ev {
            Event::Arrived { at, start, end } => {
                self.last_arrival = Some((start, end));
                // Writes whose last byte (`end - 1`) lies in [start, end) and has not arrived.
                // Writes are non-empty and sorted by offset, so their ends increase strictly.
                let writes = &mut self.rec.writes;
                if self.unsorted {
                    for w in &mut writes[self.next_transport..] {
                        if w.transport.is_none() && start < w.end && w.end <= end {
                            w.transport = Some(at);
                        }
                    }
                } else {
                    let mut i = self.next_transport;
                    if writes.get(i).is_some_and(|w| w.end <= start) {
                        i += writes[i..].partition_point(|w| w.end <= start);
                    }
                    while i < writes.len() && writes[i].end <= end {
                        if writes[i].transport.is_none() {
                            writes[i].transport = Some(at);
                        }
                        i += 1;
                    }
                }
                while self.next_transport < writes.len()
                    && writes[self.next_transport].transport.is_some()
                {
                    self.next_transport += 1;
                }
            }
            Event::Delivered { at, start, end } => {
                self.note_rdb_repair(start, end);
                self.rec.bytes_delivered += end.saturating_sub(start);
                self.rec.last_delivery = Some(at);
                let writes = &mut self.rec.writes;
                while self.next_app < writes.len() && writes[self.next_app].end <= end {
                    writes[self.next_app].app = Some(at);
                    self.next_app += 1;
                }
            }
            _ => {}
        }
    }

    /// In-order delivery advanced from `from` to `to` on the last arrival: if that was an RDB
    /// bundle whose redundant part held `from`, the bundle repaired a loss.
    fn note_rdb_repair(&mut self, from: u64, to: u64) {
        // `is_empty` first: an emptied map keeps its root node, a cache miss to read with
        // thousands of flows.
        if self.rdb_in_flight.is_empty() {
            self.last_arrival = None;
            return;
        }
        if let Some(range) = self.last_arrival.take() {
            if let Some(&redundant_end) = self.rdb_in_flight.get(&range) {
                if range.0 <= from && from < redundant_end {
                    if let Some(n) = &mut self.rec.packets.rdb_repaired {
                        *n += 1;
                    }
                }
            }
        }
        while let Some(e) = self.rdb_in_flight.first_entry() {
            if e.key().1 > to {
                break;
            }
            e.remove();
        }
    }

    /// Retransmissions the sender found spurious (from its own counters).
    pub fn set_spurious_retransmissions(&mut self, n: u64) {
        self.rec.packets.spurious_retransmissions = n;
    }

    fn on_sent(&mut self, at: Instant, start: u64, end: u64, kind: SendKind) {
        if end <= start {
            return;
        }
        let p = &mut self.rec.packets;
        let len = end - start;
        let unique = end.saturating_sub(start.max(self.highest_sent));
        p.data_packets_sent += 1;
        p.payload_bytes_sent += len;
        p.unique_bytes_sent += unique;
        p.redundant_bytes_sent += len - unique;
        if kind == SendKind::Rdb {
            let redundant_end = end.min(self.highest_sent);
            self.rdb_in_flight.insert((start, end), redundant_end);
        } else if !self.rdb_in_flight.is_empty() {
            self.rdb_in_flight.remove(&(start, end));
        }
        match kind {
            SendKind::Rdb => p.rdb_bundles += 1,
            SendKind::Rto => p.retrans_rto += 1,
            SendKind::FastRetransmit => p.retrans_fast += 1,
            SendKind::Early => p.retrans_early += 1,
            SendKind::Tlp => p.retrans_tlp += 1,
            SendKind::RackRetransmit => p.retrans_rack += 1,
            SendKind::EarlyThreshold => p.retrans_er_threshold += 1,
            _ => {}
        }
        if kind.is_probe() {
            p.tlp_probes += 1;
        }
        self.highest_sent = self.highest_sent.max(end);
        let writes = &mut self.rec.writes;
        while self.next_first_send < writes.len() && writes[self.next_first_send].start < end {
            writes[self.next_first_send].first_send = Some(at);
            self.next_first_send += 1;
        }
    }

    pub fn records(&self) -> &FlowRecords {
        &self.rec
    }

    pub fn finish(mut self) -> FlowRecords {
        if let Some(series) = &mut self.rec.series {
            push_delivered(series, &self.rec.writes);
        }
        self.sink.take_all(&self.rec.writes);
        self.rec
    }
}

/// Adds the delivered ones of `writes` to `series`, in order.
fn push_delivered(series: &mut LatencySeries, writes: &[WriteRecord]) {
    for w in writes {
        if let Some(ns) = write_latency_ns(w, Milestone::App, Origin::Write) {
            series.push(w.write_time, ns, w.end);
        }
    }
}
