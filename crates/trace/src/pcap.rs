//! Capture reader: classic pcap and pcapng files into TCP packets.
//!
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
    /// TCP packets kept whose frame was cut by the snap length.
    pub snaplen_cut: u64,
    /// Byte offset at which reading stopped before the end of the input, if it did.
    pub stopped_at: Option<u64>,
    /// Why reading stopped early.
    pub stop_reason: Option<String>,
}

impl CaptureStats {
    fn drop(&mut self, reason: &str) {
        *self.dropped.entry(reason.to_string()).or_insert(0) += 1;
    }
    fn stop(&mut self, offset: usize, reason: impl Into<String>) {
        self.stopped_at = Some(offset as u64);
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

/// Reads a capture file. Only failing to read the file is an error; anything wrong inside it
/// is reported in the stats.
pub fn read_capture_file(path: &Path) -> std::io::Result<Capture> {
    let data = std::fs::read(path)?;
    Ok(read_capture(&data))
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
    let mut cap = Capture::default();
    cap.stats.bytes = data.len() as u64;
    match data.get(..4) {
        Some(m) if PCAP_MAGICS.iter().any(|p| p == m) => read_pcap(data, &mut cap),
        Some(m) if m == PCAPNG_MAGIC => read_pcapng(data, &mut cap),
        _ => {
            cap.stats.format = "unknown".into();
            if !data.is_empty() {
                cap.stats
                    .stop(0, "not a pcap or pcapng file (unknown magic number)");
            } else {
                cap.stats.stop(0, "empty file");
            }
        }
    }
    cap
}

fn read_pcap(data: &[u8], cap: &mut Capture) {
    cap.stats.format = "pcap".into();
    let (mut rem, parser) = match PcapParser::new(data) {
        Ok(x) => x,
        Err(PcapError::IncompleteBuffer) => return cap.stats.stop(0, "truncated file header"),
        Err(e) => return cap.stats.stop(0, format!("bad file header: {e}")),
    };
    let header = parser.header();
    let link = u32::from(header.datalink);
    cap.stats.link_types.push(link);
    let nanos = header.ts_resolution == TsResolution::NanoSecond;
    while !rem.is_empty() {
        let offset = data.len() - rem.len();
        let (next, raw) = match parser.next_raw_packet(rem) {
            Ok(x) => x,
            Err(PcapError::IncompleteBuffer) => {
                return cap
                    .stats
                    .stop(offset, "truncated record (end of file inside a record)")
            }
            Err(e) => return cap.stats.stop(offset, format!("unreadable record: {e}")),
        };
        rem = next;
        let record = cap.stats.records;
        cap.stats.records += 1;
        let frac = u64::from(raw.ts_frac);
        let frac_ns = if nanos {
            frac
        } else {
            frac.saturating_mul(1000)
        };
        let ts_ns = u64::from(raw.ts_sec)
            .saturating_mul(1_000_000_000)
            .saturating_add(frac_ns);
        let cut = raw.orig_len > raw.incl_len;
        decode_record(link, &raw.data, ts_ns, record, cut, cap);
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

fn read_pcapng(data: &[u8], cap: &mut Capture) {
    cap.stats.format = "pcapng".into();
    let (mut rem, mut parser) = match PcapNgParser::new(data) {
        Ok(x) => x,
        Err(PcapError::IncompleteBuffer) => {
            return cap.stats.stop(0, "truncated section header block")
        }
        Err(e) => return cap.stats.stop(0, format!("bad section header block: {e}")),
    };
    let mut ifaces: Vec<Interface> = Vec::new();
    while !rem.is_empty() {
        let offset = data.len() - rem.len();
        let big = parser.section().endianness == Endianness::Big;
        let block = match parser.next_block(rem) {
            Ok((next, block)) => {
                rem = next;
                block
            }
            Err(PcapError::IncompleteBuffer) => {
                return cap
                    .stats
                    .stop(offset, "truncated block (end of file inside a block)")
            }
            Err(e) => {
                // The block's framing may still be sound: skip it by its length field.
                match block_len(rem, big) {
                    Some(len) if !is_structural(rem, big) => {
                        cap.stats.drop("bad_block");
                        rem = &rem[len..];
                        continue;
                    }
                    _ => return cap.stats.stop(offset, format!("unreadable block: {e}")),
                }
            }
        };
        match block {
            Block::SectionHeader(_) => ifaces.clear(),
            Block::InterfaceDescription(idb) => {
                let link = u32::from(idb.linktype);
                if !cap.stats.link_types.contains(&link) {
                    cap.stats.link_types.push(link);
                }
                let mut units_per_sec = Some(1_000_000);
                let mut offset_s = 0;
                for o in &idb.options {
                    match o {
                        InterfaceDescriptionOption::IfTsResol(v) => {
                            units_per_sec = tsresol_units(*v)
                        }
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
                let record = cap.stats.records;
                cap.stats.records += 1;
                let Some(iface) = ifaces.get(epb.interface_id as usize) else {
                    cap.stats.drop("unknown_interface");
                    continue;
                };
                let raw_ts = u64::try_from(epb.timestamp.as_nanos()).unwrap_or(u64::MAX);
                let Some(ts) = ng_ts(iface, raw_ts) else {
                    cap.stats.drop("bad_timestamp_resolution");
                    continue;
                };
                let cut = epb.original_len as usize > epb.data.len();
                decode_record(iface.link, &epb.data, ts, record, cut, cap);
            }
            Block::Packet(pb) => {
                let record = cap.stats.records;
                cap.stats.records += 1;
                let Some(iface) = ifaces.get(usize::from(pb.interface_id)) else {
                    cap.stats.drop("unknown_interface");
                    continue;
                };
                let Some(ts) = ng_ts(iface, pb.timestamp) else {
                    cap.stats.drop("bad_timestamp_resolution");
                    continue;
                };
                let cut = pb.original_len as usize > pb.data.len();
                decode_record(iface.link, &pb.data, ts, record, cut, cap);
            }
            Block::SimplePacket(_) => {
                cap.stats.records += 1;
                cap.stats.drop("no_timestamp_simple_packet_block");
            }
            _ => {}
        }
    }
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

fn decode_record(link: u32, data: &[u8], ts_ns: u64, record: u64, cut: bool, cap: &mut Capture) {
    match decode(link, data) {
        Ok((src, dst, seg, payload_len, checksum_ok, incomplete)) => {
            cap.stats.tcp_packets += 1;
            if !checksum_ok {
                cap.stats.checksum_errors += 1;
            }
            if cut || incomplete {
                cap.stats.snaplen_cut += 1;
            }
            cap.packets.push(TcpPacket {
                ts_ns,
                src,
                dst,
                seg,
                payload_len,
                record,
            });
        }
        Err(reason) => cap.stats.drop(reason),
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
