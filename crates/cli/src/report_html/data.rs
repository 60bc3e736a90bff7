//! The numbers `report.html` draws, as one JSON document embedded in the page: the scenario,
//! the run-health warnings, the summary table, the latency CDF of each (configuration, flow)
//! (as `latency_cdf.csv` has it), per-run metrics for the metric-vs-parameter plots, and the
//! per-write latency series of one repetition per (configuration, flow).

use super::layout::{layout, Layout};
use crate::health::Problem;
use crate::output::Results;
use serde::Serialize;
use std::time::Duration;
use thinlab_tcp::{Event, Instant, SendKind};
use thinlab_trace::histogram::merged_runs;
use thinlab_trace::metrics::{
    latency_cdf_runs, write_latency_ms, write_latency_ns, Milestone, Origin,
};

/// CDF points per line, as in `latency_cdf.csv`.
const CDF_POINTS: usize = 400;
/// Points of a per-write series (each the maximum of consecutive writes when there are more).
const SERIES_POINTS: usize = 800;
/// Most CDF lines embedded (the report stays small for huge sweeps).
pub const MAX_LINES: usize = 256;
/// Most per-write series: each is one more simulation (the worst repetition run again, keeping
/// its write records), so only the first lines get one.
pub const MAX_SERIES: usize = 8;
/// Most run records embedded for the metric-vs-parameter plots.
pub const MAX_RUNS: usize = 50_000;

#[derive(Serialize)]
pub struct Data {
    pub scenario: String,
    pub version: &'static str,
    pub complete: bool,
    pub resolved: String,
    pub warnings: Vec<String>,
    pub table_header: Vec<&'static str>,
    pub table: Vec<[String; 7]>,
    pub layout: Layout,
    pub flows: usize,
    /// CDF lines: configuration, flow index, label, samples n, points `[latency ms, count ≤]`.
    pub lines: Vec<Line>,
    /// Lines left out beyond [`MAX_LINES`].
    pub lines_omitted: usize,
    /// Per run and flow: `[config, flow, repetition, p50, p99, max, retransmissions,
    /// redundancy %]` (null where a value is missing).
    pub runs: Vec<[Option<f64>; 8]>,
    pub runs_omitted: usize,
    pub series: Vec<WriteSeries>,
}

#[derive(Serialize)]
pub struct Line {
    pub config: usize,
    pub flow: usize,
    pub label: String,
    pub n: usize,
    pub points: Vec<(f64, u64)>,
}

/// Application latency of the delivered writes of one repetition, in write order.
#[derive(Serialize)]
pub struct WriteSeries {
    pub config: usize,
    pub flow: usize,
    pub label: String,
    pub repetition: u32,
    pub seed: u64,
    pub writes: usize,
    /// The time-sequence graph around the worst write.
    pub sequence: Option<Sequence>,
    /// Each point is the maximum over this many consecutive writes.
    pub bucket: usize,
    /// `[index of the bucket's first write, its maximum latency ms]`.
    pub points: Vec<(usize, f64)>,
}

/// `v` rounded to 3 decimals (µs for ms values): shorter JSON, nothing visible lost.
fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The series of `lat` with at most [`SERIES_POINTS`] points, each a bucket's maximum (so
/// every stall stays visible).
pub fn bucket_max(lat: &[f64]) -> (usize, Vec<(usize, f64)>) {
    let bucket = lat.len().div_ceil(SERIES_POINTS).max(1);
    let points = lat
        .chunks(bucket)
        .enumerate()
        .map(|(i, c)| (i * bucket, r3(c.iter().copied().fold(f64::NAN, f64::max))))
        .collect();
    (bucket, points)
}

/// The CDF of the samples given as ascending `(value, count)` runs, as (latency, count of
/// samples ≤ latency).
pub fn cdf_counts(runs: &[(f64, u64)]) -> Vec<(f64, u64)> {
    let n = runs.iter().map(|r| r.1).sum::<u64>() as f64;
    latency_cdf_runs(runs, CDF_POINTS)
        .into_iter()
        .map(|(x, f)| (r3(x), (f * n).round() as u64))
        .collect()
}

