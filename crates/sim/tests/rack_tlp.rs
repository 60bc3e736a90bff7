//! RACK-TLP end to end in the simulator: the modern `linux` profile (CUBIC, IW10, RACK-TLP, initial
//! RTO 1 s) against `linux-2.6.22` (NewReno, dupthresh, RTO only) on Evensen's (2008) game-like
//! thin stream (120 B every 140 ms, 100 ms RTT, 1 % loss each way). With at most one or two
//! segments in flight, 2.6.22 repairs almost every loss by RTO (≈ RTT + 200 ms, doubling on
//! repeated loss); RACK (a later segment SACKed) and TLP (the tail) repair them sooner, so the 99th
//! percentile of application-layer latency and the number of RTOs both fall.
//!
//! With 140 ms between writes and a 100 ms RTT, RACK repairs a loss when the next write's SACK
//! arrives (≈ 240 ms after the lost send, delivered ≈ 290 ms after it), before the probe would
//! fire (2·SRTT + 200 ms, capped at the RTO ≈ 300 ms).

use crate::common;
use common::{latencies, pct};
use thinlab_sim::{run, Scenario};
use thinlab_tcp::{CcAlgorithm, Profile, TcpConfig};

const SEEDS: [u64; 3] = [1, 2, 7];

fn scenario(tcp: &str) -> Scenario {
    common::thin_stream("10min", tcp)
}

/// Pooled (p99, max, RTO events, TLP retransmissions, fast retransmissions).
fn measure(label: &str, tcp: &str) -> (f64, f64, u64, u64, u64) {
    let mut all = Vec::new();
    let (mut rtos, mut tlps, mut fast) = (0, 0, 0);
    for seed in SEEDS {
        let r = run(&scenario(tcp), seed);
        let v = latencies(&r);
        assert!(v.len() > 4000, "{label}: {} writes delivered", v.len());
        let p = &r.flows[0].records.packets;
        println!(
            "{label:<14} seed {seed:>2}  p99 {:>5.1} ms  max {:>6.1} ms  retrans rto/fast+rack/tlp {:>2}/{:>2}/{:>2}  rto events {:>2}  lost {}",
            pct(&v, 99.0),
            v.last().unwrap(),
            p.retrans_rto,
            p.retrans_fast + p.retrans_rack,
            p.retrans_tlp,
            p.rto_events,
            r.flows[0].dropped_loss
        );
        rtos += p.rto_events;
        tlps += p.retrans_tlp;
        fast += p.retrans_rack;
        all.extend(v);
    }
    all.sort_by(f64::total_cmp);
    let (p99, max) = (pct(&all, 99.0), *all.last().unwrap());
    println!("{label:<14} pooled   p99 {p99:>5.1} ms  max {max:>6.1} ms  rto events {rtos}  tlp {tlps}  fast {fast}");
    (p99, max, rtos, tlps, fast)
}

#[test]
fn linux_profile_rack_tlp_beats_2622_on_a_thin_stream() {
    let (old_p99, old_max, old_rtos, old_tlp, _) = measure(
        "linux-2.6.22",
        r#"profile = "linux-2.6.22", nodelay = true"#,
    );
    let (new_p99, new_max, new_rtos, new_tlp, new_fast) =
        measure("linux", r#"profile = "linux", nodelay = true"#);
    // Measured (seeds 1, 2, 7 pooled): 2.6.22 p99 354 ms, max 974 ms, 146 RTOs; linux p99
    // 290 ms, max 598 ms, 1 RTO (145 RACK fast retransmits, 3 TLP probes; the RTO repairs a
    // lost fast retransmission, which PRR's one-segment window leaves RACK nothing to detect). With one segment
    // in flight the next write's SACK (RTT + 140 ms after the loss) lets RACK mark the loss at
    // once; the probe (capped at the RTO) only acts when no later write is in flight.
    assert_eq!(old_tlp, 0);
    assert!(new_tlp > 0 && new_fast > 0, "TLP and RACK both act");
    assert!(
        new_p99 < old_p99 * 0.9,
        "p99 linux {new_p99:.1} ms vs 2.6.22 {old_p99:.1} ms"
    );
    assert!(
        new_max < old_max * 0.8,
        "max linux {new_max:.1} ms vs 2.6.22 {old_max:.1} ms"
    );
    assert!(
        new_rtos * 10 < old_rtos,
        "RTOs linux {new_rtos} vs 2.6.22 {old_rtos}"
    );
}

#[test]
fn linux_profile_keys() {
    let s = scenario(r#"profile = "linux""#);
    let c = &s.flows[0].tcp;
    assert_eq!(c, &TcpConfig::from_profile(Profile::Linux));
    assert!(c.mechanisms.tlp && c.mechanisms.rack && c.sack && c.timestamps);
    assert_eq!((c.cc, c.initial_window), (CcAlgorithm::Cubic, 10));
    assert_eq!(
        (c.rto_min.as_millis(), c.rto_initial.as_millis()),
        (200, 1000)
    );
    assert_eq!(Profile::from_name("linux"), Some(Profile::Linux));
    // a mechanisms list replaces the profile's set
    let s = scenario(r#"profile = "linux", mechanisms = ["linear-timeouts"]"#);
    let m = s.flows[0].tcp.mechanisms;
    assert!(m.linear_timeouts && !m.tlp && !m.rack);
    let s = scenario(r#"profile = "linux-2.6.22", mechanisms = ["tlp", "rack"]"#);
    let m = s.flows[0].tcp.mechanisms;
    assert!(m.tlp && m.rack);
}
