//! `app.kind = "trace"`: replaying a CSV of (time, bytes) or the application writes of a
//! capture, and the errors for bad trace files.

use std::path::Path;
use thinlab_sim::pcap_out::file_names;
use thinlab_sim::{
    run, run_captured, run_keeping_writes, App, CaptureOptions, Scenario, ScenarioError,
};
use thinlab_trace::FlowRecords;

fn scenario_text(app: &str, loss: &str, duration: &str) -> String {
    format!(
        r#"
        name = "tr"
        duration = "{duration}"
        seed = 3
        [network]
        rtt = "100ms"
        bandwidth = "10Mbit"
        [network.loss]
        {loss}
        [[flow]]
        name = "f"
        capture = true
        app = {app}
        "#
    )
}

fn trace_app(path: &Path, extra: &str) -> String {
    format!(
        "{{ kind = \"trace\", file = \"{}\" {extra} }}",
        path.display().to_string().replace('\\', "/")
    )
}

/// (offset from the first write in ns, bytes) of every write record.
fn relative_writes(r: &FlowRecords) -> Vec<(u64, u64)> {
    let t0 = r.writes.first().map_or(0, |w| w.write_time.as_nanos());
    r.writes
        .iter()
        .map(|w| (w.write_time.as_nanos() - t0, w.end - w.start))
        .collect()
}

/// Entries with the same time merged (sizes summed), times relative to the first.
fn merge_same_time(v: impl IntoIterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (t, b) in v {
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 += b,
            _ => out.push((t, b)),
        }
    }
    let t0 = out.first().map_or(0, |x| x.0);
    out.iter().map(|&(t, b)| (t - t0, b)).collect()
}

#[test]
fn csv_replay_gives_exactly_those_writes() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("w.csv");
    std::fs::write(
        &csv,
        "time,bytes\n0,100\n0.05,200\n\"140ms\",1\n140ms,7\n# comment\n\n1.5s,1448\n2.0,3000\n9.5,5\n",
    )
    .unwrap();
    let s = Scenario::from_toml_str(&scenario_text(
        &trace_app(&csv, ""),
        "model = \"none\"",
        "5s",
    ))
    .unwrap();
    let App::Trace { writes } = &s.flows[0].app else {
        panic!("{:?}", s.flows[0].app)
    };
    assert_eq!(writes.len(), 7);
    let r = run(&s, s.seed);
    let rec = &r.flows[0].records;
    // The write at 9.5 s falls after `duration` (5 s) and is not made.
    assert_eq!(
        relative_writes(rec),
        vec![
            (0, 100),
            (50_000_000, 200),
            (140_000_000, 1),
            (140_000_000, 7),
            (1_500_000_000, 1448),
            (2_000_000_000, 3000),
        ]
    );
    // Offsets count from establishment (about one RTT after connect).
    let est = rec.writes[0].write_time.as_nanos();
    assert!((100_000_000..110_000_000).contains(&est), "{est}");
    // Everything written is delivered.
    assert_eq!(rec.bytes_delivered, 100 + 200 + 1 + 7 + 1448 + 3000);
}

fn capture_original(loss: &str, dir: &Path) -> FlowRecords {
    let s = Scenario::from_toml_str(&scenario_text(
        r#"{ kind = "fixed", payload_bytes = 120, interval = "140ms" }"#,
        loss,
        "20s",
    ))
    .unwrap();
    let opts = CaptureOptions {
        dir: dir.to_path_buf(),
        all_flows: false,
    };
    run_captured(&s, s.seed, &opts, &mut |_| {}).unwrap();
    // the same run, keeping every write's record (a run folds complete writes)
    run_keeping_writes(&s, s.seed).flows[0].records.clone()
}

fn replay(pcap: &Path, extra: &str) -> FlowRecords {
    // A longer duration so that every segment the original sent is replayed.
    let s = Scenario::from_toml_str(&scenario_text(
        &trace_app(pcap, extra),
        "model = \"none\"",
        "60s",
    ))
    .unwrap();
    let r = run_keeping_writes(&s, s.seed);
    r.flows[0].records.clone()
}

#[test]
fn pcap_replay_of_a_lossless_thin_stream_gives_the_original_writes() {
    let dir = tempfile::tempdir().unwrap();
    let orig = capture_original("model = \"none\"", dir.path());
    let (sn, _) = file_names("f");
    let rep = replay(&dir.path().join(sn), "");
    assert_eq!(relative_writes(&rep), relative_writes(&orig));
    assert!(rep.writes.len() > 100);
    assert!(relative_writes(&rep)
        .iter()
        .enumerate()
        .all(|(i, &(t, b))| t == i as u64 * 140_000_000 && b == 120));
}

