//! `tcp.stack = "thinlab"`: thinlab's own sans-IO TCP endpoint ([`thinlab_tcp::Endpoint`])
//! as the data sender, driven in real time over its own TUN device against the kernel's TCP
//! receiver. This driver is the endpoint's only clock: run time on CLOCK_MONOTONIC.
//!
//! Each endpoint is a host "behind" the client namespace: the k-th thinlab flow of a run has
//! TUN device `tl-t<k>` (10.200.(k+1).1/24 on the namespace's side) and uses 10.200.(k+1).2.
//! The client namespace forwards between the `tl-t` devices and `tl-c` (ip_forward = 1), so
//! the endpoints' packets cross the same emulated path as a kernel flow's, and the server's
//! /16 sends the replies back. Packets
//! are encoded and parsed with the endpoint's own wire codec ([`thinlab_tcp::wire`]); the
//! IPv4 header is built here. The traffic source is the simulator's, with the same seeds; each
//! write is recorded when the application issues it and offered to the endpoint as its send
//! buffer frees, as in the simulator.

use crate::records::SpanLog;
use crate::sys::Clock;
use crate::tun::Tun;
use serde::Serialize;
use std::collections::VecDeque;
use std::io;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use thinlab_sim::app::Source;
use thinlab_tcp::{wire, Endpoint, Instant, State, TcpConfig};

/// Thinlab flows one run can hold (one /24 each in 10.200.1.0 – 10.200.250.0).
pub const MAX_THINLAB_FLOWS: usize = 250;

/// The address of the `k`-th thinlab endpoint of a run (behind `tl-t<k>`).
pub fn endpoint_addr(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 200, 1 + k as u8, 2)
}

/// The client namespace's side of `tl-t<k>`.
pub fn gateway_addr(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 200, 1 + k as u8, 1)
}
const MAX_WAIT_NS: u64 = 20_000_000;
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// What the endpoint reports at the end (exact, unlike the wire heuristics).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ThinlabReport {
    /// The handshake completed.
    pub established: bool,
    pub cc: String,
    pub rto_ms: f64,
    pub srtt_ms: Option<f64>,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub retransmissions_rto: u64,
    pub retransmissions_fast: u64,
    pub retransmissions_early: u64,
    pub retransmissions_tlp: u64,
    pub retransmissions_rack: u64,
    pub retransmissions_er_threshold: u64,
    pub rto_events: u64,
    pub spurious_retransmissions: u64,
    pub tlp_probes: u64,
    pub segments_dropped_malformed: u64,
}

/// The IPv4 header checksum of `h`.
fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet from `src` to `dst` carrying `seg`.
pub fn encode(
    seg: &thinlab_tcp::Segment,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    id: u16,
    out: &mut Vec<u8>,
) {
    out.clear();
    out.extend_from_slice(&[0x45, 0, 0, 0]);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]);
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&dst.octets());
    wire::emit_ipv4(seg, src.octets(), dst.octets(), out);
    let len = out.len() as u16;
    out[2..4].copy_from_slice(&len.to_be_bytes());
    let sum = ip_checksum(&out[..20]);
    out[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The TCP segment of an IPv4 packet, if it is one (checksum verified by the codec).
pub fn decode(pkt: &[u8]) -> Option<thinlab_tcp::Segment> {
    let h = crate::packet::parse(pkt)?;
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let src: [u8; 4] = pkt.get(12..16)?.try_into().ok()?;
    let dst: [u8; 4] = pkt.get(16..20)?.try_into().ok()?;
    wire::parse_ipv4(src, dst, pkt.get(ihl..h.ip_len as usize)?).ok()
}

/// Everything one thinlab sender needs.
pub struct Sender<'a> {
    pub tun: &'a Tun,
    pub config: TcpConfig,
    /// The endpoint's address ([`endpoint_addr`]) and port.
    pub local: (Ipv4Addr, u16),
    pub remote: (Ipv4Addr, u16),
    pub isn: u32,
    pub clock: Clock,
    pub drain_deadline: u64,
    pub abort: &'a AtomicBool,
}

