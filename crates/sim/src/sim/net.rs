//! The network of a run: the packet arena over [`crate::path::Paths`] (links, routes, loss
//! and jitter state per (flow, direction)), which the real-time emulator shares.

use crate::event::{EventKind, EventQueue};
use crate::link::frame_len;
use crate::path::{Hop, Paths};
use crate::result::{DropCounts, LinkReport};
use crate::scenario::Scenario;
use thinlab_tcp::Segment;

pub use crate::path::{arrives_at, sent_by};

/// The event queue's lanes ([`EventQueue::push_lane`]): lane 0 holds the sources' stops (all at
/// the end of the run, scheduled in flow order, so they wait there instead of in the heap),
/// and link `l`'s arrivals are lane `LINK_LANES + l`.
pub const SOURCE_STOP_LANE: u32 = 0;
pub const LINK_LANES: u32 = 1;

/// A packet in flight, stored in the arena and referred to by index.
struct Packet {
    /// `None` once delivered or dropped: a slot's next packet then overwrites nothing to drop
    /// (an empty `Segment` left behind was built on delivery and dropped, through its payload's
    /// vtable, when the slot was reused).
    seg: Option<Segment>,
    flow: u32,
    dir: u8,
    hop: u8,
    /// How many links the packet's route has.
    hops: u8,
    len: u32,
}

/// What the prefetch needs to know of a packet in flight ([`Net::peek_packet`]).
pub struct PacketPeek {
    pub flow: usize,
    pub dir: usize,
    /// Its current link is the last of its route: its arrival runs an endpoint.
    pub last_hop: bool,
    /// It carries data, SYN or FIN, which the receiving endpoint answers. A pure ACK mostly
    /// sends nothing on a thin stream (it may still release written data, a retransmission or
    /// a FIN).
    pub occupies_sequence: bool,
}

/// A packet that reached its destination endpoint.
pub struct Delivery {
    pub flow: u32,
    /// Direction it travelled: FORWARD means it reached the server.
    pub dir: usize,
    pub seg: Segment,
}

pub struct Net {
    paths: Paths,
    packets: Vec<Packet>,
    free: Vec<u32>,
    /// A packet enters a dedicated next link at once ([`Net::enter`]); off only in the test
    /// that compares results with and without it.
    merge_hops: bool,
}

impl Net {
    pub fn new(s: &Scenario, seed: u64) -> Net {
        Net {
            paths: Paths::new(s, seed),
            packets: Vec::with_capacity(1024),
            free: Vec::new(),
            merge_hops: true,
        }
    }

