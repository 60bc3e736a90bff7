//! Finished runs and what is made of them.
//!
//! `RunSet`: runs as they come out of `Plan.run`, serializable to bytes (JSON whose numbers
//! read back bit for bit) so that a Ray worker or a campaign's store hands them over exactly.
//! `Tables`: the runs of one plan as the CLI's results — `runs.csv`'s rows and
//! `latency_cdf.csv` as Arrow IPC streams, the per-write rows as an Arrow IPC file,
//! `summary.json`'s text, and the whole result folder written exactly as `thinlab run` writes
//! it.

use crate::errors::{bad_input, to_py};
use crate::plan::PlanData;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::Arc;
use thinlab_cli::output::Results;
use thinlab_cli::runner::RunOutput;

/// Finished runs of one plan.
#[pyclass(frozen, module = "thinlab._native")]
pub struct RunSet {
    pub runs: Vec<RunOutput>,
}

#[pymethods]
impl RunSet {
    /// The runs as bytes ([`RunSet::from_bytes`] reads them back exactly).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        // spilled per-write rows travel in the bytes (the spill file is this process's)
        let spilled: Vec<RunOutput>;
        let runs = if self.runs.iter().any(|r| r.write_spill.is_some()) {
            spilled = self
                .runs
                .iter()
                .map(RunOutput::with_writes_in_memory)
                .collect::<anyhow::Result<_>>()
                .map_err(to_py)?;
            &spilled
        } else {
            &self.runs
        };
        let bytes = serde_json::to_vec(runs)
            .map_err(|e| to_py(anyhow::anyhow!("serializing runs: {e}")))?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<RunSet> {
        let runs = serde_json::from_slice(data)
            .map_err(|e| bad_input(format!("these bytes are not thinlab runs: {e}")))?;
        Ok(RunSet { runs })
    }

    /// `(configuration, repetition)` of every run.
    fn keys(&self) -> Vec<(usize, u32)> {
        self.runs.iter().map(|r| (r.config, r.repetition)).collect()
    }

    /// The runs whose `(configuration, repetition)` is in `keys`, as their own set.
    fn select(&self, keys: Vec<(usize, u32)>) -> RunSet {
        let keys: std::collections::HashSet<_> = keys.into_iter().collect();
        RunSet {
            runs: self
                .runs
                .iter()
                .filter(|r| keys.contains(&(r.config, r.repetition)))
                .cloned()
                .collect(),
        }
    }

    /// The same runs numbered by another plan: `(configuration, repetition)` pairs old → new
    /// (a campaign's stored run reused by a sweep that numbers it differently); runs not in
    /// `mapping` are left out.
    fn relabeled(&self, mapping: Vec<((usize, u32), (usize, u32))>) -> RunSet {
        let by_old: std::collections::HashMap<_, Vec<_>> =
            mapping
                .into_iter()
                .fold(Default::default(), |mut m, (old, new)| {
                    m.entry(old).or_insert_with(Vec::new).push(new);
                    m
                });
        let mut runs = Vec::new();
        for r in &self.runs {
            for &(config, repetition) in by_old.get(&(r.config, r.repetition)).into_iter().flatten()
            {
                let mut r = r.clone();
                r.config = config;
                r.repetition = repetition;
                runs.push(r);
            }
        }
        RunSet { runs }
    }

    fn __len__(&self) -> usize {
        self.runs.len()
    }
}

/// The results of one plan's runs (see the module's documentation).
#[pyclass(frozen, module = "thinlab._native")]
pub struct Tables {
    plan: Arc<PlanData>,
    runs: Vec<RunOutput>,
    complete: bool,
}

impl Tables {
    pub fn new(plan: Arc<PlanData>, runs: Vec<RunOutput>, complete: bool) -> Self {
        Tables {
            plan,
            runs,
            complete,
        }
    }

    fn results(&self) -> Results<'_> {
        Results {
            scenario: &self.plan.prepared.name,
            overrides: &self.plan.overrides,
            configs: &self.plan.prepared.configs,
            runs: &self.runs,
            complete: self.complete,
        }
    }
}

fn ipc<'py>(
    py: Python<'py>,
    batch: anyhow::Result<arrow_array::RecordBatch>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = batch
        .and_then(|b| thinlab_cli::tables::ipc_bytes(&b))
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

#[pymethods]
impl Tables {
    /// `runs.csv`'s rows with typed columns, as an Arrow IPC stream.
    fn runs_ipc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        ipc(py, thinlab_cli::tables::runs_batch(&self.results()))
    }

    /// One row per write of the runs that kept their writes into the uncompressed Arrow IPC
    /// file `path`, a batch at a time (no memory per write); returns the rows written.
    fn write_writes(&self, py: Python<'_>, path: PathBuf) -> PyResult<u64> {
        let results = self.results();
        py.detach(|| {
            use thinlab_cli::tables::{write_writes_ipc_file, IPC_FILE_BATCH_ROWS};
            write_writes_ipc_file(&results, &path, IPC_FILE_BATCH_ROWS)
        })
        .map_err(to_py)
    }

    /// `latency_cdf.csv`'s rows, as an Arrow IPC stream.
    fn cdf_ipc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let results = self.results();
        ipc(py, thinlab_cli::tables::cdf_batch(&results.lines()))
    }

    /// `(configuration, repetition)` of each row of [`Tables::runs_ipc`].
    fn row_runs(&self) -> Vec<(usize, u32)> {
        self.results()
            .flow_rows()
            .map(|(r, _)| (r.config, r.repetition))
            .collect()
    }

    /// `summary.json`'s text.
    fn summary_json(&self) -> PyResult<String> {
        let mut out = Vec::new();
        self.results()
            .write_summary_to(&mut out)
            .map_err(|e| to_py(anyhow::anyhow!("writing the summary: {e}")))?;
        String::from_utf8(out).map_err(|e| to_py(anyhow::anyhow!("the summary: {e}")))
    }

    /// The summary table `thinlab run` prints, and the run-health warnings.
    fn table_text(&self) -> (String, Vec<String>) {
        let results = self.results();
        let problems = thinlab_cli::health::problems(&results);
        (
            thinlab_cli::table::render(&results, &problems),
            thinlab_cli::health::warnings(&results, &problems),
        )
    }

    /// Writes the result folder `out` as `thinlab run` does (`parquet`: also the Parquet
    /// tables; `force`: write into a folder that holds other results) on `threads` threads
    /// (default: the cores; `report.html` is written beside the other files). `planned` is
    /// the number of runs the command planned, for `run.json`.
    #[pyo3(signature = (out, planned, parquet=false, force=false, threads=None))]
    fn write_folder(
        &self,
        py: Python<'_>,
        out: PathBuf,
        planned: usize,
        parquet: bool,
        force: bool,
        threads: Option<usize>,
    ) -> PyResult<()> {
        #[allow(clippy::disallowed_methods)] // run.json reports the wall time of writing
        let started = std::time::Instant::now();
        #[allow(clippy::disallowed_methods)] // run.json reports when the folder was written
        let started_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        py.detach(|| {
            thinlab_cli::folder::prepare(&out, &self.plan.resolved, force)?;
            let mut info = thinlab_cli::folder::RunInfo::new(started_unix_s);
            info.runs_planned = planned;
            thinlab_cli::run::write_folder(
                &out,
                &self.results(),
                &self.plan.prepared,
                &self.plan.resolved,
                parquet,
                thinlab_cli::run::cores(threads),
                info,
                started,
            )
            .map(drop)
        })
        .map_err(to_py)
    }

    fn __len__(&self) -> usize {
        self.runs.len()
    }
}
