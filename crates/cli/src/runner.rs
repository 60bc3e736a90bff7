//! Runs every (configuration, repetition) in parallel on a rayon pool and keeps, per flow,
//! the metrics and the exact application-latency histogram (the records themselves are
//! dropped; memory does not grow with the number of writes).

use crate::progress::Progress;
use crate::report_html::write_series::Sequence;
use crate::sim::{self, Scenario};
use crate::write_rows::WriteRow;
use crate::write_spill::{WriteSpill, WriteStore};
use anyhow::{anyhow, Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use thinlab_trace::histogram::LatencyHistogram;
use thinlab_trace::series::LatencySeries;
use thinlab_trace::{flow_metrics_and_app_latency, FlowMetrics};

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

/// Writes, over all of a run's flows, from which a lone run computes its flows' metrics on
/// several threads.
const PARALLEL_METRICS_WRITES: u64 = 4096;

/// Runs all jobs on `threads` threads (at most one per job); results in job order. A single
/// run uses them for what follows its simulation (its flows' metrics).
pub fn run_all(
    scenarios: &[Scenario],
    jobs: &[Job],
    threads: usize,
    progress: &Progress,
) -> Result<Vec<RunOutput>> {
    // After Ctrl-C no new run starts; the finished ones are returned (fewer than `jobs`).
    let worst = WorstSequences::default();
    let store = WriteStore::default();
    let single = jobs.len() <= 1 || threads <= 1;
    // A lone run may spread its flows' metrics over the threads; runs in a pool keep to theirs.
    let output_threads = if jobs.len() <= 1 { threads } else { 1 };
    let one = |(index, job): (usize, &Job)| -> Result<Option<RunOutput>> {
        if crate::interrupt::interrupted() {
            return Ok(None);
        }
        let mut out = run_one(
            &scenarios[job.config],
            job,
            progress,
            &store,
            output_threads,
        )?;
        worst.offer(index, &mut out);
        Ok(Some(out))
    };
    let mut runs: Vec<Option<RunOutput>> = if single {
        // No pool to start (and stop) for one run: the thin-stream benchmark's process
        // spent 0.4 of its 9.3 ms of CPU on it (docs/performance/many-flows.md).
        jobs.iter().enumerate().map(one).collect::<Result<_>>()?
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.min(jobs.len()))
            .build()
            .context("starting the worker threads")?;
        pool.install(|| jobs.par_iter().enumerate().map(one).collect::<Result<_>>())?
    };
    worst.restore(&mut runs);
    Ok(runs.into_iter().flatten().collect())
}

/// The sequence graphs the runs traced, kept only for the repetition `report.html` draws: per
/// (configuration, flow), the run whose worst delivered write is the worst (the last in job
/// order among equals, as the report chooses). Memory for them does not grow with the number of
/// repetitions.
#[derive(Default)]
struct WorstSequences(std::sync::Mutex<HashMap<(usize, usize), WorstSequence>>);

struct WorstSequence {
    max_ms: f64,
    job: usize,
    sequence: Sequence,
}

impl WorstSequences {
    /// Takes the sequences out of job `job`'s output, keeping those of flows where it is the
    /// worst run so far.
    fn offer(&self, job: usize, out: &mut RunOutput) {
        let mut best = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for (flow, f) in out.flows.iter_mut().enumerate() {
            let Some(sequence) = f.sequence.take() else {
                continue;
            };
            let max_ms = f.metrics.app_latency_ms.max.unwrap_or(f64::MIN);
            let key = (out.config, flow);
            let wins = best.get(&key).is_none_or(|b| {
                b.max_ms.total_cmp(&max_ms).then(b.job.cmp(&job)) == std::cmp::Ordering::Less
            });
            if wins {
                best.insert(
                    key,
                    WorstSequence {
                        max_ms,
                        job,
                        sequence,
                    },
                );
            }
        }
    }

    /// Puts the kept sequences back into their runs (`runs[job]`; `None` for a job that did
    /// not run).
    fn restore(self, runs: &mut [Option<RunOutput>]) {
        let best = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        for ((_, flow), w) in best {
            let run = runs.get_mut(w.job).and_then(Option::as_mut);
            if let Some(f) = run.and_then(|r| r.flows.get_mut(flow)) {
                f.sequence = Some(w.sequence);
            }
        }
    }
}

