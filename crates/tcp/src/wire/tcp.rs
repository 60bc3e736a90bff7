//! The TCP header (RFC 9293 §3.1): [`parse`] and [`emit`], plus the checksummed variants for
//! IPv4 and IPv6.
//!
//! The fixed header is read with etherparse's [`TcpHeaderSlice`] and written with its
//! [`TcpHeader`]; options go through [`super::options`]. Fields [`Segment`] does not carry
//! are dropped on parse and written as zero on emit: the urgent pointer, the reserved bits
//! and the (historic, RFC 3540) NS bit. The checksum is not checked by [`parse`]; use
//! [`parse_ipv4`] / [`parse_ipv6`] (or [`verify_ipv4`](super::verify_ipv4)) for that.

use bytes::Bytes;
use etherparse::err::tcp::{HeaderError, HeaderSliceError};
use etherparse::{TcpHeader, TcpHeaderSlice};

use super::checksum::{self, IPV4_MAX_TCP_LEN, IPV6_MAX_TCP_LEN};
use super::options::{encode_options, options_len, parse_options};
use super::{Flags, Segment, TcpOptions, WireError};

/// Length of the fixed TCP header (data offset 5).
pub const MIN_HEADER_LEN: usize = TcpHeader::MIN_LEN;
/// Longest TCP header (data offset 15).
pub const MAX_HEADER_LEN: usize = TcpHeader::MAX_LEN;
/// Byte offset of the flags byte (CWR … FIN) in the TCP header.
const FLAGS_OFFSET: usize = 13;

/// Parses a TCP segment: fixed header, options and payload (copied into a [`Bytes`]).
///
/// Never panics, whatever the input. The checksum is not verified (it needs the IP
/// addresses). See [`super::options`] for what is accepted in the option space.
pub fn parse(tcp: &[u8]) -> Result<Segment, WireError> {
    let h = TcpHeaderSlice::from_slice(tcp).map_err(|e| match e {
        HeaderSliceError::Len(l) if tcp.len() < MIN_HEADER_LEN => {
            WireError::TruncatedHeader { len: l.len }
        }
        HeaderSliceError::Len(l) => WireError::TruncatedOptions {
            header_len: l.required_len,
            len: l.len,
        },
        HeaderSliceError::Content(HeaderError::DataOffsetTooSmall { data_offset }) => {
            WireError::BadDataOffset { data_offset }
        }
    })?;
    let header_len = h.slice().len();
    let options = parse_options(h.options(), MIN_HEADER_LEN)?;
    Ok(Segment {
        src_port: h.source_port(),
        dst_port: h.destination_port(),
        seq: h.sequence_number(),
        ack: h.acknowledgment_number(),
        flags: Flags(h.slice()[FLAGS_OFFSET]),
        window: h.window_size(),
        options,
        payload: Bytes::copy_from_slice(&tcp[header_len..]),
    })
}

/// Parses a segment carried over IPv4 after verifying its checksum against the pseudo-header.
pub fn parse_ipv4(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> Result<Segment, WireError> {
    if tcp.len() > IPV4_MAX_TCP_LEN {
        return Err(WireError::TooLong {
            len: tcp.len(),
            max: IPV4_MAX_TCP_LEN,
        });
    }
    let seg = parse(tcp)?;
    if !checksum::verify_ipv4(src, dst, tcp) {
        return Err(WireError::BadChecksum {
            found: checksum::stored_checksum(tcp).unwrap_or(0),
            computed: checksum::checksum_ipv4(src, dst, tcp).unwrap_or(0),
        });
    }
    Ok(seg)
}

/// Parses a segment carried over IPv6 after verifying its checksum against the pseudo-header.
pub fn parse_ipv6(src: [u8; 16], dst: [u8; 16], tcp: &[u8]) -> Result<Segment, WireError> {
    if tcp.len() > IPV6_MAX_TCP_LEN {
        return Err(WireError::TooLong {
            len: tcp.len(),
            max: IPV6_MAX_TCP_LEN,
        });
    }
    let seg = parse(tcp)?;
    if !checksum::verify_ipv6(src, dst, tcp) {
        return Err(WireError::BadChecksum {
            found: checksum::stored_checksum(tcp).unwrap_or(0),
            computed: checksum::checksum_ipv6(src, dst, tcp).unwrap_or(0),
        });
    }
    Ok(seg)
}

/// Length of the TCP header [`emit`] writes for these options: 20 bytes plus the options
/// (a multiple of 4, at most 40; SACK blocks that do not fit are dropped, see
/// [`super::options`]).
#[inline]
pub fn header_len(opts: &TcpOptions) -> usize {
    MIN_HEADER_LEN + options_len(opts)
}

/// Appends the encoded segment (header, options, payload) to `out`, with the checksum field
/// left zero. Options are laid out as Linux does; SACK blocks beyond the 40-byte option space
/// are dropped (see [`super::options`]).
pub fn emit(seg: &Segment, out: &mut Vec<u8>) {
    let f = seg.flags;
    let mut h = TcpHeader::new(seg.src_port, seg.dst_port, seg.seq, seg.window);
    h.acknowledgment_number = seg.ack;
    h.fin = f.contains(Flags::FIN);
    h.syn = f.contains(Flags::SYN);
    h.rst = f.contains(Flags::RST);
    h.psh = f.contains(Flags::PSH);
    h.ack = f.contains(Flags::ACK);
    h.urg = f.contains(Flags::URG);
    h.ece = f.contains(Flags::ECE);
    h.cwr = f.contains(Flags::CWR);
    h.set_options_raw(&encode_options(&seg.options))
        .expect("encode_options never exceeds the 40-byte option space");
    out.reserve(h.header_len() + seg.payload.len());
    out.extend_from_slice(&h.to_bytes());
    out.extend_from_slice(&seg.payload);
}

/// [`emit`], then fills the checksum over the IPv4 pseudo-header (RFC 9293 §3.1).
///
/// A segment longer than 65535 bytes cannot be carried by IPv4 and its length does not fit
/// the pseudo-header; it is emitted with checksum zero (and a debug assertion fires).
pub fn emit_ipv4(seg: &Segment, src: [u8; 4], dst: [u8; 4], out: &mut Vec<u8>) {
    let start = out.len();
    emit(seg, out);
    let tcp = &mut out[start..];
    let sum = checksum::checksum_ipv4(src, dst, tcp);
    debug_assert!(
        sum.is_some(),
        "TCP segment of {} bytes is too long for IPv4",
        tcp.len()
    );
    checksum::store_checksum(tcp, sum.unwrap_or(0));
}

/// [`emit`], then fills the checksum over the IPv6 pseudo-header (RFC 8200 §8.1).
pub fn emit_ipv6(seg: &Segment, src: [u8; 16], dst: [u8; 16], out: &mut Vec<u8>) {
    let start = out.len();
    emit(seg, out);
    let tcp = &mut out[start..];
    let sum = checksum::checksum_ipv6(src, dst, tcp);
    debug_assert!(
        sum.is_some(),
        "TCP segment of {} bytes is too long for IPv6",
        tcp.len()
    );
    checksum::store_checksum(tcp, sum.unwrap_or(0));
}
