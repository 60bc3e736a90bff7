//! What a study runs with: the mode (`--quick` or full), the output directory, the worker
//! threads, and [`Ctx::run_file`], which runs one scenario document (with its `[sweep]`) exactly as
//! `thinlab run` would and keeps the per-run outputs for the study to read through [`Ran`].

use super::ScenarioFile;
use crate::output::Results;
use crate::run::{execute, prepare};
use crate::runner::{self, FlowOutput, RunOutput};
use crate::sweep::Config;
use anyhow::{anyhow, Context, Result};
use std::path::PathBuf;
use thinlab_trace::FlowMetrics;
use toml::Value;

/// The running context of one study.
pub struct Ctx {
    pub quick: bool,
    pub out: PathBuf,
    threads: Option<usize>,
    quiet: bool,
    runs_done: usize,
    started: std::time::Instant,
}

impl Ctx {
    pub fn new(quick: bool, out: PathBuf, threads: Option<usize>, quiet: bool) -> Self {
        #[allow(clippy::disallowed_methods)] // the report states how long the study took
        let started = std::time::Instant::now();
        Ctx {
            quick,
            out,
            threads,
            quiet,
            runs_done: 0,
            started,
        }
    }

    /// Wall time since the study started, s.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    pub fn runs_done(&self) -> usize {
        self.runs_done
    }

    /// Worker threads used (for the report).
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(crate::run::available_cores)
    }

    /// The figure path `out/NAME` and its relative link for the report.
    pub fn figure_path(&self, name: &str) -> (PathBuf, String) {
        (self.out.join(name), name.to_string())
    }

    /// Runs scenario `file` after applying `sets` (dotted keys as for `--set`, `sweep.KEY`
    /// naming one sweep axis), and writes its `runs.csv` into `out/data/PART/`.
    pub fn run_file(
        &mut self,
        part: &str,
        file: &ScenarioFile,
        sets: &[(&str, Value)],
    ) -> Result<Ran> {
        self.run_part(part, file, sets, false)
    }

    /// [`Ctx::run_file`], keeping every write's milestones in the outputs (`FlowOutput::writes`):
    /// for metrics the summary does not have, such as transport-layer quantiles beyond p99.9.
    pub fn run_file_keeping_writes(
        &mut self,
        part: &str,
        file: &ScenarioFile,
        sets: &[(&str, Value)],
    ) -> Result<Ran> {
        self.run_part(part, file, sets, true)
    }

    fn run_part(
        &mut self,
        part: &str,
        file: &ScenarioFile,
        sets: &[(&str, Value)],
        keep_writes: bool,
    ) -> Result<Ran> {
        let mut doc: Value = toml::from_str::<toml::Table>(file.text)
            .map(Value::Table)
            .with_context(|| format!("the scenario of part {part} is not valid TOML"))?;
        for (k, v) in sets {
            crate::run::set_override(&mut doc, k, v.clone())
                .map_err(|e| anyhow!("part {part}: setting {k}: {e}"))?;
        }
        let mut command = format!("thinlab run {}", file.path);
        for (k, v) in sets {
            command += &format!(" --set '{k}={}'", v);
        }
        let resolved = toml::to_string(&doc).context("writing the resolved scenario as TOML")?;
        let prepared = prepare(doc, &[], &format!("reproduce part {part}"))?;
        let mut jobs = runner::jobs(&prepared.scenarios);
        for j in &mut jobs {
            j.keep_writes = keep_writes;
        }
        if !self.quiet {
            eprintln!("  {part}: {} runs", jobs.len());
        }
        let runs = execute(&prepared, &jobs, self.threads, self.quiet)?;
        self.runs_done += runs.len();
        let dir = self.out.join("data").join(part);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let results = Results {
            scenario: &prepared.name,
            overrides: &[],
            configs: &prepared.configs,
            runs: &runs,
            complete: true,
        };
        results.write_runs_csv(&dir.join("runs.csv"))?;
        // The part's report.html, as `thinlab run` writes one but without the per-write series
        // (rerunning the worst write of each part would make `reproduce all` several times
        // slower; `thinlab run` on the part's command draws them).
        let problems = crate::health::problems(&results);
        crate::report_html::write_run(&dir, &results, &problems, &resolved, None, None)?;
        Ok(Ran {
            part: part.to_string(),
            command,
            configs: prepared.configs,
            runs,
        })
    }
}

/// A (dotted key, value) pair for [`Ran::find`] and [`Ctx::run_file`].
pub fn p(key: &str, value: impl Into<Value>) -> (String, Value) {
    (key.to_string(), value.into())
}

/// The outputs of one part: every configuration of its sweep, every repetition.
pub struct Ran {
    pub part: String,
    /// The `thinlab run` command line that reruns this part.
    pub command: String,
    pub configs: Vec<Config>,
    pub runs: Vec<RunOutput>,
}

impl Ran {
    /// The configuration whose swept values include all of `params`.
    pub fn find(&self, params: &[(String, Value)]) -> Result<usize> {
        self.configs
            .iter()
            .position(|c| {
                params
                    .iter()
                    .all(|(k, v)| c.params.iter().any(|(ck, cv)| ck == k && same(cv, v)))
            })
            .ok_or_else(|| {
                let want: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                anyhow!(
                    "part {}: no configuration with {}",
                    self.part,
                    want.join(", ")
                )
            })
    }

    /// The outputs of flow `flow` in every repetition of configuration `config`.
    pub fn flows(&self, config: usize, flow: usize) -> impl Iterator<Item = &FlowOutput> {
        self.runs
            .iter()
            .filter(move |r| r.config == config)
            .filter_map(move |r| r.flows.get(flow))
    }

    /// One value per repetition.
    pub fn values(&self, config: usize, flow: usize, f: impl Fn(&FlowMetrics) -> f64) -> Vec<f64> {
        self.flows(config, flow).map(|o| f(&o.metrics)).collect()
    }

    /// The mean over repetitions (NaN when there is none).
    pub fn mean(&self, config: usize, flow: usize, f: impl Fn(&FlowMetrics) -> f64) -> f64 {
        mean(&self.values(config, flow, f))
    }

    /// Application-latency samples of every repetition, pooled.
    pub fn pooled_latency(&self, config: usize, flow: usize) -> Vec<f64> {
        self.flows(config, flow)
            .flat_map(|o| o.app_latency.samples_ms())
            .collect()
    }

    /// Per-run outputs of configuration `config` (all flows), in repetition order.
    pub fn runs_of(&self, config: usize) -> impl Iterator<Item = &RunOutput> {
        self.runs.iter().filter(move |r| r.config == config)
    }
}

/// Equal as scenario values: numbers compare by value whether written as integer or float.
fn same(a: &Value, b: &Value) -> bool {
    match (
        a.as_float().or(a.as_integer().map(|i| i as f64)),
        b.as_float().or(b.as_integer().map(|i| i as f64)),
    ) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The arithmetic mean; NaN for no values.
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}
