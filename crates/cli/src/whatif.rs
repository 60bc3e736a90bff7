//! `thinlab whatif CAPTURE.pcap [--receiver R.pcap] [--out DIR]`: what would this captured
//! stream's latency have been with each mechanism? Recovers the application's writes and the
//! path from the capture ([`crate::whatif_path`]), replays the writes in the simulator over that
//! path with each mechanism set of [`SETS`] (repetitions with different seeds), and reports
//! them side by side with what the capture itself shows:
//! - `DIR/whatif.md` and `whatif.csv`: per set, latency percentiles from the write and from the
//!   first send, the share of writes later than 100 / 200 / 400 ms, retransmissions and
//!   redundant bytes per run;
//! - `DIR/latency_cdf.svg`, `latency_ccdf.svg`: every set and the capture;
//! - `DIR/path.json`: the path and writes estimated; `DIR/writes.csv` the writes replayed;
//! - `DIR/sets/<set>/`: each set's `thinlab run` result folder (scenario, summary.json, plots).
//!
//! The mechanism sets are those of the thin-stream studies (Petlund, "Improving latency for
//! interactive, thin-stream applications over reliable transport"; Evensen, "Improving TCP for
//! time-dependent applications") plus RACK-TLP (RFC 8985) and the `linux` profile.

use crate::args::{RunArgs, WhatifArgs};
use crate::capture_flows::{self, check_selector};
use crate::error::BadInput;
use crate::run::clean_name;
use crate::whatif_path::{self, PathEstimate};
use anyhow::{Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use thinlab_trace::flows::ConnectionAnalysis;
use thinlab_trace::latency_cdf;
use thinlab_trace::metrics::{latency_samples_ms, Milestone, Origin};
use thinlab_trace::plot::{cdf_svg, suggest_log_x, PlotSpec, Series, View};

/// (name, profile, mechanisms): the sets simulated.
pub const SETS: [(&str, &str, &str); 8] = [
    ("plain", "linux-2.6.22", "[]"),
    ("LT", "linux-2.6.22", "[\"linear-timeouts\"]"),
    ("mFR", "linux-2.6.22", "[\"thin-dupack\"]"),
    ("ER", "linux-2.6.22", "[\"early-retransmit\"]"),
    ("RDB", "linux-2.6.22", "[\"rdb\"]"),
    (
        "RDB+LT+mFR",
        "linux-2.6.22",
        "[\"rdb\", \"linear-timeouts\", \"thin-dupack\"]",
    ),
    ("TLP+RACK", "linux-2.6.22", "[\"tlp\", \"rack\"]"),
    ("linux", "linux", "[\"tlp\", \"rack\"]"),
];

/// Thresholds of the "later than" shares, ms.
pub const LATE_MS: [f64; 3] = [100.0, 200.0, 400.0];
const CDF_POINTS: usize = 400;

/// Latency CDF points: (ms, fraction of writes at or below).
type Cdf = Vec<(f64, f64)>;

/// One row of the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub set: String,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub mean_ms: Option<f64>,
    /// Percentiles from the first send (comparable with the capture's own).
    pub p50_from_send_ms: Option<f64>,
    pub p99_from_send_ms: Option<f64>,
    pub later_than: [Option<f64>; 3],
    /// Per run (mean over the repetitions).
    pub retransmissions: Option<f64>,
    pub redundant_bytes: Option<f64>,
}

#[derive(Serialize)]
struct PathJson<'a> {
    capture: String,
    receiver: Option<String>,
    connection: String,
    path: &'a PathEstimate,
    writes: usize,
    duration_s: f64,
    write_pattern: Option<&'a thinlab_trace::write_pattern::WritePattern>,
    repetitions: u32,
}

fn pick(
    conns: Vec<ConnectionAnalysis>,
    sel: Option<&str>,
    cap: &Path,
) -> Result<ConnectionAnalysis> {
    let ids: Vec<String> = conns.iter().map(ConnectionAnalysis::id).collect();
    let chosen = match sel {
        Some(s) => conns
            .into_iter()
            .filter(|c| c.matches_exact(s) || c.matches(s))
            .find(|c| c.at_sender),
        None => conns
            .into_iter()
            .filter(|c| c.at_sender)
            .max_by_key(|c| c.metrics.unique_bytes_sent),
    };
    chosen
        .filter(|c| !c.records.writes.is_empty())
        .ok_or_else(|| {
            BadInput::new(format!(
                "{}: no flow with data seen at its sender{}; flows: {}",
                cap.display(),
                sel.map_or(String::new(), |s| format!(" matching --connection {s}")),
                if ids.is_empty() {
                    "(none)".into()
                } else {
                    ids.join(", ")
                }
            ))
            .into()
        })
}

