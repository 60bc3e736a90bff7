//! Flow reconstruction: TCP connections out of captured packets, turned into the same
//! per-write delivery records ([`FlowRecorder`]) the simulator produces, so that
//! [`flow_metrics`] computes every metric with the same code and definitions.
//!
//! - Connections are keyed by their 4-tuple (a reused 4-tuple is taken as one connection). The
//!   *client* is the host that sent a SYN without ACK (else the source of the first packet).
//!   The *data sender* is the host that sent more payload bytes (ties: the client): the sender
//!   capture is taken at its host. Every direction that carries data is analysed as its own
//!   flow; the other direction's sender capture is the receiver capture (`at_sender` is false
//!   when only the sender capture was given: its latencies are then unknown).
//! - Sequence numbers are unwrapped to u64 stream offsets with [`thinlab_tcp::seq`], offset 0
//!   being the byte after the data sender's SYN (or, with no SYN captured, the first byte seen).
//!
//! From the **sender-side capture** (taken at the data sender's host):
//! - each data segment is a `Sent` event. It is `New` when it starts at or beyond the highest
//!   byte sent before, `Rdb` when it carries new bytes together with old ones (a bundle), and a
//!   retransmission when it carries no new byte. A capture cannot see why a retransmission was
//!   sent; it is classified by its timing against the ACK stream ([`crate::attribution`]) into
//!   `fast`, `early`, `rack`, `tlp` and `rto`, each with a confidence
//!   (`extras.retransmission_confidence`). The total `retransmissions` is exact; the split is
//!   an estimate. Each `rto` retransmission of the first unacknowledged byte is taken as one
//!   RTO expiry (`rto_events`, `frozen_time_ms`).
//! - the new bytes of each segment form one *write* whose write time is that first
//!   transmission: a capture cannot see the application's write calls, so every latency is
//!   measured from the first transmission ("latency_origin": "first-send") and the plain and
//!   `_from_send` latencies coincide.
//! - ACKs from the receiver are `Acked` events when the cumulative ACK advances.
//!
//! From the **receiver-side capture** (optional): each data segment arriving is an `Arrived`
//! event, and a `Delivered` event is emitted whenever the in-order point advances (an
//! application reading at once), at the receiver's capture time put on the sender's clock
//! ([`crate::clock`]: offset estimated from the minimum forward and reverse delays of matched
//! packets, or given). Without it, transport and application latencies are null and
//! `bytes_delivered` is unknown.
//!
//! Spurious retransmissions are not detected (0). Extra analyseTCP-style figures are in
//! [`Extras`].

use crate::attribution::{Attributor, ConfidenceCounts};
use crate::clock::{ClockCorrection, ClockEstimate, ClockSamples};
use crate::metrics::{flow_metrics, FlowMetrics, LatencyStats};
use crate::pcap::TcpPacket;
use crate::records::{FlowRecorder, FlowRecords};
use crate::status::FlowStatus;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use thinlab_tcp::event::{Event, SendKind};
use thinlab_tcp::seq;
use thinlab_tcp::Instant;

/// A data segment identical to the previous one and captured at most this long after it is
/// a duplicate made by the capture, not a retransmission.
pub const DUPLICATE_WINDOW_NS: u64 = 1_000_000;

pub use crate::attribution::ACK_CLOCKED_WINDOW_NS;

/// Packets remembered per direction for matching the two captures' clocks (first
/// transmission of each segment end, first arrival of each acknowledgment number); later ones
/// are not matched, so memory stays bounded.
pub const MAX_CLOCK_KEYS: usize = 1 << 20;

/// The unordered 4-tuple of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnKey(pub SocketAddr, pub SocketAddr);

impl ConnKey {
    pub fn new(a: SocketAddr, b: SocketAddr) -> Self {
        if a <= b {
            ConnKey(a, b)
        } else {
            ConnKey(b, a)
        }
    }
}

fn endpoints(p: &TcpPacket) -> (SocketAddr, SocketAddr) {
    (
        SocketAddr::new(p.src, p.seg.src_port),
        SocketAddr::new(p.dst, p.seg.dst_port),
    )
}

/// `ADDR:PORT` with IPv6 addresses in brackets.
pub fn fmt_addr(a: &SocketAddr) -> String {
    match a.ip() {
        IpAddr::V4(_) => a.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]:{}", a.port()),
    }
}

