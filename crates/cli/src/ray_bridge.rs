//! `thinlab run --ray [ADDRESS]`: Ray is a Python library, so the command hands the sweep to
//! the Python package's `thinlab.ray_cli` (same scenario, `--set`s and options) and exits with
//! its exit code. The package and Ray must be installed for the Python interpreter named by
//! `THINLAB_PYTHON` (default `python3`): `pip install "./python[ray]"`.

use crate::args::{Format, RunArgs};
use crate::error::BadInput;
use anyhow::{Context, Result};
use std::process::Command;

/// The interpreter that runs the Ray driver.
fn python() -> String {
    std::env::var("THINLAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Checks that `python` can import thinlab and Ray; the message says how to install them.
fn check(python: &str) -> Result<(), BadInput> {
    let probe = Command::new(python)
        .args(["-c", "import thinlab, ray"])
        .output()
        .map_err(|e| {
            BadInput::new(format!(
                "--ray needs Python with the thinlab package and Ray, but `{python}` cannot be \
                 started: {e} (set THINLAB_PYTHON to the interpreter)"
            ))
        })?;
    if probe.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&probe.stderr);
    let last = stderr.lines().last().unwrap_or("").trim();
    Err(BadInput::new(format!(
        "--ray needs the thinlab Python package with Ray for `{python}`: pip install \"./python[ray]\" \
         ({last})"
    )))
}

/// Runs `args`' sweep on Ray through the Python package; returns its exit code.
pub fn run(args: &RunArgs, address: &str) -> Result<u8> {
    if args.backend.as_deref() == Some("emu") {
        return Err(BadInput::new(
            "--ray runs the simulator: it cannot be combined with --backend emu",
        )
        .into());
    }
    if args.capture {
        return Err(BadInput::new(
            "--ray: pcap captures are written by local runs only (drop --capture)",
        )
        .into());
    }
    let python = python();
    check(&python)?;
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "thinlab.ray_cli"])
        .arg(&args.scenario)
        .args(["--address", address]);
    if let Some(out) = &args.out {
        cmd.arg("--out").arg(out);
    }
    for s in &args.sets {
        cmd.arg("--set").arg(s);
    }
    if args.format == Format::Parquet {
        cmd.args(["--format", "parquet"]);
    }
    for (flag, on) in [
        ("--quiet", args.quiet),
        ("--force", args.force),
        ("--strict", args.strict),
    ] {
        if on {
            cmd.arg(flag);
        }
    }
    let status = cmd
        .status()
        .with_context(|| format!("starting {python} -m thinlab.ray_cli"))?;
    Ok(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}
