//! TCP options: MSS (RFC 9293 §3.2), Window Scale and Timestamps (RFC 7323), SACK-permitted
//! and SACK (RFC 2018).
//!
//! # Parsing
//! Hand-rolled: etherparse's `TcpOptionsIterator` stops at the first unknown kind (it
//! returns `UnknownId` and discards the rest), whereas RFC 9293 §3.2 requires unknown options
//! to be skipped by their length. The rules:
//! - EOL (kind 0) ends parsing; whatever follows it is padding and is ignored.
//! - NOP (kind 1) is skipped.
//! - Any other kind needs a length byte ≥ 2 that stays within the option space, else
//!   [`WireError::TruncatedOption`] / [`WireError::BadOptionLength`].
//! - Known kinds must have their exact length: MSS 4, WS 3, SACK-permitted 2, TS 10, SACK
//!   2 + 8k with 1 ≤ k ≤ 4 ([`WireError::BadOptionLength`]). Unknown kinds are skipped.
//! - A kind that appears twice: the last occurrence wins (as in Linux's `tcp_parse_options`).
//! - The codec does not look at the SYN flag: MSS/WS/SACK-permitted on a non-SYN segment are
//!   reported as they are (Linux ignores them there; that is the endpoint's decision), and a
//!   window-scale shift above 14 is reported raw (RFC 7323 §2.3 clamping is the endpoint's).
//!
//! # Emission
//! Options are laid out as Linux's `tcp_options_write` does, each group one 32-bit word
//! aligned, in this order:
//! - MSS: `2 4 mss mss`
//! - SACK-permitted with TS: `4 2 8 10 TSval TSecr`; TS alone: `1 1 8 10 TSval TSecr`
//! - SACK-permitted without TS: `1 1 4 2`
//! - Window scale: `1 3 3 shift`
//! - SACK blocks: `1 1 5 (2+8n) blocks…`
//!
//! Every option present in [`TcpOptions`] is emitted, whatever the flags; the endpoint only
//! sets MSS / WS / SACK-permitted on SYNs. Since each group is a whole word no padding is ever
//! needed. The option space is 40 bytes: when the SACK blocks do not all fit, the trailing
//! blocks are dropped (the first block reports the most recently received segment, RFC 2018
//! §4, so it is the one to keep) — 4 blocks fit alone, 3 with timestamps, 2 with the full SYN
//! set plus timestamps. Only for combinations Linux never sends (SYN options together with
//! four SACK blocks, e.g. MSS + SACK-permitted + 4 blocks) the options are instead packed
//! back to back without NOPs (MSS, SACK-permitted, TS, WS, SACK) and zero-padded, when that
//! keeps more blocks. This makes emission total over everything [`parse`](super::parse)
//! accepts: parse → emit → parse is the identity on the parsed [`TcpOptions`].

use arrayvec::ArrayVec;
use etherparse::tcp_option::{
    KIND_END, KIND_MAXIMUM_SEGMENT_SIZE, KIND_NOOP, KIND_SELECTIVE_ACK,
    KIND_SELECTIVE_ACK_PERMITTED, KIND_TIMESTAMP, KIND_WINDOW_SCALE, LEN_MAXIMUM_SEGMENT_SIZE,
    LEN_SELECTIVE_ACK_PERMITTED, LEN_TIMESTAMP, LEN_WINDOW_SCALE,
};

use super::{SackBlocks, TcpOptions, WireError};

/// Size of the option space: data offset 15 words minus the 20-byte fixed header.
pub const MAX_OPTIONS_LEN: usize = 40;
/// Length of a SACK option without blocks (kind + length).
const SACK_BASE_LEN: usize = 2;
/// Length of one SACK block (left and right edge).
const SACK_BLOCK_LEN: usize = 8;
/// Most SACK blocks one option can carry within 40 bytes.
pub const MAX_SACK_BLOCKS: usize = 4;

