//! Study `yin`: Yin et al., "Improving the performance of delay based protocol in delivering real
//! time media via Early Retransmission"), claims D.* of its report
//! (docs/reproduction/yin/report.md).
//!
//! The ns-2 dumbbell: 25 Mbit/s bottleneck, 10 Mbit/s access links, 50 ms round-trip
//! propagation, drop-tail buffers of 80–320 KB, MSS 1000, 64 KB window. N CBR flows at
//! 300 kbit/s (the measured streams) over SACK, PERT or PERT with `er-threshold` (each with and
//! without a fine-grained RTO) share it with N FTP flows and 200 HTTP flows over TCP-SACK.
//! Starts are spread over 0–50 s.
//!
//! A scenario file holds one `[[flow]]` per flow, and the flow count changes with N, so the
//! study generates each part's scenario text ([`scenario_text`]), writes it next to the part's
//! data, and runs it; `scenarios/reproduce/yin.toml` is the generator's output for N = 24,
//! PERT-ER (a test keeps the two equal).

mod adaptive;
mod claims;
mod sft_bands;

use super::figure::{self, line};
use super::report::{md_table, num};
use super::{Ctx, Ran, Report, Study, Verdict};
use crate::reproduce::ScenarioFile;
use anyhow::{Context, Result};
use claims::{buffer_claims, checks, fine_claims, tmu_claims, why_pert};
use std::fmt::Write as _;
use thinlab_trace::xy_plot::XySpec;
use toml::Value;

pub fn study() -> Study {
    Study {
        name: "yin",
        title: "Yin et al.: Early Retransmission and a fine-grained RTO for PERT (ns-2 dumbbell)",
        run,
    }
}

/// The committed representative scenario (N = 24, PERT-ER, 160 KB, the full plan's duration).
const COMMITTED: ScenarioFile = ScenarioFile {
    path: "scenarios/reproduce/yin.toml",
    text: include_str!("../../../../scenarios/reproduce/yin.toml"),
};
const COMMITTED_N: usize = 24;

/// Number of HTTP background flows (seed Table I).
const HTTP_FLOWS: usize = 200;
/// Mean time between the starts of two pages of one HTTP flow, s (see the intro for why).
const HTTP_OFF_S: u64 = 10;
/// The CBR rate μ, bit/s.
const MU: f64 = 300_000.0;
/// Flows start uniformly in [0, 50 s).
const START_SPREAD_S: f64 = 50.0;
/// A stream is successful when fewer than this share of its packets is late.
const LATE_LIMIT: f64 = 1e-4;
/// The startup delays evaluated, s.
const SUD_S: [f64; 10] = [0.0, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0];
/// T/μ bands of the paper's Fig. 3.
const BANDS: [(f64, f64); 3] = [(1.2, 1.6), (1.6, 2.0), (2.0, 2.4)];

/// A transport for the CBR flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Sack,
    Pert,
    PertFine,
    PertEr,
    PertErFine,
    /// Adaptive PERT (Kotla and Reddy), a named variant the paper did not run.
    Adaptive,
    AdaptiveEr,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::Sack => "SACK",
            Variant::Pert => "PERT",
            Variant::PertFine => "PERT fine-RTO",
            Variant::PertEr => "PERT-ER",
            Variant::PertErFine => "PERT-ER fine-RTO",
            Variant::Adaptive => "adaptive PERT",
            Variant::AdaptiveEr => "adaptive PERT-ER",
        }
    }
    fn slug(self) -> &'static str {
        match self {
            Variant::Sack => "sack",
            Variant::Pert => "pert",
            Variant::PertFine => "pert-fine",
            Variant::PertEr => "pert-er",
            Variant::PertErFine => "pert-er-fine",
            Variant::Adaptive => "pert-adaptive",
            Variant::AdaptiveEr => "pert-adaptive-er",
        }
    }
    /// The CBR flows' `tcp` table.
    fn tcp(self) -> String {
        let cc = match self {
            Variant::Sack => "newreno",
            Variant::Adaptive | Variant::AdaptiveEr => "pert-adaptive",
            _ => "pert",
        };
        let mech = if matches!(
            self,
            Variant::PertEr | Variant::PertErFine | Variant::AdaptiveEr
        ) {
            "[\"er-threshold\"]"
        } else {
            "[]"
        };
        let fine = if matches!(self, Variant::PertFine | Variant::PertErFine) {
            ", rto_min = \"1ms\", clock_granularity = \"1ms\""
        } else {
            ""
        };
        format!(
            "{{ profile = \"ns2\", cc = \"{cc}\", mss = 1000, recv_buffer = 65536, sack = true, \
             mechanisms = {mech}{fine} }}"
        )
    }
}

