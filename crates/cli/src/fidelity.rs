//! `thinlab fidelity SCENARIO`: the same scenario in the simulator (thinlab's TCP as the
//! scenario configures it, normally the `linux` profile) and over the emulator with the
//! running kernel's TCP, side by side. This is how the `linux` profile is held against Linux.
//!
//! Both sides are ordinary `thinlab run` result folders (`DIR/sim`, `DIR/kernel`) with the same
//! seeds, so either can be rerun or compared again alone. The comparison reads only their files:
//! per configuration and flow, each statistic's distribution over the repetitions (mean ± sd,
//! min–max) on each side and the relative difference of the means; the simulator's RTO
//! expiries (`rto_events`) against the kernel's own count (`TCP_INFO` `tcpi_total_rto` of the
//! sending socket, from `emu.json`), and the CDF and tail (CCDF) of both on one plot.
//! Goals, as stated in `docs/fidelity.md`: mean, p90 and p99 within 5 %, RTO expiries within
//! 20 %; each row says whether it meets its goal.

use crate::args::{FidelityArgs, RunArgs};
use crate::error::BadInput;
use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use thinlab_trace::plot::{cdf_svg, PlotSpec, Series, View};

/// Statistics compared, with their goal (largest relative difference of the means).
const STATS: [(&str, Option<f64>); 10] = [
    ("app_latency_ms.mean", Some(0.05)),
    ("app_latency_ms.p50", None),
    ("app_latency_ms.p90", Some(0.05)),
    ("app_latency_ms.p99", Some(0.05)),
    ("app_latency_ms.p999", None),
    ("app_latency_ms.max", None),
    ("retransmissions", None),
    ("rto_expiries", Some(0.20)),
    ("tlp_probes", None),
    ("writes", None),
];

pub fn fidelity(a: FidelityArgs) -> Result<()> {
    let stem = a
        .scenario
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().to_string());
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("fidelity-{stem}")));
    let mut sets = a.sets.clone();
    if let Some(n) = a.repetitions {
        sets.push(format!("repetitions={n}"));
    }
    let sides: &[(&str, &str)] = if a.compare_only {
        &[]
    } else {
        &[("sim", "sim"), ("emu", "kernel")]
    };
    for &(backend, dir) in sides {
        if !a.quiet {
            eprintln!(
                "fidelity: running the {dir} side into {}",
                out.join(dir).display()
            );
        }
        crate::run::run(RunArgs {
            scenario: a.scenario.clone(),
            out: Some(out.join(dir)),
            sets: sets.clone(),
            jobs: None,
            quiet: a.quiet,
            capture: false,
            strict: false,
            force: a.force,
            backend: Some(backend.into()),
            format: crate::args::Format::Csv,
            ray: None,
        })
        .with_context(|| format!("the {dir} side"))?;
    }
    let report = compare(&out.join("sim"), &out.join("kernel"))?;
    write_report(&out, &report)?;
    if !a.quiet {
        print!("{}", report.markdown_table());
        println!("report in {}", out.join("fidelity.md").display());
    }
    Ok(())
}

/// One statistic's values over the repetitions.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spread {
    pub values: Vec<f64>,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Spread {
    fn of(values: Vec<f64>) -> Spread {
        let n = values.len() as f64;
        if values.is_empty() {
            return Spread::default();
        }
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Spread {
            mean: Some(mean),
            sd: Some(var.sqrt()),
            min: values.iter().copied().reduce(f64::min),
            max: values.iter().copied().reduce(f64::max),
            values,
        }
    }
    fn text(&self) -> String {
        match (self.mean, self.sd, self.min, self.max) {
            (Some(m), Some(s), Some(lo), Some(hi)) => {
                format!("{} ± {} [{}–{}]", num(m), num(s), num(lo), num(hi))
            }
            _ => "–".into(),
        }
    }
}

fn num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub statistic: String,
    pub sim: Spread,
    pub kernel: Spread,
    /// (sim − kernel) / kernel of the means.
    pub relative_difference: Option<f64>,
    pub goal: Option<f64>,
    pub meets_goal: Option<bool>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Block {
    pub configuration: String,
    pub flow: String,
    pub rows: Vec<Row>,
    /// Percentiles of application latency over the writes of all repetitions pooled
    /// (from `latency_cdf.csv`): (quantile, simulator ms, kernel ms).
    pub pooled: Vec<(f64, Option<f64>, Option<f64>)>,
}

