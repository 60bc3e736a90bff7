//! `thinlab run`: load the scenario, apply `--set`, expand the sweep, validate every
//! configuration with the simulator's schema (before running anything), run all
//! configurations × repetitions in parallel, write the results and print the summary table.

use crate::args::RunArgs;
use crate::error::{BadInput, Incomplete, Interrupted};
use crate::output::Results;
use crate::paths::{parse_assignment, set_path};
use crate::progress::Progress;
use crate::runner;
use crate::sim::Scenario;
use crate::sweep::{expand, take_sweep, Config};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Reads a scenario file into a TOML document.
pub fn load(path: &Path) -> Result<toml::Value, BadInput> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput::new(format!("cannot read scenario file {}: {e}", path.display())))?;
    toml::from_str::<toml::Table>(&text)
        .map(toml::Value::Table)
        .map_err(|e| {
            BadInput::new(format!(
                "{} is not valid TOML: {}",
                path.display(),
                e.to_string().trim_end()
            ))
        })
}

/// `results/<name>/`, with characters that do not belong in a directory name replaced.
pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from("results").join(clean_name(name))
}

/// `name` with characters that do not belong in a file name replaced by `_`.
pub fn clean_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.trim_matches('.').is_empty() {
        "scenario".to_string()
    } else {
        clean
    }
}

pub fn run(args: RunArgs) -> Result<()> {
    if let Some(address) = &args.ray {
        return match crate::ray_bridge::run(&args, address)? {
            0 => Ok(()),
            code => Err(crate::error::Exit(code).into()),
        };
    }
    let path = &args.scenario;
    let mut doc = load(path)?;
    let sets = args
        .sets
        .iter()
        .map(|s| parse_assignment(s))
        .collect::<Result<Vec<_>, _>>()?;
    for (key, value) in &sets {
        set_override(&mut doc, key, value.clone())
            .map_err(|e| BadInput::new(format!("--set {key}: {e}")))?;
    }
    let backend = crate::emu_backend::take_backend(&mut doc, args.backend.as_deref())?;
    if backend == crate::emu_backend::Backend::Emu {
        return crate::emu_backend::run(&args, doc, &sets);
    }
    #[allow(clippy::disallowed_methods)] // run.json reports the wall time
    let started = std::time::Instant::now();
    #[allow(clippy::disallowed_methods)] // run.json reports when the command started
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let resolved = toml::to_string(&doc).context("writing the resolved scenario as TOML")?;
    let fixed: Vec<String> = sets.iter().map(|(k, _)| k.clone()).collect();
    let prepared = prepare(doc, &fixed, &path.display().to_string())?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&prepared.name));
    let parquet = args.format == crate::args::Format::Parquet;
    let mut jobs = runner::jobs(&prepared.scenarios);
    for j in &mut jobs {
        j.spill_writes = parquet;
        if args.capture || prepared.scenarios[j.config].flows.iter().any(|f| f.capture) {
            let label = clean_name(&prepared.configs[j.config].label());
            j.capture = Some(crate::sim::CaptureOptions {
                dir: out
                    .join("pcap")
                    .join(format!("{label}-rep{}", j.repetition)),
                all_flows: args.capture,
            });
        }
    }
    let threads = threads(args.jobs.map(usize::from), jobs.len());
    let estimate = crate::estimate::estimate(&prepared, &jobs, threads);
    if !args.force {
        crate::estimate::check(&estimate, crate::resources::memory_limit(), jobs.len())?;
    }
    crate::folder::prepare(&out, &resolved, args.force)?;
    crate::interrupt::install();
    let runs = execute(&prepared, &jobs, args.jobs.map(usize::from), args.quiet)?;
    let complete = runs.len() == jobs.len();
    let results = Results {
        scenario: &prepared.name,
        overrides: &sets,
        configs: &prepared.configs,
        runs: &runs,
        complete,
    };
    let mut info = crate::folder::RunInfo::new(started_unix_s);
    info.runs_planned = jobs.len();
    let problems = write_folder(
        &out,
        &results,
        &prepared,
        &resolved,
        parquet,
        cores(args.jobs.map(usize::from)),
        info,
        started,
    )?;
    if !args.quiet {
        print!("{}", crate::table::render(&results, &problems));
        println!(
            "{}; results in {}",
            crate::output::count(runs.len(), "run"),
            out.display()
        );
    }
    for line in crate::health::warnings(&results, &problems) {
        eprintln!("{line}");
    }
    if !complete {
        return Err(Interrupted(format!(
            "interrupted: {} of {} runs finished; their results are in {} (marked \"complete\": false)",
            runs.len(),
            jobs.len(),
            out.display()
        ))
        .into());
    }
    if args.strict && !problems.is_empty() {
        return Err(Incomplete(format!(
            "--strict: {} configuration/flow pair(s) did not complete (results in {})",
            problems.len(),
            out.display()
        ))
        .into());
    }
    Ok(())
}

