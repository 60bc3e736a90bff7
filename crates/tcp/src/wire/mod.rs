//! The TCP segment as the endpoint sees it, and the wire codec (RFC 9293 §3.1 header,
//! RFC 9293/7323/2018 options, checksum over the IPv4 or IPv6 pseudo-header).
//!
//! `Segment` is the parsed form: the simulator passes it between endpoints without encoding;
//! the TUN driver, the pcap writer and the pcap reader use [`parse`] / [`emit`].
//!
//! - [`tcp`]: fixed header, [`parse`] (never panics on any input), [`emit`], and the
//!   checksummed [`emit_ipv4`] / [`emit_ipv6`] / [`parse_ipv4`] / [`parse_ipv6`].
//! - [`options`]: option parsing rules and the Linux option layout (including which SACK
//!   blocks are dropped when the 40-byte option space overflows).
//! - [`checksum`]: pseudo-header checksums, via etherparse's one's-complement sum.
//!
//! Round trip: for every `seg`, `parse(emit(seg)) == seg` with `options` replaced by
//! [`options::emitted_options`] (identical unless SACK blocks had to be dropped). For every
//! byte string `b` that parses, `parse(emit(parse(b)))` equals `parse(b)`.

use arrayvec::ArrayVec;
use bytes::Bytes;

pub mod checksum;
mod error;
pub mod options;
pub mod tcp;
#[cfg(test)]
mod tests;

pub use checksum::{checksum_ipv4, checksum_ipv6, verify_ipv4, verify_ipv6};
pub use error::WireError;
pub use options::{MAX_OPTIONS_LEN, MAX_SACK_BLOCKS};
pub use tcp::{
    emit, emit_ipv4, emit_ipv6, header_len, parse, parse_ipv4, parse_ipv6, MAX_HEADER_LEN,
    MIN_HEADER_LEN,
};

/// TCP header flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    pub const URG: Flags = Flags(0x20);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
    pub fn syn(self) -> bool {
        self.contains(Flags::SYN)
    }
    pub fn fin(self) -> bool {
        self.contains(Flags::FIN)
    }
    pub fn rst(self) -> bool {
        self.contains(Flags::RST)
    }
    pub fn ack(self) -> bool {
        self.contains(Flags::ACK)
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

/// At most four SACK blocks fit in the option space (three with timestamps).
pub type SackBlocks = ArrayVec<(u32, u32), 4>;

/// The TCP options thinlab understands. Unknown options are skipped on parse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr)
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks as (left edge, right edge) wire sequence numbers.
    pub sack_blocks: SackBlocks,
}

/// A TCP segment: header fields, options and payload. Sequence numbers are wire (32-bit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: Flags,
    /// The raw 16-bit window field (unscaled).
    pub window: u16,
    pub options: TcpOptions,
    pub payload: Bytes,
}

impl Segment {
    /// Sequence space the segment occupies: payload plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload.len() as u32 + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}
