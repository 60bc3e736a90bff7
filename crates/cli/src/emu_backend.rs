//! `thinlab run --backend emu` (or `backend = "emu"` in the scenario): the same scenario,
//! sweep and result files, with every run carried out in real time by thinlab-emu over
//! network namespaces and the running kernel's TCP. Runs go one after another (a progress bar
//! shows the real time left); Ctrl-C stops the current run and keeps the finished ones.
//!
//! Besides the common files, `emu.json` holds per run what only a real run has (emulator
//! lateness, SCHED_FIFO, the sysctls and congestion control read back, `TCP_INFO`, the
//! namespaces' TCP counters), and each run of `summary.json` gets an `emu` object with the
//! lateness and the congestion control each socket used.

use crate::args::RunArgs;
use crate::error::BadInput;
use crate::output::Results;
use crate::progress::Progress;
use crate::run::{clean_name, prepare_each};
use crate::runner::{self, RunOutput};
use anyhow::{Context, Result};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;
use thinlab_emu::EmuError;

/// Which backend runs the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sim,
    Emu,
}

/// Takes `backend` out of the document (the simulator's schema does not know it);
/// `--backend` wins over the file. `flow.N.tcp.stack` is emu-only: refused under the
/// simulator; the emu backend takes it out itself ("kernel" or "thinlab").
pub fn take_backend(doc: &mut toml::Value, flag: Option<&str>) -> Result<Backend, BadInput> {
    let table = doc
        .as_table_mut()
        .ok_or_else(|| BadInput::new("the scenario must be a TOML table"))?;
    let file = table.remove("backend");
    let name = match (flag, &file) {
        (Some(f), _) => f.to_string(),
        (None, Some(v)) => v
            .as_str()
            .ok_or_else(|| BadInput::new(format!("backend = {v}: expected \"sim\" or \"emu\"")))?
            .to_string(),
        (None, None) => "sim".into(),
    };
    let backend = match name.as_str() {
        "sim" => Backend::Sim,
        "emu" => Backend::Emu,
        o => {
            return Err(BadInput::new(format!(
                "backend = \"{o}\": expected \"sim\" or \"emu\""
            )))
        }
    };
    if backend == Backend::Sim {
        let swept = doc
            .get("sweep")
            .and_then(|s| s.as_table())
            .and_then(|t| t.keys().find(|k| k.ends_with(".tcp.stack")).cloned());
        if let Some(key) = swept {
            return Err(BadInput::new(format!(
                "sweep key `{key}`: only with backend \"emu\" (the simulator always runs thinlab's TCP)"
            )));
        }
        if let Some((i, stack)) = stacks(doc).into_iter().find(|(_, s)| s.is_some()) {
            return Err(BadInput::new(format!(
                "flow.{i}.tcp.stack = {}: only with backend \"emu\" (the simulator always runs thinlab's TCP)",
                stack.unwrap_or_default()
            )));
        }
    }
    Ok(backend)
}

/// Each flow's `tcp.stack` value, if set (as TOML text).
fn stacks(doc: &toml::Value) -> Vec<(usize, Option<String>)> {
    doc.get("flow")
        .and_then(|f| f.as_array())
        .map_or(Vec::new(), |flows| {
            flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (
                        i,
                        f.get("tcp")
                            .and_then(|t| t.get("stack"))
                            .map(|s| s.to_string()),
                    )
                })
                .collect()
        })
}

/// Takes every `flow.N.tcp.stack` out of the document: `true` where it is "thinlab".
fn take_stacks(doc: &mut toml::Value) -> Result<Vec<bool>, BadInput> {
    let mut out = Vec::new();
    let Some(flows) = doc.get_mut("flow").and_then(|f| f.as_array_mut()) else {
        return Ok(out);
    };
    for (i, f) in flows.iter_mut().enumerate() {
        let stack = f
            .get_mut("tcp")
            .and_then(|t| t.as_table_mut())
            .and_then(|t| t.remove("stack"));
        out.push(match stack.as_ref().map(|s| s.as_str()) {
            None | Some(Some("kernel")) => false,
            Some(Some("thinlab")) => true,
            _ => {
                return Err(BadInput::new(format!(
                    "flow.{i}.tcp.stack = {}: expected \"kernel\" or \"thinlab\"",
                    stack.map(|s| s.to_string()).unwrap_or_default()
                )))
            }
        });
    }
    Ok(out)
}

