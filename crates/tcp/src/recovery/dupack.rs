//! Duplicate-ACK detection and the duplicate-ACK threshold (RFC 5681 §2, docs/spec/mechanisms.md,
//! thin dupACK).
//!
//! A duplicate ACK acknowledges nothing new, carries no data, does NOT change the advertised
//! window, and arrives while data is outstanding (Hurtig (2006) §4.1.5 shows why the window rule
//! matters). The threshold is a pure function of the sender's situation: RFC 5681's 3, lowered to 1
//! by thin dupACK while thin ([`super::thin_dupack`], docs/spec/mechanisms.md, thin dupACK) and to
//! RFC 5827's
//! ER_thresh by Early Retransmit ([`super::early_retransmit`]).

use super::{early_retransmit, thin_dupack};
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
    /// The stream is thin (configured thin-stream test).
    pub thin: bool,
    pub mechanisms: Mechanisms,
}

/// The thresholds in force, kept apart so that the endpoint can tell which one fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// RFC 5681's 3, or 1 under thin dupACK while thin.
    pub standard: u32,
    /// RFC 5827 ER_thresh when Early Retransmit is on and applies.
    pub early: Option<u32>,
}

pub fn thresholds(i: &ThreshInput) -> Thresholds {
    let standard = if i.mechanisms.thin_dupack {
        thin_dupack::dupthresh(i.thin, DEFAULT_DUPTHRESH)
    } else {
        DEFAULT_DUPTHRESH
    };
    let early = if i.mechanisms.early_retransmit {
        early_retransmit::dupthresh(i.packets_out, i.can_send_new)
    } else {
        None
    };
    Thresholds { standard, early }
}

/// Duplicate ACKs (or SACKed segments above snd_una) needed to start fast retransmit.
pub fn dupthresh(i: &ThreshInput) -> u32 {
    let t = thresholds(i);
    t.early.map_or(t.standard, |e| e.min(t.standard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_matters() {
        let d = AckFacts {
            ack_equals_una: true,
            seg_len: 0,
            window_unchanged: true,
            outstanding: true,
        };
        assert!(is_dupack(&d));
        assert!(!is_dupack(&AckFacts {
            ack_equals_una: false,
            ..d
        }));
        assert!(!is_dupack(&AckFacts { seg_len: 1, ..d }));
        assert!(!is_dupack(&AckFacts {
            window_unchanged: false,
            ..d
        }));
        assert!(!is_dupack(&AckFacts {
            outstanding: false,
            ..d
        }));
    }

    #[test]
    fn thresh_is_three() {
        let i = ThreshInput {
            packets_out: 2,
            can_send_new: false,
            thin: true,
            mechanisms: Mechanisms::default(),
        };
        assert_eq!(dupthresh(&i), 3);
    }

    #[test]
    fn mechanisms_lower_it() {
        let m = Mechanisms {
            thin_dupack: true,
            ..Mechanisms::default()
        };
        let i = ThreshInput {
            packets_out: 3,
            can_send_new: true,
            thin: true,
            mechanisms: m,
        };
        assert_eq!(dupthresh(&i), 1);
        assert_eq!(dupthresh(&ThreshInput { thin: false, ..i }), 3);
        let m = Mechanisms {
            early_retransmit: true,
            ..Mechanisms::default()
        };
        let i = ThreshInput {
            packets_out: 3,
            can_send_new: false,
            thin: true,
            mechanisms: m,
        };
        assert_eq!(
            thresholds(&i),
            Thresholds {
                standard: 3,
                early: Some(2)
            }
        );
        assert_eq!(dupthresh(&i), 2);
        assert_eq!(
            dupthresh(&ThreshInput {
                can_send_new: true,
                ..i
            }),
            3
        );
        assert_eq!(
            dupthresh(&ThreshInput {
                packets_out: 4,
                ..i
            }),
            3
        );
        let both = Mechanisms {
            early_retransmit: true,
            thin_dupack: true,
            ..Mechanisms::default()
        };
        assert_eq!(
            dupthresh(&ThreshInput {
                mechanisms: both,
                ..i
            }),
            1
        );
    }
}
