//! The link emulator: one thread that reads packets from both TUN devices, runs each through
//! the scenario's path ([`thinlab_sim::path::Paths`], the simulator's own links, queues, loss
//! and jitter models and random streams) and writes it into the other TUN device at the
//! arrival time the model computed.
//!
//! Timing: a packet read at run time `t` enters its first hop at `t`; the model returns its
//! arrival time; a heap orders pending packets by (arrival, arrival order). The loop sleeps
//! in `ppoll` on both TUN descriptors until `spin_ns` before the next deadline (or a packet
//! arrives), then spins until the deadline and writes the packet. The thread asks for
//! SCHED_FIFO and reports whether it got it. Every delivery's lateness (write time − modelled
//! arrival) is recorded, and every packet read or written is logged per flow
//! ([`PktEvent`]) for the delivery records, and optionally captured ([`FlowPcaps`]).

use crate::capture::FlowPcaps;
use crate::error::EmuError;
use crate::packet::{flow_of, parse, TcpHeader};
use crate::packet_log::{PacketLog, SpilledPackets};
use crate::stats::{Lateness, LatenessWindow, Timeline};
use crate::sys::Clock;
use crate::tun::Tun;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use std::sync::Arc;
use thinlab_sim::path::{Hop, Paths, FORWARD, REVERSE};
use thinlab_sim::{DropCounts, LinkReport};
use thinlab_trace::histogram::LatencyHistogram;

/// Bytes of framing the link model counts beyond the IP packet (an Ethernet header), as the
/// simulator does ([`thinlab_sim::link::FRAMING_BYTES`] = Ethernet + IPv4 header).
const ETHERNET_BYTES: u32 = 14;
/// Longest sleep without looking at the stop flag.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// SCHED_FIFO priority of the forwarding thread.
const FIFO_PRIORITY: i32 = 50;

/// A packet seen at a host's TUN device: sent by it (`out`) or delivered to it.
#[derive(Clone, Copy, Debug)]
pub struct PktEvent {
    /// Run time, ns.
    pub t: u64,
    /// Host side: 0 client, 1 server.
    pub side: u8,
    pub out: bool,
    pub h: TcpHeader,
}

/// Everything the emulator thread needs.
pub struct Setup {
    /// Indexed by side: 0 client, 1 server.
    pub tuns: [Tun; 2],
    pub paths: Paths,
    pub clock: Clock,
    pub pcaps: Vec<Option<FlowPcaps>>,
    /// Spin this long before a deadline instead of sleeping.
    pub spin_ns: u64,
    pub sched_fifo: bool,
}

/// What the emulator leaves after a run.
pub struct Report {
    /// Per flow, every packet read from or written to a TUN device, in time order.
    pub events: Vec<SpilledPackets>,
    pub lateness: Lateness,
    /// Lateness per minute of run time.
    pub lateness_by_minute: Vec<LatenessWindow>,
    /// `Ok(priority)` if the thread ran under SCHED_FIFO, else why not.
    pub sched_fifo: Result<i32, String>,
    pub drops: DropCounts,
    pub links: Vec<LinkReport>,
    /// (dropped by loss, dropped by queue) per flow.
    pub flow_drops: Vec<(u64, u64)>,
    /// Packets written to a TUN device.
    pub delivered: u64,
    /// Packets read that belong to no flow (not IPv4 TCP, or an unknown port): not forwarded.
    pub ignored: u64,
    pub pcaps: Vec<Option<FlowPcaps>>,
    /// The first error writing a capture, if any (the run goes on without that capture).
    pub capture_error: Option<io::Error>,
}

struct Pending {
    at: u64,
    n: u64,
    flow: usize,
    dir: usize,
    hop: usize,
    len: u32,
    h: TcpHeader,
    buf: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.n) == (o.at, o.n)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    /// Reversed: the heap's top is the earliest (arrival, order).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.n).cmp(&(self.at, self.n))
    }
}

struct Emulator {
    s: Setup,
    heap: BinaryHeap<Pending>,
    n: u64,
    events: Vec<PacketLog>,
    /// Every delivery's lateness, ns: an exact histogram (memory independent of run length).
    lateness: LatencyHistogram,
    timeline: Timeline,
    delivered: u64,
    ignored: u64,
    capture_error: Option<io::Error>,
}

/// Starts the emulator thread; it runs until `stop` is set.
pub fn spawn(
    s: Setup,
    stop: Arc<AtomicBool>,
) -> io::Result<std::thread::JoinHandle<Result<Report, EmuError>>> {
    std::thread::Builder::new()
        .name("tl-emulator".into())
        .spawn(move || {
            let fifo = if s.sched_fifo {
                crate::sys::sched_fifo(FIFO_PRIORITY)
                    .map(|()| FIFO_PRIORITY)
                    .map_err(|e| e.to_string())
            } else {
                Err("not requested".to_string())
            };
            let flows = s.paths.flows();
            let mut e = Emulator {
                s,
                heap: BinaryHeap::new(),
                n: 0,
                events: (0..flows).map(|_| PacketLog::default()).collect(),
                lateness: LatencyHistogram::default(),
                timeline: Timeline::default(),
                delivered: 0,
                ignored: 0,
                capture_error: None,
            };
            e.run(&stop)?;
            Ok(Report {
                flow_drops: (0..flows).map(|f| e.s.paths.flow_drops(f)).collect(),
                drops: e.s.paths.drops,
                links: e.s.paths.link_reports(),
                events: e
                    .events
                    .into_iter()
                    .map(PacketLog::finish)
                    .collect::<io::Result<_>>()
                    .map_err(|err| EmuError::Emulator(format!("writing the packet log: {err}")))?,
                lateness: Lateness::from_histogram(&e.lateness),
                lateness_by_minute: e.timeline.finish(),
                sched_fifo: fifo,
                delivered: e.delivered,
                ignored: e.ignored,
                pcaps: e.s.pcaps,
                capture_error: e.capture_error,
            })
        })
}

