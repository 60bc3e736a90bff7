//! Early Retransmit (RFC 5827; docs/spec/mechanisms.md, Early Retransmit `rfc5827`). Knobs:
//! `Mechanisms::early_retransmit` (`tcp.mechanisms = ["early-retransmit"]`) and
//! `TcpConfig::early_retransmit_delay` (Linux `tcp_early_retrans` = 2 mode).
//!
//! RFC 5827 §3.1/§3.2: when the number of outstanding segments is less than 4 and no new data
//! can be sent (nothing unsent, or cwnd/rwnd do not allow it), the duplicate-ACK threshold
//! (or the number of SACKed segments needed) is `ER_thresh = max(outstanding − 1, 1)`.
//! Linux mode 2 (`tcp_pause_early_retransmit`, 3.5–4.9, mitigation A.3 of RFC 5827 §6):
//! the retransmission is delayed by max(SRTT/4, 2 ms), not at all if there is no SRTT or the
//! RTO would fire first; an ACK of new data meanwhile cancels it. Retransmissions it causes
//! are `SendKind::Early`.
//!
//! Invariant: ER never raises the threshold: the endpoint uses min(its threshold,
//! [`dupthresh`]), and [`dupthresh`] is `None` whenever outstanding ≥ 4 or new data can be sent.

use crate::time::Instant;
use std::time::Duration;

/// ER applies only below this many outstanding segments.
pub const ER_MAX_OUTSTANDING: u32 = 4;
/// Lower bound of the Linux mode-2 delay (`msecs_to_jiffies(2)`).
pub const MIN_DELAY: Duration = Duration::from_millis(2);

/// RFC 5827 ER_thresh, if Early Retransmit applies.
pub fn dupthresh(outstanding: u32, can_send_new: bool) -> Option<u32> {
    (outstanding < ER_MAX_OUTSTANDING && !can_send_new)
        .then(|| outstanding.saturating_sub(1).max(1))
}

/// Linux mode 2: when the delayed early retransmission is due, or `None` to retransmit at
/// once (no SRTT, or the RTO deadline comes no later than the delayed one).
pub fn delayed_until(
    now: Instant,
    srtt: Option<Duration>,
    rto_deadline: Option<Instant>,
) -> Option<Instant> {
    let at = now + (srtt? / 4).max(MIN_DELAY);
    match rto_deadline {
        Some(rto) if rto <= at => None,
        _ => Some(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc5827_thresholds() {
        assert_eq!(dupthresh(1, false), Some(1));
        assert_eq!(dupthresh(2, false), Some(1));
        assert_eq!(dupthresh(3, false), Some(2));
        assert_eq!(dupthresh(4, false), None);
        assert_eq!(dupthresh(10, false), None);
        for n in 0..6 {
            assert_eq!(dupthresh(n, true), None, "new data can be sent");
        }
    }

    #[test]
    fn linux_delay() {
        let now = Instant::from_millis(1000);
        let ms = Duration::from_millis;
        assert_eq!(
            delayed_until(now, Some(ms(100)), None),
            Some(Instant::from_millis(1025))
        );
        assert_eq!(
            delayed_until(now, Some(ms(4)), None),
            Some(Instant::from_millis(1002)),
            "2 ms floor"
        );
        assert_eq!(delayed_until(now, None, None), None);
        assert_eq!(
            delayed_until(now, Some(ms(100)), Some(Instant::from_millis(1025))),
            None
        );
        assert_eq!(
            delayed_until(now, Some(ms(100)), Some(Instant::from_millis(1026))),
            Some(Instant::from_millis(1025))
        );
    }
}
