//! NewReno partial acknowledgments (RFC 6582 §3.2 steps 3–5) and the Linux emulation of SACK
//! by duplicate ACKs when SACK is not negotiated (`tcp_add_reno_sack` /
//! `tcp_remove_reno_sacks`): each duplicate ACK stands for one segment that left the network.
//!
//! A partial ACK (new data acknowledged but below `recover`) means the segment now at the head
//! of the queue is lost too: it is retransmitted at once. The same rule is applied with SACK
//! when the head was sent before recovery began and is not SACKed (the RFC 6675 IsLost rule
//! alone would leave a second hole with fewer than dupthresh SACKed segments above it to RTO).

use crate::config::{CcAlgorithm, TcpConfig};
use crate::send_queue::SendQueue;

/// When a fast-recovery episode ends: a recovery choice that goes with the configured
/// algorithm's name (`cc = "reno"` is Reno's recovery, every other algorithm NewReno's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FastRecoveryExit {
    /// Reno (RFC 5681 §3.2 step 6): at the first ACK of new data, even a partial one.
    FirstNewAck,
    /// NewReno (RFC 6582 §3.2): only an ACK covering the recovery point ends the episode; a
    /// partial ACK retransmits the next hole ([`on_partial_ack`]).
    RecoveryPoint,
}

impl FastRecoveryExit {
    pub fn for_config(cfg: &TcpConfig) -> Self {
        match cfg.cc {
            CcAlgorithm::Reno => FastRecoveryExit::FirstNewAck,
            CcAlgorithm::NewReno
            | CcAlgorithm::Cubic
            | CcAlgorithm::Pert
            | CcAlgorithm::PertAdaptive
            | CcAlgorithm::Bic
            | CcAlgorithm::Westwood
            | CcAlgorithm::Vegas => FastRecoveryExit::RecoveryPoint,
        }
    }

    /// Whether an ACK of new data that leaves snd_una at `una_seq` ends an episode whose
    /// recovery point is `recover`.
    pub fn ends_episode(self, una_seq: u64, recover: u64) -> bool {
        match self {
            FastRecoveryExit::FirstNewAck => true,
            FastRecoveryExit::RecoveryPoint => una_seq >= recover,
        }
    }
}

/// The head segment is to be retransmitted on a partial ACK: returns true if it was marked.
pub fn on_partial_ack(q: &mut SendQueue, recover: u64) -> bool {
    match q.front() {
        Some(h) if !h.sacked && h.start < recover && !h.retrans => {
            q.set_lost(0);
            true
        }
        _ => false,
    }
}

/// Emulated SACKed count after `acked` segments were cumulatively acknowledged (the first one
/// is the retransmitted hole, the rest had been counted by dupACKs).
pub fn reno_sacked_after_ack(reno_sacked: u32, acked: u32) -> u32 {
    if acked == 0 {
        reno_sacked
    } else {
        reno_sacked.saturating_sub(acked - 1)
    }
}

/// Emulated SACKed count after one more duplicate ACK, bounded by the segments that can have
/// left the network (all but the hole).
pub fn reno_sacked_after_dupack(reno_sacked: u32, packets_out: u32) -> u32 {
    (reno_sacked + 1).min(packets_out.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Instant;

    #[test]
    fn partial_ack_marks_head() {
        let mut q = SendQueue::new(10_000);
        q.write(&[0u8; 300]);
        for _ in 0..3 {
            q.push_new(Instant::ZERO, 100, false);
        }
        q.ack(100);
        assert!(on_partial_ack(&mut q, 300));
        assert_eq!(q.first_to_retransmit(), Some(0));
        q.on_retransmit(0, Instant::ZERO);
        assert!(!on_partial_ack(&mut q, 300));
        assert_eq!(reno_sacked_after_ack(3, 2), 2);
        assert_eq!(reno_sacked_after_ack(0, 5), 0);
        assert_eq!(reno_sacked_after_dupack(2, 3), 2);
    }
}
