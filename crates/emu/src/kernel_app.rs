//! The applications of one flow on real kernel TCP sockets: the data sender runs the
//! simulator's traffic source ([`thinlab_sim::app::Source`], same seeds, same write times and
//! sizes) and writes into its socket; the data receiver reads as soon as data is readable.
//! Each write call and each read is timestamped on the run's monotonic clock.
//!
//! Threads call these from inside their host's namespace (sockets are created there).
//! Blocking calls use short timeouts so that an abort (Ctrl-C, another flow's failure) is
//! noticed within ~20 ms.

use crate::records::SpanLog;
use crate::support::SocketSettings;
use crate::sys::{cvt, getsockopt_bytes, getsockopt_int, setsockopt, Clock};
use crate::tcp_info::{Sampler, TcpInfo};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thinlab_sim::app::Source;

const TCP_THIN_LINEAR_TIMEOUTS: i32 = 16;
const POLL: Duration = Duration::from_millis(20);
/// How often the data sender's `TCP_INFO` is sampled (between writes, during bulk writes and
/// while the sent data drains).
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// What was asked of a socket and what the kernel reports it runs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SocketReport {
    pub cc_requested: String,
    /// `TCP_CONGESTION` read back: the algorithm that ran.
    pub cc_used: Option<String>,
    /// Why setting `TCP_CONGESTION` failed, if it did (the namespace default then runs).
    pub cc_error: Option<String>,
    pub nodelay: Option<bool>,
    pub thin_linear_timeouts: Option<bool>,
    pub mss: Option<i32>,
    /// `TCP_INFO` when the flow ended.
    pub tcp_info: Option<TcpInfo>,
    /// The data sender's `TCP_INFO` every [`SAMPLE_EVERY`] (between writes, during bulk
    /// writes, while draining; thinned to at most `tcp_info::MAX_SAMPLES` on a long run):
    /// (run time s, sample).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tcp_info_samples: Vec<(f64, TcpInfo)>,
    /// `tcp.stack = "thinlab"`: the endpoint's own figures (then no kernel socket sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinlab: Option<crate::thinlab_app::ThinlabReport>,
}

fn aborted(abort: &AtomicBool) -> io::Result<()> {
    if abort.load(Ordering::Relaxed) {
        Err(io::Error::new(io::ErrorKind::Interrupted, "run aborted"))
    } else {
        Ok(())
    }
}

