//! Exact-number tests for every congestion-control hook (docs/spec/mechanisms.md, congestion
//! control).

use super::*;
use crate::config::{CcAlgorithm, Profile, TcpConfig};
use proptest::prelude::*;

const T: Instant = Instant::ZERO;

/// The hooks as the tests state them: an ACK with the flight before it (cwnd-limited when the
/// flight reaches cwnd), and the three congestion events by name.
pub(crate) trait TestHooks {
    fn ack_with_flight(&mut self, now: Instant, acked: u32, in_flight: u32, rtt: Option<Duration>);
    fn enter_recovery(&mut self, now: Instant, base: u32);
    fn rto(&mut self, now: Instant, base: u32);
    fn cwr(&mut self, now: Instant, base: u32);
}

impl<C: CongestionControl> TestHooks for C {
    fn ack_with_flight(&mut self, now: Instant, acked: u32, in_flight: u32, rtt: Option<Duration>) {
        let limited = in_flight >= self.cwnd();
        self.on_ack(now, acked, limited, rtt);
    }
    fn enter_recovery(&mut self, now: Instant, base: u32) {
        self.on_congestion_event(now, CongestionEvent::FastRecovery, base);
    }
    fn rto(&mut self, now: Instant, base: u32) {
        self.on_congestion_event(now, CongestionEvent::Timeout, base);
    }
    fn cwr(&mut self, now: Instant, base: u32) {
        self.on_congestion_event(now, CongestionEvent::Cwr, base);
    }
}

fn cc(alg: CcAlgorithm, iw: u32) -> Cc {
    let mut cfg = TcpConfig::from_profile(Profile::Linux2622);
    cfg.cc = alg;
    cfg.initial_window = iw;
    Cc::new(&cfg)
}

fn both(iw: u32) -> [Cc; 2] {
    [cc(CcAlgorithm::Reno, iw), cc(CcAlgorithm::NewReno, iw)]
}

/// Force congestion avoidance at `cwnd` (via an RTO and slow start up to ssthresh).
fn in_ca(alg: CcAlgorithm, cwnd: u32) -> Cc {
    let mut c = cc(alg, 3);
    c.enter_recovery(T, 2 * cwnd);
    assert_eq!((c.cwnd(), c.ssthresh()), (cwnd, cwnd));
    c
}

#[test]
fn new_from_config() {
    for p in Profile::ALL {
        let cfg = TcpConfig::from_profile(p);
        let c = Cc::new(&cfg);
        assert_eq!(c.cwnd(), cfg.initial_window);
        assert_eq!(c.ssthresh(), INFINITE_SSTHRESH);
        assert!(c.in_initial_slow_start());
        assert_eq!(c.algorithm(), cfg.cc);
    }
    assert!(matches!(cc(CcAlgorithm::Reno, 3), Cc::Reno(_)));
    assert!(matches!(cc(CcAlgorithm::NewReno, 3), Cc::NewReno(_)));
    assert_eq!(cc(CcAlgorithm::NewReno, 0).cwnd(), 1);
}

#[test]
fn partial_ack_rule_differs() {
    use crate::recovery::newreno::FastRecoveryExit;
    let rule = |alg| {
        let mut cfg = TcpConfig::from_profile(Profile::Linux2622);
        cfg.cc = alg;
        FastRecoveryExit::for_config(&cfg)
    };
    assert_eq!(rule(CcAlgorithm::Reno), FastRecoveryExit::FirstNewAck);
    for alg in [CcAlgorithm::NewReno, CcAlgorithm::Cubic, CcAlgorithm::Pert] {
        assert_eq!(rule(alg), FastRecoveryExit::RecoveryPoint);
    }
    assert!(FastRecoveryExit::FirstNewAck.ends_episode(5, 10));
    assert!(!FastRecoveryExit::RecoveryPoint.ends_episode(5, 10));
    assert!(FastRecoveryExit::RecoveryPoint.ends_episode(10, 10));
}

#[test]
fn slow_start_adds_acked_segments() {
    for mut c in both(3) {
        c.ack_with_flight(T, 1, 3, None);
        assert_eq!(c.cwnd(), 4);
        c.ack_with_flight(T, 2, 4, None); // delayed ACK covering two segments
        assert_eq!(c.cwnd(), 6);
        c.ack_with_flight(T, 6, 6, None);
        assert_eq!(c.cwnd(), 12);
        assert!(c.in_initial_slow_start());
    }
}

