//! Inputs the validator accepts but that used to crash, hang or exhaust memory (issue 13 B),
//! and runs that went wrong without saying so (issue 13 A). Each runs the `thinlab` binary
//! under an address-space limit (`ulimit -v`) and a timeout, and asserts the exit code, the
//! message and that the resources stayed bounded.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const MIB: u64 = 1024;

/// Runs thinlab in `dir` with at most `vm_mib` MiB of address space, killed after `timeout`.
fn limited(dir: &Path, args: &[&str], vm_mib: u64, timeout: Duration) -> Output {
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", vm_mib * MIB))
        .arg(env!("CARGO_BIN_EXE_thinlab"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn thinlab");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.expect("wait for thinlab"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("thinlab {args:?} did not finish within {timeout:?}");
        }
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The exit code; fails the test when the process died of a signal (abort, kill).
fn code(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {:?}\n{}", o.status, stderr(o)))
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    name.to_string()
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

const SECS: Duration = Duration::from_secs(60);

fn thin(extra: &str) -> String {
    format!(
        r#"
name = "t"
duration = "5s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[[flow]]
name = "game"
app = {{ kind = "fixed", payload_bytes = 100, interval = "100ms" }}
{extra}"#
    )
}

#[test]
fn a_flow_of_1e8_writes_is_refused_by_the_estimate() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        &thin("")
            .replace("\"100ms\" }", "\"10us\" }")
            .replace("\"5s\"", "\"1000s\""),
    );
    let o = limited(tmp.path(), &["run", &f, "--quiet"], 2048, SECS);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("flow.0.app") && e.contains("100000001 writes") && e.contains("--force"),
        "{e}"
    );
}

#[test]
fn a_writer_faster_than_its_link_with_a_large_buffer_ends_with_a_message() {
    // 10 Mbit/s into a 1 Mbit/s link through a 16 MiB send buffer: either it fits, or the
    // memory guard stops it with a message — never an abort or the OOM killer.
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        r#"
name = "fast"
duration = "30s"
[network]
rtt = "100ms"
bandwidth = "1Mbit"
[[flow]]
app = { kind = "cbr", rate = "10Mbit", payload_bytes = 1000 }
tcp = { send_buffer = "16MiB" }
"#,
    );
    let o = limited(tmp.path(), &["run", &f, "--quiet", "--out", "o"], 400, SECS);
    match code(&o) {
        0 => {
            let s = summary(&tmp.path().join("o"));
            let m = &s["runs"][0]["flows"][0]["metrics"];
            assert_ne!(m["status"], "completed");
        }
        1 => assert!(
            stderr(&o).contains("thinlab stopped: its memory use"),
            "{}",
            stderr(&o)
        ),
        c => panic!("exit {c}: {}", stderr(&o)),
    }
}

#[test]
fn a_large_sweep_is_written_without_holding_its_json() {
    let tmp = tempfile::tempdir().unwrap();
    let vals: Vec<String> = (1..=150).map(|i| i.to_string()).collect();
    let vals = vals.join(", ");
    let f = write(
        tmp.path(),
        "s.toml",
        &format!(
            "{}\n[sweep]\n\"flow.0.app.payload_bytes\" = [{vals}]\n\"network.queue_packets\" = [{vals}]\n",
            thin("").replace("\"5s\"", "\"1s\"").replace("\"100ms\" }", "\"500ms\" }")
        ),
    );
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet", "--out", "o"],
        1024,
        SECS,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = tmp.path().join("o");
    assert_eq!(summary(&out)["runs"].as_array().unwrap().len(), 22_500);
    // 22 500 lines are more than a plot shows: no SVG, said so.
    assert!(!out.join("latency_cdf.svg").exists());
    assert!(stderr(&o).contains("no SVG plots"), "{}", stderr(&o));
}

#[test]
fn huge_dotted_keys_are_refused_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(tmp.path(), "s.toml", &thin(""));
    let key = vec!["a"; 30_000].join(".");
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet", "--set", &format!("{key}=1")],
        512,
        Duration::from_secs(10),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("59999 bytes long"), "{}", stderr(&o));
    let sweep_key = vec!["b"; 200_000].join(".");
    let f = write(
        tmp.path(),
        "w.toml",
        &format!("{}\n[sweep]\n\"{sweep_key}\" = [1, 2]\n", thin("")),
    );
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet"],
        512,
        Duration::from_secs(10),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("bytes long"), "{}", stderr(&o));
}

#[test]
fn analysing_a_device_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let o = limited(
        tmp.path(),
        &["analyze", "/dev/zero", "--out", "o", "--quiet"],
        512,
        Duration::from_secs(20),
    );
    assert!(code(&o) <= 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("magic"), "{}", stderr(&o));
}

#[test]
fn a_trace_file_that_never_ends_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        &thin("").replace(
            "{ kind = \"fixed\", payload_bytes = 100, interval = \"100ms\" }",
            "{ kind = \"trace\", file = \"/dev/zero\" }",
        ),
    );
    let o = limited(tmp.path(), &["run", &f, "--quiet"], 1024, SECS);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("flow.0.app.file") && e.contains("256 MiB"),
        "{e}"
    );
}