/// Quantiles of the pooled rows.
const POOLED: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

/// The smallest latency whose cumulative fraction reaches `q`.
fn quantile(points: &[(f64, f64)], q: f64) -> Option<f64> {
    points.iter().find(|p| p.1 >= q - 1e-12).map(|p| p.0)
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub blocks: Vec<Block>,
    /// Congestion control the kernel's sending sockets ran (read back), per run.
    pub kernel_cc: Vec<String>,
    /// Emulator lateness p99 per run (µs).
    pub lateness_p99_us: Vec<f64>,
    /// The run-health warning when the emulator was late (`crate::health::emulator_late`).
    pub emulator_late: Option<String>,
    /// The medians (µs) of the two parts of the kernel's write latencies spent in the hosts,
    /// which the simulator does not model (`emu.json`'s `host_parts`), one per run and flow
    /// that had any: write call → on the sender's wire, and arrived at the receiver's host →
    /// read.
    pub host_write_to_wire_p50_us: Vec<f64>,
    pub host_arrival_to_read_p50_us: Vec<f64>,
}

impl Report {
    fn markdown_table(&self) -> String {
        let mut s = String::new();
        for b in &self.blocks {
            let _ = writeln!(s, "\n### {} · {}\n", b.configuration, b.flow);
            let _ = writeln!(
                s,
                "| statistic | simulator (mean ± sd [min–max]) | kernel | difference | goal |"
            );
            let _ = writeln!(s, "|---|---|---|---|---|");
            for (q, sv, kv) in &b.pooled {
                let diff = match (sv, kv) {
                    (Some(a), Some(k)) if *k != 0.0 => format!("{:+.1} %", (a - k) / k * 100.0),
                    _ => "–".into(),
                };
                let show = |v: &Option<f64>| v.map_or("–".into(), num);
                let name = if *q >= 1.0 {
                    "max".to_string()
                } else {
                    format!("p{}", (q * 1000.0).round() / 10.0)
                };
                let _ = writeln!(
                    s,
                    "| app latency {name}, all runs pooled | {} | {} | {diff} | |",
                    show(sv),
                    show(kv)
                );
            }
            for r in &b.rows {
                let diff = r
                    .relative_difference
                    .map_or("–".into(), |d| format!("{:+.1} %", d * 100.0));
                let goal = match (r.goal, r.meets_goal) {
                    (Some(g), Some(true)) => format!("±{:.0} % ✓", g * 100.0),
                    (Some(g), Some(false)) => format!("±{:.0} % ✗", g * 100.0),
                    _ => String::new(),
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} |",
                    r.statistic,
                    r.sim.text(),
                    r.kernel.text(),
                    diff,
                    goal
                );
            }
        }
        s
    }
}

/// A run's key: its parameters (as JSON) and repetition.
type RunKey = (String, u64);

/// CDF points (latency ms, cumulative fraction) per (configuration, flow).
type Cdfs = BTreeMap<(String, String), Vec<(f64, f64)>>;

/// Per (configuration, flow): statistic → value per repetition.
type Values = BTreeMap<(String, String), BTreeMap<String, BTreeMap<u64, f64>>>;

fn read_json(p: &Path) -> Result<Value> {
    let text = fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
}

/// A configuration's label as `thinlab run` writes it (`latency_cdf.csv`, the tables):
/// `key=value, key=value`, strings without quotes; `default` without parameters.
fn label(params: &Value) -> String {
    match params.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(s) => format!("{k}={s}"),
                None => format!("{k}={v}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => "default".into(),
    }
}