/// Figures of analyseTCP that are not flow metrics of docs/spec/interface.md.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Extras {
    /// Packets of the connection in the sender capture (both directions).
    pub packets: u64,
    /// Duplicate ACKs received by the sender: no data, no SYN/FIN/RST, same acknowledgment
    /// number and window as the previous ACK, data outstanding (as Wireshark counts them).
    pub dupacks: u64,
    /// Retransmitted segments / data segments sent.
    pub estimated_loss_rate: Option<f64>,
    /// Data segments seen at the sender but not at the receiver (receiver capture only).
    pub lost_packets: Option<u64>,
    /// `lost_packets / data_packets_sent`.
    pub loss_rate: Option<f64>,
    /// Packets the receiver sent (receiver capture) that the sender capture does not have, and
    /// their share: the loss rate of the ACK direction (receiver capture only).
    pub reverse_lost_packets: Option<u64>,
    pub reverse_loss_rate: Option<f64>,
    /// Burstiness of the data direction's losses (receiver capture only): the share of data
    /// segments lost when the one sent before was lost too, and the mean run of consecutive
    /// losses (a Gilbert-Elliott chain with `r = 1 / mean_loss_burst`).
    pub loss_after_loss: Option<f64>,
    pub mean_loss_burst: Option<f64>,
    /// Time between consecutive data segments sent, ms.
    pub inter_transmission_ms: LatencyStats,
    /// Data segments outstanding (sent, not cumulatively acknowledged) when a data segment is
    /// sent, including it. The statistics fields are counts, not milliseconds.
    pub packets_in_flight: LatencyStats,
    /// Exact duplicates of the previous data segment (same sequence number, length,
    /// acknowledgment, flags, window and timestamp option, captured within
    /// [`DUPLICATE_WINDOW_NS`]): a capture artefact, not retransmissions, and left out of
    /// every other count.
    pub duplicates: u64,
    /// Data segments starting above the highest byte sent before: bytes the sender capture
    /// missed (it should see every byte the sender sends).
    pub sequence_gaps: u64,
    pub sequence_gap_bytes: u64,
    /// Connection seen from its SYN.
    pub syn_seen: bool,
    /// The data sender sent a FIN.
    pub fin_seen: bool,
    /// Retransmissions by how sure their cause is ([`crate::attribution`]).
    pub retransmission_confidence: ConfidenceCounts,
}

/// One analysed connection.
#[derive(Clone, Debug)]
pub struct ConnectionAnalysis {
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Host whose data is analysed, and its peer.
    pub sender: SocketAddr,
    pub receiver: SocketAddr,
    /// Whether the receiver capture had packets of this connection.
    pub receiver_matched: bool,
    /// Whether the packets were seen at this flow's data sender (false: a direction analysed
    /// from the capture at its receiver only; its latencies and causes are unknown).
    pub at_sender: bool,
    /// The receiver capture's clock against the sender capture's, when both were matched.
    pub clock: Option<ClockCorrection>,
    pub clock_estimate: Option<ClockEstimate>,
    pub records: FlowRecords,
    pub metrics: FlowMetrics,
    pub extras: Extras,
    /// First and last packet of the connection in the sender capture, ns.
    pub first_ns: u64,
    pub last_ns: u64,
}

impl ConnectionAnalysis {
    /// `SENDER-RECEIVER`, e.g. `10.0.0.1:32768-10.128.0.1:5001`.
    pub fn id(&self) -> String {
        format!("{}-{}", fmt_addr(&self.sender), fmt_addr(&self.receiver))
    }
    /// Whether `sel` (`A:P-B:P`, either order) names this connection.
    pub fn matches(&self, sel: &str) -> bool {
        let (a, b) = (fmt_addr(&self.sender), fmt_addr(&self.receiver));
        sel == format!("{a}-{b}") || sel == format!("{b}-{a}")
    }
    /// Whether `sel` is this flow's id (`SENDER-RECEIVER`).
    pub fn matches_exact(&self, sel: &str) -> bool {
        sel == self.id()
    }
}

/// Packets of each connection (indices into the capture), connections in order of first packet.
pub fn group(packets: &[TcpPacket]) -> Vec<(ConnKey, Vec<usize>)> {
    let mut index: HashMap<ConnKey, usize> = HashMap::new();
    let mut out: Vec<(ConnKey, Vec<usize>)> = Vec::new();
    for (i, p) in packets.iter().enumerate() {
        let (s, d) = endpoints(p);
        let k = ConnKey::new(s, d);
        let n = *index.entry(k).or_insert_with(|| {
            out.push((k, Vec::new()));
            out.len() - 1
        });
        out[n].1.push(i);
    }
    out
}

/// Analyses every connection of the sender capture, with the receiver capture if given
/// (packets in memory; [`Analyzer`] does the same on streams).
pub fn analyze(sender: &[TcpPacket], receiver: Option<&[TcpPacket]>) -> Vec<ConnectionAnalysis> {
    analyze_with_clock(sender, receiver, None)
}

/// [`analyze`] with the receiver capture's clock minus the sender capture's given (ms; `None`:
/// estimated), e.g. `Some(0.0)` for two captures stamped by one clock.
pub fn analyze_with_clock(
    sender: &[TcpPacket],
    receiver: Option<&[TcpPacket]>,
    clock_offset_ms: Option<f64>,
) -> Vec<ConnectionAnalysis> {
    let mut a = if receiver.is_some() {
        Analyzer::new()
    } else {
        Analyzer::sender_only()
    };
    for p in sender {
        a.sender_packet(p);
    }
    let Some(rx) = receiver else {
        return a.finish_sender(Select::All).finish();
    };
    let primaries = a.primaries();
    let mut fwd = a.finish_sender(Select::Primary);
    let mut b = Analyzer::reverse_of(primaries.clone());
    for p in rx {
        fwd.receiver_packet(p);
        b.sender_packet(p);
    }
    let mut rev = b.finish_sender(Select::SecondaryOf(&primaries));
    if let Some(ms) = clock_offset_ms {
        fwd.set_clock_offset_ms(ms);
        rev.set_clock_offset_ms(-ms);
    }
    for p in sender {
        rev.receiver_packet(p);
    }
    merge(fwd.finish(), rev.finish())
}