/// One run; its spilled rows, if any, go to `store` when it ends.
fn run_one(
    scenario: &Scenario,
    job: &Job,
    progress: &Progress,
    store: &WriteStore,
    output_threads: usize,
) -> Result<RunOutput> {
    let mut tracker = progress.run(scenario.duration);
    #[allow(clippy::disallowed_methods)] // timing.json reports the simulate-only wall time
    let started = std::time::Instant::now();
    let spill = job
        .spill_writes
        .then(|| WriteSpill::new(scenario.flows.len()));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut sinks = spill.as_ref().map(|s| move |f| s.sink(f));
        let keep = sim::Keep {
            series_flows: &job.series_flows,
            series_points: crate::report_html::write_series::SERIES_POINTS,
            // A run keeping every write never forgets one, so its log would only grow until it
            // gave up: the report traces its window with a rerun.
            worst_window: (!job.keep_writes)
                .then_some(crate::report_html::write_series::SEQUENCE_WINDOW),
            write_sinks: sinks
                .as_mut()
                .map(|s| s as &mut dyn FnMut(usize) -> thinlab_trace::WriteSink),
            all_writes: job.keep_writes,
            // A lone run with a core to spare builds its latency histograms there.
            histograms_on_thread: output_threads > 1,
        };
        let on_progress = &mut |now| tracker.at(now);
        match &job.capture {
            Some(opts) => sim::run_captured_keeping(scenario, job.seed, opts, keep, on_progress)
                .with_context(|| format!("writing captures into {}", opts.dir.display())),
            None => Ok(sim::run_keeping(scenario, job.seed, keep, on_progress)),
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
        s.finish(store)?;
    }
    tracker.done();
    // Threads pay off only when there is enough to compute (docs/performance/thin-stream.md).
    let writes: u64 = result.flows.iter().map(|f| f.records.write_count()).sum();
    let threads = if writes >= PARALLEL_METRICS_WRITES {
        output_threads
    } else {
        1
    };
    let flows = crate::in_order::map_in_order(&result.flows, threads, |f| {
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
    });
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

impl RunOutput {
    /// The same run with its spilled per-write rows ([`RunOutput::write_spill`]) read into
    /// [`FlowOutput::writes`], for handing the run to another process (the spill file is this
    /// process's). A run without a spill is returned as it is.
    pub fn with_writes_in_memory(&self) -> Result<RunOutput> {
        let mut run = self.clone();
        if let Some(spill) = run.write_spill.take() {
            for (flow, f) in run.flows.iter_mut().enumerate() {
                let mut rows = Vec::new();
                spill.for_each_chunk(flow, |chunk| {
                    rows.extend_from_slice(chunk);
                    Ok(())
                })?;
                f.writes = Some(rows);
            }
        }
        Ok(run)
    }
}

/// A flow's results from its delivery records, the same for every backend.
pub fn flow_output(
    name: &str,
    records: &thinlab_trace::FlowRecords,
    duration: std::time::Duration,
    status: thinlab_trace::status::FlowStatus,
    status_reason: Option<String>,
) -> FlowOutput {
    let (mut metrics, app_latency, app_censored_ms) =
        flow_metrics_and_app_latency(records, duration);
    metrics.status = status;
    metrics.status_reason = status_reason;
    FlowOutput {
        name: name.to_string(),
        metrics,
        app_latency,
        app_censored_ms,
        writes: None,
        series: None,
        sequence: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence(tag: u64) -> Sequence {
        Sequence {
            from_ms: 0.0,
            to_ms: 1.0,
            write_ms: 0.0,
            latency_ms: 0.0,
            end: tag,
            categories: Vec::new(),
            points: Vec::new(),
            sacks: Vec::new(),
        }
    }

    /// A run of configuration `config` whose one flow's worst write took `max_ms`, with a
    /// sequence tagged `tag`.
    fn run(config: usize, max_ms: Option<f64>, tag: u64) -> RunOutput {
        let mut flow = flow_output(
            "f",
            &thinlab_trace::FlowRecords::default(),
            std::time::Duration::ZERO,
            thinlab_trace::status::FlowStatus::Completed,
            None,
        );
        flow.metrics.app_latency_ms.max = max_ms;
        flow.sequence = Some(sequence(tag));
        RunOutput {
            config,
            repetition: 0,
            seed: 0,
            flows: vec![flow],
            end_time_s: 0.0,
            events_processed: 0,
            drain_bound_hit: false,
            dropped_loss: 0,
            dropped_queue: 0,
            sim_wall_s: 0.0,
            emu: None,
            write_spill: None,
        }
    }

    #[test]
    fn only_the_worst_repetition_keeps_its_sequence() {
        // Jobs finish out of order; configuration 0: job 2 is the worst (a tie with job 0,
        // later in job order wins, as the report's `max_by` does); configuration 1: job 3 (the
        // other has no delivered write).
        let worst = WorstSequences::default();
        let mut runs: Vec<Option<RunOutput>> = vec![
            Some(run(0, Some(9.0), 0)),
            Some(run(0, Some(3.0), 1)),
            Some(run(0, Some(9.0), 2)),
            Some(run(1, Some(1.0), 3)),
            Some(run(1, None, 4)),
            None,
        ];
        for job in [2, 4, 0, 3, 1] {
            worst.offer(job, runs[job].as_mut().unwrap());
        }
        worst.restore(&mut runs);
        let kept: Vec<Option<u64>> = runs
            .iter()
            .map(|r| {
                r.as_ref()
                    .and_then(|r| r.flows[0].sequence.as_ref().map(|s| s.end))
            })
            .collect();
        assert_eq!(kept, vec![None, None, Some(2), Some(3), None, None]);
    }
}
