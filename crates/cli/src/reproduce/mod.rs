//! `thinlab reproduce NAME [--quick] [--out DIR]`: runs one study of docs/references.md (its
//! quantitative claims, one by one) in the simulator and writes a Markdown report with SVG figures
//! that puts our figures beside the published ones, claim by claim, each with a verdict.
//!
//! A study ([`Study`]) is a function that runs scenario documents through [`Ctx::run_file`] (the
//! same preparation, validation and parallel runner as `thinlab run`) and returns a
//! [`Report`]. Its scenarios are committed under `scenarios/reproduce/` so that any part can
//! be rerun with `thinlab run`. `--quick` runs shorter and fewer points; the report's
//! qualitative [`report::Check`]s are what CI asserts (`claims.json`). The claims, their rules
//! and the checks are data, one TOML file per study ([`claims`]).

mod claims;
mod ctx;
mod evensen_apps;
mod evensen_lab;
mod fairness;
mod figure;
mod hurtig;
mod modern_linux;
mod petlund_demo;
mod petlund_variants;
mod report;
mod yin;

pub use ctx::{p, Ctx, Ran};
pub use report::{Report, Verdict};

use crate::args::ReproduceArgs;
use crate::error::BadInput;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// A committed scenario file that a study runs, embedded at build time.
pub struct ScenarioFile {
    /// Its path in the repository (for the report's rerun commands).
    pub path: &'static str,
    pub text: &'static str,
}

/// One reproducible study.
pub struct Study {
    /// The name on the command line.
    pub name: &'static str,
    /// What it reproduces, for `--help`-like listings and the report title.
    pub title: &'static str,
    pub run: fn(&mut Ctx) -> Result<Report>,
}

/// Every study, A, B, C, D, E (the order of the claim identifiers).
pub fn studies() -> Vec<Study> {
    vec![
        evensen_lab::study(),
        evensen_apps::study(),
        hurtig::study(),
        yin::study(),
        fairness::study(),
        petlund_demo::study(),
        petlund_variants::study(),
        modern_linux::study(),
    ]
}

fn names() -> String {
    let mut n: Vec<&str> = studies().iter().map(|s| s.name).collect();
    n.push("all");
    n.join(", ")
}

pub fn reproduce(args: ReproduceArgs) -> Result<()> {
    let all = studies();
    let chosen: Vec<&Study> = if args.name == "all" {
        all.iter().collect()
    } else {
        match all.iter().find(|s| s.name == args.name) {
            Some(s) => vec![s],
            None => {
                return Err(BadInput::new(format!(
                    "unknown study \"{}\": expected one of {}",
                    args.name,
                    names()
                ))
                .into())
            }
        }
    };
    let base = args.out.clone();
    let mut failed = Vec::new();
    let mut index = Vec::new();
    for study in chosen {
        let out = match (&base, args.name == "all") {
            (Some(dir), false) => dir.clone(),
            (Some(dir), true) => dir.join(study.name),
            (None, _) => PathBuf::from("results/reproduce").join(study.name),
        };
        let mut ctx = Ctx::new(
            args.quick,
            out.clone(),
            args.jobs.map(usize::from),
            args.quiet,
        );
        if !args.quiet {
            eprintln!(
                "reproducing {} ({}){}",
                study.name,
                study.title,
                if args.quick { ", quick" } else { "" }
            );
        }
        let mut report = (study.run)(&mut ctx).with_context(|| format!("study {}", study.name))?;
        let file = claims::of(study.name);
        report.counts = claims::join(file, &mut report)
            .with_context(|| format!("the claims file of {}", study.name))?;
        report.file = Some(file);
        let elapsed = ctx.elapsed_s();
        report
            .write(&out, study, &ctx, elapsed)
            .with_context(|| format!("writing the report of {}", study.name))?;
        if !args.quiet {
            print!("{}", report.verdict_table());
            let n = report.counts;
            println!(
                "{}: {} claims, {} covered: {} reproduced, {} shape reproduced, {} not reproduced \
                 with a tested explanation, {} not reproduced unexplained",
                study.name,
                n.total,
                n.covered,
                n.reproduced,
                n.shape,
                n.not_explained,
                n.not_unexplained
            );
            println!(
                "{}: {} runs in {elapsed:.1} s; report in {}",
                study.name,
                ctx.runs_done(),
                out.join("report.md").display()
            );
        }
        index.push(IndexRow::new(study, &report, ctx.runs_done(), elapsed));
        failed.extend(
            report
                .checks
                .iter()
                .filter(|c| c.asserted && !c.holds)
                .map(|c| format!("{}: {}", study.name, c.what)),
        );
    }
    if args.name == "all" {
        let dir = base.unwrap_or_else(|| PathBuf::from("results/reproduce"));
        write_index(&dir, &index, args.quick)?;
        if !args.quiet {
            let total: f64 = index.iter().map(|r| r.wall_s).sum();
            println!(
                "all studies: {total:.1} s; index in {}",
                dir.join("README.md").display()
            );
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "qualitative checks that do not hold:\n  {}",
            failed.join("\n  ")
        )
    }
}