const BACKGROUND_TCP: &str =
    "{ profile = \"ns2\", cc = \"newreno\", mss = 1000, recv_buffer = 65536, sack = true }";

/// Simulated seconds per run in the full mode.
const FULL_DURATION_S: u64 = 400;

/// What one mode runs.
struct Plan {
    duration_s: u64,
    repetitions: i64,
    /// N (CBR = FTP flows) for the T/μ part (buffer 160 KB; SACK, PERT, PERT-ER).
    n_tmu: Vec<usize>,
    /// N for the fine-grained RTO part (Table II: T/μ in [1.0, 1.5]).
    n_fine: usize,
    /// Buffers of the fine-grained RTO part, KB.
    buffers_kb: Vec<u64>,
}

fn plan(quick: bool) -> Plan {
    if quick {
        Plan {
            duration_s: 100,
            repetitions: 2,
            n_tmu: vec![20, 28],
            n_fine: 32,
            buffers_kb: vec![80, 320],
        }
    } else {
        Plan {
            duration_s: FULL_DURATION_S,
            repetitions: 2,
            n_tmu: vec![20, 24, 28, 32, 36, 40],
            n_fine: 40,
            buffers_kb: vec![80, 160, 240, 320],
        }
    }
}

/// The scenario of `n` CBR flows over `v`, `n` FTP and 200 HTTP flows.
fn scenario_text(
    n: usize,
    v: Variant,
    duration_s: u64,
    repetitions: i64,
    buffer_kb: u64,
) -> String {
    let mut s = format!(
        "# Yin et al., §III.A and Table I: the ns-2 dumbbell. Generated by\n\
         # `thinlab reproduce yin` (crates/cli/src/reproduce/yin.rs) for N = {n} CBR flows over\n\
         # {label}, N FTP and {HTTP_FLOWS} HTTP background flows over TCP-SACK; starts stratified\n\
         # uniform over 0–50 s. The study sweeps network.queue_bytes (80–320 KB) and N and the\n\
         # CBR transport by generating this file again; see docs/reproduction/yin/report.md.\n\n\
         name = \"yin\"\nseed = 1\nduration = \"{duration_s}s\"\nrepetitions = {repetitions}\n\n\
         [network]\nrtt = \"50ms\"\nbandwidth = \"25Mbit\"\nqueue_bytes = \"{buffer_kb}KB\"\n",
        label = v.label()
    );
    // Three flow groups (docs/spec/interface.md): starts stratified uniform over 0–50 s.
    let mut group = |name: &str, count: usize, app: &str, tcp: &str| {
        let _ = write!(
            s,
            "\n[[flow]]\nname = \"{name}\"\ncount = {count}\nstart_spread = \"{START_SPREAD_S}s\"\n\
             access_bandwidth = \"10Mbit\"\napp = {app}\ntcp = {tcp}\n"
        );
    };
    let cbr = "{ kind = \"cbr\", rate = \"300kbit\", payload_bytes = 1000 }";
    group("cbr", n, cbr, &v.tcp());
    group("ftp", n, "{ kind = \"bulk\" }", BACKGROUND_TCP);
    let http = format!(
        "{{ kind = \"http\", payload_bytes = 10000, shape = 1.2, off = \"{HTTP_OFF_S}s\" }}"
    );
    group("http", HTTP_FLOWS, &http, BACKGROUND_TCP);
    s
}