impl Emulator {
    fn run(&mut self, stop: &AtomicBool) -> Result<(), EmuError> {
        let mut buf = vec![0u8; 65_536];
        while !stop.load(AtOrd::Relaxed) {
            self.deliver_due()?;
            for side in 0..2 {
                loop {
                    match self.s.tuns[side].read(&mut buf) {
                        Ok(n) => {
                            let t = self.s.clock.now();
                            self.ingress(side, t, &buf[..n]);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            return Err(EmuError::Emulator(format!(
                                "reading TUN device {}: {e}",
                                self.s.tuns[side].name
                            )))
                        }
                    }
                }
            }
            let now = self.s.clock.now();
            let next = self.heap.peek().map(|p| p.at);
            if next.is_some_and(|at| at <= now + self.s.spin_ns) {
                std::hint::spin_loop();
                continue;
            }
            let wake = next.map_or(now + MAX_SLEEP_NS, |at| {
                (at - self.s.spin_ns).min(now + MAX_SLEEP_NS)
            });
            self.wait(wake.saturating_sub(now))?;
        }
        Ok(())
    }

    /// Sleeps up to `ns` or until a TUN device has a packet.
    fn wait(&self, ns: u64) -> Result<(), EmuError> {
        let mut fds = [0, 1].map(|i| libc::pollfd {
            fd: self.s.tuns[i].raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: `fds` holds two valid pollfd entries; `ts` is valid; no signal mask.
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(EmuError::Emulator(format!("ppoll: {e}")));
            }
        }
        for f in fds {
            if f.revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
                return Err(EmuError::Emulator(format!(
                    "TUN device descriptor {} reported an error",
                    f.fd
                )));
            }
        }
        Ok(())
    }

    fn capture(&mut self, flow: usize, side: usize, t: u64, pkt: &[u8]) {
        if let Some(p) = self.s.pcaps[flow].as_mut() {
            if let Err(e) = p.write(side, t, pkt) {
                self.s.pcaps[flow] = None;
                self.capture_error.get_or_insert(e);
            }
        }
    }

    /// Append to flow `flow`'s packet log (the log keeps its first write error for the report).
    fn log(&mut self, flow: usize, e: PktEvent) {
        self.events[flow].push(&e);
    }

    /// A packet read from host `side`'s TUN at `t`.
    fn ingress(&mut self, side: usize, t: u64, pkt: &[u8]) {
        let flows = self.events.len();
        let Some((h, flow)) = parse(pkt).and_then(|h| Some((h, flow_of(&h, side == 0, flows)?)))
        else {
            self.ignored += 1;
            return;
        };
        self.log(
            flow,
            PktEvent {
                t,
                side: side as u8,
                out: true,
                h,
            },
        );
        self.capture(flow, side, t, pkt);
        let dir = if side == 0 { FORWARD } else { REVERSE };
        let len = h.ip_len + ETHERNET_BYTES;
        self.schedule(t, flow, dir, 0, len, h, pkt.to_vec());
    }

    #[allow(clippy::too_many_arguments)]
    fn schedule(
        &mut self,
        now: u64,
        flow: usize,
        dir: usize,
        hop: usize,
        len: u32,
        h: TcpHeader,
        buf: Vec<u8>,
    ) {
        if let Hop::Arrives { at, .. } = self.s.paths.enter(now, flow, dir, hop, len) {
            self.n += 1;
            self.heap.push(Pending {
                at,
                n: self.n,
                flow,
                dir,
                hop,
                len,
                h,
                buf,
            });
        }
    }

    /// Moves every packet whose arrival time has come to its next hop or its host.
    fn deliver_due(&mut self) -> Result<(), EmuError> {
        while self.heap.peek().is_some_and(|p| p.at <= self.s.clock.now()) {
            let Some(p) = self.heap.pop() else { break };
            if p.hop + 1 < self.s.paths.hops(p.flow, p.dir) {
                self.schedule(p.at, p.flow, p.dir, p.hop + 1, p.len, p.h, p.buf);
                continue;
            }
            let dst = if p.dir == FORWARD { 1 } else { 0 };
            let t = self.s.clock.now();
            self.lateness.add(t.saturating_sub(p.at));
            self.timeline.add(t, t.saturating_sub(p.at));
            match self.s.tuns[dst].write(&p.buf) {
                Ok(_) => {}
                // A full backlog drops the packet, as a NIC would.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => continue,
                Err(e) => {
                    return Err(EmuError::Emulator(format!(
                        "writing TUN device {}: {e}",
                        self.s.tuns[dst].name
                    )))
                }
            }
            self.delivered += 1;
            self.log(
                p.flow,
                PktEvent {
                    t,
                    side: dst as u8,
                    out: false,
                    h: p.h,
                },
            );
            self.capture(p.flow, dst, t, &p.buf);
        }
        Ok(())
    }
}
