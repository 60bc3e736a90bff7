//! Round trip: simulate with capture → read the pcaps → reconstruct → the simulator's own
//! figures for everything a capture can observe.

use std::collections::HashMap;
use thinlab_sim::pcap_out::file_names;
use thinlab_sim::{run, run_captured, run_keeping_writes, CaptureOptions, Scenario};
use thinlab_tcp::wire::{parse_ipv4, verify_ipv4};
use thinlab_trace::flows::analyze_with_clock;
use thinlab_trace::metrics::{write_latency_ms, Milestone, Origin};
use thinlab_trace::pcap::read_capture_file;
use thinlab_trace::{flow_metrics, FlowMetrics, FlowRecords};

fn scenario(loss: &str, app: &str, extra_tcp: &str) -> Scenario {
    try_scenario(loss, app, extra_tcp).unwrap()
}

fn try_scenario(loss: &str, app: &str, extra_tcp: &str) -> Result<Scenario, String> {
    Scenario::from_toml_str(&format!(
        r#"
        name = "rt"
        duration = "20s"
        seed = 7
        [network]
        rtt = "100ms"
        bandwidth = "10Mbit"
        [network.loss]
        {loss}
        [[flow]]
        name = "f"
        capture = true
        app = {app}
        tcp = {{ profile = "linux-2.6.22" {extra_tcp} }}
        "#
    ))
    .map_err(|e| e.to_string())
}

struct RoundTrip {
    sim: FlowMetrics,
    sim_records: FlowRecords,
    cap: FlowMetrics,
    cap_records: FlowRecords,
}

fn round_trip(s: &Scenario) -> RoundTrip {
    let dir = tempfile::tempdir().unwrap();
    let opts = CaptureOptions {
        dir: dir.path().to_path_buf(),
        all_flows: false,
    };
    let r = run_captured(s, s.seed, &opts, &mut |_| {}).unwrap();
    // Capturing does not change the run.
    let plain = run(s, s.seed);
    assert_eq!(plain.flows[0].records, r.flows[0].records);
    let (sn, rn) = file_names("f");
    let snd = read_capture_file(&dir.path().join(sn)).unwrap();
    let rcv = read_capture_file(&dir.path().join(rn)).unwrap();
    for c in [&snd, &rcv] {
        assert_eq!(c.stats.stopped_at, None, "{:?}", c.stats);
        assert_eq!(c.stats.dropped_total(), 0, "{:?}", c.stats);
        assert_eq!(c.stats.checksum_errors, 0);
        assert_eq!(c.stats.records, c.stats.tcp_packets);
    }
    // The simulator stamps both captures with one clock: say so (the estimate would be off by
    // half the difference of a data frame's and an ACK's serialisation).
    let conns = analyze_with_clock(&snd.packets, Some(&rcv.packets), Some(0.0));
    assert_eq!(conns.len(), 1);
    let c = &conns[0];
    assert!(c.receiver_matched);
    let f = &r.flows[0];
    RoundTrip {
        sim: flow_metrics(&f.records, f.duration),
        // the same run, keeping every write's record (the run above folds complete writes)
        sim_records: run_keeping_writes(s, s.seed).flows[0].records.clone(),
        cap: c.metrics.clone(),
        cap_records: c.records.clone(),
    }
}

