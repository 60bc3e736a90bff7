//! Capture files out of the simulator: what tcpdump would have written at each host.
//!
//! For a flow with `capture = true` (or every flow with `thinlab run --capture`) the run writes
//! two classic pcap files (nanosecond timestamps, link type Ethernet, snap length 65535):
//! - `<flow name>-sender.pcap`: every segment as it leaves or arrives at the host whose
//!   endpoint sends the flow's data (data out, ACKs in);
//! - `<flow name>-receiver.pcap`: the same at the other host (data in, ACKs out).
//!
//! Each record is a full frame: Ethernet II, IPv4 (DF, TTL 64, an identification counter per
//! host, a valid header checksum) and the TCP segment as the endpoint emitted it, encoded by
//! [`thinlab_tcp::wire::emit_ipv4`] (valid TCP checksum). Payload bytes are zeros, as the
//! simulated applications write zeros. Timestamps are simulated time since the Unix epoch
//! (simulated t = 0 is 1970-01-01 00:00:00).
//!
//! Addresses are labels only (nothing goes on a network). Flow `i` (0-based, i = 256·H + L,
//! H < 128) has its client at `10.H.L.1` and its server at `10.(128+H).L.1`; MAC addresses
//! are locally administered `02:00:00:<side>:H:L` (side 0 client, 1 server). Ports are the
//! endpoints' own (client 32768 + i, server 5001).
//!
//! Write errors never stop a run: the first one is kept and returned at the end, and that
//! flow's files stop being written.

use etherparse::{EtherType, Ethernet2Header, IpNumber, Ipv4Header};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thinlab_tcp::wire::{emit_ipv4, Segment};

/// Snap length written in the file header; frames are never cut.
pub const SNAPLEN: u32 = 65535;

/// The addresses of one simulated host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostAddr {
    pub ip: [u8; 4],
    pub mac: [u8; 6],
}

/// Address of side `side` (0 client, 1 server) of flow `flow` (see the module doc).
pub fn host_addr(flow: usize, side: usize) -> HostAddr {
    let h = ((flow >> 8) & 0x7f) as u8;
    let l = flow as u8;
    let net = if side == 0 { h } else { 0x80 | h };
    HostAddr {
        ip: [10, net, l, 1],
        mac: [0x02, 0, 0, side as u8, h, l],
    }
}

/// Appends the Ethernet/IPv4/TCP frame of `seg` from `src` to `dst` to `out`.
/// `ip_id` is the IPv4 identification field.
pub fn frame(seg: &Segment, src: &HostAddr, dst: &HostAddr, ip_id: u16, out: &mut Vec<u8>) {
    let eth = Ethernet2Header {
        source: src.mac,
        destination: dst.mac,
        ether_type: EtherType::IPV4,
    };
    out.extend_from_slice(&eth.to_bytes());
    let ip_start = out.len();
    out.extend_from_slice(&[0u8; Ipv4Header::MIN_LEN]);
    let tcp_start = out.len();
    emit_ipv4(seg, src.ip, dst.ip, out);
    let tcp_len = (out.len() - tcp_start).min(usize::from(u16::MAX) - Ipv4Header::MIN_LEN);
    let mut ip = Ipv4Header::new(tcp_len as u16, 64, IpNumber::TCP, src.ip, dst.ip)
        .expect("TCP length bounded above");
    ip.identification = ip_id;
    ip.dont_fragment = true;
    ip.header_checksum = ip.calc_header_checksum();
    out[ip_start..tcp_start].copy_from_slice(&ip.to_bytes());
}

/// A pcap file being written: nanosecond timestamps, Ethernet frames.
pub struct PcapOut<W: Write> {
    w: PcapWriter<W>,
    buf: Vec<u8>,
}

fn pcap_err(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => io::Error::other(e.to_string()),
    }
}

