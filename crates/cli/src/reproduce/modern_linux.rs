//! Study `modern-linux`: a question no paper of docs/references.md could ask — do the
//! thin-stream mechanisms (RDB, linear timeouts, thin dupACK; Evensen (2008), "Improving TCP for
//! time-dependent applications", and Petlund et al. (2008), "TCP Enhancements for Interactive
//! Thin-Stream Applications") still matter on a stack with RACK-TLP (RFC 8985) and PRR (RFC
//! 6937)? One thin stream with the `linux` profile, each mechanism set across loss, write
//! interval and RTT: the 99th-percentile application latency and the share of writes later
//! than 200 ms. It reproduces no claim (its claims file is empty); its checks assert the
//! effects that hold in quick and full runs.

use super::report::{md_table, num};
use super::{p, Ctx, Ran, Report, Study};
use crate::reproduce::ScenarioFile;
use anyhow::Result;
use toml::Value;

pub fn study() -> Study {
    Study {
        name: "modern-linux",
        title:
            "Do RDB, linear timeouts and thin dupACK still matter with RACK-TLP and PRR? (no paper)",
        run,
    }
}

const SCENARIO: ScenarioFile = ScenarioFile {
    path: "scenarios/reproduce/modern-linux.toml",
    text: include_str!("../../../../scenarios/reproduce/modern-linux.toml"),
};

const MECHANISMS: &str = "flow.0.tcp.mechanisms";
const LOSS: &str = "network.loss.rate";
const INTERVAL: &str = "flow.0.app.interval";
const RTT: &str = "network.rtt";

/// The `linux` profile's own set (RACK-TLP), then with the thin-stream mechanisms added.
const VARIANTS: [(&str, &[&str]); 4] = [
    ("linux (RACK-TLP, PRR)", &["tlp", "rack"]),
    ("+ RDB", &["tlp", "rack", "rdb"]),
    (
        "+ LT + mFR",
        &["tlp", "rack", "linear-timeouts", "thin-dupack"],
    ),
    (
        "+ RDB + LT + mFR",
        &["tlp", "rack", "rdb", "linear-timeouts", "thin-dupack"],
    ),
];

struct Grid {
    loss: Vec<f64>,
    interval_ms: Vec<i64>,
    rtt_ms: Vec<i64>,
    duration: &'static str,
    reps: i64,
}

fn grid(quick: bool) -> Grid {
    if quick {
        Grid {
            loss: vec![0.0, 0.02, 0.1],
            interval_ms: vec![30, 300],
            rtt_ms: vec![50, 300],
            duration: "1min",
            reps: 1,
        }
    } else {
        Grid {
            loss: vec![0.0, 0.005, 0.01, 0.02, 0.05, 0.1],
            interval_ms: vec![10, 30, 100, 300],
            rtt_ms: vec![10, 50, 150, 300],
            duration: "10min",
            reps: 2,
        }
    }
}

fn mechanisms(m: &[&str]) -> Value {
    Value::Array(m.iter().map(|s| Value::from(*s)).collect())
}

fn ms(x: i64) -> Value {
    Value::from(format!("{x}ms"))
}

/// (p99 app latency ms, % of writes later than 200 ms), pooled over repetitions.
fn measure(ran: &Ran, loss: f64, iat: i64, rtt: i64, m: &[&str]) -> Result<(f64, f64)> {
    let c = ran.find(&[
        p(LOSS, loss),
        p(INTERVAL, ms(iat)),
        p(RTT, ms(rtt)),
        p(MECHANISMS, mechanisms(m)),
    ])?;
    let mut lat = ran.pooled_latency(c, 0);
    lat.sort_unstable_by(f64::total_cmp);
    let p99 = thinlab_trace::metrics::nearest_rank(&lat, 99, 100).unwrap_or(f64::NAN);
    let late = 100.0 * lat.iter().filter(|&&l| l > 200.0).count() as f64 / lat.len().max(1) as f64;
    Ok((p99, late))
}

