//! Capture reader: classic pcap and pcapng files into TCP packets.
//!
//! - Streaming: [`CaptureReader`] reads any `Read` in bounded chunks ([`CHUNK`]) and yields
//!   packets one at a time, so memory does not grow with the capture (a record longer than
//!   [`MAX_RECORD`] stops reading); [`read_capture`] / [`read_capture_file`] collect it.
//! - Containers: pcap (either byte order, micro- or nanosecond timestamps, via pcap-file's
//!   slice parser on raw records) and pcapng (sections of either byte order, Enhanced and
//!   obsolete Packet blocks, per-interface `if_tsresol` / `if_tsoffset`).
//! - Link types: Ethernet (1, with VLAN / QinQ tags), Linux cooked capture v1 (113) and v2
//!   (276), raw IP (101, 12, 14), IPv4 (228), IPv6 (229), BSD loopback (0, 108).
//! - IPv4 and IPv6 (with extension headers) through etherparse's lax slicer, so a frame cut by
//!   the snap length still yields its TCP header: the payload length is then taken from the IP
//!   length fields ([`TcpPacket::payload_len`]); the payload bytes themselves are not kept.
//! - TCP headers through [`thinlab_tcp::wire::parse`]. The checksum is verified when the whole
//!   segment was captured; a bad checksum is counted but the packet is kept (senders with
//!   checksum offload capture their own segments with wrong checksums).
//!
//! Never panics on any input. Every record that is not a usable TCP packet is counted under a
//! reason in [`CaptureStats::dropped`] and skipped. When the container itself cannot be read
//! further (truncated record, corrupt length), reading stops there and
//! [`CaptureStats::stopped_at`] names the byte offset of the record that could not be read;
//! everything before it is kept.

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket};
use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::net::IpAddr;
use std::path::Path;
use thinlab_tcp::wire::{self, Segment};

/// One TCP packet of a capture. `seg.payload` is always empty: see `payload_len`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpPacket {
    /// Capture timestamp, ns since the Unix epoch.
    pub ts_ns: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// Header fields and options (payload not kept).
    pub seg: Segment,
    /// TCP payload length as the IP header declares it (also when the frame was cut short).
    pub payload_len: u32,
    /// Index of the record in the file (0-based, counting every record).
    pub record: u64,
}

/// What was read and what was dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CaptureStats {
    /// "pcap", "pcapng" or "unknown".
    pub format: String,
    /// Link types seen (pcap header / pcapng interfaces).
    pub link_types: Vec<u32>,
    /// Size of the input, bytes.
    pub bytes: u64,
    /// Packet records read (every record, usable or not).
    pub records: u64,
    /// Records that yielded a TCP packet.
    pub tcp_packets: u64,
    /// Records dropped, by reason.
    pub dropped: BTreeMap<String, u64>,
    /// TCP packets kept whose checksum did not verify.
    pub checksum_errors: u64,
    /// TCP packets and checksum errors per source address (the first
    /// [`MAX_SOURCES_TRACKED`] sources), to recognise checksum offload.
    #[serde(skip)]
    pub by_source: BTreeMap<IpAddr, (u64, u64)>,
    /// TCP packets kept whose frame was cut by the snap length.
    pub snaplen_cut: u64,
    /// Byte offset at which reading stopped before the end of the input, if it did.
    pub stopped_at: Option<u64>,
    /// Why reading stopped early.
    pub stop_reason: Option<String>,
}

/// Source addresses whose packet and checksum-error counts are kept.
pub const MAX_SOURCES_TRACKED: usize = 64;

/// Checksum offload recognised: every TCP packet from one source, and none from any other, has a
/// wrong checksum (a capture on a host whose NIC fills in the checksum of outgoing packets after
/// the capture point).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChecksumOffload {
    pub source: IpAddr,
    pub packets: u64,
}

impl CaptureStats {
    /// Checksum offload at the capturing host, if that explains every checksum error.
    pub fn checksum_offload(&self) -> Option<ChecksumOffload> {
        if self.checksum_errors == 0 {
            return None;
        }
        let mut bad = self.by_source.iter().filter(|(_, &(_, e))| e > 0);
        let (&src, &(n, e)) = bad.next()?;
        let tracked: u64 = self.by_source.values().map(|&(_, e)| e).sum();
        (bad.next().is_none() && e == n && tracked == self.checksum_errors).then_some(
            ChecksumOffload {
                source: src,
                packets: n,
            },
        )
    }

