//! Per-write delivery records of a kernel-TCP flow, fed into the same
//! [`thinlab_trace::FlowRecorder`] as the simulator's, from three logs on one clock:
//!
//! - the sending application's write calls (exact write time and stream range);
//! - the receiving application's reads (exact time each range became the application's:
//!   `Delivered`);
//! - the packets the emulator saw at the TUN devices ([`PktEvent`]): data leaving the
//!   sender's host (`Sent`; its first transmission of a write gives `first_send`), data
//!   delivered into the receiver's host (`Arrived`: transport latency), and ACKs delivered
//!   into the sender's host (`Acked`).
//!
//! The logs are merged in time order as streams (at one instant: write, send, arrival,
//! delivery, ACK), times are recorded at [`RESOLUTION_NS`] (1 µs), and complete writes are
//! folded into exact histograms, so building adds nothing per packet or per write to what the
//! logs hold and the histograms are bounded by the latency range, not the number of writes.
//! Sequence numbers are unwrapped from the data sender's SYN. Which mechanism sent a
//! retransmission is invisible on the wire; like `thinlab analyze` it is classified by its
//! timing against the ACK stream with [`thinlab_trace::attribution::Attributor`] (fast, early,
//! RACK, TLP, RTO; an `rto` retransmission of the first unacknowledged byte counts as one RTO
//! expiry). The total is exact; the kernel's own counters are in `emu.json`.

use crate::emulator::PktEvent;
use crate::host_parts::{HostParts, HostPartsCollector};
use crate::spill::{Record, SpillLog, SpilledLog};
use std::time::Duration;
use thinlab_tcp::event::{Event, SendKind};
use thinlab_tcp::{seq, Instant};
use thinlab_trace::attribution::Attributor;
use thinlab_trace::{FlowRecorder, FlowRecords};

/// The resolution of the recorded times, ns. The logs hold the clock's nanoseconds, but the
/// real-time clock and scheduling are not that precise, and the exact latency histograms
/// (`FlowRecorder::compacting`) hold one entry per distinct value: at ns resolution nearly
/// every write of a long run is its own entry (tens of bytes per write), at 1 µs a run's
/// entries are bounded by its latency range (one per µs of it).
pub const RESOLUTION_NS: u64 = 1_000;

/// One application write or read: (run time ns, stream start, stream end).
pub type Span = (u64, u64, u64);

impl Record for Span {
    const SIZE: usize = 24;

    fn encode(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.0.to_le_bytes());
        b[8..16].copy_from_slice(&self.1.to_le_bytes());
        b[16..24].copy_from_slice(&self.2.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Self {
        let at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        (at(0), at(8), at(16))
    }
}

/// An application's log of its writes or reads, spilled to a temporary file as it runs
/// (24 bytes a record), so that a long run's memory does not grow with them.
pub type SpanLog = SpillLog<Span>;

/// What the applications of one flow logged.
#[derive(Debug, Default)]
pub struct AppLogs {
    pub connect: Option<u64>,
    pub writes: SpilledLog<Span>,
    pub reads: SpilledLog<Span>,
    /// The sender closed its stream after its last write (a finite source).
    pub finite: bool,
}

enum Item {
    Write(u64, u64),
    Packet(PktEvent),
    Read(u64, u64),
}

/// Builds the records of a flow whose data sender is host `sender` (0 client, 1 server).
///
/// The logs are merged as streams (each is in time order: the application's writes, its
/// reads, and the emulator's packets, taken apart into outgoing and incoming ones), so nothing
/// per packet is added to what the logs hold; the recorder folds complete writes into exact
/// histograms (`FlowRecorder::compacting`). At one instant the order is write, outgoing
/// packet, incoming packet, read, each source in its own order (as a stable sort by
/// `(time, rank)` would give).
///
/// Also returns the two parts of the writes' latency that happen in the hosts
/// ([`HostParts`]), taken from every write's final record.
pub fn build<'e, I>(
    logs: &'e AppLogs,
    events: impl Fn() -> I,
    sender: u8,
) -> (FlowRecords, HostParts)
where
    I: Iterator<Item = PktEvent> + 'e,
{
    let parts = HostPartsCollector::default();
    let mut rec = FlowRecorder::compacting().with_sink(parts.sink());
    if let Some(c) = logs.connect {
        rec.on_connect(Instant::from_nanos(c - c % RESOLUTION_NS));
    }
    let mut w = Wire::default();
    // the emulator's log is in time order (it stamps each packet with its monotonic clock)
    let mut sources: [Box<dyn Iterator<Item = (u64, Item)> + 'e>; 4] = [
        sorted(&logs.writes, Item::Write),
        Box::new(events().filter(|p| p.out).map(|p| (p.t, Item::Packet(p)))),
        Box::new(events().filter(|p| !p.out).map(|p| (p.t, Item::Packet(p)))),
        sorted(&logs.reads, Item::Read),
    ];
    let mut heads: Vec<Option<(u64, Item)>> = sources.iter_mut().map(|s| s.next()).collect();
    // the source whose head comes first: earliest time, then lowest rank (= source index)
    while let Some(i) = (0..heads.len())
        .filter(|&i| heads[i].is_some())
        .min_by_key(|&i| heads[i].as_ref().map(|h| h.0))
    {
        let (t, item) = heads[i].take().expect("chosen source has a head");
        heads[i] = sources[i].next();
        let at = Instant::from_nanos(t - t % RESOLUTION_NS);
        match item {
            Item::Write(s, e) => rec.on_write(at, s, e),
            Item::Read(s, e) => rec.on_receiver_event(&Event::Delivered {
                at,
                start: s,
                end: e,
            }),
            Item::Packet(p) => w.packet(&mut rec, at, &p, sender),
        }
    }
    if logs.finite {
        rec.on_close();
    }
    let records = rec.finish();
    (records, parts.finish())
}

