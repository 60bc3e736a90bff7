//! One emulated run of a scenario with one seed: the only owner of setup and teardown.
//!
//! Setup: two fresh namespaces (client host, server host), a TUN device in each
//! (`tl-c` 10.200.0.1/24, `tl-s` 10.200.0.2/24; the addresses exist only inside these
//! namespaces, so they cannot collide with the machine's and no packet can leave it), the
//! per-namespace sysctls, one listening socket per flow (port 5001 + i), the emulator thread,
//! then two application threads per flow. Teardown is dropping: the namespaces exist only as
//! file descriptors of this process, so they, their devices, routes and sockets vanish when
//! the run returns, fails, or the process dies.
//!
//! Time: run time 0 is when the emulator starts; flows connect at `flow.start`; sources
//! generate until `duration`; the run then drains until every flow's bytes are acknowledged,
//! bounded by [`drain_bound`] (the simulator's, at most 60 s of real time).

use crate::capture::FlowPcaps;
use crate::emulator::{self, Setup};
use crate::error::EmuError;
use crate::kernel_app::{self, SocketReport};
use crate::netns::{leftovers, read_sysctl, write_sysctl, Netns};
use crate::records::{self, AppLogs, SpanLog};
pub use crate::report::{DropCountsJson, FlowOutcome, FlowReport, RunOutcome, RunReport};
use crate::support::{self, SocketSettings};
use crate::sys::{is_root, Clock};
use crate::tcp_info::NetCounters;
use crate::thinlab_app::{endpoint_addr, gateway_addr};
use crate::tun::Tun;
use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thinlab_sim::app::Source;
use thinlab_sim::path::Paths;
use thinlab_sim::rng::{stream, Component};
use thinlab_sim::{Direction, Flow, Scenario};
use thinlab_trace::status::FlowStatus;

pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 1);
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 2);
/// Longest real-time drain after `duration`.
const MAX_DRAIN: Duration = Duration::from_secs(60);

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Write pcap files into this directory: of every flow if `capture_all`, else of the
    /// flows with `capture = true`.
    pub capture_dir: Option<PathBuf>,
    pub capture_all: bool,
    /// The emulator spins this long before each deadline.
    pub spin_us: u64,
    /// Ask for SCHED_FIFO for the emulator thread.
    pub sched_fifo: bool,
    /// `true` at the index of a flow whose sender is thinlab's TCP (`tcp.stack = "thinlab"`).
    pub thinlab_flows: Vec<bool>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            capture_dir: None,
            capture_all: false,
            spin_us: 50,
            sched_fifo: true,
            thinlab_flows: Vec::new(),
        }
    }
}

/// Checks what the backend needs: root, /dev/net/tun, network namespaces.
pub fn preflight() -> Result<(), EmuError> {
    if !is_root() {
        return Err(EmuError::NotRoot);
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(EmuError::NoTun)?;
    Netns::create().map_err(EmuError::NoNetns)?;
    Ok(())
}

/// The real-time drain bound after `duration`.
pub fn drain_bound(s: &Scenario) -> Duration {
    thinlab_sim::drain_bound(s).min(MAX_DRAIN)
}

/// Per (flow, host side) what its application thread logged.
#[derive(Default)]
struct Side {
    report: SocketReport,
    connect: Option<u64>,
    spans: SpanLog,
    /// The connection was established on this side.
    established: bool,
    /// Why this side's connection failed (the flow's status reason), if it did.
    failure: Option<String>,
}

/// A failure of one flow's connection (not of the run): recorded as the flow's status
/// reason; an abort (Ctrl-C, another thread's error) stays an error.
fn soft(out: &mut Side, what: &str, e: io::Error) -> Result<(), EmuError> {
    if e.kind() == io::ErrorKind::Interrupted {
        return Err(EmuError::Interrupted);
    }
    out.failure.get_or_insert(format!("{what}: {e}"));
    Ok(())
}

struct Ctx<'a> {
    s: &'a Scenario,
    seed: u64,
    clock: Clock,
    drain_deadline: u64,
    abort: &'a AtomicBool,
    /// Run the application threads under SCHED_FIFO (below the emulator).
    fifo: bool,
}

/// SCHED_FIFO priority of the application threads (the emulator's is higher).
const APP_FIFO_PRIORITY: i32 = 40;