/// Streams by buffer size (KB).
type ByBuffer = Vec<(u64, Vec<Stream>)>;

/// One measured CBR stream.
#[derive(Clone, Debug)]
struct Stream {
    /// T/μ of its run.
    tmu: f64,
    writes: u64,
    /// App latencies of delivered writes, ms, sorted.
    lat: Vec<f64>,
    rto: f64,
    sft_s: f64,
    /// Retransmissions by fast retransmit and by early retransmit.
    fast: f64,
    early: f64,
    /// How long its source ran, s (for per-1000 s scaling).
    active_s: f64,
}

impl Stream {
    /// Packets later than `sud` s (undelivered writes count as late).
    fn late(&self, sud: f64) -> u64 {
        let ms = sud * 1000.0;
        let on_time = self.lat.partition_point(|&l| l <= ms) as u64;
        self.writes.saturating_sub(on_time)
    }
    fn successful(&self, sud: f64) -> bool {
        (self.late(sud) as f64) < LATE_LIMIT * self.writes as f64
    }
}

/// Every CBR stream of configuration `config` of `ran` (flows 0..n are CBR, n..2n FTP).
fn streams(ran: &Ran, config: usize, n: usize) -> Vec<Stream> {
    let mut out = Vec::new();
    for run in ran.runs_of(config) {
        let bw: Vec<f64> = run.flows[..2 * n]
            .iter()
            .map(|f| f.metrics.goodput_bps.unwrap_or(0.0))
            .collect();
        let tmu = bw.iter().sum::<f64>() / bw.len() as f64 / MU;
        for f in &run.flows[..n] {
            let lat: Vec<f64> = f.app_latency.samples_ms().collect(); // ascending
            out.push(Stream {
                tmu,
                writes: f.metrics.writes,
                lat,
                rto: f.metrics.rto_events as f64,
                sft_s: f.metrics.frozen_time_ms / 1000.0,
                fast: f.metrics.retransmissions_by_cause.fast as f64,
                early: f.metrics.retransmissions_by_cause.early as f64,
                active_s: f.metrics.writes as f64 * 8.0 * 1000.0 / MU,
            });
        }
    }
    out
}

fn success_pct(s: &[&Stream], sud: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    100.0 * s.iter().filter(|x| x.successful(sud)).count() as f64 / s.len() as f64
}

fn avg(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    super::ctx::mean(&v)
}

/// Runs one part: writes its generated scenario under `data/PART/` and runs it.
fn run_part(ctx: &mut Ctx, part: &str, text: String, sets: &[(&str, Value)]) -> Result<Ran> {
    let dir = ctx.out.join("data").join(part);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("scenario.toml");
    std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    let file = ScenarioFile {
        path: Box::leak(path.display().to_string().into_boxed_str()),
        text: Box::leak(text.into_boxed_str()),
    };
    ctx.run_file(part, &file, sets)
}

const TMU_VARIANTS: [Variant; 3] = [Variant::Sack, Variant::Pert, Variant::PertEr];
const FINE_VARIANTS: [Variant; 4] = [
    Variant::Pert,
    Variant::PertFine,
    Variant::PertEr,
    Variant::PertErFine,
];

/// Seed Table II: (buffer KB, [RTOs; 4], [SFT s; 4]) in FINE_VARIANTS order.
const TABLE_II: [(u64, [f64; 4], [f64; 4]); 4] = [
    (80, [253.0, 335.0, 96.0, 149.0], [61.0, 40.0, 29.0, 14.0]),
    (160, [140.0, 205.0, 43.0, 83.0], [33.0, 28.0, 12.0, 9.0]),
    (240, [80.0, 117.0, 21.0, 35.0], [18.0, 16.0, 5.0, 5.0]),
    (320, [52.0, 72.0, 14.0, 25.0], [9.0, 11.0, 3.0, 5.0]),
];

