//! The numbers `report.html` draws, as one JSON document embedded in the page: the scenario,
//! the run-health warnings, the summary table, the latency CDF of each (configuration, flow)
//! (as `latency_cdf.csv` has it), per-run metrics for the metric-vs-parameter plots, and the
//! per-write latency series of one repetition per (configuration, flow).

use super::layout::{layout, Layout};
use super::write_series::{write_series, SimReruns, WriteSeries, MAX_SERIES};
use crate::health::Problem;
use crate::output::{CdfLine, Results, CDF_POINTS};
use serde::Serialize;
use thinlab_trace::metrics::latency_cdf_runs;

/// Most CDF lines embedded (the report stays small for huge sweeps).
pub const MAX_LINES: usize = 256;
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

/// `v` rounded to 3 decimals (µs for ms values): shorter JSON, nothing visible lost.
pub fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
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

/// `lines`: [`Results::lines`] when the caller computed them (else the lines drawn are
/// computed here).
pub fn build(
    results: &Results<'_>,
    problems: &[Problem],
    resolved: &str,
    reruns: Option<&SimReruns<'_>>,
    lines_computed: Option<&[CdfLine]>,
) -> Data {
    let layout = layout(results.configs);
    let mut lines = Vec::new();
    // (config, flow, label, the worst repetition) of the lines that get a per-write series
    let mut wanted = Vec::new();
    let mut lines_total = 0;
    let mut flows = 1;
    for s in results.line_sources() {
        let (i, f) = (s.config, s.flow);
        flows = flows.max(f + 1);
        lines_total += 1;
        if lines.len() >= MAX_LINES {
            continue;
        }
        let label = results.line_label(&s);
        let computed = lines_computed.and_then(|l| l.get(lines_total - 1));
        let runs = computed.map_or_else(
            || std::borrow::Cow::Owned(results.line_runs(&s)),
            |line| {
                debug_assert_eq!(line.2, label, "the lines are in the same order");
                std::borrow::Cow::Borrowed(&line.3)
            },
        );
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
    let series = reruns.map_or_else(Vec::new, |reruns| write_series(wanted, reruns));
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
    fn cdf_counts_are_exact() {
        assert_eq!(
            cdf_counts(&[(1.0, 2), (2.0, 1), (3.0, 1)]),
            vec![(1.0, 2), (2.0, 3), (3.0, 4)]
        );
        assert_eq!(cdf_counts(&[(7.5, 1)]), vec![(7.5, 1)]);
    }
}
