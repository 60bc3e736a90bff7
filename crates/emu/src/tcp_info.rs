//! What the kernel says about a socket and a namespace: `TCP_INFO` (a subset of `struct
//! tcp_info`, read by offset so that older and newer kernels both work) and the TCP counters
//! of `/proc/net/netstat` (TcpExt) and `/proc/net/snmp` (Tcp) of the calling thread's
//! namespace.

use crate::sys::getsockopt_bytes;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::RawFd;

/// Samples kept per socket: when full, every other one is dropped and the period doubles.
pub const MAX_SAMPLES: usize = 4096;

/// Periodic `TCP_INFO` samples with memory bounded on any run length: one every `every` ns
/// of run time until [`MAX_SAMPLES`] are kept, then every other one is dropped and the period
/// doubles (a 1-hour run at 100 ms keeps about 2 900 samples, 1.6 s apart by its end).
pub struct Sampler {
    every: u64,
    next: u64,
}

impl Sampler {
    pub fn new(every: std::time::Duration) -> Sampler {
        Sampler {
            every: every.as_nanos().max(1) as u64,
            next: 0,
        }
    }

    /// Takes a sample at run time `now` (ns) if one is due and `read` gives one.
    pub fn tick(
        &mut self,
        now: u64,
        into: &mut Vec<(f64, TcpInfo)>,
        read: impl FnOnce() -> io::Result<TcpInfo>,
    ) {
        if now < self.next {
            return;
        }
        if into.len() >= MAX_SAMPLES {
            let mut i = 0;
            into.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.every *= 2;
        }
        if let Ok(info) = read() {
            into.push((now as f64 / 1e9, info));
        }
        self.next = now - now % self.every + self.every;
    }

    /// The current period, ns.
    pub fn every_ns(&self) -> u64 {
        self.every
    }
}

/// A sample of `TCP_INFO`; times in ms, null where the kernel's struct is too short.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub backoff: u8,
    pub rto_ms: f64,
    pub srtt_ms: f64,
    pub rttvar_ms: f64,
    pub min_rtt_ms: Option<f64>,
    pub snd_mss: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub unacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub total_retrans: u32,
    pub segs_out: Option<u32>,
    pub data_segs_out: Option<u32>,
    pub bytes_retrans: Option<u64>,
    pub dsack_dups: Option<u32>,
    pub reord_seen: Option<u32>,
    pub total_rto: Option<u16>,
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(i..i + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

impl TcpInfo {
    /// Decodes the first `b.len()` bytes of a `struct tcp_info` (offsets of linux/tcp.h).
    pub fn decode(b: &[u8]) -> Option<TcpInfo> {
        let ms = |us: u32| us as f64 / 1e3;
        Some(TcpInfo {
            state: *b.first()?,
            ca_state: *b.get(1)?,
            backoff: *b.get(4)?,
            rto_ms: ms(u32_at(b, 8)?),
            snd_mss: u32_at(b, 16)?,
            unacked: u32_at(b, 24)?,
            lost: u32_at(b, 32)?,
            retrans: u32_at(b, 36)?,
            srtt_ms: ms(u32_at(b, 68)?),
            rttvar_ms: ms(u32_at(b, 72)?),
            snd_ssthresh: u32_at(b, 76)?,
            snd_cwnd: u32_at(b, 80)?,
            total_retrans: u32_at(b, 100)?,
            segs_out: u32_at(b, 136),
            min_rtt_ms: u32_at(b, 148).map(ms),
            data_segs_out: u32_at(b, 156),
            bytes_retrans: u64_at(b, 208),
            dsack_dups: u32_at(b, 216),
            reord_seen: u32_at(b, 220),
            total_rto: b.get(240..242).map(|x| u16::from_ne_bytes([x[0], x[1]])),
        })
    }

    pub fn of(fd: RawFd) -> io::Result<TcpInfo> {
        let mut b = [0u8; 256];
        let n = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut b)?;
        TcpInfo::decode(&b[..n]).ok_or_else(|| io::Error::other("TCP_INFO too short"))
    }
}

