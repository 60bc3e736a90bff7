//! Thin dupACK ("modified fast retransmit", mFR; docs/spec/mechanisms.md, thin dupACK). Knob:
//! `Mechanisms::thin_dupack` (`tcp.mechanisms = ["thin-dupack"]`); the thin test is
//! `TcpConfig::thin_detection` (default `pif4`).
//!
//! Sources: Evensen (2008) §2.4.2 and Petlund & Evensen (2008) and Petlund et al. (2008) (fast
//! retransmit on the first duplicate ACK while the stream is thin); Linux 2.6.34–4.x
//! `tcp_time_to_recover` (`TCP_THIN_DUPACK` = 17, sysctl `tcp_thin_dupack`, removed in 4.13 as
//! subsumed by RACK).
//!
//! Deviation from Linux, by choice (the thin-dupACK section of docs/spec/mechanisms.md is the
//! spec): Linux additionally required SACK, no unsent data (`!tcp_send_head`) and `tcp_dupack_heuristics > 1`; here the only
//! condition is "thin", as in Evensen (2008) and Petlund et al. (2008). The duplicate-ACK
//! definition is unchanged ([`super::dupack::is_dupack`]).
//!
//! Invariant: while thin, dupthresh = 1; otherwise the RFC 5681 value 3. It only decides when
//! an episode *starts* (Open phase); loss marking inside recovery keeps dupthresh 3.

/// Duplicate ACKs that start fast retransmit while thin.
pub const THIN_DUPTHRESH: u32 = 1;

/// dupthresh under thin dupACK: 1 while thin, else `standard` (RFC 5681's 3).
pub fn dupthresh(thin: bool, standard: u32) -> u32 {
    if thin {
        THIN_DUPTHRESH
    } else {
        standard
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_when_thin_else_three() {
        assert_eq!(super::dupthresh(true, 3), 1);
        assert_eq!(super::dupthresh(false, 3), 3);
    }
}