fn scenario(path: &PathEstimate, writes_csv: &Path, dur_s: f64, reps: u32, set: usize) -> String {
    let (_, profile, mechs) = SETS[set];
    format!(
        "# written by thinlab whatif: the captured writes over the estimated path\n\
         name = \"whatif-{}\"\nseed = 1\nduration = \"{}ms\"\nrepetitions = {reps}\n\n\
         [network]\nrtt = \"{}us\"\nbandwidth = \"{}\"\njitter = \"{}us\"\nqueue_packets = 1000\n\n\
         [network.forward.loss]\n{}\n\n\
         [network.reverse.loss]\nmodel = \"bernoulli\"\nrate = {}\n\n\
         [[flow]]\nname = \"capture\"\napp = {{ kind = \"trace\", file = {:?} }}\n\
         tcp = {{ profile = \"{profile}\", nodelay = true, mechanisms = {mechs} }}\n",
        clean_name(SETS[set].0),
        (dur_s * 1000.0).ceil() as u64 + 1000,
        (path.rtt_ms * 1000.0).round() as u64,
        path.bandwidth,
        (path.jitter_ms * 1000.0).round() as u64,
        match path.forward_burst {
            Some((p, r)) => format!("model = \"gilbert-elliott\"\np = {p}\nr = {r}"),
            None => format!("model = \"bernoulli\"\nrate = {}", path.forward_loss_rate),
        },
        path.reverse_loss_rate,
        writes_csv.display().to_string(),
    )
}

/// Percentile `q` and share above `x` of a CDF given as (x, fraction) points.
fn quantile(cdf: &[(f64, f64)], q: f64) -> Option<f64> {
    cdf.iter().find(|p| p.1 >= q - 1e-12).map(|p| p.0)
}

fn share_above(cdf: &[(f64, f64)], x: f64) -> Option<f64> {
    if cdf.is_empty() {
        return None;
    }
    let f = cdf
        .iter()
        .take_while(|p| p.0 <= x)
        .last()
        .map_or(0.0, |p| p.1);
    Some(1.0 - f)
}

/// A row from a CDF of latency from the write (x ms, fraction), its mean, and the per-run
/// metrics of the set's runs (mean over the runs).
fn row_of(set: &str, cdf: &[(f64, f64)], mean: Option<f64>, runs: &[serde_json::Value]) -> Row {
    let per_run = |f: &dyn Fn(&serde_json::Value) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|r| f(&r["flows"][0]["metrics"]))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Row {
        set: set.to_string(),
        p50_ms: quantile(cdf, 0.5),
        p90_ms: quantile(cdf, 0.9),
        p99_ms: quantile(cdf, 0.99),
        mean_ms: mean.or_else(|| per_run(&|m| m["app_latency_ms"]["mean"].as_f64())),
        p50_from_send_ms: per_run(&|m| m["app_latency_from_send_ms"]["p50"].as_f64()),
        p99_from_send_ms: per_run(&|m| m["app_latency_from_send_ms"]["p99"].as_f64()),
        later_than: LATE_MS.map(|x| share_above(cdf, x)),
        retransmissions: per_run(&|m| m["retransmissions"].as_f64()),
        redundant_bytes: per_run(&|m| m["redundant_bytes_sent"].as_f64()),
    }
}

