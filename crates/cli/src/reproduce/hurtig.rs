//! Study `hurtig`: Hurtig (2006), fast-retransmit inhibitions, claims C.* of its report
//! (docs/reproduction/hurtig/report.md). A FreeBSD 6 server sends a 20- or 100-packet transfer and
//! closes; one packet of the server → client sequence is lost at a scripted position (1 = the
//! SYN-ACK, pure ACKs count; 0 = no loss); the client's time from connect to the last byte is the
//! metric. Which positions fast retransmit cannot repair, what that costs per (bandwidth, delay),
//! the average cost of a loss at an arbitrary position, and what thin dupACK, Early Retransmit and
//! TLP do to the inhibited positions.

mod claims;
mod irregularity;

use super::figure::{self, line};
use super::report::{md_table, num};
use super::{p, Ctx, Ran, Report, Study};
use crate::reproduce::ScenarioFile;
use anyhow::Result;
use thinlab_trace::xy_plot::XySpec;
use thinlab_trace::FlowMetrics;
use toml::Value;

pub fn study() -> Study {
    Study {
        name: "hurtig",
        title: "Hurtig (2006): fast-retransmit inhibitions in short FreeBSD 6 transfers",
        run,
    }
}

const SCENARIO: ScenarioFile = ScenarioFile {
    path: "scenarios/reproduce/hurtig.toml",
    text: include_str!("../../../../scenarios/reproduce/hurtig.toml"),
};

const POS: &str = "network.reverse.loss.positions";
const BW: &str = "network.bandwidth";
const RTT: &str = "network.rtt";
const MECH: &str = "flow.0.tcp.mechanisms";

/// One grid of Table 3.1: flow size, bandwidths (kbit/s) and one-way delays (ms).
struct Grid {
    /// Server → client packets of the flow (positions 1..=n).
    n: usize,
    writes: i64,
    bw: Vec<i64>,
    delay: Vec<i64>,
}

/// What one mode runs.
struct Plan {
    g20: Grid,
    g100: Grid,
    /// Remedy cells of the 20-packet flow: bandwidths × delays.
    remedy_bw: Vec<i64>,
    remedy_delay: Vec<i64>,
    /// Remedy cells of the 100-packet flow.
    remedy100_bw: Vec<i64>,
    remedy100_delay: Vec<i64>,
}

fn plan(quick: bool) -> Plan {
    if quick {
        Plan {
            g20: Grid {
                n: 20,
                writes: 10,
                bw: vec![40, 80, 320, 1000, 10000],
                delay: vec![5, 100, 300],
            },
            g100: Grid {
                n: 100,
                writes: 56,
                bw: vec![80, 10000],
                delay: vec![5, 60, 300],
            },
            remedy_bw: vec![1000, 10000],
            remedy_delay: vec![5, 300],
            remedy100_bw: vec![10000],
            remedy100_delay: vec![5],
        }
    } else {
        Plan {
            g20: Grid {
                n: 20,
                writes: 10,
                bw: vec![40, 80, 160, 320, 500, 1000, 2000, 4000, 8000, 10000],
                delay: vec![5, 10, 20, 40, 60, 80, 100, 150, 200, 250, 300],
            },
            g100: Grid {
                n: 100,
                writes: 56,
                bw: vec![40, 80, 160, 500, 1000, 4000, 10000],
                delay: vec![5, 10, 20, 40, 60, 100, 200, 300],
            },
            remedy_bw: vec![80, 1000, 10000],
            remedy_delay: vec![5, 100, 300],
            remedy100_bw: vec![500, 10000],
            remedy100_delay: vec![5, 300],
        }
    }
}

/// The mechanism sets of the remedy part: (label, `tcp.mechanisms`).
const VARIANTS: [(&str, &[&str]); 6] = [
    ("freebsd-6", &[]),
    ("+ thin-dupack", &["thin-dupack"]),
    ("+ early-retransmit", &["early-retransmit"]),
    ("+ tlp", &["tlp"]),
    (
        "+ thin-dupack, early-retransmit, tlp",
        &["thin-dupack", "early-retransmit", "tlp"],
    ),
    ("+ rack, tlp", &["rack", "tlp"]),
];

fn mech_value(m: &[&str]) -> Value {
    Value::Array(m.iter().map(|s| Value::from(*s)).collect())
}

fn bw_value(kbit: i64) -> Value {
    Value::from(format!("{kbit}kbit"))
}

