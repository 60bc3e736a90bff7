//! Flow reconstruction: TCP connections out of captured packets, turned into the same
//! per-write delivery records ([`FlowRecorder`]) the simulator produces, so that
//! [`flow_metrics`] computes every metric with the same code and definitions.
//!
//! - Connections are keyed by their 4-tuple (a reused 4-tuple is taken as one connection). The
//!   *client* is the host that sent a SYN without ACK (else the source of the first packet).
//!   The *data sender* is the host that sent more payload bytes (ties: the client); only that
//!   direction's data is analysed.
//! - Sequence numbers are unwrapped to u64 stream offsets with [`thinlab_tcp::seq`], offset 0
//!   being the byte after the data sender's SYN (or, with no SYN captured, the first byte seen).
//!
//! From the **sender-side capture** (taken at the data sender's host):
//! - each data segment is a `Sent` event. It is `New` when it starts at or beyond the highest
//!   byte sent before, `Rdb` when it carries new bytes together with old ones (a bundle), and a
//!   retransmission when it carries no new byte. A capture cannot see why a retransmission was
//!   sent; it is classified by a documented heuristic: **ACK-clocked** retransmissions (leaving
//!   within [`ACK_CLOCKED_WINDOW_NS`] of an incoming ACK: dupACK / SACK / partial-ACK fast
//!   retransmit) count as `fast`, all others (**timer-driven**: RTO, TLP, Early Retransmit
//!   timers) as `rto`. The total `retransmissions` is exact; the split is an estimate. Each
//!   timer-driven retransmission of the first unacknowledged byte is taken as one RTO expiry
//!   (`rto_events`, `frozen_time_ms`).
//! - the new bytes of each segment form one *write* whose write time is that first
//!   transmission: a capture cannot see the application's write calls, so every latency is
//!   measured from the first transmission ("latency_origin": "first-send") and the plain and
//!   `_from_send` latencies coincide.
//! - ACKs from the receiver are `Acked` events when the cumulative ACK advances.
//!
//! From the **receiver-side capture** (optional): each data segment arriving is an `Arrived`
//! event, and a `Delivered` event is emitted whenever the in-order point advances (an
//! application reading at once). Without it, transport and application latencies are null
//! and `bytes_delivered` is 0.
//!
//! Spurious retransmissions are not detected (0). Extra analyseTCP-style figures are in
//! [`Extras`].

use crate::metrics::{flow_metrics, FlowMetrics, LatencyStats};
use crate::pcap::TcpPacket;
use crate::records::{FlowRecorder, FlowRecords};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use thinlab_tcp::event::{Event, SendKind};
use thinlab_tcp::seq;
use thinlab_tcp::Instant;

/// A retransmission leaving at most this long after an incoming ACK is ACK-clocked (fast).
pub const ACK_CLOCKED_WINDOW_NS: u64 = 1_000_000;

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

/// Figures of analyseTCP that are not flow metrics of interface.md.
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
    /// Time between consecutive data segments sent, ms.
    pub inter_transmission_ms: LatencyStats,
    /// Data segments outstanding (sent, not cumulatively acknowledged) when a data segment is
    /// sent, including it. The statistics fields are counts, not milliseconds.
    pub packets_in_flight: LatencyStats,
    /// Connection seen from its SYN.
    pub syn_seen: bool,
    /// The data sender sent a FIN.
    pub fin_seen: bool,
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