/// The flows of both passes, each connection's directions together, in the order of the
/// first pass.
pub fn merge(
    fwd: Vec<ConnectionAnalysis>,
    rev: Vec<ConnectionAnalysis>,
) -> Vec<ConnectionAnalysis> {
    let mut by_key: HashMap<ConnKey, Vec<ConnectionAnalysis>> = HashMap::new();
    for c in rev {
        by_key
            .entry(ConnKey::new(c.sender, c.receiver))
            .or_default()
            .push(c);
    }
    let mut out = Vec::new();
    for c in fwd {
        let k = ConnKey::new(c.sender, c.receiver);
        out.push(c);
        out.extend(by_key.remove(&k).unwrap_or_default());
    }
    out
}

/// Which directions [`Analyzer::finish_sender`] keeps.
pub enum Select<'a> {
    /// Each connection's data sender (capture taken at its host), and every other direction
    /// that carries data, analysed from the same capture (at its receiver: `at_sender` false).
    All,
    /// Only each connection's data sender.
    Primary,
    /// The directions carrying data whose sender is not the data sender named in the map (a
    /// receiver capture's view of the reverse directions); connections not in it are dropped.
    SecondaryOf(&'a HashMap<ConnKey, SocketAddr>),
}

/// Streaming flow reconstruction: feed the sender capture's packets in file order
/// ([`Analyzer::sender_packet`]), then the receiver capture's ([`ReceiverPass`]). Memory is
/// per-connection state (bounded by the data in flight) plus the per-write records and two
/// per-data-segment samples (inter-transmission time, packets in flight), never the packets.
///
/// Which host is the data sender is only known at the end of the sender capture, so both
/// directions of every connection are analysed as if they were the data direction and the one
/// that sent fewer payload bytes is dropped at [`Analyzer::finish_sender`].
#[derive(Default)]
pub struct Analyzer {
    index: HashMap<ConnKey, usize>,
    conns: Vec<Conn>,
    /// Packets of connections beyond the first [`MAX_CONNECTIONS`], not analysed.
    skipped_packets: u64,
    pub timestamps: TimestampAnomalies,
    /// Directions not to analyse: each connection's data sender named here (a receiver
    /// capture read for the reverse directions only, [`Analyzer::reverse_of`]).
    skip: Option<HashMap<ConnKey, SocketAddr>>,
    /// No receiver capture will follow: keep no tables for matching one.
    sender_only: bool,
}

/// Capture timestamps that cannot be right (a capture's clock or a corrupt file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimestampAnomalies {
    /// Packets stamped before the previous packet of the file.
    pub backwards: u64,
    /// Gaps of more than [`TIMESTAMP_JUMP_NS`] between consecutive packets.
    pub jumps: u64,
    /// Packets stamped at 0 or after the year 2100.
    pub absurd: u64,
    last_ns: Option<u64>,
}

/// A gap between consecutive packets of a capture that is taken as a broken clock: one day.
pub const TIMESTAMP_JUMP_NS: u64 = 86_400 * 1_000_000_000;

impl TimestampAnomalies {
    fn packet(&mut self, ts: u64) {
        if ts == 0 || ts > 4_102_444_800 * 1_000_000_000 {
            self.absurd += 1;
        }
        if let Some(last) = self.last_ns {
            if ts < last {
                self.backwards += 1;
            } else if ts - last > TIMESTAMP_JUMP_NS {
                self.jumps += 1;
            }
        }
        self.last_ns = Some(ts);
    }

    pub fn any(&self) -> bool {
        self.backwards + self.jumps + self.absurd > 0
    }
}

/// Connections analysed per capture; the packets of later ones are counted, not analysed, so
/// memory stays bounded whatever the capture (a SYN flood opens a connection per packet).
pub const MAX_CONNECTIONS: usize = 100_000;

struct Conn {
    key: ConnKey,
    first_src: SocketAddr,
    /// Source of the first SYN without ACK.
    syn_client: Option<SocketAddr>,
    first_ns: u64,
    last_ns: u64,
    packets: u64,
    /// `dirs[0]` analyses `key.0` as the data sender, `dirs[1]` `key.1`.
    dirs: [Dir; 2],
}