fn run(ctx: &mut Ctx) -> Result<Report> {
    let g = grid(ctx.quick);
    let arr = |v: Vec<Value>| Value::Array(v);
    let sets = [
        ("duration", Value::from(g.duration)),
        ("repetitions", Value::from(g.reps)),
        (
            "sweep.network.loss.rate",
            arr(g.loss.iter().map(|&l| Value::from(l)).collect()),
        ),
        (
            "sweep.flow.0.app.interval",
            arr(g.interval_ms.iter().map(|&x| ms(x)).collect()),
        ),
        (
            "sweep.network.rtt",
            arr(g.rtt_ms.iter().map(|&x| ms(x)).collect()),
        ),
        (
            "sweep.flow.0.tcp.mechanisms",
            arr(VARIANTS.iter().map(|v| mechanisms(v.1)).collect()),
        ),
    ];
    let ran = ctx.run_file("grid", &SCENARIO, &sets)?;
    let mut rows = Vec::new();
    // gains[v] = p99 of variant v ÷ p99 of plain linux, at every lossy point
    let mut gains: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    let mut rdb_helps_fast = true;
    for &rtt in &g.rtt_ms {
        for &iat in &g.interval_ms {
            for &loss in &g.loss {
                let m: Vec<(f64, f64)> = VARIANTS
                    .iter()
                    .map(|v| measure(&ran, loss, iat, rtt, v.1))
                    .collect::<Result<_>>()?;
                let mut row = vec![
                    format!("{rtt} ms"),
                    format!("{iat} ms"),
                    format!("{} %", loss * 100.0),
                ];
                row.extend(
                    m.iter()
                        .map(|x| format!("{} ({})", num(x.0, 0), num(x.1, 2))),
                );
                rows.push(row);
                if loss > 0.0 {
                    for (vi, x) in m.iter().enumerate() {
                        gains[vi].push(x.0 / m[0].0);
                    }
                    if iat == 30 && ((loss - 0.02).abs() < 1e-9 || loss >= 0.1) {
                        rdb_helps_fast &= m[1].0 < m[0].0;
                    }
                }
            }
        }
    }
    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_unstable_by(f64::total_cmp);
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let mut report = Report {
        intro: format!(
            "Setup ({}): one thin stream, 120 B every interval (no jitter), Nagle off, \
             thinlab's `linux` profile (RACK-TLP, PRR, SACK, D-SACK, 200 ms minimum RTO; \
             docs/spec/mechanisms.md) over a 100 Mbit/s path with uniform random loss in each \
             direction. Grid: loss {:?}, write interval {:?} ms, RTT {:?} ms, the four \
             mechanism sets below; {} run(s) of {} per point. Latency = application-layer \
             latency of each write. No paper makes a claim here. The same question with the \
             real kernel and with thinlab's stack over the emulator (root, real time) is \
             answered in [emulated.md](emulated.md), run separately by the commands it \
             lists.\n",
            SCENARIO.path,
            g.loss.iter().map(|l| l * 100.0).collect::<Vec<_>>(),
            g.interval_ms,
            g.rtt_ms,
            g.reps,
            g.duration
        ),
        ..Report::default()
    };
    report.check(
        "with a 30 ms write interval, RDB lowers the 99th-percentile latency of the linux profile at 2 % and at 10 % loss, at every RTT",
        rdb_helps_fast,
    );
    let mut sec = String::from(
        "## Summary: p99 against plain linux\n\nMedian over the lossy grid points of p99(variant) ÷ p99(linux):\n\n",
    );
    let summary: Vec<Vec<String>> = VARIANTS
        .iter()
        .zip(&gains)
        .map(|(v, g)| {
            vec![
                v.0.to_string(),
                format!("{:.2}", median(g)),
                g.len().to_string(),
            ]
        })
        .collect();
    sec += &md_table(&["mechanisms", "median p99 ratio", "points"], &summary);
    report.section(sec);
    let mut header = vec!["RTT", "interval", "loss"];
    let labels: Vec<String> = VARIANTS
        .iter()
        .map(|v| format!("{}: p99 ms (% > 200 ms)", v.0))
        .collect();
    header.extend(labels.iter().map(|s| s.as_str()));
    let mut sec = String::from("## Every point\n\n");
    sec += &md_table(&header, &rows);
    report.section(sec);
    report.section(format!("## How to rerun\n\n```sh\n{}\n```\n", ran.command));
    Ok(report)
}