/// A raw-IP pcap of `n` SYNs, each from its own address: `n` connections without data.
fn syn_flood(n: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(24 + n as usize * 56);
    for x in [0xa1b2c3d4u32, 0x0004_0002, 0, 0, 65535, 101] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for i in 0..n {
        for x in [i / 1000, (i % 1000) * 1000, 40, 40] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        let src = (10u32 << 24) | i;
        let mut ip = vec![0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0];
        ip.extend_from_slice(&src.to_be_bytes());
        ip.extend_from_slice(&((192u32 << 24) | 1).to_be_bytes());
        let mut tcp = vec![0x04, 0x00, 0, 80];
        tcp.extend_from_slice(&i.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
        v.extend_from_slice(&ip);
        v.extend_from_slice(&tcp);
    }
    v
}

#[test]
fn a_syn_flood_capture_stays_small() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("syn.pcap"), syn_flood(120_000)).unwrap();
    let o = limited(
        tmp.path(),
        &["analyze", "syn.pcap", "--out", "o", "--quiet"],
        1024,
        SECS,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("only the first 100000 connections"), "{e}");
    let out = tmp.path().join("o");
    let s = summary(&out);
    assert_eq!(s["connections"].as_array().unwrap().len(), 1000);
    assert_eq!(s["not_listed"]["connections"], 99_000);
    assert_eq!(s["not_listed"]["without_data"], 99_000);
    // Nothing to plot: no SVG of empty series; the summary is a few MB, not gigabytes.
    assert!(!out.join("latency_cdf.svg").exists());
    assert!(std::fs::metadata(out.join("summary.json")).unwrap().len() < 10 << 20);
}

/// (link type, records) of a little-endian microsecond pcap written by thinlab.
fn pcap_records(data: &[u8]) -> (u32, Vec<&[u8]>) {
    let link = u32::from_le_bytes(data[20..24].try_into().unwrap());
    let mut out = Vec::new();
    let mut pos = 24;
    while pos + 16 <= data.len() {
        let incl = u32::from_le_bytes(data[pos + 8..pos + 12].try_into().unwrap()) as usize;
        out.push(&data[pos..pos + 16 + incl]);
        pos += 16 + incl;
    }
    (link, out)
}

/// TCP payload length of an Ethernet or raw-IPv4 record.
fn payload_len(link: u32, rec: &[u8]) -> usize {
    let ip = &rec[16 + if link == 1 { 14 } else { 0 }..];
    let ihl = usize::from(ip[0] & 15) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    total - ihl - usize::from(ip[ihl + 12] >> 4) * 4
}

#[test]
fn a_receiver_capture_missing_the_first_write_is_analysed_quickly_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        &thin("capture = true\n").replace("\"5s\"", "\"60s\""),
    );
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet", "--out", "o"],
        1024,
        SECS,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let dir = tmp.path().join("o/pcap/default-rep0");
    let rx = std::fs::read(dir.join("game-receiver.pcap")).unwrap();
    let (link, recs) = pcap_records(&rx);
    let first_data = recs.iter().position(|r| payload_len(link, r) > 0).unwrap();
    let mut cut = rx[..24].to_vec();
    for (i, r) in recs.iter().enumerate() {
        if i != first_data {
            cut.extend_from_slice(r);
        }
    }
    std::fs::write(tmp.path().join("rx.pcap"), cut).unwrap();
    let sender = dir.join("game-sender.pcap");
    let o = limited(
        tmp.path(),
        &[
            "analyze",
            sender.to_str().unwrap(),
            "--receiver",
            "rx.pcap",
            "--out",
            "a",
            "--quiet",
        ],
        1024,
        Duration::from_secs(20),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let s = summary(&tmp.path().join("a"));
    let m = &s["connections"][0]["metrics"];
    // Nothing is delivered in order without the first write: every write is undelivered,
    // and the latency statistics count them as censored instead of dropping them.
    assert_eq!(m["status"], "capture_ended");
    assert_eq!(m["writes_undelivered"], m["writes"]);
    assert_eq!(m["app_latency_ms"]["censored"], m["writes"]);
}

#[test]
fn a_hundred_thousand_flows_are_checked_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "name = \"many\"\nduration = \"1s\"\n[network]\nrtt = \"10ms\"\nbandwidth = \"1Gbit\"\n",
    );
    for i in 0..100_000 {
        // The last flow repeats the name of the sixth.
        let name = if i == 99_999 { 5 } else { i };
        text.push_str(&format!(
            "[[flow]]\nname = \"f{name}\"\napp = {{ kind = \"fixed\", payload_bytes = 1, interval = \"1s\" }}\n"
        ));
    }
    let f = write(tmp.path(), "s.toml", &text);
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet"],
        2048,
        Duration::from_secs(30),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("flow.99999.name"), "{}", stderr(&o));
}