/// Writes a simulated run's result folder `out` (prepared before with
/// [`crate::folder::prepare`]): the result files, the Parquet tables if `parquet`, the
/// resolved scenario, `run.json` (`info`, completed here from `results` and the wall time since
/// `started`) and `report.html`, the last on a thread of its own beside the others when
/// `threads` > 1 and the results are large. Returns the run-health problems.
#[allow(clippy::too_many_arguments)]
pub fn write_folder(
    out: &Path,
    results: &Results,
    prepared: &Prepared,
    resolved: &str,
    parquet: bool,
    threads: usize,
    mut info: crate::folder::RunInfo,
    started: std::time::Instant,
) -> Result<Vec<crate::health::Problem>> {
    let problems = crate::health::problems(results);
    // Before the two threads below: `report.html` may be written before the result files'
    // thread has created the folder (a sweep of 200 small runs failed so, once, in CI).
    std::fs::create_dir_all(out)
        .with_context(|| format!("creating the output directory {}", out.display()))?;
    // A thread pays off only for large results (docs/performance/thin-stream.md).
    let flows: usize = results.runs.iter().map(|r| r.flows.len()).sum();
    let threads = if flows >= 16 { threads } else { 1 };
    let lines = results.lines_on(threads);
    let files = || -> Result<()> {
        results.write_with_lines(out, &lines)?;
        if parquet {
            crate::parquet_out::write_results(out, results, resolved)?;
        }
        crate::folder::write_resolved(out, resolved)?;
        info.runs_finished = results.runs.len();
        info.complete = results.complete;
        info.wall_time_s = started.elapsed().as_secs_f64();
        info.write(out)
    };
    let report = || {
        let reruns = crate::report_html::write_series::SimReruns::new(&prepared.scenarios);
        let lines = Some(lines.as_slice());
        crate::report_html::write_run(out, results, &problems, resolved, Some(&reruns), lines)
    };
    let (files, report) = crate::in_order::join(threads > 1, files, report);
    files?;
    report?;
    Ok(problems)
}

/// The threads a command may use: `requested` (`--jobs`), else the available cores.
pub fn cores(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(available_cores).max(1)
}

/// The cores this process may use, asked of the system once: each asking reads the cgroup's
/// CPU quota (three files, about 20 system calls in all), and `thinlab run` asked three times.
pub fn available_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A scenario document expanded into its sweep configurations, each validated.
pub struct Prepared {
    /// The scenario's `name`.
    pub name: String,
    pub configs: Vec<Config>,
    /// One validated scenario per configuration.
    pub scenarios: Vec<Scenario>,
}

/// Expands `doc`'s `[sweep]` (keys in `fixed` are left out of it) and validates every
/// configuration before anything runs; `origin` names the document in error messages.
pub fn prepare(doc: toml::Value, fixed: &[String], origin: &str) -> Result<Prepared> {
    prepare_each(doc, fixed, origin, |_| Ok(())).map(|(p, _)| p)
}

/// [`prepare`], with `each` called on every configuration's document before the simulator's
/// schema validates it (the emulator takes its own keys out there); returns what it returned
/// per configuration.
pub fn prepare_each<T>(
    mut doc: toml::Value,
    fixed: &[String],
    origin: &str,
    mut each: impl FnMut(&mut toml::Value) -> Result<T>,
) -> Result<(Prepared, Vec<T>)> {
    let configs = expand(&take_sweep(&mut doc, fixed)?);
    let mut scenarios = Vec::with_capacity(configs.len());
    let mut extra = Vec::with_capacity(configs.len());
    for c in &configs {
        let mut value = c.apply(&doc)?;
        extra.push(each(&mut value)?);
        let where_ = if c.params.is_empty() {
            origin.to_string()
        } else {
            format!("{origin} with {}", c.label())
        };
        scenarios
            .push(Scenario::from_toml(value).with_context(|| format!("bad scenario {where_}"))?);
    }
    let name = scenarios
        .first()
        .map_or("scenario", |s| s.name.as_str())
        .to_string();
    Ok((
        Prepared {
            name,
            configs,
            scenarios,
        },
        extra,
    ))
}

/// Worker threads for `jobs` runs: `requested`, else the available cores; at most one per run.
pub fn threads(requested: Option<usize>, jobs: usize) -> usize {
    cores(requested).min(jobs.max(1))
}

/// Runs `jobs` on `threads` worker threads (default: available cores) with a progress bar
/// unless `quiet`; results in job order.
pub fn execute(
    prepared: &Prepared,
    jobs: &[runner::Job],
    threads: Option<usize>,
    quiet: bool,
) -> Result<Vec<runner::RunOutput>> {
    let threads = cores(threads);
    let total: Duration = jobs
        .iter()
        .map(|j| prepared.scenarios[j.config].duration)
        .sum();
    let progress = Progress::new(total, jobs.len(), quiet);
    let runs = runner::run_all(&prepared.scenarios, jobs, threads, &progress);
    progress.finish();
    runs
}

/// `--set KEY=VALUE`. A key under `sweep.` names one sweep axis by its dotted key, so
/// `--set sweep.flow.0.tcp.delayed_ack=[off]` replaces the file's
/// `[sweep] "flow.0.tcp.delayed_ack" = [...]` instead of adding a second, nested axis.
pub fn set_override(doc: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), String> {
    match key.strip_prefix("sweep.") {
        Some(axis) if !axis.is_empty() => {
            let table = doc
                .as_table_mut()
                .ok_or("the scenario must be a TOML table")?;
            let sweep = table
                .entry("sweep")
                .or_insert_with(|| toml::Value::Table(Default::default()));
            let sweep = sweep
                .as_table_mut()
                .ok_or("`sweep` must be a table of dotted keys with lists of values")?;
            sweep.insert(axis.to_string(), value);
            Ok(())
        }
        _ => set_path(doc, key, value).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_out_is_a_clean_directory_name() {
        assert_eq!(
            default_out("quickstart"),
            PathBuf::from("results/quickstart")
        );
        assert_eq!(default_out("../x y"), PathBuf::from("results/.._x_y"));
        assert_eq!(default_out(".."), PathBuf::from("results/scenario"));
        assert_eq!(default_out(""), PathBuf::from("results/scenario"));
    }
}