/// Parses the paired header/value lines of /proc/net/netstat or /proc/net/snmp, keeping the
/// group `group` (e.g. "TcpExt", "Tcp").
pub fn parse_counters(text: &str, group: &str) -> BTreeMap<String, i64> {
    let prefix = format!("{group}:");
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(&prefix)).collect();
    let mut out = BTreeMap::new();
    if let [names, values, ..] = lines.as_slice() {
        for (k, v) in names
            .split_whitespace()
            .zip(values.split_whitespace())
            .skip(1)
        {
            if let Ok(v) = v.parse() {
                out.insert(k.to_string(), v);
            }
        }
    }
    out
}

/// The calling thread's namespace's TCP counters: TcpExt (non-zero only) and Tcp.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NetCounters {
    pub tcp_ext: BTreeMap<String, i64>,
    pub tcp: BTreeMap<String, i64>,
}

impl NetCounters {
    pub fn read() -> io::Result<NetCounters> {
        let netstat = std::fs::read_to_string("/proc/thread-self/net/netstat")?;
        let snmp = std::fs::read_to_string("/proc/thread-self/net/snmp")?;
        let mut tcp_ext = parse_counters(&netstat, "TcpExt");
        tcp_ext.retain(|_, v| *v != 0);
        Ok(NetCounters {
            tcp_ext,
            tcp: parse_counters(&snmp, "Tcp"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampler_keeps_memory_bounded_and_thins_evenly() {
        let ms = 1_000_000u64;
        let mut s = Sampler::new(std::time::Duration::from_millis(100));
        let mut v = Vec::new();
        let info = || Ok(TcpInfo::default());
        s.tick(0, &mut v, info);
        s.tick(50 * ms, &mut v, info); // not due
        s.tick(100 * ms, &mut v, info);
        assert_eq!(v.len(), 2);
        // one hour, polled every 20 ms
        for t in (120..3_600_000).step_by(20) {
            s.tick(t * ms, &mut v, info);
        }
        assert!(
            v.len() <= MAX_SAMPLES && v.len() > MAX_SAMPLES / 2,
            "{}",
            v.len()
        );
        assert_eq!(s.every_ns(), 1600 * ms);
        assert!(v.windows(2).all(|w| w[1].0 > w[0].0));
        let last = v.last().unwrap().0;
        assert!(last > 3598.0, "{last}");
        // a failed read takes nothing
        let n = v.len();
        s.tick(4_000_000 * ms, &mut v, || Err(io::Error::other("gone")));
        assert_eq!(v.len(), n);
    }

    #[test]
    fn counters_pair_names_and_values() {
        let t = "TcpExt: SyncookiesSent TCPLossProbes\nTcpExt: 0 3\nIpExt: A\nIpExt: 1\n";
        let m = parse_counters(t, "TcpExt");
        assert_eq!(m.get("TCPLossProbes"), Some(&3));
        assert_eq!(m.len(), 2);
        assert!(parse_counters("TcpExt: A B\n", "TcpExt").is_empty());
        assert!(parse_counters("", "Tcp").is_empty());
    }

    #[test]
    fn tcp_info_offsets() {
        let mut b = vec![0u8; 104];
        b[0] = 1;
        b[8..12].copy_from_slice(&304_000u32.to_ne_bytes());
        b[80..84].copy_from_slice(&10u32.to_ne_bytes());
        b[100..104].copy_from_slice(&2u32.to_ne_bytes());
        let i = TcpInfo::decode(&b).unwrap();
        assert_eq!(
            (i.state, i.rto_ms, i.snd_cwnd, i.total_retrans),
            (1, 304.0, 10, 2)
        );
        assert_eq!(i.segs_out, None);
        assert!(TcpInfo::decode(&b[..50]).is_none());
    }
}