    fn drop(&mut self, reason: &str) {
        *self.dropped.entry(reason.to_string()).or_insert(0) += 1;
    }
    fn stop(&mut self, offset: u64, reason: impl Into<String>) {
        self.stopped_at = Some(offset);
        self.stop_reason = Some(reason.into());
    }
    /// Records dropped, all reasons.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }
}

/// The TCP packets of a capture, in file order, and what reading it found.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub packets: Vec<TcpPacket>,
    pub stats: CaptureStats,
}

/// Reads a whole capture file into memory. Only failing to open the file is an error; anything
/// wrong inside it is reported in the stats. To analyse large files, stream them with
/// [`CaptureReader`] instead.
pub fn read_capture_file(path: &Path) -> std::io::Result<Capture> {
    let mut r = CaptureReader::from_file(File::open(path)?);
    let packets = r.by_ref().collect();
    Ok(Capture {
        packets,
        stats: r.finish(),
    })
}

const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Reads a capture held in memory (pcap or pcapng, recognised by its magic number).
pub fn read_capture(data: &[u8]) -> Capture {
    let mut r = CaptureReader::new(data);
    let packets = r.by_ref().collect();
    Capture {
        packets,
        stats: r.finish(),
    }
}

/// Bytes asked of the source per read.
pub const CHUNK: usize = 1 << 20;
/// Largest pcap record or pcapng block the reader buffers; a longer one (a corrupt or hostile
/// length field) stops reading there.
pub const MAX_RECORD: usize = 64 << 20;

/// Bytes [`CaptureReader::finish`] reads past an early stop to count the input's size.
pub const MAX_DRAIN: u64 = 64 << 20;

enum State {
    /// Before the magic number.
    Start,
    PcapHeader,
    Pcap {
        parser: PcapParser,
        link: u32,
        nanos: bool,
    },
    PcapNgHeader,
    PcapNg {
        parser: Box<PcapNgParser>,
        ifaces: Vec<Interface>,
    },
}

enum Step {
    Packet(TcpPacket),
    Continue,
    NeedMore,
    /// Needs more bytes to decide; at the end of the input, step again (it then decides).
    MoreOrDecide,
}

/// Streams the TCP packets out of a pcap or pcapng capture, reading `src` in bounded chunks:
/// memory is one chunk plus the longest record, whatever the length of the capture. The
/// packets come out in file order (an `Iterator`); [`CaptureReader::finish`] then gives the
/// statistics, with the byte offset at which reading stopped if the capture is truncated or
/// corrupt. Never panics on any input; a read error of `src` also stops reading (and is named
/// in `stop_reason`).
pub struct CaptureReader<R: Read> {
    src: R,
    buf: Vec<u8>,
    /// Start of the unparsed bytes in `buf`.
    pos: usize,
    /// File offset of `buf[0]`.
    base: u64,
    chunk: usize,
    eof: bool,
    io_error: Option<String>,
    done: bool,
    state: State,
    stats: CaptureStats,
    /// Size of the input when known up front (a file): `finish` then need not read the rest.
    total_len: Option<u64>,
}

impl CaptureReader<File> {
    /// A reader of a file, whose size is taken from its metadata (so that [`Self::finish`]
    /// after an early stop does not read through the rest of a large file).
    pub fn from_file(f: File) -> Self {
        let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
        let mut r = Self::new(f);
        r.total_len = len;
        r
    }
}

impl<R: Read> CaptureReader<R> {
    pub fn new(src: R) -> Self {
        Self::with_chunk(src, CHUNK)
    }

    /// A reader asking `src` for `chunk` bytes at a time (at least 1; tests use tiny chunks to
    /// put record boundaries everywhere).
    pub fn with_chunk(src: R, chunk: usize) -> Self {
        CaptureReader {
            src,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            chunk: chunk.max(1),
            eof: false,
            io_error: None,
            done: false,
            state: State::Start,
            stats: CaptureStats::default(),
            total_len: None,
        }
    }

    /// Statistics so far (complete once the iterator has returned `None`).
    pub fn stats(&self) -> &CaptureStats {
        &self.stats
    }

