//! Conversion between unwrapped u64 stream offsets (used everywhere inside) and 32-bit
//! wrapping TCP sequence numbers (RFC 9293 §3.4), used only at the wire.
//!
//! Offset 0 is the first data byte, i.e. sequence number ISN+1; the SYN occupies ISN.

/// Sequence number of stream offset `offset` for a connection whose SYN carried `isn`.
pub fn to_wire(isn: u32, offset: u64) -> u32 {
    isn.wrapping_add(1).wrapping_add(offset as u32)
}

/// Unwrap a 32-bit sequence number to the stream offset closest to `reference` (an offset the
/// caller already knows, such as snd_una or rcv_nxt). Returns a signed offset because a
/// segment may start before offset 0 (e.g. a retransmitted SYN-ACK carrying ISN).
pub fn from_wire(isn: u32, seq: u32, reference: u64) -> i64 {
    let ref_wire = to_wire(isn, reference);
    let delta = seq.wrapping_sub(ref_wire) as i32 as i64;
    reference as i64 + delta
}

/// `a < b` in sequence space (RFC 9293 modular comparison).
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn first_byte_follows_isn() {
        assert_eq!(to_wire(u32::MAX, 0), 0);
        assert_eq!(to_wire(10, 0), 11);
    }

    proptest! {
        #[test]
        fn roundtrip_near_reference(isn: u32, reference in 0u64..(1 << 40), d in -(1i64 << 30)..(1i64 << 30)) {
            let off = reference as i64 + d;
            prop_assume!(off >= 0);
            let w = to_wire(isn, off as u64);
            prop_assert_eq!(from_wire(isn, w, reference), off);
        }
    }
}
