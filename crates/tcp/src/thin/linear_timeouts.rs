//! Linear timeouts ("removal of exponential backoff", docs/spec/mechanisms.md, linear timeouts).
//! Knobs:
//! `Mechanisms::linear_timeouts` (`tcp.mechanisms = ["linear-timeouts"]`) and
//! `TcpConfig::linear_timeouts_variant`.
//!
//! Sources:
//! * `Linux` (default) — Linux `tcp_retransmit_timer` (net/ipv4/tcp_timer.c, 2.6.34–4.x;
//!   socket option `TCP_THIN_LINEAR_TIMEOUTS` = 16, sysctl `tcp_thin_linear_timeouts`): after
//!   `icsk_retransmits++`, if the socket is ESTABLISHED, LT is on, the stream is thin and
//!   `icsk_retransmits <= TCP_THIN_LINEAR_RETRIES` (6), then `icsk_backoff = 0` and the RTO is
//!   recomputed from the estimator (`__tcp_set_rto`); otherwise the RTO doubles. The thin test
//!   runs after `tcp_enter_loss` has set ssthresh, so the first RTO of a connection already
//!   counts as "not in initial slow start".
//! * `SeedSrtt` — Evensen (2008) §2.4 wording, "the retransmission time is only increased by a
//!   smoothed RTT measurement for every RTO": RTO_k = RTO_0 + k·SRTT after k consecutive expiries,
//!   under the same gate (established, thin, k ≤ 6); beyond that the RTO doubles from RTO_0 +
//!   6·SRTT. Without an SRTT the increment is 0. *Interpretation*: Evensen (2008) gives no retry
//!   limit; we reuse Linux's so that both variants stop hammering a black hole.
//!
//! The endpoint's RTO is `backed_off(base + linear_extra, backoff, rto_max)`; this module
//! decides `backoff` and `linear_extra` after one expiry.
//!
//! Invariant: with a steady estimator and a thin established stream, the `Linux` variant gives
//! retransmissions at t0 + k·RTO for k = 1..=7 (the 7th expiry is the first to double: t0 +
//! 9·RTO, t0 + 13·RTO, …); when the gate does not hold the result equals plain exponential
//! backoff ([`crate::recovery::rto::backoff_after_expiry`]).

use crate::config::LinearTimeouts;
use crate::recovery::rto::backoff_after_expiry;
use std::time::Duration;

/// Linux `TCP_THIN_LINEAR_RETRIES`.
pub const TCP_THIN_LINEAR_RETRIES: u32 = 6;

/// The facts at one RTO expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expiry {
    /// `linear-timeouts` is on.
    pub enabled: bool,
    pub variant: LinearTimeouts,
    /// The connection is ESTABLISHED (not closing).
    pub established: bool,
    /// The stream is thin (configured test, evaluated after entering Loss).
    pub thin: bool,
    /// Consecutive RTO retransmissions including this expiry (Linux `icsk_retransmits` after
    /// its increment).
    pub retransmissions: u32,
    /// Backoff exponent before this expiry.
    pub backoff: u32,
    /// Additive increment before this expiry (`SeedSrtt`; 0 otherwise).
    pub linear_extra: Duration,
    pub srtt: Option<Duration>,
}

/// The timer state after the expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextRto {
    pub backoff: u32,
    pub linear_extra: Duration,
    /// Whether the linear rule applied (no doubling).
    pub linear: bool,
}

/// Whether the linear rule applies at this expiry.
pub fn applies(e: &Expiry) -> bool {
    e.enabled && e.established && e.thin && e.retransmissions <= TCP_THIN_LINEAR_RETRIES
}

/// Backoff and increment after one expiry.
pub fn next_rto(e: &Expiry) -> NextRto {
    if !applies(e) {
        return NextRto {
            backoff: backoff_after_expiry(e.backoff),
            linear_extra: e.linear_extra,
            linear: false,
        };
    }
    let linear_extra = match e.variant {
        LinearTimeouts::Linux => Duration::ZERO,
        LinearTimeouts::SeedSrtt => e.srtt.unwrap_or_default().saturating_mul(e.retransmissions),
    };
    NextRto {
        backoff: 0,
        linear_extra,
        linear: true,
    }
}

/// The RTO the timer is restarted with: `(base + linear_extra) · 2^backoff`, at most `max`.
pub fn rto(base: Duration, n: &NextRto, max: Duration) -> Duration {
    crate::rtt::backed_off(base.saturating_add(n.linear_extra), n.backoff, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Duration = Duration::from_millis(300);
    const MAX: Duration = Duration::from_secs(120);

    fn expiry(variant: LinearTimeouts) -> Expiry {
        Expiry {
            enabled: true,
            variant,
            established: true,
            thin: true,
            retransmissions: 1,
            backoff: 0,
            linear_extra: Duration::ZERO,
            srtt: Some(Duration::from_millis(100)),
        }
    }

    /// Deadlines of the first `n` expiries from t0 = 0 with a steady base RTO `R`.
    fn schedule(mut e: Expiry, n: u32) -> Vec<u128> {
        let mut t = R;
        let mut out = vec![];
        for k in 1..=n {
            out.push(t.as_millis());
            e.retransmissions = k;
            let next = next_rto(&e);
            e.backoff = next.backoff;
            e.linear_extra = next.linear_extra;
            t += rto(R, &next, MAX);
        }
        out
    }

    #[test]
    fn linux_linear_for_six_then_exponential() {
        let e = expiry(LinearTimeouts::Linux);
        let r = R.as_millis();
        let want: Vec<u128> = [1, 2, 3, 4, 5, 6, 7, 9, 13, 21]
            .iter()
            .map(|k| k * r)
            .collect();
        assert_eq!(schedule(e, 10), want);
    }

    #[test]
    fn seed_variant_adds_one_srtt_per_expiry() {
        // intervals R, R+100, R+200, …, R+600, then 2·(R+600), 4·(R+600)
        let e = expiry(LinearTimeouts::SeedSrtt);
        let got = schedule(e, 9);
        assert_eq!(
            got,
            vec![300, 700, 1200, 1800, 2500, 3300, 4200, 6000, 9600]
        );
    }

    #[test]
    fn off_when_gate_fails_is_exponential() {
        for e in [
            Expiry {
                enabled: false,
                ..expiry(LinearTimeouts::Linux)
            },
            Expiry {
                established: false,
                ..expiry(LinearTimeouts::Linux)
            },
            Expiry {
                thin: false,
                ..expiry(LinearTimeouts::SeedSrtt)
            },
        ] {
            let r = R.as_millis();
            assert_eq!(schedule(e, 4), vec![r, 3 * r, 7 * r, 15 * r]);
        }
        let e = Expiry {
            retransmissions: 7,
            backoff: 0,
            ..expiry(LinearTimeouts::Linux)
        };
        assert_eq!(
            next_rto(&e),
            NextRto {
                backoff: 1,
                linear_extra: Duration::ZERO,
                linear: false
            }
        );
        let e = Expiry {
            retransmissions: 6,
            backoff: 3,
            ..expiry(LinearTimeouts::Linux)
        };
        assert_eq!(
            next_rto(&e).backoff,
            0,
            "the linear rule clears an earlier backoff"
        );
    }

    #[test]
    fn seed_variant_without_srtt_is_linux() {
        let e = Expiry {
            srtt: None,
            retransmissions: 3,
            ..expiry(LinearTimeouts::SeedSrtt)
        };
        assert_eq!(next_rto(&e).linear_extra, Duration::ZERO);
    }
}
