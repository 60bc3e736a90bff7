//! Simulator benchmarks (`cargo bench -p thinlab-sim`):
//! - `thin_stream_30min`: 120 B every 140 ms for 30 simulated minutes, 100 ms RTT,
//!   100 Mbit/s, 0.5 % loss each way (bench/thinlab/thin_stream.toml);
//! - `dumbbell_48_flows_100s`: 24 CBR (300 kbit/s, 1000 B) + 24 bulk flows over a 25 Mbit/s,
//!   50 ms bottleneck with 10 Mbit/s access links, 100 simulated seconds
//!   (bench/thinlab/dumbbell.toml);
//! - `per_packet`: one bulk flow for 1 simulated second, reported per event processed;
//! - `mechanisms/{thin,bulk}_{off,idle}`: is the per-packet path slower with mechanisms off?
//!   The same loss-free workloads (the thin stream for 30 minutes; the bulk flow of
//!   `per_packet`) with every mechanism off (`mechanisms = []`) and with every mechanism on
//!   but never triggering (no loss: nothing to retransmit, probe or bundle; the setup asserts
//!   that no retransmission, probe or bundle happened). Every hook of a mechanism that is
//!   off returns at its first check of `cfg.mechanisms`, so the off path does a subset of
//!   the idle path's work: idle ≈ off bounds the cost of the mechanisms' code on the path
//!   (docs/performance/thin-stream.md reports the ratios of one run). Both runs use SACK, which TLP
//!   and RACK need, so the comparison changes nothing but the mechanism list. `bulk_idle_<name>`
//!   turns on one mechanism at a time, to attribute the difference.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use thinlab_sim::{run, Scenario};

fn thin_stream() -> Scenario {
    Scenario::from_toml_str(
        r#"
name = "bench-thin-stream"
duration = "30min"
[network]
rtt = "100ms"
bandwidth = "100Mbit"
queue_packets = 1000
[network.loss]
model = "bernoulli"
rate = 0.005
[[flow]]
name = "thin"
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
tcp = { profile = "linux-2.6.22", nodelay = true, rto_min = "200ms" }
"#,
    )
    .expect("thin-stream scenario")
}

fn dumbbell() -> Scenario {
    let mut s = String::from(
        r#"
name = "bench-dumbbell"
duration = "100s"
[network]
rtt = "50ms"
bandwidth = "25Mbit"
queue_packets = 156
"#,
    );
    let tcp = r#"tcp = { profile = "linux-2.6.22", cc = "newreno", mss = 1000, sack = true, nodelay = true, rto_min = "200ms" }"#;
    for i in 0..24 {
        s += &format!(
            "[[flow]]\nname = \"cbr{i}\"\nstart = \"{}ms\"\naccess_bandwidth = \"10Mbit\"\napp = {{ kind = \"cbr\", rate = \"300kbit\", payload_bytes = 1000 }}\n{tcp}\n",
            i * 10
        );
    }
    for i in 0..24 {
        s += &format!(
            "[[flow]]\nname = \"bulk{i}\"\nstart = \"{}ms\"\naccess_bandwidth = \"10Mbit\"\napp = {{ kind = \"bulk\" }}\n{tcp}\n",
            240 + i * 10
        );
    }
    Scenario::from_toml_str(&s).expect("dumbbell scenario")
}

fn per_packet() -> Scenario {
    Scenario::from_toml_str(
        r#"
name = "bench-per-packet"
duration = "1s"
[network]
rtt = "20ms"
bandwidth = "100Mbit"
queue_packets = 200
[[flow]]
app = { kind = "bulk" }
"#,
    )
    .expect("per-packet scenario")
}

/// Every mechanism of the registry, as a scenario list.
fn all_mechanisms() -> String {
    format!("[{}]", thinlab_tcp::Mechanism::names())
}

