//! `thinlab run --capture` then `thinlab analyze`: the round trip through the binary, the
//! summary's contract ("latency_origin": "first-send", capture stats), and bad input.

use crate::common;
use common::{json, thinlab};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const SCENARIO: &str = r#"
name = "cap"
seed = 3
duration = "20s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.loss]
model = "bernoulli"
rate = 0.05
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
"#;

fn simulate(dir: &Path) {
    std::fs::write(dir.join("s.toml"), SCENARIO).unwrap();
    let o = thinlab(
        dir,
        &["run", "s.toml", "--out", "out", "--capture", "--quiet"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

const PCAP_DIR: &str = "out/pcap/default-rep0";

#[test]
fn run_capture_then_analyze_gives_the_simulators_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    simulate(d);
    let snd = format!("{PCAP_DIR}/game-sender.pcap");
    let rcv = format!("{PCAP_DIR}/game-receiver.pcap");
    // The simulator's two captures share one clock: told so, analyze reproduces its figures
    // exactly.
    let o = thinlab(
        d,
        &[
            "analyze",
            &snd,
            "--receiver",
            &rcv,
            "--out",
            "an",
            "--clock-offset",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Left to estimate the offset, it is off by half the difference of the minimum one-way
    // delays of a 174-byte data frame and a 54-byte ACK at 10 Mbit/s (48 µs).
    let o = thinlab(d, &["analyze", &snd, "--receiver", &rcv, "--out", "est"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let e = &json(&d.join("est/summary.json"))["connections"][0]["clock"];
    let off = e["offset_ms"].as_f64().unwrap();
    assert!((off - 0.048).abs() < 0.001, "{off}");
    for f in [
        "summary.json",
        "connections.csv",
        "latency_cdf.csv",
        "latency_cdf.svg",
        "latency_ccdf.svg",
    ] {
        assert!(d.join("an").join(f).is_file(), "{f}");
    }
    let a = json(&d.join("an/summary.json"));
    assert_eq!(a["latency_origin"], "first-send");
    let h = &a["retransmission_cause_heuristic"];
    assert_eq!(h["ack_clocked_window_ms"], 1.0);
    assert!(h["rule"].as_str().unwrap().contains("fast"));
    assert_eq!(a["sender_capture"]["stopped_at"], Value::Null);
    assert_eq!(a["connections"].as_array().unwrap().len(), 1);
    let am = &a["connections"][0]["metrics"];
    let line = String::from_utf8_lossy(&o.stdout).into_owned();
    let (fast, rto) = (
        &am["retransmissions_by_cause"]["fast"],
        &am["retransmissions_by_cause"]["rto"],
    );
    assert!(
        line.contains(&format!("{fast} fast,")) && line.contains(&format!("{rto} timeout)")),
        "{line}"
    );
    let s = json(&d.join("out/summary.json"));
    let sm = &s["runs"][0]["flows"][0]["metrics"];
    for k in [
        "data_packets_sent",
        "payload_bytes_sent",
        "unique_bytes_sent",
        "redundant_bytes_sent",
        "retransmissions",
        "rdb_bundles",
        "bytes_delivered",
        "app_latency_from_send_ms",
        "transport_latency_from_send_ms",
        "ack_latency_from_send_ms",
    ] {
        assert_eq!(am[k], sm[k], "{k}");
    }
    assert!(sm["retransmissions"].as_u64().unwrap() > 0);
    // Plain names carry the from-send figures.
    assert_eq!(am["app_latency_ms"], am["app_latency_from_send_ms"]);

    // Sender capture alone: ACK latency, no application latency.
    let o = thinlab(
        d,
        &[
            "analyze",
            &snd,
            "--out",
            "an2",
            "--connection",
            "10.128.0.1:5001-10.0.0.1:32768",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = json(&d.join("an2/summary.json"));
    let bm = &b["connections"][0]["metrics"];
    assert_eq!(b["receiver_capture"], Value::Null);
    assert_eq!(
        bm["ack_latency_from_send_ms"],
        sm["ack_latency_from_send_ms"]
    );
    assert_eq!(bm["app_latency_ms"]["count"], 0);
    // Without the receiver, what was delivered is unknown, not 0.
    assert_eq!(bm["bytes_delivered"], Value::Null);
    assert_eq!(bm["goodput_bps"], Value::Null);
    assert!(b["latency_caveat"].as_str().unwrap().contains("send-based"));
}

#[test]
fn truncated_capture_is_reported_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    simulate(d);
    let full = std::fs::read(d.join(PCAP_DIR).join("game-sender.pcap")).unwrap();
    let cut = full.len() / 2 + 7;
    std::fs::write(d.join("cut.pcap"), &full[..cut]).unwrap();
    let o = thinlab(d, &["analyze", "cut.pcap", "--out", "an", "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stopped reading at byte offset"), "{err}");
    let a = json(&d.join("an/summary.json"));
    let at = a["sender_capture"]["stopped_at"].as_u64().unwrap();
    assert!(at <= cut as u64 && at > 24, "{at}");
    assert!(
        a["connections"][0]["metrics"]["data_packets_sent"]
            .as_u64()
            .unwrap()
            > 10
    );
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let o = thinlab(d, &["analyze", "missing.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("missing.pcap"), "{err}");

    simulate(d);
    let snd = format!("{PCAP_DIR}/game-sender.pcap");
    let o = thinlab(d, &["analyze", &snd, "--receiver", "nope.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope.pcap"));

    let o = thinlab(d, &["analyze", &snd, "--connection", "1.2.3.4:1-5.6.7.8:2"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("10.0.0.1:32768-10.128.0.1:5001"), "{err}");
}

#[test]
fn tcpdump_reads_the_simulators_captures() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    simulate(d);
    let snd = d.join(PCAP_DIR).join("game-sender.pcap");
    for tool in [["tcpdump", "-nr"], ["tshark", "-r"]] {
        let Ok(o) = Command::new(tool[0]).args([tool[1]]).arg(&snd).output() else {
            eprintln!("skipping: {} is not installed", tool[0]);
            continue;
        };
        assert!(
            o.status.success(),
            "{}: {}",
            tool[0],
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.lines().count() > 100, "{}", tool[0]);
        assert!(text.contains("10.0.0.1"), "{}", tool[0]);
        if tool[0] == "tcpdump" {
            let v = Command::new("tcpdump")
                .args(["-vvnr"])
                .arg(&snd)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&v.stdout);
            assert!(!text.contains("incorrect"), "tcpdump found a bad checksum");
            assert!(text.contains("cksum") && text.contains("(correct)"));
        }
    }
}

#[test]
fn capture_directories_per_configuration_and_repetition() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let text = SCENARIO.replace("duration = \"20s\"", "duration = \"2s\"\nrepetitions = 2")
        + "\n[sweep]\n\"network.loss.rate\" = [0.0, 0.1]\n";
    std::fs::write(d.join("s.toml"), text).unwrap();
    // Without --capture and without `capture = true`: no pcap directory.
    let o = thinlab(d, &["run", "s.toml", "--out", "plain", "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!d.join("plain/pcap").exists());
    let o = thinlab(
        d,
        &["run", "s.toml", "--out", "out", "--capture", "--quiet"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut dirs: Vec<String> = std::fs::read_dir(d.join("out/pcap"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(
        dirs,
        [
            "network.loss.rate_0.0-rep0",
            "network.loss.rate_0.0-rep1",
            "network.loss.rate_0.1-rep0",
            "network.loss.rate_0.1-rep1"
        ]
    );
    for dir in &dirs {
        for f in ["game-sender.pcap", "game-receiver.pcap"] {
            assert!(d.join("out/pcap").join(dir).join(f).is_file(), "{dir}/{f}");
        }
    }
}

/// Counts the frames of `pcap` that tshark's display filter `filter` selects.
fn tshark_count(pcap: &Path, filter: &str) -> Option<u64> {
    let o = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .output()
        .ok()?;
    assert!(
        o.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count() as u64,
    )
}

#[test]
fn retransmissions_and_dupacks_agree_with_tshark() {
    if Command::new("tshark").arg("-v").output().is_err() {
        eprintln!("skipping: tshark is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bulk = SCENARIO
        .replace(
            r#"{ kind = "fixed", payload_bytes = 120, interval = "140ms" }"#,
            r#"{ kind = "bulk", bytes = 1000000 }"#,
        )
        .replace("rate = 0.05", "rate = 0.01");
    for (name, text) in [("thin", SCENARIO.to_string()), ("bulk", bulk)] {
        std::fs::write(d.join(format!("{name}.toml")), text).unwrap();
        let out = format!("out-{name}");
        let o = thinlab(
            d,
            &[
                "run",
                &format!("{name}.toml"),
                "--out",
                &out,
                "--capture",
                "-q",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let snd = d.join(&out).join("pcap/default-rep0/game-sender.pcap");
        let an = format!("an-{name}");
        let o = thinlab(d, &["analyze", snd.to_str().unwrap(), "--out", &an, "-q"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let c = &json(&d.join(&an).join("summary.json"))["connections"][0];
        let retrans = tshark_count(
            &snd,
            // Wireshark calls a retransmission sent soon after the segment above it
            // "out-of-order"; at the sender of a simulated flow nothing is reordered.
            "ip.src==10.0.0.1 && tcp.len>0 && (tcp.analysis.retransmission || \
             tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission || \
             tcp.analysis.out_of_order)",
        )
        .unwrap();
        let dupacks =
            tshark_count(&snd, "ip.src==10.128.0.1 && tcp.analysis.duplicate_ack").unwrap();
        assert_eq!(
            c["metrics"]["retransmissions"], retrans,
            "{name}: retransmissions"
        );
        assert_eq!(c["extras"]["dupacks"], dupacks, "{name}: dupACKs");
        let packets = tshark_count(&snd, "ip.src==10.0.0.1 && tcp.len>0").unwrap();
        assert_eq!(
            c["metrics"]["data_packets_sent"], packets,
            "{name}: data packets"
        );
        assert!(retrans > 0, "{name}");
    }
}