/// One direction of a connection taken as the data direction.
struct Dir {
    sender: SocketAddr,
    payload: u64,
    /// Sequence number before offset 0: the sender's SYN, or one before its first data byte.
    u: Option<Unwrapper>,
    syn_seen: bool,
    fin_seen: bool,
    dupacks: u64,
    highest: u64,
    una: u64,
    /// Acknowledgment number and window of the previous ACK (a window update is no dupACK).
    last_ack_wire: Option<(u32, u16)>,
    last_ack_at: Option<u64>,
    last_data_at: Option<u64>,
    backoff: u32,
    itt: Vec<f64>,
    inflight: VecDeque<u64>,
    inflight_samples: Vec<f64>,
    data_packets: u64,
    retransmissions: u64,
    /// The previous data segment: (time, seq, length, ack, flags, window, timestamp option).
    last_data: Option<DataKey>,
    duplicates: u64,
    sequence_gaps: u64,
    sequence_gap_bytes: u64,
    rec: FlowRecorder,
    attr: Attributor,
    /// Whether to keep the tables below (a receiver capture will be matched).
    matching: bool,
    /// Packets from the peer (the ACK direction) in this capture.
    peer_packets: u64,
    /// Data transmissions in order (at most [`MAX_CLOCK_KEYS`]), for loss bursts.
    tx_seq: Vec<(u64, u64)>,
    /// First transmission of each segment end, and first arrival of each acknowledgment
    /// number: matched against the receiver capture for the clock offset.
    tx_by_end: HashMap<u64, u64>,
    ack_at: HashMap<u32, u64>,
}

/// (capture time, what identifies the segment: seq, length, ack, flags, window, timestamps).
type DataKey = (u64, (u32, u32, u32, u8, u16, Option<(u32, u32)>));

fn data_key(p: &TcpPacket) -> DataKey {
    let s = &p.seg;
    (
        p.ts_ns,
        (
            s.seq,
            p.payload_len,
            s.ack,
            s.flags.0,
            s.window,
            s.options.timestamps,
        ),
    )
}

impl Dir {
    fn new(sender: SocketAddr) -> Self {
        Dir {
            sender,
            payload: 0,
            u: None,
            syn_seen: false,
            fin_seen: false,
            dupacks: 0,
            highest: 0,
            una: 0,
            last_ack_wire: None,
            last_ack_at: None,
            last_data_at: None,
            backoff: 0,
            itt: Vec::new(),
            inflight: VecDeque::new(),
            inflight_samples: Vec::new(),
            data_packets: 0,
            retransmissions: 0,
            last_data: None,
            duplicates: 0,
            sequence_gaps: 0,
            sequence_gap_bytes: 0,
            rec: FlowRecorder::new(),
            attr: Attributor::default(),
            matching: true,
            peer_packets: 0,
            tx_seq: Vec::new(),
            tx_by_end: HashMap::new(),
            ack_at: HashMap::new(),
        }
    }

