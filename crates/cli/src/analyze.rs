//! `thinlab analyze SENDER.pcap [--receiver RECEIVER.pcap] [--out DIR] [--connection SEL]`:
//! reads captures ([`thinlab_trace::pcap`]), reconstructs every TCP connection
//! ([`thinlab_trace::flows`]) and writes, like `run`:
//! - `summary.json`: `"latency_origin": "first-send"`, what reading each capture found (records,
//!   drops by reason, the byte offset where reading stopped on a truncated or corrupt file), and
//!   per connection the metrics of docs/spec/interface.md plus analyseTCP-style extras;
//! - `connections.csv`: one row per connection, scalar metrics flattened;
//! - `latency_cdf.csv` and `latency_cdf.svg` / `latency_ccdf.svg`: application-layer latency
//!   with a receiver capture, ACK latency without.
//!
//! A missing or unreadable file is bad input (exit 2); a truncated capture is not an error.

use crate::args::AnalyzeArgs;
use crate::capture_flows::{self, check_selector};
use crate::error::BadInput;
use crate::run::clean_name;
use anyhow::{Context, Result};
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};
use thinlab_trace::clock::{ClockCorrection, ClockEstimate};
use thinlab_trace::flows::{ConnectionAnalysis, Extras, ACK_CLOCKED_WINDOW_NS};
use thinlab_trace::metrics::{latency_samples_ms, Milestone, Origin};
use thinlab_trace::pcap::{CaptureStats, ChecksumOffload};
use thinlab_trace::plot::{cdf_svg, suggest_log_x, PlotSpec, Series, View};
use thinlab_trace::write_pattern::{self, WritePattern};
use thinlab_trace::{latency_cdf, FlowMetrics};

const CDF_POINTS: usize = 400;

#[derive(Serialize)]
struct CaptureJson<'a> {
    path: String,
    #[serde(flatten)]
    stats: &'a CaptureStats,
    /// Set when checksum offload explains every checksum error.
    checksum_offload: Option<ChecksumOffload>,
}

/// The receiver capture's clock against the sender capture's, for one flow.
#[derive(Serialize)]
struct ClockJson {
    #[serde(flatten)]
    applied: ClockCorrection,
    /// What the captures say (also when `--clock-offset` was given).
    estimate: Option<ClockEstimate>,
    estimated_offset_ms: Option<f64>,
}

#[derive(Serialize)]
struct ConnJson<'a> {
    id: String,
    sender: String,
    receiver: String,
    client: String,
    server: String,
    receiver_matched: bool,
    /// False for a direction seen only at its receiver (sender capture only): its latencies
    /// and retransmission causes are unknown (null / 0).
    at_sender: bool,
    first_time_s: f64,
    last_time_s: f64,
    clock: Option<ClockJson>,
    metrics: serde_json::Value,
    extras: &'a Extras,
    /// Writes recovered for a fixed-size, fixed-interval source (docs/analyze.md).
    write_pattern: Option<WritePattern>,
}

/// How `retransmissions_by_cause` was estimated (a capture cannot see why a segment was
/// retransmitted): see `docs/analyze.md`.
#[derive(Serialize)]
struct CauseHeuristic {
    rule: &'static str,
    ack_clocked_window_ms: f64,
    timer_slack_ms: f64,
}

/// What every latency of a capture misses (docs/analyze.md).
pub const LATENCY_CAVEAT: &str = "latencies are measured from each byte's first transmission \
     (send-based): a capture cannot see the application's writes, so time a write spent in the \
     send buffer (held by the congestion window or behind a retransmission) and writes merged \
     into one segment are invisible, and latency from the write is higher; `write_pattern` \
     estimates the difference for fixed-size, fixed-interval sources";

#[derive(Serialize)]
struct Summary<'a> {
    tool: &'a str,
    version: &'a str,
    latency_origin: &'a str,
    latency_caveat: &'a str,
    retransmission_cause_heuristic: CauseHeuristic,
    sender_capture: CaptureJson<'a>,
    receiver_capture: Option<CaptureJson<'a>>,
    connections: Vec<ConnJson<'a>>,
    /// Connections beyond the [`MAX_LISTED_CONNECTIONS`] busiest, summarised.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_listed: Option<&'a NotListed>,
}

