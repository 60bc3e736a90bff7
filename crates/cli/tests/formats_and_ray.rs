//! `--format parquet` writes Parquet files next to the CSV; `--ray` says clearly what is
//! missing when the Python package or Ray cannot be found.

use crate::common;
use common::{ok, thinlab};

const SCENARIO: &str = r#"
name = "fmt"
seed = 3
duration = "20s"
repetitions = 2
[network]
rtt = "100ms"
bandwidth = "10Mbit"
queue_packets = 50
[network.loss]
model = "bernoulli"
rate = 0.02
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "50ms" }
[sweep]
"network.loss.rate" = [0, 0.02]
"#;

#[test]
fn parquet_files_are_written_on_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), SCENARIO).unwrap();
    ok(&thinlab(
        dir.path(),
        &["run", "s.toml", "--out", "csv", "-q"],
    ));
    assert!(!dir.path().join("csv/runs.parquet").exists());
    ok(&thinlab(
        dir.path(),
        &["run", "s.toml", "--out", "pq", "-q", "--format", "parquet"],
    ));
    for f in ["runs.parquet", "writes.parquet"] {
        let bytes = std::fs::read(dir.path().join("pq").join(f)).unwrap();
        assert!(bytes.len() > 1000, "{f}: {} bytes", bytes.len());
        assert_eq!(&bytes[..4], b"PAR1", "{f}");
        assert_eq!(&bytes[bytes.len() - 4..], b"PAR1", "{f}");
    }
    // the CSV results do not change with the format
    for f in ["summary.json", "runs.csv", "latency_cdf.csv"] {
        assert_eq!(
            std::fs::read(dir.path().join("csv").join(f)).unwrap(),
            std::fs::read(dir.path().join("pq").join(f)).unwrap(),
            "{f}"
        );
    }
    let o = thinlab(dir.path(), &["run", "s.toml", "--format", "xlsx"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn many_runs_spill_their_rows_into_one_file() {
    // Each run spills its per-write rows to a temporary file; finished runs keep theirs in one
    // shared file, so a sweep of more runs than the open-file limit still writes its Parquet.
    let dir = tempfile::tempdir().unwrap();
    let many = SCENARIO
        .replace("duration = \"20s\"", "duration = \"2s\"")
        .replace("repetitions = 2", "repetitions = 100");
    std::fs::write(dir.path().join("s.toml"), many).unwrap();
    let o = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!(
            "ulimit -n 40 && exec {} run s.toml --out pq -q --jobs 2 --format parquet",
            env!("CARGO_BIN_EXE_thinlab")
        ))
        .output()
        .unwrap();
    ok(&o);
    let bytes = std::fs::read(dir.path().join("pq/writes.parquet")).unwrap();
    assert_eq!(&bytes[..4], b"PAR1");
}

#[test]
fn ray_without_python_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), SCENARIO).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .current_dir(dir.path())
        .args(["run", "s.toml", "--ray", "-q"])
        .env("THINLAB_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--ray needs") && err.contains("THINLAB_PYTHON"),
        "{err}"
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .current_dir(dir.path())
        .args(["run", "s.toml", "--ray", "-q"])
        .env("THINLAB_PYTHON", "/bin/false")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("pip install \"./python[ray]\""), "{err}");
    assert!(!dir.path().join("results").exists());
}
