//! Simulator benchmarks (`cargo bench -p thinlab-sim`):
//! - `thin_stream_30min`: 120 B every 140 ms for 30 simulated minutes, 100 ms RTT,
//!   100 Mbit/s, 0.5 % loss each way (bench/thinlab/thin_stream.toml);
//! - `dumbbell_48_flows_100s`: 24 CBR (300 kbit/s, 1000 B) + 24 bulk flows over a 25 Mbit/s,
//!   50 ms bottleneck with 10 Mbit/s access links, 100 simulated seconds
//!   (bench/thinlab/dumbbell.toml);
//! - `per_packet`: one bulk flow for 1 simulated second, reported per event processed.

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

criterion_group!(sim, benches);
criterion_main!(sim);