/// Collects the per-run statistics of one side's `summary.json` (and `emu.json` for RTO
/// expiries and loss probes counted by the kernel).
fn values(dir: &Path, kernel: bool) -> Result<Values> {
    let summary = read_json(&dir.join("summary.json"))?;
    let mut kernel_counts: BTreeMap<RunKey, Value> = BTreeMap::new();
    if kernel {
        let emu = read_json(&dir.join("emu.json"))?;
        for r in emu["runs"].as_array().into_iter().flatten() {
            let key = (label(&r["params"]), r["repetition"].as_u64().unwrap_or(0));
            kernel_counts.insert(key, r["report"].clone());
        }
    }
    let mut out: Values = BTreeMap::new();
    let runs = summary["runs"]
        .as_array()
        .ok_or_else(|| BadInput::new(format!("{}: no runs", dir.display())))?;
    for r in runs {
        let config = label(&r["params"]);
        let rep = r["repetition"].as_u64().unwrap_or(0);
        for (fi, f) in r["flows"].as_array().into_iter().flatten().enumerate() {
            let flow = f["name"].as_str().unwrap_or("?").to_string();
            let m = &f["metrics"];
            let slot = out.entry((config.clone(), flow.clone())).or_default();
            let mut put = |k: &str, v: Option<f64>| {
                if let Some(v) = v {
                    slot.entry(k.to_string()).or_default().insert(rep, v);
                }
            };
            for (k, _) in STATS {
                if let Some((obj, field)) = k.split_once('.') {
                    put(k, m[obj][field].as_f64());
                }
            }
            put("retransmissions", m["retransmissions"].as_f64());
            put("writes", m["writes"].as_f64());
            if kernel {
                let rep_json = kernel_counts.get(&(config.clone(), rep));
                let sender = rep_json.map(|j| &j["flows"][fi]["sender"]["tcp_info"]);
                put("rto_expiries", sender.and_then(|s| s["total_rto"].as_f64()));
                let probes = rep_json.and_then(|j| {
                    j["client_netstat"]["tcp_ext"]["TCPLossProbes"]
                        .as_f64()
                        .or(Some(0.0))
                });
                put("tlp_probes", probes);
            } else {
                put("rto_expiries", m["rto_events"].as_f64());
                put("tlp_probes", m["tlp_probes"].as_f64());
            }
        }
    }
    Ok(out)
}

