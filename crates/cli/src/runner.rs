//! Runs every (configuration, repetition) in parallel on a rayon pool and keeps, per flow,
//! the metrics and the exact application-latency histogram (the records themselves are
//! dropped; memory does not grow with the number of writes).

use crate::progress::Progress;
use crate::report_html::write_series::Sequence;
use crate::sim::{self, Scenario};
use crate::write_rows::WriteRow;
use crate::write_spill::WriteSpill;
use anyhow::{anyhow, Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};
use thinlab_trace::histogram::LatencyHistogram;
use thinlab_trace::metrics::{censored_samples_ms, latency_histogram, Milestone, Origin};
use thinlab_trace::series::LatencySeries;
use thinlab_trace::{flow_metrics, FlowMetrics};

/// One simulator run to do.
pub struct Job {
    pub config: usize,
    pub repetition: u32,
    pub seed: u64,
    /// Where to write pcap files, and whether of every flow (else those with `capture = true`).
    pub capture: Option<sim::CaptureOptions>,
    /// Keep every write's milestones ([`FlowOutput::writes`]); memory grows with the writes.
    pub keep_writes: bool,
    /// Keep every write's milestones in a temporary file instead ([`RunOutput::write_spill`]):
    /// no memory per write.
    pub spill_writes: bool,
    /// Flows that keep their per-write latency series ([`FlowOutput::series`]): those
    /// `report.html` plots.
    pub series_flows: Vec<usize>,
}

/// What a finished run leaves for the outputs. It serializes exactly (f64s round-trip), so a
/// run made in another process (a Ray worker, a campaign's store) gives the same files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutput {
    pub config: usize,
    pub repetition: u32,
    pub seed: u64,
    pub flows: Vec<FlowOutput>,
    pub end_time_s: f64,
    pub events_processed: u64,
    pub drain_bound_hit: bool,
    /// Packets dropped in the network: loss model and queue overflow.
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    /// Wall time of the simulation itself (the simulator's run, without metrics or files), s.
    /// Not deterministic: written to `timing.json`, never to `summary.json`.
    #[serde(default)]
    pub sim_wall_s: f64,
    /// Emulated runs only: lateness and congestion control (`summary.json`'s `emu`).
    pub emu: Option<serde_json::Value>,
    /// Every write's milestones, spilled to a temporary file ([`Job::spill_writes`]); not
    /// serialized (the file is this process's).
    #[serde(skip)]
    pub write_spill: Option<WriteSpill>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowOutput {
    pub name: String,
    pub metrics: FlowMetrics,
    /// Application-layer latency of every delivered write (exact, ns resolution).
    pub app_latency: LatencyHistogram,
    /// Lower bounds of the application-layer latency of the writes still undelivered at the
    /// end of the run (end of run − write time), ms: censored samples.
    pub app_censored_ms: Vec<f64>,
    /// Every write's milestones, when the job asked for them ([`Job::keep_writes`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Vec<WriteRow>>,
    /// The application latency of the delivered writes in write order, in a bounded number of
    /// points, when the job asked for it ([`Job::series_flows`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<LatencySeries>,
    /// The time-sequence graph around the series' worst write, when the run traced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Sequence>,
}

/// The jobs of all configurations: repetition `r` of a configuration uses seed `seed + r`. The
/// flows `report.html` plots per write keep their latency series.
pub fn jobs(scenarios: &[Scenario]) -> Vec<Job> {
    let series = crate::report_html::write_series::series_flows(scenarios);
    let mut jobs = Vec::new();
    for (config, s) in scenarios.iter().enumerate() {
        for repetition in 0..s.repetitions {
            jobs.push(Job {
                config,
                repetition,
                seed: s.seed.wrapping_add(u64::from(repetition)),
                capture: None,
                keep_writes: false,
                spill_writes: false,
                series_flows: series[config].clone(),
            });
        }
    }
    jobs
}