/// Parses the option space of a TCP header. `base` is the offset of `opts` from the start of
/// the TCP header (20), used only in error positions. Never panics.
pub fn parse_options(opts: &[u8], base: usize) -> Result<TcpOptions, WireError> {
    let mut out = TcpOptions::default();
    let mut i = 0;
    while i < opts.len() {
        let kind = opts[i];
        let offset = base + i;
        let available = opts.len() - i;
        match kind {
            KIND_END => break,
            KIND_NOOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&len) = opts.get(i + 1) else {
            return Err(WireError::TruncatedOption {
                kind,
                offset,
                needed: 2,
                available,
            });
        };
        let bad_len = |expected| WireError::BadOptionLength {
            kind,
            offset,
            len,
            expected,
        };
        if len < 2 {
            return Err(bad_len("at least 2"));
        }
        // Length checks for the known kinds come before the bounds check: "MSS of length 6"
        // says more than "option overruns the header".
        let exact = |want: u8, expected| {
            if len == want {
                Ok(())
            } else {
                Err(bad_len(expected))
            }
        };
        match kind {
            KIND_MAXIMUM_SEGMENT_SIZE => exact(LEN_MAXIMUM_SEGMENT_SIZE, "4")?,
            KIND_WINDOW_SCALE => exact(LEN_WINDOW_SCALE, "3")?,
            KIND_SELECTIVE_ACK_PERMITTED => exact(LEN_SELECTIVE_ACK_PERMITTED, "2")?,
            KIND_TIMESTAMP => exact(LEN_TIMESTAMP, "10")?,
            KIND_SELECTIVE_ACK => {
                let l = len as usize;
                let blocks = l.saturating_sub(SACK_BASE_LEN) / SACK_BLOCK_LEN;
                if !(l - SACK_BASE_LEN).is_multiple_of(SACK_BLOCK_LEN)
                    || !(1..=MAX_SACK_BLOCKS).contains(&blocks)
                {
                    return Err(bad_len("10, 18, 26 or 34"));
                }
            }
            _ => {}
        }
        let len = len as usize;
        if len > available {
            return Err(WireError::TruncatedOption {
                kind,
                offset,
                needed: len,
                available,
            });
        }
        let body = &opts[i + 2..i + len];
        match kind {
            KIND_MAXIMUM_SEGMENT_SIZE => out.mss = Some(be16(body)),
            KIND_WINDOW_SCALE => out.window_scale = Some(body[0]),
            KIND_SELECTIVE_ACK_PERMITTED => out.sack_permitted = true,
            KIND_TIMESTAMP => out.timestamps = Some((be32(&body[..4]), be32(&body[4..8]))),
            KIND_SELECTIVE_ACK => {
                let mut blocks = SackBlocks::new();
                for b in body.chunks_exact(SACK_BLOCK_LEN) {
                    // At most MAX_SACK_BLOCKS chunks, checked above.
                    blocks.push((be32(&b[..4]), be32(&b[4..8])));
                }
                out.sack_blocks = blocks;
            }
            _ => {} // unknown: skipped by its length
        }
        i += len;
    }
    Ok(out)
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// How a set of options is laid out on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    /// Pack options back to back (only when the Linux layout would lose SACK blocks that the
    /// packed one keeps).
    compact: bool,
    /// Number of SACK blocks emitted (a prefix of `sack_blocks`).
    sack_blocks: usize,
    /// Encoded length in bytes, a multiple of 4, at most 40.
    len: usize,
}

fn sack_len(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        SACK_BASE_LEN + SACK_BLOCK_LEN * n
    }
}

fn aligned_len(o: &TcpOptions, n: usize) -> usize {
    let mut len = 0;
    if o.mss.is_some() {
        len += 4;
    }
    if o.timestamps.is_some() {
        len += 12; // SACK-permitted, if any, shares this word pair
    } else if o.sack_permitted {
        len += 4;
    }
    if o.window_scale.is_some() {
        len += 4;
    }
    if n > 0 {
        len += 2 + sack_len(n); // NOP NOP before the SACK option
    }
    len
}

fn compact_len(o: &TcpOptions, n: usize) -> usize {
    let raw = o.mss.map_or(0, |_| 4)
        + if o.sack_permitted { 2 } else { 0 }
        + o.timestamps.map_or(0, |_| 10)
        + o.window_scale.map_or(0, |_| 3)
        + sack_len(n);
    raw.div_ceil(4) * 4
}

fn plan(o: &TcpOptions) -> Plan {
    let all = o.sack_blocks.len();
    // Fast path (every segment of a synchronized connection): when the aligned layout fits
    // with all blocks, `most(aligned_len)` is `all` and the compact layout cannot carry more.
    let a = aligned_len(o, all);
    if a <= MAX_OPTIONS_LEN {
        return Plan {
            compact: false,
            sack_blocks: all,
            len: a,
        };
    }
    // n = 0 always fits: the SYN set is at most 20 bytes in either layout.
    let most = |f: fn(&TcpOptions, usize) -> usize| {
        (0..=all)
            .rev()
            .find(|&n| f(o, n) <= MAX_OPTIONS_LEN)
            .unwrap_or(0)
    };
    let (na, nc) = (most(aligned_len), most(compact_len));
    if nc > na {
        Plan {
            compact: true,
            sack_blocks: nc,
            len: compact_len(o, nc),
        }
    } else {
        Plan {
            compact: false,
            sack_blocks: na,
            len: aligned_len(o, na),
        }
    }
}

