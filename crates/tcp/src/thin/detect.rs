//! Thin-stream detection (docs/spec/mechanisms.md, thin-stream detection). Knob:
//! `TcpConfig::thin_detection`
//! (`tcp.thin_detection = "pif4" | "dpifl"`), default `Pif4`.
//!
//! * `Pif4` — Evensen (2008) §2.4; Linux `tcp_stream_is_thin` (include/net/tcp.h, 2.6.34+):
//!   `tp->packets_out < 4 && !tcp_in_initial_slowstart(tp)`.
//! * `Dpifl` — public Linux RDB patch (2016), `tcp_stream_is_thin_dpifl`:
//!   `PIF * itt_lower_bound < srtt`, `itt_lower_bound` = 10 ms
//!   ([`DPIFL_ITT_LOWER_BOUND`]); no SRTT yet → not thin (the patch compares with srtt 0).
//!
//! PIF here is Linux `packets_out` (segments sent and not cumulatively acknowledged), as
//! docs/spec/mechanisms.md defines it for both tests. (The patch uses `tcp_packets_in_flight`,
//! which differs only while segments are SACKed or marked lost.)
//!
//! Invariant: the test is a pure function of (PIF, initial slow start, SRTT); `Pif4` is thin
//! exactly for PIF ∈ {0, 1, 2, 3} outside the initial slow start; `Dpifl` at 100 ms SRTT is
//! thin exactly for PIF ≤ 9.

use crate::config::ThinDetection;
use std::time::Duration;

/// `pif4`: thin while PIF is below this.
pub const PIF4_LIMIT: u32 = 4;
/// `sysctl_tcp_thin_dpifl_itt_lower_bound` default of the RDB patch (10 ms).
pub const DPIFL_ITT_LOWER_BOUND: Duration = Duration::from_millis(10);

/// What a thin-stream test looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThinInput {
    /// Packets in flight (Linux `packets_out`).
    pub pif: u32,
    /// ssthresh still at its initial "infinite" value (Linux `tcp_in_initial_slowstart`).
    pub in_initial_slow_start: bool,
    pub srtt: Option<Duration>,
}

/// `pif4`: PIF < 4 and not in initial slow start.
pub fn is_thin_pif4(pif: u32, in_initial_slow_start: bool) -> bool {
    pif < PIF4_LIMIT && !in_initial_slow_start
}

/// `dpifl`: PIF × `itt_lower_bound` < SRTT.
pub fn is_thin_dpifl(pif: u32, srtt: Option<Duration>, itt_lower_bound: Duration) -> bool {
    let Some(srtt) = srtt else { return false };
    itt_lower_bound.as_nanos().saturating_mul(pif as u128) < srtt.as_nanos()
}

/// The configured test.
pub fn is_thin(mode: ThinDetection, i: &ThinInput) -> bool {
    match mode {
        ThinDetection::Pif4 => is_thin_pif4(i.pif, i.in_initial_slow_start),
        ThinDetection::Dpifl => is_thin_dpifl(i.pif, i.srtt, DPIFL_ITT_LOWER_BOUND),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn pif4_table() {
        for pif in 0..10 {
            assert_eq!(is_thin_pif4(pif, false), pif <= 3, "pif {pif}");
            assert!(!is_thin_pif4(pif, true), "initial slow start is never thin");
        }
    }

    #[test]
    fn dpifl_table() {
        // 100 ms SRTT allows up to 9 in flight (9 × 10 ms < 100 ms, 10 × 10 ms is not)
        for pif in 0..20 {
            assert_eq!(
                is_thin_dpifl(pif, Some(ms(100)), DPIFL_ITT_LOWER_BOUND),
                pif <= 9,
                "pif {pif}"
            );
        }
        assert!(
            !is_thin_dpifl(0, None, DPIFL_ITT_LOWER_BOUND),
            "no SRTT: not thin"
        );
        assert!(!is_thin_dpifl(1, Some(ms(10)), DPIFL_ITT_LOWER_BOUND));
        assert!(is_thin_dpifl(
            1,
            Some(ms(10) + Duration::from_nanos(1)),
            DPIFL_ITT_LOWER_BOUND
        ));
        assert!(!is_thin_dpifl(u32::MAX, Some(Duration::MAX), Duration::MAX));
    }

    #[test]
    fn dispatch_by_mode() {
        let i = ThinInput {
            pif: 6,
            in_initial_slow_start: true,
            srtt: Some(ms(100)),
        };
        assert!(!is_thin(ThinDetection::Pif4, &i));
        assert!(
            is_thin(ThinDetection::Dpifl, &i),
            "dpifl ignores slow start"
        );
        let i = ThinInput {
            pif: 3,
            in_initial_slow_start: false,
            srtt: Some(ms(20)),
        };
        assert!(is_thin(ThinDetection::Pif4, &i));
        assert!(!is_thin(ThinDetection::Dpifl, &i));
    }
}