fn run(ctx: &mut Ctx) -> Result<Report> {
    let plan = plan(ctx.quick);
    let mut report = Report::default();
    let mut commands = Vec::new();

    // --- Part 1: success vs SUD by T/μ band (Fig. 3) and SFT (Fig. 4), buffer 160 KB.
    let mut tmu: Vec<(Variant, Vec<Stream>)> = TMU_VARIANTS.iter().map(|&v| (v, vec![])).collect();
    let mut tmu_by_n: Vec<(usize, Variant, f64)> = Vec::new();
    for &n in &plan.n_tmu {
        for (v, acc) in tmu.iter_mut() {
            let text = scenario_text(n, *v, plan.duration_s, plan.repetitions, 160);
            let ran = run_part(ctx, &format!("tmu-n{n}-{}", v.slug()), text, &[])?;
            let s = streams(&ran, 0, n);
            tmu_by_n.push((n, *v, avg(s.iter().map(|x| x.tmu))));
            acc.extend(s);
            commands.push(ran.command.clone());
        }
    }

    // --- Part 2: the four PERT variants against buffer size (Table II, Figs. 5–6).
    let mut fine: Vec<(Variant, ByBuffer)> = Vec::new();
    for v in FINE_VARIANTS {
        fine.push((v, buffer_part(ctx, &plan, v, &mut commands)?));
    }

    intro(&mut report, &plan, ctx.quick);
    // success[variant][band][sud]
    let success: Vec<Vec<Vec<f64>>> = tmu
        .iter()
        .map(|(_, s)| {
            BANDS
                .iter()
                .map(|&b| {
                    let r = in_band(s, b);
                    SUD_S.iter().map(|&sud| success_pct(&r, sud)).collect()
                })
                .collect()
        })
        .collect();
    let counts: Vec<Vec<usize>> = tmu
        .iter()
        .map(|(_, s)| BANDS.iter().map(|&b| in_band(s, b).len()).collect())
        .collect();
    let why = why_pert(&tmu);
    tmu_claims(&mut report, &success, &counts, &tmu, &why);
    sft_bands::sft_band_claim(&mut report, &tmu);
    let table = fine_table(&fine);
    fine_claims(&mut report, &table, &plan, &why);
    buffer_claims(&mut report, &table);
    checks(&mut report, &success, &tmu, &table);

    // --- Sections: figures and tables.
    let mut sec = String::from(
        "## Successful streams vs startup delay by T/μ band (Fig. 3), buffer 160 KB\n\n",
    );
    let mut rows = Vec::new();
    for &(n, v, t) in &tmu_by_n {
        rows.push(vec![n.to_string(), v.label().to_string(), num(t, 2)]);
    }
    sec += "T/μ of each run (mean over repetitions) by N:\n\n";
    sec += &md_table(&["N (CBR = FTP)", "CBR transport", "T/μ"], &rows);
    sec += "\n";
    for (bi, band) in BANDS.iter().enumerate() {
        let title = format!(
            "Successful streams, {} < T/μ < {} (streams: {})",
            band.0,
            band.1,
            counts
                .iter()
                .zip(&tmu)
                .map(|(c, (v, _))| format!("{} {}", v.label(), c[bi]))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let spec = XySpec::new(&title, "startup delay (s)", "successful streams (%)");
        let series: Vec<_> = tmu
            .iter()
            .enumerate()
            .filter(|(vi, _)| counts[*vi][bi] > 0)
            .map(|(vi, (v, _))| {
                line(
                    v.label(),
                    SUD_S
                        .iter()
                        .zip(&success[vi][bi])
                        .map(|(&x, &y)| (x, y))
                        .collect(),
                )
            })
            .collect();
        if !series.is_empty() {
            sec += &figure::xy(ctx, &format!("success_band{}.svg", bi + 1), &spec, &series)?;
        }
    }
    sec += "\n";
    let mut header = vec![
        "T/μ band".to_string(),
        "transport".to_string(),
        "streams".to_string(),
    ];
    header.extend(SUD_S.iter().map(|s| format!("SUD {s} s")));
    let header: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    let mut rows = Vec::new();
    for (bi, band) in BANDS.iter().enumerate() {
        for (vi, (v, _)) in tmu.iter().enumerate() {
            let mut r = vec![
                format!("{}–{}", band.0, band.1),
                v.label().to_string(),
                counts[vi][bi].to_string(),
            ];
            r.extend(success[vi][bi].iter().map(|x| num(*x, 0)));
            rows.push(r);
        }
    }
    sec += &md_table(&header, &rows);
    sec += "\nSession Frozen Time and RTOs per stream (Fig. 4), all bands pooled, scaled to 1000 s:\n\n";
    let rows: Vec<Vec<String>> = tmu
        .iter()
        .map(|(v, s)| {
            let (rto, sft) = per_1000s(s.iter());
            vec![
                v.label().to_string(),
                s.len().to_string(),
                num(rto, 1),
                num(sft, 1),
            ]
        })
        .collect();
    sec += &md_table(
        &["transport", "streams", "RTOs / 1000 s", "SFT s / 1000 s"],
        &rows,
    );
    sec += &late_section(&tmu);
    report.section(sec);

    let mut sec = format!(
        "## Fine-grained RTO against ER (Table II, Figs. 5–6), N = {}\n\n",
        plan.n_fine
    );
    sec += &table_md(&table);
    let spec = XySpec::new(
        "Session Frozen Time per stream vs buffer (scaled to 1000 s) — Table II",
        "bottleneck buffer (KB)",
        "SFT (s per 1000 s)",
    );
    let series = table_ii_series(&table, |r| r.sft, |s| s.2);
    sec += &figure::xy(ctx, "sft_vs_buffer.svg", &spec, &series)?;
    let spec = XySpec::new(
        "RTOs per stream vs buffer (scaled to 1000 s) — Table II",
        "bottleneck buffer (KB)",
        "RTOs per 1000 s",
    );
    let series = table_ii_series(&table, |r| r.rto, |s| s.1);
    sec += &figure::xy(ctx, "rto_vs_buffer.svg", &spec, &series)?;
    sec += "\nSuccessful streams (%) at startup delay 5 s and 10 s (Figs. 5–6):\n\n";
    let mut rows = Vec::new();
    for r in &table {
        let mut row = vec![format!("{} KB", r.buffer), num(r.tmu, 2)];
        row.extend(
            (0..4).map(|vi| format!("{} / {}", num(r.success5[vi], 0), num(r.success10[vi], 0))),
        );
        rows.push(row);
    }
    let mut header = vec!["buffer", "T/μ"];
    header.extend(FINE_VARIANTS.iter().map(|v| v.label()));
    sec += &md_table(&header, &rows);
    report.section(sec);

    report.section(adaptive::section(ctx, &plan, &tmu, &fine, &mut commands)?);

    report.section(format!(
        "## How to rerun a part\n\nEach part's generated scenario is written to \
         `data/PART/scenario.toml` of the output directory (the committed \
         `{}` is the one for N = {COMMITTED_N}, PERT-ER, 160 KB, {} s); then:\n\n```sh\n{}\n```\n",
        COMMITTED.path,
        FULL_DURATION_S,
        commands.join("\n")
    ));
    Ok(report)
}

/// Part 2 for the CBR transport `v`: N = n_fine over every buffer of the plan; the streams by
/// buffer. Adds the part's command line to `commands`.
fn buffer_part(
    ctx: &mut Ctx,
    plan: &Plan,
    v: Variant,
    commands: &mut Vec<String>,
) -> Result<ByBuffer> {
    let buffers: Vec<Value> = plan
        .buffers_kb
        .iter()
        .map(|b| Value::from(format!("{b}KB")))
        .collect();
    let text = scenario_text(plan.n_fine, v, plan.duration_s, plan.repetitions, 160);
    let ran = run_part(
        ctx,
        &format!("fine-n{}-{}", plan.n_fine, v.slug()),
        text,
        &[("sweep.network.queue_bytes", Value::Array(buffers.clone()))],
    )?;
    let mut per = Vec::new();
    for (b, val) in plan.buffers_kb.iter().zip(&buffers) {
        let c = ran.find(&[super::p("network.queue_bytes", val.clone())])?;
        per.push((*b, streams(&ran, c, plan.n_fine)));
    }
    commands.push(ran.command.clone());
    Ok(per)
}

/// The streams of runs whose T/μ lies in `band` (lower bound included).
fn in_band(s: &[Stream], band: (f64, f64)) -> Vec<&Stream> {
    s.iter()
        .filter(|x| x.tmu >= band.0 && x.tmu < band.1)
        .collect()
}

/// RTOs and SFT (s) per stream, scaled to 1000 s of streaming.
fn per_1000s<'a>(s: impl Iterator<Item = &'a Stream>) -> (f64, f64) {
    let v: Vec<&Stream> = s.collect();
    let active: f64 = v.iter().map(|x| x.active_s).sum();
    if active <= 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let rto: f64 = v.iter().map(|x| x.rto).sum();
    let sft: f64 = v.iter().map(|x| x.sft_s).sum();
    (rto * 1000.0 / active, sft * 1000.0 / active)
}

