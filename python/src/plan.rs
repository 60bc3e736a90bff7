//! `Plan`: a scenario (a file, TOML text or a table) with its overrides applied and its sweep
//! expanded, every configuration validated before anything runs — exactly `thinlab run`'s
//! steps (`thinlab_cli::run::prepare`), so the jobs and their seeds are the CLI's. `Plan.run`
//! runs some or all of its jobs on a thread pool with the GIL released, reports progress to a
//! Python callback, and stops starting runs at Ctrl-C (KeyboardInterrupt), returning the runs
//! that finished.

use crate::errors::{bad_input, to_py};
use crate::runs::{RunSet, Tables};
use pyo3::prelude::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use thinlab_cli::progress::Progress;
use thinlab_cli::run::{prepare, set_override, Prepared};
use thinlab_cli::runner::{self, Job};

/// What every table and folder of a plan needs.
pub struct PlanData {
    pub prepared: Prepared,
    pub overrides: Vec<(String, toml::Value)>,
    /// The scenario after the overrides, sweep included (`scenario.resolved.toml`).
    pub resolved: String,
    /// The scenario after the overrides, without its sweep: each configuration applies its
    /// values to it.
    base: toml::Value,
}

/// A scenario ready to run (see the module's documentation).
#[pyclass(frozen, module = "thinlab._native")]
pub struct Plan {
    pub data: Arc<PlanData>,
}

/// `value` as TOML: JSON strings are read as the CLI reads `--set` values (TOML, bare words
/// are strings), everything else converts as it is.
fn toml_value(key: &str, value: serde_json::Value) -> PyResult<toml::Value> {
    match value {
        serde_json::Value::String(s) => Ok(thinlab_cli::paths::parse_value(&s)),
        serde_json::Value::Null => Err(bad_input(format!(
            "override {key} = None: expected a value (TOML has no null)"
        ))),
        other => toml::Value::try_from(&other)
            .map_err(|e| bad_input(format!("override {key} = {other}: {e}"))),
    }
}

