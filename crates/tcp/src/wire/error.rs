//! Errors of the wire codec. Every variant carries enough context (byte offsets are from the
//! start of the TCP header) for a useful message when a capture or a TUN read is rejected.

/// A TCP segment could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer than the 20 bytes of the fixed header.
    #[error("truncated TCP header: {len} bytes, the fixed header needs 20")]
    TruncatedHeader { len: usize },

    /// Data offset below 5 words: the payload would start inside the fixed header.
    #[error("bad TCP data offset {data_offset} ({} bytes): must be at least 5 (20 bytes)", *data_offset as usize * 4)]
    BadDataOffset { data_offset: u8 },

    /// The data offset points past the end of the buffer.
    #[error(
        "TCP header claims {header_len} bytes (data offset {}) but only {len} bytes are present",
        header_len / 4
    )]
    TruncatedOptions { header_len: usize, len: usize },

    /// An option runs past the end of the option space: either its length byte is missing
    /// (`needed == 2`) or its length is larger than what is left.
    #[error(
        "TCP option kind {kind} at offset {offset} needs {needed} bytes but only {available} \
         remain in the option space"
    )]
    TruncatedOption {
        kind: u8,
        offset: usize,
        needed: usize,
        available: usize,
    },

    /// An option length that is invalid: below 2 for any kind, or not the length the
    /// kind's specification requires.
    #[error(
        "TCP option kind {kind} at offset {offset} has bad length {len} (expected {expected})"
    )]
    BadOptionLength {
        kind: u8,
        offset: usize,
        len: u8,
        expected: &'static str,
    },

    /// The checksum over the pseudo-header and the segment does not verify.
    #[error("bad TCP checksum: segment carries {found:#06x}, computed {computed:#06x}")]
    BadChecksum { found: u16, computed: u16 },

    /// The segment is too long for the pseudo-header's length field (IPv4: 16 bits).
    #[error("TCP segment of {len} bytes is too long for the pseudo-header (at most {max})")]
    TooLong { len: usize, max: usize },
}