/// Asserts everything a capture observes; returns (writes matched, sim writes).
fn check(rt: &RoundTrip, what: &str) -> (usize, usize) {
    let (a, b) = (&rt.sim, &rt.cap);
    assert_eq!(a.data_packets_sent, b.data_packets_sent, "{what}: packets");
    assert_eq!(
        a.payload_bytes_sent, b.payload_bytes_sent,
        "{what}: payload bytes"
    );
    assert_eq!(
        a.unique_bytes_sent, b.unique_bytes_sent,
        "{what}: unique bytes"
    );
    assert_eq!(
        a.redundant_bytes_sent, b.redundant_bytes_sent,
        "{what}: redundant bytes"
    );
    assert_eq!(
        a.retransmissions, b.retransmissions,
        "{what}: retransmissions"
    );
    assert_eq!(a.rdb_bundles, b.rdb_bundles, "{what}: bundles");
    assert_eq!(
        a.bytes_delivered, b.bytes_delivered,
        "{what}: bytes delivered"
    );
    // Writes that left at once (one segment, same byte range): identical from-send latencies.
    let by_range: HashMap<(u64, u64), _> = rt
        .cap_records
        .writes
        .iter()
        .map(|w| ((w.start, w.end), w))
        .collect();
    let mut matched = 0;
    for w in &rt.sim_records.writes {
        let Some(cw) = by_range.get(&(w.start, w.end)) else {
            continue;
        };
        if w.first_send.is_none() {
            continue;
        }
        matched += 1;
        for m in [Milestone::App, Milestone::Transport, Milestone::Ack] {
            assert_eq!(
                write_latency_ms(w, m, Origin::FirstSend),
                write_latency_ms(cw, m, Origin::FirstSend),
                "{what}: write {}..{} {m:?}",
                w.start,
                w.end
            );
        }
    }
    // Analyzer latencies are from first send: plain == from_send.
    assert_eq!(b.app_latency_ms, b.app_latency_from_send_ms);
    assert_eq!(b.ack_latency_ms, b.ack_latency_from_send_ms);
    (matched, rt.sim_records.writes.len())
}

const THIN: &str = r#"{ kind = "fixed", payload_bytes = 120, interval = "140ms" }"#;

#[test]
fn thin_stream_round_trip_under_every_loss_model() {
    for loss in [
        r#"model = "none""#,
        r#"model = "bernoulli"
        rate = 0.05"#,
        r#"model = "positions"
        positions = [3, 10, 11, 12, 40]"#,
    ] {
        for mech in [
            "",
            r#", delayed_ack = "off""#,
            r#", mechanisms = ["rdb"]"#,
            r#", mechanisms = ["linear-timeouts", "thin-dupack"]"#,
            r#", mechanisms = ["tlp", "rack"]"#,
            r#", mechanisms = ["early-retransmit"]"#,
            r#", mechanisms = ["er-threshold", "thin-dupack"]"#,
            r#", cc = "cubic", sack = true"#,
        ] {
            let s = match try_scenario(loss, THIN, mech) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("skipping {mech}: {e}");
                    continue;
                }
            };
            let rt = round_trip(&s);
            let (m, n) = check(&rt, &format!("{loss} {mech}"));
            eprintln!(
                "{loss} {mech}: {m}/{n} writes matched; retrans {} bundles {}",
                rt.sim.retransmissions, rt.sim.rdb_bundles
            );
            assert!(
                m * 10 >= n * 9,
                "{loss} {mech}: only {m} of {n} writes left at once"
            );
            if m == n {
                // Every write left at once: the whole from-send distributions agree.
                assert_eq!(
                    rt.sim.app_latency_from_send_ms,
                    rt.cap.app_latency_from_send_ms
                );
                assert_eq!(
                    rt.sim.transport_latency_from_send_ms,
                    rt.cap.transport_latency_from_send_ms
                );
                assert_eq!(
                    rt.sim.ack_latency_from_send_ms,
                    rt.cap.ack_latency_from_send_ms
                );
            }
        }
    }
}