#[test]
fn a_connection_that_never_opens_is_reported_and_strict_exits_3() {
    // RTT 1 h: the handshake cannot complete before the drain bound.
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        &thin("").replace("rtt = \"100ms\"", "rtt = \"1h\""),
    );
    let o = limited(tmp.path(), &["run", &f, "--out", "o"], 1024, SECS);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("never established"), "{}", stderr(&o));
    assert!(stdout(&o).contains("game !"), "{}", stdout(&o));
    let s = summary(&tmp.path().join("o"));
    assert_eq!(
        s["runs"][0]["flows"][0]["metrics"]["status"],
        "never_established"
    );
    let csv = std::fs::read_to_string(tmp.path().join("o/runs.csv")).unwrap();
    assert!(csv.contains(",never_established,"), "{csv}");
    let o = limited(
        tmp.path(),
        &["run", &f, "--out", "o", "--strict"],
        1024,
        SECS,
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("--strict"), "{}", stderr(&o));
}

#[test]
fn heavy_loss_marks_every_failed_flow_and_keeps_its_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        &format!(
            "repetitions = 5\n{}\n[network.loss]\nmodel = \"bernoulli\"\nrate = 0.4\n",
            thin("").replace("\"5s\"", "\"20s\"")
        )
        .replacen(
            "repetitions = 5\n\nname = \"t\"",
            "name = \"t\"\nrepetitions = 5",
            1,
        ),
    );
    let o = limited(tmp.path(), &["run", &f, "--out", "o"], 1024, SECS);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let s = summary(&tmp.path().join("o"));
    let runs = s["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    let mut failed = 0;
    for r in runs {
        let m = &r["flows"][0]["metrics"];
        let w = m["writes"].as_u64().unwrap();
        let d = m["writes_delivered"].as_u64().unwrap();
        let u = m["writes_undelivered"].as_u64().unwrap();
        assert_eq!(w, d + u);
        assert_eq!(m["status"] == "completed", u == 0 && w > 0, "{m}");
        // Undelivered writes are in the statistics as censored samples.
        assert_eq!(m["app_latency_ms"]["censored"].as_u64().unwrap(), u);
        failed += usize::from(m["status"] != "completed");
    }
    assert!(failed > 0, "40 % loss: some run should fail");
    assert!(stdout(&o).contains("game !"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("\n! default · game: "),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains(&format!("{failed} of 5 flow runs did not complete")));
}

#[test]
fn bulk_goodput_is_at_most_the_link_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        r#"
name = "bulk"
duration = "10s"
[network]
rtt = "50ms"
bandwidth = "1Mbit"
queue_packets = 20
[[flow]]
app = { kind = "bulk" }
tcp = { send_buffer = "4MiB" }
"#,
    );
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet", "--out", "o"],
        1024,
        SECS,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let s = summary(&tmp.path().join("o"));
    let g = s["runs"][0]["flows"][0]["metrics"]["goodput_bps"]
        .as_f64()
        .unwrap();
    assert!(
        g <= 1e6 && g > 0.5e6,
        "goodput {g} bit/s on a 1 Mbit/s link"
    );
}

#[test]
fn duplicated_packets_and_broken_timestamps_are_named_not_counted_as_retransmissions() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "s.toml",
        &thin("capture = true\n").replace("\"5s\"", "\"20s\""),
    );
    let o = limited(
        tmp.path(),
        &["run", &f, "--quiet", "--out", "o"],
        1024,
        SECS,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let snd = std::fs::read(tmp.path().join("o/pcap/default-rep0/game-sender.pcap")).unwrap();
    let (link, recs) = pcap_records(&snd);
    // Every data record twice (a SPAN port's duplicates), and the last stamped at time 0.
    let mut dup = snd[..24].to_vec();
    let mut data = 0;
    for (i, r) in recs.iter().enumerate() {
        if i + 1 == recs.len() {
            let mut r = r.to_vec();
            r[..8].fill(0);
            dup.extend_from_slice(&r);
            continue;
        }
        dup.extend_from_slice(r);
        if payload_len(link, r) > 0 {
            dup.extend_from_slice(r);
            data += 1;
        }
    }
    std::fs::write(tmp.path().join("dup.pcap"), dup).unwrap();
    let analyse = |file: &str, out: &str| {
        let o = limited(
            tmp.path(),
            &["analyze", file, "--out", out, "--quiet"],
            1024,
            SECS,
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        (summary(&tmp.path().join(out)), stderr(&o))
    };
    let (plain, _) = analyse("o/pcap/default-rep0/game-sender.pcap", "a");
    let (doubled, err) = analyse("dup.pcap", "b");
    let (p, d) = (&plain["connections"][0], &doubled["connections"][0]);
    assert_eq!(d["extras"]["duplicates"], data, "{err}");
    assert_eq!(p["extras"]["duplicates"], 0);
    assert_eq!(
        d["metrics"]["retransmissions"],
        p["metrics"]["retransmissions"]
    );
    assert_eq!(
        d["metrics"]["data_packets_sent"],
        p["metrics"]["data_packets_sent"]
    );
    assert!(err.contains("exact duplicates"), "{err}");
    assert!(err.contains("implausible capture timestamps"), "{err}");
}