/// A log's spans as items in time order: streamed when already sorted (the logs are), else
/// sorted in memory (a stable sort, which keeps the order of equal times).
fn sorted<'a>(
    log: &'a SpilledLog<Span>,
    item: fn(u64, u64) -> Item,
) -> Box<dyn Iterator<Item = (u64, Item)> + 'a> {
    let mut last = 0;
    let items = move || log.iter().map(move |(t, s, e)| (t, item(s, e)));
    if log
        .iter()
        .all(|(t, _, _)| std::mem::replace(&mut last, t) <= t)
    {
        Box::new(items())
    } else {
        let mut v: Vec<_> = items().collect();
        v.sort_by_key(|(t, _)| *t);
        Box::new(v.into_iter())
    }
}

/// Sequence-space state of the data direction.
#[derive(Default)]
struct Wire {
    isn: Option<u32>,
    highest: u64,
    una: u64,
    last_ack_at: Option<u64>,
    /// (acknowledgment number, window) of the previous ACK: the next identical one is a
    /// duplicate.
    last_ack_wire: Option<(u32, u16)>,
    first_at: Option<u64>,
    backoff: u32,
    attr: Attributor,
}

impl Wire {
    fn offset(&self, isn: u32, s: u32) -> u64 {
        seq::from_wire(isn, s, self.highest).max(0) as u64
    }