/// Runs all jobs on `threads` threads; results in job order.
pub fn run_all(
    scenarios: &[Scenario],
    jobs: &[Job],
    threads: usize,
    progress: &Progress,
) -> Result<Vec<RunOutput>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the worker threads")?;
    // After Ctrl-C no new run starts; the finished ones are returned (fewer than `jobs`).
    let runs: Vec<Option<RunOutput>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                if crate::interrupt::interrupted() {
                    return Ok(None);
                }
                run_one(&scenarios[job.config], job, progress).map(Some)
            })
            .collect::<Result<_>>()
    })?;
    Ok(runs.into_iter().flatten().collect())
}

fn run_one(scenario: &Scenario, job: &Job, progress: &Progress) -> Result<RunOutput> {
    let mut tracker = progress.run(scenario.duration);
    #[allow(clippy::disallowed_methods)] // timing.json reports the simulate-only wall time
    let started = std::time::Instant::now();
    let spill = job
        .spill_writes
        .then(|| WriteSpill::new(scenario.flows.len()));
    let result = catch_unwind(AssertUnwindSafe(|| match &job.capture {
        Some(opts) => sim::run_captured(scenario, job.seed, opts, &mut |now| tracker.at(now))
            .with_context(|| format!("writing captures into {}", opts.dir.display())),
        None if job.keep_writes => Ok(sim::run_keeping_writes_observed(
            scenario,
            job.seed,
            &mut |now| tracker.at(now),
        )),
        None => {
            let mut sinks = spill.as_ref().map(|s| move |f| s.sink(f));
            let keep = sim::Keep {
                series_flows: &job.series_flows,
                series_points: crate::report_html::write_series::SERIES_POINTS,
                worst_window: Some(crate::report_html::write_series::SEQUENCE_WINDOW),
                write_sinks: sinks
                    .as_mut()
                    .map(|s| s as &mut dyn FnMut(usize) -> thinlab_trace::WriteSink),
            };
            Ok(sim::run_keeping(scenario, job.seed, keep, &mut |now| {
                tracker.at(now)
            }))
        }
    }))
    .map_err(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        anyhow!("the simulator panicked: {msg}")
    })
    .and_then(|r| r)
    .with_context(|| format!("run with seed {} (repetition {})", job.seed, job.repetition))?;
    let sim_wall_s = started.elapsed().as_secs_f64();
    if let Some(s) = &spill {
        s.check()?;
    }
    tracker.done();
    let flows = result
        .flows
        .iter()
        .map(|f| {
            let mut out = flow_output(
                &f.name,
                &f.records,
                f.duration,
                f.status,
                f.status_reason.clone(),
            );
            if job.keep_writes {
                out.writes = Some(f.records.writes.iter().map(WriteRow::from_record).collect());
            }
            out.series = f.records.series.as_deref().cloned();
            out.sequence = f
                .worst_window
                .as_deref()
                .map(|(w, traced)| crate::report_html::write_series::sequence(w, traced));
            out
        })
        .collect();
    Ok(RunOutput {
        config: job.config,
        repetition: job.repetition,
        seed: job.seed,
        flows,
        end_time_s: result.end_time.as_secs_f64(),
        events_processed: result.events_processed,
        drain_bound_hit: result.drain_bound_hit,
        dropped_loss: result.drops.loss_forward + result.drops.loss_reverse,
        dropped_queue: result.drops.queue_forward
            + result.drops.queue_reverse
            + result.drops.queue_access,
        sim_wall_s,
        emu: None,
        write_spill: spill,
    })
}

/// A flow's results from its delivery records, the same for every backend.
pub fn flow_output(
    name: &str,
    records: &thinlab_trace::FlowRecords,
    duration: std::time::Duration,
    status: thinlab_trace::status::FlowStatus,
    status_reason: Option<String>,
) -> FlowOutput {
    let mut metrics = flow_metrics(records, duration);
    metrics.status = status;
    metrics.status_reason = status_reason;
    FlowOutput {
        name: name.to_string(),
        metrics,
        app_latency: latency_histogram(records, Milestone::App, Origin::Write),
        app_censored_ms: censored_samples_ms(records, Milestone::App, Origin::Write),
        writes: None,
        series: None,
        sequence: None,
    }
}
