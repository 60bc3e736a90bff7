//! Run health (docs/scenarios.md, "Run health"): which (configuration, flow)s did not complete
//! in some repetition, and why — for the warnings on stderr, the table's footnotes and
//! `--strict`.

use crate::output::Results;
use std::fmt;
use thinlab_trace::FlowStatus;

/// Problem lines printed in full; the rest are summarised in one line.
pub const MAX_LISTED: usize = 20;

/// One (configuration, flow) with at least one repetition that did not complete.
pub struct Problem {
    pub config: usize,
    pub flow: usize,
    /// `configuration · flow`.
    pub label: String,
    pub runs: usize,
    /// Per status other than completed: how many runs, and the first run's reason.
    pub statuses: Vec<(FlowStatus, usize, Option<String>)>,
    pub undelivered: u64,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.label)?;
        for (i, (status, n, reason)) in self.statuses.iter().enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            let runs = if self.runs == 1 {
                String::new()
            } else {
                format!("{n} of {} runs ", self.runs)
            };
            write!(f, "{sep}{runs}{}", status.describe())?;
            if let Some(r) = reason {
                let also = if *n > 1 { ", first run" } else { "" };
                write!(f, " ({r}{also})")?;
            }
        }
        if self.undelivered > 0 {
            write!(
                f,
                "; {} write(s) undelivered, counted in the latency statistics as lower bounds",
                self.undelivered
            )?;
        }
        Ok(())
    }
}

/// Every (configuration, flow) where some repetition did not complete, in table order.
pub fn problems(results: &Results<'_>) -> Vec<Problem> {
    let mut out = Vec::new();
    for (i, c) in results.configs.iter().enumerate() {
        for (f, name) in results.flows_of(i) {
            let mut runs = 0;
            let mut undelivered = 0;
            let mut statuses: Vec<(FlowStatus, usize, Option<String>)> = Vec::new();
            for o in results.flow_runs(i, f) {
                runs += 1;
                let m = &o.metrics;
                undelivered += m.writes_undelivered;
                if m.status.is_completed() {
                    continue;
                }
                match statuses.iter_mut().find(|s| s.0 == m.status) {
                    Some(s) => s.1 += 1,
                    None => statuses.push((m.status, 1, m.status_reason.clone())),
                }
            }
            if !statuses.is_empty() {
                out.push(Problem {
                    config: i,
                    flow: f,
                    label: format!("{} · {name}", c.label()),
                    runs,
                    statuses,
                    undelivered,
                });
            }
        }
    }
    out
}

/// The warnings for stderr: one line per problem (at most [`MAX_LISTED`]), then a total.
pub fn warnings(results: &Results<'_>, problems: &[Problem]) -> Vec<String> {
    if problems.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<String> = problems
        .iter()
        .take(MAX_LISTED)
        .map(|p| format!("warning: {p}"))
        .collect();
    if problems.len() > MAX_LISTED {
        lines.push(format!(
            "warning: … and {} more configuration/flow pairs that did not complete (`status` in runs.csv)",
            problems.len() - MAX_LISTED
        ));
    }
    let mut total = 0usize;
    let mut bad = 0usize;
    let mut by_status: Vec<(FlowStatus, usize)> = Vec::new();
    for r in results.runs {
        for f in &r.flows {
            total += 1;
            if !f.metrics.status.is_completed() {
                bad += 1;
                match by_status.iter_mut().find(|s| s.0 == f.metrics.status) {
                    Some(s) => s.1 += 1,
                    None => by_status.push((f.metrics.status, 1)),
                }
            }
        }
    }
    let detail: Vec<String> = by_status
        .iter()
        .map(|(s, n)| format!("{n} {}", s.describe()))
        .collect();
    lines.push(format!(
        "warning: {bad} of {total} flow runs did not complete ({}); their results are incomplete \
         (--strict makes this exit code 3)",
        detail.join(", ")
    ));
    lines
}
