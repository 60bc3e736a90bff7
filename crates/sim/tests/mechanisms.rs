//! Thin-stream mechanisms end to end in the simulator: the scenario keys reach the endpoint
//! (`tcp.mechanisms`, `tcp.thin_detection`), and on Evensen's (2008) game-like stream (120 B every
//! 140 ms, 100 ms RTT, 1 % loss each way, linux-2.6.22) linear timeouts shrink the worst
//! application-layer latency and thin dupACK + linear timeouts shrink the 99th percentile.

use crate::common;
use common::{latencies, pct};
use thinlab_sim::{run, RunResult, Scenario};
use thinlab_tcp::ThinDetection;

/// Pooled over these seeds (each run: 10 simulated minutes, ~4285 writes, ~90 losses).
const SEEDS: [u64; 3] = [1, 2, 7];

fn scenario(mechanisms: &str, extra: &str) -> Scenario {
    common::thin_stream(
        "10min",
        &format!("profile = \"linux-2.6.22\", nodelay = true, mechanisms = [{mechanisms}] {extra}"),
    )
}

struct Summary {
    p99: f64,
    max: f64,
    mean: f64,
}

fn measure(label: &str, mechanisms: &str) -> (Summary, Vec<RunResult>) {
    let mut all = Vec::new();
    let mut runs = Vec::new();
    for seed in SEEDS {
        let r = run(&scenario(mechanisms, ""), seed);
        let v = latencies(&r);
        assert!(v.len() > 4000, "{label}: {} writes delivered", v.len());
        let f = &r.flows[0];
        let p = &f.records.packets;
        println!(
            "{label:<29} seed {seed:>2}  mean {:>5.1} ms  p99 {:>5.1} ms  p99.9 {:>5.1} ms  max {:>5.1} ms  \
             retrans rto/fast/early {:>2}/{:>2}/{:>2}  rto events {:>2}  lost {}",
            v.iter().sum::<f64>() / v.len() as f64,
            pct(&v, 99.0),
            pct(&v, 99.9),
            v.last().unwrap(),
            p.retrans_rto,
            p.retrans_fast,
            p.retrans_early,
            p.rto_events,
            f.dropped_loss
        );
        all.extend(v);
        runs.push(r);
    }
    all.sort_by(f64::total_cmp);
    let s = Summary {
        p99: pct(&all, 99.0),
        max: *all.last().unwrap(),
        mean: all.iter().sum::<f64>() / all.len() as f64,
    };
    println!(
        "{label:<29} pooled   mean {:>5.1} ms  p99 {:>5.1} ms  max {:>5.1} ms",
        s.mean, s.p99, s.max
    );
    (s, runs)
}

#[test]
fn linear_timeouts_and_thin_dupack_cut_the_tail() {
    let (plain, rp) = measure("plain", "");
    let (lt, rl) = measure("linear-timeouts", "\"linear-timeouts\"");
    let (both, rb) = measure(
        "thin-dupack+linear-timeouts",
        "\"thin-dupack\", \"linear-timeouts\"",
    );
    assert!(rp.iter().all(|r| r.flows[0].dropped_loss > 50));
    assert!(
        lt.max < plain.max * 0.8,
        "LT max {:.1} vs plain {:.1}",
        lt.max,
        plain.max
    );
    assert!(
        both.p99 < plain.p99 * 0.9,
        "mFR+LT p99 {:.1} vs plain {:.1}",
        both.p99,
        plain.p99
    );
    assert!(both.mean <= plain.mean);
    let count = |rs: &[RunResult], f: fn(&thinlab_trace::PacketCounters) -> u64| -> u64 {
        rs.iter().map(|r| f(&r.flows[0].records.packets)).sum()
    };
    // thin dupACK turns most RTOs into fast retransmits
    assert_eq!(count(&rp, |p| p.retrans_fast), 0);
    assert!(count(&rb, |p| p.retrans_fast) > 3 * count(&rb, |p| p.rto_events));
    assert!(count(&rb, |p| p.rto_events) * 4 < count(&rp, |p| p.rto_events));
    let _ = rl;
}

#[test]
fn scenario_keys_reach_the_endpoint() {
    let s = scenario(
        "\"linear-timeouts\", \"thin-dupack\", \"early-retransmit\", \"er-threshold\"",
        ", thin_detection = \"dpifl\"",
    );
    let c = &s.flows[0].tcp;
    assert!(c.mechanisms.linear_timeouts && c.mechanisms.thin_dupack);
    assert!(c.mechanisms.early_retransmit && c.mechanisms.er_threshold);
    assert!(!c.mechanisms.rdb && !c.mechanisms.tlp && !c.mechanisms.rack);
    let t = &scenario("\"tlp\", \"rack\"", "").flows[0].tcp;
    assert!(t.mechanisms.tlp && t.mechanisms.rack);
    assert_eq!(c.thin_detection, ThinDetection::Dpifl);
    assert_eq!(
        scenario("", ", thin_detection = \"pif4\"").flows[0]
            .tcp
            .thin_detection,
        ThinDetection::Pif4
    );
    assert_eq!(
        scenario("", "").flows[0].tcp.thin_detection,
        ThinDetection::Pif4
    );
    let r = scenario(
        "\"rdb\"",
        ", rdb_variant = \"patch\", rdb_max_bytes = 240, rdb_max_packets = 3",
    );
    let rc = &r.flows[0].tcp;
    assert!(rc.mechanisms.rdb);
    assert_eq!(
        (rc.rdb_variant, rc.rdb_max_bytes, rc.rdb_max_packets),
        (thinlab_tcp::RdbVariant::Patch, 240, 3)
    );
    let d = &scenario("\"rdb\"", "").flows[0].tcp;
    assert_eq!(
        (d.rdb_variant, d.rdb_max_bytes, d.rdb_max_packets),
        (thinlab_tcp::RdbVariant::Seed, 0, 1)
    );
}

#[test]
fn early_mechanisms_run_and_are_attributed() {
    let (_, r) = measure(
        "early-retransmit+er-threshold",
        "\"early-retransmit\", \"er-threshold\"",
    );
    for r in &r {
        let p = &r.flows[0].records.packets;
        assert!(
            p.retrans_early > 0 && p.retrans_fast == 0,
            "ER / F-RTO retransmissions are Early"
        );
        assert!(p.rto_events * 4 < p.retrans_early);
    }
}