/// The scenario's RTT for a one-way delay (same delay both ways).
fn rtt_value(delay_ms: i64) -> Value {
    Value::from(format!("{}ms", 2 * delay_ms))
}

fn pos_value(pos: usize) -> Value {
    if pos == 0 {
        Value::Array(vec![])
    } else {
        Value::Array(vec![Value::from(pos as i64)])
    }
}

/// How the lost packet was repaired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repair {
    /// No retransmission (no loss, a pure ACK lost, or the SYN-ACK: its retransmission is not
    /// a data retransmission).
    None,
    Fast,
    Early,
    Tlp,
    /// At least one RTO expiry.
    Rto,
}

fn repair(m: &FlowMetrics) -> Repair {
    let r = &m.retransmissions_by_cause;
    if m.rto_events > 0 || r.rto > 0 {
        Repair::Rto
    } else if r.fast > 0 {
        Repair::Fast
    } else if r.early > 0 {
        Repair::Early
    } else if r.tlp > 0 {
        Repair::Tlp
    } else {
        Repair::None
    }
}

/// Every position of one (bandwidth, delay) cell: `t[p]` and `repair[p]` for p = 0..=n.
struct Cell {
    bw: i64,
    delay: i64,
    t: Vec<f64>,
    repair: Vec<Repair>,
}

impl Cell {
    fn n(&self) -> usize {
        self.t.len() - 1
    }

    /// The lossless run already needed an RTO: Hurtig (2006) §4.1.3's "bad RTO estimation" (the
    /// first RTO, 3·r + 200 ms from the SYN-ACK's RTT sample r, is shorter than a full-sized
    /// packet's RTT at 40 kbit/s). Hurtig left these cells out of its penalty figures.
    fn bad_rto(&self) -> bool {
        self.repair[0] == Repair::Rto
    }

    /// Positions (2..=n) repaired by fast retransmit.
    fn fast(&self) -> Vec<usize> {
        (2..=self.n())
            .filter(|&p| self.repair[p] == Repair::Fast)
            .collect()
    }

    /// The inhibited positions: repaired by an RTO, after the last fast-retransmitted one.
    fn inhibited(&self) -> Vec<usize> {
        let last = self.fast().last().copied().unwrap_or(1);
        (last + 1..=self.n())
            .filter(|&p| self.repair[p] == Repair::Rto)
            .collect()
    }

    /// Positions before the tail that needed an RTO all the same (an RTO that fired before
    /// enough duplicate ACKs could arrive).
    fn early_rto(&self) -> Vec<usize> {
        let last = self.fast().last().copied().unwrap_or(1);
        (2..=last.min(self.n()))
            .filter(|&p| self.repair[p] == Repair::Rto)
            .collect()
    }

    fn mean_at(&self, ps: &[usize]) -> f64 {
        super::ctx::mean(&ps.iter().map(|&p| self.t[p]).collect::<Vec<_>>())
    }

    /// T_fr: mean completion time over the fast-retransmitted positions.
    fn t_fast(&self) -> f64 {
        self.mean_at(&self.fast())
    }

    /// T_inh: mean completion time over the inhibited positions.
    fn t_inhibited(&self) -> f64 {
        self.mean_at(&self.inhibited())
    }

    /// Penalty of an inhibited loss, %: T_inh / T_fr − 1.
    fn penalty(&self) -> f64 {
        100.0 * (self.t_inhibited() / self.t_fast() - 1.0)
    }

    /// Average penalty of a loss at an arbitrary position, %: the mean over positions 1..=n of
    /// T(p), against the same mean with every inhibited position's time replaced by T_fr.
    fn average(&self) -> f64 {
        let inh = self.inhibited();
        let tfr = self.t_fast();
        let actual: f64 = (1..=self.n()).map(|p| self.t[p]).sum();
        let ideal: f64 = (1..=self.n())
            .map(|p| if inh.contains(&p) { tfr } else { self.t[p] })
            .sum();
        100.0 * (actual / ideal - 1.0)
    }
}

/// Runs one grid (every position 0..=n for every bandwidth × delay) with `mechs`.
fn run_grid(
    ctx: &mut Ctx,
    part: &str,
    n: usize,
    writes: i64,
    bw: &[i64],
    delay: &[i64],
    variants: &[&[&str]],
) -> Result<Ran> {
    let mut sets: Vec<(&str, Value)> = vec![
        ("flow.0.app.writes", Value::from(writes)),
        (
            "sweep.network.bandwidth",
            Value::Array(bw.iter().map(|&b| bw_value(b)).collect()),
        ),
        (
            "sweep.network.rtt",
            Value::Array(delay.iter().map(|&d| rtt_value(d)).collect()),
        ),
        (
            "sweep.network.reverse.loss.positions",
            Value::Array((0..=n).map(pos_value).collect()),
        ),
    ];
    if variants.len() > 1 {
        sets.push((
            "sweep.flow.0.tcp.mechanisms",
            Value::Array(variants.iter().map(|m| mech_value(m)).collect()),
        ));
    }
    ctx.run_file(part, &SCENARIO, &sets)
}