    /// One packet of the sender capture; `first_ns` is the connection's earliest timestamp.
    fn packet(&mut self, p: &TcpPacket, first_ns: u64) {
        let at = Instant::from_nanos(p.ts_ns);
        let f = p.seg.flags;
        if endpoints(p).0 == self.sender {
            if p.payload_len > 0 {
                let key = data_key(p);
                let dup = self.last_data.is_some_and(|last| {
                    key.1 == last.1 && p.ts_ns.abs_diff(last.0) <= DUPLICATE_WINDOW_NS
                });
                self.last_data = Some(key);
                if dup {
                    self.duplicates += 1;
                    return;
                }
            }
            self.payload += u64::from(p.payload_len);
            if self.u.is_none() && (f.syn() || p.payload_len > 0) {
                // Offset 0: the byte after the sender's SYN, or the first data byte seen.
                let isn = if f.syn() {
                    p.seg.seq
                } else {
                    p.seg.seq.wrapping_sub(1)
                };
                self.u = Some(Unwrapper { isn, reference: 0 });
            }
            self.syn_seen |= f.syn();
            let range = self.u.as_mut().and_then(|u| data_range(u, p));
            let Some((start, end)) = range else {
                if f.syn() || f.fin() {
                    self.fin_seen |= f.fin();
                    let kind = if f.syn() {
                        SendKind::Handshake
                    } else {
                        SendKind::New
                    };
                    self.rec.on_sender_event(&Event::Sent {
                        at,
                        start: self.highest,
                        end: self.highest,
                        kind,
                        syn: f.syn(),
                        fin: f.fin(),
                    });
                }
                return;
            };
            self.fin_seen |= f.fin();
            self.data_packets += 1;
            if self.matching && self.tx_seq.len() < MAX_CLOCK_KEYS {
                self.tx_seq.push((start, end));
            }
            if start > self.highest && self.data_packets > 1 {
                self.sequence_gaps += 1;
                self.sequence_gap_bytes += start - self.highest;
            }
            if let Some(prev) = self.last_data_at {
                self.itt.push((p.ts_ns - prev.min(p.ts_ns)) as f64 / 1e6);
            }
            self.last_data_at = Some(p.ts_ns);
            if self.matching && self.tx_by_end.len() < MAX_CLOCK_KEYS {
                self.tx_by_end.entry(end).or_insert(p.ts_ns);
            }
            let kind = if end > self.highest {
                self.rec.on_write(at, start.max(self.highest), end);
                self.attr.new_data(p.ts_ns, end);
                if start < self.highest {
                    SendKind::Rdb
                } else {
                    SendKind::New
                }
            } else {
                self.retransmissions += 1;
                let (kind, _) = self
                    .attr
                    .classify(p.ts_ns, start, end, self.una, self.highest);
                if kind == SendKind::Rto && start <= self.una {
                    self.backoff += 1;
                    let rto = Duration::from_nanos(
                        p.ts_ns.saturating_sub(self.last_ack_at.unwrap_or(first_ns)),
                    );
                    self.rec.on_sender_event(&Event::RtoFired {
                        at,
                        rto,
                        backoff: self.backoff,
                    });
                }
                kind
            };
            self.highest = self.highest.max(end);
            self.inflight.push_back(end);
            self.inflight_samples.push(self.inflight.len() as f64);
            self.rec.on_sender_event(&Event::Sent {
                at,
                start,
                end,
                kind,
                syn: f.syn(),
                fin: f.fin(),
            });
        } else if f.ack() {
            self.peer_packets += 1;
            // Acknowledgment number = sequence number of the next byte expected: its offset is
            // the new `una` (an ACK of the SYN is offset 0, of a FIN one beyond the data). An
            // ACK before the sender's first SYN or data byte acknowledges nothing.
            if let Some(u) = self.u.as_mut() {
                let off = u.offset(p.seg.ack);
                let a = off.clamp(0, self.highest as i64) as u64;
                let dup = p.payload_len == 0
                    && !f.syn()
                    && !f.fin()
                    && !f.rst()
                    && self.last_ack_wire == Some((p.seg.ack, p.seg.window))
                    && self.highest > self.una;
                if dup {
                    self.dupacks += 1;
                }
                let advanced = a > self.una;
                if advanced {
                    self.una = a;
                    self.backoff = 0;
                    self.rec.on_sender_event(&Event::Acked { at, una: a });
                    while self.inflight.front().is_some_and(|&e| e <= a) {
                        self.inflight.pop_front();
                    }
                }
                let sack = !p.seg.options.sack_blocks.is_empty();
                self.attr.ack(p.ts_ns, self.una, advanced, dup, sack);
            } else {
                self.attr.ack(p.ts_ns, 0, false, false, false);
            }
            if self.matching && self.ack_at.len() < MAX_CLOCK_KEYS {
                self.ack_at.entry(p.seg.ack).or_insert(p.ts_ns);
            }
            self.last_ack_wire = Some((p.seg.ack, p.seg.window));
            self.last_ack_at = Some(p.ts_ns);
        }
    }
}

impl Analyzer {
    pub fn new() -> Self {
        Self::default()
    }

    /// An analyser of a receiver capture that follows only the directions whose sender is not
    /// the data sender named in `primaries` (the reverse directions, for
    /// [`Select::SecondaryOf`]): the data direction's records are not built twice.
    /// An analyser for a sender capture that no receiver capture will be matched with: it
    /// keeps nothing per data segment for the clock estimate and the loss bursts.
    pub fn sender_only() -> Self {
        Analyzer {
            sender_only: true,
            ..Self::default()
        }
    }

    pub fn reverse_of(primaries: HashMap<ConnKey, SocketAddr>) -> Self {
        Analyzer {
            skip: Some(primaries),
            ..Self::default()
        }
    }

    /// The next packet of the sender capture, in file order.
    pub fn sender_packet(&mut self, p: &TcpPacket) {
        self.timestamps.packet(p.ts_ns);
        let (s, d) = endpoints(p);
        let k = ConnKey::new(s, d);
        let n = match self.index.get(&k) {
            Some(&n) => n,
            None if self.conns.len() >= MAX_CONNECTIONS => {
                self.skipped_packets += 1;
                return;
            }
            None => {
                self.index.insert(k, self.conns.len());
                self.conns.push(Conn {
                    key: k,
                    first_src: s,
                    syn_client: None,
                    first_ns: p.ts_ns,
                    last_ns: p.ts_ns,
                    packets: 0,
                    dirs: [Dir::new(k.0), Dir::new(k.1)].map(|mut d| {
                        d.matching = !self.sender_only;
                        d
                    }),
                });
                self.conns.len() - 1
            }
        };
        let c = &mut self.conns[n];
        c.packets += 1;
        c.first_ns = c.first_ns.min(p.ts_ns);
        c.last_ns = c.last_ns.max(p.ts_ns);
        if c.syn_client.is_none() && p.seg.flags.syn() && !p.seg.flags.ack() {
            c.syn_client = Some(s);
        }
        let first_ns = c.first_ns;
        let skip = self.skip.as_ref().map(|m| m.get(&k));
        for d in &mut c.dirs {
            // Of a connection the other capture does not have, nothing will be kept either.
            if skip.is_some_and(|s| s.is_none_or(|&sender| sender == d.sender)) {
                continue;
            }
            d.packet(p, first_ns);
        }
    }

    /// Connections seen so far.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Packets of connections beyond the first [`MAX_CONNECTIONS`] (not analysed).
    pub fn skipped_packets(&self) -> u64 {
        self.skipped_packets
    }

