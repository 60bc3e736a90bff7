//! What RFC 6675's IsLost needs of the scoreboard without walking it: the sequence-space ends of
//! the three highest SACKed segments, and a frontier below which every un-SACKed segment is
//! already marked lost.
//!
//! IsLost(s) holds when at least `dupthresh` SACKed segments lie above `s`, i.e. when `s` ends
//! below the `dupthresh`-th highest SACKed segment. The top three suffice for every threshold
//! recovery uses (3, thin dupACK's 1, Early Retransmit's 1–2). They stay exact without a walk:
//! a segment becomes SACKed one at a time (insert if it is among the top three); a cumulative
//! ACK removes a prefix of the queue, so a SACKed segment it removes takes every lower one with
//! it and the remaining SACKed segments are exactly the remaining tops; an RTO un-SACKs only the
//! head, the lowest segment. The frontier only moves up, and nothing clears a segment's lost
//! mark except a SACK or its removal, so each segment is visited once per episode: per-ACK work
//! proportional to what the ACK changes, not to the window.

use arrayvec::ArrayVec;

/// The highest SACKed segment ends (at most [`IsLostIndex::TOP`]) and the lost frontier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IsLostIndex {
    /// Sequence-space ends of the highest SACKed segments, highest first.
    top: ArrayVec<u64, 3>,
    /// Every un-SACKed segment ending at or below this is marked lost.
    pub frontier: u64,
}

impl IsLostIndex {
    /// How many of the highest SACKed segments are tracked.
    pub const TOP: usize = 3;

    /// The segment ending at `end` became SACKed.
    pub fn on_sacked(&mut self, end: u64) {
        let at = self
            .top
            .iter()
            .position(|&e| e < end)
            .unwrap_or(self.top.len());
        if at < Self::TOP {
            if self.top.is_full() {
                self.top.pop();
            }
            self.top.insert(at, end);
        }
    }

    /// The SACKed segment ending at `end` is no longer SACKed (an RTO un-SACKs the head).
    pub fn on_unsacked(&mut self, end: u64) {
        self.top.retain(|e| *e != end);
    }

    /// A cumulative ACK removed every segment ending at or below `ack`.
    pub fn on_acked(&mut self, ack: u64) {
        self.top.retain(|e| *e > ack);
    }

    /// The end of the `k`-th highest SACKed segment (k ≥ 1), if tracked and present.
    pub fn kth_highest_end(&self, k: u32) -> Option<u64> {
        self.top.get((k as usize).checked_sub(1)?).copied()
    }

    /// The tracked ends, highest first (for the queue's consistency check).
    pub fn top(&self) -> &[u64] {
        &self.top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_three_highest() {
        let mut x = IsLostIndex::default();
        for e in [500, 300, 900, 700, 100] {
            x.on_sacked(e);
        }
        assert_eq!(x.top(), &[900, 700, 500]);
        assert_eq!(x.kth_highest_end(1), Some(900));
        assert_eq!(x.kth_highest_end(3), Some(500));
        assert_eq!(x.kth_highest_end(4), None);
        assert_eq!(x.kth_highest_end(0), None);
        x.on_acked(700);
        assert_eq!(x.top(), &[900]);
        x.on_unsacked(900);
        assert!(x.top().is_empty());
    }
}
