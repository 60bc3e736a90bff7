//! Result folders that describe themselves: `scenario.resolved.toml` and `run.json`, the
//! `--force` rule for folders holding something else, stale files removed on a rerun, and
//! Ctrl-C writing what is complete (exit 130, `"complete": false`).

use crate::common;
use common::{json, thinlab};
use std::process::{Command, Stdio};
use std::time::Duration;

const SCENARIO: &str = r#"
name = "folder"
duration = "5s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.loss]
model = "bernoulli"
rate = 0.0
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
[sweep]
"network.loss.rate" = [0.0, 0.01]
"#;

#[test]
fn a_result_folder_holds_its_resolved_scenario_and_how_it_was_made() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.toml"), SCENARIO).unwrap();
    let args = ["run", "s.toml", "--out", "o", "--quiet", "--set", "seed=9"];
    let o = thinlab(tmp.path(), &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = tmp.path().join("o");
    let info = json(&out.join("run.json"));
    assert_eq!(
        info["command_line"].as_array().unwrap().len(),
        args.len() + 1
    );
    assert_eq!(info["command_line"][7], "seed=9");
    assert!(info["git_commit"].as_str().is_some_and(|c| !c.is_empty()));
    assert!(info["wall_time_s"].as_f64().unwrap() > 0.0);
    assert_eq!(info["complete"], true);
    assert_eq!(json(&out.join("summary.json"))["complete"], true);
    // The resolved scenario carries the --set and runs as it is, to the same results.
    let resolved = std::fs::read_to_string(out.join("scenario.resolved.toml")).unwrap();
    assert!(resolved.contains("seed = 9"), "{resolved}");
    std::fs::copy(
        out.join("scenario.resolved.toml"),
        tmp.path().join("r.toml"),
    )
    .unwrap();
    let o = thinlab(tmp.path(), &["run", "r.toml", "--out", "p", "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The same runs (only `overrides` differs: the rerun has none).
    let (a, b) = (
        json(&out.join("summary.json")),
        json(&tmp.path().join("p/summary.json")),
    );
    assert!(
        a["runs"] == b["runs"],
        "the resolved scenario ran differently"
    );
}

#[test]
fn foreign_or_different_folders_need_force_and_reruns_drop_stale_files() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.toml"), SCENARIO).unwrap();
    std::fs::create_dir(tmp.path().join("mine")).unwrap();
    std::fs::write(tmp.path().join("mine/thesis.tex"), "x").unwrap();
    let o = thinlab(tmp.path(), &["run", "s.toml", "--out", "mine", "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert!(!tmp.path().join("mine/summary.json").exists());
    let o = thinlab(
        tmp.path(),
        &["run", "s.toml", "--out", "mine", "--quiet", "--force"],
    );
    assert!(o.status.success());
    assert!(tmp.path().join("mine/thesis.tex").exists());

    let run = |extra: &[&str]| {
        let mut a = vec!["run", "s.toml", "--out", "o", "--quiet"];
        a.extend_from_slice(extra);
        thinlab(tmp.path(), &a)
    };
    assert!(run(&["--capture"]).status.success());
    assert!(tmp.path().join("o/pcap").is_dir());
    // Same scenario without --capture: the old captures are stale and go.
    assert!(run(&[]).status.success());
    assert!(!tmp.path().join("o/pcap").exists());
    // A different scenario: refused, then replaced with --force.
    let o = run(&["--set", "duration=2s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different scenario"));
    assert!(run(&["--set", "duration=2s", "--force"]).status.success());
}

#[test]
fn ctrl_c_writes_what_is_complete_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    // Many short runs one at a time: interrupted after the first have finished.
    let text = SCENARIO.replace("\"5s\"", "\"600s\"").replace(
        "[0.0, 0.01]",
        "[0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.13, 0.14, 0.15]",
    );
    let text = text.replacen(
        "name = \"folder\"\n",
        "name = \"folder\"\nrepetitions = 50\n",
        1,
    );
    std::fs::write(tmp.path().join("s.toml"), text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .current_dir(tmp.path())
        .args(["run", "s.toml", "--out", "o", "--quiet", "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut waited = 0;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        waited += 1;
        assert!(waited < 600, "thinlab did not stop after SIGINT");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(130), "{status:?}");
    let s = json(&tmp.path().join("o/summary.json"));
    assert_eq!(s["complete"], false);
    let n = s["runs"].as_array().unwrap().len();
    assert!(n > 0 && n < 16 * 50, "{n} runs written");
    let info = json(&tmp.path().join("o/run.json"));
    assert_eq!(info["complete"], false);
    assert_eq!(info["runs_finished"], n);
    assert_eq!(info["runs_planned"], 800);
}

/// A lone run large enough for its output work to go to several threads (16 flows, 4 800
/// writes: its flows' metrics, the CDF lines, `report.html` beside the other files) writes the
/// same files as on one thread.
#[test]
fn a_lone_run_writes_the_same_files_on_one_thread_and_on_several() {
    let tmp = tempfile::tempdir().unwrap();
    let mut scenario = String::from(
        "name = \"many\"\nduration = \"3s\"\n[network]\nrtt = \"40ms\"\nbandwidth = \"10Mbit\"\n\
         [network.loss]\nmodel = \"bernoulli\"\nrate = 0.02\n",
    );
    for i in 0..16 {
        scenario.push_str(&format!(
            "[[flow]]\nname = \"f{i}\"\nstart = \"{i}ms\"\n\
             app = {{ kind = \"fixed\", payload_bytes = 100, interval = \"10ms\" }}\n"
        ));
    }
    std::fs::write(tmp.path().join("s.toml"), scenario).unwrap();
    for jobs in ["1", "2"] {
        let args = ["run", "s.toml", "--out", jobs, "--quiet", "--jobs", jobs];
        let o = thinlab(tmp.path(), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let summary = json(&tmp.path().join("1").join("summary.json"));
    let writes = summary["runs"][0]["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["metrics"]["writes"].as_u64().unwrap())
        .sum::<u64>();
    assert!(writes >= 4096, "{writes} writes: too few for the threads");
    for file in ["summary.json", "runs.csv", "latency_cdf.csv", "report.html"] {
        let read = |dir: &str| std::fs::read(tmp.path().join(dir).join(file)).unwrap();
        assert!(read("1") == read("2"), "{file} differs");
    }
}