/// Puts an application thread under SCHED_FIFO if asked (best effort: a machine that refuses
/// it still runs, with the scheduling noise `emu.json`'s `sched_fifo_error` explains).
fn app_priority(ctx: &Ctx) {
    if ctx.fifo {
        let _ = crate::sys::sched_fifo(APP_FIFO_PRIORITY);
    }
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn server_addr(i: usize) -> SocketAddrV4 {
    SocketAddrV4::new(SERVER_ADDR, crate::packet::BASE_PORT + i as u16)
}

/// Runs `s` once with `seed` in real time. `abort` (e.g. set on Ctrl-C) stops the run
/// within ~20 ms with [`EmuError::Interrupted`]; `progress` gets the run time now and then.
pub fn run(
    s: &Scenario,
    seed: u64,
    opts: &Options,
    abort: &AtomicBool,
    progress: &mut dyn FnMut(Duration),
) -> Result<RunOutcome, EmuError> {
    preflight()?;
    let (socks, ns_settings) = support::resolve(s, &opts.thinlab_flows)?;
    let thinlab = |i: usize| opts.thinlab_flows.get(i) == Some(&true);
    let any_thinlab = (0..s.flows.len()).any(thinlab);
    let hosts = [
        Netns::create().map_err(EmuError::NoNetns)?,
        Netns::create().map_err(EmuError::NoNetns)?,
    ];
    let tuns = [
        Tun::create(&hosts[0], "tl-c", CLIENT_ADDR, 24)
            .map_err(EmuError::setup("TUN device tl-c"))?,
        // A /16 on the server reaches the thinlab hosts (10.200.k.2) behind the client too.
        Tun::create(
            &hosts[1],
            "tl-s",
            SERVER_ADDR,
            if any_thinlab { 16 } else { 24 },
        )
        .map_err(EmuError::setup("TUN device tl-s"))?,
    ];
    // One TUN device per thinlab flow: (device, the endpoint's address).
    let mut tun_t: Vec<Option<(Tun, std::net::Ipv4Addr)>> = Vec::with_capacity(s.flows.len());
    let mut k = 0;
    for i in 0..s.flows.len() {
        if !thinlab(i) {
            tun_t.push(None);
            continue;
        }
        let name = format!("tl-t{k}");
        let t = Tun::create(&hosts[0], &name, gateway_addr(k), 24)
            .map_err(EmuError::setup(format!("TUN device {name}")))?;
        tun_t.push(Some((t, endpoint_addr(k))));
        k += 1;
    }
    if any_thinlab {
        hosts[0]
            .run(|| write_sysctl("net/ipv4/ip_forward", "1"))
            .map_err(EmuError::setup("forwarding in the client namespace"))?;
    }
    let wanted = ns_settings.sysctls();
    let mut sysctls = BTreeMap::new();
    for h in &hosts {
        sysctls = h
            .run(|| {
                let mut back = BTreeMap::new();
                for (k, v) in &wanted {
                    write_sysctl(k, v)?;
                    back.insert(k.replace('/', "."), read_sysctl(k)?);
                }
                back.insert(
                    "net.ipv4.tcp_congestion_control".into(),
                    read_sysctl("net/ipv4/tcp_congestion_control")?,
                );
                Ok(back)
            })
            .map_err(EmuError::setup("namespace sysctls"))?;
    }
    let n = s.flows.len();
    let mut sides: Vec<[Side; 2]> = (0..n).map(|_| Default::default()).collect();
    let listeners = hosts[1]
        .run(|| {
            sides
                .iter_mut()
                .enumerate()
                .map(|(i, sd)| kernel_app::listen(server_addr(i), &socks[i], &mut sd[1].report))
                .collect::<io::Result<Vec<_>>>()
        })
        .map_err(EmuError::setup("listening sockets"))?;
    let mut pcaps = Vec::with_capacity(n);
    for f in &s.flows {
        pcaps.push(match &opts.capture_dir {
            Some(dir) if opts.capture_all || f.capture => {
                Some(FlowPcaps::create(dir, &f.name, sender_side(f)).map_err(EmuError::Capture)?)
            }
            _ => None,
        });
    }
    let clock = Clock::start();
    let stop = Arc::new(AtomicBool::new(false));
    let emu = emulator::spawn(
        Setup {
            tuns,
            paths: Paths::new(s, seed),
            clock,
            pcaps,
            spin_ns: opts.spin_us * 1000,
            sched_fifo: opts.sched_fifo,
        },
        stop.clone(),
    )
    .map_err(EmuError::setup("the emulator thread"))?;
    let flow_abort = AtomicBool::new(false);
    let ctx = Ctx {
        s,
        seed,
        clock,
        drain_deadline: (s.duration + drain_bound(s)).as_nanos() as u64,
        abort: &flow_abort,
        fifo: opts.sched_fifo,
    };
    let errors: Vec<Option<EmuError>> = std::thread::scope(|sc| {
        let handles: Vec<_> = sides
            .iter_mut()
            .zip(&listeners)
            .enumerate()
            .map(|(i, (sd, l))| {
                let [c, sv] = sd;
                let (ctx, hosts, socks) = (&ctx, &hosts, &socks);
                let thinlab_tun = tun_t[i].as_ref();
                [
                    sc.spawn(move || match thinlab_tun {
                        Some((t, addr)) => thinlab_client(ctx, i, t, *addr, c),
                        None => client(ctx, i, &hosts[0], &socks[i], c),
                    }),
                    sc.spawn(move || server(ctx, i, &hosts[1], l, sv)),
                ]
            })
            .collect();
        while !handles.iter().flatten().all(|h| h.is_finished()) {
            if abort.load(Ordering::Relaxed) || emu.is_finished() {
                flow_abort.store(true, Ordering::Relaxed);
            }
            progress(Duration::from_nanos(clock.now()));
            std::thread::sleep(Duration::from_millis(50));
        }
        handles
            .into_iter()
            .flatten()
            .map(|h| match h.join() {
                Ok(r) => r.err(),
                Err(_) => Some(EmuError::Emulator("an application thread panicked".into())),
            })
            .collect()
    });
    let end = clock.now();
    stop.store(true, Ordering::Relaxed);
    let report = emu
        .join()
        .map_err(|_| EmuError::Emulator("the emulator thread panicked".into()))??;
    if abort.load(Ordering::Relaxed) {
        return Err(EmuError::Interrupted);
    }
    if let Some(e) = errors
        .into_iter()
        .flatten()
        .find(|e| !matches!(e, EmuError::Interrupted))
    {
        return Err(e);
    }
    for p in report.pcaps.into_iter().flatten() {
        p.finish().map_err(EmuError::Capture)?;
    }
    if let Some(e) = report.capture_error {
        return Err(EmuError::Capture(e));
    }
    let netstat = |h: &Netns| h.run(NetCounters::read).ok();
    let (client_netstat, server_netstat) = (netstat(&hosts[0]), netstat(&hosts[1]));
    let netns_inodes = [hosts[0].inode, hosts[1].inode];
    drop(listeners);
    drop(hosts);
    let mut flows = Vec::with_capacity(n);
    let mut flow_reports = Vec::with_capacity(n);
    for (i, (f, [c, sv])) in s.flows.iter().zip(sides).enumerate() {
        let (snd, rcv) = if sender_side(f) == 0 {
            (c, sv)
        } else {
            (sv, c)
        };
        // The client opens the connection: its side says whether it was established.
        let established = if sender_side(f) == 0 {
            snd.established
        } else {
            rcv.established
        };
        let failure = snd.failure.clone().or(rcv.failure.clone());
        let spilled = |log: SpanLog, what: &str| {
            log.finish()
                .and_then(|l| l.check().map(|()| l))
                .map_err(|e| EmuError::Emulator(format!("the {what} log: {e}")))
        };
        let logs = AppLogs {
            connect: snd.connect.or(rcv.connect),
            writes: spilled(snd.spans, "application's write")?,
            reads: spilled(rcv.spans, "application's read")?,
            finite: f.app.is_finite(),
        };
        let log = &report.events[i];
        log.check()
            .map_err(|e| EmuError::Emulator(format!("the packet log: {e}")))?;
        let (mut rec, host_parts) = records::build(&logs, || log.iter(), sender_side(f) as u8);
        if let Some(t) = &snd.report.thinlab {
            // The endpoint knows why it retransmitted: exact counts instead of the wire's guess.
            let p = &mut rec.packets;
            p.retrans_rto = t.retransmissions_rto;
            p.retrans_fast = t.retransmissions_fast;
            p.retrans_early = t.retransmissions_early;
            p.retrans_tlp = t.retransmissions_tlp;
            p.retrans_rack = t.retransmissions_rack;
            p.retrans_er_threshold = t.retransmissions_er_threshold;
            p.rto_events = t.rto_events;
            p.spurious_retransmissions = t.spurious_retransmissions;
        }
        let start = f.start.as_nanos() as u64;
        let active = if f.app.is_finite() {
            rec.last_delivery
                .map_or(end, |t| t.as_nanos())
                .saturating_sub(start)
        } else {
            (s.duration.as_nanos() as u64).saturating_sub(start)
        };
        let (dropped_loss, dropped_queue) = report.flow_drops[i];
        let (status, status_reason) = flow_status(&rec, established, failure);
        flows.push(FlowOutcome {
            name: f.name.clone(),
            completed: rec
                .writes
                .iter()
                .all(|w| w.acked.is_some() && w.app.is_some()),
            records: rec,
            duration: Duration::from_nanos(active),
            dropped_loss,
            dropped_queue,
            status,
            status_reason,
        });
        flow_reports.push(FlowReport {
            name: f.name.clone(),
            sender: snd.report,
            receiver: rcv.report,
            host_parts,
        });
    }
    Ok(RunOutcome {
        flows,
        end_time: Duration::from_nanos(end),
        drops: report.drops,
        report: RunReport {
            seed,
            kernel: kernel_release(),
            lateness: report.lateness,
            lateness_by_minute: report.lateness_by_minute,
            sched_fifo: report.sched_fifo.is_ok(),
            sched_fifo_error: report.sched_fifo.err(),
            spin_us: opts.spin_us,
            sysctls,
            flows: flow_reports,
            client_netstat,
            server_netstat,
            drops: report.drops.into(),
            packets_delivered: report.delivered,
            packets_ignored: report.ignored,
            netns_inodes,
            leftovers: leftovers(),
            end_time_s: end as f64 / 1e9,
        },
    })
}

/// How a flow ended, as the simulator says it (`thinlab_trace::status`).
fn flow_status(
    rec: &thinlab_trace::FlowRecords,
    established: bool,
    failure: Option<String>,
) -> (FlowStatus, Option<String>) {
    if established && rec.writes.iter().all(|w| w.app.is_some()) {
        return (FlowStatus::Completed, None);
    }
    if !established {
        let why = failure.unwrap_or_else(|| "the handshake never completed".into());
        return (FlowStatus::NeverEstablished, Some(why));
    }
    match failure {
        Some(f) => (FlowStatus::Aborted, Some(f)),
        None => (
            FlowStatus::DrainBoundHit,
            Some("the drain bound ended the run with data undelivered".into()),
        ),
    }
}

/// The host that sends the flow's data: 0 client, 1 server.
fn sender_side(f: &Flow) -> usize {
    if f.direction == Direction::Forward {
        0
    } else {
        1
    }
}

fn app_err<'a>(ctx: &Ctx<'a>, i: usize, what: &str) -> impl FnOnce(io::Error) -> EmuError + 'a {
    let flow = ctx.s.flows[i].name.clone();
    let what = what.to_string();
    let abort = ctx.abort;
    move |source| {
        let interrupted = source.kind() == io::ErrorKind::Interrupted;
        abort.store(true, Ordering::Relaxed);
        if interrupted {
            EmuError::Interrupted
        } else {
            EmuError::App { flow, what, source }
        }
    }
}

