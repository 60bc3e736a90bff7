//! D-SACK (RFC 2883; Linux `tcp_check_dsack`, `tcp_dsack_seen`, `tcp_rack_update_reo_wnd`),
//! switched on by `TcpConfig::dsack` (scenario `tcp.dsack`, on in the `linux` profile).
//!
//! Receiver: a segment carrying bytes it already has is answered with those bytes as the first
//! SACK block (below the cumulative ACK for old data, or inside a later block for data already
//! queued out of order). Linux reports the old part of a segment that straddles `rcv_nxt` too
//! (`tcp_data_queue`), so every redundant bundle of RDB is D-SACKed.
//!
//! Sender: the first block is a D-SACK when it lies below the cumulative ACK or inside the
//! second block ([`is_dsack`]). It counts `ceil(len / MSS)` duplicate segments; once more
//! duplicates were reported than the sender ever retransmitted the report cannot be its doing
//! and is ignored (RDB's bundles, a duplicating network). Otherwise it is a spurious
//! retransmission, it may let recovery undo its reduction (`recovery::undo`), and — when
//! reordering was seen and the block is not the tail-loss probe's — it widens RACK's
//! reordering window by one step of min_RTT/4 at the next round ([`ReoWindow`]); the widened
//! window persists for 16 recoveries (`TCP_RACK_RECOVERY_THRESH`).

/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries a widened reordering window survives.
pub const RECOVERY_THRESH: u8 = 16;

/// RFC 2883 §4 / Linux `tcp_check_dsack`: whether the first of `blocks` reports a duplicate,
/// given the cumulative ACK `ack` (stream offsets).
pub fn is_dsack(blocks: &[(u64, u64)], ack: u64) -> bool {
    match blocks {
        [] => false,
        [(l, _), ..] if *l < ack => true,
        [(l0, r0), (l1, r1), ..] => l1 <= l0 && r0 <= r1,
        _ => false,
    }
}

/// Duplicate segments a D-SACK block of `len` bytes stands for (Linux `tcp_dsack_seen`).
pub fn dup_segments(len: u64, mss: u64) -> u64 {
    if len > mss {
        len.div_ceil(mss.max(1))
    } else {
        1
    }
}

/// RACK's adaptive reordering window (RFC 8985 §6.2 step 4, Linux `tcp_rack_update_reo_wnd`):
/// the window is `steps × min_RTT/4` (bounded by SRTT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReoWindow {
    /// Multiples of min_RTT/4 (Linux `reo_wnd_steps`, at least 1).
    pub steps: u8,
    /// Recoveries the widened window still survives (Linux `reo_wnd_persist`).
    pub persist: u8,
    /// A D-SACK that may stem from reordering arrived this round (Linux `rack.dsack_seen`).
    pub dsack_seen: bool,
    /// Segments delivered when the window was last widened (Linux `rack.last_delivered`).
    pub last_delivered: u64,
}

impl Default for ReoWindow {
    fn default() -> Self {
        ReoWindow {
            steps: 1,
            persist: 0,
            dsack_seen: false,
            last_delivered: 0,
        }
    }
}

impl ReoWindow {
    /// After an ACK: `prior_delivered` / `delivered` are the connection's delivered-segment
    /// counts before and after it. At most one step per round trip.
    pub fn on_ack(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false; // less than a round since the last step
        }
        if self.dsack_seen {
            self.steps = self.steps.saturating_add(1);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.persist = RECOVERY_THRESH;
        } else if self.persist == 0 {
            self.steps = 1;
        }
    }

    /// A recovery ended without an undo: one fewer recovery for the widened window.
    pub fn on_recovery_without_undo(&mut self) {
        self.persist = self.persist.saturating_sub(1);
    }

    /// A D-SACK undid a recovery: the widened window lasts one recovery longer.
    pub fn on_dsack_undo(&mut self) {
        self.persist = (self.persist + 1).min(RECOVERY_THRESH);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsack_below_the_ack_or_inside_the_second_block() {
        assert!(is_dsack(&[(100, 200)], 300));
        assert!(!is_dsack(&[(400, 500)], 300));
        assert!(is_dsack(&[(450, 500), (400, 600)], 300));
        assert!(!is_dsack(&[(400, 500), (700, 800)], 300));
        assert!(!is_dsack(&[], 300));
    }

    #[test]
    fn duplicates_counted_in_segments() {
        assert_eq!(dup_segments(100, 1448), 1);
        assert_eq!(dup_segments(1448, 1448), 1);
        assert_eq!(dup_segments(1449, 1448), 2);
    }

    #[test]
    fn one_step_per_round_and_persistence_over_16_recoveries() {
        let mut w = ReoWindow {
            dsack_seen: true,
            ..ReoWindow::default()
        };
        w.on_ack(10, 11);
        assert_eq!((w.steps, w.persist, w.last_delivered), (2, 16, 11));
        // a second D-SACK within the same round (prior_delivered < last_delivered) is dropped
        w.dsack_seen = true;
        w.on_ack(10, 12);
        assert_eq!(w.steps, 2);
        w.dsack_seen = true;
        w.on_ack(12, 13);
        assert_eq!(w.steps, 3);
        for _ in 0..16 {
            w.on_ack(20, 21);
            assert_eq!(w.steps, 3, "persists while recoveries remain");
            w.on_recovery_without_undo();
        }
        w.on_ack(30, 31);
        assert_eq!(w.steps, 1, "back to one step after 16 recoveries");
    }
}