/// One buffer row of Table II (ours), in FINE_VARIANTS order. One line per fine-RTO variant against
/// buffer size, ours (`ours` of each row) and the paper's Table II column (`seed` of each seed
/// row).
fn table_ii_series(
    table: &[FineRow],
    ours: impl Fn(&FineRow) -> [f64; 4],
    seed: impl Fn(&(u64, [f64; 4], [f64; 4])) -> [f64; 4],
) -> Vec<thinlab_trace::xy_plot::XySeries> {
    let mut out = Vec::new();
    for (vi, v) in FINE_VARIANTS.iter().enumerate() {
        let pts = table
            .iter()
            .map(|r| (r.buffer as f64, ours(r)[vi]))
            .collect();
        out.push(line(v.label(), pts));
    }
    for (vi, v) in FINE_VARIANTS.iter().enumerate() {
        let pts = TABLE_II.iter().map(|r| (r.0 as f64, seed(r)[vi])).collect();
        out.push(line(format!("{}, Yin et al.", v.label()), pts));
    }
    out
}

struct FineRow {
    buffer: u64,
    tmu: f64,
    rto: [f64; 4],
    sft: [f64; 4],
    success5: [f64; 4],
    success10: [f64; 4],
}

fn fine_table(fine: &[(Variant, ByBuffer)]) -> Vec<FineRow> {
    let buffers: Vec<u64> = fine[0].1.iter().map(|x| x.0).collect();
    buffers
        .iter()
        .enumerate()
        .map(|(bi, &b)| {
            let mut row = FineRow {
                buffer: b,
                tmu: avg(fine
                    .iter()
                    .flat_map(|(_, per)| per[bi].1.iter().map(|s| s.tmu))),
                rto: [0.0; 4],
                sft: [0.0; 4],
                success5: [0.0; 4],
                success10: [0.0; 4],
            };
            for (vi, (_, per)) in fine.iter().enumerate() {
                let s = &per[bi].1;
                let (r, f) = per_1000s(s.iter());
                row.rto[vi] = r;
                row.sft[vi] = f;
                let refs: Vec<&Stream> = s.iter().collect();
                row.success5[vi] = success_pct(&refs, 5.0);
                row.success10[vi] = success_pct(&refs, 10.0);
            }
            row
        })
        .collect()
}