impl<W: Write> PcapOut<W> {
    /// Writes the file header.
    pub fn new(w: W) -> io::Result<Self> {
        let header = PcapHeader {
            snaplen: SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        Ok(PcapOut {
            w: PcapWriter::with_header(w, header).map_err(pcap_err)?,
            buf: Vec::with_capacity(2048),
        })
    }

    /// Writes one record at simulated time `t_ns`.
    pub fn write(
        &mut self,
        t_ns: u64,
        seg: &Segment,
        src: &HostAddr,
        dst: &HostAddr,
        ip_id: u16,
    ) -> io::Result<()> {
        self.buf.clear();
        frame(seg, src, dst, ip_id, &mut self.buf);
        let len = self.buf.len().min(SNAPLEN as usize);
        let pkt = PcapPacket::new(Duration::from_nanos(t_ns), len as u32, &self.buf[..len]);
        self.w.write_packet(&pkt).map_err(pcap_err)?;
        Ok(())
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.w.into_writer()
    }
}

/// File names (sender, receiver) of a flow's captures.
pub fn file_names(flow_name: &str) -> (String, String) {
    let clean: String = flow_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = if clean.trim_matches('.').is_empty() {
        "flow".to_string()
    } else {
        clean
    };
    (
        format!("{clean}-sender.pcap"),
        format!("{clean}-receiver.pcap"),
    )
}

/// The two capture files of one flow, indexed by side (0 client, 1 server).
pub struct FlowCapture {
    files: [Option<PcapOut<BufWriter<File>>>; 2],
    addrs: [HostAddr; 2],
    ip_id: [u16; 2],
    paths: [PathBuf; 2],
}

impl FlowCapture {
    /// Creates `dir/<name>-sender.pcap` (at side `sender`) and `dir/<name>-receiver.pcap`.
    pub fn create(dir: &Path, flow: usize, name: &str, sender: usize) -> io::Result<Self> {
        let (s, r) = file_names(name);
        let mut paths = [dir.join(&r), dir.join(&r)];
        paths[sender] = dir.join(&s);
        let open = |p: &Path| -> io::Result<PcapOut<BufWriter<File>>> {
            let f = File::create(p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
            PcapOut::new(BufWriter::with_capacity(64 * 1024, f))
        };
        Ok(FlowCapture {
            files: [Some(open(&paths[0])?), Some(open(&paths[1])?)],
            addrs: [host_addr(flow, 0), host_addr(flow, 1)],
            ip_id: [0, 0],
            paths,
        })
    }

    /// Paths of the files, indexed by side.
    pub fn paths(&self) -> &[PathBuf; 2] {
        &self.paths
    }

    fn record(&mut self, at: usize, from: usize, t_ns: u64, seg: &Segment) -> io::Result<()> {
        let id = self.ip_id[from];
        let (src, dst) = (self.addrs[from], self.addrs[1 - from]);
        let Some(out) = self.files[at].as_mut() else {
            return Ok(());
        };
        let r = out.write(t_ns, seg, &src, &dst, id);
        if r.is_err() {
            self.files[at] = None;
        }
        r
    }

    /// Side `side` sent `seg` at `t_ns`: recorded in its own file. The IP identification of the
    /// sending host advances.
    pub fn sent(&mut self, side: usize, t_ns: u64, seg: &Segment) -> io::Result<()> {
        let r = self.record(side, side, t_ns, seg);
        self.ip_id[side] = self.ip_id[side].wrapping_add(1);
        r
    }

    /// `seg` from the other side arrived at side `side` at `t_ns`. Its IP identification is the
    /// one it was sent with only when nothing else was sent in between; it is a label.
    pub fn arrived(&mut self, side: usize, t_ns: u64, seg: &Segment) -> io::Result<()> {
        let id = self.ip_id[1 - side].wrapping_sub(1);
        let (src, dst) = (self.addrs[1 - side], self.addrs[side]);
        let Some(out) = self.files[side].as_mut() else {
            return Ok(());
        };
        let r = out.write(t_ns, seg, &src, &dst, id);
        if r.is_err() {
            self.files[side] = None;
        }
        r
    }

    /// Flushes both files.
    pub fn finish(self) -> io::Result<()> {
        for f in self.files.into_iter().flatten() {
            f.into_inner().flush()?;
        }
        Ok(())
    }
}

/// Where a run writes captures and which flows it captures.
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    /// Directory for the files (created if missing).
    pub dir: PathBuf,
    /// Capture every flow, not only those with `capture = true`.
    pub all_flows: bool,
}

/// The captures of one run, indexed by flow (`None`: not captured).
pub(crate) struct RunCapture {
    flows: Vec<Option<FlowCapture>>,
    error: Option<io::Error>,
}

impl RunCapture {
    /// Opens the files of every flow to capture; `flows` gives (name, capture flag, sender side).
    pub(crate) fn create(
        opts: &CaptureOptions,
        flows: &[(String, bool, usize)],
    ) -> io::Result<RunCapture> {
        std::fs::create_dir_all(&opts.dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", opts.dir.display())))?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::with_capacity(flows.len());
        for (i, (name, capture, sender)) in flows.iter().enumerate() {
            if !(opts.all_flows || *capture) {
                out.push(None);
                continue;
            }
            // Two flows of the same name get distinct files.
            let name = if seen.insert(name.clone()) {
                name.clone()
            } else {
                format!("{name}-{i}")
            };
            out.push(Some(FlowCapture::create(&opts.dir, i, &name, *sender)?));
        }
        Ok(RunCapture {
            flows: out,
            error: None,
        })
    }

    #[inline]
    pub(crate) fn sent(&mut self, flow: usize, side: usize, t_ns: u64, seg: &Segment) {
        if let Some(Some(c)) = self.flows.get_mut(flow) {
            if let Err(e) = c.sent(side, t_ns, seg) {
                self.error.get_or_insert(e);
            }
        }
    }

    #[inline]
    pub(crate) fn arrived(&mut self, flow: usize, side: usize, t_ns: u64, seg: &Segment) {
        if let Some(Some(c)) = self.flows.get_mut(flow) {
            if let Err(e) = c.arrived(side, t_ns, seg) {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Flushes every file; the first error of the run, if any.
    pub(crate) fn finish(self) -> io::Result<()> {
        let mut first = self.error;
        for c in self.flows.into_iter().flatten() {
            if let Err(e) = c.finish() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