/// The cells of a grid run (with mechanism set `mech` when the run swept mechanisms).
fn cells(
    ran: &Ran,
    n: usize,
    bw: &[i64],
    delay: &[i64],
    mech: Option<&[&str]>,
) -> Result<Vec<Cell>> {
    let mut out = Vec::new();
    for &b in bw {
        for &d in delay {
            let mut t = Vec::with_capacity(n + 1);
            let mut rep = Vec::with_capacity(n + 1);
            for pos in 0..=n {
                let mut want = vec![
                    p(BW, bw_value(b)),
                    p(RTT, rtt_value(d)),
                    p(POS, pos_value(pos)),
                ];
                if let Some(m) = mech {
                    want.push(p(MECH, mech_value(m)));
                }
                let c = ran.find(&want)?;
                let o = ran.flows(c, 0).next().ok_or_else(|| {
                    anyhow::anyhow!(
                        "part {}: no run of {b} kbit/s, {d} ms, position {pos}",
                        ran.part
                    )
                })?;
                t.push(o.metrics.completion_time_ms.unwrap_or(f64::NAN));
                rep.push(repair(&o.metrics));
            }
            out.push(Cell {
                bw: b,
                delay: d,
                t,
                repair: rep,
            });
        }
    }
    Ok(out)
}

fn at(cells: &[Cell], bw: i64, delay: i64) -> Option<&Cell> {
    cells.iter().find(|c| c.bw == bw && c.delay == delay)
}