/// For flows `flows` of one run of configuration `config` with `seed`: the application latency
/// (ms) of the delivered writes, in write order, and the sequence diagram around the worst write.
/// The run is repeated twice whatever the number of flows (it is deterministic): once keeping
/// those flows' write records, once tracing their windows up to the last window's end.
pub type Rerun<'a> = &'a dyn Fn(usize, u64, &[usize]) -> Vec<Option<FlowDetail>>;

/// One flow's per-write latencies (ms) and the sequence diagram around its worst write.
pub type FlowDetail = (Vec<f64>, Option<Sequence>);

/// What happened around one write: every write, transmission (by cause), arrival, in-order
/// delivery, cumulative ACK and SACK block of the flow in a window of simulated time, as
/// `(category, time ms, stream offset of its end)`: a time-sequence graph (tcptrace's).
#[derive(Serialize)]
pub struct Sequence {
    pub from_ms: f64,
    pub to_ms: f64,
    /// The worst write: write time, latency, its end offset.
    pub write_ms: f64,
    pub latency_ms: f64,
    pub end: u64,
    pub categories: Vec<&'static str>,
    pub points: Vec<(usize, f64, u64)>,
    /// SACK blocks the sender received: `(time ms, start, end)`, drawn as vertical bars.
    pub sacks: Vec<(f64, u64, u64)>,
}

/// Categories of the sequence diagram, in drawing order.
const CATEGORIES: [&str; 11] = [
    "write",
    "sent: new data",
    "sent: RDB bundle",
    "retransmission: fast / RACK",
    "retransmission: early",
    "retransmission: TLP probe",
    "retransmission: RTO",
    "arrived at the receiver",
    "delivered to the application",
    "acknowledged (snd.una)",
    "SACK block (held by the receiver)",
];
/// Most points of a sequence diagram.
const SEQUENCE_POINTS: usize = 6000;

fn category(at_sender: bool, ev: &Event) -> Option<(usize, Instant, u64)> {
    Some(match *ev {
        Event::Sent {
            at,
            start,
            end,
            kind,
            ..
        } if at_sender && end > start => {
            let c = match kind {
                SendKind::New | SendKind::TlpNewData => 1,
                SendKind::Rdb => 2,
                SendKind::FastRetransmit | SendKind::RackRetransmit => 3,
                SendKind::Early | SendKind::EarlyThreshold => 4,
                SendKind::Tlp => 5,
                SendKind::Rto => 6,
                _ => return None,
            };
            (c, at, end)
        }
        Event::Arrived { at, end, .. } if !at_sender => (7, at, end),
        Event::Delivered { at, end, .. } if !at_sender => (8, at, end),
        Event::Acked { at, una } if at_sender => (9, at, una),
        Event::Sacked { at, end, .. } if at_sender => (10, at, end),
        _ => return None,
    })
}

/// The simulator's reruns of configuration `config`, seed `seed`, flows `flows` ([`Rerun`]).
pub fn sim_rerun(
    scenarios: &[thinlab_sim::Scenario],
) -> impl Fn(usize, u64, &[usize]) -> Vec<Option<FlowDetail>> + '_ {
    move |config, seed, flows| {
        let Some(s) = scenarios.get(config) else {
            return flows.iter().map(|_| None).collect();
        };
        let r = thinlab_sim::run_keeping_writes_of(s, seed, flows);
        let margin = Duration::from_millis(200);
        // Per flow: its writes and the window around its worst write.
        let found: Vec<_> = flows
            .iter()
            .map(|&f| {
                let writes = &r.flows.get(f)?.records.writes;
                let worst = writes
                    .iter()
                    .filter_map(|w| Some((w, write_latency_ns(w, Milestone::App, Origin::Write)?)))
                    .max_by_key(|&(_, l)| l)
                    .map(|(w, l)| {
                        let from =
                            Duration::from_nanos(w.write_time.as_nanos()).saturating_sub(margin);
                        let to = Duration::from_nanos(w.write_time.as_nanos() + l) + margin;
                        (*w, l, from, to)
                    });
                Some((f, writes, worst))
            })
            .collect();
        let windows: Vec<_> = found
            .iter()
            .flatten()
            .filter_map(|(f, _, worst)| worst.as_ref().map(|w| (*f, w.2, w.3)))
            .collect();
        let mut traced = thinlab_sim::run_traced(s, seed, &windows).into_iter();
        found
            .into_iter()
            .map(|found| {
                let (_, writes, worst) = found?;
                let lat = writes
                    .iter()
                    .filter_map(|w| write_latency_ms(w, Milestone::App, Origin::Write))
                    .collect();
                let seq = worst.map(|(w, l, from, to)| {
                    sequence(writes, &w, l, from, to, traced.next().unwrap_or_default())
                });
                Some((lat, seq))
            })
            .collect()
    }
}