/// Compares two result folders of the same scenario.
pub fn compare(sim: &Path, kernel: &Path) -> Result<Report> {
    let s = values(sim, false)?;
    let k = values(kernel, true)?;
    let (s_cdf, k_cdf) = (cdf_points(sim)?, cdf_points(kernel)?);
    let mut blocks = Vec::new();
    for (key, sim_stats) in &s {
        let Some(k_stats) = k.get(key) else { continue };
        let rows = STATS
            .iter()
            .map(|&(name, goal)| {
                let col = |m: &BTreeMap<String, BTreeMap<u64, f64>>| {
                    Spread::of(
                        m.get(name)
                            .map_or(Vec::new(), |v| v.values().copied().collect()),
                    )
                };
                let (sv, kv) = (col(sim_stats), col(k_stats));
                let rel = match (sv.mean, kv.mean) {
                    (Some(a), Some(b)) if b != 0.0 => Some((a - b) / b),
                    (Some(a), Some(b)) if a == b => Some(0.0),
                    _ => None,
                };
                Row {
                    statistic: name.to_string(),
                    meets_goal: goal.zip(rel).map(|(g, r)| r.abs() <= g),
                    sim: sv,
                    kernel: kv,
                    relative_difference: rel,
                    goal,
                }
            })
            .collect();
        let pooled = POOLED
            .iter()
            .map(|&q| {
                let at = |c: &Cdfs| {
                    c.get(&(normal(&key.0), key.1.clone()))
                        .and_then(|p| quantile(p, q))
                };
                (q, at(&s_cdf), at(&k_cdf))
            })
            .collect();
        blocks.push(Block {
            configuration: key.0.clone(),
            flow: key.1.clone(),
            rows,
            pooled,
        });
    }
    let emu = read_json(&kernel.join("emu.json"))?;
    let reports: Vec<&Value> = emu["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| &r["report"])
        .collect();
    let flows = || {
        reports
            .iter()
            .flat_map(|r| r["flows"].as_array().into_iter().flatten())
    };
    let host_part = |part: &str| -> Vec<f64> {
        flows()
            .filter_map(|f| f["host_parts"][part]["p50_us"].as_f64())
            .collect()
    };
    Ok(Report {
        blocks,
        host_write_to_wire_p50_us: host_part("write_to_wire"),
        host_arrival_to_read_p50_us: host_part("arrival_to_read"),
        kernel_cc: flows()
            .filter_map(|f| f["sender"]["cc_used"].as_str().map(String::from))
            .collect(),
        lateness_p99_us: reports
            .iter()
            .filter_map(|r| r["lateness"]["p99_us"].as_f64())
            .collect(),
        emulator_late: crate::health::emulator_late_in(
            read_json(&kernel.join("summary.json"))?["runs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| &r["emu"]),
        ),
    })
}

/// A configuration label with its `key=value` parts in sorted order (summary.json sorts
/// parameters by key, the CSV keeps the sweep's order).
fn normal(label: &str) -> String {
    let mut parts: Vec<&str> = label.split(", ").collect();
    parts.sort_unstable();
    parts.join(", ")
}

/// `latency_cdf.csv` points per (configuration, flow).
fn cdf_points(dir: &Path) -> Result<Cdfs> {
    let path = dir.join("latency_cdf.csv");
    let mut r =
        csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut out: Cdfs = BTreeMap::new();
    for rec in r.records() {
        let rec = rec?;
        let (Some(c), Some(f), Some(x), Some(y)) = (rec.get(0), rec.get(1), rec.get(2), rec.get(3))
        else {
            continue;
        };
        if let (Ok(x), Ok(y)) = (x.parse(), y.parse()) {
            out.entry((c.to_string(), f.to_string()))
                .or_default()
                .push((x, y));
        }
    }
    Ok(out)
}

fn write_report(out: &Path, report: &Report) -> Result<()> {
    let sim = cdf_points(&out.join("sim"))?;
    let kernel = cdf_points(&out.join("kernel"))?;
    let mut md = String::from(
        "# Fidelity: thinlab's simulator against the kernel\n\nThe same scenario and seeds in \
         the simulator (`sim/`) and over the emulator with the running kernel's TCP \
         (`kernel/`). Per statistic: mean ± sd [min–max] over the repetitions, and the \
         relative difference of the means (simulator − kernel) / kernel. RTO expiries: the \
         simulator's `rto_events` against the kernel's `tcpi_total_rto`; loss probes: \
         `TCPLossProbes`.\n",
    );
    let _ = writeln!(
        md,
        "\nKernel congestion control read back: {}. Emulator lateness p99 per run: {} µs.",
        dedup(&report.kernel_cc),
        report
            .lateness_p99_us
            .iter()
            .map(|v| format!("{v:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let (Some(send), Some(read)) = (
        range_text(&report.host_write_to_wire_p50_us),
        range_text(&report.host_arrival_to_read_p50_us),
    ) {
        let _ = writeln!(
            md,
            "\nThe kernel's latencies also hold the two hosts' own paths, which the simulator \
             does not model: write call → on the sender's wire {send} µs, arrived at the \
             receiver's host → read {read} µs (medians of the runs' flows; with loss or a full \
             window they also hold TCP's own waits)."
        );
    }
    if let Some(w) = &report.emulator_late {
        let _ = writeln!(md, "\n**{w}**");
    }
    md.push_str(&report.markdown_table());
    for (i, ((config, flow), pts)) in sim.iter().enumerate() {
        let Some(kpts) = kernel.get(&(config.clone(), flow.clone())) else {
            continue;
        };
        let series = [
            Series {
                label: "simulator".into(),
                points: pts.clone(),
            },
            Series {
                label: "kernel".into(),
                points: kpts.clone(),
            },
        ];
        for (view, name) in [(View::Cdf, "cdf"), (View::Ccdf, "ccdf")] {
            let file = format!("fidelity_{name}_{i}.svg");
            let spec = PlotSpec::latency(format!("{config} · {flow}"), view, false);
            let svg = cdf_svg(&series, &spec).with_context(|| format!("drawing {file}"))?;
            fs::write(out.join(&file), svg)?;
            let _ = writeln!(md, "\n![{name} {config}]({file})");
        }
    }
    fs::write(out.join("fidelity.md"), md)?;
    fs::write(
        out.join("fidelity.json"),
        serde_json::to_string_pretty(report)? + "\n",
    )?;
    Ok(())
}

/// `min–max` of `v` to the µs (`x` if they are equal), if `v` has any values.
fn range_text(v: &[f64]) -> Option<String> {
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    Some(if lo == hi {
        format!("{lo:.0}")
    } else {
        format!("{lo:.0}–{hi:.0}")
    })
}

fn dedup(v: &[String]) -> String {
    let mut u: Vec<&String> = v.iter().collect();
    u.sort();
    u.dedup();
    if u.is_empty() {
        "unknown".into()
    } else {
        u.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    }
}