    /// The statistics, with `bytes` the size of the whole input (for a file, its size; else
    /// the rest of `src` is read through and counted, not parsed, up to [`MAX_DRAIN`] bytes —
    /// a pipe or a device such as `/dev/zero` may never end).
    pub fn finish(mut self) -> CaptureStats {
        let read = self.base + self.buf.len() as u64;
        let total = match self.total_len {
            _ if self.eof => read,
            Some(len) => len.max(read),
            None => {
                read + std::io::copy(&mut (&mut self.src).take(MAX_DRAIN), &mut std::io::sink())
                    .unwrap_or(0)
            }
        };
        self.stats.bytes = total;
        if self.stats.format.is_empty() {
            self.stats.format = "unknown".into();
        }
        self.stats
    }

    /// Reads more of `src` into the buffer; false at the end of the input.
    fn more(&mut self) -> bool {
        if self.eof {
            return false;
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        // Grow geometrically, so a long record costs O(its length) to buffer.
        let want = self.chunk.max(self.buf.len());
        let old = self.buf.len();
        self.buf.resize(old + want, 0);
        let mut filled = old;
        while filled < self.buf.len() {
            match self.src.read(&mut self.buf[filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.io_error = Some(e.to_string());
                    self.eof = true;
                    break;
                }
            }
        }
        self.buf.truncate(filled);
        filled > old
    }

    fn stop(&mut self, reason: impl Into<String>) {
        self.stats.stop(self.base + self.pos as u64, reason);
        self.done = true;
    }

    /// The input ended (or `src` failed) while `step` wanted more bytes.
    fn end_of_input(&mut self) {
        let left = self.buf.len() - self.pos;
        if let Some(e) = self.io_error.take() {
            return self.stop(format!("read error: {e}"));
        }
        match self.state {
            State::Start if self.buf.is_empty() => self.stop("empty file"),
            State::Start => self.stop("not a pcap or pcapng file (unknown magic number)"),
            State::PcapHeader => self.stop("truncated file header"),
            State::PcapNgHeader => self.stop("truncated section header block"),
            _ if left == 0 => self.done = true,
            State::Pcap { .. } => self.stop("truncated record (end of file inside a record)"),
            State::PcapNg { .. } => self.stop("truncated block (end of file inside a block)"),
        }
    }

    fn step(&mut self) -> Step {
        let avail = &self.buf[self.pos..];
        match &mut self.state {
            State::Start => {
                let Some(m) = avail.get(..4) else {
                    return Step::NeedMore;
                };
                if PCAP_MAGICS.iter().any(|p| p == m) {
                    self.stats.format = "pcap".into();
                    self.state = State::PcapHeader;
                } else if m == PCAPNG_MAGIC {
                    self.stats.format = "pcapng".into();
                    self.state = State::PcapNgHeader;
                } else {
                    self.stats.format = "unknown".into();
                    self.stop("not a pcap or pcapng file (unknown magic number)");
                }
                Step::Continue
            }
            State::PcapHeader => match PcapParser::new(avail) {
                Ok((rem, parser)) => {
                    let header = parser.header();
                    let link = u32::from(header.datalink);
                    let nanos = header.ts_resolution == TsResolution::NanoSecond;
                    self.stats.link_types.push(link);
                    self.pos += avail.len() - rem.len();
                    self.state = State::Pcap {
                        parser,
                        link,
                        nanos,
                    };
                    Step::Continue
                }
                Err(PcapError::IncompleteBuffer) => Step::NeedMore,
                Err(e) => {
                    self.stop(format!("bad file header: {e}"));
                    Step::Continue
                }
            },
            State::Pcap {
                parser,
                link,
                nanos,
            } => {
                if avail.is_empty() {
                    return Step::NeedMore;
                }
                let (rem, raw) = match parser.next_raw_packet(avail) {
                    Ok(x) => x,
                    Err(PcapError::IncompleteBuffer) => {
                        // A record header whose length cannot be right is named as such, not
                        // as a truncated file.
                        let big = parser.header().endianness == Endianness::Big;
                        let declared = avail.get(8..).and_then(|b| read_u32(b, big));
                        let offset = self.base + self.pos as u64;
                        let left = self.total_len.map(|t| t.saturating_sub(offset + 16));
                        if let Some(d) = declared {
                            let record = self.stats.records + 1;
                            if d as usize > MAX_RECORD {
                                self.stop(format!(
                                    "record {record} declares a length of {d} bytes, more than the largest record thinlab reads ({} MiB): a corrupt length field",
                                    MAX_RECORD >> 20
                                ));
                                return Step::Continue;
                            }
                            if left.is_some_and(|l| u64::from(d) > l) {
                                self.stop(format!(
                                    "record {record} declares a length of {d} bytes, but only {} bytes follow its header: a corrupt length field or a truncated file",
                                    left.unwrap_or(0)
                                ));
                                return Step::Continue;
                            }
                        }
                        return Step::NeedMore;
                    }
                    Err(e) => {
                        self.stop(format!("unreadable record: {e}"));
                        return Step::Continue;
                    }
                };
                let used = avail.len() - rem.len();
                let record = self.stats.records;
                self.stats.records += 1;
                let frac = u64::from(raw.ts_frac);
                let frac_ns = if *nanos {
                    frac
                } else {
                    frac.saturating_mul(1000)
                };
                let ts_ns = u64::from(raw.ts_sec)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(frac_ns);
                let cut = raw.orig_len > raw.incl_len;
                let p = decode_record(*link, &raw.data, ts_ns, record, cut, &mut self.stats);
                self.pos += used;
                p.map_or(Step::Continue, Step::Packet)
            }
            State::PcapNgHeader => match PcapNgParser::new(avail) {
                Ok((rem, parser)) => {
                    self.pos += avail.len() - rem.len();
                    self.state = State::PcapNg {
                        parser: Box::new(parser),
                        ifaces: Vec::new(),
                    };
                    Step::Continue
                }
                Err(PcapError::IncompleteBuffer) => Step::NeedMore,
                Err(e) => {
                    self.stop(format!("bad section header block: {e}"));
                    Step::Continue
                }
            },
            State::PcapNg { parser, ifaces } => {
                if avail.is_empty() {
                    return Step::NeedMore;
                }
                let big = parser.section().endianness == Endianness::Big;
                let block = match parser.next_block(avail) {
                    Ok((rem, block)) => {
                        let used = avail.len() - rem.len();
                        let p = ng_block(block, ifaces, &mut self.stats);
                        self.pos += used;
                        return p.map_or(Step::Continue, Step::Packet);
                    }
                    Err(PcapError::IncompleteBuffer) => return Step::NeedMore,
                    Err(e) => e,
                };
                // The block's framing may still be sound: skip it by its length field. That
                // needs the whole block (or the end of the input) in the buffer.
                let declared = avail.get(4..).and_then(|b| read_u32(b, big));
                if declared.is_some_and(|d| d as usize > avail.len() && d as usize <= MAX_RECORD)
                    && !self.eof
                {
                    return Step::MoreOrDecide;
                }
                match block_len(avail, big) {
                    Some(len) if !is_structural(avail, big) => {
                        self.stats.drop("bad_block");
                        self.pos += len;
                    }
                    _ => self.stop(format!("unreadable block: {block}")),
                }
                Step::Continue
            }
        }
    }
}

impl<R: Read> Iterator for CaptureReader<R> {
    type Item = TcpPacket;