/// Analyses every connection of the sender capture, with the receiver capture if given.
pub fn analyze(sender: &[TcpPacket], receiver: Option<&[TcpPacket]>) -> Vec<ConnectionAnalysis> {
    let rx_groups: HashMap<ConnKey, Vec<usize>> = receiver
        .map(|r| group(r).into_iter().collect())
        .unwrap_or_default();
    group(sender)
        .into_iter()
        .map(|(k, idx)| {
            let pk: Vec<&TcpPacket> = idx.iter().map(|&i| &sender[i]).collect();
            let rx: Option<Vec<&TcpPacket>> = match (receiver, rx_groups.get(&k)) {
                (Some(r), Some(ix)) => Some(ix.iter().map(|&i| &r[i]).collect()),
                _ => None,
            };
            analyze_connection(k, &pk, rx.as_deref())
        })
        .collect()
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

fn analyze_connection(
    key: ConnKey,
    pk: &[&TcpPacket],
    rx: Option<&[&TcpPacket]>,
) -> ConnectionAnalysis {
    // Who is who.
    let client = pk
        .iter()
        .find(|p| p.seg.flags.syn() && !p.seg.flags.ack())
        .map(|p| endpoints(p).0)
        .unwrap_or_else(|| endpoints(pk[0]).0);
    let server = if client == key.0 { key.1 } else { key.0 };
    let mut bytes: HashMap<SocketAddr, u64> = HashMap::new();
    for p in pk {
        *bytes.entry(endpoints(p).0).or_default() += u64::from(p.payload_len);
    }
    let (cb, sb) = (
        bytes.get(&client).copied().unwrap_or(0),
        bytes.get(&server).copied().unwrap_or(0),
    );
    let (sender, receiver) = if sb > cb {
        (server, client)
    } else {
        (client, server)
    };
    let from_sender = |p: &TcpPacket| endpoints(p).0 == sender;

    // Offset 0: the byte after the sender's SYN, or the first data byte seen.
    let syn = pk.iter().find(|p| from_sender(p) && p.seg.flags.syn());
    let isn = match syn {
        Some(p) => p.seg.seq,
        None => pk
            .iter()
            .find(|p| from_sender(p) && p.payload_len > 0)
            .map_or(0, |p| p.seg.seq.wrapping_sub(1)),
    };
    let first_ns = pk.iter().map(|p| p.ts_ns).min().unwrap_or(0);
    let last_ns = pk.iter().map(|p| p.ts_ns).max().unwrap_or(first_ns);
    let mut rec = FlowRecorder::new();
    rec.on_connect(Instant::from_nanos(first_ns));
    let mut extras = Extras {
        packets: pk.len() as u64,
        syn_seen: syn.is_some(),
        ..Extras::default()
    };

    let mut u = Unwrapper { isn, reference: 0 };
    let mut highest = 0u64;
    let mut una = 0u64;
    // Acknowledgment number and window of the previous ACK (a window update is no dupACK).
    let mut last_ack_wire: Option<(u32, u16)> = None;
    let mut last_ack_at: Option<u64> = None;
    let mut last_data_at: Option<u64> = None;
    let mut backoff = 0u32;
    let mut itt = Vec::new();
    let mut inflight: VecDeque<u64> = VecDeque::new();
    let mut inflight_samples = Vec::new();
    let mut data_packets = 0u64;
    let mut retransmissions = 0u64;

    for p in pk {
        let at = Instant::from_nanos(p.ts_ns);
        let f = p.seg.flags;
        if from_sender(p) {
            let Some((start, end)) = data_range(&mut u, p) else {
                if f.syn() || f.fin() {
                    extras.fin_seen |= f.fin();
                    let kind = if f.syn() {
                        SendKind::Handshake
                    } else {
                        SendKind::New
                    };
                    rec.on_sender_event(&Event::Sent {
                        at,
                        start: highest,
                        end: highest,
                        kind,
                        syn: f.syn(),
                        fin: f.fin(),
                    });
                }
                continue;
            };
            extras.fin_seen |= f.fin();
            data_packets += 1;
            if let Some(prev) = last_data_at {
                itt.push((p.ts_ns - prev.min(p.ts_ns)) as f64 / 1e6);
            }
            last_data_at = Some(p.ts_ns);
            let kind = if end > highest {
                rec.on_write(at, start.max(highest), end);
                if start < highest {
                    SendKind::Rdb
                } else {
                    SendKind::New
                }
            } else {
                retransmissions += 1;
                let ack_clocked =
                    last_ack_at.is_some_and(|a| p.ts_ns.saturating_sub(a) <= ACK_CLOCKED_WINDOW_NS);
                if ack_clocked {
                    SendKind::FastRetransmit
                } else {
                    if start <= una {
                        backoff += 1;
                        let rto = Duration::from_nanos(
                            p.ts_ns.saturating_sub(last_ack_at.unwrap_or(first_ns)),
                        );
                        rec.on_sender_event(&Event::RtoFired { at, rto, backoff });
                    }
                    SendKind::Rto
                }
            };
            highest = highest.max(end);
            inflight.push_back(end);
            inflight_samples.push(inflight.len() as f64);
            rec.on_sender_event(&Event::Sent {
                at,
                start,
                end,
                kind,
                syn: f.syn(),
                fin: f.fin(),
            });
        } else if f.ack() {
            // Acknowledgment number = sequence number of the next byte expected: its offset is
            // the new `una` (an ACK of the SYN is offset 0, of a FIN one beyond the data).
            let off = u.offset(p.seg.ack);
            let a = off.clamp(0, highest as i64) as u64;
            let dup = p.payload_len == 0
                && !f.syn()
                && !f.fin()
                && !f.rst()
                && last_ack_wire == Some((p.seg.ack, p.seg.window))
                && highest > una;
            if dup {
                extras.dupacks += 1;
            }
            if a > una {
                una = a;
                backoff = 0;
                rec.on_sender_event(&Event::Acked { at, una });
                while inflight.front().is_some_and(|&e| e <= una) {
                    inflight.pop_front();
                }
            }
            last_ack_wire = Some((p.seg.ack, p.seg.window));
            last_ack_at = Some(p.ts_ns);
        }
    }
    if extras.fin_seen {
        rec.on_close();
    }

    // The receiver side.
    let receiver_matched = rx.is_some_and(|r| !r.is_empty());
    if let Some(rx) = rx {
        let mut u = Unwrapper { isn, reference: 0 };
        let mut rcv_nxt = 0u64;
        let mut ooo: BTreeMap<u64, u64> = BTreeMap::new();
        let mut arrived = 0u64;
        for p in rx.iter().filter(|p| from_sender(p)) {
            let Some((start, end)) = data_range(&mut u, p) else {
                continue;
            };
            arrived += 1;
            let at = Instant::from_nanos(p.ts_ns);
            rec.on_receiver_event(&Event::Arrived { at, start, end });
            if end <= rcv_nxt {
                continue;
            }
            if start <= rcv_nxt {
                let before = rcv_nxt;
                rcv_nxt = end;
                while let Some((&s, &e)) = ooo.iter().next() {
                    if s > rcv_nxt {
                        break;
                    }
                    ooo.remove(&s);
                    rcv_nxt = rcv_nxt.max(e);
                }
                rec.on_receiver_event(&Event::Delivered {
                    at,
                    start: before,
                    end: rcv_nxt,
                });
            } else {
                let e = ooo.entry(start).or_insert(end);
                *e = (*e).max(end);
            }
        }
        let lost = data_packets.saturating_sub(arrived);
        extras.lost_packets = Some(lost);
        extras.loss_rate = (data_packets > 0).then(|| lost as f64 / data_packets as f64);
    }
    extras.estimated_loss_rate =
        (data_packets > 0).then(|| retransmissions as f64 / data_packets as f64);
    extras.inter_transmission_ms = LatencyStats::from_samples(&itt);
    extras.packets_in_flight = LatencyStats::from_samples(&inflight_samples);

    let records = rec.finish();
    let metrics = flow_metrics(&records, Duration::from_nanos(last_ns - first_ns));
    ConnectionAnalysis {
        client,
        server,
        sender,
        receiver,
        receiver_matched,
        records,
        metrics,
        extras,
        first_ns,
        last_ns,
    }
}
