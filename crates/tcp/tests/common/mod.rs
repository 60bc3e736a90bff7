//! Segment-script harness (packetdrill/smoltcp style) and an in-memory pair link.
//!
//! Scripts drive one endpoint against a hand-written peer: feed segments at given times, run
//! the timers up to a time, and assert the exact segments that come out (or none).
#![allow(dead_code)]

use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::Duration;
use thinlab_tcp::wire::SackBlocks;
use thinlab_tcp::{
    CcAlgorithm, Endpoint, Event, Flags, Instant, Mechanisms, Profile, RdbVariant, Segment,
    SendKind, State, TcpConfig, TcpOptions,
};

pub const EP_PORT: u16 = 1000;
pub const PEER_PORT: u16 = 2000;
pub const PEER_ISN: u32 = 5_000_000;
pub const EP_ISN: u32 = 0xffff_fff0; // wraps soon: exercises 32-bit wrap-around

pub fn ms(x: u64) -> Instant {
    Instant::from_millis(x)
}
pub fn dur(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// A config for scripts: small numbers, deterministic, no timestamps unless asked.
pub fn cfg() -> TcpConfig {
    TcpConfig {
        timestamps: false,
        window_scale: false,
        sack: false,
        mss: 1000,
        nodelay: true,
        initial_window: 10,
        rto_initial: dur(1000),
        delayed_ack: thinlab_tcp::DelayedAckModel::Off,
        recv_buffer: 60_000,
        time_wait: dur(60_000),
        ..TcpConfig::default()
    }
}

/// Everything the endpoint sends until it has nothing more.
pub fn drain(ep: &mut Endpoint, now: Instant) -> Vec<Segment> {
    let mut v = Vec::new();
    while let Some(s) = ep.poll_transmit(now) {
        v.push(s);
        assert!(v.len() < 10_000, "runaway transmit");
    }
    v
}

/// Run timers up to and including `until`, collecting (time, segment) of everything sent.
pub fn run_until(ep: &mut Endpoint, until: Instant) -> Vec<(Instant, Segment)> {
    let mut out = Vec::new();
    while let Some(t) = ep.poll_timeout() {
        if t > until {
            break;
        }
        ep.handle_timeout(t);
        for s in drain(ep, t) {
            out.push((t, s));
        }
        assert!(out.len() < 10_000, "runaway timers");
    }
    out
}

pub fn events(ep: &mut Endpoint) -> Vec<Event> {
    std::iter::from_fn(|| ep.poll_event()).collect()
}

/// The `Sent` kinds among `evs`.
pub fn sent_kinds(evs: &[Event]) -> Vec<SendKind> {
    evs.iter()
        .filter_map(|e| match e {
            Event::Sent { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect()
}

/// The scripted remote side: knows both ISNs and builds segments in stream offsets.
#[derive(Clone, Debug)]
pub struct Peer {
    /// ISN of the endpoint under test (learned from its SYN / SYN-ACK).
    pub ep_isn: u32,
    pub isn: u32,
    /// How far the peer has received the endpoint's stream (data offset, plus FIN).
    pub ack: u64,
    pub fin_acked: bool,
    pub window: u16,
    pub ts: Option<(u32, u32)>,
    pub wscale_shift: u8,
}

impl Peer {
    pub fn new(ep_isn: u32) -> Self {
        Peer {
            ep_isn,
            isn: PEER_ISN,
            ack: 0,
            fin_acked: false,
            window: 65535,
            ts: None,
            wscale_shift: 0,
        }
    }
    fn base(&self, seq_off: i64, flags: Flags) -> Segment {
        let seq = (self.isn as i64 + 1 + seq_off) as u32;
        let ack = self
            .ep_isn
            .wrapping_add(1)
            .wrapping_add(self.ack as u32)
            .wrapping_add(self.fin_acked as u32);
        let options = TcpOptions {
            timestamps: self.ts,
            ..TcpOptions::default()
        };
        Segment {
            src_port: PEER_PORT,
            dst_port: EP_PORT,
            seq,
            ack: if flags.ack() { ack } else { 0 },
            flags,
            window: self.window,
            options,
            payload: Bytes::new(),
        }
    }
    /// Peer data at peer-stream offset `off` (bytes `fill`).
    pub fn data(&self, off: u64, len: usize) -> Segment {
        let mut s = self.base(off as i64, Flags::ACK | Flags::PSH);
        s.payload = Bytes::from(vec![b'p'; len]);
        s
    }
    /// A pure ACK of the endpoint's stream up to `ack` (the peer's own seq at `peer_off`).
    pub fn ack_at(&mut self, ack: u64, peer_off: u64) -> Segment {
        self.ack = ack;
        self.base(peer_off as i64, Flags::ACK)
    }
    pub fn ack(&mut self, ack: u64) -> Segment {
        self.ack_at(ack, 0)
    }
    /// A pure ACK with SACK blocks given as endpoint-stream offsets.
    pub fn sack(&mut self, ack: u64, blocks: &[(u64, u64)]) -> Segment {
        let mut s = self.ack(ack);
        let mut b = SackBlocks::new();
        for &(l, r) in blocks {
            b.push((self.wire(l), self.wire(r)));
        }
        s.options.sack_blocks = b;
        s
    }
    pub fn fin(&self, off: u64) -> Segment {
        self.base(off as i64, Flags::ACK | Flags::FIN)
    }
    pub fn rst(&self, off: i64) -> Segment {
        self.base(off, Flags::RST)
    }
    /// Wire sequence number of endpoint-stream offset `off`.
    pub fn wire(&self, off: u64) -> u32 {
        self.ep_isn.wrapping_add(1).wrapping_add(off as u32)
    }
    /// Endpoint-stream offset of a wire sequence number.
    pub fn off(&self, seq: u32) -> i64 {
        seq.wrapping_sub(self.ep_isn.wrapping_add(1)) as i32 as i64
    }
    /// Peer-stream offset acknowledged by a segment from the endpoint.
    pub fn acked_peer(&self, seg: &Segment) -> i64 {
        seg.ack.wrapping_sub(self.isn.wrapping_add(1)) as i32 as i64
    }
    /// The SYN-ACK answering the endpoint's SYN `syn`, with options `opts`.
    pub fn syn_ack(&self, opts: TcpOptions) -> Segment {
        let mut s = self.base(-1, Flags::SYN | Flags::ACK);
        s.options = opts;
        s
    }
    pub fn syn(&self, opts: TcpOptions) -> Segment {
        let mut s = self.base(-1, Flags::SYN);
        s.options = opts;
        s
    }
}

/// Assert that `seg` is a data segment of the endpoint's stream covering `[start, end)`.
#[track_caller]
pub fn assert_data(p: &Peer, seg: &Segment, start: u64, end: u64) {
    assert_eq!(p.off(seg.seq), start as i64, "segment start: {seg:?}");
    assert_eq!(
        seg.payload.len() as u64,
        end - start,
        "segment length: {seg:?}"
    );
}

/// Active open at t=0 against a peer answering at `rtt` with `opts` in its SYN-ACK; the final
/// ACK is drained. Returns the established endpoint and the peer.
pub fn client(c: TcpConfig, opts: TcpOptions, rtt: Instant) -> (Endpoint, Peer) {
    let mut ep = Endpoint::connect(ms(0), c, EP_PORT, PEER_PORT, EP_ISN);
    let syn = drain(&mut ep, ms(0));
    assert_eq!(syn.len(), 1);
    assert!(syn[0].flags.syn() && !syn[0].flags.ack());
    let mut p = Peer::new(syn[0].seq);
    p.ts = opts.timestamps;
    ep.handle_segment(rtt, p.syn_ack(opts));
    assert_eq!(ep.state(), State::Established);
    let out = drain(&mut ep, rtt);
    assert_eq!(out.len(), 1, "one ACK of the SYN-ACK: {out:?}");
    assert_eq!(p.acked_peer(&out[0]), 0);
    events(&mut ep);
    (ep, p)
}

/// Plain MSS-only SYN-ACK options.
pub fn mss_opts(mss: u16) -> TcpOptions {
    TcpOptions {
        mss: Some(mss),
        ..TcpOptions::default()
    }
}

pub fn sack_opts(mss: u16) -> TcpOptions {
    TcpOptions {
        mss: Some(mss),
        sack_permitted: true,
        ..TcpOptions::default()
    }
}

// ---------------------------------------------------------------------------------------
// Pair link

/// Which segments a direction drops.
#[derive(Clone, Debug, Default)]
pub struct DropRule {
    /// 1-based indices of segments in this direction to drop.
    pub nth: Vec<usize>,
    /// Drop the first transmission(s) of the data segment starting at these sender offsets
    /// (each entry drops one matching segment).
    pub seq: Vec<u64>,
    /// Drop everything sent in `[from, to)`.
    pub blackout: Option<(Instant, Instant)>,
    /// Extra delay for the n-th segment (reordering).
    pub delay: Vec<(usize, Duration)>,
    /// Deliver the n-th segment twice (the copy 1 ms later).
    pub dup: Vec<usize>,
}

pub struct Pair {
    pub a: Endpoint,
    pub b: Endpoint,
    pub now: Instant,
    pub delay: Duration,
    /// (arrival time, counter) -> (to_b, segment)
    inflight: BTreeMap<(Instant, u64), (bool, Segment)>,
    counter: u64,
    pub drop_ab: DropRule,
    pub drop_ba: DropRule,
    sent_ab: usize,
    sent_ba: usize,
    /// Data read at B: (time, bytes).
    pub read_b: Vec<(Instant, Bytes)>,
    pub read_a: Vec<(Instant, Bytes)>,
    /// Scheduled writes at A: (time, bytes), sorted.
    pub writes_a: Vec<(Instant, Vec<u8>)>,
    pub events_a: Vec<Event>,
    pub events_b: Vec<Event>,
    pub dropped: Vec<(bool, Segment)>,
    /// A closes at this time (after its scheduled writes up to then).
    pub close_a_at: Option<Instant>,
    /// B closes once it has read A's FIN.
    pub b_closes_on_eof: bool,
    /// B's application reads what arrives at once (otherwise it never reads).
    pub b_reads: bool,
    b_closed: bool,
    isn_a: u32,
    isn_b: u32,
}

impl Pair {
    /// A connects to B (listening) at t=0.
    pub fn new(ca: TcpConfig, cb: TcpConfig, one_way: Duration) -> Pair {
        let isn_a = 100;
        let isn_b = 0xffff_ff00;
        Pair {
            a: Endpoint::connect(ms(0), ca, EP_PORT, PEER_PORT, isn_a),
            b: Endpoint::listen(cb, PEER_PORT, isn_b),
            now: ms(0),
            delay: one_way,
            inflight: BTreeMap::new(),
            counter: 0,
            drop_ab: DropRule::default(),
            drop_ba: DropRule::default(),
            sent_ab: 0,
            sent_ba: 0,
            read_b: Vec::new(),
            read_a: Vec::new(),
            writes_a: Vec::new(),
            events_a: Vec::new(),
            events_b: Vec::new(),
            dropped: Vec::new(),
            close_a_at: None,
            b_closes_on_eof: true,
            b_reads: true,
            b_closed: false,
            isn_a,
            isn_b,
        }
    }

    fn should_drop(rule: &mut DropRule, idx: usize, seg: &Segment, isn: u32, now: Instant) -> bool {
        if rule.nth.contains(&idx) {
            return true;
        }
        if let Some((f, t)) = rule.blackout {
            if f <= now && now < t {
                return true;
            }
        }
        if !seg.payload.is_empty() {
            let off = seg.seq.wrapping_sub(isn.wrapping_add(1)) as u64;
            if let Some(i) = rule.seq.iter().position(|&s| s == off) {
                rule.seq.remove(i);
                return true;
            }
        }
        false
    }

    fn enqueue(&mut self, to_b: bool, s: Segment) {
        let now = self.now;
        let (idx, rule, isn) = if to_b {
            self.sent_ab += 1;
            (self.sent_ab, &mut self.drop_ab, self.isn_a)
        } else {
            self.sent_ba += 1;
            (self.sent_ba, &mut self.drop_ba, self.isn_b)
        };
        if Self::should_drop(rule, idx, &s, isn, now) {
            self.dropped.push((to_b, s));
            return;
        }
        let extra = rule
            .delay
            .iter()
            .find(|d| d.0 == idx)
            .map_or(Duration::ZERO, |d| d.1);
        let dup = rule.dup.contains(&idx);
        let at = now + self.delay + extra;
        if dup {
            self.counter += 1;
            self.inflight
                .insert((at + dur(1), self.counter), (to_b, s.clone()));
        }
        self.counter += 1;
        self.inflight.insert((at, self.counter), (to_b, s));
    }

    fn flush(&mut self) {
        let now = self.now;
        // the applications read first (as a socket reader woken by the arrival would), then
        // whatever the endpoints want to send goes out
        while self.b_reads {
            let Some(b) = self.b.read() else { break };
            self.read_b.push((now, b));
        }
        while let Some(b) = self.a.read() {
            self.read_a.push((now, b));
        }
        if self.b_closes_on_eof && !self.b_closed && self.b.peer_closed() {
            self.b_closed = true;
            self.b.close(now);
        }
        while let Some(s) = self.a.poll_transmit(now) {
            self.enqueue(true, s);
        }
        while let Some(s) = self.b.poll_transmit(now) {
            self.enqueue(false, s);
        }
        self.events_a
            .extend(std::iter::from_fn(|| self.a.poll_event()));
        self.events_b
            .extend(std::iter::from_fn(|| self.b.poll_event()));
    }

    /// Run until `until` (or nothing is left to do).
    pub fn run(&mut self, until: Instant) {
        self.flush();
        let mut steps = 0;
        loop {
            steps += 1;
            assert!(steps < 1_000_000, "pair run does not terminate");
            let next_arrival = self.inflight.keys().next().map(|k| k.0);
            let next_write = self.writes_a.first().map(|w| w.0);
            let cands = [
                next_arrival,
                next_write,
                self.close_a_at,
                self.a.poll_timeout(),
                self.b.poll_timeout(),
            ];
            let Some(t) = cands.iter().flatten().copied().min() else {
                break;
            };
            if t > until {
                break;
            }
            self.now = t;
            if self.close_a_at == Some(t) && next_write != Some(t) {
                self.close_a_at = None;
                self.a.close(t);
            } else if next_write == Some(t) {
                let (_, data) = self.writes_a.remove(0);
                let n = self.a.write(t, &data).expect("write");
                assert_eq!(n, data.len(), "send buffer full in test");
            } else if next_arrival == Some(t) {
                let (_, (to_b, seg)) = self.inflight.pop_first().expect("arrival");
                if to_b {
                    self.b.handle_segment(t, seg);
                } else {
                    self.a.handle_segment(t, seg);
                }
            } else {
                if self.a.poll_timeout() == Some(t) {
                    self.a.handle_timeout(t);
                }
                if self.b.poll_timeout() == Some(t) {
                    self.b.handle_timeout(t);
                }
            }
            self.flush();
        }
        self.now = self.now.max(until.min(self.now));
    }

    /// Schedule `n` writes of `size` bytes every `interval` from `start`; byte i of the stream
    /// is `(i % 251) as u8`. Returns the write times.
    pub fn schedule_writes(
        &mut self,
        start: Instant,
        interval: Duration,
        n: usize,
        size: usize,
    ) -> Vec<Instant> {
        let mut off = self.writes_a.iter().map(|w| w.1.len()).sum::<usize>();
        let mut times = Vec::new();
        for k in 0..n {
            let t = start + interval * k as u32;
            let data: Vec<u8> = (off..off + size).map(|i| (i % 251) as u8).collect();
            off += size;
            self.writes_a.push((t, data));
            times.push(t);
        }
        self.writes_a.sort_by_key(|w| w.0);
        times
    }

    /// Everything scheduled for A, concatenated.
    pub fn expected_b(&self) -> Vec<u8> {
        self.writes_a
            .iter()
            .flat_map(|w| w.1.iter().copied())
            .collect()
    }

    pub fn received_b(&self) -> Vec<u8> {
        self.read_b
            .iter()
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }

    /// Time at which B had read at least `n` bytes.
    pub fn b_has(&self, n: usize) -> Option<Instant> {
        let mut tot = 0;
        for (t, b) in &self.read_b {
            tot += b.len();
            if tot >= n {
                return Some(*t);
            }
        }
        None
    }
}

// ---------------------------------------------------------------------------------------
// Drawn configurations (property tests)

/// Property-test cases: 64, or `PROPTEST_CASES`.
pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// A configuration drawn from every profile, congestion controller, mechanism set (bit i of
/// `mech` switches on the i-th mechanism) and RDB variant.
pub fn drawn(profile: usize, cc: usize, mech: u8, variant: usize) -> TcpConfig {
    let mut c = TcpConfig::from_profile(Profile::ALL[profile % Profile::ALL.len()]);
    c.cc = [
        CcAlgorithm::Reno,
        CcAlgorithm::NewReno,
        CcAlgorithm::Cubic,
        CcAlgorithm::Pert,
    ][cc % 4];
    c.cc_seed = mech as u64;
    let bit = |i: u8| mech & (1 << i) != 0;
    c.mechanisms = Mechanisms {
        rdb: bit(0),
        linear_timeouts: bit(1),
        thin_dupack: bit(2),
        early_retransmit: bit(3),
        er_threshold: bit(4),
        tlp: bit(5),
        rack: bit(6),
    };
    c.rdb_variant = [RdbVariant::Seed, RdbVariant::Patch, RdbVariant::Adaptive][variant % 3];
    c
}

/// A transfer for the property tests: A connects with a drawn configuration (every profile,
/// congestion controller, mechanism set and RDB variant; SACK, timestamps and Nagle on or
/// off), writes `writes` times `size` bytes every `interval` ms from 100 ms and closes; B reads
/// and closes on A's FIN; the link (15 ms one way) drops, delays and duplicates the listed
/// segments of each direction (1-based).
#[derive(Clone, Debug, Default)]
pub struct DrawnTransfer {
    pub drops_ab: Vec<usize>,
    pub drops_ba: Vec<usize>,
    pub delay_ab: Vec<(usize, u64)>,
    pub delay_ba: Vec<(usize, u64)>,
    pub dup_ab: Vec<usize>,
    pub dup_ba: Vec<usize>,
    pub sack: bool,
    pub ts: bool,
    pub nodelay: bool,
    pub writes: usize,
    pub size: usize,
    pub interval: u64,
    pub profile: usize,
    pub cc: usize,
    pub mech: u8,
    pub variant: usize,
}

/// Drawn transfers: up to 10 drops and 10 delays (1–199 ms) per direction among the first 119
/// segments, up to 6 duplicates, 1–39 writes of 1–3 999 bytes every 0–99 ms.
pub fn drawn_transfer() -> impl proptest::strategy::Strategy<Value = DrawnTransfer> {
    use proptest::collection::vec;
    use proptest::prelude::*;
    let link = (
        vec(1usize..120, 0..10),
        vec(1usize..120, 0..10),
        vec((1usize..120, 1u64..200), 0..10),
        vec((1usize..120, 1u64..200), 0..10),
        vec(1usize..120, 0..6),
        vec(1usize..120, 0..6),
    );
    let app = (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1usize..40,
        1usize..4000,
        0u64..100,
    );
    let config = (0usize..5, 0usize..4, 0u8..128, 0usize..3);
    (link, app, config).prop_map(|(link, app, config)| DrawnTransfer {
        drops_ab: link.0,
        drops_ba: link.1,
        delay_ab: link.2,
        delay_ba: link.3,
        dup_ab: link.4,
        dup_ba: link.5,
        sack: app.0,
        ts: app.1,
        nodelay: app.2,
        writes: app.3,
        size: app.4,
        interval: app.5,
        profile: config.0,
        cc: config.1,
        mech: config.2,
        variant: config.3,
    })
}

impl DrawnTransfer {
    /// The pair, with its writes and A's close scheduled (not yet run).
    pub fn pair(&self) -> Pair {
        let mut c = drawn(self.profile, self.cc, self.mech, self.variant);
        c.sack = self.sack;
        c.timestamps = self.ts;
        c.nodelay = self.nodelay;
        c.send_buffer = 1 << 20;
        c.syn_retries = 10;
        let mut pair = Pair::new(c.clone(), c, dur(15));
        let delays = |d: &[(usize, u64)]| d.iter().map(|&(n, d)| (n, dur(d))).collect();
        pair.drop_ab.nth = self.drops_ab.clone();
        pair.drop_ba.nth = self.drops_ba.clone();
        pair.drop_ab.delay = delays(&self.delay_ab);
        pair.drop_ba.delay = delays(&self.delay_ba);
        pair.drop_ab.dup = self.dup_ab.clone();
        pair.drop_ba.dup = self.dup_ba.clone();
        pair.schedule_writes(ms(100), dur(self.interval), self.writes, self.size);
        pair.close_a_at = Some(ms(100) + dur(self.interval) * self.writes as u32 + dur(1));
        pair
    }
}
