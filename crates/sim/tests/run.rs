//! End-to-end runs: physics (exact latency, link filling), determinism, seeding, termination.

use std::time::Duration;
use thinlab_sim::link::{serialisation_ns, tcp_header_len, FRAMING_BYTES};
use thinlab_sim::{run, run_keeping_writes, run_observed, RunResult, Scenario};

fn scenario(s: &str) -> Scenario {
    Scenario::from_toml_str(s).unwrap_or_else(|e| panic!("{e}"))
}

/// Frame bytes of a data segment with `payload` bytes and the timestamp option.
fn data_frame(payload: u32) -> u32 {
    let opts = thinlab_tcp::TcpOptions {
        timestamps: Some((0, 0)),
        ..Default::default()
    };
    FRAMING_BYTES + tcp_header_len(&opts) + payload
}

fn app_latencies(r: &RunResult, flow: usize) -> Vec<u64> {
    r.flows[flow]
        .records
        .writes
        .iter()
        .map(|w| (w.app.unwrap() - w.write_time).as_nanos() as u64)
        .collect()
}

#[test]
fn lossless_thin_stream_latency_is_one_way_delay_plus_serialisation() {
    let s = scenario(
        r#"
name = "thin"
duration = "30s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[[flow]]
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
"#,
    );
    let r = run_keeping_writes(&s, 1);
    assert!(!r.drain_bound_hit);
    let f = &r.flows[0];
    assert!(f.completed);
    // The source starts when the handshake completes (one RTT): 100 ms, 240 ms, …, 29.92 s.
    assert_eq!(f.records.writes.len(), 214);
    let first = f.records.writes[0].write_time.as_nanos();
    assert!(
        (100_000_000..100_200_000).contains(&first),
        "first write at {first} ns"
    );
    assert_eq!(f.records.bytes_delivered, 214 * 120);
    let expect = 50_000_000 + serialisation_ns(data_frame(120), Some(10_000_000));
    let lat = app_latencies(&r, 0);
    assert!(
        lat.iter().all(|&l| l == expect),
        "expected {expect}, got {:?}",
        &lat[..5]
    );
    // Active time: connect (0) to the last delivery, 50 ms after the last write.
    let last = f.records.last_delivery.unwrap().as_nanos();
    assert_eq!(f.duration, Duration::from_nanos(last));
    assert!((29_970_000_000..30_000_000_000).contains(&last), "{last}");
    assert_eq!(r.drops.total(), 0);
}

#[test]
fn access_link_adds_its_delay_and_serialisation() {
    let s = scenario(
        r#"
name = "access"
duration = "5s"
[network]
rtt = "60ms"
bandwidth = "100Mbit"
[[flow]]
rtt = "20ms"
access_bandwidth = "1Mbit"
app = { kind = "fixed", payload_bytes = 200, interval = "200ms" }
"#,
    );
    let r = run(&s, 3);
    let frame = data_frame(200);
    let expect = 10_000_000
        + serialisation_ns(frame, Some(1_000_000))
        + 30_000_000
        + serialisation_ns(frame, Some(100_000_000));
    let lat = app_latencies(&r, 0);
    assert!(
        lat[1..].iter().all(|&l| l == expect),
        "expected {expect}, got {:?}",
        &lat[..5]
    );
    assert_eq!(r.links.len(), 4);
    assert_eq!(r.links[2].name, "flow0.access-up");
}

const LOSSY: &str = r#"
name = "lossy"
duration = "20s"
[network]
rtt = "100ms"
bandwidth = "5Mbit"
queue_packets = 50
jitter = "3ms"
[network.loss]
model = "bernoulli"
rate = 0.05
[[flow]]
app = { kind = "exponential", payload_bytes = 120, interval = "50ms" }
[[flow]]
start = "1s"
app = { kind = "bulk", bytes = "300KB" }
[[flow]]
direction = "reverse"
app = { kind = "cbr", rate = "300kbit", payload_bytes = 1000 }
"#;

#[test]
fn same_seed_same_result() {
    let s = scenario(LOSSY);
    let a = run(&s, 42);
    let b = run(&s, 42);
    assert_eq!(a, b);
    assert!(a.drops.loss_forward > 0 && a.drops.loss_reverse > 0);
    assert!(a.flows.iter().all(|f| f.records.bytes_delivered > 0));
}