/// The sequence diagram of the window `from..=to` around write `w` (latency `l` ns), from the
/// flow's writes and its traced `events`.
fn sequence(
    writes: &[thinlab_trace::WriteRecord],
    w: &thinlab_trace::WriteRecord,
    l: u64,
    from: Duration,
    to: Duration,
    events: Vec<(bool, Event)>,
) -> Sequence {
    let ms = |t: Instant| r3(t.as_millis_f64());
    let in_window = |t: Instant| (from..=to).contains(&Duration::from_nanos(t.as_nanos()));
    let mut points: Vec<(usize, f64, u64)> = writes
        .iter()
        .filter(|x| in_window(x.write_time))
        .map(|x| (0, ms(x.write_time), x.end))
        .collect();
    points.extend(
        events
            .iter()
            .filter_map(|(s, e)| category(*s, e))
            .map(|(c, t, off)| (c, ms(t), off)),
    );
    points.truncate(SEQUENCE_POINTS);
    let sacks = events
        .iter()
        .filter_map(|(sender, e)| match *e {
            Event::Sacked { at, start, end } if *sender => Some((ms(at), start, end)),
            _ => None,
        })
        .take(SEQUENCE_POINTS)
        .collect();
    Sequence {
        from_ms: r3(from.as_secs_f64() * 1e3),
        to_ms: r3(to.as_secs_f64() * 1e3),
        write_ms: ms(w.write_time),
        latency_ms: r3(l as f64 / 1e6),
        end: w.end,
        categories: CATEGORIES.to_vec(),
        points,
        sacks,
    }
}

/// The per-write series of `wanted` (config, flow, label, repetition), in that order: one
/// [`Rerun`] per (config, seed), for all its flows at once.
fn write_series(
    wanted: Vec<(usize, usize, String, &crate::runner::RunOutput)>,
    rerun: Rerun<'_>,
) -> Vec<WriteSeries> {
    let mut groups: Vec<((usize, u64), Vec<usize>)> = Vec::new();
    for &(i, f, _, run) in &wanted {
        match groups.iter_mut().find(|g| g.0 == (i, run.seed)) {
            Some(g) => g.1.push(f),
            None => groups.push(((i, run.seed), vec![f])),
        }
    }
    let mut found: Vec<((usize, u64, usize), FlowDetail)> = Vec::new();
    for ((i, seed), flows) in groups {
        for (f, r) in flows.iter().zip(rerun(i, seed, &flows)) {
            if let Some(r) = r {
                found.push(((i, seed, *f), r));
            }
        }
    }
    wanted
        .into_iter()
        .filter_map(|(i, f, label, run)| {
            let at = found.iter().position(|k| k.0 == (i, run.seed, f))?;
            let (lat, sequence) = found.swap_remove(at).1;
            let (bucket, points) = bucket_max(&lat);
            Some(WriteSeries {
                config: i,
                flow: f,
                label,
                repetition: run.repetition,
                seed: run.seed,
                writes: lat.len(),
                sequence,
                bucket,
                points,
            })
        })
        .collect()
}