#[test]
fn no_growth_when_not_cwnd_limited() {
    // A thin stream with 1 segment in flight and cwnd 3 keeps its initial window.
    for mut c in both(3) {
        for _ in 0..100 {
            c.ack_with_flight(T, 1, 1, None);
        }
        assert_eq!(c.cwnd(), 3);
        c.ack_with_flight(T, 1, 2, None);
        assert_eq!(c.cwnd(), 3);
        c.ack_with_flight(T, 1, 3, None);
        assert_eq!(c.cwnd(), 4);
    }
}

#[test]
fn slow_start_stops_at_ssthresh_and_spills_into_avoidance() {
    for alg in [CcAlgorithm::Reno, CcAlgorithm::NewReno] {
        let mut c = cc(alg, 3);
        c.rto(T, 20); // ssthresh 10, cwnd 1
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 10));
        c.ack_with_flight(T, 1, 1, None);
        c.ack_with_flight(T, 2, 2, None);
        c.ack_with_flight(T, 4, 4, None);
        assert_eq!(c.cwnd(), 8);
        // 8 + 5 would be 13: slow start takes 2 (to 10), 3 go to cwnd_cnt (3 of 10).
        c.ack_with_flight(T, 5, 8, None);
        assert_eq!(c.cwnd(), 10);
        c.ack_with_flight(T, 6, 10, None); // cnt 9: no increase yet
        assert_eq!(c.cwnd(), 10);
        c.ack_with_flight(T, 1, 10, None); // cnt 10 ≥ 10 → +1, cnt 0
        assert_eq!(c.cwnd(), 11);
    }
}

#[test]
fn congestion_avoidance_one_segment_per_window() {
    for alg in [CcAlgorithm::Reno, CcAlgorithm::NewReno] {
        let mut c = in_ca(alg, 10);
        for i in 1..10 {
            c.ack_with_flight(T, 1, 10, None);
            assert_eq!(c.cwnd(), 10, "after {i} acks");
        }
        c.ack_with_flight(T, 1, 10, None);
        assert_eq!(c.cwnd(), 11);
        // A stretch ACK of 25 segments at cwnd 11: 25 / 11 = +2, 3 left over.
        c.ack_with_flight(T, 25, 11, None);
        assert_eq!(c.cwnd(), 13);
        c.ack_with_flight(T, 9, 13, None); // 3 + 9 = 12 < 13
        assert_eq!(c.cwnd(), 13);
        c.ack_with_flight(T, 1, 13, None);
        assert_eq!(c.cwnd(), 14);
        assert!(!c.in_initial_slow_start());
    }
}

#[test]
fn enter_and_exit_recovery() {
    for mut c in both(3) {
        for _ in 0..5 {
            let w = c.cwnd();
            c.ack_with_flight(T, w, w, None);
        }
        assert_eq!(c.cwnd(), 96);
        c.enter_recovery(T, 40);
        assert_eq!((c.cwnd(), c.ssthresh()), (20, 20));
        c.on_exit_recovery(T);
        assert_eq!((c.cwnd(), c.ssthresh()), (20, 20));
        // Congestion avoidance from a clean count.
        for _ in 0..19 {
            c.ack_with_flight(T, 1, 20, None);
        }
        assert_eq!(c.cwnd(), 20);
        c.ack_with_flight(T, 1, 20, None);
        assert_eq!(c.cwnd(), 21);
    }
}

#[test]
fn recovery_floor_is_two_segments() {
    for mut c in both(3) {
        c.enter_recovery(T, 3);
        assert_eq!((c.cwnd(), c.ssthresh()), (2, 2));
        c.enter_recovery(T, 0);
        assert_eq!((c.cwnd(), c.ssthresh()), (2, 2));
    }
}

