//! `thinlab run --backend emu` end to end: result files, exit code 2 for what the user can fix
//! (a key the kernel cannot be told, a bad backend, not root), and Ctrl-C in the middle of a
//! sweep keeping the finished runs and leaving no namespace behind. Tests that need root,
//! /dev/net/tun and network namespaces skip with a printed reason where those are missing.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Real-time tests run one at a time: several SCHED_FIFO emulators on two cores would delay
/// each other.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const SCENARIO: &str = r#"
name = "emu-small"
seed = 5
duration = "1s"
repetitions = 2
backend = "emu"

[network]
rtt = "20ms"
bandwidth = "10Mbit"

[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 120, interval = "50ms" }
tcp = { profile = "linux", nodelay = true, stack = "kernel" }
"#;

fn thinlab(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_thinlab"));
    c.args(args);
    c
}

fn write(dir: &Path, text: &str) -> String {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn can_run(test: &str) -> bool {
    match thinlab_emu::preflight() {
        Ok(()) => true,
        Err(e) => {
            println!("SKIPPED {test}: {e}");
            false
        }
    }
}

#[test]
fn keys_emu_cannot_honour_exit_2_naming_the_key() {
    let d = tempfile::tempdir().unwrap();
    let s = write(
        d.path(),
        &SCENARIO.replace("stack = \"kernel\"", "rto_min = \"20ms\""),
    );
    let o = thinlab(&["run", &s, "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("flow.0.tcp.rto_min"), "{}", stderr(&o));
    let s = write(
        d.path(),
        &SCENARIO.replace("stack = \"kernel\"", "mechanisms = [\"rdb\"]"),
    );
    let o = thinlab(&["run", &s, "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("flow.0.tcp.mechanisms"),
        "{}",
        stderr(&o)
    );
    let o = thinlab(&["run", &s, "--backend", "ns3"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("backend"), "{}", stderr(&o));
    // tcp.stack is an emu key: the simulator refuses it, naming it.
    let s = write(d.path(), SCENARIO);
    let o = thinlab(&["run", &s, "--backend", "sim", "--quiet"])
        .arg("--out")
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("flow.0.tcp.stack"), "{}", stderr(&o));
    let s = write(
        d.path(),
        &SCENARIO.replace("stack = \"kernel\"", "stack = \"lwip\""),
    );
    let o = thinlab(&["run", &s, "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("flow.0.tcp.stack"), "{}", stderr(&o));
}

#[test]
fn not_root_exits_2_with_a_clear_message() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 {
        println!("SKIPPED not_root_exits_2_with_a_clear_message: needs root to drop to nobody");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let s = write(d.path(), SCENARIO);
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let o = thinlab(&[
        "run",
        &s,
        "--out",
        &d.path().join("o").display().to_string(),
    ])
    .uid(65534)
    .gid(65534)
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

#[test]
fn emu_run_writes_the_common_results_and_emu_json() {
    if !can_run("emu_run_writes_the_common_results_and_emu_json") {
        return;
    }
    let _one_at_a_time = serial();
    let d = tempfile::tempdir().unwrap();
    let s = write(
        d.path(),
        &SCENARIO.replace("repetitions = 2", "repetitions = 1"),
    );
    let out = d.path().join("out");
    let o = thinlab(&[
        "run",
        &s,
        "--out",
        &out.display().to_string(),
        "--quiet",
        "--capture",
    ])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "summary.json",
        "runs.csv",
        "latency_cdf.csv",
        "latency_cdf.svg",
        "emu.json",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let run = &sum["runs"][0];
    let m = &run["flows"][0]["metrics"];
    assert!(m["writes"].as_u64().unwrap() >= 19);
    let p50 = m["app_latency_ms"]["p50"].as_f64().unwrap();
    assert!((p50 - 10.0).abs() < 1.0, "p50 {p50}");
    assert_eq!(run["emu"]["congestion_control"][0]["sender"], "cubic");
    assert!(run["emu"]["lateness_us"]["p99"].as_f64().is_some());
    assert!(run["emu"]["lateness_us"]["over_1ms"].as_u64().is_some());
    // the hosts' parts of every write's latency: as many writes as were sent and read, and
    // their medians below the one-way delay (10 ms) that the whole latency holds
    let parts = &run["emu"]["host_parts_us"][0];
    assert_eq!(parts["flow"], "game");
    for part in ["write_to_wire", "arrival_to_read"] {
        assert_eq!(
            parts[part]["count"].as_u64(),
            m["writes"].as_u64(),
            "{part}: {parts}"
        );
        let p50 = parts[part]["p50"].as_f64().unwrap();
        assert!((0.0..10_000.0).contains(&p50), "{part}: {parts}");
    }
    let sender = std::fs::read_dir(out.join("pcap"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let a = thinlab(&[
        "analyze",
        &sender.join("game-sender.pcap").display().to_string(),
        "--receiver",
        &sender.join("game-receiver.pcap").display().to_string(),
        "--out",
        &d.path().join("an").display().to_string(),
        "--quiet",
    ])
    .output()
    .unwrap();
    assert!(a.status.success(), "{}", stderr(&a));
}

#[test]
fn the_stack_is_a_sweep_axis_kernel_against_thinlab() {
    let d = tempfile::tempdir().unwrap();
    let swept = SCENARIO
        .replace(", stack = \"kernel\"", "")
        .replace("repetitions = 2", "repetitions = 1")
        + "\n[sweep]\n\"flow.0.tcp.stack\" = [\"kernel\", \"thinlab\"]\n";
    // the simulator refuses the axis, naming it
    let s = write(d.path(), &swept);
    let o = thinlab(&["run", &s, "--backend", "sim", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("flow.0.tcp.stack"), "{}", stderr(&o));
    // a bad value in the axis is refused before anything runs
    let bad = write(d.path(), &swept.replace("\"thinlab\"]", "\"lwip\"]"));
    let o = thinlab(&["run", &bad, "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("expected \"kernel\" or \"thinlab\""),
        "{}",
        stderr(&o)
    );
    if !can_run("the_stack_is_a_sweep_axis_kernel_against_thinlab") {
        return;
    }
    let _one_at_a_time = serial();
    let s = write(d.path(), &swept);
    let out = d.path().join("out");
    let o = thinlab(&["run", &s, "--out", &out.display().to_string(), "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[0].starts_with("kernel,") && rows[1].starts_with("thinlab,"),
        "{csv}"
    );
    let emu: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("emu.json")).unwrap()).unwrap();
    // the thinlab run reports its own endpoint, the kernel run does not
    let runs = emu["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let text = |i: usize| runs[i]["report"].to_string();
    assert!(
        !text(0).contains("\"established\"") && text(1).contains("\"established\":true"),
        "{}",
        emu
    );
}

fn netns_fds(pid: u32) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|f| std::fs::read_link(f.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("net:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

#[test]
fn ctrl_c_keeps_finished_runs_and_leaves_no_namespace() {
    if !can_run("ctrl_c_keeps_finished_runs_and_leaves_no_namespace") {
        return;
    }
    let _one_at_a_time = serial();
    let d = tempfile::tempdir().unwrap();
    let s = write(
        d.path(),
        &SCENARIO.replace("duration = \"1s\"", "duration = \"600ms\""),
    );
    let out = d.path().join("out");
    let child = thinlab(&["run", &s, "--out", &out.display().to_string(), "--quiet"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first run takes ~0.7 s; interrupt the second one in its middle.
    let mut seen = Vec::new();
    for _ in 0..50 {
        for i in netns_fds(child.id()) {
            if !seen.contains(&i) {
                seen.push(i);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc_kill(child.id() as i32, 2) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 2 runs finished"),
        "{}",
        stderr(&o)
    );
    assert!(seen.len() >= 3, "namespaces of both runs seen: {seen:?}");
    for i in &seen {
        assert!(
            !thinlab_emu::netns::namespace_alive(*i),
            "namespace {i} left behind"
        );
    }
    let sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        sum["runs"].as_array().unwrap().len(),
        1,
        "the finished run is kept"
    );
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}
