//! Duplicate-ACK detection and the duplicate-ACK threshold (RFC 5681 §2, mechanisms.md §4).
//!
//! A duplicate ACK acknowledges nothing new, carries no data, does NOT change the advertised
//! window, and arrives while data is outstanding (seed 001 §4.1.5 shows why the window rule
//! matters). The threshold is a pure function of the sender's situation so that thin dupACK
//! (mechanisms.md §4) and Early Retransmit (§6) can plug in; today it is always 3.

use crate::config::Mechanisms;

/// RFC 5681 DupThresh.
pub const DEFAULT_DUPTHRESH: u32 = 3;

/// The facts about one incoming ACK needed to classify it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFacts {
    /// The ACK field equals snd_una (acknowledges nothing new).
    pub ack_equals_una: bool,
    /// Payload length plus SYN/FIN.
    pub seg_len: u32,
    /// Advertised window of this ACK (scaled) equals the window we currently hold.
    pub window_unchanged: bool,
    /// Data (or a FIN) is outstanding.
    pub outstanding: bool,
}

pub fn is_dupack(f: &AckFacts) -> bool {
    f.ack_equals_una && f.seg_len == 0 && f.window_unchanged && f.outstanding
}

/// What a dupthresh policy may look at (room for thin dupACK and Early Retransmit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreshInput {
    /// Segments sent and not cumulatively acknowledged (Linux packets_out).
    pub packets_out: u32,
    /// Whether new data could be sent now (unsent data and window room).
    pub can_send_new: bool,
    pub mechanisms: Mechanisms,
}

/// Duplicate ACKs (or SACKed segments above snd_una) needed to start fast retransmit.
pub fn dupthresh(_i: &ThreshInput) -> u32 {
    DEFAULT_DUPTHRESH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_matters() {
        let d = AckFacts { ack_equals_una: true, seg_len: 0, window_unchanged: true, outstanding: true };
        assert!(is_dupack(&d));
        assert!(!is_dupack(&AckFacts { ack_equals_una: false, ..d }));
        assert!(!is_dupack(&AckFacts { seg_len: 1, ..d }));
        assert!(!is_dupack(&AckFacts { window_unchanged: false, ..d }));
        assert!(!is_dupack(&AckFacts { outstanding: false, ..d }));
    }

    #[test]
    fn thresh_is_three() {
        let i = ThreshInput { packets_out: 2, can_send_new: false, mechanisms: Mechanisms::default() };
        assert_eq!(dupthresh(&i), 3);
    }
}
