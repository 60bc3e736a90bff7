//! `rdb_repaired_losses`: a lost packet whose data a later RDB bundle delivered, without a
//! retransmission, counts once; nothing counts without RDB.

use thinlab_sim::{run, Scenario};
use thinlab_trace::flow_metrics;

/// 100 B every 50 ms over a 100 ms RTT path: each write is bundled with the previous,
/// still unacknowledged one. The 20th packet entering the forward bottleneck is lost.
fn run_with(mechanisms: &str) -> (Option<u64>, u64, u64) {
    let s = Scenario::from_toml_str(&format!(
        r#"
name = "rdb-repair"
duration = "10s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.forward.loss]
model = "positions"
positions = [20]
[[flow]]
name = "thin"
app = {{ kind = "fixed", payload_bytes = 100, interval = "50ms" }}
tcp = {{ profile = "linux", nodelay = true, mechanisms = {mechanisms} }}
"#
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let r = run(&s, 1);
    let f = &r.flows[0];
    let m = flow_metrics(&f.records, f.duration);
    (m.rdb_repaired_losses, m.retransmissions, m.rdb_bundles)
}

#[test]
fn a_bundle_that_delivers_a_lost_packet_counts_once() {
    let (repaired, retransmissions, bundles) = run_with(r#"["rdb"]"#);
    assert!(bundles > 100, "{bundles} bundles");
    assert_eq!(repaired, Some(1), "retransmissions {retransmissions}");
    let (repaired, retransmissions, bundles) = run_with("[]");
    assert_eq!(bundles, 0);
    assert_eq!(repaired, Some(0));
    assert!(
        retransmissions >= 1,
        "without RDB the loss is retransmitted"
    );
}