/// Runs the data-sending or -receiving role of host `side` on an established stream.
fn play(
    ctx: &Ctx,
    i: usize,
    side: usize,
    st: &mut std::net::TcpStream,
    out: &mut Side,
) -> Result<(), EmuError> {
    let f = &ctx.s.flows[i];
    let info = if sender_side(f) == side {
        let stop = ctx.s.duration.as_nanos() as u64;
        let source = Source::new(
            f.app.clone(),
            stream(ctx.seed, Component::App(i as u32)),
            stop,
        );
        kernel_app::send(
            st,
            source,
            &ctx.clock,
            ctx.drain_deadline,
            ctx.abort,
            &mut out.spans,
            &mut out.report.tcp_info_samples,
        )
    } else {
        kernel_app::receive(
            st,
            &ctx.clock,
            ctx.drain_deadline,
            ctx.abort,
            &mut out.spans,
        )
    };
    match info {
        Ok(info) => out.report.tcp_info = info,
        Err(e) => {
            let what = if sender_side(f) == side {
                "sending"
            } else {
                "receiving"
            };
            return soft(out, what, e);
        }
    }
    Ok(())
}

fn client(
    ctx: &Ctx,
    i: usize,
    ns: &Netns,
    k: &SocketSettings,
    out: &mut Side,
) -> Result<(), EmuError> {
    app_priority(ctx);
    ns.enter()
        .map_err(app_err(ctx, i, "entering the client namespace"))?;
    let start = ctx.s.flows[i].start.as_nanos() as u64;
    while ctx.clock.now() + 20_000_000 < start {
        if ctx.abort.load(Ordering::Relaxed) {
            return Err(EmuError::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ctx.clock.sleep_until(start);
    let fd = kernel_app::socket().map_err(app_err(ctx, i, "creating the client socket"))?;
    kernel_app::configure(&fd, k, &mut out.report);
    out.connect = Some(ctx.clock.now());
    let mut st = match kernel_app::connect(
        fd,
        server_addr(i),
        &ctx.clock,
        ctx.drain_deadline,
        ctx.abort,
    ) {
        Ok(st) => st,
        Err(e) => return soft(out, "connecting", e),
    };
    out.established = true;
    play(ctx, i, 0, &mut st, out)
}

/// The client side of a `tcp.stack = "thinlab"` flow: thinlab's endpoint at `addr` over its
/// own TUN device.
fn thinlab_client(
    ctx: &Ctx,
    i: usize,
    tun: &Tun,
    addr: std::net::Ipv4Addr,
    out: &mut Side,
) -> Result<(), EmuError> {
    app_priority(ctx);
    let f = &ctx.s.flows[i];
    let start = f.start.as_nanos() as u64;
    while ctx.clock.now() + 20_000_000 < start {
        if ctx.abort.load(Ordering::Relaxed) {
            return Err(EmuError::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ctx.clock.sleep_until(start);
    // As the simulator: the listener's ISN is drawn first, the cc seed from stream 1.
    let mut isn_rng = stream(ctx.seed, Component::Isn(i as u32));
    let mut cc_rng = isn_rng.clone();
    cc_rng.set_stream(1);
    let mut config = f.tcp.clone();
    config.cc_seed = rand::Rng::gen(&mut cc_rng);
    let _listener_isn: u32 = rand::Rng::gen(&mut isn_rng);
    let sender = crate::thinlab_app::Sender {
        tun,
        config,
        local: (addr, 32768 + i as u16),
        remote: (SERVER_ADDR, crate::packet::BASE_PORT + i as u16),
        isn: rand::Rng::gen(&mut isn_rng),
        clock: ctx.clock,
        drain_deadline: ctx.drain_deadline,
        abort: ctx.abort,
    };
    let stop = ctx.s.duration.as_nanos() as u64;
    let source = Source::new(
        f.app.clone(),
        stream(ctx.seed, Component::App(i as u32)),
        stop,
    );
    let (connect, report) =
        sender
            .run(source, &mut out.spans)
            .map_err(app_err(ctx, i, "thinlab sender"))?;
    out.connect = Some(connect);
    out.established = report.established;
    out.report.cc_requested = report.cc.clone();
    out.report.cc_used = Some(format!("thinlab:{}", report.cc));
    out.report.thinlab = Some(report);
    Ok(())
}

fn server(
    ctx: &Ctx,
    i: usize,
    ns: &Netns,
    l: &std::net::TcpListener,
    out: &mut Side,
) -> Result<(), EmuError> {
    app_priority(ctx);
    ns.enter()
        .map_err(app_err(ctx, i, "entering the server namespace"))?;
    let mut st = match kernel_app::accept(
        l,
        &ctx.clock,
        ctx.drain_deadline,
        ctx.abort,
        &mut out.report,
    ) {
        Ok(st) => st,
        Err(e) => return soft(out, "accepting", e),
    };
    out.established = true;
    out.connect = Some(ctx.clock.now());
    play(ctx, i, 1, &mut st, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use thinlab_tcp::Instant;
    use thinlab_trace::{FlowRecorder, FlowStatus};

    #[test]
    fn flow_status_follows_the_simulators_rules() {
        let mut r = FlowRecorder::new();
        r.on_write(Instant::from_nanos(0), 0, 10);
        let undelivered = r.finish();
        let mut r = FlowRecorder::new();
        r.on_write(Instant::from_nanos(0), 0, 10);
        r.on_receiver_event(&thinlab_tcp::Event::Delivered {
            at: Instant::from_nanos(5),
            start: 0,
            end: 10,
        });
        let delivered = r.finish();
        assert_eq!(flow_status(&delivered, true, None).0, FlowStatus::Completed);
        // A connection that failed after every write was delivered lost nothing.
        assert_eq!(
            flow_status(&delivered, true, Some("x".into())).0,
            FlowStatus::Completed
        );
        let empty = FlowRecorder::new().finish();
        let (s, why) = flow_status(&empty, false, None);
        assert_eq!(s, FlowStatus::NeverEstablished);
        assert_eq!(why.as_deref(), Some("the handshake never completed"));
        assert_eq!(
            flow_status(&undelivered, true, Some("sending: reset".into())),
            (FlowStatus::Aborted, Some("sending: reset".into()))
        );
        assert_eq!(
            flow_status(&undelivered, true, None).0,
            FlowStatus::DrainBoundHit
        );
    }
}