    /// Each connection's data sender: the host that sent more payload bytes (ties: the
    /// client).
    pub fn primaries(&self) -> HashMap<ConnKey, SocketAddr> {
        self.conns
            .iter()
            .map(|c| (c.key, c.primary().sender))
            .collect()
    }

    /// End of the sender capture: keeps the directions `select` asks for.
    pub fn finish_sender(self, select: Select) -> ReceiverPass {
        let mut index = HashMap::new();
        let mut conns = Vec::new();
        for c in self.conns {
            let client = c.syn_client.unwrap_or(c.first_src);
            let server = if client == c.key.0 { c.key.1 } else { c.key.0 };
            let primary = c.primary().sender;
            let (first_ns, last_ns, packets, key) = (c.first_ns, c.last_ns, c.packets, c.key);
            let start = conns.len();
            for mut dir in c.dirs {
                let is_primary = dir.sender == primary;
                let (keep, at_sender) = match select {
                    Select::All => (is_primary || dir.payload > 0, is_primary),
                    Select::Primary => (is_primary, true),
                    Select::SecondaryOf(map) => (
                        map.get(&key)
                            .is_some_and(|&p| p != dir.sender && dir.payload > 0),
                        true,
                    ),
                };
                if !keep {
                    continue;
                }
                if dir.fin_seen {
                    dir.rec.on_close();
                }
                conns.push(Picked {
                    client,
                    server,
                    receiver: if dir.sender == key.0 { key.1 } else { key.0 },
                    first_ns,
                    last_ns,
                    packets,
                    at_sender,
                    dir,
                    rx: None,
                });
            }
            // The data sender first.
            conns[start..].sort_by_key(|p| p.dir.sender != primary);
            if conns.len() > start {
                index.insert(key, (start, conns.len()));
            }
        }
        ReceiverPass {
            index,
            conns,
            clock_offset_ms: None,
        }
    }
}

impl Conn {
    /// The direction of the data sender.
    fn primary(&self) -> &Dir {
        let client = self.syn_client.unwrap_or(self.first_src);
        let [d0, d1] = &self.dirs;
        let (dc, ds) = if d0.sender == client {
            (d0, d1)
        } else {
            (d1, d0)
        };
        if ds.payload > dc.payload {
            ds
        } else {
            dc
        }
    }
}

struct Picked {
    client: SocketAddr,
    server: SocketAddr,
    receiver: SocketAddr,
    first_ns: u64,
    last_ns: u64,
    packets: u64,
    at_sender: bool,
    dir: Dir,
    /// Receiver-side state, once the receiver capture had a packet of the connection.
    rx: Option<Rx>,
}

struct Rx {
    u: Unwrapper,
    rcv_nxt: u64,
    ooo: BTreeMap<u64, u64>,
    arrived: u64,
    /// Arrivals and deliveries on the receiver's clock, put on the sender's at the end.
    events: Vec<Event>,
    clock: ClockSamples,
    last_ack_sent: Option<u32>,
    /// Packets the receiver host sent, and arrivals per data range.
    peer_sent: u64,
    rx_counts: HashMap<(u64, u64), u32>,
}

/// Second pass: the receiver capture's packets, in file order, then [`ReceiverPass::finish`].
pub struct ReceiverPass {
    /// Each connection's flows: `conns[a..b]`.
    index: HashMap<ConnKey, (usize, usize)>,
    conns: Vec<Picked>,
    clock_offset_ms: Option<f64>,
}

impl ReceiverPass {
    /// Whether no flow is left to match (the pass can be skipped).
    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// Use this offset (receiver clock minus sender clock, ms) instead of estimating it.
    pub fn set_clock_offset_ms(&mut self, ms: f64) {
        self.clock_offset_ms = Some(ms);
    }

    /// The next packet of the receiver capture (packets of connections the sender capture
    /// does not have are ignored).
    pub fn receiver_packet(&mut self, p: &TcpPacket) {
        let (s, d) = endpoints(p);
        let Some(&(a, b)) = self.index.get(&ConnKey::new(s, d)) else {
            return;
        };
        for c in &mut self.conns[a..b] {
            c.receiver_packet(p, s);
        }
    }

    /// Metrics of every flow, in order of first packet in the sender capture (a connection's
    /// data sender first).
    pub fn finish(self) -> Vec<ConnectionAnalysis> {
        let given = self.clock_offset_ms;
        self.conns.into_iter().map(|c| c.finish(given)).collect()
    }
}