#[test]
fn different_seed_different_losses() {
    let s = scenario(LOSSY);
    let a = run(&s, 1);
    let b = run(&s, 2);
    assert_ne!(a.flows[0].records, b.flows[0].records);
    assert_ne!(
        a.flows.iter().map(|f| f.dropped_loss).collect::<Vec<_>>(),
        b.flows.iter().map(|f| f.dropped_loss).collect::<Vec<_>>()
    );
}

#[test]
fn adding_a_flow_does_not_change_another_flows_losses() {
    let one = r#"
name = "seeding"
duration = "30s"
[network]
rtt = "80ms"
bandwidth = "100Mbit"
[network.loss]
model = "gilbert-elliott"
p = 0.05
r = 0.5
loss_bad = 0.8
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = "200ms" }
"#;
    // The second flow writes 100 ms out of phase: at 100 Mbit/s the flows never share a queue.
    let two = format!("{one}\n[[flow]]\nstart = \"100ms\"\napp = {{ kind = \"fixed\", payload_bytes = 100, interval = \"200ms\" }}\n");
    let a = run(&scenario(one), 9);
    let b = run(&scenario(&two), 9);
    assert!(a.flows[0].dropped_loss > 0);
    let (x, y) = (&a.flows[0], &b.flows[0]);
    assert_eq!(x.dropped_loss, y.dropped_loss);
    assert_eq!(x.records.packets, y.records.packets);
    assert_eq!(x.sender_stats, y.sender_stats);
    assert_eq!(x.receiver_stats, y.receiver_stats);
    assert!(x.records.writes == y.records.writes, "write records differ");
    assert_eq!(
        (x.duration, x.dropped_queue, x.completed),
        (y.duration, y.dropped_queue, y.completed)
    );
    assert!(x == y);
}

#[test]
fn positions_drop_exactly_those_packets() {
    let s = scenario(
        r#"
name = "positions"
duration = "3s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.forward.loss]
model = "positions"
positions = [4, 7]
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = "250ms" }
tcp = { profile = "rfc" }
"#,
    );
    let r = run(&s, 1);
    assert_eq!(r.drops.loss_forward, 2);
    assert_eq!(r.drops.loss_reverse, 0);
    let f = &r.flows[0];
    assert!(f.completed);
    assert!(f.records.packets.retransmissions() >= 1);
    // Writes hit by the drops wait at least the RTO (1 s in the rfc profile) more.
    let lat = app_latencies(&r, 0);
    assert!(
        lat.iter().filter(|&&l| l > 1_000_000_000).count() >= 1,
        "{lat:?}"
    );
}

#[test]
fn bulk_flow_fills_the_bottleneck() {
    let s = scenario(
        r#"
name = "bulk"
duration = "20s"
[network]
rtt = "50ms"
bandwidth = "10Mbit"
queue_packets = 100
[[flow]]
app = { kind = "bulk" }
"#,
    );
    let r = run(&s, 1);
    let f = &r.flows[0];
    let goodput = f.records.bytes_delivered as f64 * 8.0 / f.duration.as_secs_f64();
    assert!(
        goodput >= 0.9 * 10e6,
        "goodput {goodput} {:?} {:?} {:?}",
        f.sender_stats,
        r.links,
        f.duration
    );
    // Slow start may overshoot the queue once; there is no random loss.
    assert_eq!(r.drops.loss_forward + r.drops.loss_reverse, 0);
    assert!(f.completed);
}

#[test]
fn small_queue_overflows_and_data_still_arrives() {
    let s = scenario(
        r#"
name = "overflow"
duration = "10s"
[network]
rtt = "50ms"
bandwidth = "5Mbit"
queue_packets = 5
[[flow]]
app = { kind = "bulk", bytes = "2MB" }
"#,
    );
    let r = run(&s, 1);
    let f = &r.flows[0];
    assert!(r.drops.queue_forward > 0);
    assert_eq!(
        f.dropped_queue,
        r.drops.queue_forward + r.drops.queue_reverse
    );
    assert!(f.completed, "{:?}", f.sender_stats);
    assert_eq!(f.records.bytes_delivered, 2_000_000);
    assert!(f.records.finite);
}

