//! The network of a run: the two bottleneck links, the per-flow access links, the packet arena
//! and the loss/jitter state per (flow, direction).
//!
//! Topology: client of flow i ── [access link i, if `flow.rtt` or `access_bandwidth`] ──
//! bottleneck (forward / reverse) ── server of flow i. Access links sit on the client side in
//! both directions, with delay `flow.rtt/2` each way, rate `access_bandwidth` (infinite if
//! unset) and the network's queue limit. Loss and jitter apply at the bottleneck's ingress.

use crate::event::{EventKind, EventQueue};
use crate::link::{frame_len, Link};
use crate::loss::FlowLoss;
use crate::result::{DropCounts, LinkReport};
use crate::rng::{stream, Component, Rng};
use crate::scenario::{LossModel, Scenario};
use rand::Rng as _;
use thinlab_tcp::Segment;

pub const FORWARD: usize = 0;
pub const REVERSE: usize = 1;

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

struct FlowPath {
    /// Indexed by direction: FORWARD = client → server.
    routes: [Route; 2],
    loss: [FlowLoss; 2],
    jitter: [Rng; 2],
    dropped_loss: u64,
    dropped_queue: u64,
}

/// A packet in flight, stored in the arena and referred to by index.
struct Packet {
    seg: Segment,
    flow: u32,
    dir: u8,
    hop: u8,
    len: u32,
}

/// A packet that reached its destination endpoint.
pub struct Delivery {
    pub flow: u32,
    /// Direction it travelled: FORWARD means it reached the server.
    pub dir: usize,
    pub seg: Segment,
}

pub struct Net {
    links: Vec<Link>,
    link_names: Vec<String>,
    packets: Vec<Packet>,
    free: Vec<u32>,
    paths: Vec<FlowPath>,
    /// Packets that entered each direction of the bottleneck (for the positions model).
    positions: [u64; 2],
    loss_models: [LossModel; 2],
    jitter_ns: u64,
    pub drops: DropCounts,
}

impl Net {
    pub fn new(s: &Scenario, seed: u64) -> Net {
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
            let i32 = i as u32;
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
            paths.push(FlowPath {
                routes,
                loss: [
                    FlowLoss::new(stream(
                        seed,
                        Component::Loss {
                            flow: i32,
                            forward: true,
                        },
                    )),
                    FlowLoss::new(stream(
                        seed,
                        Component::Loss {
                            flow: i32,
                            forward: false,
                        },
                    )),
                ],
                jitter: [
                    stream(
                        seed,
                        Component::Jitter {
                            flow: i32,
                            forward: true,
                        },
                    ),
                    stream(
                        seed,
                        Component::Jitter {
                            flow: i32,
                            forward: false,
                        },
                    ),
                ],
                dropped_loss: 0,
                dropped_queue: 0,
            });
        }
        Net {
            links,
            link_names,
            packets: Vec::with_capacity(1024),
            free: Vec::new(),
            paths,
            positions: [0; 2],
            loss_models: [n.forward_loss.clone(), n.reverse_loss.clone()],
            jitter_ns: n.jitter.as_nanos() as u64,
            drops: DropCounts::default(),
        }
    }

    /// An endpoint of `flow` emitted `seg` at `now`, travelling in direction `dir`.
    pub fn send(&mut self, now: u64, flow: u32, dir: usize, seg: Segment, q: &mut EventQueue) {
        let len = frame_len(&seg);
        let p = Packet {
            seg,
            flow,
            dir: dir as u8,
            hop: 0,
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
        let link = self.paths[flow as usize].routes[dir].links[0];
        self.enter(now, idx, link, q);
    }

    fn release(&mut self, idx: u32) {
        self.packets[idx as usize].seg = Segment::default();
        self.free.push(idx);
    }

    fn enter(&mut self, now: u64, idx: u32, link: u32, q: &mut EventQueue) {
        let p = &self.packets[idx as usize];
        let (flow, dir, len) = (p.flow as usize, p.dir as usize, p.len);
        let mut jitter = 0;
        let bottleneck = (link as usize) < 2;
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
                self.release(idx);
                return;
            }
            if self.jitter_ns > 0 {
                jitter = path.jitter[dir].gen_range(0..=self.jitter_ns);
            }
        }
        match self.links[link as usize].offer(now, len, jitter) {
            Some(at) => q.push(at, EventKind::Arrive { packet: idx }),
            None => {
                self.paths[flow].dropped_queue += 1;
                match (bottleneck, dir) {
                    (true, FORWARD) => self.drops.queue_forward += 1,
                    (true, _) => self.drops.queue_reverse += 1,
                    (false, _) => self.drops.queue_access += 1,
                }
                self.release(idx);
            }
        }
    }

    /// Packet `idx` reached the end of its current link at `now`: forward it to the next link,
    /// or return it for delivery to its endpoint.
    pub fn arrive(&mut self, now: u64, idx: u32, q: &mut EventQueue) -> Option<Delivery> {
        let p = self.packets.get_mut(idx as usize)?;
        p.hop += 1;
        let route = self.paths[p.flow as usize].routes[p.dir as usize];
        if p.hop < route.len {
            let link = route.links[p.hop as usize];
            self.enter(now, idx, link, q);
            None
        } else {
            let d = Delivery {
                flow: p.flow,
                dir: p.dir as usize,
                seg: std::mem::take(&mut p.seg),
            };
            self.free.push(idx);
            Some(d)
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