#[test]
fn pcap_replay_strips_retransmissions_and_keeps_first_sends() {
    let dir = tempfile::tempdir().unwrap();
    let orig = capture_original("model = \"bernoulli\"\nrate = 0.05", dir.path());
    assert!(orig.packets.redundant_bytes_sent > 0, "no retransmissions");
    let (sn, rn) = file_names("f");
    let rep = replay(&dir.path().join(&sn), "");
    // The original's first-sent segments: its writes grouped by first transmission time.
    let first_sent = merge_same_time(
        orig.writes
            .iter()
            .map(|w| (w.first_send.unwrap().as_nanos(), w.end - w.start)),
    );
    let replayed = merge_same_time(
        rep.writes
            .iter()
            .map(|w| (w.write_time.as_nanos(), w.end - w.start)),
    );
    assert_eq!(replayed, first_sent);
    // Retransmitted bytes are not replayed: exactly the original's unique bytes.
    let total: u64 = rep.writes.iter().map(|w| w.end - w.start).sum();
    assert_eq!(total, orig.packets.unique_bytes_sent);
    assert_eq!(total, orig.writes.last().unwrap().end);
    // A lossless replay sends no retransmissions.
    assert_eq!(rep.packets.redundant_bytes_sent, 0);

    // The receiver capture holds the same connection; picking it by name works either way.
    let sel = "10.0.0.1:1-10.0.0.2:2";
    let e = Scenario::from_toml_str(&scenario_text(
        &trace_app(&dir.path().join(&rn), &format!(", connection = \"{sel}\"")),
        "model = \"none\"",
        "60s",
    ))
    .unwrap_err();
    assert_eq!(e.key(), "flow.0.app.connection", "{e}");
    assert!(e.to_string().contains(sel), "{e}");
}

#[test]
fn pcap_connection_selector_picks_by_address() {
    let dir = tempfile::tempdir().unwrap();
    let orig = capture_original("model = \"none\"", dir.path());
    let (sn, _) = file_names("f");
    let path = dir.path().join(sn);
    let cap = thinlab_trace::pcap::read_capture_file(&path).unwrap();
    let conns = thinlab_trace::flows::analyze(&cap.packets, None);
    let id = conns[0].id();
    let rep = replay(&path, &format!(", connection = \"{id}\""));
    assert_eq!(relative_writes(&rep), relative_writes(&orig));
    // Either order of the two endpoints.
    let (a, b) = id.split_once('-').unwrap();
    let rep2 = replay(&path, &format!(", connection = \"{b}-{a}\""));
    assert_eq!(relative_writes(&rep2), relative_writes(&orig));
}

fn csv_error(content: Option<&str>) -> ScenarioError {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bad.csv");
    if let Some(c) = content {
        std::fs::write(&csv, c).unwrap();
    }
    Scenario::from_toml_str(&scenario_text(
        &trace_app(&csv, ""),
        "model = \"none\"",
        "5s",
    ))
    .unwrap_err()
}

#[test]
fn bad_csv_names_the_key_and_the_line() {
    for (content, line, what) in [
        ("time,bytes\n0,100\nsoon,5\n", 3, "time"),
        ("0,100\n0.5,abc\n", 2, "bytes"),
        ("0,100\n1.0,5\n0.5,5\n", 3, "non-decreasing"),
        ("time,bytes\n0,0\n", 2, "≥ 1"),
        ("0,100\n1,2,3\n", 2, "two columns"),
        ("0,-5\n", 1, "bytes"),
        ("-1,5\n", 1, "time"),
    ] {
        let e = csv_error(Some(content));
        let m = e.to_string();
        assert_eq!(e.key(), "flow.0.app.file", "{m}");
        assert!(m.contains(&format!("CSV line {line} ")), "{content:?}: {m}");
        assert!(m.contains(what), "{content:?}: {m}");
        assert!(m.contains("bad.csv"), "{m}");
    }
    // Only a header: no writes.
    let e = csv_error(Some("time,bytes\n"));
    assert_eq!(e.key(), "flow.0.app.file");
    assert!(e.to_string().contains("at least one write"), "{e}");
    // Missing file.
    let e = csv_error(None);
    assert_eq!(e.key(), "flow.0.app.file");
    assert!(e.to_string().contains("bad.csv"), "{e}");
    assert!(e.to_string().contains("readable"), "{e}");
}

#[test]
fn trace_keys_are_checked() {
    // `file` is required.
    let e = Scenario::from_toml_str(&scenario_text(
        "{ kind = \"trace\" }",
        "model = \"none\"",
        "5s",
    ))
    .unwrap_err();
    assert_eq!(e.key(), "flow.0.app.file", "{e}");
    // `connection` is for captures only.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("w.csv");
    std::fs::write(&csv, "0,1\n").unwrap();
    let e = Scenario::from_toml_str(&scenario_text(
        &trace_app(&csv, ", connection = \"1.2.3.4:5-6.7.8.9:10\""),
        "model = \"none\"",
        "5s",
    ))
    .unwrap_err();
    assert_eq!(e.key(), "flow.0.app.connection", "{e}");
    // Other kinds' keys are rejected.
    let e = Scenario::from_toml_str(&scenario_text(
        &trace_app(&csv, ", interval = \"1s\""),
        "model = \"none\"",
        "5s",
    ))
    .unwrap_err();
    assert_eq!(e.key(), "flow.0.app.interval", "{e}");
}
