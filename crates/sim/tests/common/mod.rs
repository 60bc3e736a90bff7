//! Shared by the simulator's measurement tests: Evensen's (2008) game-like thin stream (120 B every
//! 140 ms over a 100 ms RTT, 100 Mbit/s path with 1 % random loss each way) and its
//! application-layer latencies, with the metrics crate's own percentile definition.

#![allow(dead_code)] // each test file uses its own subset

use thinlab_sim::{RunResult, Scenario};
use thinlab_trace::metrics::{latency_samples_ms, nearest_rank, Milestone, Origin};

/// The thin stream for `duration`, with `tcp` as the body of the flow's `tcp` table.
pub fn thin_stream(duration: &str, tcp: &str) -> Scenario {
    let s = format!(
        r#"
name = "thin"
duration = "{duration}"
[network]
rtt = "100ms"
bandwidth = "100Mbit"
queue_packets = 1000
[network.loss]
model = "bernoulli"
rate = 0.01
[[flow]]
app = {{ kind = "fixed", payload_bytes = 120, interval = "140ms" }}
tcp = {{ {tcp} }}
"#
    );
    Scenario::from_toml_str(&s).unwrap_or_else(|e| panic!("{e}"))
}

/// Application-layer latencies of flow 0 in ms, sorted.
pub fn latencies(r: &RunResult) -> Vec<f64> {
    let mut v = latency_samples_ms(&r.flows[0].records, Milestone::App, Origin::Write);
    v.sort_by(f64::total_cmp);
    v
}

/// Nearest-rank percentile `p` (in %, e.g. 99.9) of sorted samples.
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    nearest_rank(sorted, (p * 10.0).round() as u64, 1000).expect("samples")
}