    /// An endpoint of `flow` emitted `seg` at `now`, travelling in direction `dir`.
    pub fn send(&mut self, now: u64, flow: u32, dir: usize, seg: Segment, q: &mut EventQueue) {
        let len = frame_len(&seg);
        let p = Packet {
            seg: Some(seg),
            flow,
            dir: dir as u8,
            hop: 0,
            hops: self.paths.hops(flow as usize, dir) as u8,
            len,
        };
        let idx = match self.free.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        };
        self.enter(now, idx, q);
    }

    fn release(&mut self, idx: u32) {
        self.packets[idx as usize].seg = None;
        self.free.push(idx);
    }

    /// Packet `idx` enters its current hop at `now`. When the next hop is a link that only the
    /// packet's flow uses in its direction, the packet enters it at once, at the time it will
    /// reach it: every link is FIFO, so the packets of that (flow, direction) enter the
    /// dedicated link in the order, and at the times, they would with an event in between,
    /// and nothing else enters it. One event per packet fewer (an ACK's arrival at the end of
    /// the shared reverse link); `hop` then names the dedicated link.
    fn enter(&mut self, mut now: u64, idx: u32, q: &mut EventQueue) {
        let p = &mut self.packets[idx as usize];
        let (flow, dir, len) = (p.flow as usize, p.dir as usize, p.len);
        loop {
            let hop = p.hop as usize;
            match self.paths.enter(now, flow, dir, hop, len) {
                Hop::Arrives { at, .. }
                    if self.merge_hops
                        && hop + 1 < p.hops as usize
                        && self.paths.dedicated(flow, dir, hop + 1) =>
                {
                    p.hop += 1;
                    now = at;
                }
                Hop::Arrives { at, link } => {
                    q.push_lane(LINK_LANES + link, at, EventKind::Arrive { packet: idx });
                    return;
                }
                Hop::Lost | Hop::QueueFull => {
                    self.release(idx);
                    return;
                }
            }
        }
    }

    /// Packet `idx` reached the end of its current link at `now`: forward it to the next link,
    /// or return it for delivery to its endpoint.
    pub fn arrive(&mut self, now: u64, idx: u32, q: &mut EventQueue) -> Option<Delivery> {
        let p = self.packets.get_mut(idx as usize)?;
        p.hop += 1;
        if p.hop < p.hops {
            self.enter(now, idx, q);
            None
        } else {
            let d = Delivery {
                flow: p.flow,
                dir: p.dir as usize,
                seg: p.seg.take().expect("a packet in flight holds its segment"),
            };
            self.free.push(idx);
            Some(d)
        }
    }

    /// The flow and direction of packet `idx`, whether its current link is its last, and
    /// whether it occupies sequence space.
    #[inline]
    pub fn peek_packet(&self, idx: u32) -> Option<PacketPeek> {
        let p = self.packets.get(idx as usize)?;
        Some(PacketPeek {
            flow: p.flow as usize,
            dir: p.dir as usize,
            last_hop: p.hop + 1 >= p.hops,
            occupies_sequence: p.seg.as_ref().is_some_and(|s| s.seq_len() > 0),
        })
    }

    /// Prefetches packet `idx`.
    #[inline]
    pub fn prefetch_packet(&self, idx: u32) {
        if let Some(p) = self.packets.get(idx as usize) {
            thinlab_tcp::prefetch::prefetch(p);
        }
    }

    /// Prefetches `flow`'s path state for an event that sends in direction `dir` (routes,
    /// that direction's loss stream).
    #[inline]
    pub fn prefetch_path(&self, flow: usize, dir: usize) {
        self.paths.prefetch(flow, dir);
    }

    /// The run's drops so far, by cause and direction.
    pub fn drops(&self) -> DropCounts {
        self.paths.drops
    }

    /// (dropped by loss, dropped by queue) for `flow`.
    pub fn flow_drops(&self, flow: usize) -> (u64, u64) {
        self.paths.flow_drops(flow)
    }

    pub fn link_reports(&self) -> Vec<LinkReport> {
        self.paths.link_reports()
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::Sim;
    use crate::Scenario;

    /// Entering a dedicated link at once changes nothing but the number of events: flows with
    /// access links both ways (small queues that overflow, a server that sends, a bulk flow),
    /// loss and jitter on the bottleneck, several seeds.
    #[test]
    fn merged_hops_change_no_result() {
        let s = Scenario::from_toml_str(
            r#"
            name = "hops"
            duration = "20s"
            [network]
            rtt = "40ms"
            bandwidth = "4Mbit"
            queue_packets = 12
            jitter = "1ms"
            [network.loss]
            model = "bernoulli"
            rate = 0.01
            [[flow]]
            name = "thin"
            rtt = "6ms"
            access_bandwidth = "2Mbit"
            app = { kind = "exponential", payload_bytes = 200, interval = "20ms" }
            [[flow]]
            name = "bulk"
            start = "2s"
            rtt = "2ms"
            access_bandwidth = "3Mbit"
            app = { kind = "bulk" }
            tcp = { profile = "linux", cc = "cubic" }
            [[flow]]
            name = "down"
            direction = "reverse"
            rtt = "10ms"
            access_bandwidth = "1Mbit"
            app = { kind = "fixed", payload_bytes = 1400, interval = "5ms" }
            [[flow]]
            name = "plain"
            app = { kind = "fixed", payload_bytes = 100, interval = "30ms" }
            "#,
        )
        .expect("scenario");
        for seed in 1..=4 {
            let run = |merge: bool| {
                let mut sim = Sim::new(&s, seed);
                sim.net.merge_hops = merge;
                sim.run(&mut |_| {})
            };
            let (mut off, on) = (run(false), run(true));
            assert!(off.flows.iter().all(|f| f.records.bytes_delivered > 0));
            assert!(
                off.drops.queue_access > 0,
                "seed {seed}: no access link overflowed"
            );
            assert!(
                on.events_processed < off.events_processed,
                "seed {seed}: no event saved"
            );
            off.events_processed = on.events_processed;
            assert_eq!(off, on, "seed {seed}");
        }
    }
}
