//! The TCP checksum over the IPv4 pseudo-header (RFC 9293 §3.1) and the IPv6 pseudo-header
//! (RFC 8200 §8.1), using etherparse's one's-complement sum ([`etherparse::checksum`]).
//!
//! [`checksum_ipv4`] / [`checksum_ipv6`] return the value to store in the checksum field of a
//! segment whose checksum field is zero. [`verify_ipv4`] / [`verify_ipv6`] sum the segment
//! as received (checksum field included): it verifies iff the one's-complement sum is all
//! ones, which accepts both representations of zero (0x0000 and 0xffff) in the field.

use etherparse::checksum::Sum16BitWords;

/// IP protocol number of TCP.
const IPPROTO_TCP: u8 = 6;
/// Byte offset of the checksum field in the TCP header.
pub(crate) const CHECKSUM_OFFSET: usize = 16;
/// Largest TCP segment the IPv4 pseudo-header's 16-bit length can describe.
pub const IPV4_MAX_TCP_LEN: usize = u16::MAX as usize;
/// Largest TCP segment the IPv6 pseudo-header's 32-bit length can describe.
pub const IPV6_MAX_TCP_LEN: usize = u32::MAX as usize;

fn pseudo_ipv4(src: [u8; 4], dst: [u8; 4], len: u16) -> Sum16BitWords {
    Sum16BitWords::new()
        .add_slice(&src)
        .add_slice(&dst)
        .add_2bytes([0, IPPROTO_TCP])
        .add_2bytes(len.to_be_bytes())
}

fn pseudo_ipv6(src: [u8; 16], dst: [u8; 16], len: u32) -> Sum16BitWords {
    Sum16BitWords::new()
        .add_slice(&src)
        .add_slice(&dst)
        .add_slice(&len.to_be_bytes())
        .add_slice(&[0, 0, 0, IPPROTO_TCP])
}

/// The checksum as a number (to be written big-endian). etherparse sums the 16-bit words in
/// native byte order, so its `ones_complement()` holds the field's bytes in native order;
/// `to_be()` turns that into the numeric value (as etherparse's own `TcpHeader` does).
fn field_value(sum: Sum16BitWords) -> u16 {
    sum.ones_complement().to_be()
}

/// Sum of `tcp` with the checksum field (bytes 16..18) skipped, i.e. treated as zero.
fn add_segment_without_checksum(sum: Sum16BitWords, tcp: &[u8]) -> Sum16BitWords {
    if tcp.len() >= CHECKSUM_OFFSET + 2 {
        // Both split points are even, so add_slice's odd-length padding only ever applies at
        // the very end of the segment.
        sum.add_slice(&tcp[..CHECKSUM_OFFSET])
            .add_slice(&tcp[CHECKSUM_OFFSET + 2..])
    } else {
        sum.add_slice(tcp)
    }
}

/// The checksum to place in `tcp`'s checksum field for an IPv4 pseudo-header. The current
/// content of the checksum field is ignored. `None` if `tcp` is longer than 65535 bytes.
pub fn checksum_ipv4(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> Option<u16> {
    let len = u16::try_from(tcp.len()).ok()?;
    Some(field_value(add_segment_without_checksum(
        pseudo_ipv4(src, dst, len),
        tcp,
    )))
}

/// The checksum to place in `tcp`'s checksum field for an IPv6 pseudo-header. The current
/// content of the checksum field is ignored. `None` if `tcp` is longer than `u32::MAX`.
pub fn checksum_ipv6(src: [u8; 16], dst: [u8; 16], tcp: &[u8]) -> Option<u16> {
    let len = u32::try_from(tcp.len()).ok()?;
    Some(field_value(add_segment_without_checksum(
        pseudo_ipv6(src, dst, len),
        tcp,
    )))
}

/// Whether `tcp` (header, options and payload as received) carries a correct checksum for
/// the IPv4 pseudo-header. False for anything shorter than a TCP header or longer than
/// 65535 bytes.
pub fn verify_ipv4(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> bool {
    if tcp.len() < super::tcp::MIN_HEADER_LEN {
        return false;
    }
    match u16::try_from(tcp.len()) {
        Ok(len) => pseudo_ipv4(src, dst, len).add_slice(tcp).ones_complement() == 0,
        Err(_) => false,
    }
}

/// Whether `tcp` carries a correct checksum for the IPv6 pseudo-header. False for anything
/// shorter than a TCP header.
pub fn verify_ipv6(src: [u8; 16], dst: [u8; 16], tcp: &[u8]) -> bool {
    if tcp.len() < super::tcp::MIN_HEADER_LEN {
        return false;
    }
    match u32::try_from(tcp.len()) {
        Ok(len) => pseudo_ipv6(src, dst, len).add_slice(tcp).ones_complement() == 0,
        Err(_) => false,
    }
}

/// The checksum field of `tcp`, if the slice is long enough to hold one.
pub(crate) fn stored_checksum(tcp: &[u8]) -> Option<u16> {
    let b = tcp.get(CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

/// Writes `value` into the checksum field of `tcp` (which must hold a full header).
pub(crate) fn store_checksum(tcp: &mut [u8], value: u16) {
    tcp[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&value.to_be_bytes());
}