fn emu_error(e: EmuError) -> anyhow::Error {
    if e.user_fixable() {
        BadInput::new(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

/// Runs every configuration × repetition of `doc` in real time and writes the results.
pub fn run(args: &RunArgs, doc: toml::Value, sets: &[(String, toml::Value)]) -> Result<()> {
    let fixed: Vec<String> = sets.iter().map(|(k, _)| k.clone()).collect();
    let origin = args.scenario.display().to_string();
    let resolved = toml::to_string(&doc).context("writing the resolved scenario as TOML")?;
    // Each configuration's `flow.N.tcp.stack` (a sweep may set it: `"flow.0.tcp.stack" =
    // ["kernel", "thinlab"]`) comes out before the simulator's schema sees the rest.
    let (prepared, stacks) = prepare_each(doc, &fixed, &origin, |applied| {
        let thinlab_flows = take_stacks(applied)?;
        thinlab_emu::support::check_doc(applied, &thinlab_flows).map_err(emu_error)?;
        Ok(thinlab_flows)
    })?;
    for (s, thinlab_flows) in prepared.scenarios.iter().zip(&stacks) {
        thinlab_emu::support::resolve(s, thinlab_flows).map_err(emu_error)?;
    }
    thinlab_emu::preflight().map_err(emu_error)?;
    let leftovers = thinlab_emu::netns::leftovers();
    if !leftovers.is_empty() {
        eprintln!(
            "warning: /run/netns holds {} (not made by thinlab, whose namespaces vanish with it; left alone)",
            leftovers.join(", ")
        );
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(clean_name(&prepared.name)));
    let jobs = runner::jobs(&prepared.scenarios);
    let total: Duration = jobs
        .iter()
        .map(|j| prepared.scenarios[j.config].duration)
        .sum();
    let progress = Progress::with_clock(total, jobs.len(), args.quiet, "real time");
    let abort = thinlab_emu::signal::interrupt_flag();
    let mut runs = Vec::new();
    let mut reports = Vec::new();
    let mut failure = None;
    for job in &jobs {
        let s = &prepared.scenarios[job.config];
        let mut opts = thinlab_emu::Options {
            thinlab_flows: stacks[job.config].clone(),
            ..Default::default()
        };
        if args.capture || s.flows.iter().any(|f| f.capture) {
            let label = clean_name(&prepared.configs[job.config].label());
            opts.capture_dir = Some(
                out.join("pcap")
                    .join(format!("{label}-rep{}", job.repetition)),
            );
            opts.capture_all = args.capture;
        }
        let mut tracker = progress.run(s.duration);
        #[allow(clippy::disallowed_methods)] // wall time of a real-time run, for timing.json
        let started = std::time::Instant::now();
        match thinlab_emu::run(s, job.seed, &opts, abort, &mut |t| tracker.at(t)) {
            Ok(r) => {
                tracker.done();
                let (output, report) = outputs(job, r, started.elapsed().as_secs_f64());
                reports.push(json!({
                    "params": params_json(&prepared.configs[job.config].params),
                    "repetition": job.repetition,
                    "seed": job.seed,
                    "report": report,
                }));
                runs.push(output);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    progress.finish();
    if !runs.is_empty() {
        let results = Results {
            scenario: &prepared.name,
            overrides: sets,
            configs: &prepared.configs,
            runs: &runs,
            complete: failure.is_none() && runs.len() == jobs.len(),
        };
        let lines = results.lines();
        results.write_with_lines(&out, &lines)?;
        if args.format == crate::args::Format::Parquet {
            crate::parquet_out::write_results(&out, &results, &resolved)?;
        }
        // no per-write series: an emulated run cannot be repeated exactly
        let problems = crate::health::problems(&results);
        crate::report_html::write_run(&out, &results, &problems, &resolved, None, Some(&lines))?;
        let emu_json = json!({ "scenario": prepared.name, "backend": "emu", "runs": reports });
        let path = out.join("emu.json");
        std::fs::write(&path, serde_json::to_string_pretty(&emu_json)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        if !args.quiet && failure.is_none() {
            print!("{}", crate::table::render(&results, &problems));
        }
        for line in crate::health::warnings(&results, &problems) {
            eprintln!("{line}");
        }
    }
    if let Some(e) = failure {
        let kept = if runs.is_empty() {
            String::new()
        } else {
            format!(
                " ({} of {} runs finished; their results are in {})",
                runs.len(),
                jobs.len(),
                out.display()
            )
        };
        if matches!(e, EmuError::Interrupted) {
            // Ctrl-C: exit code 130, as under the simulator.
            return Err(crate::error::Interrupted(format!("interrupted{kept}")).into());
        }
        return Err(emu_error(e)).with_context(|| format!("emulated run{kept}"));
    }
    if !args.quiet {
        println!(
            "{} (real time); results in {}",
            crate::output::count(runs.len(), "emulated run"),
            out.display()
        );
    }
    Ok(())
}

fn params_json(p: &[(String, toml::Value)]) -> serde_json::Value {
    serde_json::Value::Object(
        p.iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
            .collect(),
    )
}

/// The p50, p99, maximum (µs) and count of a run's timing statistics, for `summary.json`.
fn us_summary(l: &thinlab_emu::stats::Lateness) -> serde_json::Value {
    json!({ "p50": l.p50_us, "p99": l.p99_us, "max": l.max_us, "count": l.count })
}

/// The common run output and the emu report of one finished run.
fn outputs(
    job: &runner::Job,
    r: thinlab_emu::RunOutcome,
    wall_s: f64,
) -> (RunOutput, serde_json::Value) {
    let rep = &r.report;
    let mut lateness = us_summary(&rep.lateness);
    lateness["over_1ms"] = json!(rep.lateness.over_1ms);
    let summary_emu = json!({
        "backend": "emu",
        "kernel": rep.kernel,
        "lateness_us": lateness,
        "sched_fifo": rep.sched_fifo,
        "congestion_control": rep.flows.iter().map(|f| json!({
            "flow": f.name, "sender": f.sender.cc_used, "receiver": f.receiver.cc_used,
        })).collect::<Vec<_>>(),
        "host_parts_us": rep.flows.iter().map(|f| json!({
            "flow": f.name,
            "write_to_wire": us_summary(&f.host_parts.write_to_wire),
            "arrival_to_read": us_summary(&f.host_parts.arrival_to_read),
        })).collect::<Vec<_>>(),
    });
    let flows = r
        .flows
        .iter()
        .map(|f| {
            runner::flow_output(
                &f.name,
                &f.records,
                f.duration,
                f.status,
                f.status_reason.clone(),
            )
        })
        .collect();
    let output = RunOutput {
        config: job.config,
        repetition: job.repetition,
        seed: job.seed,
        flows,
        end_time_s: r.end_time.as_secs_f64(),
        events_processed: 0,
        drain_bound_hit: r
            .flows
            .iter()
            .any(|f| f.status == thinlab_trace::FlowStatus::DrainBoundHit),
        dropped_loss: r.drops.loss_forward + r.drops.loss_reverse,
        dropped_queue: r.drops.queue_forward + r.drops.queue_reverse + r.drops.queue_access,
        sim_wall_s: wall_s,
        emu: Some(summary_emu),
        write_spill: None,
    };
    let report = serde_json::to_value(&r.report).unwrap_or_default();
    (output, report)
}
