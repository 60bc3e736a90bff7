//! The window around a flow's worst write, traced during the run
//! (`run_keeping` with a `WorstWindow`), is exactly what a rerun traced with that
//! window keeps (`run_traced`): same events, same writes, same order, same caps.

use std::time::Duration;
use thinlab_sim::{
    run_keeping, run_traced, Keep, Scenario, TraceFilter, TracedWindow, WorstWindow,
};
use thinlab_tcp::Event;

/// Every event with a range or an ACK, in two classes (at the sender, at the receiver).
const ALL: TraceFilter = TraceFilter {
    classify: |at_sender, ev| match ev {
        Event::Sent { .. } | Event::Acked { .. } | Event::Sacked { .. } if at_sender => Some(0),
        Event::Arrived { .. } | Event::Delivered { .. } if !at_sender => Some(1),
        _ => None,
    },
    per_class: 6000,
};

fn scenario(flows: &str, loss: f64, duration: &str) -> Scenario {
    Scenario::from_toml_str(&format!(
        r#"
name = "w"
seed = 3
duration = "{duration}"
[network]
rtt = "60ms"
bandwidth = "5Mbit"
queue_packets = 40
[network.loss]
model = "bernoulli"
rate = {loss}
{flows}
"#
    ))
    .unwrap()
}

const THIN: &str = r#"
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "30ms" }
tcp = { profile = "linux", nodelay = true }
"#;

const BULK: &str = r#"
[[flow]]
name = "bulk"
app = { kind = "bulk" }
tcp = { profile = "linux" }
"#;

fn keep(flows: &[usize], spec: WorstWindow) -> Keep<'_> {
    Keep {
        series_flows: flows,
        series_points: 800,
        worst_window: Some(spec),
        ..Keep::default()
    }
}

/// For every flow of `s` run with `seed`: the window the run traced equals the rerun's.
/// Returns how many flows the run traced itself.
fn check(s: &Scenario, seed: u64, spec: WorstWindow) -> usize {
    let flows: Vec<usize> = (0..s.flows.len()).collect();
    let run = run_keeping(s, seed, keep(&flows, spec), &mut |_| {});
    let mut traced = 0;
    for (i, f) in run.flows.iter().enumerate() {
        let worst = f.records.series.as_ref().and_then(|s| s.worst());
        let Some(got) = f.worst_window.as_deref() else {
            continue;
        };
        traced += 1;
        let worst = worst.expect("a traced window without a worst write");
        assert_eq!(
            got.0, worst,
            "flow {i}: the window is not around the worst write"
        );
        let (from, to) = spec.around(&worst);
        let want: TracedWindow = run_traced(
            s,
            seed,
            &[(i, Duration::from_nanos(from), Duration::from_nanos(to))],
            spec.filter,
        )
        .pop()
        .unwrap();
        assert!(
            !want.events.is_empty(),
            "flow {i}: an empty window tests nothing"
        );
        assert_eq!(got.1, want, "flow {i}, seed {seed}: windows differ");
    }
    traced
}

#[test]
fn a_thin_stream_under_loss_traces_the_rerun_window() {
    let spec = WorstWindow {
        filter: ALL,
        margin: Duration::from_millis(200),
    };
    for seed in 1..6 {
        let s = scenario(THIN, 0.03, "60s");
        assert_eq!(check(&s, seed, spec), 1);
    }
}

#[test]
fn competing_bulk_and_thin_flows_trace_the_rerun_windows() {
    let spec = WorstWindow {
        filter: ALL,
        margin: Duration::from_millis(200),
    };
    let bulk2 = BULK.replace("name = \"bulk\"", "name = \"bulk2\"");
    let s = scenario(&format!("{THIN}{BULK}{bulk2}"), 0.01, "20s");
    for seed in 1..4 {
        assert_eq!(check(&s, seed, spec), 3);
    }
}

#[test]
fn small_caps_keep_the_first_events_of_the_window() {
    // With a cap of 5 per class the window is cut short: the run must keep the same first 5.
    let spec = WorstWindow {
        filter: TraceFilter {
            per_class: 5,
            ..ALL
        },
        margin: Duration::from_millis(500),
    };
    let s = scenario(&format!("{THIN}{BULK}"), 0.02, "10s");
    assert_eq!(check(&s, 7, spec), 2);
}

#[test]
fn a_window_too_busy_to_log_is_left_to_a_rerun() {
    // A 20-second margin around a fast bulk flow's worst write: more events than the log holds.
    let s = Scenario::from_toml_str(
        r#"
name = "busy"
duration = "60s"
[network]
rtt = "2ms"
bandwidth = "1Gbit"
[[flow]]
name = "bulk"
app = { kind = "bulk" }
tcp = { profile = "linux" }
"#,
    )
    .unwrap();
    let spec = WorstWindow {
        filter: ALL,
        margin: Duration::from_secs(20),
    };
    let run = run_keeping(&s, 1, keep(&[0], spec), &mut |_| {});
    assert!(run.flows[0]
        .records
        .series
        .as_ref()
        .unwrap()
        .worst()
        .is_some());
    assert!(run.flows[0].worst_window.is_none());
}