pub fn whatif(args: WhatifArgs) -> Result<()> {
    if let Some(sel) = &args.connection {
        check_selector(sel)?;
    }
    let flows = capture_flows::read(&args.capture, args.receiver.as_deref(), args.clock_offset)?;
    let has_rx = flows.rcv.is_some();
    let c = pick(flows.conns, args.connection.as_deref(), &args.capture)?;
    let Some(path) = whatif_path::path(&c) else {
        return Err(BadInput::new(format!(
            "{}: flow {} has no acknowledged write: no round trip to estimate the path from",
            args.capture.display(),
            c.id()
        ))
        .into());
    };
    let w = whatif_path::writes(&c);
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args
            .capture
            .file_stem()
            .map_or("capture".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from("results").join(format!("whatif-{}", clean_name(&stem)))
    });
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let out = out
        .canonicalize()
        .context("resolving the output directory")?;
    let writes_csv = out.join("writes.csv");
    let mut text = String::from("time,bytes\n");
    for (t, b) in &w.writes {
        let _ = writeln!(text, "{:.9},{b}", *t as f64 / 1e9);
    }
    fs::write(&writes_csv, text).with_context(|| format!("writing {}", writes_csv.display()))?;
    let dur_s = w.writes.last().map_or(0.0, |x| x.0 as f64 / 1e9);
    let pj = PathJson {
        capture: args.capture.display().to_string(),
        receiver: args.receiver.as_ref().map(|p| p.display().to_string()),
        connection: c.id(),
        path: &path,
        writes: w.writes.len(),
        duration_s: dur_s,
        write_pattern: w.pattern.as_ref(),
        repetitions: args.repetitions,
    };
    fs::write(
        out.join("path.json"),
        serde_json::to_string_pretty(&pj)? + "\n",
    )?;

    // What the capture shows: latency from the first send (application-layer with the
    // receiver capture, ACK latency without).
    let milestone = if has_rx {
        Milestone::App
    } else {
        Milestone::Ack
    };
    let mut captured = latency_samples_ms(&c.records, milestone, Origin::FirstSend);
    captured.sort_unstable_by(f64::total_cmp);
    let cap_cdf = latency_cdf(&captured, usize::MAX);
    let label = if has_rx {
        "as captured"
    } else {
        "as captured (ACK latency)"
    };
    let mut cap_row = row_of(label, &cap_cdf, None, &[]);
    let stats = thinlab_trace::LatencyStats::from_sorted(&captured);
    (
        cap_row.mean_ms,
        cap_row.p50_from_send_ms,
        cap_row.p99_from_send_ms,
    ) = (stats.mean, stats.p50, stats.p99);
    cap_row.retransmissions = Some(c.metrics.retransmissions as f64);
    cap_row.redundant_bytes = Some(c.metrics.redundant_bytes_sent as f64);
    let mut rows = vec![cap_row];
    let mut series = vec![Series {
        label: label.into(),
        points: latency_cdf(&captured, CDF_POINTS),
    }];
    for (i, (name, _, _)) in SETS.iter().enumerate() {
        let dir = out.join("sets").join(clean_name(name));
        fs::create_dir_all(&dir)?;
        let file = dir.join("scenario.toml");
        fs::write(
            &file,
            scenario(&path, &writes_csv, dur_s, args.repetitions, i),
        )?;
        crate::run::run(RunArgs {
            scenario: file,
            out: Some(dir.clone()),
            sets: Vec::new(),
            jobs: args.jobs,
            quiet: true,
            capture: false,
            strict: false,
            force: true,
            backend: None,
            format: crate::args::Format::Csv,
            ray: None,
        })
        .with_context(|| format!("simulating the set {name}"))?;
        let (cdf, runs) = cdf_of(&dir)?;
        rows.push(row_of(name, &cdf, None, &runs));
        series.push(Series {
            label: name.to_string(),
            points: cdf,
        });
    }
    write_outputs(&out, &rows, &series, &path, has_rx, &c, &args)?;
    if !args.quiet {
        print!("{}", table(&rows));
        println!("results in {}", out.display());
    }
    Ok(())
}

