//! Helpers shared by the CLI's integration tests (each test file uses a few of them).
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs the `thinlab` binary in `dir` with `args`.
pub fn thinlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running thinlab")
}

/// A JSON file, parsed.
pub fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Asserts the command succeeded, showing its stderr otherwise.
pub fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
