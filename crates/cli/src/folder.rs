//! Result folders that describe themselves (docs/scenarios.md, "Result folders"): each holds
//! `scenario.resolved.toml` (the scenario after `--set`, with its `[sweep]`, runnable as is)
//! and `run.json` (thinlab's version and git commit, the command line, the wall time, whether
//! every run finished). Before a run writes into a folder:
//! - a missing or empty folder is used as is;
//! - a thinlab result folder (it has `run.json` or `summary.json`) is overwritten when its
//!   resolved scenario is the same (or it predates `scenario.resolved.toml`); its files from
//!   the earlier run — every name thinlab writes, `pcap/` included — are removed first. A
//!   different resolved scenario needs `--force`;
//! - any other non-empty folder needs `--force` (and nothing in it is removed).

use crate::error::BadInput;
use anyhow::{Context, Result};
use serde::Serialize;
use std::fs;
use std::path::Path;

/// Files and folders `thinlab run` writes (removed before a rerun into the same folder).
pub const OUTPUTS: [&str; 10] = [
    "summary.json",
    "report.html",
    "runs.csv",
    "latency_cdf.csv",
    "latency_cdf.svg",
    "latency_ccdf.svg",
    "timing.json",
    "run.json",
    "scenario.resolved.toml",
    "pcap",
];

/// Checks that `dir` may take the results of the scenario `resolved` and removes the files of
/// an earlier run there.
pub fn prepare(dir: &Path, resolved: &str, force: bool) -> Result<()> {
    let entries: Vec<String> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            if dir.is_file() {
                return Err(BadInput::new(format!(
                    "--out {}: is a file; expected a folder for the results",
                    dir.display()
                ))
                .into());
            }
            return Err(e).with_context(|| format!("reading the output folder {}", dir.display()));
        }
    };
    if entries.is_empty() {
        return Ok(());
    }
    let is_result = entries
        .iter()
        .any(|e| e == "run.json" || e == "summary.json");
    if !is_result {
        if force {
            return Ok(());
        }
        return Err(BadInput::new(format!(
            "--out {}: the folder is not empty and holds no thinlab results ({} entries, e.g. {:?}); \
             expected an empty or new folder, or --force to write into it",
            dir.display(),
            entries.len(),
            entries[0]
        ))
        .into());
    }
    if let Ok(old) = fs::read_to_string(dir.join("scenario.resolved.toml")) {
        if old != resolved && !force {
            return Err(BadInput::new(format!(
                "--out {}: holds the results of a different scenario (see its scenario.resolved.toml); \
                 expected a new folder, or --force to replace them",
                dir.display()
            ))
            .into());
        }
    }
    for name in OUTPUTS {
        let p = dir.join(name);
        let r = if p.is_dir() {
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
        match r {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", p.display())),
        }
    }
    Ok(())
}

/// `run.json`.
#[derive(Serialize)]
pub struct RunInfo {
    pub thinlab_version: &'static str,
    pub git_commit: &'static str,
    /// The command line, one element per argument.
    pub command_line: Vec<String>,
    /// Unix time the command started, s.
    pub started_unix_s: u64,
    /// Wall time from start to the results written, s.
    pub wall_time_s: f64,
    /// Runs finished / planned; `complete` is false after Ctrl-C.
    pub runs_finished: usize,
    pub runs_planned: usize,
    pub complete: bool,
}

impl RunInfo {
    pub fn new(started_unix_s: u64) -> Self {
        RunInfo {
            thinlab_version: env!("CARGO_PKG_VERSION"),
            git_commit: env!("THINLAB_GIT_COMMIT"),
            command_line: std::env::args().collect(),
            started_unix_s,
            wall_time_s: 0.0,
            runs_finished: 0,
            runs_planned: 0,
            complete: true,
        }
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join("run.json");
        let mut text = serde_json::to_string_pretty(self).context("serializing run.json")?;
        text.push('\n');
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    }
}

/// Writes the resolved scenario.
pub fn write_resolved(dir: &Path, resolved: &str) -> Result<()> {
    let path = dir.join("scenario.resolved.toml");
    fs::write(&path, resolved).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_checked_and_cleaned() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("r");
        prepare(&d, "a", false).unwrap(); // missing
        fs::create_dir(&d).unwrap();
        prepare(&d, "a", false).unwrap(); // empty
        fs::write(d.join("notes.txt"), "mine").unwrap();
        let e = prepare(&d, "a", false).unwrap_err().to_string();
        assert!(e.contains("not empty") && e.contains("--force"), "{e}");
        prepare(&d, "a", true).unwrap();
        assert!(d.join("notes.txt").exists());
        // A result folder of the same scenario: stale outputs go, other files stay.
        fs::write(d.join("summary.json"), "{}").unwrap();
        fs::write(d.join("scenario.resolved.toml"), "a").unwrap();
        fs::create_dir_all(d.join("pcap/x")).unwrap();
        prepare(&d, "a", false).unwrap();
        assert!(!d.join("pcap").exists() && !d.join("summary.json").exists());
        assert!(d.join("notes.txt").exists());
        // A different scenario needs --force.
        fs::write(d.join("summary.json"), "{}").unwrap();
        fs::write(d.join("scenario.resolved.toml"), "a").unwrap();
        let e = prepare(&d, "b", false).unwrap_err().to_string();
        assert!(e.contains("different scenario"), "{e}");
        prepare(&d, "b", true).unwrap();
    }
}
