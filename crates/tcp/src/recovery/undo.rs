//! Undo of a spurious fast recovery (RFC 3522 Eifel detection, RFC 2883 §5 / RFC 3708;
//! Linux `tcp_init_undo`, `tcp_may_undo`, `tcp_packet_delayed`, `tcp_try_undo_recovery`,
//! `tcp_try_undo_dsack`, `tcp_undo_cwnd_reduction`), on with `TcpConfig::dsack`.
//!
//! Entering fast recovery records the window and ssthresh it replaces. Every retransmission of
//! the episode counts in `retrans`; every D-SACK of one of them takes one back. The reduction
//! is undone — cwnd = max(cwnd, prior cwnd), ssthresh = max(ssthresh, prior ssthresh) — when
//!
//! * a D-SACK shows every retransmission of the episode was unnecessary (`retrans` = 0), at
//!   any ACK of the episode (`tcp_try_undo_dsack`), or
//! * the episode ends and either no retransmission is unaccounted for or the ACK's timestamp
//!   echo predates the episode's first retransmission: the original arrived
//!   (`tcp_try_undo_recovery`, `tcp_packet_delayed`).
//!
//! Undo after an RTO (`tcp_try_undo_loss`, F-RTO) is not modelled.

use crate::time::Instant;

/// What an undo restores, recorded when an episode begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    pub prior_cwnd: u32,
    pub prior_ssthresh: u32,
    /// Retransmissions of the episode not yet shown spurious by a D-SACK (Linux
    /// `undo_retrans`).
    pub retrans: u32,
    /// When the episode's first retransmission was sent (Linux `retrans_stamp`).
    pub first_retransmit: Option<Instant>,
}

impl Undo {
    pub fn start(prior_cwnd: u32, prior_ssthresh: u32) -> Undo {
        Undo {
            prior_cwnd,
            prior_ssthresh,
            retrans: 0,
            first_retransmit: None,
        }
    }

    /// A retransmission of the episode was sent at `now`.
    pub fn on_retransmit(&mut self, now: Instant) {
        self.retrans = self.retrans.saturating_add(1);
        self.first_retransmit.get_or_insert(now);
    }

    /// A D-SACK reported `segments` duplicates of this episode's retransmissions.
    pub fn on_dsack(&mut self, segments: u32) {
        self.retrans = self.retrans.saturating_sub(segments);
    }

    /// `tcp_try_undo_dsack`: every retransmission so far was spurious.
    pub fn all_dsacked(&self) -> bool {
        self.first_retransmit.is_some() && self.retrans == 0
    }

    /// `tcp_may_undo` at the end of the episode; `echo_predates_retransmit` is
    /// `tcp_packet_delayed` (the ACK echoes a timestamp older than the first retransmission).
    pub fn may_undo_at_exit(&self, echo_predates_retransmit: bool) -> bool {
        self.retrans == 0 || echo_predates_retransmit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsack_of_every_retransmission_allows_undo() {
        let mut u = Undo::start(10, 1000);
        assert!(!u.all_dsacked(), "nothing retransmitted yet: no evidence");
        u.on_retransmit(Instant::from_millis(5));
        u.on_retransmit(Instant::from_millis(6));
        u.on_dsack(1);
        assert!(!u.all_dsacked());
        u.on_dsack(1);
        assert!(u.all_dsacked());
        assert_eq!(u.first_retransmit, Some(Instant::from_millis(5)));
    }

    #[test]
    fn exit_undo_by_timestamps_or_accounting() {
        let mut u = Undo::start(10, 1000);
        u.on_retransmit(Instant::from_millis(5));
        assert!(!u.may_undo_at_exit(false));
        assert!(u.may_undo_at_exit(true));
    }
}
