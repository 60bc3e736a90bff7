//! The network's paths without the packets: the two bottleneck links, the per-flow access
//! links, and the loss/jitter state per (flow, direction). The simulator ([`crate::run`])
//! and the real-time link emulator (thinlab-emu) both move packets with [`Paths::enter`], so
//! a scenario's path is one model whichever backend carries the packets.
//!
//! Topology: client of flow i ── [access link i, if `flow.rtt` or `access_bandwidth`] ──
//! bottleneck (forward / reverse) ── server of flow i. Access links sit on the client side in
//! both directions, with delay `flow.rtt/2` each way, rate `access_bandwidth` (infinite if
//! unset) and the network's queue limit. Loss and jitter apply at the bottleneck's ingress:
//! each packet entering a bottleneck direction advances that direction's position counter
//! (the `positions` model), then the flow's loss stream decides, then the flow's jitter
//! stream draws `uniform[0, jitter]`, then the link admits it or its drop-tail queue drops it.

use crate::link::Link;
use crate::loss::FlowLoss;
use crate::result::{DropCounts, LinkReport};
use crate::rng::{stream, Component, Rng};
use crate::scenario::{LossModel, Scenario};
use rand::Rng as _;

/// Client → server.
pub const FORWARD: usize = 0;
/// Server → client.
pub const REVERSE: usize = 1;

/// Links `0..SHARED_LINKS` are the bottleneck's two directions, which every flow shares; each
/// link after them is one flow's access link in one direction.
const SHARED_LINKS: u32 = 2;

/// The direction endpoint `side` (0 client, 1 server) sends in.
pub fn sent_by(side: usize) -> usize {
    if side == 0 {
        FORWARD
    } else {
        REVERSE
    }
}

/// The side (0 client, 1 server) a packet travelling in `dir` arrives at.
pub fn arrives_at(dir: usize) -> usize {
    if dir == FORWARD {
        1
    } else {
        0
    }
}

/// The links a packet crosses, in order.
#[derive(Clone, Copy, Debug)]
struct Route {
    links: [u32; 2],
    len: u8,
}

impl Route {
    fn new(links: &[u32]) -> Route {
        let mut r = Route {
            links: [0; 2],
            len: links.len() as u8,
        };
        r.links[..links.len()].copy_from_slice(links);
        r
    }
}

#[derive(Debug)]
struct FlowPath {
    /// Indexed by direction: FORWARD = client → server.
    routes: [Route; 2],
    loss: [FlowLoss; 2],
    /// The jitter streams, only when the network has jitter (they are ~330 bytes each).
    jitter: Option<Box<[Rng; 2]>>,
    dropped_loss: u64,
    dropped_queue: u64,
}

/// What became of a packet offered to one hop of its route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    /// It reaches the end of link `link` at `at` (ns); a link's arrivals never go back in time.
    Arrives { at: u64, link: u32 },
    /// Lost by the loss model at the bottleneck's ingress.
    Lost,
    /// Dropped by a full drop-tail queue.
    QueueFull,
}

/// Every link and every flow's route, loss and jitter state of one run.
#[derive(Debug)]
pub struct Paths {
    links: Vec<Link>,
    link_names: Vec<String>,
    paths: Vec<FlowPath>,
    /// Packets that entered each direction of the bottleneck (for the positions model).
    positions: [u64; 2],
    loss_models: [LossModel; 2],
    jitter_ns: u64,
    pub drops: DropCounts,
}