/// Length in bytes of the encoded options (a multiple of 4, at most 40).
#[inline]
pub fn options_len(opts: &TcpOptions) -> usize {
    plan(opts).len
}

/// The options as [`emit`](super::emit) would write them: with SACK blocks that do not fit
/// removed. `parse(emit(seg)).options == emitted_options(&seg.options)`.
pub fn emitted_options(opts: &TcpOptions) -> TcpOptions {
    let mut o = opts.clone();
    o.sack_blocks.truncate(plan(opts).sack_blocks);
    o
}

/// Encodes the options (see the module docs for the layout).
pub fn encode_options(o: &TcpOptions) -> ArrayVec<u8, MAX_OPTIONS_LEN> {
    let p = plan(o);
    let blocks = &o.sack_blocks[..p.sack_blocks];
    // Scratch larger than the option space, so the writers need no bounds logic; `plan`
    // guarantees the result is at most 40 bytes.
    let mut b: ArrayVec<u8, 64> = ArrayVec::new();
    fn put(b: &mut ArrayVec<u8, 64>, bytes: &[u8]) {
        b.try_extend_from_slice(bytes)
            .expect("plan bounds the options to 40 bytes");
    }
    let ts = |(val, ecr): (u32, u32)| {
        let mut t = [KIND_TIMESTAMP, LEN_TIMESTAMP, 0, 0, 0, 0, 0, 0, 0, 0];
        t[2..6].copy_from_slice(&val.to_be_bytes());
        t[6..10].copy_from_slice(&ecr.to_be_bytes());
        t
    };
    let mss = |m: u16| {
        let [hi, lo] = m.to_be_bytes();
        [KIND_MAXIMUM_SEGMENT_SIZE, LEN_MAXIMUM_SEGMENT_SIZE, hi, lo]
    };
    let sack_head = [KIND_SELECTIVE_ACK, sack_len(blocks.len()) as u8];
    if p.compact {
        if let Some(m) = o.mss {
            put(&mut b, &mss(m));
        }
        if o.sack_permitted {
            put(
                &mut b,
                &[KIND_SELECTIVE_ACK_PERMITTED, LEN_SELECTIVE_ACK_PERMITTED],
            );
        }
        if let Some(t) = o.timestamps {
            put(&mut b, &ts(t));
        }
        if let Some(ws) = o.window_scale {
            put(&mut b, &[KIND_WINDOW_SCALE, LEN_WINDOW_SCALE, ws]);
        }
        if !blocks.is_empty() {
            put(&mut b, &sack_head);
        }
    } else {
        if let Some(m) = o.mss {
            put(&mut b, &mss(m));
        }
        match (o.timestamps, o.sack_permitted) {
            (Some(t), true) => {
                put(
                    &mut b,
                    &[KIND_SELECTIVE_ACK_PERMITTED, LEN_SELECTIVE_ACK_PERMITTED],
                );
                put(&mut b, &ts(t));
            }
            (Some(t), false) => {
                put(&mut b, &[KIND_NOOP, KIND_NOOP]);
                put(&mut b, &ts(t));
            }
            (None, true) => put(
                &mut b,
                &[
                    KIND_NOOP,
                    KIND_NOOP,
                    KIND_SELECTIVE_ACK_PERMITTED,
                    LEN_SELECTIVE_ACK_PERMITTED,
                ],
            ),
            (None, false) => {}
        }
        if let Some(ws) = o.window_scale {
            put(
                &mut b,
                &[KIND_NOOP, KIND_WINDOW_SCALE, LEN_WINDOW_SCALE, ws],
            );
        }
        if !blocks.is_empty() {
            put(&mut b, &[KIND_NOOP, KIND_NOOP]);
            put(&mut b, &sack_head);
        }
    }
    for &(l, r) in blocks {
        put(&mut b, &l.to_be_bytes());
        put(&mut b, &r.to_be_bytes());
    }
    // Zero padding (EOL, then zeros) up to the word boundary; only the compact layout needs it.
    while b.len() % 4 != 0 {
        put(&mut b, &[KIND_END]);
    }
    debug_assert_eq!(b.len(), p.len);
    let mut out = ArrayVec::new();
    out.try_extend_from_slice(&b[..b.len().min(MAX_OPTIONS_LEN)])
        .expect("fits: min(len, 40)");
    out
}
