//! Real kernel captures (tests/data/, made with the emulation backend; README there) as
//! regression inputs: `analyze` attributes the kernel's retransmissions as the kernel's own
//! counters say, finds the one clock the two captures share, refuses captures that do not
//! belong together, and `whatif` replays them.

use crate::common;
use common::{json, ok, thinlab};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> String {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "tests",
        "data",
        name,
    ]
    .iter()
    .collect();
    p.to_string_lossy().into_owned()
}

fn analyze(d: &Path, stem: &str) -> Value {
    ok(&thinlab(
        d,
        &[
            "analyze",
            &data(&format!("{stem}-sender.pcap")),
            "--receiver",
            &data(&format!("{stem}-receiver.pcap")),
            "--out",
            stem,
            "-q",
        ],
    ));
    let s = json(&d.join(stem).join("summary.json"));
    assert_eq!(s["connections"].as_array().unwrap().len(), 1, "{stem}");
    s["connections"][0].clone()
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
fn kernel_retransmissions_are_attributed_as_the_kernel_counted_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // (capture, kernel: RetransSegs less SYN retransmissions, RTO expiries (TCPTimeouts
    // less the SYN's), TCPLossProbes, TCPFastRetrans; the emulator's drops forward, reverse)
    for (stem, retrans, rtos, probes, fast, fwd, rev) in [
        ("kernel-140ms", 22, 0, 1, 21, 21, 17),
        ("kernel-30ms", 95, 2, 2, 93, 101, 78),
    ] {
        let c = analyze(d, stem);
        let e = &c["extras"];
        assert_eq!(n(&e["lost_packets"]), fwd, "{stem}");
        // The receiver's last packets may still have been on their way when the capture ended.
        assert!(
            (rev..=rev + 1).contains(&n(&e["reverse_lost_packets"])),
            "{stem}: {e}"
        );
        let burst = e["mean_loss_burst"].as_f64().unwrap();
        assert!(
            (1.0..1.2).contains(&burst),
            "{stem}: independent losses, burst {burst}"
        );
        let m = &c["metrics"];
        let by = &m["retransmissions_by_cause"];
        assert_eq!(n(&m["retransmissions"]), retrans, "{stem}");
        assert_eq!(n(&m["rto_events"]), rtos, "{stem}");
        assert!(n(&by["tlp"]).abs_diff(probes) <= 1, "{stem}: {by}");
        let f = n(&by["fast"]) + n(&by["rack"]) + n(&by["early"]);
        assert!(f.abs_diff(fast) <= 2, "{stem}: {by}");
        // One clock: the estimate is off only by the data frame's longer serialisation.
        let off = c["clock"]["offset_ms"].as_f64().unwrap();
        assert!(off.abs() < 0.1, "{stem}: offset {off}");
        let p = &c["write_pattern"];
        assert_eq!(p["write_bytes"], 120, "{stem}");
    }
}

#[test]
fn captures_of_other_connections_or_swapped_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let o = thinlab(
        d,
        &[
            "analyze",
            &data("kernel-140ms-sender.pcap"),
            "--receiver",
            &data("thinlab-rdb-140ms-receiver.pcap"),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("do not belong together"));
    let o = thinlab(
        d,
        &[
            "analyze",
            &data("kernel-140ms-receiver.pcap"),
            "--receiver",
            &data("kernel-140ms-sender.pcap"),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("look swapped"));
}

#[test]
fn whatif_replays_a_kernel_capture_with_every_set() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let o = thinlab(
        d,
        &[
            "whatif",
            &data("kernel-140ms-sender.pcap"),
            "--receiver",
            &data("kernel-140ms-receiver.pcap"),
            "--out",
            "w",
            "--repetitions",
            "3",
        ],
    );
    ok(&o);
    let w = d.join("w");
    let p = json(&w.join("path.json"));
    let rtt = p["path"]["rtt_ms"].as_f64().unwrap();
    assert!((rtt - 100.0).abs() < 1.0, "rtt {rtt}");
    let loss = p["path"]["forward_loss_rate"].as_f64().unwrap();
    assert!((0.03..0.07).contains(&loss), "loss {loss}");
    assert_eq!(
        p["write_pattern"]["interval_ms"].as_f64().unwrap().round(),
        140.0
    );
    let mut r = csv::Reader::from_path(w.join("whatif.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let sets: Vec<&str> = rows.iter().map(|x| &x[0]).collect();
    assert_eq!(
        sets,
        [
            "as captured",
            "plain",
            "LT",
            "mFR",
            "ER",
            "RDB",
            "RDB+LT+mFR",
            "TLP+RACK",
            "linux"
        ]
    );
    let p99 = |set: &str| -> f64 {
        rows.iter().find(|x| &x[0] == set).unwrap()[3]
            .parse()
            .unwrap()
    };
    // RDB recovers a lost write with the next one: its tail is one interval plus the path.
    assert!(
        p99("RDB") < 200.0 && p99("plain") > 250.0,
        "{} {}",
        p99("RDB"),
        p99("plain")
    );
    for f in [
        "whatif.md",
        "latency_cdf.svg",
        "latency_ccdf.svg",
        "writes.csv",
    ] {
        assert!(w.join(f).is_file(), "{f}");
    }
    assert!(w.join("sets/RDB/summary.json").is_file());
    assert!(String::from_utf8_lossy(&o.stdout).contains("as captured"));
    // One thread (`--jobs 1`) gives the same table as the default's parallel repetitions.
    ok(&thinlab(
        d,
        &[
            "whatif",
            &data("kernel-140ms-sender.pcap"),
            "--receiver",
            &data("kernel-140ms-receiver.pcap"),
            "--out",
            "w1",
            "--repetitions",
            "3",
            "--jobs",
            "1",
            "-q",
        ],
    ));
    let table = |dir: &str| std::fs::read_to_string(d.join(dir).join("whatif.csv")).unwrap();
    assert_eq!(table("w1"), table("w"));
}
