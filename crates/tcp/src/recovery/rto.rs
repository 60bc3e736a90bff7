//! Retransmission timeout rules (RFC 6298 §3 Karn's rule, §5 timer management; RFC 5681 §3.1
//! window after loss; Linux go-back-N after RTO).
//!
//! Two samples per ACK, as Linux `tcp_clean_rtx_queue` takes them: `seq_rtt` from the oldest
//! acked segment feeds the RTO estimator (it includes the receiver's ACK delay when one ACK
//! covers several segments, which the RTO must cover), `ca_rtt` from the newest feeds
//! congestion control and the minimum RTT (an RDB bundle that repaired an older loss does not
//! make it one write interval too high).
//!
//! Karn's rule: an ACK that covers any retransmitted segment gives no RTT sample from send
//! times. With timestamps negotiated we take, as Linux does, a sample from TSecr instead
//! (`now - TSecr`, millisecond resolution); when the send-time sample is valid it is
//! preferred because it has nanosecond resolution. Backoff is reset only when a fresh sample
//! is taken (so a retransmission's ACK without timestamps keeps the backoff, RFC 6298 §5).
//!
//! On expiry: all un-SACKed segments are marked lost (the queue is resent go-back-N as the
//! congestion window reopens, each marked `SendKind::Rto`), the first is resent at once.

use crate::send_queue::AckedSummary;
use crate::time::Instant;
use std::time::Duration;

/// The RTT sample an ACK yields, if any (Karn's rule with the timestamp exception).
pub fn rtt_sample(
    now: Instant,
    acked: &AckedSummary,
    ts_sample: Option<Duration>,
) -> Option<Duration> {
    match acked.karn_sent_at {
        Some(t) if !acked.retransmitted_acked => Some(now - t),
        _ => ts_sample,
    }
}

/// The congestion-control RTT sample (Linux `ca_rtt_us`): from the newest fully acked segment
/// under Karn's rule, else the timestamp sample. Fed to congestion control and the minimum-RTT
/// filter, never to the RTO estimator (which takes [`rtt_sample`], Linux `seq_rtt_us`).
pub fn ca_rtt_sample(
    now: Instant,
    acked: &AckedSummary,
    ts_sample: Option<Duration>,
) -> Option<Duration> {
    match acked.ca_sent_at {
        Some(t) if !acked.retransmitted_acked => Some(now - t),
        _ => ts_sample,
    }
}

/// RTT from an echoed timestamp (ms clock), if it is plausible (not from the future, non-zero).
pub fn ts_rtt(now_ms: u32, tsecr: u32) -> Option<Duration> {
    if tsecr == 0 {
        return None;
    }
    let d = now_ms.wrapping_sub(tsecr);
    (d < 0x8000_0000).then(|| Duration::from_millis(d as u64))
}

/// What to do with the retransmission timer after an ACK (RFC 6298 §5.2, §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerOnAck {
    /// All outstanding data acknowledged: stop the timer.
    Stop,
    /// New data acknowledged and more outstanding: restart with the current RTO.
    Restart,
    /// Nothing new acknowledged: leave it.
    Keep,
}

pub fn timer_on_ack(acked_new: bool, still_outstanding: bool) -> TimerOnAck {
    match (acked_new, still_outstanding) {
        (_, false) => TimerOnAck::Stop,
        (true, true) => TimerOnAck::Restart,
        (false, true) => TimerOnAck::Keep,
    }
}

/// RFC 6298 §5.5: the backoff after one more expiry (exponential: the RTO doubles). Extension point
/// for linear timeouts (docs/spec/mechanisms.md, linear timeouts), which keep it at zero while
/// thin.
pub fn backoff_after_expiry(backoff: u32) -> u32 {
    backoff.saturating_add(1)
}

/// RFC 3522 (Eifel detection with timestamps): a retransmission was spurious if the ACK
/// covering it echoes a timestamp older than the retransmission's own TSval, i.e. the ACK
/// was triggered by the original transmission.
pub fn is_spurious(tsecr: u32, retransmission_tsval: u32) -> bool {
    tsecr != 0 && (tsecr.wrapping_sub(retransmission_tsval) as i32) < 0
}

/// RFC 6298 §5.1: arm on a transmission only if the timer is not running.
pub fn arm_on_send(running: bool) -> bool {
    !running
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn karn() {
        let now = Instant::from_millis(100);
        let clean = AckedSummary {
            segments: 1,
            karn_sent_at: Some(Instant::from_millis(30)),
            ..Default::default()
        };
        assert_eq!(
            rtt_sample(now, &clean, None),
            Some(Duration::from_millis(70))
        );
        let rexmit = AckedSummary {
            segments: 1,
            karn_sent_at: None,
            retransmitted_acked: true,
            ..Default::default()
        };
        assert_eq!(rtt_sample(now, &rexmit, None), None);
        assert_eq!(
            rtt_sample(now, &rexmit, Some(Duration::from_millis(9))),
            Some(Duration::from_millis(9))
        );
        let both = AckedSummary {
            segments: 2,
            karn_sent_at: Some(Instant::from_millis(10)),
            ca_sent_at: Some(Instant::from_millis(60)),
            ..Default::default()
        };
        assert_eq!(
            rtt_sample(now, &both, None),
            Some(Duration::from_millis(90))
        );
        assert_eq!(
            ca_rtt_sample(now, &both, None),
            Some(Duration::from_millis(40))
        );
        assert_eq!(
            ca_rtt_sample(now, &rexmit, Some(Duration::from_millis(9))),
            Some(Duration::from_millis(9))
        );
        assert_eq!(ts_rtt(100, 90), Some(Duration::from_millis(10)));
        assert_eq!(ts_rtt(100, 0), None);
        assert_eq!(ts_rtt(100, 200), None);
    }

    #[test]
    fn eifel() {
        assert!(is_spurious(100, 400));
        assert!(!is_spurious(400, 400));
        assert!(!is_spurious(0, 400));
        assert_eq!(backoff_after_expiry(2), 3);
    }

    #[test]
    fn timer_rules() {
        assert_eq!(timer_on_ack(true, false), TimerOnAck::Stop);
        assert_eq!(timer_on_ack(true, true), TimerOnAck::Restart);
        assert_eq!(timer_on_ack(false, true), TimerOnAck::Keep);
        assert!(arm_on_send(false) && !arm_on_send(true));
    }
}