#[test]
fn rto_sets_loss_window_and_holds_ssthresh_on_repeat() {
    for mut c in both(3) {
        c.rto(T, 3);
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 2));
        let mut c2 = c.clone();
        // The retransmission times out again: ssthresh stays.
        c.rto(T, 1);
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 2));
        // After new data is acknowledged, a later RTO recomputes it.
        c2.ack_with_flight(T, 1, 1, None);
        assert_eq!(c2.cwnd(), 2);
        c2.rto(T, 9);
        assert_eq!((c2.cwnd(), c2.ssthresh()), (1, 4));
        assert!(!c2.in_initial_slow_start());
    }
    let mut c = cc(CcAlgorithm::NewReno, 10);
    c.rto(T, 10);
    assert_eq!((c.cwnd(), c.ssthresh()), (1, 5));
}

#[test]
fn idle_restart_caps_at_initial_window() {
    for mut c in both(3) {
        c.on_idle_restart(T);
        assert_eq!((c.cwnd(), c.ssthresh()), (3, INFINITE_SSTHRESH));
        c.ack_with_flight(T, 5, 3, None);
        assert_eq!(c.cwnd(), 8);
        c.on_idle_restart(T);
        assert_eq!((c.cwnd(), c.ssthresh()), (3, INFINITE_SSTHRESH));
    }
    // After a loss: ssthresh = max(ssthresh, 3/4 cwnd), cwnd = min(cwnd, IW).
    let mut c = in_ca(CcAlgorithm::NewReno, 10);
    c.ack_with_flight(T, 10, 10, None);
    assert_eq!(c.cwnd(), 11);
    c.on_idle_restart(T);
    assert_eq!((c.cwnd(), c.ssthresh()), (3, 10));
    let mut c = cc(CcAlgorithm::NewReno, 3);
    c.rto(T, 2); // cwnd 1, ssthresh 2
    c.on_idle_restart(T);
    assert_eq!((c.cwnd(), c.ssthresh()), (1, 2));
}

proptest! {
    #[test]
    fn window_invariants(iw in 1u32..20, ops in prop::collection::vec((0u8..5, 0u32..5000), 0..200)) {
        for mut c in both(iw) {
            for &(op, n) in &ops {
                let before = c.cwnd();
                match op {
                    0 => c.ack_with_flight(T, n % 64, n, None),
                    1 => c.enter_recovery(T, n),
                    2 => c.on_exit_recovery(T),
                    3 => c.rto(T, n),
                    _ => c.on_idle_restart(T),
                }
                prop_assert!(c.cwnd() >= 1);
                prop_assert!(c.ssthresh() >= 2);
                if op == 0 {
                    prop_assert!(c.cwnd() >= before);
                    prop_assert!(c.cwnd() - before <= (n % 64));
                }
            }
        }
    }
}

#[test]
fn cubic_and_pert_from_config() {
    let mut cfg = TcpConfig::from_profile(Profile::Linux2622);
    for (alg, want_pert) in [(CcAlgorithm::Cubic, false), (CcAlgorithm::Pert, true)] {
        cfg.cc = alg;
        cfg.cc_seed = 9;
        let c = Cc::new(&cfg);
        assert_eq!(c.algorithm(), alg);
        assert_eq!(matches!(c, Cc::Pert(_)), want_pert);
        assert_eq!(
            (c.cwnd(), c.ssthresh()),
            (cfg.initial_window, INFINITE_SSTHRESH)
        );
    }
}

/// CWR (RDB's repaired loss) applies a loss's multiplicative decrease at once: the window a
/// fast-recovery episode would leave at its end, with no episode in between.
#[test]
fn cwr_is_the_decrease_of_a_loss_applied_at_once() {
    for alg in [
        CcAlgorithm::Reno,
        CcAlgorithm::NewReno,
        CcAlgorithm::Cubic,
        CcAlgorithm::Pert,
    ] {
        let mut c = cc(alg, 3);
        c.ack_with_flight(T, 17, 3, None); // slow start to 20
        assert_eq!(c.cwnd(), 20);
        let mut episode = c.clone();
        c.cwr(T, 20);
        episode.enter_recovery(T, 20);
        episode.on_exit_recovery(T);
        assert_eq!(
            (c.cwnd(), c.ssthresh()),
            (episode.cwnd(), episode.ssthresh())
        );
        assert!(
            c.cwnd() < 20 && c.cwnd() == c.ssthresh(),
            "{alg:?}: {}",
            c.cwnd()
        );
    }
}
