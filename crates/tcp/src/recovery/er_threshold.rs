//! The F-RTO threshold of Yin et al. §II.B ("Early Retransmission" for PERT, after Brakmo's Vegas
//! fine-grained timeout check; docs/spec/mechanisms.md, Early Retransmit `f-rto-threshold`). Knob:
//! `Mechanisms::er_threshold` (`tcp.mechanisms = ["er-threshold"]`).
//!
//! Yin et al. eq. (4)–(7): F-RTO = RTT'max + RTT'min, RTT'max = SRTT' + 2·SVAR, SRTT' ←
//! 15/16·SRTT' + 1/16·R, SVAR ← 3/4·SVAR + 1/4·|R − SRTT'|, RTT'min = the minimum RTT observed. On
//! each duplicate ACK, if the time elapsed since the oldest unacknowledged segment was (last) sent
//! exceeds F-RTO, loss recovery (fast retransmit) starts at once instead of waiting for dupthresh
//! duplicate ACKs; the retransmission is `SendKind::EarlyThreshold`.
//!
//! INTERPRETATION (the paper is terse; recorded here as docs/spec/mechanisms.md asks):
//! * "the round trip time of that DUPACK" is read as now − send time of the oldest
//!   unacknowledged segment (Vegas: the timestamp recorded for the relevant segment; we use
//!   its most recent transmission);
//! * eq. (6) writes SRTT on both sides; we read the new term as the RTT sample R;
//! * VAR_i = |R − SRTT'_{i−1}| (RFC 6298 order: the deviation uses the previous SRTT');
//! * the first sample initialises SRTT' = R, SVAR = R/2 (RFC 6298 §2.2);
//! * samples are those the endpoint takes anyway (Karn's rule, timestamps);
//! * the comparison is strict (">"); no SRTT' yet → never fires.
//!
//! Invariant: it only ever makes recovery start earlier, on a duplicate ACK, in the Open phase.

use crate::time::Instant;
use std::time::Duration;

/// SRTT', SVAR and RTT'min.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrtoEstimator {
    srtt: Option<Duration>,
    svar: Duration,
    min: Option<Duration>,
}

impl FrtoEstimator {
    pub fn on_sample(&mut self, r: Duration) {
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.svar = r / 2;
            }
            Some(s) => {
                let var = r.abs_diff(s);
                self.svar = self.svar * 3 / 4 + var / 4;
                self.srtt = Some(s * 15 / 16 + r / 16);
            }
        }
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn svar(&self) -> Duration {
        self.svar
    }
    /// RTT'max = SRTT' + 2·SVAR.
    pub fn rtt_max(&self) -> Option<Duration> {
        Some(self.srtt? + 2 * self.svar)
    }
    /// F-RTO = RTT'max + RTT'min.
    pub fn threshold(&self) -> Option<Duration> {
        Some(self.rtt_max()? + self.min?)
    }
}

/// Whether a duplicate ACK at `now` starts recovery: now − `oldest_sent` > F-RTO.
pub fn fires(now: Instant, oldest_sent: Instant, threshold: Option<Duration>) -> bool {
    threshold.is_some_and(|th| now.saturating_duration_since(oldest_sent) > th)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn estimator_follows_the_gains() {
        let mut e = FrtoEstimator::default();
        assert_eq!(e.threshold(), None);
        e.on_sample(ms(100));
        assert_eq!((e.srtt(), e.svar()), (Some(ms(100)), ms(50)));
        assert_eq!(e.threshold(), Some(ms(100 + 100 + 100)));
        e.on_sample(ms(260));
        // SVAR = 3/4·50 + 1/4·160 = 77.5; SRTT' = 15/16·100 + 1/16·260 = 110
        assert_eq!(e.svar(), Duration::from_micros(77_500));
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.rtt_max(), Some(ms(265)));
        assert_eq!(e.threshold(), Some(ms(365)), "RTT'min stays 100");
    }

    #[test]
    fn strictly_greater() {
        let sent = Instant::from_millis(1000);
        assert!(!fires(Instant::from_millis(1300), sent, Some(ms(300))));
        assert!(fires(Instant::from_millis(1301), sent, Some(ms(300))));
        assert!(!fires(Instant::from_millis(5000), sent, None));
        assert!(!fires(Instant::from_millis(500), sent, Some(ms(0))));
    }
}
