//! The human summary printed at the end of a run: per configuration and flow, the pooled
//! application-layer latency (all repetitions) and the retransmissions summed over them.
//!
//! - `writes/run`: writes made per run — the mean over repetitions, with the range
//!   `(min–max)` when the repetitions differ.
//! - `mean`, `p99`, `max`: pooled over repetitions, undelivered writes included as censored
//!   samples; a value that is only a lower bound because of them is shown as `≥value`.
//! - a flow that did not complete in some repetition is marked `!` and explained in a
//!   footnote under the table ([`crate::health`]).

use crate::health::{Problem, MAX_LISTED};
use crate::output::Results;
use std::collections::HashSet;
use std::fmt::Write;
use thinlab_trace::histogram::merged_runs;
use thinlab_trace::LatencyStats;

fn ms(v: Option<f64>, lower_bound: bool) -> String {
    match v {
        None => "-".into(),
        Some(v) if lower_bound => format!("≥{v:.1}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// `mean` of the per-run write counts, with `(min–max)` when they differ.
fn writes_per_run(counts: &[u64]) -> String {
    let (Some(&min), Some(&max)) = (counts.iter().min(), counts.iter().max()) else {
        return "-".into();
    };
    let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    if min == max {
        min.to_string()
    } else {
        format!("{mean:.0} ({min}–{max})")
    }
}

/// Column names of [`rows`].
pub const HEADER: [&str; 7] = [
    "configuration",
    "flow",
    "writes/run",
    "mean ms",
    "p99 ms",
    "max ms",
    "retrans",
];

/// The table's cells, one row per (configuration, flow), in the order of [`HEADER`].
pub fn rows(results: &Results<'_>, problems: &[Problem]) -> Vec<[String; 7]> {
    let mut rows: Vec<[String; 7]> = Vec::new();
    // A set, not a search per row: 50 000 flows with 30 000 problems made a search per row
    // quadratic (up to 50 000 × 30 000 comparisons).
    let marked: HashSet<(usize, usize)> = problems.iter().map(|p| (p.config, p.flow)).collect();
    for (i, c) in results.configs.iter().enumerate() {
        for (f, name) in results.flows_of(i) {
            let (exact, censored) = results.pooled_app_latency(i, f);
            let n_censored = censored.iter().filter(|x| !x.is_nan()).count() as u64;
            let s = LatencyStats::from_runs(&merged_runs(&exact, &censored), n_censored);
            // Values at or above the smallest censored sample are lower bounds.
            let floor = censored.iter().copied().fold(f64::INFINITY, f64::min);
            let bound = |v: Option<f64>| v.is_some_and(|v| v >= floor);
            let retrans: u64 = results
                .flow_runs(i, f)
                .map(|o| o.metrics.retransmissions)
                .sum();
            let counts: Vec<u64> = results.flow_runs(i, f).map(|o| o.metrics.writes).collect();
            let marked = marked.contains(&(i, f));
            rows.push([
                c.label(),
                if marked { format!("{name} !") } else { name },
                writes_per_run(&counts),
                ms(s.mean, s.censored > 0),
                ms(s.p99, bound(s.p99)),
                ms(s.max, bound(s.max)),
                retrans.to_string(),
            ]);
        }
    }
    rows
}

/// Most rows the printed table shows; `runs.csv` and `report.html` have every row (a sweep of
/// 20 000 configurations printed 20 000 lines).
pub const MAX_ROWS: usize = 100;

/// The table as text, one line per (configuration, flow) up to [`MAX_ROWS`], then one
/// footnote per problem.
pub fn render(results: &Results<'_>, problems: &[Problem]) -> String {
    let rows = rows(results, problems);
    let mut out = aligned(
        &HEADER.map(String::from),
        &rows,
        2,
        "runs.csv and report.html have",
    );
    for p in problems.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "! {p}");
    }
    if problems.len() > MAX_LISTED {
        let _ = writeln!(
            out,
            "! … and {} more that did not complete (`status` in runs.csv)",
            problems.len() - MAX_LISTED
        );
    }
    if !problems.is_empty() {
        let _ = writeln!(
            out,
            "(retrans: summed over repetitions; ≥: a lower bound, writes still undelivered at the end)"
        );
    }
    out
}

/// `header` and up to [`MAX_ROWS`] of `rows` as aligned text: the first `left` columns
/// aligned left, the others right, two spaces between columns; then, if rows were left out,
/// how many and which files have them all (`files_have`: "runs.csv and report.html have").
pub fn aligned<R: AsRef<[String]>>(
    header: &[String],
    rows: &[R],
    left: usize,
    files_have: &str,
) -> String {
    let shown = &rows[..rows.len().min(MAX_ROWS)];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in shown {
        for (w, c) in widths.iter_mut().zip(r.as_ref()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        for (i, (c, &w)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - c.chars().count());
            if i < left {
                let _ = write!(out, "{c}{pad}  ");
            } else {
                let _ = write!(out, "{pad}{c}  ");
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    };
    line(header);
    for r in shown {
        line(r.as_ref());
    }
    if rows.len() > shown.len() {
        let _ = writeln!(
            out,
            "… and {} more rows ({files_have} all {})",
            rows.len() - shown.len(),
            rows.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_per_run_shows_the_spread() {
        assert_eq!(writes_per_run(&[4285, 4285]), "4285");
        assert_eq!(writes_per_run(&[0, 0, 499, 499, 8]), "201 (0–499)");
        assert_eq!(writes_per_run(&[]), "-");
    }
}