impl Paths {
    /// The paths of scenario `s` in the run seeded with `seed` (random streams per
    /// [`Component::Loss`] / [`Component::Jitter`] of each flow and direction).
    pub fn new(s: &Scenario, seed: u64) -> Paths {
        let n = &s.network;
        let half = n.rtt.as_nanos() as u64 / 2;
        let limit = Some(n.queue);
        let mut links = vec![
            Link::new(Some(n.bandwidth), half, limit),
            Link::new(Some(n.bandwidth), n.rtt.as_nanos() as u64 - half, limit),
        ];
        let mut link_names = vec!["forward".to_string(), "reverse".to_string()];
        let mut paths = Vec::with_capacity(s.flows.len());
        for (i, f) in s.flows.iter().enumerate() {
            let flow = i as u32;
            let routes = if f.rtt.is_zero() && f.access_bandwidth.is_none() {
                [Route::new(&[FORWARD as u32]), Route::new(&[REVERSE as u32])]
            } else {
                let h = f.rtt.as_nanos() as u64 / 2;
                let up = links.len() as u32;
                links.push(Link::new(f.access_bandwidth, h, limit));
                links.push(Link::new(
                    f.access_bandwidth,
                    f.rtt.as_nanos() as u64 - h,
                    limit,
                ));
                link_names.push(format!("flow{i}.access-up"));
                link_names.push(format!("flow{i}.access-down"));
                [
                    Route::new(&[up, FORWARD as u32]),
                    Route::new(&[REVERSE as u32, up + 1]),
                ]
            };
            let loss = |forward| FlowLoss::new(stream(seed, Component::Loss { flow, forward }));
            let jitter = |forward| stream(seed, Component::Jitter { flow, forward });
            paths.push(FlowPath {
                routes,
                loss: [loss(true), loss(false)],
                jitter: (!n.jitter.is_zero()).then(|| Box::new([jitter(true), jitter(false)])),
                dropped_loss: 0,
                dropped_queue: 0,
            });
        }
        Paths {
            links,
            link_names,
            paths,
            positions: [0; 2],
            loss_models: [n.forward_loss.clone(), n.reverse_loss.clone()],
            jitter_ns: n.jitter.as_nanos() as u64,
            drops: DropCounts::default(),
        }
    }

    /// Number of flows.
    pub fn flows(&self) -> usize {
        self.paths.len()
    }

    /// Prefetches what an event of `flow` that sends in direction `dir` touches of its path
    /// (see `sim::prefetch`): the routes and counters, and that direction's loss stream (an
    /// event draws from one direction's; the other's lines would only take the place of lines
    /// it needs).
    #[inline]
    pub fn prefetch(&self, flow: usize, dir: usize) {
        if let Some(p) = self.paths.get(flow) {
            thinlab_tcp::prefetch::prefetch(&p.routes);
            thinlab_tcp::prefetch::prefetch(&p.loss[dir & 1]);
            thinlab_tcp::prefetch::prefetch(&p.dropped_loss);
        }
    }

    /// How many links a packet of `flow` crosses in direction `dir` (1 or 2).
    pub fn hops(&self, flow: usize, dir: usize) -> usize {
        self.paths[flow].routes[dir].len as usize
    }

    /// Whether hop `hop` of `flow`'s route in `dir` is a link that only this flow's packets in
    /// this direction use (an access link; the bottleneck's two links are shared by all flows).
    #[inline]
    pub fn dedicated(&self, flow: usize, dir: usize, hop: usize) -> bool {
        self.paths[flow].routes[dir].links[hop] >= SHARED_LINKS
    }

    /// A `len`-byte frame of `flow` travelling in `dir` enters hop `hop` (0-based) of its
    /// route at `now` (ns).
    pub fn enter(&mut self, now: u64, flow: usize, dir: usize, hop: usize, len: u32) -> Hop {
        let link = self.paths[flow].routes[dir].links[hop];
        let mut jitter = 0;
        let bottleneck = link < SHARED_LINKS;
        if bottleneck {
            self.positions[dir] += 1;
            let path = &mut self.paths[flow];
            if path.loss[dir].lose(&self.loss_models[dir], self.positions[dir]) {
                path.dropped_loss += 1;
                if dir == FORWARD {
                    self.drops.loss_forward += 1;
                } else {
                    self.drops.loss_reverse += 1;
                }
                return Hop::Lost;
            }
            if let Some(streams) = &mut path.jitter {
                jitter = streams[dir].gen_range(0..=self.jitter_ns);
            }
        }
        match self.links[link as usize].offer(now, len, jitter) {
            Some(at) => Hop::Arrives { at, link },
            None => {
                self.paths[flow].dropped_queue += 1;
                match (bottleneck, dir) {
                    (true, FORWARD) => self.drops.queue_forward += 1,
                    (true, _) => self.drops.queue_reverse += 1,
                    (false, _) => self.drops.queue_access += 1,
                }
                Hop::QueueFull
            }
        }
    }

    /// (dropped by loss, dropped by queue) for `flow`.
    pub fn flow_drops(&self, flow: usize) -> (u64, u64) {
        let p = &self.paths[flow];
        (p.dropped_loss, p.dropped_queue)
    }

    pub fn link_reports(&self) -> Vec<LinkReport> {
        self.links
            .iter()
            .zip(&self.link_names)
            .map(|(l, n)| LinkReport {
                name: n.clone(),
                stats: l.stats,
            })
            .collect()
    }
}