fn table_md(table: &[FineRow]) -> String {
    let mut rows = Vec::new();
    for r in table {
        let seed = TABLE_II.iter().find(|t| t.0 == r.buffer);
        let cell = |ours: f64, seed: Option<f64>| match seed {
            Some(s) => format!("{} ({})", num(ours, 1), num(s, 0)),
            None => num(ours, 1),
        };
        let mut a = vec![format!("{} KB", r.buffer), "RTOs".to_string()];
        a.extend((0..4).map(|vi| cell(r.rto[vi], seed.map(|t| t.1[vi]))));
        let mut b = vec![String::new(), "SFT (s)".to_string()];
        b.extend((0..4).map(|vi| cell(r.sft[vi], seed.map(|t| t.2[vi]))));
        rows.push(a);
        rows.push(b);
    }
    let mut header = vec!["buffer", "per stream, per 1000 s"];
    header.extend(FINE_VARIANTS.iter().map(|v| v.label()));
    format!(
        "Ours (the paper's Table II in parentheses), per CBR stream, scaled to 1000 s of \
         streaming:\n\n{}",
        md_table(&header, &rows)
    )
}

/// Late packets per startup delay, mean per stream, by transport (all bands pooled).
fn late_section(tmu: &[(Variant, Vec<Stream>)]) -> String {
    let mut s = String::from(
        "\nLate packets per stream (mean) by startup delay, all bands pooled (a packet is late \
         when its application latency exceeds the SUD; undelivered packets count as late):\n\n",
    );
    let mut header = vec!["transport".to_string()];
    header.extend(SUD_S.iter().map(|x| format!("SUD {x} s")));
    let header: Vec<&str> = header.iter().map(|x| x.as_str()).collect();
    let rows: Vec<Vec<String>> = tmu
        .iter()
        .map(|(v, st)| {
            let mut r = vec![v.label().to_string()];
            r.extend(
                SUD_S
                    .iter()
                    .map(|&sud| num(avg(st.iter().map(|x| x.late(sud) as f64)), 1)),
            );
            r
        })
        .collect();
    s += &md_table(&header, &rows);
    s
}