impl Sender<'_> {
    fn wait(&self, ns: u64) {
        let mut p = libc::pollfd {
            fd: self.tun.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: one valid pollfd, a valid timeout, no signal mask.
        unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    }

    /// Connects, runs `source`, waits until every byte is acknowledged (or the drain
    /// deadline), closes; logs the writes. Returns the connect time and the endpoint's report.
    pub fn run(
        &self,
        mut source: Source,
        writes: &mut SpanLog,
    ) -> io::Result<(u64, ThinlabReport)> {
        let connect = self.clock.now();
        let mut ep = Endpoint::connect(
            Instant::from_nanos(connect),
            self.config.clone(),
            self.local.1,
            self.remote.1,
            self.isn,
        );
        let mut buf = vec![0u8; 65_536];
        let mut out = Vec::with_capacity(2048);
        let mut ip_id = 0u16;
        let mut queue: VecDeque<u64> = VecDeque::new();
        let (mut issued, mut started, mut closed) = (0u64, false, false);
        let mut next: Option<u64> = None;
        loop {
            if self.abort.load(Ordering::Relaxed) {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "run aborted"));
            }
            let now = self.clock.now();
            let t = Instant::from_nanos(now);
            loop {
                match self.tun.read(&mut buf) {
                    Ok(n) => {
                        if let Some(seg) = decode(&buf[..n]) {
                            ep.handle_segment(Instant::from_nanos(self.clock.now()), seg);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if ep.poll_timeout().is_some_and(|d| d <= t) {
                ep.handle_timeout(t);
            }
            if !started && ep.state() == State::Established {
                started = true;
                let mut w = |b| queue.push_back(b);
                next = source.start(now, &mut w);
                for &b in &queue {
                    writes.push(&(now, issued, issued + b));
                    issued += b;
                }
            }
            while let Some(tk) = next.filter(|&tk| tk <= now) {
                let mut fresh = Vec::new();
                next = source.tick(tk, &mut |b| fresh.push(b));
                for b in fresh {
                    writes.push(&(tk.max(now.min(tk)), issued, issued + b));
                    issued += b;
                    queue.push_back(b);
                }
            }
            if started && now >= source.stop_ns() {
                source.stop();
            }
            while let Some(front) = queue.front_mut() {
                let n = (*front).min(ZEROS.len() as u64) as usize;
                let k = ep.write(t, &ZEROS[..n]).unwrap_or(0) as u64;
                *front -= k;
                if *front == 0 {
                    queue.pop_front();
                }
                if k < n as u64 {
                    break;
                }
            }
            while started && source.bulk_budget() > 0 {
                let n = source.bulk_budget().min(ZEROS.len() as u64) as usize;
                let k = ep.write(t, &ZEROS[..n]).unwrap_or(0) as u64;
                if k == 0 {
                    break;
                }
                writes.push(&(now, issued, issued + k));
                issued += k;
                source.bulk_wrote(k);
            }
            while let Some(seg) = ep.poll_transmit(t) {
                ip_id = ip_id.wrapping_add(1);
                encode(&seg, self.local.0, self.remote.0, ip_id, &mut out);
                match self.tun.write(&out) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            while ep.poll_event().is_some() {}
            while ep.read().is_some() {}
            let finished = started && source.finished() && queue.is_empty();
            if finished && !closed && ep.bytes_unacked() == 0 {
                ep.close(t);
                closed = true;
                continue;
            }
            let fin_acked = closed
                && matches!(
                    ep.state(),
                    State::FinWait2 | State::TimeWait | State::Closed
                );
            if fin_acked || now >= self.drain_deadline || ep.error().is_some() {
                break;
            }
            let mut wake = now + MAX_WAIT_NS;
            if let Some(d) = ep.poll_timeout() {
                wake = wake.min(d.as_nanos());
            }
            if let Some(tk) = next {
                wake = wake.min(tk);
            }
            if wake > now {
                self.wait(wake - now);
            }
        }
        let st = ep.stats();
        Ok((
            connect,
            ThinlabReport {
                established: started,
                cc: format!("{:?}", ep.config().cc).to_lowercase(),
                rto_ms: ep.rto().as_secs_f64() * 1e3,
                srtt_ms: ep.srtt().map(|d| d.as_secs_f64() * 1e3),
                cwnd: ep.cwnd(),
                ssthresh: ep.ssthresh(),
                retransmissions_rto: st.retransmissions_rto,
                retransmissions_fast: st.retransmissions_fast,
                retransmissions_early: st.retransmissions_early,
                retransmissions_tlp: st.retransmissions_tlp,
                retransmissions_rack: st.retransmissions_rack,
                retransmissions_er_threshold: st.retransmissions_early_threshold,
                rto_events: st.rto_events,
                spurious_retransmissions: st.spurious_retransmissions,
                tlp_probes: st.tlp_probes,
                segments_dropped_malformed: st.dropped_malformed,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        let seg = thinlab_tcp::Segment {
            src_port: 40000,
            dst_port: 5001,
            seq: 7,
            ack: 9,
            flags: thinlab_tcp::Flags::ACK | thinlab_tcp::Flags::PSH,
            window: 1000,
            payload: bytes_of(120),
            ..Default::default()
        };
        let mut out = Vec::new();
        encode(
            &seg,
            endpoint_addr(0),
            Ipv4Addr::new(10, 200, 0, 2),
            1,
            &mut out,
        );
        assert_eq!(ip_checksum(&out[..20]), 0, "header checksum verifies");
        let back = decode(&out).expect("parses");
        assert_eq!((back.seq, back.ack, back.payload.len()), (7, 9, 120));
        let h = crate::packet::parse(&out).unwrap();
        assert_eq!(h.ip_len as usize, out.len());
        let last = out.len() - 1;
        out[last] ^= 0xff; // a corrupted payload fails the TCP checksum
        assert!(decode(&out).is_none());
        assert!(decode(&out[..10]).is_none());
    }

    fn bytes_of(n: usize) -> bytes::Bytes {
        bytes::Bytes::from(vec![0u8; n])
    }
}
