//! Redundant Data Bundling end to end in the simulator, on Evensen's (2008) game-like stream (120 B
//! every 140 ms, 100 ms RTT, 1 % loss each way, linux-2.6.22): with RDB a lost segment's bytes ride
//! in the next packet, so retransmissions fall to about zero and the 99th percentile of
//! application-layer latency falls to within one interval (140 ms) of the one-way delay (50 ms),
//! while plain TCP's is set by the RTO (~300 ms). Evensen (2008) Table 4.1: RDB's average payload
//! per packet at 1 % loss is 122 bytes.

use crate::common;
use common::{latencies, pct};
use thinlab_sim::{run, Scenario};

/// Pooled over these seeds (each run: 5 simulated minutes, ~2140 writes, ~20 losses each way).
const SEEDS: [u64; 3] = [1, 2, 7];

fn scenario(tcp_extra: &str) -> Scenario {
    common::thin_stream(
        "5min",
        &format!("profile = \"linux-2.6.22\", nodelay = true {tcp_extra}"),
    )
}

struct Summary {
    p99: f64,
    mean: f64,
    retrans: u64,
    losses: u64,
    bundles: u64,
    avg_payload: f64,
    redundant: u64,
}

fn measure(label: &str, tcp_extra: &str) -> Summary {
    let mut all = Vec::new();
    let (mut retrans, mut losses, mut bundles, mut redundant, mut bytes, mut packets) =
        (0, 0, 0, 0, 0, 0);
    for seed in SEEDS {
        let r = run(&scenario(tcp_extra), seed);
        let v = latencies(&r);
        assert!(v.len() > 2000, "{label}: {} writes delivered", v.len());
        let f = &r.flows[0];
        let p = &f.records.packets;
        println!(
            "{label:<12} seed {seed:>2}  mean {:>5.1} ms  p99 {:>5.1} ms  max {:>5.1} ms  retrans {:>2}  \
             lost {:>2}  bundles {:>4}  avg payload {:>5.1} B  redundant {:>6} B",
            v.iter().sum::<f64>() / v.len() as f64,
            pct(&v, 99.0),
            v.last().unwrap(),
            p.retransmissions(),
            f.dropped_loss,
            p.rdb_bundles,
            p.payload_bytes_sent as f64 / p.data_packets_sent as f64,
            p.redundant_bytes_sent,
        );
        retrans += p.retransmissions();
        losses += f.dropped_loss;
        bundles += p.rdb_bundles;
        redundant += p.redundant_bytes_sent;
        bytes += p.payload_bytes_sent;
        packets += p.data_packets_sent;
        all.extend(v);
    }
    all.sort_by(f64::total_cmp);
    let s = Summary {
        p99: pct(&all, 99.0),
        mean: all.iter().sum::<f64>() / all.len() as f64,
        retrans,
        losses,
        bundles,
        avg_payload: bytes as f64 / packets as f64,
        redundant,
    };
    println!(
        "{label:<12} pooled   mean {:>5.1} ms  p99 {:>5.1} ms  retrans {}  lost {}  bundles {}  \
         avg payload {:.1} B  redundant {} B",
        s.mean, s.p99, s.retrans, s.losses, s.bundles, s.avg_payload, s.redundant
    );
    s
}

#[test]
fn rdb_removes_retransmissions_and_the_rto_tail() {
    let plain = measure("plain", "");
    let seed = measure("rdb seed", r#", mechanisms = ["rdb"]"#);
    let patch = measure(
        "rdb patch",
        r#", mechanisms = ["rdb"], rdb_variant = "patch""#,
    );
    assert!(plain.losses > 60, "plain: {} losses", plain.losses);
    assert!(plain.retrans > 30, "plain retransmits: {}", plain.retrans);
    assert_eq!(plain.bundles, 0);
    assert!(
        plain.p99 > 300.0,
        "plain p99 {:.1} ms is set by the RTO",
        plain.p99
    );
    for (name, r) in [("seed", &seed), ("patch", &patch)] {
        assert!(r.losses > 60, "{name}: {} losses", r.losses);
        // about zero: a lost packet's bytes ride in the next one
        assert!(
            r.retrans * 5 <= plain.retrans,
            "{name}: {} retransmissions vs plain {}",
            r.retrans,
            plain.retrans
        );
        assert!(r.p99 <= 50.0 + 140.0 + 10.0, "{name}: p99 {:.1} ms", r.p99);
        assert!(
            r.p99 < plain.p99 * 0.7,
            "{name}: p99 {:.1} vs plain {:.1}",
            r.p99,
            plain.p99
        );
        assert!(r.mean < plain.mean, "{name}: mean");
        assert!(r.bundles > 0 && r.redundant > 0, "{name}: bundles");
        // Evensen (2008) Table 4.1: 122 bytes at 1 % loss
        assert!(
            (120.5..=126.0).contains(&r.avg_payload),
            "{name}: avg payload {:.1} B",
            r.avg_payload
        );
    }
}
