//! Study `petlund-demo`: Petlund et al. (2008), "TCP Enhancements for Interactive Thin-Stream
//! Applications" (NOSSDAV demo) §3 — Skype at 2 % loss and 130 ms RTT (Fig. 1) and BZFlag at 5 %
//! loss and 100 ms RTT (Fig. 2), with and without the enhancements (linear timeouts, modified
//! fast retransmit = thin dupACK, RDB): the application-latency CDFs, and what a user would see —
//! the share of updates later than 100, 200 and 400 ms (the game and ITU-T G.114 thresholds the
//! paper cites).

use super::figure;
use super::report::{md_table, num};
use super::{claims, p, Ctx, Report, Study, Verdict};
use crate::reproduce::ScenarioFile;
use anyhow::Result;
use thinlab_trace::plot::View;
use toml::Value;

pub fn study() -> Study {
    Study {
        name: "petlund-demo",
        title: "Petlund et al. (2008) demo: Skype and BZFlag over lossy paths with and without the thin-stream enhancements",
        run,
    }
}

const SCENARIO: ScenarioFile = ScenarioFile {
    path: "scenarios/reproduce/petlund-demo.toml",
    text: include_str!("../../../../scenarios/reproduce/petlund-demo.toml"),
};

const MECHANISMS: &str = "flow.0.tcp.mechanisms";
/// The thresholds a user notices (ms): first-person games, ITU-T G.114 "dissatisfied", its maximum.
const THRESHOLDS: [f64; 3] = [100.0, 200.0, 400.0];
const ENHANCED: [&str; 3] = ["linear-timeouts", "thin-dupack", "rdb"];

/// (claim, part, app profile, loss, RTT ms, duration full, figure).
const SETUPS: [(&str, &str, &str, f64, u64, &str, &str); 2] = [
    ("E.5", "skype", "skype-tcp", 0.02, 130, "10min", "Fig. 1"),
    ("E.6", "bzflag", "bzflag", 0.05, 100, "5min", "Fig. 2"),
];

fn mechanisms(on: bool) -> Value {
    let m: &[&str] = if on { &ENHANCED } else { &[] };
    Value::Array(m.iter().map(|s| Value::from(*s)).collect())
}

/// Share (%) of `lat` above `ms`.
fn later_than(lat: &[f64], ms: f64) -> f64 {
    100.0 * lat.iter().filter(|&&l| l > ms).count() as f64 / lat.len().max(1) as f64
}

fn run(ctx: &mut Ctx) -> Result<Report> {
    let file = claims::of("petlund-demo");
    let mut report = Report {
        intro: format!(
            "Setup ({}): one connection over a 100 Mbit/s path with uniform random loss in \
             each direction, Linux 2.6.22 profile with SACK, Nagle off. Skype: the `skype-tcp` \
             profile (Evensen (2008) Table 2.1: 236 B every 34 ms on average) at 2 % loss and \
             130 ms RTT; BZFlag: the `bzflag` profile (30 B every 24 ms) at 5 % loss and \
             100 ms RTT for 5 minutes, as in the demo. *Enhanced* = linear timeouts, thin \
             dupACK (the demo's modified fast retransmit) and RDB. Latency = application-layer \
             latency of each write (write call to in-order delivery; its minimum is the \
             one-way delay). {}\n",
            SCENARIO.path,
            if ctx.quick {
                "Quick mode: one run of 2 minutes per configuration."
            } else {
                "Five runs per configuration (Skype 10 minutes, BZFlag 5 minutes)."
            }
        ),
        ..Report::default()
    };
    let mut rows = Vec::new();
    let mut figs = String::from("## Latency CDFs (the demo's Figs. 1–2)\n\n");
    let mut commands = Vec::new();
    let mut tail_falls = true;
    for (id, part, app, loss, rtt, full, fig) in SETUPS {
        let (duration, reps) = if ctx.quick { ("2min", 1) } else { (full, 5) };
        let sets = [
            ("duration", Value::from(duration)),
            ("repetitions", Value::from(reps)),
            ("network.rtt", Value::from(format!("{rtt}ms"))),
            ("network.loss.rate", Value::from(loss)),
            ("flow.0.app.name", Value::from(app)),
            (
                "sweep.flow.0.tcp.mechanisms",
                Value::Array(vec![mechanisms(false), mechanisms(true)]),
            ),
        ];
        let ran = ctx.run_file(part, &SCENARIO, &sets)?;
        commands.push(ran.command.clone());
        let lat = |on: bool| -> Result<Vec<f64>> {
            let c = ran.find(&[p(MECHANISMS, mechanisms(on))])?;
            Ok(ran.pooled_latency(c, 0))
        };
        let (plain, enh) = (lat(false)?, lat(true)?);
        let shares = |l: &[f64]| THRESHOLDS.map(|t| later_than(l, t));
        let (sp, se) = (shares(&plain), shares(&enh));
        for (label, l, s) in [("TCP", &plain, sp), ("enhanced", &enh, se)] {
            let mut row = vec![
                format!("{app}, {:.0} %, {rtt} ms", loss * 100.0),
                label.into(),
            ];
            row.push(l.len().to_string());
            row.extend(s.iter().map(|x| num(*x, 2)));
            rows.push(row);
        }
        // E.5 / E.6: the enhancements recover losses faster — fewer late updates.
        let cut = file.num(id, "cut");
        let at400 = se[2] <= (1.0 - cut) * sp[2] && se[1] < sp[1];
        let fewer = (0..3).all(|i| se[i] <= sp[i]) && se[2] < sp[2];
        tail_falls &= se[2] < sp[2];
        report.claim(
            id,
            format!("{fig}: lost data recovered faster with the enhancements (no number)"),
            format!(
                "later than 100 / 200 / 400 ms: TCP {} / {} / {} %, enhanced {} / {} / {} %",
                num(sp[0], 2),
                num(sp[1], 2),
                num(sp[2], 2),
                num(se[0], 2),
                num(se[1], 2),
                num(se[2], 2)
            ),
            Verdict::of(at400, fewer),
            format!(
                "Reproduced when the enhancements cut the share of updates later than 400 ms by \
                 at least {:.0} % and lower the share later than 200 ms; shape when no share \
                 rises and the 400 ms share falls.",
                cut * 100.0
            ),
        );
        let one_way = rtt as f64 / 2.0;
        figs += &figure::latency(
            ctx,
            &format!("cdf_{part}.svg"),
            &format!("{app}, {:.0} % loss, {rtt} ms RTT ({fig})", loss * 100.0),
            &format!("application-layer latency (ms; one-way delay {one_way} ms)"),
            View::Cdf,
            &[("TCP".to_string(), plain), ("enhanced".to_string(), enh)],
        )?;
    }
    report.check(
        "the enhancements lower the share of updates later than 400 ms for Skype and for BZFlag",
        tail_falls,
    );
    let mut sec = String::from("## What a user would see\n\nShare of updates (writes) later than each threshold, pooled over runs:\n\n");
    let mut header = vec!["setup", "transport", "updates"];
    let th: Vec<String> = THRESHOLDS.iter().map(|t| format!("> {t} ms (%)")).collect();
    header.extend(th.iter().map(|s| s.as_str()));
    sec += &md_table(&header, &rows);
    report.section(sec);
    report.section(figs);
    report.section(format!(
        "## How to rerun\n\n```sh\n{}\n```\n",
        commands.join("\n")
    ));
    Ok(report)
}