/// The loss-free workloads of the `mechanisms` group, with `mechanisms` as the list.
fn mechanisms_workload(thin: bool, mechanisms: &str) -> Scenario {
    let (duration, rtt, app) = if thin {
        (
            "30min",
            "100ms",
            r#"{ kind = "fixed", payload_bytes = 120, interval = "140ms" }"#,
        )
    } else {
        ("1s", "20ms", r#"{ kind = "bulk" }"#)
    };
    Scenario::from_toml_str(&format!(
        r#"
name = "bench-mechanisms"
duration = "{duration}"
[network]
rtt = "{rtt}"
bandwidth = "100Mbit"
queue_packets = 200
[[flow]]
app = {app}
tcp = {{ profile = "linux-2.6.22", nodelay = true, sack = true, mechanisms = {mechanisms} }}
"#
    ))
    .expect("mechanisms scenario")
}

/// CPU time this thread has run, in ns (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`): unlike the
/// wall clock it does not count the time other processes hold the CPU, which on a shared
/// 2-core machine is most of the noise. `None` if the clock is unavailable.
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `t(candidate) / t(baseline)` over `pairs` runs of each, taken back to back with the order
/// alternating, on this thread's CPU time (wall time where that is unavailable): the median
/// and quartiles of the per-pair ratios, and the ratio of the two minimum times.
#[allow(clippy::disallowed_methods)] // a benchmark reads the clock by nature
fn paired_ratio(baseline: &Scenario, candidate: &Scenario, pairs: usize) -> [f64; 4] {
    let time = |s: &Scenario| {
        let (c, t) = (thread_cpu_ns(), std::time::Instant::now());
        black_box(run(s, 1));
        match (c, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64,
            _ => t.elapsed().as_nanos() as f64,
        }
    };
    let (mut min_b, mut min_c) = (f64::MAX, f64::MAX);
    let mut r: Vec<f64> = (0..pairs)
        .map(|i| {
            let (b, c) = if i % 2 == 0 {
                let b = time(baseline);
                (b, time(candidate))
            } else {
                let c = time(candidate);
                (time(baseline), c)
            };
            (min_b, min_c) = (min_b.min(b), min_c.min(c));
            c / b
        })
        .collect();
    r.sort_by(f64::total_cmp);
    [r[pairs / 4], r[pairs / 2], r[3 * pairs / 4], min_c / min_b]
}

fn mechanisms(c: &mut Criterion) {
    let mut g = c.benchmark_group("mechanisms");
    g.sample_size(20);
    let mut cases = vec![];
    for (thin, name) in [(true, "thin"), (false, "bulk")] {
        for (list, label) in [("[]".to_string(), "off"), (all_mechanisms(), "idle")] {
            cases.push((thin, name, list, label.to_string()));
        }
    }
    // each mechanism alone, on the bulk flow (many segments in flight: where a per-ACK cost
    // shows most)
    for m in thinlab_tcp::Mechanism::ALL.iter().map(|m| m.name()) {
        cases.push((false, "bulk", format!("[\"{m}\"]"), format!("idle_{m}")));
    }
    {
        for (thin, name, list, label) in cases {
            let s = mechanisms_workload(thin, &list);
            let r = run(&s, 1);
            let p = &r.flows[0].records.packets;
            assert_eq!(
                (p.retransmissions(), p.rdb_bundles, r.flows[0].dropped_loss),
                (0, 0, 0),
                "{name}_{label}: a mechanism triggered or a packet was lost"
            );
            println!(
                "mechanisms/{name}_{label}: {} events, {} data packets",
                r.events_processed, p.data_packets_sent
            );
            if label != "off" {
                let [q1, med, q3, mins] = paired_ratio(&mechanisms_workload(thin, "[]"), &s, 41);
                println!(
                    "mechanisms/{name}_{label} / {name}_off, CPU time, 41 alternating pairs: \
                     median {med:.3} (quartiles {q1:.3}–{q3:.3}), ratio of minimums {mins:.3}"
                );
            }
            g.throughput(Throughput::Elements(r.events_processed));
            g.bench_function(format!("{name}_{label}"), |b| {
                b.iter(|| black_box(run(&s, 1)))
            });
        }
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    let thin = thin_stream();
    g.bench_function("thin_stream_30min", |b| b.iter(|| black_box(run(&thin, 1))));
    let db = dumbbell();
    g.bench_function("dumbbell_48_flows_100s", |b| {
        b.iter(|| black_box(run(&db, 1)))
    });
    let pp = per_packet();
    let events = run(&pp, 1).events_processed;
    g.throughput(Throughput::Elements(events));
    g.bench_function("per_packet", |b| b.iter(|| black_box(run(&pp, 1))));
    g.finish();
}

criterion_group!(sim, benches, mechanisms);
criterion_main!(sim);