fn intro(report: &mut Report, plan: &Plan, quick: bool) {
    report.intro = format!(
        "Setup (Yin et al. Table I): dumbbell with a 25 Mbit/s bottleneck, 10 Mbit/s access \
         links, 50 ms round-trip propagation, drop-tail bottleneck buffer in bytes; every TCP \
         is the `ns2` profile (RTO = SRTT + 4·RTTVAR on a 10 ms tick, min 200 ms, no delayed \
         ACK, initial window 2) with MSS 1000 B, a 64 KB receive window and SACK. N CBR flows \
         (300 kbit/s, 1000-byte writes) over the transport under test, N FTP flows (`bulk`) \
         and {HTTP_FLOWS} HTTP flows (`app.kind = \"http\"`: ns-2 WebTraf pages, Pareto II \
         sizes of mean 10 KB, shape 1.2, one page every {HTTP_OFF_S} s on average) over \
         NewReno-SACK. Flows start stratified-uniformly over 0–50 s (the same starts in every \
         repetition; repetitions change the HTTP pages, PERT's coin and the ISNs). *PERT-ER* \
         adds `mechanisms = [\"er-threshold\"]`; *fine-RTO* sets `rto_min = \"1ms\"` and \
         `clock_granularity = \"1ms\"` (the paper's `tcp_tick_` and `minrto_` of 1 ms).\n\n\
         **What we ran ({mode}).** Each configuration runs {reps} repetitions of {dur} s \
         (the paper: 10 runs of 1000 s). Part 1 (Figs. 3–4): buffer 160 KB (≈ 1 BDP; the paper \
         does not say which buffer Fig. 3 uses), N ∈ {ns:?}, SACK / PERT / PERT-ER. Part 2 \
         (Table II, Figs. 5–6): N = {nf} (the paper picks flows with T/μ in [1.0, 1.5]), \
         buffers {bufs:?} KB, the four PERT variants. The budget is ~6 minutes on 2 cores; \
         1000 s × 10 runs of every point would take {longer:.0} times longer, so we shortened \
         runs and repetitions and scale RTO counts and SFT to 1000 s of streaming. A shorter \
         run makes the success criterion (< 0.01 % late packets) stricter in count: with \
         {dur} s a stream has at most {pk} packets (less as it starts later), so at most \
         {lim} may be late.\n\n\
         **Metrics.** A CBR packet is late for startup delay SUD when its application \
         latency (write call → in-order delivery to the receiving application) exceeds SUD: \
         the paper's deadline `start + SUD + index × interval` measured from the first write, \
         which is when the CBR source starts (connection establishment). Undelivered packets \
         count as late. SFT is `frozen_time_ms`, RTOs `rto_events`. **T/μ**: the paper divides \
         the measured overall bandwidth of the CBR and FTP flows by their number; we take each \
         run's mean goodput of its 2N CBR and FTP flows (each over its own active time) ÷ \
         300 kbit/s, and give that T/μ to every CBR stream of the run. The same N gives a \
         higher T/μ with PERT than with SACK (the FTP flows take what PERT's CBR streams leave), \
         so the bands hold different N for each transport.\n\n\
         **HTTP load.** The paper gives 200 HTTP flows but not their parameters. Its T/μ range \
         (1.2–2.4 for N = 16–40) leaves little room for background web traffic: at N = 40 even \
         with none, T/μ = 25/(80 · 0.3) ≈ 1.04. ns-2's example think time of 1 s would offer \
         200 × 80 kbit/s = 16 Mbit/s and push every N below T/μ = 1; we chose a mean of \
         {HTTP_OFF_S} s (≈ 1.6 Mbit/s offered, 6 % of the bottleneck) before running \
         anything.\n",
        mode = if quick { "quick mode" } else { "full mode" },
        reps = plan.repetitions,
        dur = plan.duration_s,
        ns = plan.n_tmu,
        nf = plan.n_fine,
        bufs = plan.buffers_kb,
        pk = (plan.duration_s as f64 * MU / 8000.0) as u64,
        longer = 1000.0 / plan.duration_s as f64 * 10.0 / plan.repetitions as f64,
        lim = ((plan.duration_s as f64 * MU / 8000.0) * LATE_LIMIT).ceil() as u64 - 1,
    );
}