fn default_out(sender: &Path) -> PathBuf {
    let stem = sender
        .file_stem()
        .map_or("capture".to_string(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("results").join(format!("analyze-{}", clean_name(&stem)))
}

fn warn_stats(path: &Path, s: &CaptureStats) {
    if let Some(o) = s.checksum_offload() {
        eprintln!(
            "note: {}: all {} TCP packets from {} have a wrong checksum and no other host's do: the capture was taken on that host with checksum offload (its NIC fills the checksum in after the capture point); not corruption",
            path.display(),
            o.packets,
            o.source
        );
    } else if s.checksum_errors > 0 {
        eprintln!(
            "warning: {}: {} TCP packets with a wrong checksum (kept)",
            path.display(),
            s.checksum_errors
        );
    }
    if let (Some(off), Some(why)) = (s.stopped_at, &s.stop_reason) {
        eprintln!(
            "warning: {}: stopped reading at byte offset {off} of {}: {why}; analysing the {} records before it",
            path.display(),
            s.bytes,
            s.records
        );
    }
    let dropped = s.dropped_total();
    if dropped > 0 {
        eprintln!(
            "warning: {}: {dropped} records dropped ({:?})",
            path.display(),
            s.dropped
        );
    }
}

pub fn analyze(args: AnalyzeArgs) -> Result<()> {
    analyze_listing(args).map(drop)
}

/// [`analyze`], returning the connections it listed (the Python API's per-write rows).
pub fn analyze_listing(args: AnalyzeArgs) -> Result<Vec<ConnectionAnalysis>> {
    if let Some(sel) = &args.connection {
        check_selector(sel)?;
    }
    let capture_flows::Flows {
        snd,
        rcv,
        mut conns,
        timestamps: ts,
        skipped_packets,
    } = capture_flows::read(&args.sender, args.receiver.as_deref(), args.clock_offset)?;
    if ts.any() {
        eprintln!(
            "warning: {}: implausible capture timestamps: {} packets stamped before the previous one, {} gaps over a day, {} stamped at 0 or after 2100; latencies across them are meaningless",
            args.sender.display(),
            ts.backwards,
            ts.jumps,
            ts.absurd
        );
    }
    if skipped_packets > 0 {
        eprintln!(
            "warning: {}: only the first {} connections are analysed; {} packets of later connections were skipped",
            args.sender.display(),
            thinlab_trace::flows::MAX_CONNECTIONS,
            skipped_packets
        );
    }
    warn_stats(&args.sender, &snd);
    if let (Some(p), Some(r)) = (&args.receiver, &rcv) {
        warn_stats(p, r);
    }
    let dups: u64 = conns.iter().map(|c| c.extras.duplicates).sum();
    let gaps: u64 = conns.iter().map(|c| c.extras.sequence_gaps).sum();
    if dups > 0 {
        eprintln!(
            "warning: {}: {dups} data segments are exact duplicates of the one before (a capture artefact); counted as `duplicates`, not retransmissions",
            args.sender.display()
        );
    }
    if gaps > 0 {
        eprintln!(
            "warning: {}: {gaps} data segments start above the highest byte sent before: the capture missed data the sender sent (`sequence_gaps`)",
            args.sender.display()
        );
    }
    if let Some(sel) = &args.connection {
        let all: Vec<String> = conns.iter().map(ConnectionAnalysis::id).collect();
        // `A-B` is the flow from A to B; when no flow has that id, both directions of the
        // connection.
        if conns.iter().any(|c| c.matches_exact(sel)) {
            conns.retain(|c| c.matches_exact(sel));
        } else {
            conns.retain(|c| c.matches(sel));
        }
        if conns.is_empty() {
            return Err(BadInput::new(format!(
                "--connection {sel}: no such connection in {}; expected one of: {}",
                args.sender.display(),
                if all.is_empty() {
                    "(none)".to_string()
                } else {
                    all.join(", ")
                }
            ))
            .into());
        }
    }
    // A capture of a million connections (a SYN flood) lists the busiest in full and
    // summarises the rest.
    let (conns, rest) = keep_busiest(conns, MAX_LISTED_CONNECTIONS);
    if rest.connections > 0 {
        eprintln!(
            "note: {} connections listed in full (the most data packets); {} more ({} packets, {} without data) summarised under `not_listed` in summary.json",
            conns.len(),
            rest.connections,
            rest.packets,
            rest.without_data
        );
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.sender));
    fs::create_dir_all(&out)
        .with_context(|| format!("creating the output directory {}", out.display()))?;
    let has_rx = rcv.is_some();
    write_summary(&out, &args, &snd, rcv.as_ref(), &conns, &rest)?;
    write_csv(&out.join("connections.csv"), &conns)?;
    let milestone = if has_rx {
        Milestone::App
    } else {
        Milestone::Ack
    };
    let lines: Vec<(String, Vec<f64>)> = conns
        .iter()
        .map(|c| {
            (
                c.id(),
                latency_samples_ms(&c.records, milestone, Origin::FirstSend),
            )
        })
        .filter(|(_, samples)| !samples.is_empty())
        .collect();
    write_cdf(&out, &lines, has_rx, &args.sender)?;
    if !args.quiet {
        for c in &conns {
            let m = &c.metrics;
            let lat = if has_rx {
                &m.app_latency_ms
            } else {
                &m.ack_latency_ms
            };
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
            println!(
                "{}: {} data packets, {} retransmissions (est. {} fast, {} early, {} rack, {} tlp, {} timeout), {} bundles, {} latency p50 {} p99 {} max {} ms",
                c.id(),
                m.data_packets_sent,
                m.retransmissions,
                m.retransmissions_by_cause.fast,
                m.retransmissions_by_cause.early,
                m.retransmissions_by_cause.rack,
                m.retransmissions_by_cause.tlp,
                m.retransmissions_by_cause.rto,
                m.rdb_bundles,
                if has_rx { "app" } else { "ack" },
                f(lat.p50),
                f(lat.p99),
                f(lat.max)
            );
        }
        println!(
            "note: latencies are from the first send; a capture cannot see the application's writes (held or merged writes are invisible: summary.json latency_caveat)"
        );
        for c in conns.iter().filter(|c| c.at_sender) {
            if let Some(p) = write_pattern::estimate(&c.records.writes) {
                println!(
                    "{}: {} B every {:.1} ms: {} of {} writes held, {} merged; from the write, latency is {:.1} ms higher on the mean",
                    c.id(),
                    p.write_bytes,
                    p.interval_ms,
                    p.held_writes,
                    p.writes,
                    p.merged_writes,
                    p.mean_hold_ms
                );
            }
        }
        println!(
            "{}; results in {}",
            crate::output::count(conns.len(), "flow"),
            out.display()
        );
    }
    Ok(conns)
}

/// Connections listed in full in `summary.json`, `connections.csv` and the table.
pub const MAX_LISTED_CONNECTIONS: usize = 1000;
/// Most lines in one plot (the busiest connections); `latency_cdf.csv` has every line.
pub const MAX_PLOT_LINES: usize = 64;

/// The connections not listed in full.
#[derive(Default, Serialize)]
struct NotListed {
    connections: u64,
    packets: u64,
    data_packets_sent: u64,
    /// Connections without a data packet (a SYN flood's).
    without_data: u64,
}

/// The `max` connections with the most data packets, in capture order, and a summary of the
/// rest.
fn keep_busiest(
    conns: Vec<ConnectionAnalysis>,
    max: usize,
) -> (Vec<ConnectionAnalysis>, NotListed) {
    let mut rest = NotListed::default();
    if conns.len() <= max {
        return (conns, rest);
    }
    let mut order: Vec<usize> = (0..conns.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(conns[i].metrics.data_packets_sent));
    let mut keep = vec![false; conns.len()];
    for &i in &order[..max] {
        keep[i] = true;
    }
    let mut kept = Vec::with_capacity(max);
    for (c, k) in conns.into_iter().zip(keep) {
        if k {
            kept.push(c);
        } else {
            rest.connections += 1;
            rest.packets += c.extras.packets;
            rest.data_packets_sent += c.metrics.data_packets_sent;
            rest.without_data += u64::from(c.metrics.data_packets_sent == 0);
        }
    }
    (kept, rest)
}

fn write_summary(
    out: &Path,
    args: &AnalyzeArgs,
    snd: &CaptureStats,
    rcv: Option<&CaptureStats>,
    conns: &[ConnectionAnalysis],
    rest: &NotListed,
) -> Result<()> {
    let fmt = thinlab_trace::flows::fmt_addr;
    let summary = Summary {
        tool: "thinlab analyze",
        version: env!("CARGO_PKG_VERSION"),
        latency_origin: "first-send",
        latency_caveat: LATENCY_CAVEAT,
        retransmission_cause_heuristic: CauseHeuristic {
            rule: "a segment carrying no new byte is a retransmission. ACK-clocked (at most \
                   ack_clocked_window_ms after the last ACK): 'fast' after an advancing ACK or \
                   3+ dupACKs, 'early' after 1-2 dupACKs. Timer-driven: 'rack' within \
                   min_rtt/4 + timer_slack_ms of a dupACK/SACK, 'tlp' for the first timeout of \
                   an episode that fires under 3/4 of SRTT + 200 ms after the last send or probes \
                   the highest segment, else 'rto' (an 'rto' of the first unacknowledged byte \
                   is an RTO expiry, rto_events). extras.retransmission_confidence counts how \
                   sure each was (docs/analyze.md)",
            ack_clocked_window_ms: ACK_CLOCKED_WINDOW_NS as f64 / 1e6,
            timer_slack_ms: thinlab_trace::attribution::TIMER_SLACK_NS as f64 / 1e6,
        },
        sender_capture: CaptureJson {
            path: args.sender.display().to_string(),
            stats: snd,
            checksum_offload: snd.checksum_offload(),
        },
        receiver_capture: match (&args.receiver, rcv) {
            (Some(p), Some(r)) => Some(CaptureJson {
                path: p.display().to_string(),
                stats: r,
                checksum_offload: r.checksum_offload(),
            }),
            _ => None,
        },
        connections: conns
            .iter()
            .map(|c| ConnJson {
                id: c.id(),
                sender: fmt(&c.sender),
                receiver: fmt(&c.receiver),
                client: fmt(&c.client),
                server: fmt(&c.server),
                receiver_matched: c.receiver_matched,
                at_sender: c.at_sender,
                first_time_s: c.first_ns as f64 / 1e9,
                last_time_s: c.last_ns as f64 / 1e9,
                clock: c.clock.map(|applied| ClockJson {
                    applied,
                    estimate: c.clock_estimate,
                    estimated_offset_ms: c.clock_estimate.map(|e| e.offset_ns / 1e6),
                }),
                metrics: metrics_json(c),
                extras: &c.extras,
                write_pattern: c
                    .at_sender
                    .then(|| write_pattern::estimate(&c.records.writes))
                    .flatten(),
            })
            .collect(),
        not_listed: (rest.connections > 0).then_some(rest),
    };
    let path = out.join("summary.json");
    let mut text = serde_json::to_string_pretty(&summary).context("serializing summary.json")?;
    text.push('\n');
    fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// The metrics, with `bytes_delivered` and `goodput_bps` null when the receiver was not seen
/// (unknown, not 0).
fn metrics_json(c: &ConnectionAnalysis) -> serde_json::Value {
    let mut v = serde_json::to_value(&c.metrics).unwrap_or_default();
    if !c.receiver_matched {
        for k in ["bytes_delivered", "goodput_bps"] {
            v[k] = serde_json::Value::Null;
        }
    }
    v
}

fn extras_scalars(e: &Extras) -> Vec<(String, Option<f64>)> {
    let mut v = vec![
        ("extras.packets".to_string(), Some(e.packets as f64)),
        ("extras.dupacks".to_string(), Some(e.dupacks as f64)),
        ("extras.duplicates".to_string(), Some(e.duplicates as f64)),
        (
            "extras.sequence_gaps".to_string(),
            Some(e.sequence_gaps as f64),
        ),
        (
            "extras.sequence_gap_bytes".to_string(),
            Some(e.sequence_gap_bytes as f64),
        ),
        (
            "extras.estimated_loss_rate".to_string(),
            e.estimated_loss_rate,
        ),
        (
            "extras.lost_packets".to_string(),
            e.lost_packets.map(|x| x as f64),
        ),
        ("extras.loss_rate".to_string(), e.loss_rate),
        (
            "extras.reverse_lost_packets".to_string(),
            e.reverse_lost_packets.map(|x| x as f64),
        ),
        ("extras.reverse_loss_rate".to_string(), e.reverse_loss_rate),
        ("extras.loss_after_loss".to_string(), e.loss_after_loss),
        ("extras.mean_loss_burst".to_string(), e.mean_loss_burst),
    ];
    let c = &e.retransmission_confidence;
    for (k, x) in [("high", c.high), ("medium", c.medium), ("low", c.low)] {
        v.push((
            format!("extras.retransmission_confidence.{k}"),
            Some(x as f64),
        ));
    }
    for (name, s) in [
        ("inter_transmission_ms", &e.inter_transmission_ms),
        ("packets_in_flight", &e.packets_in_flight),
    ] {
        for (field, x) in [
            ("mean", s.mean),
            ("p50", s.p50),
            ("p99", s.p99),
            ("max", s.max),
        ] {
            v.push((format!("extras.{name}.{field}"), x));
        }
    }
    v
}

fn write_csv(path: &Path, conns: &[ConnectionAnalysis]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
    let mut header = vec![
        "connection".to_string(),
        "at_sender".to_string(),
        "clock_offset_ms".to_string(),
    ];
    header.extend(FlowMetrics::scalar_names().iter().cloned());
    header.extend(
        extras_scalars(&Extras::default())
            .into_iter()
            .map(|(k, _)| k),
    );
    w.write_record(&header)?;
    for c in conns {
        let mut row = vec![
            c.id(),
            c.at_sender.to_string(),
            c.clock.map_or(String::new(), |k| k.offset_ms.to_string()),
        ];
        let unknown =
            |k: &str| !c.receiver_matched && (k == "bytes_delivered" || k == "goodput_bps");
        let vals = c
            .metrics
            .scalars()
            .into_iter()
            .map(|(k, v)| if unknown(&k) { (k, None) } else { (k, v) })
            .chain(extras_scalars(&c.extras));
        row.extend(vals.map(|(_, v)| v.map_or(String::new(), |v| v.to_string())));
        w.write_record(&row)?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))
}

fn write_cdf(out: &Path, lines: &[(String, Vec<f64>)], app: bool, sender: &Path) -> Result<()> {
    let path = out.join("latency_cdf.csv");
    let mut w =
        csv::Writer::from_path(&path).with_context(|| format!("creating {}", path.display()))?;
    w.write_record(["connection", "latency", "latency_ms", "fraction"])?;
    let what = if app { "app" } else { "ack" };
    for (id, samples) in lines {
        for (x, f) in latency_cdf(samples, CDF_POINTS) {
            w.write_record([id.as_str(), what, &x.to_string(), &f.to_string()])?;
        }
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    for file in ["latency_cdf.svg", "latency_ccdf.svg"] {
        let _ = fs::remove_file(out.join(file));
    }
    if lines.is_empty() {
        return Ok(()); // nothing to draw: no plot of empty series
    }
    // The busiest connections (most samples), in capture order.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lines[i].1.len()));
    order.truncate(MAX_PLOT_LINES);
    order.sort_unstable();
    let series: Vec<Series> = order
        .iter()
        .map(|&i| &lines[i])
        .map(|(id, s)| Series {
            label: id.clone(),
            points: latency_cdf(s, CDF_POINTS),
        })
        .collect();
    let x_label = if app {
        "application-layer latency from first send (ms)"
    } else {
        "ACK latency from first send (ms)"
    };
    let name = sender
        .file_name()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    for (file, view, log_x, kind) in [
        ("latency_cdf.svg", View::Cdf, suggest_log_x(&series), "CDF"),
        ("latency_ccdf.svg", View::Ccdf, false, "tail (CCDF)"),
    ] {
        let mut spec = PlotSpec::latency(format!("{name}: {x_label}, {kind}"), view, log_x);
        spec.x_label = x_label.into();
        let svg = cdf_svg(&series, &spec).with_context(|| format!("drawing {file}"))?;
        let p = out.join(file);
        fs::write(&p, svg).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