#[pymethods]
impl Plan {
    /// Loads `scenario` — a file path (`is_path`), TOML text, or JSON text of a table
    /// (`is_json`) — applies `overrides_json` (a JSON list of `[key, value]` pairs, the CLI's
    /// `--set` keys) and expands the sweep.
    #[staticmethod]
    #[pyo3(signature = (scenario, is_path, is_json, overrides_json))]
    fn load(scenario: &str, is_path: bool, is_json: bool, overrides_json: &str) -> PyResult<Plan> {
        let (mut doc, origin) = if is_path {
            let path = Path::new(scenario);
            let doc = thinlab_cli::run::load(path).map_err(|e| to_py(e.into()))?;
            (doc, path.display().to_string())
        } else if is_json {
            let json: serde_json::Value = serde_json::from_str(scenario)
                .map_err(|e| bad_input(format!("the scenario table: {e}")))?;
            let doc = toml::Value::try_from(&json)
                .map_err(|e| bad_input(format!("the scenario table: {e}")))?;
            (doc, "the scenario table".to_string())
        } else {
            let doc = toml::from_str::<toml::Table>(scenario)
                .map(toml::Value::Table)
                .map_err(|e| {
                    bad_input(format!(
                        "the scenario text is not valid TOML: {}",
                        e.to_string().trim_end()
                    ))
                })?;
            (doc, "the scenario text".to_string())
        };
        let pairs: Vec<(String, serde_json::Value)> = serde_json::from_str(overrides_json)
            .map_err(|e| bad_input(format!("overrides: {e}")))?;
        let mut overrides = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            let value = toml_value(&key, value)?;
            set_override(&mut doc, &key, value.clone())
                .map_err(|e| bad_input(format!("override {key}: {e}")))?;
            overrides.push((key, value));
        }
        let backend =
            thinlab_cli::emu_backend::take_backend(&mut doc, None).map_err(|e| to_py(e.into()))?;
        if backend == thinlab_cli::emu_backend::Backend::Emu {
            return Err(bad_input(
                "backend = \"emu\": the Python API runs the simulator; run emulations with \
                 `thinlab run --backend emu` (needs root)",
            ));
        }
        let resolved = toml::to_string(&doc)
            .map_err(|e| bad_input(format!("the scenario cannot be written as TOML: {e}")))?;
        let mut base = doc.clone();
        if let Some(t) = base.as_table_mut() {
            t.remove("sweep");
        }
        let fixed: Vec<String> = overrides.iter().map(|(k, _)| k.clone()).collect();
        let prepared = prepare(doc, &fixed, &origin).map_err(to_py)?;
        Ok(Plan {
            data: Arc::new(PlanData {
                prepared,
                overrides,
                resolved,
                base,
            }),
        })
    }

    /// The scenario's name.
    #[getter]
    fn name(&self) -> String {
        self.data.prepared.name.clone()
    }

    /// Where `thinlab run` writes by default: `results/<name>`.
    #[getter]
    fn default_out(&self) -> String {
        thinlab_cli::run::default_out(&self.data.prepared.name)
            .display()
            .to_string()
    }

    /// The scenario after the overrides, as TOML (its sweep included).
    #[getter]
    fn resolved(&self) -> String {
        self.data.resolved.clone()
    }

    /// Every job as `(configuration, repetition, seed)`, in the CLI's order.
    fn jobs(&self) -> Vec<(usize, u32, u64)> {
        runner::jobs(&self.data.prepared.scenarios)
            .iter()
            .map(|j| (j.config, j.repetition, j.seed))
            .collect()
    }

    /// Configuration `config` as a complete TOML scenario without its sweep, `seed` and
    /// `repetitions` (keys sorted): with a job's seed and thinlab's version, what identifies
    /// the job's result.
    fn config_text(&self, config: usize) -> PyResult<String> {
        let c = self.config(config)?;
        let mut doc = c.apply(&self.data.base).map_err(|e| to_py(e.into()))?;
        if let Some(t) = doc.as_table_mut() {
            t.remove("seed");
            t.remove("repetitions");
        }
        toml::to_string(&doc).map_err(|e| bad_input(format!("configuration {config}: {e}")))
    }

    /// Configuration `config`'s label (`key=value, …`, or `default`).
    fn config_label(&self, config: usize) -> PyResult<String> {
        Ok(self.config(config)?.label())
    }

    /// Runs the jobs numbered `indices` (all when None) on `threads` threads (default: the
    /// cores), keeping every write's milestones in a temporary file if `keep_writes`, unless
    /// the memory estimate says they cannot fit (`force` runs anyway). `progress(runs_done, runs, fraction)` is
    /// called about ten times a second. Returns the finished runs and whether Ctrl-C stopped
    /// the command early.
    #[pyo3(signature = (indices=None, threads=None, keep_writes=false, force=false, progress=None))]
    fn run(
        &self,
        py: Python<'_>,
        indices: Option<Vec<usize>>,
        threads: Option<usize>,
        keep_writes: bool,
        force: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(RunSet, bool)> {
        let prepared = &self.data.prepared;
        let all = runner::jobs(&prepared.scenarios);
        let n = all.len();
        let mut selected: Vec<Job> = match indices {
            None => all,
            Some(idx) => {
                if let Some(bad) = idx.iter().find(|&&i| i >= n) {
                    return Err(bad_input(format!(
                        "job {bad}: expected a job number below {n}"
                    )));
                }
                let mut keep = vec![false; n];
                idx.iter().for_each(|&i| keep[i] = true);
                all.into_iter()
                    .zip(keep)
                    .filter_map(|(j, k)| k.then_some(j))
                    .collect()
            }
        };
        for j in &mut selected {
            // kept in a temporary file, not in memory (`RunSet::to_bytes` reads them back)
            j.spill_writes = keep_writes;
        }
        // As `thinlab run`: the estimate counts the runs at once (at most one per thread);
        // the runner gets every thread asked for (a lone run computes its metrics on them).
        let cores = thinlab_cli::run::cores(threads);
        if !force {
            let at_once = thinlab_cli::run::threads(threads, selected.len());
            let estimate = thinlab_cli::estimate::estimate(prepared, &selected, at_once);
            thinlab_cli::estimate::check(
                &estimate,
                thinlab_cli::resources::memory_limit(),
                selected.len(),
            )
            .map_err(|e| to_py(e.into()))?;
        }
        let total: Duration = selected
            .iter()
            .map(|j| prepared.scenarios[j.config].duration)
            .sum();
        let bar = Progress::new(total, selected.len(), true);
        thinlab_cli::interrupt::reset();
        let outcome = py.detach(|| {
            std::thread::scope(|scope| {
                let (finished, done_rx) = std::sync::mpsc::channel::<()>();
                let (jobs, bar_ref) = (&selected, &bar);
                let worker = scope.spawn(move || {
                    let runs = runner::run_all(&prepared.scenarios, jobs, cores, bar_ref);
                    let _ = finished.send(());
                    runs
                });
                let mut stop: Option<PyErr> = None;
                // Wake at once when the runs are done, else ten times a second for Ctrl-C
                // and the progress callback.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    done_rx.recv_timeout(Duration::from_millis(100))
                {
                    let (done, fraction) = bar.done();
                    let err = Python::attach(|py| {
                        py.check_signals()?;
                        if let Some(cb) = &progress {
                            cb.call1(py, (done, selected.len(), fraction))?;
                        }
                        Ok::<(), PyErr>(())
                    });
                    if let Err(e) = err {
                        // no new run starts; the runs under way finish
                        thinlab_cli::interrupt::request();
                        stop.get_or_insert(e);
                    }
                }
                let runs = worker
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a worker thread panicked")));
                (runs, stop)
            })
        });
        thinlab_cli::interrupt::reset();
        let (runs, stop) = outcome;
        let runs = runs.map_err(to_py)?;
        match stop {
            Some(e)
                if !Python::attach(|py| {
                    e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
                }) =>
            {
                Err(e)
            }
            Some(_) => Ok((RunSet { runs }, true)),
            None => {
                if let Some(cb) = &progress {
                    cb.call1(py, (selected.len(), selected.len(), 1.0))?;
                }
                Ok((RunSet { runs }, false))
            }
        }
    }

    /// The result tables of `runs` (from this plan, in any order, from any process);
    /// `complete` says every planned run is among them.
    fn tables(&self, runs: Vec<PyRef<'_, RunSet>>, complete: bool) -> Tables {
        let mut all: Vec<_> = runs.iter().flat_map(|r| r.runs.iter().cloned()).collect();
        all.sort_by_key(|r| (r.config, r.repetition));
        all.dedup_by_key(|r| (r.config, r.repetition));
        Tables::new(self.data.clone(), all, complete)
    }
}

impl Plan {
    fn config(&self, config: usize) -> PyResult<&thinlab_cli::sweep::Config> {
        let configs = &self.data.prepared.configs;
        configs.get(config).ok_or_else(|| {
            bad_input(format!(
                "configuration {config}: expected a number below {}",
                configs.len()
            ))
        })
    }
}
