//! Table and property tests for the RTO models (docs/spec/mechanisms.md, RTO models).

use super::*;
use crate::config::{Profile, TcpConfig};
use proptest::prelude::*;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn est(p: Profile) -> RttEstimator {
    RttEstimator::new(&TcpConfig::from_profile(p))
}

/// RTO after `n` samples of `rtt`.
fn steady(p: Profile, rtt: Duration, n: usize) -> Duration {
    let mut e = est(p);
    for _ in 0..n {
        e.on_sample(rtt);
    }
    e.rto()
}

#[test]
fn initial_rto_before_any_sample() {
    assert_eq!(est(Profile::Linux2622).rto(), ms(3000));
    assert_eq!(est(Profile::Rfc).rto(), ms(1000));
    assert_eq!(est(Profile::FreeBsd6).rto(), ms(3000));
    assert_eq!(est(Profile::Ns2).rto(), ms(3000));
    let e = est(Profile::Linux2622);
    assert_eq!(
        (e.srtt(), e.rttvar(), e.min_rtt(), e.latest()),
        (None, None, None, None)
    );
}

#[test]
fn linux_first_sample() {
    // RTO = R + max(200 ms, 2R).
    for (r, rto) in [(10, 210), (100, 300), (150, 450), (250, 750), (1, 201)] {
        let mut e = est(Profile::Linux2622);
        e.on_sample(ms(r));
        assert_eq!(e.rto(), ms(rto), "R = {r} ms");
        assert_eq!(e.srtt(), Some(ms(r)));
        assert_eq!(e.rttvar(), Some(Duration::from_micros(r * 500)));
    }
}

#[test]
fn linux_steady_rtt_converges_to_rtt_plus_rto_min() {
    assert_eq!(steady(Profile::Linux2622, ms(10), 50), ms(210));
    assert_eq!(steady(Profile::Linux2622, ms(100), 50), ms(300));
    // 2R = 260 > 200: rttvar decays by (rttvar - 200) >> 2 per round and stops once the excess is
    // under 4 jiffies (integer arithmetic, as in Linux): Evensen's (2008) "~330 ms".
    assert_eq!(steady(Profile::Linux2622, ms(130), 50), ms(333));
    // 4·mdev starts above rto_min at 200 ms and decays by 1/4 of the excess per round.
    let r = steady(Profile::Linux2622, ms(200), 50);
    assert!(r >= ms(400) && r <= ms(405), "{r:?}");
}

#[test]
fn linux_falling_rtt_is_damped() {
    // A drop from 300 ms to 100 ms: |err| = 200 ms > mdev, weighted 1/8 more.
    let mut e = est(Profile::Linux2622);
    e.on_sample(ms(300)); // srtt 300, mdev 150 (×4 = 600)
    e.on_sample(ms(100));
    // err = 100 - 300 = -200; srtt = 275; |err| - mdev = 200 - 150 = 50 → 50 >> 3 = 6;
    // mdev×4 = 606 → mdev 151.5 ms.
    assert_eq!(e.srtt(), Some(ms(275)));
    assert_eq!(e.rttvar(), Some(Duration::from_micros(151_500)));
    // A rise of the same size: err = +200, 200 - 150 = 50 added in full.
    let mut e = est(Profile::Linux2622);
    e.on_sample(ms(300));
    e.on_sample(ms(500));
    assert_eq!(e.srtt(), Some(ms(325)));
    assert_eq!(e.rttvar(), Some(ms(650) / 4));
}

#[test]
fn linux_rttvar_holds_within_a_round() {
    // Without a round end, rttvar (the RTO's variance term) does not decay.
    let mut e = est(Profile::Linux2622);
    e.on_sample_in_round(ms(200), false); // rttvar = 400
    for _ in 0..20 {
        e.on_sample_in_round(ms(200), false);
    }
    assert_eq!(e.rto(), ms(600));
    // The first round end resets mdev_max (which still holds the first sample's 400); the
    // second decays rttvar towards max(mdev_max, rto_min) = 200 by a quarter: 600 - 50.
    e.on_sample_in_round(ms(200), true);
    assert_eq!(e.rto(), ms(600));
    e.on_sample_in_round(ms(200), true);
    assert_eq!(e.rto(), ms(550));
}

