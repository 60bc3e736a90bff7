//! Adaptive Redundant Data Bundling: bundle only while it pays. Knob: `TcpConfig::rdb_variant
//! = RdbVariant::Adaptive` (scenario `tcp.rdb_variant = "adaptive"`, with `"rdb"` in
//! `tcp.mechanisms`); `rdb_max_bytes` caps a bundle as in the seed variant.
//!
//! This goes beyond the published variants by building what their authors propose as future work:
//!
//! - Evensen (2008) §5.3: "be better to do something more similar to exponential backoff. If one
//!   packet is lost, the kernel would be allowed to bundle with one packet, and then double the
//!   number for every loss. For every ACK that is received, the number of permitted bundles would
//!   be reduced by one." The **allowance** is that number of permitted bundles. A loss makes it
//!   `max(1, 2·allowance)` (bounded by [`ALLOWANCE_MAX`]); an ACK of new data that reveals no loss
//!   takes one away; while it is positive a new small segment carries a seed-variant bundle (all
//!   unacknowledged data that fits: a count limit walking back from the newest segment would leave
//!   out the lost head of the queue, which is the data the bundle is for); at zero the sender does
//!   not bundle.
//! - Evensen et al. (2008), IEEE Communications Letters ("CommL"), §IV: bundling beats the
//!   retransmission timer while the interval between writes is below RTO − RTT (Evensen (2008)
//!   §4.1.2: "the packets had to be sent with less than 200 ms IAT (RTO minus the RTT)"); between
//!   RTO − RTT and minRTO + RTT a bundle still arrives before the retransmission (an
//!   application-latency gain, with a spurious retransmission); "when the IAT exceeds minRTO +
//!   RTT, there is no gain, and the mechanism should be turned off completely". With Linux's RTO
//!   (≈ RTT + minRTO in steady state) that bound is the RTO itself: a segment written longer than
//!   one RTO after the previous one is never bundled, because the previous segment's
//!   retransmission has already left.
//!
//! Loss signals the endpoint feeds in (`recovery/manager/rdb.rs`): a duplicate ACK or an ACK
//! carrying SACK blocks (a hole), any retransmission (fast, early, RACK, RTO), and an ACK that
//! shows a bundle repaired a loss (the patch variant's hidden-loss test: the ACK covers a
//! segment together with the later bundle that carried it again, so the original or its ACK
//! was lost). Signals count once per window of data, as a congestion response does: a signal
//! about data sent before the last counted loss belongs to the same episode.
//!
//! Reactive by construction: the first loss of an episode is never protected, only later
//! ones while the allowance lasts. docs/mechanisms.md measures what that costs.
//!
//! Invariant: with allowance 0 or a write interval above the RTO the decision is "no bundle";
//! otherwise the seed variant's bundle (byte limit included).

use std::time::Duration;

/// Upper bound of the allowance (a bound against overflow, far above the bundles an MSS holds for
/// thin streams; the studies give none).
pub const ALLOWANCE_MAX: u32 = 64;

/// What the sender knows when a new small segment is about to go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendInput {
    /// Current allowance (permitted bundles).
    pub allowance: u32,
    /// Time since the previous new data segment was sent (`None` for the first).
    pub write_gap: Option<Duration>,
    /// The retransmission timeout now.
    pub rto: Duration,
}

/// The bundling decision for one new segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Bundle as the seed variant does.
    Bundle,
    /// No loss seen recently: the allowance is spent.
    NoAllowance,
    /// The write interval exceeds the RTO: the previous segment's retransmission has already
    /// left, a bundle cannot deliver sooner.
    TooSlow,
}

/// Whether (and how much) to bundle on a new segment.
pub fn on_send(i: &SendInput) -> Decision {
    if i.write_gap.is_some_and(|g| g > i.rto) {
        Decision::TooSlow
    } else if i.allowance == 0 {
        Decision::NoAllowance
    } else {
        Decision::Bundle
    }
}

/// Allowance after a counted loss: `max(1, 2·allowance)`, bounded.
pub fn after_loss(allowance: u32) -> u32 {
    allowance.saturating_mul(2).clamp(1, ALLOWANCE_MAX)
}

/// Allowance after an ACK of new data that revealed no loss.
pub fn after_clean_ack(allowance: u32) -> u32 {
    allowance.saturating_sub(1)
}

/// Whether a loss signal about data starting at `lost_seq` opens a new episode: nothing was
/// counted yet, or the data was sent after the last counted loss (`episode_end`, snd_nxt
/// then). A signal inside the last episode is not counted again.
pub fn new_episode(lost_seq: u64, episode_end: Option<u64>) -> bool {
    episode_end.is_none_or(|end| lost_seq >= end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn allowance_doubles_per_loss_and_drains_per_ack() {
        let mut a = 0;
        let mut trail = vec![];
        for _ in 0..4 {
            a = after_loss(a);
            trail.push(a);
        }
        assert_eq!(trail, [1, 2, 4, 8]);
        for _ in 0..3 {
            a = after_clean_ack(a);
        }
        assert_eq!(a, 5);
        assert_eq!(after_clean_ack(0), 0);
        assert_eq!(after_loss(ALLOWANCE_MAX), ALLOWANCE_MAX);
        assert_eq!(after_loss(u32::MAX), ALLOWANCE_MAX);
    }

    #[test]
    fn decision_table() {
        let rto = ms(300);
        let d = |allowance, gap: Option<u64>| {
            on_send(&SendInput {
                allowance,
                write_gap: gap.map(ms),
                rto,
            })
        };
        assert_eq!(d(0, Some(140)), Decision::NoAllowance);
        assert_eq!(d(1, Some(140)), Decision::Bundle);
        assert_eq!(d(2, None), Decision::Bundle);
        assert_eq!(
            d(2, Some(300)),
            Decision::Bundle,
            "up to the RTO a bundle still arrives first"
        );
        assert_eq!(d(2, Some(301)), Decision::TooSlow);
        assert_eq!(d(0, Some(301)), Decision::TooSlow);
    }

    #[test]
    fn one_count_per_episode() {
        assert!(new_episode(100, None));
        assert!(
            !new_episode(100, Some(300)),
            "data sent before the last counted loss"
        );
        assert!(new_episode(300, Some(300)));
    }
}
