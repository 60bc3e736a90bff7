//! Regression: no retransmission storm on a drop-tail bottleneck.
//!
//! A bulk flow with the `linux` profile (CUBIC + RACK-TLP) once sent 29 858 data packets for
//! 2 897 segments delivered over a 1 Mbit/s, 20-packet bottleneck: each SACK recovery computed
//! ssthresh from a flight size that counted the SACKed segments of the previous episode, so
//! every congestion event *raised* the window (to 454 segments on a path that holds 24).
//! Linux, FreeBSD and ns-2 reduce from cwnd (`TcpConfig::reduction_base`). A sane TCP sends
//! little more than the segments it needs, and the queue drops a few packets per
//! congestion epoch, not most of what is offered.

use thinlab_sim::{run, Scenario};

struct Outcome {
    data_packets: u64,
    segments_delivered: u64,
    queue_drops: u64,
    completed: bool,
}

fn bulk(bandwidth: &str, queue: u32, bytes: u64, tcp: &str) -> Outcome {
    let toml = format!(
        r#"
name = "storm"
duration = "10s"
[network]
rtt = "50ms"
bandwidth = "{bandwidth}"
queue_packets = {queue}
[[flow]]
name = "bulk"
app = {{ kind = "bulk", bytes = {bytes} }}
tcp = {tcp}
"#
    );
    let s = Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&s, 1);
    let f = &r.flows[0];
    let mss = 1448;
    Outcome {
        data_packets: f.sender_stats.data_segments_sent,
        segments_delivered: f.records.bytes_delivered.div_ceil(mss),
        queue_drops: r.drops.queue_forward,
        completed: f.completed,
    }
}

/// Packets sent at most 10 % above the segments needed, every retransmission but 2 % of the
/// packets explained by a queue drop, and at most 5 % of the packets dropped.
fn assert_sane(what: &str, o: &Outcome) {
    assert!(o.completed, "{what}: transfer did not complete");
    assert!(
        o.data_packets as f64 <= 1.1 * o.segments_delivered as f64,
        "{what}: {} data packets for {} segments delivered",
        o.data_packets,
        o.segments_delivered
    );
    let spurious = o.data_packets as f64 - (o.segments_delivered + o.queue_drops) as f64;
    assert!(
        spurious <= 0.02 * o.data_packets as f64,
        "{what}: {} data packets for {} segments and {} drops",
        o.data_packets,
        o.segments_delivered,
        o.queue_drops
    );
    assert!(
        o.queue_drops as f64 <= 0.05 * o.data_packets as f64,
        "{what}: {} queue drops of {} packets",
        o.queue_drops,
        o.data_packets
    );
}

#[test]
fn linux_profile_bulk_does_not_flood_a_small_drop_tail_queue() {
    let o = bulk("1Mbit", 20, 4_000_000, r#"{ profile = "linux" }"#);
    assert_sane("linux, 1 Mbit/s, 20 packets", &o);
}

#[test]
fn rack_alone_and_newreno_do_not_flood_either() {
    for tcp in [
        r#"{ profile = "linux", mechanisms = ["rack"] }"#,
        r#"{ profile = "linux", mechanisms = ["tlp"] }"#,
        r#"{ profile = "linux", cc = "newreno" }"#,
        r#"{ profile = "linux-2.6.22", cc = "cubic" }"#,
    ] {
        assert_sane(tcp, &bulk("1Mbit", 20, 4_000_000, tcp));
    }
}

#[test]
fn linux_profile_bulk_with_one_bdp_queue_at_10_mbit() {
    // 10 Mbit/s × 50 ms = 43 full-sized packets
    let o = bulk("10Mbit", 43, 12_000_000, r#"{ profile = "linux" }"#);
    assert_sane("linux, 10 Mbit/s, one-BDP queue", &o);
}