impl Picked {
    fn receiver_packet(&mut self, p: &TcpPacket, s: SocketAddr) {
        let isn = self.dir.u.as_ref().map_or(0, |u| u.isn);
        let (first_ns, last_ns) = (self.first_ns, self.last_ns);
        let rx = self.rx.get_or_insert_with(|| Rx {
            u: Unwrapper { isn, reference: 0 },
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            arrived: 0,
            events: Vec::new(),
            clock: ClockSamples::new(first_ns, last_ns),
            last_ack_sent: None,
            peer_sent: 0,
            rx_counts: HashMap::new(),
        });
        if s != self.dir.sender {
            rx.peer_sent += u64::from(p.seg.flags.ack());
            // An ACK leaving the receiver: the first time each acknowledgment number is sent,
            // matched with its first arrival at the sender.
            if p.seg.flags.ack() && rx.last_ack_sent != Some(p.seg.ack) {
                rx.last_ack_sent = Some(p.seg.ack);
                if let Some(&at) = self.dir.ack_at.get(&p.seg.ack) {
                    rx.clock.reverse(p.ts_ns, at);
                }
            }
            return;
        }
        let Some((start, end)) = data_range(&mut rx.u, p) else {
            return;
        };
        rx.arrived += 1;
        if rx.rx_counts.len() < MAX_CLOCK_KEYS {
            *rx.rx_counts.entry((start, end)).or_default() += 1;
        }
        if let Some(&sent) = self.dir.tx_by_end.get(&end) {
            rx.clock.forward(sent, p.ts_ns);
        }
        let at = Instant::from_nanos(p.ts_ns);
        rx.events.push(Event::Arrived { at, start, end });
        if end <= rx.rcv_nxt {
            return;
        }
        if start <= rx.rcv_nxt {
            let before = rx.rcv_nxt;
            rx.rcv_nxt = end;
            while let Some((&s, &e)) = rx.ooo.iter().next() {
                if s > rx.rcv_nxt {
                    break;
                }
                rx.ooo.remove(&s);
                rx.rcv_nxt = rx.rcv_nxt.max(e);
            }
            rx.events.push(Event::Delivered {
                at,
                start: before,
                end: rx.rcv_nxt,
            });
        } else {
            let e = rx.ooo.entry(start).or_insert(end);
            *e = (*e).max(end);
        }
    }

    fn finish(self, given_offset_ms: Option<f64>) -> ConnectionAnalysis {
        let mut d = self.dir;
        // The matching tables are not needed any more: freed before the metrics.
        d.tx_by_end = HashMap::new();
        d.ack_at = HashMap::new();
        let tx_seq = std::mem::take(&mut d.tx_seq);
        let mut extras = Extras {
            packets: self.packets,
            dupacks: d.dupacks,
            duplicates: d.duplicates,
            sequence_gaps: d.sequence_gaps,
            sequence_gap_bytes: d.sequence_gap_bytes,
            syn_seen: d.syn_seen,
            fin_seen: d.fin_seen,
            retransmission_confidence: d.attr.counts,
            ..Extras::default()
        };
        let mut clock = None;
        let mut clock_estimate = None;
        if let Some(rx) = &self.rx {
            let lost = d.data_packets.saturating_sub(rx.arrived);
            extras.lost_packets = Some(lost);
            extras.loss_rate = (d.data_packets > 0).then(|| lost as f64 / d.data_packets as f64);
            let rlost = rx.peer_sent.saturating_sub(d.peer_packets);
            extras.reverse_lost_packets = Some(rlost);
            extras.reverse_loss_rate =
                (rx.peer_sent > 0).then(|| rlost as f64 / rx.peer_sent as f64);
            (extras.loss_after_loss, extras.mean_loss_burst) = loss_bursts(&tx_seq, &rx.rx_counts);
            clock_estimate = rx.clock.estimate();
            let k = match (given_offset_ms, &clock_estimate) {
                (Some(ms), _) => ClockCorrection::given(ms),
                (None, Some(e)) => ClockCorrection::from_estimate(e),
                (None, None) => ClockCorrection::NONE,
            };
            clock = Some(k);
            for ev in &rx.events {
                let to = |at: Instant| Instant::from_nanos(k.to_sender(at.as_nanos()));
                let ev = match *ev {
                    Event::Arrived { at, start, end } => Event::Arrived {
                        at: to(at),
                        start,
                        end,
                    },
                    Event::Delivered { at, start, end } => Event::Delivered {
                        at: to(at),
                        start,
                        end,
                    },
                    ref other => other.clone(),
                };
                d.rec.on_receiver_event(&ev);
            }
        }
        extras.estimated_loss_rate =
            (d.data_packets > 0).then(|| d.retransmissions as f64 / d.data_packets as f64);
        // Sorted in place and freed before the metrics sort their own samples: the peak memory
        // of a long capture is the records plus one sample vector, not three.
        extras.inter_transmission_ms = stats_of(std::mem::take(&mut d.itt));
        extras.packets_in_flight = stats_of(std::mem::take(&mut d.inflight_samples));
        let mut records = d.rec.finish();
        records.connect_time = Some(Instant::from_nanos(self.first_ns));
        if self.rx.is_some() {
            // Both sides seen: a write not delivered when the capture ended is censored there.
            records.observed_until = Some(Instant::from_nanos(self.last_ns));
        }
        let mut metrics =
            flow_metrics(&records, Duration::from_nanos(self.last_ns - self.first_ns));
        if self.rx.is_none() {
            // Without the receiver, delivery is unknown: a write counts as delivered once it
            // is acknowledged.
            let acked = records.retired.count
                + records.writes.iter().filter(|w| w.acked.is_some()).count() as u64;
            metrics.writes_delivered = acked;
            metrics.writes_undelivered = metrics.writes - acked;
            (metrics.status, metrics.status_reason) = if metrics.writes_undelivered == 0 {
                (FlowStatus::Completed, None)
            } else {
                (
                    FlowStatus::CaptureEnded,
                    Some(format!(
                        "{} write(s) not acknowledged when the capture ended",
                        metrics.writes_undelivered
                    )),
                )
            };
        }
        if !self.at_sender {
            // Seen at its receiver only: when the data left and why it was resent are unknown
            // (the "ACK latency" would be the receiver's own ACK delay).
            metrics.ack_latency_ms = LatencyStats::default();
            metrics.ack_latency_from_send_ms = LatencyStats::default();
            metrics.retransmissions_by_cause = Default::default();
            metrics.rto_events = 0;
            metrics.frozen_time_ms = 0.0;
            extras.retransmission_confidence = ConfidenceCounts::default();
        }
        ConnectionAnalysis {
            client: self.client,
            server: self.server,
            sender: d.sender,
            receiver: self.receiver,
            receiver_matched: self.rx.is_some(),
            at_sender: self.at_sender,
            clock,
            clock_estimate,
            records,
            metrics,
            extras,
            first_ns: self.first_ns,
            last_ns: self.last_ns,
        }
    }
}