#[test]
fn linux_granularity_rounds_samples_up() {
    let mut cfg = TcpConfig::from_profile(Profile::Linux2622);
    cfg.clock_granularity = ms(4); // HZ = 250
    let mut e = RttEstimator::new(&cfg);
    e.on_sample(Duration::from_micros(100)); // less than a jiffy → 1 jiffy
    assert_eq!(e.srtt(), Some(ms(4)));
    assert_eq!(e.rto(), ms(204));
    let mut e = RttEstimator::new(&cfg);
    e.on_sample(Duration::from_micros(101_001)); // 25.25 jiffies → 26
    assert_eq!(e.srtt(), Some(ms(104)));
    assert_eq!(e.rto(), ms(312));
    assert_eq!(e.latest(), Some(Duration::from_micros(101_001)));
}

#[test]
fn rfc6298_first_and_later_samples() {
    let mut e = est(Profile::Rfc);
    e.on_sample(ms(100));
    assert_eq!((e.srtt(), e.rttvar()), (Some(ms(100)), Some(ms(50))));
    assert_eq!(e.rto(), ms(1000)); // 300 ms, raised to the 1 s minimum
    e.on_sample(ms(500));
    // RTTVAR = 3/4·50 + 1/4·400 = 137.5; SRTT = 7/8·100 + 1/8·500 = 150.
    assert_eq!(e.rttvar(), Some(Duration::from_micros(137_500)));
    assert_eq!(e.srtt(), Some(ms(150)));
    assert_eq!(e.rto(), ms(1000));
    e.on_sample(ms(900));
    // RTTVAR = 103.125 + 187.5 = 290.625; SRTT = 131.25 + 112.5 = 243.75;
    // RTO = 243.75 + 1162.5 = 1406.25 → rounded up to G = 1 ms.
    assert_eq!(e.rto(), ms(1407));
}

#[test]
fn rfc6298_g_floor_and_max() {
    let mut cfg = TcpConfig::from_profile(Profile::Rfc);
    cfg.rto_min = Duration::ZERO;
    cfg.clock_granularity = ms(10);
    let mut e = RttEstimator::new(&cfg);
    for _ in 0..200 {
        e.on_sample(ms(50));
    }
    // RTTVAR → 0, so RTO = SRTT + G.
    assert_eq!(e.rto(), ms(60));
    let mut e = est(Profile::Rfc);
    e.on_sample(Duration::from_secs(30));
    assert_eq!(e.rto(), Duration::from_secs(60)); // 90 s capped
}

#[test]
fn freebsd_seed_example_287ms() {
    // Hurtig (2006) §4: a 28.8 ms handshake RTT → tcp_xmit_timer(29) → RTO 3·29 + 200 = 287 ms.
    let mut e = est(Profile::FreeBsd6);
    e.on_sample(Duration::from_micros(28_800));
    assert_eq!(e.rto(), ms(287));
    assert_eq!(e.srtt(), Some(ms(29)));
    let mut e = est(Profile::FreeBsd6);
    e.on_sample(ms(28));
    assert_eq!(e.rto(), ms(287));
    let mut e = est(Profile::FreeBsd6);
    e.on_sample(ms(29)); // 29 whole ticks + 1
    assert_eq!(e.rto(), ms(290));
}

#[test]
fn freebsd_first_sample_is_three_r_plus_slop() {
    for r in [0u64, 1, 5, 99, 1000] {
        let mut e = est(Profile::FreeBsd6);
        e.on_sample(ms(r));
        let t = (r + 1).max(3); // TCP_REXMTVAL's max(t_rttmin, …) on 3·rtt
        assert_eq!(e.rto(), ms((3 * (r + 1)).max(t) + 200), "r = {r}");
    }
}