pub fn build(
    results: &Results<'_>,
    problems: &[Problem],
    resolved: &str,
    rerun: Option<Rerun<'_>>,
) -> Data {
    let layout = layout(results.configs);
    let mut lines = Vec::new();
    // (config, flow, label, the worst repetition) of the lines that get a per-write series
    let mut wanted = Vec::new();
    let mut lines_total = 0;
    let mut flows = 1;
    for i in 0..results.configs.len() {
        let names = results.flows_of(i);
        let several = names.len() > 1;
        flows = flows.max(names.len());
        for (f, name) in names {
            lines_total += 1;
            if lines.len() >= MAX_LINES {
                continue;
            }
            let label = if several {
                format!("{} · {name}", results.configs[i].label())
            } else {
                results.configs[i].label()
            };
            let (exact, censored) = results.pooled_app_latency(i, f);
            let runs = merged_runs(&exact, &censored);
            lines.push(Line {
                config: i,
                flow: f,
                label: label.clone(),
                n: runs.iter().map(|r| r.1).sum::<u64>() as usize,
                points: cdf_counts(&runs),
            });
            // The repetition whose worst delivered write is the worst, run again for its
            // per-write series.
            let worst = results
                .config_runs(i)
                .iter()
                .filter_map(|r| r.flows.get(f).map(|o| (r, o)))
                .max_by(|a, b| {
                    let m = |o: &crate::runner::FlowOutput| {
                        o.metrics.app_latency_ms.max.unwrap_or(f64::MIN)
                    };
                    m(a.1).total_cmp(&m(b.1))
                });
            if let (Some((run, _)), true) = (worst, wanted.len() < MAX_SERIES) {
                wanted.push((i, f, label, run));
            }
        }
    }
    let series = rerun.map_or_else(Vec::new, |rerun| write_series(wanted, rerun));
    let mut runs = Vec::new();
    let mut runs_total = 0;
    for r in results.runs {
        for (f, o) in r.flows.iter().enumerate() {
            runs_total += 1;
            if runs.len() >= MAX_RUNS {
                continue;
            }
            let m = &o.metrics;
            let redundancy = (m.payload_bytes_sent > 0)
                .then(|| 100.0 * m.redundant_bytes_sent as f64 / m.payload_bytes_sent as f64);
            runs.push([
                Some(r.config as f64),
                Some(f as f64),
                Some(f64::from(r.repetition)),
                m.app_latency_ms.p50.map(r3),
                m.app_latency_ms.p99.map(r3),
                m.app_latency_ms.max.map(r3),
                Some(m.retransmissions as f64),
                redundancy.map(r3),
            ]);
        }
    }
    Data {
        scenario: results.scenario.to_string(),
        version: env!("CARGO_PKG_VERSION"),
        complete: results.complete,
        resolved: resolved.to_string(),
        warnings: crate::health::warnings(results, problems),
        table_header: crate::table::HEADER.to_vec(),
        table: crate::table::rows(results, problems),
        layout,
        flows,
        lines_omitted: lines_total - lines.len(),
        lines,
        runs_omitted: runs_total - runs.len(),
        runs,
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_graph_has_the_sack_blocks_the_sender_received() {
        let s = thinlab_sim::Scenario::from_toml_str(
            r#"
name = "sack"
seed = 4
duration = "60s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
queue_packets = 100
[network.loss]
model = "bernoulli"
rate = 0.05
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "20ms" }
tcp = { profile = "linux", nodelay = true }
"#,
        )
        .unwrap();
        let scenarios = [s];
        let rerun = sim_rerun(&scenarios);
        let (lat, seq) = rerun(0, 4, &[0]).pop().flatten().unwrap();
        assert!(lat.len() > 1000);
        let seq = seq.unwrap();
        assert!(
            !seq.sacks.is_empty(),
            "no SACK block around the worst write"
        );
        for &(t, start, end) in &seq.sacks {
            assert!(start < end && (seq.from_ms..=seq.to_ms).contains(&t));
        }
        let sack_points = seq.points.iter().filter(|p| p.0 == 10).count();
        assert_eq!(sack_points, seq.sacks.len());
        assert_eq!(seq.categories.len(), 11);
    }

    #[test]
    fn buckets_keep_every_stall() {
        let mut lat = vec![100.0; 10_000];
        lat[4321] = 3000.0;
        let (bucket, pts) = bucket_max(&lat);
        assert_eq!(bucket, 13);
        assert!(pts.len() <= SERIES_POINTS);
        assert_eq!(pts.iter().filter(|p| p.1 == 3000.0).count(), 1);
        assert_eq!(pts[4321 / 13], (4321 / 13 * 13, 3000.0));
        let (bucket, pts) = bucket_max(&[5.0]);
        assert_eq!((bucket, pts), (1, vec![(0, 5.0)]));
        assert_eq!(bucket_max(&[]).1, vec![]);
    }

    #[test]
    fn cdf_counts_are_exact() {
        assert_eq!(
            cdf_counts(&[(1.0, 2), (2.0, 1), (3.0, 1)]),
            vec![(1.0, 2), (2.0, 3), (3.0, 4)]
        );
        assert_eq!(cdf_counts(&[(7.5, 1)]), vec![(7.5, 1)]);
    }
}