    fn next(&mut self) -> Option<TcpPacket> {
        while !self.done {
            match self.step() {
                Step::Packet(p) => return Some(p),
                Step::Continue => {}
                Step::MoreOrDecide => {
                    // Without more input `eof` is now set, and the next step decides.
                    self.more();
                }
                Step::NeedMore => {
                    if self.buf.len() - self.pos > MAX_RECORD {
                        self.stop(format!(
                            "record or block longer than {} MiB (corrupt length field?)",
                            MAX_RECORD >> 20
                        ));
                    } else if !self.more() {
                        self.end_of_input();
                    }
                }
            }
        }
        None
    }
}

/// Units per second of a pcapng `if_tsresol` value.
fn tsresol_units(v: u8) -> Option<u128> {
    let e = u32::from(v & 0x7f);
    if v & 0x80 != 0 {
        (e < 64).then(|| 1u128 << e)
    } else {
        10u128.checked_pow(e)
    }
}

struct Interface {
    link: u32,
    units_per_sec: Option<u128>,
    offset_s: u64,
}

fn ng_ts(iface: &Interface, raw: u64) -> Option<u64> {
    let units = iface.units_per_sec?;
    if units == 0 {
        return None;
    }
    let ns = u128::from(raw) * 1_000_000_000 / units;
    let ns = ns.saturating_add(u128::from(iface.offset_s) * 1_000_000_000);
    Some(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// One pcapng block: updates the interfaces, and decodes a packet block.
fn ng_block(
    block: Block<'_>,
    ifaces: &mut Vec<Interface>,
    stats: &mut CaptureStats,
) -> Option<TcpPacket> {
    match block {
        Block::SectionHeader(_) => ifaces.clear(),
        Block::InterfaceDescription(idb) => {
            let link = u32::from(idb.linktype);
            if !stats.link_types.contains(&link) {
                stats.link_types.push(link);
            }
            let mut units_per_sec = Some(1_000_000);
            let mut offset_s = 0;
            for o in &idb.options {
                match o {
                    InterfaceDescriptionOption::IfTsResol(v) => units_per_sec = tsresol_units(*v),
                    InterfaceDescriptionOption::IfTsOffset(s) => offset_s = *s,
                    _ => {}
                }
            }
            ifaces.push(Interface {
                link,
                units_per_sec,
                offset_s,
            });
        }
        Block::EnhancedPacket(epb) => {
            let record = stats.records;
            stats.records += 1;
            let Some(iface) = ifaces.get(epb.interface_id as usize) else {
                stats.drop("unknown_interface");
                return None;
            };
            let raw_ts = u64::try_from(epb.timestamp.as_nanos()).unwrap_or(u64::MAX);
            let Some(ts) = ng_ts(iface, raw_ts) else {
                stats.drop("bad_timestamp_resolution");
                return None;
            };
            let cut = epb.original_len as usize > epb.data.len();
            return decode_record(iface.link, &epb.data, ts, record, cut, stats);
        }
        Block::Packet(pb) => {
            let record = stats.records;
            stats.records += 1;
            let Some(iface) = ifaces.get(usize::from(pb.interface_id)) else {
                stats.drop("unknown_interface");
                return None;
            };
            let Some(ts) = ng_ts(iface, pb.timestamp) else {
                stats.drop("bad_timestamp_resolution");
                return None;
            };
            let cut = pb.original_len as usize > pb.data.len();
            return decode_record(iface.link, &pb.data, ts, record, cut, stats);
        }
        Block::SimplePacket(_) => {
            stats.records += 1;
            stats.drop("no_timestamp_simple_packet_block");
        }
        _ => {}
    }
    None
}

fn read_u32(b: &[u8], big: bool) -> Option<u32> {
    let a: [u8; 4] = b.get(..4)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    })
}

/// Total length of the pcapng block at the start of `b`, if its framing is consistent.
fn block_len(b: &[u8], big: bool) -> Option<usize> {
    let len = read_u32(b.get(4..)?, big)? as usize;
    if len < 12 || !len.is_multiple_of(4) || len > b.len() {
        return None;
    }
    (read_u32(&b[len - 4..], big)? as usize == len).then_some(len)
}

/// Section and interface blocks cannot be skipped: later blocks depend on them.
fn is_structural(b: &[u8], big: bool) -> bool {
    matches!(read_u32(b, big), Some(0x0A0D_0D0A) | Some(1))
}

/// Link-layer decoding: the network-layer slice of a frame.
fn sliced(link: u32, data: &[u8]) -> Result<LaxSlicedPacket<'_>, &'static str> {
    let ether = |t: u16, rest| Ok(LaxSlicedPacket::from_ether_type(EtherType(t), rest));
    match DataLink::from(link) {
        DataLink::ETHERNET => LaxSlicedPacket::from_ethernet(data).map_err(|_| "link_malformed"),
        DataLink::LINUX_SLL => {
            let h = data.get(..16).ok_or("link_malformed")?;
            ether(u16::from_be_bytes([h[14], h[15]]), &data[16..])
        }
        DataLink::LINUX_SLL2 => {
            let h = data.get(..20).ok_or("link_malformed")?;
            ether(u16::from_be_bytes([h[0], h[1]]), &data[20..])
        }
        DataLink::RAW
        | DataLink::IPV4
        | DataLink::IPV6
        | DataLink::Unknown(12)
        | DataLink::Unknown(14) => LaxSlicedPacket::from_ip(data).map_err(|_| "ip_malformed"),
        DataLink::NULL | DataLink::LOOP => {
            let h: [u8; 4] = data
                .get(..4)
                .ok_or("link_malformed")?
                .try_into()
                .unwrap_or([0; 4]);
            // The address family, in the capturing host's byte order (NULL) or big-endian (LOOP).
            let fam = u32::from_le_bytes(h).min(u32::from_be_bytes(h));
            match fam {
                2 => ether(0x0800, &data[4..]),
                10 | 24 | 28 | 30 => ether(0x86DD, &data[4..]),
                _ => Err("not_ip"),
            }
        }
        _ => Err("unsupported_link_type"),
    }
}

fn decode_record(
    link: u32,
    data: &[u8],
    ts_ns: u64,
    record: u64,
    cut: bool,
    stats: &mut CaptureStats,
) -> Option<TcpPacket> {
    match decode(link, data) {
        Ok((src, dst, seg, payload_len, checksum_ok, incomplete)) => {
            stats.tcp_packets += 1;
            if !checksum_ok {
                stats.checksum_errors += 1;
            }
            let n = stats.by_source.len();
            if let Some(c) = match stats.by_source.get_mut(&src) {
                Some(c) => Some(c),
                None if n < MAX_SOURCES_TRACKED => Some(stats.by_source.entry(src).or_default()),
                None => None,
            } {
                c.0 += 1;
                c.1 += u64::from(!checksum_ok);
            }
            if cut || incomplete {
                stats.snaplen_cut += 1;
            }
            Some(TcpPacket {
                ts_ns,
                src,
                dst,
                seg,
                payload_len,
                record,
            })
        }
        Err(reason) => {
            stats.drop(reason);
            None
        }
    }
}

type Decoded = (IpAddr, IpAddr, Segment, u32, bool, bool);

fn decode(link: u32, data: &[u8]) -> Result<Decoded, &'static str> {
    let p = sliced(link, data)?;
    let net = match p.net {
        Some(n) => n,
        None if p.stop_err.is_some() => return Err("ip_malformed"),
        None => return Err("not_ip"),
    };
    let (src, dst, declared_ip_payload, pl) = match &net {
        LaxNetSlice::Ipv4(v4) => {
            let h = v4.header();
            let ext = v4.extensions().auth.map_or(0, |a| a.slice().len());
            let declared = usize::from(h.total_len())
                .saturating_sub(h.slice().len())
                .saturating_sub(ext);
            (
                IpAddr::from(h.source()),
                IpAddr::from(h.destination()),
                declared,
                v4.payload(),
            )
        }
        LaxNetSlice::Ipv6(v6) => {
            let h = v6.header();
            let declared =
                usize::from(h.payload_length()).saturating_sub(v6.extensions().slice().len());
            (
                IpAddr::from(h.source()),
                IpAddr::from(h.destination()),
                declared,
                v6.payload(),
            )
        }
    };
    if pl.ip_number != etherparse::IpNumber::TCP {
        return Err("not_tcp");
    }
    if pl.fragmented {
        return Err("ip_fragment");
    }
    let tcp = pl.payload;
    let hl = tcp
        .get(12)
        .map(|b| usize::from(b >> 4) * 4)
        .ok_or("tcp_malformed")?;
    if hl < wire::MIN_HEADER_LEN || tcp.len() < hl {
        return Err("tcp_malformed");
    }
    let seg = wire::parse(&tcp[..hl]).map_err(|_| "tcp_malformed")?;
    // A zero or too-small declared length (TSO captures write 0) falls back to what is there.
    let declared = if pl.incomplete {
        declared_ip_payload.max(tcp.len())
    } else {
        tcp.len()
    };
    let payload_len = u32::try_from(declared - hl).map_err(|_| "tcp_malformed")?;
    let checksum_ok = pl.incomplete
        || match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => wire::verify_ipv4(s.octets(), d.octets(), tcp),
            (IpAddr::V6(s), IpAddr::V6(d)) => wire::verify_ipv6(s.octets(), d.octets(), tcp),
            _ => false,
        };
    Ok((src, dst, seg, payload_len, checksum_ok, pl.incomplete))
}
