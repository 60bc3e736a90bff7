//! Switches that must change no result: every committed simulator scenario (not the emulation
//! ones, nor the 3-minute capture one or the capture benchmark's), run with a switch on and off,
//! writes byte-identical result folders (all but the wall times of `timing.json` and
//! `run.json`). The scenarios cover thin streams with every thin-stream mechanism and RDB, SACK
//! recovery, RACK/TLP, D-SACK and PRR of the modern profile, linear timeouts, losses both ways
//! and a dumbbell of bulk flows that fill a drop-tail queue.
//!
//! - Loss recovery's shortcut for an ACK that can change nothing (thinlab-tcp,
//!   `recovery/manager/quiet.rs`; `THINLAB_QUIET_ACK`).
//! - The latency histograms built on a thread of their own (thinlab-sim,
//!   `sim/histogram_thread.rs`; `THINLAB_HISTOGRAM_THREAD`), forced on for every run. The
//!   dumbbell's run starts the thread (the collector's unit test
//!   `a_run_with_the_thread_has_the_same_results` checks that it does); the others' histograms
//!   are built by the collector on the run's thread.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCENARIOS: &[&str] = &[
    "scenarios/quickstart.toml",
    "scenarios/thin-mechanisms.toml",
    "scenarios/rdb-adaptive.toml",
    "scenarios/reproduce/evensen-apps.toml",
    "scenarios/reproduce/evensen-lab.toml",
    "scenarios/reproduce/fairness.toml",
    "scenarios/reproduce/hurtig.toml",
    "scenarios/reproduce/modern-linux.toml",
    "scenarios/reproduce/petlund-demo.toml",
    "scenarios/reproduce/petlund-variants.toml",
    "scenarios/reproduce/yin.toml",
    "scenarios/fidelity/thin-140ms.toml",
    "scenarios/fidelity/thin-30ms.toml",
    "scenarios/capture/kernel-thin.toml",
    "scenarios/capture/kernel-thin-2622.toml",
    "bench/thinlab/dumbbell.toml",
    "bench/thinlab/thin_stream.toml",
];

/// Files that hold wall times, which differ from run to run.
const TIMED: &[&str] = &["timing.json", "run.json"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The switches: each test sets one, and the others are left at their defaults.
const SWITCHES: &[&str] = &["THINLAB_QUIET_ACK", "THINLAB_HISTOGRAM_THREAD"];

/// Runs `scenario` into `out` with the environment variable `var` set to `value`.
fn run(scenario: &str, out: &Path, var: &str, value: &str) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_thinlab"));
    for s in SWITCHES {
        cmd.env_remove(s);
    }
    let o = cmd
        .current_dir(repo())
        .args(["run", scenario, "--quiet", "--out"])
        .arg(out)
        .env(var, value)
        .output()
        .expect("run thinlab");
    assert!(
        o.status.success(),
        "{scenario}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every file under `dir` (relative path → bytes), but the timed ones.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if !TIMED.iter().any(|t| p.file_name().is_some_and(|n| n == *t)) {
                let bytes = std::fs::read(&p).expect("read");
                all.insert(p.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    all
}

/// Runs every scenario with `var` set to `on` and to `off`, and compares the result folders.
fn same_results_with_and_without(var: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (i, scenario) in SCENARIOS.iter().enumerate() {
        let (with, without) = (
            tmp.path().join(format!("{i}-on")),
            tmp.path().join(format!("{i}-off")),
        );
        run(scenario, &with, var, "on");
        run(scenario, &without, var, "off");
        let (a, b) = (files(&with), files(&without));
        assert!(
            a.contains_key(Path::new("summary.json")),
            "{scenario}: no summary.json"
        );
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{scenario}: different files"
        );
        for (name, bytes) in &a {
            assert!(
                *bytes == b[name],
                "{scenario}: {} differs with {var}=off",
                name.display()
            );
        }
    }
}

#[test]
fn quiet_ack_shortcut_changes_no_result() {
    same_results_with_and_without("THINLAB_QUIET_ACK");
}

#[test]
fn histogram_thread_changes_no_result() {
    same_results_with_and_without("THINLAB_HISTOGRAM_THREAD");
}