/// One line of the index that `reproduce all` writes.
struct IndexRow {
    name: &'static str,
    title: &'static str,
    runs: usize,
    wall_s: f64,
    counts: claims::Counts,
    checks_held: usize,
    checks: usize,
}

impl IndexRow {
    fn new(study: &Study, report: &Report, runs: usize, wall_s: f64) -> Self {
        IndexRow {
            name: study.name,
            title: study.title,
            runs,
            wall_s,
            counts: report.counts,
            checks_held: report.checks.iter().filter(|c| c.holds).count(),
            checks: report.checks.len(),
        }
    }
}

/// `DIR/README.md`: every study with its verdict counts and wall time, and the total.
fn write_index(dir: &std::path::Path, rows: &[IndexRow], quick: bool) -> Result<()> {
    let total: f64 = rows.iter().map(|r| r.wall_s).sum();
    let cores = crate::run::available_cores();
    let mut s = format!(
        "# Reproductions of published thin-stream studies\n\nGenerated by `thinlab reproduce all{}` \
         (thinlab {}): all studies in {total:.0} s of wall time on a {cores}-core machine. Each \
         report puts every quantitative claim of the study beside our figure with \
         a verdict. *claims*: the claims of the paper in the study's claims file; *covered*: \
         those with a verdict; *not reproduced, tested why*: the report has a check that \
         shows the reason and it holds.\n\n",
        if quick { " --quick" } else { "" },
        env!("CARGO_PKG_VERSION"),
    );
    let mut table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![
                format!("[{}]({}/report.md)", r.name, r.name),
                r.title.to_string(),
            ];
            row.extend(r.counts.cells());
            row.extend([
                format!("{}/{}", r.checks_held, r.checks),
                r.runs.to_string(),
                format!("{:.1} s", r.wall_s),
            ]);
            row
        })
        .collect();
    // Claims files that no study judges yet.
    for f in claims::all() {
        if rows.iter().any(|r| r.name == f.study) {
            continue;
        }
        let mut row = vec![format!("{} (no study yet)", f.study), f.paper.clone()];
        row.extend(
            claims::Counts {
                total: f.claims.len(),
                ..Default::default()
            }
            .cells(),
        );
        row.extend(["–".to_string(), "–".into(), "–".into()]);
        table.push(row);
    }
    let mut header = vec!["study", "what"];
    header.extend(claims::Counts::HEADER);
    header.extend(["checks holding", "runs", "wall time"]);
    s += &report::md_table(&header, &table);
    s += "\nThe claims and the rules that judge them are in `crates/cli/src/reproduce/claims/*.toml`.\n";
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("README.md");
    std::fs::write(&path, s).with_context(|| format!("writing {}", path.display()))
}
