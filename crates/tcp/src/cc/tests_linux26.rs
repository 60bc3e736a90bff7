//! Exact-number tests of Linux 2.6's BIC, Westwood+ and Vegas (the variants Petlund & Evensen
//! compared for thin streams).

use super::tests::TestHooks;
use super::*;
use crate::time::Instant;

const MS: Duration = Duration::from_millis(1);

fn at(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

#[test]
fn bic_keeps_80_percent_and_converges_fast() {
    let mut c = Bic::new(3);
    c.enter_recovery(at(0), 100);
    assert_eq!((c.cwnd(), c.ssthresh(), c.last_max_cwnd()), (79, 79, 100));
    c.on_exit_recovery(at(1));
    // a second loss below the last one remembers a lower target (fast convergence)
    c.enter_recovery(at(2), 80);
    assert_eq!((c.ssthresh(), c.last_max_cwnd()), (63, 71)); // 80 × 1843/2048
                                                             // small windows are Reno's
    let mut small = Bic::new(3);
    small.enter_recovery(at(0), 10);
    assert_eq!(small.ssthresh(), 5);
    // a timeout computes ssthresh, then restarts the search
    c.rto(at(3), 60);
    assert_eq!((c.cwnd(), c.ssthresh(), c.last_max_cwnd()), (1, 47, 0));
}

#[test]
fn bic_grows_back_to_the_last_loss_faster_than_reno() {
    let mut bic = Bic::new(3);
    let mut reno = Reno::new(3);
    for c in [&mut bic as &mut dyn CongestionControl, &mut reno] {
        c.on_congestion_event(at(0), CongestionEvent::FastRecovery, 200);
        c.on_exit_recovery(at(1));
    }
    let (mut b_at, mut r_at) = (None, None);
    for round in 1..400u64 {
        for (c, hit) in [
            (&mut bic as &mut dyn CongestionControl, &mut b_at),
            (&mut reno, &mut r_at),
        ] {
            let w = c.cwnd();
            for i in 0..w {
                c.on_ack(at(round * 100 + i as u64 / 1000), 1, true, Some(100 * MS));
            }
            if c.cwnd() >= 190 && hit.is_none() {
                *hit = Some(round);
            }
        }
    }
    let (b, r) = (b_at.unwrap(), r_at.unwrap_or(400));
    assert!(b * 3 < r, "BIC {b} rounds, Reno {r}");
}

#[test]
fn westwood_sets_the_window_from_bandwidth_times_min_rtt() {
    let mut c = Westwood::new(3);
    // 100 segments per second for 3 s, RTT 100 ms (min 80 ms)
    for i in 0..300u64 {
        let rtt = if i == 10 { 80 * MS } else { 100 * MS };
        c.on_ack(at(i * 10), 1, false, Some(rtt));
    }
    let bw = c.bandwidth();
    assert!((95.0..=105.0).contains(&bw), "bandwidth {bw}");
    let w = c.bw_rttmin().unwrap(); // ~100 segments/s × 0.08 s
    assert!((7..=8).contains(&w), "{w}");
    c.enter_recovery(at(3000), 40);
    assert_eq!((c.cwnd(), c.ssthresh()), (20, 20)); // Reno's, until the reduction completes
    c.on_exit_recovery(at(3100));
    assert_eq!((c.cwnd(), c.ssthresh()), (w, w));
    c.rto(at(3200), 7);
    assert_eq!((c.cwnd(), c.ssthresh()), (1, w));
}

#[test]
fn westwood_without_an_estimate_is_reno() {
    let mut c = Westwood::new(3);
    c.enter_recovery(at(0), 40);
    c.on_exit_recovery(at(1));
    assert_eq!((c.cwnd(), c.ssthresh()), (20, 20));
}

/// One round of `cwnd` ACKs with RTT `rtt`, starting at `t0` ms.
fn vegas_round(c: &mut Vegas, t0: u64, rtt: Duration) {
    let w = c.cwnd();
    for i in 0..w {
        c.on_ack(at(t0 + i as u64), 1, true, Some(rtt));
    }
}

#[test]
fn vegas_holds_between_alpha_and_beta_segments_queued() {
    let mut c = Vegas::new(3);
    c.enter_recovery(at(0), 40); // ssthresh 20: congestion avoidance from cwnd 20
    c.on_exit_recovery(at(1));
    c.on_ack(at(2), 1, true, Some(100 * MS)); // resumes Vegas, base RTT 100 ms
    let mut t = 10;
    // no queueing: one more segment per round
    for _ in 0..5 {
        vegas_round(&mut c, t, 100 * MS);
        t += 101;
    }
    let grown = c.cwnd();
    assert!((23..=25).contains(&grown), "cwnd {grown}");
    // RTT 1.5 × base: diff = cwnd / 2 > beta: one less per round
    for _ in 0..3 {
        vegas_round(&mut c, t, 150 * MS);
        t += 151;
    }
    assert!(c.cwnd() < grown, "{} not below {grown}", c.cwnd());
    // losses are Reno's
    c.rto(at(t), 20);
    assert_eq!((c.cwnd(), c.ssthresh()), (1, 10));
}

#[test]
fn the_variants_are_configurable_by_name() {
    use crate::config::{CcAlgorithm, Profile, TcpConfig};
    for name in ["bic", "westwood", "vegas"] {
        let alg = CcAlgorithm::from_name(name).unwrap();
        let mut cfg = TcpConfig::from_profile(Profile::Linux2622);
        cfg.cc = alg;
        assert_eq!(Cc::new(&cfg).algorithm(), alg);
    }
}
