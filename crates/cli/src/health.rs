//! Run health (docs/scenarios.md, "Run health"): which (configuration, flow)s did not complete
//! in some repetition, and why — for the warnings on stderr, the table's footnotes and
//! `--strict`; and, for emulated runs, whether the emulator delivered packets late
//! (docs/emulation.md), which puts the machine's own delays into the latencies.

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

/// An emulated run whose emulator delivered a packet later than this (µs) after the time the
/// path model gave it, or more than [`EMU_LATE_SHARE`] of its packets more than 1 ms late, has
/// the machine's delay in its latencies. Measured (docs/emulation.md, "Timing accuracy" and "A
/// busy machine is reported"): on an idle machine a run's worst delivery was at most 0.7 ms late
/// and none more than 1 ms; beside compilations (load average 1.6–1.9) at most 1.55 ms and
/// 0.01–0.03 % of the deliveries; at load 5.3–5.6, 3.9–6.5 ms and 0.06–0.12 %; beside memory
/// and disk hogs up to 32 ms, and 60 % of one run's deliveries more than 1 ms late.
pub const EMU_LATE_US: f64 = 5000.0;
/// See [`EMU_LATE_US`].
pub const EMU_LATE_SHARE: f64 = 0.01;

/// The warnings for stderr: the emulator's lateness if it was late, one line per problem (at
/// most [`MAX_LISTED`]), then a total.
pub fn warnings(results: &Results<'_>, problems: &[Problem]) -> Vec<String> {
    let emu = results.runs.iter().filter_map(|r| r.emu.as_ref());
    let mut lines: Vec<String> = emulator_late_in(emu).into_iter().collect();
    lines.extend(flow_warnings(results, problems));
    lines
}

/// [`emulator_late`] of emulated runs' `emu` objects (`summary.json`'s, and
/// [`crate::runner::RunOutput::emu`]).
pub fn emulator_late_in<'a>(emu: impl Iterator<Item = &'a serde_json::Value>) -> Option<String> {
    emulator_late(emu.map(|e| {
        let l = &e["lateness_us"];
        EmuLateness {
            max_us: l["max"].as_f64().unwrap_or(0.0),
            over_1ms: l["over_1ms"].as_u64().unwrap_or(0),
            count: l["count"].as_u64().unwrap_or(0),
        }
    }))
}

/// One emulated run's delivery lateness (`summary.json`'s `emu.lateness_us`, `emu.json`'s
/// `lateness`).
#[derive(Clone, Copy, Debug)]
pub struct EmuLateness {
    pub max_us: f64,
    /// Deliveries more than 1 ms late.
    pub over_1ms: u64,
    /// Deliveries.
    pub count: u64,
}

/// The warning for emulated runs whose emulator delivered some packet more than
/// [`EMU_LATE_US`] late, or more than [`EMU_LATE_SHARE`] of them more than 1 ms late; `None`
/// when none did.
pub fn emulator_late(lateness: impl Iterator<Item = EmuLateness>) -> Option<String> {
    let (mut runs, mut late_runs, mut late_packets, mut worst) = (0usize, 0usize, 0u64, 0f64);
    for l in lateness {
        runs += 1;
        if l.max_us > EMU_LATE_US || l.over_1ms as f64 > EMU_LATE_SHARE * l.count as f64 {
            late_runs += 1;
            late_packets += l.over_1ms;
            worst = worst.max(l.max_us);
        }
    }
    (late_runs > 0).then(|| {
        format!(
            "warning: the emulator delivered packets late in {late_runs} of {runs} runs \
             (the worst by {:.1} ms; {late_packets} deliveries more than 1 ms late): the machine was busy, \
             and those runs' latencies include its delay (`lateness` in emu.json; run on an idle machine)",
            worst / 1000.0
        )
    })
}

/// One line per problem (at most [`MAX_LISTED`]), then a total.
fn flow_warnings(results: &Results<'_>, problems: &[Problem]) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn emu(max_us: f64, over_1ms: u64) -> EmuLateness {
        EmuLateness {
            max_us,
            over_1ms,
            count: 1000,
        }
    }

    #[test]
    fn a_punctual_emulator_gives_no_warning() {
        assert_eq!(
            emulator_late([emu(2.0, 0), emu(4_999.0, 10)].into_iter()),
            None
        );
        assert_eq!(emulator_late(std::iter::empty()), None);
    }

    #[test]
    fn a_late_emulator_is_named_with_its_runs_and_worst_delay() {
        let runs = [
            emu(3.0, 0),
            emu(21_445.2, 4),
            emu(6_500.0, 1),
            emu(1_500.0, 1),
        ];
        let w = emulator_late(runs.into_iter()).expect("a warning");
        assert!(w.contains("late in 2 of 4 runs"), "{w}");
        assert!(w.contains("5 deliveries more than 1 ms late"), "{w}");
        assert!(w.contains("by 21.4 ms"), "{w}");
    }

    #[test]
    fn many_deliveries_a_little_late_are_named_too() {
        let w = emulator_late([emu(3_400.0, 722), emu(3.0, 0)].into_iter()).expect("a warning");
        assert!(w.contains("late in 1 of 2 runs"), "{w}");
        assert!(w.contains("722 deliveries"), "{w}");
    }
}