/// Which data transmissions were lost (the first `sent − arrived` transmissions of each
/// range: a range is resent because it was lost), and from that sequence the share lost after
/// a loss and the mean run of consecutive losses.
fn loss_bursts(
    tx: &[(u64, u64)],
    arrived: &HashMap<(u64, u64), u32>,
) -> (Option<f64>, Option<f64>) {
    let mut sent: HashMap<(u64, u64), u32> = HashMap::new();
    for k in tx {
        *sent.entry(*k).or_default() += 1;
    }
    let mut to_lose: HashMap<(u64, u64), u32> = sent
        .into_iter()
        .map(|(k, n)| (k, n.saturating_sub(arrived.get(&k).copied().unwrap_or(0))))
        .collect();
    let (mut prev_lost, mut after_loss, mut lost_after_loss) = (false, 0u64, 0u64);
    let (mut runs, mut lost) = (0u64, 0u64);
    for k in tx {
        let l = to_lose.get_mut(k).is_some_and(|n| {
            let hit = *n > 0;
            *n = n.saturating_sub(1);
            hit
        });
        if prev_lost {
            after_loss += 1;
            lost_after_loss += u64::from(l);
        }
        if l {
            lost += 1;
            runs += u64::from(!prev_lost);
        }
        prev_lost = l;
    }
    (
        (after_loss > 0).then(|| lost_after_loss as f64 / after_loss as f64),
        (runs > 0).then(|| lost as f64 / runs as f64),
    )
}

/// `LatencyStats::from_samples` without its copy (the samples are never NaN).
fn stats_of(mut v: Vec<f64>) -> LatencyStats {
    v.retain(|x| !x.is_nan());
    v.sort_unstable_by(f64::total_cmp);
    LatencyStats::from_sorted(&v)
}

struct Unwrapper {
    isn: u32,
    reference: u64,
}

impl Unwrapper {
    /// Stream offset of wire sequence number `s` (may be negative).
    fn offset(&mut self, s: u32) -> i64 {
        let o = seq::from_wire(self.isn, s, self.reference);
        if o > self.reference as i64 {
            self.reference = o as u64;
        }
        o
    }
}

/// Data range `[start, end)` of a data segment from the sender, offsets clipped at 0.
fn data_range(u: &mut Unwrapper, p: &TcpPacket) -> Option<(u64, u64)> {
    if p.payload_len == 0 {
        return None;
    }
    let first = p.seg.seq.wrapping_add(u32::from(p.seg.flags.syn()));
    let start = u.offset(first);
    let end = start + i64::from(p.payload_len);
    if end <= 0 {
        return None;
    }
    if end > u.reference as i64 {
        u.reference = end as u64;
    }
    Some((start.max(0) as u64, end as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_three_losses_resent_and_delivered() {
        // Segments 1..4 sent, 2, 3 and 4 lost, all three resent and delivered.
        let tx = [(0, 1), (1, 2), (2, 3), (3, 4), (1, 2), (2, 3), (3, 4)];
        let arrived: HashMap<(u64, u64), u32> = tx[..4].iter().map(|&k| (k, 1)).collect();
        let (after, burst) = loss_bursts(&tx, &arrived);
        assert_eq!(burst, Some(3.0));
        // After a loss (3 segments): 2 more losses.
        assert_eq!(after, Some(2.0 / 3.0));
        // Nothing lost: no burst, nothing after a loss.
        let all: HashMap<(u64, u64), u32> = tx.iter().map(|&k| (k, 2)).collect();
        assert_eq!(loss_bursts(&tx, &all), (None, None));
    }
}