#[test]
fn freebsd_steady_rtt() {
    // Later samples use rtt - 1 = whole ticks: SRTT → R, RTO → R + 200 ms.
    assert_eq!(steady(Profile::FreeBsd6, ms(100), 200), ms(300));
    assert_eq!(steady(Profile::FreeBsd6, ms(10), 200), ms(210));
    assert_eq!(steady(Profile::FreeBsd6, ms(0), 200), ms(203));
}

#[test]
fn freebsd_backoff_adds_slop_after_multiplying() {
    let mut e = est(Profile::FreeBsd6);
    e.on_sample(ms(28));
    let got: Vec<_> = (0..9).map(|n| e.backed_off_rto(n)).collect();
    let want = [287, 374, 548, 896, 1592, 2984, 5768, 5768, 5768].map(ms);
    assert_eq!(got, want);
}

#[test]
fn ns2_first_sample_and_ticks() {
    let mut e = est(Profile::Ns2);
    e.on_sample(ms(100)); // 10 ticks; RTO = 10 + 4·5 = 30 ticks
    assert_eq!(e.rto(), ms(300));
    assert_eq!((e.srtt(), e.rttvar()), (Some(ms(100)), Some(ms(50))));
    let mut e = est(Profile::Ns2);
    e.on_sample(ms(44)); // int(4.4 + 0.5) = 4 ticks → 12 ticks → min RTO 200 ms
    assert_eq!(e.srtt(), Some(ms(40)));
    assert_eq!(e.rto(), ms(200));
    let mut e = est(Profile::Ns2);
    e.on_sample(ms(1)); // at least one tick
    assert_eq!(e.srtt(), Some(ms(10)));
}

#[test]
fn ns2_steady_rtt() {
    // t_rttvar_ stops decaying at 3 (¾ tick): RTO = R + 3 ticks, at least 200 ms.
    assert_eq!(steady(Profile::Ns2, ms(100), 200), ms(200));
    assert_eq!(steady(Profile::Ns2, ms(300), 200), ms(330));
}

#[test]
fn ns2_truncates_fraction_of_a_tick() {
    let mut cfg = TcpConfig::from_profile(Profile::Ns2);
    cfg.rto_min = Duration::ZERO;
    let mut e = RttEstimator::new(&cfg);
    // First: srtt 80/8, rttvar 20/4. Then delta 1: srtt 81/8 (10.125), rttvar 20 + (1 - 5) =
    // 16/4; (16·8 + 81) >> 3 = 209 >> 3 = 26 ticks (26.125 truncated).
    e.on_sample(ms(100));
    e.on_sample(ms(110));
    assert_eq!(e.rto(), ms(260));
}

#[test]
fn ns2_fine_grained_timer() {
    let mut cfg = TcpConfig::from_profile(Profile::Ns2);
    cfg.clock_granularity = ms(1);
    cfg.rto_min = ms(1);
    let mut e = RttEstimator::new(&cfg);
    e.on_sample(Duration::from_micros(200));
    assert_eq!(e.rto(), ms(3)); // 1 + 4·0.5 ticks
    for _ in 0..100 {
        e.on_sample(Duration::from_micros(200));
    }
    // t_rttvar_ = 2 (½ tick) no longer decays: 2 >> 2 = 0.
    assert_eq!(e.rto(), ms(3));
    assert!(e.backed_off_rto(0) >= 2 * cfg.clock_granularity);
}

#[test]
fn min_rtt_and_latest() {
    for p in Profile::ALL {
        let mut e = est(p);
        for r in [50, 30, 70] {
            e.on_sample(ms(r));
        }
        assert_eq!(
            (e.min_rtt(), e.latest()),
            (Some(ms(30)), Some(ms(70))),
            "{p:?}"
        );
    }
}