fn band_label(bi: usize) -> String {
    format!("{}–{}", BANDS[bi].0, BANDS[bi].1)
}

fn sud_index(sud: f64) -> usize {
    SUD_S.iter().position(|&s| s == sud).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_scenario_is_the_generators_output() {
        let p = plan(false);
        let text = scenario_text(
            COMMITTED_N,
            Variant::PertEr,
            p.duration_s,
            p.repetitions,
            160,
        );
        if std::env::var_os("THINLAB_REGENERATE").is_some() {
            std::fs::write("../../scenarios/reproduce/yin.toml", &text).unwrap();
        }
        assert_eq!(
            COMMITTED.text, text,
            "regenerate scenarios/reproduce/yin.toml"
        );
    }

    #[test]
    fn late_packets_and_success() {
        let s = Stream {
            tmu: 1.5,
            writes: 20_000,
            lat: vec![100.0; 19_998].into_iter().chain([6_000.0]).collect(),
            rto: 0.0,
            sft_s: 0.0,
            fast: 0.0,
            early: 0.0,
            active_s: 0.0,
        };
        // One packet undelivered, one 6 s late.
        assert_eq!(s.late(5.0), 2);
        assert_eq!(s.late(6.0), 1);
        assert!(!s.successful(5.0)); // 2 ≥ 0.01 % of 20000 = 2
        assert!(s.successful(6.0));
    }
}