/// A new IPv4 TCP socket in the calling thread's namespace.
pub fn socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the result is checked and owned.
    let fd =
        cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` is a fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Applies `k` to a socket (before connect or on the listener) and reads it back.
pub fn configure(fd: &impl AsRawFd, k: &SocketSettings, report: &mut SocketReport) {
    let raw = fd.as_raw_fd();
    report.cc_requested = k.cc.clone();
    let name = k.cc.as_bytes();
    // SAFETY: `name` has `name.len()` readable bytes.
    let r = cvt(unsafe {
        libc::setsockopt(
            raw,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    });
    report.cc_error = r.err().map(|e| e.to_string());
    let _ = setsockopt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_NODELAY,
        &i32::from(k.nodelay),
    );
    let _ = setsockopt(
        fd,
        libc::IPPROTO_TCP,
        TCP_THIN_LINEAR_TIMEOUTS,
        &i32::from(k.linear_timeouts),
    );
    let _ = setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &i32::from(k.mss));
    read_back(raw, report);
}

fn read_back(raw: i32, report: &mut SocketReport) {
    let mut b = [0u8; 16];
    report.cc_used = getsockopt_bytes(raw, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut b)
        .ok()
        .map(|n| {
            let s = &b[..n];
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            String::from_utf8_lossy(&s[..end]).into_owned()
        });
    report.nodelay = getsockopt_int(raw, libc::IPPROTO_TCP, libc::TCP_NODELAY)
        .ok()
        .map(|v| v != 0);
    report.thin_linear_timeouts = getsockopt_int(raw, libc::IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS)
        .ok()
        .map(|v| v != 0);
    report.mss = getsockopt_int(raw, libc::IPPROTO_TCP, libc::TCP_MAXSEG).ok();
}

/// Listens on `addr` with the flow's options (accepted sockets inherit them).
pub fn listen(
    addr: SocketAddrV4,
    k: &SocketSettings,
    report: &mut SocketReport,
) -> io::Result<TcpListener> {
    let fd = socket()?;
    setsockopt(&fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32)?;
    configure(&fd, k, report);
    let sa = sockaddr(addr);
    // SAFETY: `sa` is a valid sockaddr_in of the given length.
    cvt(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    // SAFETY: `fd` is a bound socket.
    cvt(unsafe { libc::listen(fd.as_raw_fd(), 16) })?;
    let l = TcpListener::from(fd);
    l.set_nonblocking(true)?;
    Ok(l)
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(a.ip().octets()),
        },
        sin_zero: [0; 8],
    }
}

/// Accepts one connection, checking `abort` and giving up at run time `deadline`.
pub fn accept(
    l: &TcpListener,
    clock: &Clock,
    deadline: u64,
    abort: &AtomicBool,
    report: &mut SocketReport,
) -> io::Result<TcpStream> {
    loop {
        aborted(abort)?;
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                read_back(s.as_raw_fd(), report);
                return Ok(s);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if clock.now() > deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no connection came",
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Connects `fd` (configured, in the client's namespace) to `addr`; blocking, as an
/// application's connect() is, but checking `abort` every 20 ms and giving up at run time
/// `deadline`.
pub fn connect(
    fd: OwnedFd,
    addr: SocketAddrV4,
    clock: &Clock,
    deadline: u64,
    abort: &AtomicBool,
) -> io::Result<TcpStream> {
    let sa = sockaddr(addr);
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on our own descriptor.
    unsafe {
        libc::fcntl(
            raw,
            libc::F_SETFL,
            libc::fcntl(raw, libc::F_GETFL) | libc::O_NONBLOCK,
        )
    };
    // SAFETY: `sa` is a valid sockaddr_in of the given length.
    let r = unsafe {
        libc::connect(
            raw,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        loop {
            aborted(abort)?;
            if clock.now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the handshake had not completed at the drain bound",
                ));
            }
            let mut p = libc::pollfd {
                fd: raw,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut p, 1, POLL.as_millis() as i32) } > 0 {
                break;
            }
        }
        let err = getsockopt_int(raw, libc::SOL_SOCKET, libc::SO_ERROR)?;
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
    }
    let s = TcpStream::from(fd);
    s.set_nonblocking(false)?;
    Ok(s)
}

/// Bytes not yet acknowledged (queued or in flight) in a socket's send queue.
fn outq(s: &TcpStream) -> io::Result<i32> {
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int.
    cvt(unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut n) })?;
    Ok(n)
}

/// Writes all of `bytes` (blocking, as the simulator's application does: the rest waits for
/// send-buffer space), returning how many were written before an abort.
fn write_all(s: &mut TcpStream, mut bytes: u64, abort: &AtomicBool) -> io::Result<()> {
    while bytes > 0 {
        aborted(abort)?;
        let n = bytes.min(ZEROS.len() as u64) as usize;
        match s.write(&ZEROS[..n]) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
            Ok(k) => bytes -= k as u64,
            Err(e) if retry(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The data sender: runs `source` from establishment until it finishes, waits until every
/// byte is acknowledged (or run time `drain_deadline`), samples `TCP_INFO`, then shuts its
/// side down so that the receiver sees the end of the stream.
pub fn send(
    s: &mut TcpStream,
    mut source: Source,
    clock: &Clock,
    drain_deadline: u64,
    abort: &AtomicBool,
    writes: &mut SpanLog,
    samples: &mut Vec<(f64, TcpInfo)>,
) -> io::Result<Option<TcpInfo>> {
    s.set_write_timeout(Some(POLL))?;
    let mut sampler = Sampler::new(SAMPLE_EVERY);
    let fd = s.as_raw_fd();
    let mut sample = |now: u64| sampler.tick(now, samples, || TcpInfo::of(fd));
    let mut issued = 0u64;
    let mut pending = Vec::new();
    let mut next = source.start(clock.now(), &mut |b| pending.push(b));
    loop {
        for b in pending.drain(..) {
            let t = clock.now();
            write_all(s, b, abort)?;
            writes.push(&(t, issued, issued + b));
            issued += b;
        }
        if source.is_bulk() {
            loop {
                aborted(abort)?;
                let now = clock.now();
                sample(now); // the write below returns at least every POLL
                if !source.app().is_finite() && now >= source.stop_ns() {
                    source.stop();
                }
                if source.bulk_budget() == 0 || now >= drain_deadline {
                    break;
                }
                let n = source.bulk_budget().min(ZEROS.len() as u64) as usize;
                match s.write(&ZEROS[..n]) {
                    Ok(k) => {
                        writes.push(&(now, issued, issued + k as u64));
                        issued += k as u64;
                        source.bulk_wrote(k as u64);
                    }
                    Err(e) if retry(&e) => {}
                    Err(e) => return Err(e),
                }
            }
            break;
        }
        let Some(t) = next else { break };
        // Writes closer together than POLL never enter the wait below: sample here too.
        sample(clock.now());
        while clock.now() + POLL.as_nanos() as u64 <= t {
            aborted(abort)?;
            sample(clock.now());
            std::thread::sleep(POLL);
        }
        clock.sleep_until(t);
        next = source.tick(t, &mut |b| pending.push(b));
    }
    while outq(s)? > 0 && clock.now() < drain_deadline {
        aborted(abort)?;
        sample(clock.now());
        std::thread::sleep(Duration::from_millis(1));
    }
    let info = TcpInfo::of(s.as_raw_fd()).ok();
    s.shutdown(std::net::Shutdown::Write)?;
    Ok(info)
}

fn retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// The data receiver: reads until the end of the stream, run time `deadline`, or an abort;
/// each read is one delivered range. Returns `TCP_INFO` at the end.
pub fn receive(
    s: &mut TcpStream,
    clock: &Clock,
    deadline: u64,
    abort: &AtomicBool,
    reads: &mut SpanLog,
) -> io::Result<Option<TcpInfo>> {
    s.set_read_timeout(Some(POLL))?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        aborted(abort)?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let t = clock.now();
                reads.push(&(t, total, total + n as u64));
                total += n as u64;
            }
            Err(e) if retry(&e) => {
                if clock.now() > deadline {
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(TcpInfo::of(s.as_raw_fd()).ok())
}