#[test]
fn rto_max_clamps() {
    for p in Profile::ALL {
        let cfg = TcpConfig::from_profile(p);
        let mut e = RttEstimator::new(&cfg);
        e.on_sample(Duration::from_secs(100));
        assert_eq!(e.rto(), cfg.rto_max, "{p:?}");
        e.on_sample(Duration::MAX);
        assert_eq!(e.rto(), cfg.rto_max, "{p:?}");
        assert_eq!(e.backed_off_rto(40), cfg.rto_max, "{p:?}");
    }
}

#[test]
fn backed_off_table() {
    let max = Duration::from_secs(120);
    assert_eq!(backed_off(ms(300), 0, max), ms(300));
    assert_eq!(backed_off(ms(300), 3, max), ms(2400));
    assert_eq!(backed_off(ms(300), 9, max), max);
    assert_eq!(backed_off(ms(300), u32::MAX, max), max);
    assert_eq!(backed_off(Duration::ZERO, u32::MAX, max), Duration::ZERO);
    assert_eq!(backed_off(Duration::MAX, 1, Duration::MAX), Duration::MAX);
}

fn profile() -> impl Strategy<Value = Profile> {
    prop::sample::select(Profile::ALL.to_vec())
}

fn sample() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0u64..2_000_000_000).prop_map(Duration::from_nanos),
        (0u64..200_000).prop_map(Duration::from_millis),
        Just(Duration::MAX),
    ]
}

proptest! {
    #[test]
    fn rto_within_model_bounds(p in profile(), fine in any::<bool>(),
                               samples in prop::collection::vec(sample(), 0..40),
                               rounds in prop::collection::vec(any::<bool>(), 40)) {
        let mut cfg = TcpConfig::from_profile(p);
        if fine { cfg.clock_granularity = ms(1); cfg.rto_min = ms(1); }
        let mut e = RttEstimator::new(&cfg);
        for (s, r) in samples.iter().zip(&rounds) {
            e.on_sample_in_round(*s, *r);
            let rto = e.rto();
            prop_assert!(rto >= cfg.rto_min && rto <= cfg.rto_max, "{rto:?}");
            prop_assert_eq!(rto.as_nanos() % cfg.clock_granularity.as_nanos(), 0);
            for n in [0, 1, 5, 31, 64, u32::MAX] {
                let b = e.backed_off_rto(n);
                prop_assert!(b >= rto.min(cfg.rto_max) && b <= cfg.rto_max);
            }
        }
    }

    #[test]
    fn constant_rtt_converges_monotonically(p in profile(), r in 1u64..2_000) {
        // After the first sample, a constant RTT never moves the RTO away from its limit:
        // the sequence of RTOs is monotone (non-increasing here, as mdev only decays).
        let mut e = est(p);
        e.on_sample(ms(r));
        let mut prev = e.rto();
        for _ in 0..300 {
            e.on_sample(ms(r));
            let rto = e.rto();
            prop_assert!(rto <= prev, "{p:?} r={r}: {rto:?} after {prev:?}");
            prev = rto;
        }
        prop_assert_eq!(e.srtt().map(|s| s.as_millis() as u64), Some(match p {
            Profile::Ns2 => ((r * 10 + 50) / 100).max(1) * 10, // int(tao/tick + 0.5) ticks
            _ => r,
        }));
    }

    #[test]
    fn backed_off_never_panics(rto_ns in any::<u64>(), secs in any::<u64>(), n in any::<u32>(),
                               max_ns in any::<u64>()) {
        let rto = Duration::new(secs, (rto_ns % 1_000_000_000) as u32);
        let max = Duration::from_nanos(max_ns);
        let b = backed_off(rto, n, max);
        prop_assert!(b <= max);
        if n < 64 {
            if let Some(exact) = rto.checked_mul(1u32.checked_shl(n.min(31)).unwrap_or(0).max(1))
                .filter(|_| n < 32) {
                prop_assert_eq!(b, exact.min(max));
            }
        }
        prop_assert!(b >= rto.min(max));
    }
}
