//! A run folds the records of writes that reached every milestone into exact histograms
//! (`FlowRecorder::compacting`), so its memory does not grow with simulated time. Every metric
//! must be exactly what the full per-write records give (`run_keeping_writes`): the same
//! latency statistics bit for bit, the same counts, the same samples.

use std::time::Duration;
use thinlab_sim::{run, run_keeping_writes, Scenario};
use thinlab_trace::metrics::{
    censored_samples_ms, flow_metrics, latency_samples_ms, Milestone, Origin,
};

fn scenario(flows: &str, loss: f64, jitter: &str) -> Scenario {
    Scenario::from_toml_str(&format!(
        r#"
name = "compact"
duration = "2min"
[network]
rtt = "100ms"
bandwidth = "2Mbit"
queue_packets = 30
jitter = "{jitter}"
[network.loss]
model = "bernoulli"
rate = {loss}
{flows}
"#
    ))
    .unwrap_or_else(|e| panic!("{e}"))
}

const THIN: &str = r#"
[[flow]]
name = "thin"
app = { kind = "fixed", payload_bytes = 120, interval = "30ms" }
tcp = { profile = "linux", nodelay = true, mechanisms = ["rdb", "linear-timeouts"] }
"#;
const BULK: &str = r#"
[[flow]]
name = "bulk"
app = { kind = "bulk" }
tcp = { profile = "linux" }
"#;

#[test]
fn compacted_runs_give_the_metrics_of_the_full_records() {
    for (flows, loss, jitter) in [
        (THIN.to_string(), 0.05, "0ms"),
        (THIN.to_string(), 0.01, "5ms"),
        (format!("{THIN}{BULK}"), 0.0, "1ms"),
    ] {
        let s = scenario(&flows, loss, jitter);
        let (a, b) = (run(&s, 7), run_keeping_writes(&s, 7));
        for (fa, fb) in a.flows.iter().zip(&b.flows) {
            let what = format!("{} at loss {loss}, jitter {jitter}", fa.name);
            assert_eq!(
                fb.records.retired.count, 0,
                "{what}: the full records retire nothing"
            );
            if fa.name == "thin" {
                assert!(
                    fa.records.retired.count > 3000 && fa.records.writes.len() < 100,
                    "{what}: {} retired, {} held",
                    fa.records.retired.count,
                    fa.records.writes.len()
                );
            }
            let d = Duration::from_secs(120);
            let (ma, mb) = (flow_metrics(&fa.records, d), flow_metrics(&fb.records, d));
            assert_eq!(ma, mb, "{what}");
            for m in [Milestone::App, Milestone::Transport, Milestone::Ack] {
                for o in [Origin::Write, Origin::FirstSend] {
                    let sorted = |r| {
                        let mut v = latency_samples_ms(r, m, o);
                        v.sort_by(f64::total_cmp);
                        v
                    };
                    assert_eq!(
                        sorted(&fa.records),
                        sorted(&fb.records),
                        "{what} {m:?} {o:?}"
                    );
                    assert_eq!(
                        censored_samples_ms(&fa.records, m, o),
                        censored_samples_ms(&fb.records, m, o),
                        "{what} {m:?} {o:?}"
                    );
                }
            }
        }
    }
}