/// "2, 3, 17–19".
fn ranges(v: &[usize]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            v[i].to_string()
        } else {
            format!("{}–{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

fn pct(x: f64) -> String {
    format!("{} %", num(x, 1))
}

fn run(ctx: &mut Ctx) -> Result<Report> {
    let plan = plan(ctx.quick);
    let plain: &[&[&str]] = &[&[]];
    let ran20 = run_grid(
        ctx,
        "grid20",
        plan.g20.n,
        plan.g20.writes,
        &plan.g20.bw,
        &plan.g20.delay,
        plain,
    )?;
    let c20 = cells(&ran20, plan.g20.n, &plan.g20.bw, &plan.g20.delay, None)?;
    let ran100 = run_grid(
        ctx,
        "grid100",
        plan.g100.n,
        plan.g100.writes,
        &plan.g100.bw,
        &plan.g100.delay,
        plain,
    )?;
    let c100 = cells(&ran100, plan.g100.n, &plan.g100.bw, &plan.g100.delay, None)?;
    let variants: Vec<&[&str]> = VARIANTS.iter().map(|v| v.1).collect();
    let rem20 = run_grid(
        ctx,
        "remedy20",
        20,
        10,
        &plan.remedy_bw,
        &plan.remedy_delay,
        &variants,
    )?;
    let rem100 = run_grid(
        ctx,
        "remedy100",
        100,
        56,
        &plan.remedy100_bw,
        &plan.remedy100_delay,
        &variants,
    )?;
    let mut r20 = Vec::new();
    let mut r100 = Vec::new();
    for v in VARIANTS {
        r20.push(cells(
            &rem20,
            20,
            &plan.remedy_bw,
            &plan.remedy_delay,
            Some(v.1),
        )?);
        r100.push(cells(
            &rem100,
            100,
            &plan.remedy100_bw,
            &plan.remedy100_delay,
            Some(v.1),
        )?);
    }

    let mut report = Report {
        intro: intro(ctx, &plan),
        ..Report::default()
    };
    claims::claims(&mut report, &c20, &c100);
    claims::more_claims(&mut report, &c20, &c100);
    irregularity::irregularity_claim(&mut report, &c100);
    claims::checks(&mut report, &c20, &c100, &r20, &r100);

    // --- Sections: positions, penalties, remedy.
    let mut sec = String::from("## Completion time by loss position\n\n");
    for &b in &[80i64, 320, 1000, 10000] {
        if plan.g20.bw.contains(&b) {
            sec += &position_figure(ctx, &c20, b, 20)?;
        }
    }
    for &b in &[80i64, 500, 10000] {
        if plan.g100.bw.contains(&b) {
            sec += &position_figure(ctx, &c100, b, 100)?;
        }
    }
    sec += "\n### Which positions need an RTO (20 packets)\n\n";
    sec += &matrix(&c20, &plan.g20, |c| {
        let e = c.early_rto();
        let mut s = ranges(&c.inhibited());
        if !e.is_empty() {
            s += &format!(" (early RTO {})", ranges(&e));
        }
        if c.bad_rto() {
            s = "all (bad RTO)".into();
        }
        s
    });
    sec += "\n### Which positions need an RTO (100 packets)\n\n";
    sec += &matrix(&c100, &plan.g100, |c| {
        let e = c.early_rto();
        let mut s = ranges(&c.inhibited());
        if !e.is_empty() {
            s += &format!(" (early RTO {})", ranges(&e));
        }
        if c.bad_rto() {
            s = "all (bad RTO)".into();
        }
        s
    });
    report.section(sec);

    let mut sec = String::from("## Penalty of an inhibited loss, and the average penalty\n\n");
    sec += &penalty_figure(
        ctx,
        &c20,
        &plan.g20,
        "penalty_20.svg",
        "Penalty of an inhibited loss, 20 packets (Hurtig Fig. 4.1)",
        Cell::penalty,
    )?;
    sec += &penalty_figure(
        ctx,
        &c20,
        &plan.g20,
        "average_20.svg",
        "Average penalty of a loss at an arbitrary position, 20 packets (Hurtig Fig. 4.2)",
        Cell::average,
    )?;
    sec += &penalty_figure(
        ctx,
        &c100,
        &plan.g100,
        "penalty_100.svg",
        "Penalty of an inhibited loss, 100 packets (Hurtig Fig. 4.15)",
        Cell::penalty,
    )?;
    sec += &penalty_figure(
        ctx,
        &c100,
        &plan.g100,
        "average_100.svg",
        "Average penalty, 100 packets (Hurtig Fig. 4.16)",
        Cell::average,
    )?;
    let show = |c: &Cell, f: fn(&Cell) -> f64| {
        if c.bad_rto() {
            "–".to_string()
        } else {
            num(f(c), 1)
        }
    };
    sec += "\n### Penalty T_inh / T_fr − 1 (%), 20 packets\n\n";
    sec += &matrix(&c20, &plan.g20, |c| show(c, Cell::penalty));
    sec += "\n### Average penalty (%), 20 packets\n\n";
    sec += &matrix(&c20, &plan.g20, |c| show(c, Cell::average));
    sec += "\n### T(0) / T_fr / T_inh (ms), 20 packets\n\n";
    sec += &matrix(&c20, &plan.g20, |c| {
        format!(
            "{} / {} / {}",
            num(c.t[0], 0),
            num(c.t_fast(), 0),
            num(c.t_inhibited(), 0)
        )
    });
    sec += "\n### Penalty (%), 100 packets\n\n";
    sec += &matrix(&c100, &plan.g100, |c| show(c, Cell::penalty));
    sec += "\n### Average penalty (%), 100 packets\n\n";
    sec += &matrix(&c100, &plan.g100, |c| show(c, Cell::average));
    report.section(sec);

    report.section(claims::remedy_section(ctx, &r20, &r100)?);

    report.section(format!(
        "## How to rerun a part\n\n```sh\n{}\n```\n",
        [&ran20, &ran100, &rem20, &rem100]
            .iter()
            .map(|r| r.command.clone())
            .collect::<Vec<_>>()
            .join("\n")
    ));
    Ok(report)
}

fn join(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A bandwidth × delay table of `f(cell)`.
fn matrix(cells: &[Cell], g: &Grid, f: impl Fn(&Cell) -> String) -> String {
    let header: Vec<String> = std::iter::once("kbit/s \\ delay ms".to_string())
        .chain(g.delay.iter().map(|d| d.to_string()))
        .collect();
    let h: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    let rows: Vec<Vec<String>> =
        g.bw.iter()
            .map(|&b| {
                std::iter::once(b.to_string())
                    .chain(
                        g.delay
                            .iter()
                            .map(|&d| at(cells, b, d).map_or("–".into(), &f)),
                    )
                    .collect()
            })
            .collect();
    md_table(&h, &rows)
}

fn position_figure(ctx: &Ctx, cells: &[Cell], bw: i64, n: usize) -> Result<String> {
    let mut series = Vec::new();
    for c in cells.iter().filter(|c| c.bw == bw) {
        series.push(line(
            format!("{} ms", c.delay),
            c.t.iter()
                .enumerate()
                .map(|(p, &t)| (p as f64, t))
                .collect(),
        ));
    }
    let mut spec = XySpec::new(
        format!("{n} packets, {bw} kbit/s: completion time by loss position (0 = no loss)"),
        "position of the lost server → client packet",
        "connect → last byte (ms)",
    );
    spec.log_y = true;
    figure::xy(
        ctx,
        &format!("time_vs_position_{n}_{bw}.svg"),
        &spec,
        &series,
    )
}

fn penalty_figure(
    ctx: &Ctx,
    cells: &[Cell],
    g: &Grid,
    file: &str,
    title: &str,
    f: fn(&Cell) -> f64,
) -> Result<String> {
    let series: Vec<_> =
        g.bw.iter()
            .map(|&b| {
                line(
                    format!("{b} kbit/s"),
                    cells
                        .iter()
                        .filter(|c| c.bw == b && !c.bad_rto())
                        .map(|c| (c.delay as f64, f(c)))
                        .collect(),
                )
            })
            .collect();
    let spec = XySpec::new(title, "one-way delay (ms)", "additional time (%)");
    figure::xy(ctx, file, &spec, &series)
}

/// The setup and the definitions, for the report.
fn intro(ctx: &Ctx, plan: &Plan) -> String {
    format!(
        "Setup ({}, Hurtig (2006) ch. 3 and App. C): the server writes n × 2500 bytes and closes \
         (10 writes = 20 server → client packets: SYN-ACK, 18 data segments of ≤ 1448 bytes, \
         the last carrying the FIN, and the ACK of the client's FIN; 56 writes = 100 packets, \
         98 of them data since the 32 KB send buffer splits one write); one packet of the server → \
         client sequence is lost at position p (`network.reverse.loss.model = \"positions\"`, \
         1 = SYN-ACK, pure ACKs count; p = 0 is the lossless baseline); the same bandwidth and \
         one-way delay both ways (`network.rtt` = 2 × delay), drop-tail queue of 99 packets. \
         Profile `freebsd-6`: NewReno + SACK + Limited Transmit, initial window 4, `freebsd6` \
         RTO (3·r + 200 ms after the first sample, initial 3 s), delayed ACK 100 ms / every \
         second segment, 32 KB send buffer, 64 KB receive buffer, MSS 1448, timestamps; a \
         duplicate ACK must not change the advertised window (the rule of Hurtig §4.1.5). Metric: \
         `completion_time_ms`, connect → last byte delivered (the FIN travels with the last data \
         segment, so this is Hurtig's connect → EOF). The simulator is deterministic, so one \
         run per point stands for Hurtig's three replications. Grids ({}): 20 packets, {} \
         kbit/s × {} ms; 100 packets, {} kbit/s × {} ms; every position 0..=n.\n\n\
         **Definitions.** A position is *fast-retransmitted* when the loss was repaired by fast \
         retransmit with no RTO, *inhibited* when it needed an RTO and lies after the last \
         fast-retransmitted position (the tail; RTOs before it are listed as *early RTO*). Per \
         (bandwidth, delay): T_fr = mean time over the fast-retransmitted positions, T_inh = mean \
         over the inhibited ones. **Penalty** of an inhibited loss = T_inh / T_fr − 1 (seed \
         Fig. 4.1: \"additional time … if the loss was placed in the end of the flow, where fast \
         retransmit should be inhibited, as opposed to a loss where fast retransmit was used\"). \
         **Average penalty** = mean over p = 1..n of T(p) ÷ the same mean with T(p) replaced by \
         T_fr at every inhibited p, − 1: the expected extra time that the inhibitions add to a \
         loss at a uniformly random position (Hurtig Fig. 4.2, \"the average additional time that \
         was required due to fast retransmit inhibitions … a packet loss … at an arbitrary \
         position\"; Hurtig gives no formula). Cells whose lossless run already had an RTO \
         (Hurtig's \"bad RTO estimation\", 40 kbit/s at low delay) are left out of both, as \
         Hurtig did.\n",
        SCENARIO.path,
        if ctx.quick {
            "quick mode: a subset of Table 3.1"
        } else {
            "all of Table 3.1"
        },
        join(&plan.g20.bw),
        join(&plan.g20.delay),
        join(&plan.g100.bw),
        join(&plan.g100.delay),
    )
}