#[test]
fn transfer_completes_and_ends_the_run_early() {
    let s = scenario(
        r#"
name = "transfer"
duration = "60s"
[network]
rtt = "40ms"
bandwidth = "20Mbit"
[[flow]]
app = { kind = "transfer", writes = 40, write_bytes = 2500 }
tcp = { profile = "freebsd-6" }
"#,
    );
    let r = run_keeping_writes(&s, 1);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.records.writes.len(), 40);
    assert!(f
        .records
        .writes
        .iter()
        .all(|w| w.write_time == f.records.writes[0].write_time && w.app.is_some()));
    // The server writes once the handshake is complete: one RTT plus serialisation.
    let first = f.records.writes[0].write_time.as_nanos();
    assert!(
        (40_000_000..40_200_000).contains(&first),
        "first write at {first} ns"
    );
    assert_eq!(f.records.bytes_delivered, 100_000);
    assert!(r.end_time.as_secs_f64() < 5.0, "{}", r.end_time);
    assert_eq!(
        f.duration,
        f.records.last_delivery.unwrap() - thinlab_tcp::Instant::ZERO
    );
}

#[test]
fn reverse_flow_carries_data_server_to_client() {
    let s = scenario(
        r#"
name = "reverse"
duration = "5s"
[network]
rtt = "30ms"
bandwidth = "10Mbit"
[[flow]]
direction = "reverse"
app = { kind = "fixed", payload_bytes = 300, interval = "100ms" }
"#,
    );
    let r = run(&s, 1);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.records.bytes_delivered, 50 * 300);
    assert!(r.links[1].stats.carried_bytes > r.links[0].stats.carried_bytes);
}

#[test]
fn jitter_never_reorders_arrivals() {
    let s = scenario(
        r#"
name = "jitter"
duration = "10s"
[network]
rtt = "40ms"
bandwidth = "10Mbit"
jitter = "30ms"
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = "5ms" }
"#,
    );
    let r = run(&s, 5);
    let w = &r.flows[0].records.writes;
    let arrivals: Vec<u64> = w.iter().map(|w| w.transport.unwrap().as_nanos()).collect();
    assert!(arrivals.windows(2).all(|p| p[0] <= p[1]));
    let lat = app_latencies(&r, 0);
    assert!(
        lat.iter().max().unwrap() - lat.iter().min().unwrap() > 5_000_000,
        "jitter should vary latency"
    );
    assert_eq!(r.flows[0].sender_stats.retransmissions_fast, 0);
}

#[test]
fn dead_path_terminates() {
    let s = scenario(
        r#"
name = "dead"
duration = "5s"
[network]
rtt = "10ms"
bandwidth = "10Mbit"
[network.loss]
model = "bernoulli"
rate = 1.0
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
tcp = { profile = "freebsd-6" }
"#,
    );
    let r = run(&s, 1);
    let f = &r.flows[0];
    assert!(!f.completed);
    assert_eq!(f.records.bytes_delivered, 0);
    assert!(r.end_time.as_secs_f64() <= 5.0 + thinlab_sim::drain_bound(&s).as_secs_f64());
}

#[test]
fn progress_at_most_once_per_simulated_second() {
    let s = scenario(
        r#"
name = "progress"
duration = "10s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
"#,
    );
    let mut calls = Vec::new();
    let r = run_observed(&s, 1, &mut |t| calls.push(t));
    assert!(!calls.is_empty() && calls.len() <= 11, "{calls:?}");
    assert!(calls.windows(2).all(|p| p[1].as_secs() > p[0].as_secs()));
    assert!(calls.last().unwrap().as_nanos() <= r.end_time.as_nanos() as u128);
}

#[test]
fn shared_bottleneck_cbr_and_bulk() {
    let mut toml = String::from(
        r#"
name = "mix"
duration = "10s"
[network]
rtt = "60ms"
bandwidth = "25Mbit"
queue_packets = 100
"#,
    );
    for i in 0..4 {
        toml += &format!("[[flow]]\nstart = \"{}ms\"\napp = {{ kind = \"cbr\", rate = \"300kbit\", payload_bytes = 1000 }}\ntcp = {{ profile = \"ns2\" }}\n", i * 10);
        toml += &format!("[[flow]]\nstart = \"{}ms\"\napp = {{ kind = \"bulk\" }}\ntcp = {{ profile = \"ns2\" }}\n", i * 13);
    }
    let r = run(&scenario(&toml), 1);
    let total: u64 = r.flows.iter().map(|f| f.records.bytes_delivered).sum();
    let rate = total as f64 * 8.0 / 10.0;
    assert!(rate > 0.8 * 25e6, "aggregate goodput {rate}");
    for f in r.flows.iter().step_by(2) {
        let g = f.records.bytes_delivered as f64 * 8.0 / f.duration.as_secs_f64();
        assert!(g > 0.8 * 300e3, "cbr goodput {g}");
    }
}