    fn packet(&mut self, rec: &mut FlowRecorder, at: Instant, p: &PktEvent, sender: u8) {
        let h = &p.h;
        let from_sender = (p.side == sender) == p.out;
        self.first_at.get_or_insert(p.t);
        if from_sender && h.syn() {
            self.isn.get_or_insert(h.seq);
        }
        let Some(isn) = self.isn else { return };
        if from_sender && h.payload_len > 0 {
            let start = self.offset(isn, h.seq);
            let end = start + u64::from(h.payload_len);
            if !p.out {
                rec.on_receiver_event(&Event::Arrived { at, start, end });
                return;
            }
            let kind = if end > self.highest {
                self.attr.new_data(p.t, end);
                if start < self.highest {
                    SendKind::Rdb
                } else {
                    SendKind::New
                }
            } else {
                let (k, _) = self.attr.classify(p.t, start, end, self.una, self.highest);
                if k == SendKind::Rto && start <= self.una {
                    self.backoff += 1;
                    let since = self.last_ack_at.or(self.first_at).unwrap_or(p.t);
                    rec.on_sender_event(&Event::RtoFired {
                        at,
                        rto: Duration::from_nanos(p.t.saturating_sub(since)),
                        backoff: self.backoff,
                    });
                }
                k
            };
            self.highest = self.highest.max(end);
            rec.on_sender_event(&Event::Sent {
                at,
                start,
                end,
                kind,
                syn: h.syn(),
                fin: h.fin(),
            });
        } else if from_sender && p.out && (h.syn() || h.fin()) {
            let kind = if h.syn() {
                SendKind::Handshake
            } else {
                SendKind::New
            };
            rec.on_sender_event(&Event::Sent {
                at,
                start: self.highest,
                end: self.highest,
                kind,
                syn: h.syn(),
                fin: h.fin(),
            });
        } else if !from_sender && !p.out && h.has_ack() {
            // An ACK delivered into the sender's host.
            let a = seq::from_wire(isn, h.ack, self.highest).clamp(0, self.highest as i64) as u64;
            let dup = h.payload_len == 0
                && !h.syn()
                && !h.fin()
                && self.last_ack_wire == Some((h.ack, h.window))
                && self.highest > self.una;
            let advanced = a > self.una;
            if advanced {
                self.una = a;
                self.backoff = 0;
                rec.on_sender_event(&Event::Acked { at, una: a });
            }
            self.attr.ack(p.t, self.una, advanced, dup, false);
            self.last_ack_wire = Some((h.ack, h.window));
            self.last_ack_at = Some(p.t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;
    use crate::spill::collect;

    /// Latencies that differ by nanoseconds share a 1 µs entry: the histograms stay as small
    /// as the latency range, however many writes a run makes.
    #[test]
    fn histograms_grow_with_the_latency_range_not_the_writes() {
        let n = 20_000u64;
        let writes: Vec<Span> = (0..n)
            .map(|i| (1_000_000 + i * 1_000_000 + i % 997, i, i + 1))
            .collect();
        // delivered 10 ms + 0..50 µs later, a different ns value each time
        let reads: Vec<Span> = (0..n)
            .map(|i| (11_000_000 + i * 1_000_000 + (i * 7919) % 50_000, i, i + 1))
            .collect();
        let logs = AppLogs {
            connect: Some(0),
            writes: collect(writes.iter().copied()).unwrap(),
            reads: collect(reads.iter().copied()).unwrap(),
            finite: false,
        };
        let isn = 5000u32;
        let mut events = vec![ev_ns(0, 0, true, isn, 0, 0x02, 0)];
        for (i, (w, r)) in writes.iter().zip(&reads).enumerate() {
            let seq = isn + 1 + i as u32;
            events.push(ev_ns(w.0, 0, true, seq, 0, 0x18, 1));
            events.push(ev_ns(r.0 - 1, 1, false, seq, 0, 0x18, 1));
            events.push(ev_ns(r.0 + 10_000_000, 0, false, 0, seq + 1, 0x10, 0));
        }
        events.sort_by_key(|e| e.t);
        let (r, _) = build(&logs, || events.iter().copied(), 0);
        assert_eq!(r.retired.count, n);
        let h = r.retired.latency(
            thinlab_trace::metrics::Milestone::App,
            thinlab_trace::metrics::Origin::Write,
        );
        assert_eq!(h.len(), n);
        assert!(h.distinct() <= 52, "{} entries", h.distinct());
        let (lo, hi) = (h.runs_ns().next().unwrap().0, h.runs_ns().last().unwrap().0);
        assert!(lo >= 9_999_000 && hi <= 10_050_000, "{lo} {hi}");
    }

    #[test]
    fn spans_round_trip_and_come_in_time_order() {
        let spans = [(5, 0, 10), (3, 10, 20), (5, 20, u64::MAX), (9, 1, 2)];
        let log = collect(spans).unwrap();
        assert_eq!(log.iter().collect::<Vec<_>>(), spans);
        let times: Vec<u64> = sorted(&log, Item::Write).map(|(t, _)| t).collect();
        assert_eq!(times, [3, 5, 5, 9]);
    }

    const MS: u64 = 1_000_000;
    fn at(ms: u64) -> Option<Instant> {
        Some(Instant::from_nanos(ms * MS))
    }

    fn ev(t: u64, side: u8, out: bool, seq: u32, ack: u32, flags: u8, len: u32) -> PktEvent {
        ev_ns(t * MS, side, out, seq, ack, flags, len)
    }

    /// A packet event at `t` ns.
    fn ev_ns(t: u64, side: u8, out: bool, seq: u32, ack: u32, flags: u8, len: u32) -> PktEvent {
        PktEvent {
            t,
            side,
            out,
            h: TcpHeader {
                src_port: 0,
                dst_port: 0,
                seq,
                ack,
                flags,
                window: 100,
                payload_len: len,
                ip_len: 52 + len,
            },
        }
    }

    #[test]
    fn one_lost_write_is_retransmitted_by_timer() {
        let isn = u32::MAX - 10; // wraps inside the stream
        let s = isn.wrapping_add(1);
        let logs = AppLogs {
            connect: Some(0),
            writes: collect([(100 * MS, 0, 100), (200 * MS, 100, 200)]).unwrap(),
            reads: collect([(700 * MS, 0, 200)]).unwrap(),
            finite: false,
        };
        let events = [
            ev(1, 0, true, isn, 0, 0x02, 0),
            ev(101, 0, true, s, 0, 0x18, 100), // lost
            ev(201, 0, true, s.wrapping_add(100), 0, 0x18, 100),
            ev(251, 1, false, s.wrapping_add(100), 0, 0x18, 100),
            ev(301, 0, false, 0, s, 0x10, 0),  // dupACK
            ev(600, 0, true, s, 0, 0x18, 100), // timer-driven retransmission
            ev(650, 1, false, s, 0, 0x18, 100),
            ev(701, 0, false, 0, s.wrapping_add(200), 0x10, 0),
        ];
        let (r, _) = build(&logs, || events.iter().copied(), 0);
        assert_eq!(r.writes.len(), 2);
        assert_eq!(r.writes[0].app, at(700));
        assert_eq!(r.writes[0].transport, at(650));
        assert_eq!(r.writes[1].transport, at(251));
        assert_eq!(r.writes[0].first_send, at(101));
        assert_eq!(r.writes[1].acked, at(701));
        assert_eq!(r.packets.data_packets_sent, 3);
        assert_eq!(r.packets.retrans_rto, 1);
        assert_eq!(r.packets.rto_events, 1);
        assert_eq!(r.bytes_delivered, 200);
    }

    /// The stream merge gives the records the stable sort by (time, rank) gave, on a long
    /// flow with ties between writes, sends, arrivals, ACKs and reads at one instant.
    #[test]
    fn stream_merge_equals_the_sorted_merge() {
        let isn = 1000;
        let s = isn + 1;
        let (mut writes, mut reads, mut events) = (Vec::new(), Vec::new(), Vec::new());
        events.push(ev(1, 0, true, isn, 0, 0x02, 0));
        for i in 0..500u32 {
            let t = 10 + u64::from(i) * 10;
            let (a, b) = (u64::from(i) * 100, u64::from(i + 1) * 100);
            writes.push((t * MS, a, b));
            events.push(ev(t, 0, true, s + i * 100, 0, 0x18, 100)); // sent at the write's instant
            let arrive = if i % 7 == 3 { t + 10 } else { t + 5 }; // ties with the next write
            events.push(ev(arrive, 1, false, s + i * 100, 0, 0x18, 100));
            events.push(ev(arrive + 5, 0, false, 0, s + (i + 1) * 100, 0x10, 0));
            reads.push((arrive * MS, a, b));
        }
        events.sort_by_key(|e| e.t); // the emulator's log is in time order
        let logs = AppLogs {
            connect: Some(0),
            writes: collect(writes.iter().copied()).unwrap(),
            reads: collect(reads.iter().copied()).unwrap(),
            finite: false,
        };
        let (merged, _) = build(&logs, || events.iter().copied(), 0);
        // the former way: every item in one vector, stable-sorted by (time, rank)
        let rank = |i: &Item| match i {
            Item::Write(..) => 0,
            Item::Packet(p) if p.out => 1,
            Item::Packet(_) => 2,
            Item::Read(..) => 3,
        };
        let mut items: Vec<(u64, Item)> = Vec::new();
        items.extend(writes.iter().map(|&(t, s, e)| (t, Item::Write(s, e))));
        items.extend(reads.iter().map(|&(t, s, e)| (t, Item::Read(s, e))));
        items.extend(events.iter().map(|p| (p.t, Item::Packet(*p))));
        items.sort_by_key(|(t, i)| (*t, rank(i)));
        let mut rec = FlowRecorder::new();
        rec.on_connect(Instant::ZERO);
        let mut w = Wire::default();
        for (t, item) in items {
            let at = Instant::from_nanos(t);
            match item {
                Item::Write(s, e) => rec.on_write(at, s, e),
                Item::Read(s, e) => rec.on_receiver_event(&Event::Delivered {
                    at,
                    start: s,
                    end: e,
                }),
                Item::Packet(p) => w.packet(&mut rec, at, &p, 0),
            }
        }
        let sorted = rec.finish();
        assert!(
            merged.retired.count > 400,
            "compacted: {}",
            merged.retired.count
        );
        let d = Duration::from_secs(10);
        assert_eq!(
            thinlab_trace::flow_metrics(&merged, d),
            thinlab_trace::flow_metrics(&sorted, d)
        );
        assert_eq!(merged.packets, sorted.packets);
    }
}