#[test]
fn bulk_round_trip() {
    for loss in [
        r#"model = "none""#,
        r#"model = "bernoulli"
        rate = 0.01"#,
        r#"model = "positions"
        positions = [20, 50, 51]"#,
    ] {
        let rt = round_trip(&scenario(loss, r#"{ kind = "bulk", bytes = 2000000 }"#, ""));
        check(&rt, loss);
        assert!(rt.sim.data_packets_sent > 1000);
    }
}

#[test]
fn written_frames_have_valid_checksums() {
    let s = scenario(r#"model = "none""#, THIN, "");
    let dir = tempfile::tempdir().unwrap();
    let opts = CaptureOptions {
        dir: dir.path().to_path_buf(),
        all_flows: false,
    };
    run_captured(&s, 1, &opts, &mut |_| {}).unwrap();
    let (sn, _) = file_names("f");
    let data = std::fs::read(dir.path().join(sn)).unwrap();
    // Walk the classic pcap records by hand: 24-byte header, 16-byte record headers.
    assert_eq!(
        &data[..4],
        &[0x4d, 0x3c, 0xb2, 0xa1],
        "nanosecond pcap, little-endian"
    );
    let mut off = 24;
    let mut n = 0;
    while off < data.len() {
        let incl = u32::from_le_bytes(data[off + 8..off + 12].try_into().unwrap()) as usize;
        let frame = &data[off + 16..off + 16 + incl];
        let ip = etherparse::Ipv4HeaderSlice::from_slice(&frame[14..]).unwrap();
        assert_eq!(ip.to_header().calc_header_checksum(), ip.header_checksum());
        let tcp = &frame[14 + 20..];
        assert!(verify_ipv4(ip.source(), ip.destination(), tcp));
        parse_ipv4(ip.source(), ip.destination(), tcp).unwrap();
        off += 16 + incl;
        n += 1;
    }
    assert!(n > 100);
}

#[test]
fn reverse_flow_round_trip() {
    let s = Scenario::from_toml_str(
        r#"
        name = "rev"
        duration = "20s"
        seed = 11
        [network]
        rtt = "60ms"
        bandwidth = "10Mbit"
        [network.loss]
        model = "bernoulli"
        rate = 0.03
        [[flow]]
        name = "f"
        direction = "reverse"
        capture = true
        app = { kind = "fixed", payload_bytes = 300, interval = "50ms" }
        "#,
    )
    .unwrap();
    let rt = round_trip(&s);
    let (m, n) = check(&rt, "reverse");
    assert!(m * 10 >= n * 9, "{m} of {n}");
    assert!(rt.sim.retransmissions > 0);
}

#[test]
fn only_requested_flows_are_captured_unless_all() {
    let s = Scenario::from_toml_str(
        r#"
        name = "two"
        duration = "2s"
        [network]
        rtt = "60ms"
        bandwidth = "10Mbit"
        [[flow]]
        name = "a"
        capture = true
        app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
        [[flow]]
        name = "b"
        app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
        "#,
    )
    .unwrap();
    for all in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let opts = CaptureOptions {
            dir: dir.path().join("x"),
            all_flows: all,
        };
        run_captured(&s, 1, &opts, &mut |_| {}).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&opts.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut want = vec!["a-receiver.pcap", "a-sender.pcap"];
        if all {
            want.extend(["b-receiver.pcap", "b-sender.pcap"]);
        }
        assert_eq!(names, want);
        // Flow 1's addresses in its own files.
        if all {
            let c = read_capture_file(&opts.dir.join("b-sender.pcap")).unwrap();
            let p = &c.packets[0];
            assert_eq!(p.src.to_string(), "10.0.1.1");
            assert_eq!(p.dst.to_string(), "10.128.1.1");
        }
    }
}

#[test]
fn round_trip_over_seeds_sources_and_loss_models() {
    let apps = [
        THIN,
        r#"{ kind = "exponential", payload_bytes = 200, interval = "80ms" }"#,
        r#"{ kind = "transfer", writes = 40, write_bytes = 3000 }"#,
        r#"{ kind = "cbr", rate = "400kbit", payload_bytes = 500 }"#,
    ];
    let losses = [
        r#"model = "bernoulli"
        rate = 0.1"#,
        r#"model = "gilbert-elliott"
        p = 0.05
        r = 0.3
        loss_good = 0.0
        loss_bad = 0.5"#,
    ];
    let mut total_matched = 0;
    let mut total = 0;
    for (i, app) in apps.iter().enumerate() {
        for loss in losses {
            for seed in 0..4u64 {
                let mut s = scenario(loss, app, "");
                s.seed = 100 + seed + 10 * i as u64;
                let rt = round_trip(&s);
                let (m, n) = check(&rt, &format!("{app} {loss} seed {}", s.seed));
                total_matched += m;
                total += n;
            }
        }
    }
    eprintln!("{total_matched} of {total} writes left at once and matched");
}