/// The pooled CDF of application-layer latency from the write of a set's runs (its run
/// folder's `latency_cdf.csv`, every repetition) and the runs of its `summary.json`.
fn cdf_of(dir: &Path) -> Result<(Cdf, Vec<serde_json::Value>)> {
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json"))?)?;
    let runs = summary["runs"].as_array().cloned().unwrap_or_default();
    let mut cdf = Vec::new();
    let mut rdr = csv::Reader::from_path(dir.join("latency_cdf.csv"))?;
    for rec in rdr.records() {
        let rec = rec?;
        cdf.push((rec[2].parse::<f64>()?, rec[3].parse::<f64>()?));
    }
    Ok((cdf, runs))
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn table(rows: &[Row]) -> String {
    let mut t = format!(
        "{:<14} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>8} {:>10}\n",
        "set",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "mean ms",
        ">100ms",
        ">200ms",
        ">400ms",
        "retrans",
        "redundant"
    );
    for r in rows {
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.2}%", v * 100.0));
        let _ = writeln!(
            t,
            "{:<14} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>8} {:>10}",
            r.set,
            fmt(r.p50_ms, 1),
            fmt(r.p90_ms, 1),
            fmt(r.p99_ms, 1),
            fmt(r.mean_ms, 1),
            pct(r.later_than[0]),
            pct(r.later_than[1]),
            pct(r.later_than[2]),
            fmt(r.retransmissions, 1),
            fmt(r.redundant_bytes, 0)
        );
    }
    t
}

fn write_outputs(
    out: &Path,
    rows: &[Row],
    series: &[Series],
    path: &PathEstimate,
    has_rx: bool,
    c: &ConnectionAnalysis,
    args: &WhatifArgs,
) -> Result<()> {
    let mut w = csv::Writer::from_path(out.join("whatif.csv"))?;
    w.write_record([
        "set",
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "mean_ms",
        "p50_from_send_ms",
        "p99_from_send_ms",
        "later_than_100ms",
        "later_than_200ms",
        "later_than_400ms",
        "retransmissions_per_run",
        "redundant_bytes_per_run",
    ])?;
    let s = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        w.write_record([
            r.set.clone(),
            s(r.p50_ms),
            s(r.p90_ms),
            s(r.p99_ms),
            s(r.mean_ms),
            s(r.p50_from_send_ms),
            s(r.p99_from_send_ms),
            s(r.later_than[0]),
            s(r.later_than[1]),
            s(r.later_than[2]),
            s(r.retransmissions),
            s(r.redundant_bytes),
        ])?;
    }
    w.flush()?;
    let what = if has_rx {
        "application-layer latency"
    } else {
        "ACK latency (no receiver capture)"
    };
    let mut md = format!(
        "# thinlab whatif: {}\n\nFlow {}. Path estimated from the capture: RTT {:.2} ms, jitter {:.2} ms \
         ({} samples), loss {:.4} forward ({}) and {:.4} reverse (from the {}), bottleneck {} (assumed). \
         {} repetitions per set. The capture's own row is {what} from the first send; the sets' \
         rows are latency from the write (the simulator sees the writes); `p50/p99 from send` \
         compare with the capture's.\n\n```\n{}```\n",
        args.capture.display(),
        c.id(),
        path.rtt_ms,
        path.jitter_ms,
        path.rtt_samples,
        path.forward_loss_rate,
        path.forward_burst.map_or("independent".to_string(), |(p, r)| format!(
            "Gilbert-Elliott p {p:.4}, r {r:.4}: mean burst {:.2}",
            1.0 / r
        )),
        path.reverse_loss_rate,
        path.loss_from,
        path.bandwidth,
        args.repetitions,
        table(rows)
    );
    md.push_str("\nFrom the first send (sets: mean of the runs' percentiles):\n\n| set | p50 ms | p99 ms |\n|---|---|---|\n");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            r.set,
            fmt(r.p50_from_send_ms, 1),
            fmt(r.p99_from_send_ms, 1)
        );
    }
    fs::write(out.join("whatif.md"), md)?;
    let plot: Vec<Series> = series
        .iter()
        .filter(|s| !s.points.is_empty())
        .cloned()
        .collect();
    if plot.is_empty() {
        return Ok(());
    }
    for (file, view, log_x, kind) in [
        ("latency_cdf.svg", View::Cdf, suggest_log_x(&plot), "CDF"),
        ("latency_ccdf.svg", View::Ccdf, false, "tail (CCDF)"),
    ] {
        let spec = PlotSpec::latency(
            format!("what if: latency per mechanism set, {kind}"),
            view,
            log_x,
        );
        let svg = cdf_svg(&plot, &spec).with_context(|| format!("drawing {file}"))?;
        fs::write(out.join(file), svg)?;
    }
    Ok(())
}
