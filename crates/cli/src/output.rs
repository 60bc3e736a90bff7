//! Result files (docs/spec/interface.md, "Results"): `summary.json`, `runs.csv`, `latency_cdf.csv`
//! and the SVG plots `latency_cdf.svg` (CDF) and `latency_ccdf.svg` (tail), plus `timing.json`: the
//! simulate-only wall time of each run (not deterministic, so it is kept out of `summary.json`,
//! which is identical for identical inputs).
//!
//! A configuration's latency distribution pools the application-layer latency samples of all
//! its repetitions. With several flows, each (configuration, flow) gets its own line.

use crate::runner::{FlowOutput, RunOutput};
use crate::sweep::{display_value, Config};
use anyhow::{Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use thinlab_trace::histogram::{merged_runs, LatencyHistogram};
use thinlab_trace::metrics::latency_cdf_runs;
use thinlab_trace::plot::{faceted_cdf_svg, suggest_log_x, Panel, PlotSpec, Series, View};
use thinlab_trace::FlowMetrics;

/// One line of the latency CDF: (configuration label, flow, legend label, the samples as
/// ascending `(value, count)` runs).
pub type CdfLine = (String, String, String, Vec<(f64, u64)>);

/// One (configuration, flow) of the CDF lines: the flow's index and display name, and whether
/// the configuration has several flows (then the legend names the flow).
pub struct LineSource {
    pub config: usize,
    pub flow: usize,
    pub name: String,
    several: bool,
}

/// CDF points kept per line (the tail above p99 is kept exactly on top of these).
pub const CDF_POINTS: usize = 400;
/// Most panels and most lines per panel (legend entries) of one plot; with more, the plots are
/// left out (the CSV and report.html have them all).
pub const MAX_PANELS: usize = 36;
pub const MAX_LEGEND: usize = 40;

/// The columns of `runs.csv` between the swept keys and the metrics.
pub const RUN_COLUMNS: [&str; 5] = ["repetition", "seed", "flow", "status", "status_reason"];

#[derive(Serialize)]
struct Summary<'a> {
    scenario: &'a str,
    version: &'a str,
    /// `--set` overrides applied to every run (an extension of the contract).
    overrides: serde_json::Map<String, serde_json::Value>,
    /// False when the command was interrupted (Ctrl-C) before every run finished.
    complete: bool,
    /// Serialized one run at a time straight into the file (a sweep of a million runs never
    /// holds its whole JSON text in memory).
    runs: Lazy<'a, RunJson<'a>>,
}

/// A sequence serialized element by element from an iterator built on demand.
struct Lazy<'a, T>(Box<dyn Fn() -> Box<dyn Iterator<Item = T> + 'a> + 'a>);

impl<T: Serialize> Serialize for Lazy<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// Writes `value` as pretty JSON and a newline into `path`, streaming.
fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let file = fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    write_json_to(&mut w, value).with_context(|| format!("writing {}", path.display()))
}

/// Writes `value` as pretty JSON and a newline into `w`, streaming.
fn write_json_to(mut w: impl std::io::Write, value: &impl Serialize) -> serde_json::Result<()> {
    serde_json::to_writer_pretty(&mut w, value)
        .and_then(|()| w.write_all(b"\n").map_err(serde_json::Error::io))
        .and_then(|()| w.flush().map_err(serde_json::Error::io))
}

#[derive(Serialize)]
struct RunJson<'a> {
    params: serde_json::Map<String, serde_json::Value>,
    repetition: u32,
    seed: u64,
    flows: Vec<FlowJson<'a>>,
    end_time_s: f64,
    events_processed: u64,
    drain_bound_hit: bool,
    dropped_loss: u64,
    dropped_queue: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    emu: Option<&'a serde_json::Value>,
}

#[derive(Serialize)]
struct Timing<'a> {
    /// Sum over runs of the simulate-only wall time, s (runs may overlap on several threads).
    sim_wall_s: f64,
    events_processed: u64,
    runs: Lazy<'a, RunTiming>,
}

#[derive(Serialize)]
struct RunTiming {
    params: serde_json::Map<String, serde_json::Value>,
    repetition: u32,
    seed: u64,
    /// Wall time of the simulator's run (no metrics, no files), s.
    sim_wall_s: f64,
    events_processed: u64,
    ns_per_event: Option<f64>,
}

#[derive(Serialize)]
struct FlowJson<'a> {
    name: &'a str,
    metrics: &'a FlowMetrics,
}

fn json_map(pairs: &[(String, toml::Value)]) -> serde_json::Map<String, serde_json::Value> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
            )
        })
        .collect()
}

/// Everything the output files are made from.
pub struct Results<'a> {
    pub scenario: &'a str,
    pub overrides: &'a [(String, toml::Value)],
    pub configs: &'a [Config],
    pub runs: &'a [RunOutput],
    /// Every planned run finished (false after Ctrl-C).
    pub complete: bool,
}

impl Results<'_> {
    /// The flows of a configuration (from its first run): index and display name, the name
    /// suffixed with `#index` when several flows share it.
    pub fn flows_of(&self, config: usize) -> Vec<(usize, String)> {
        let Some(run) = self.config_runs(config).first() else {
            return Vec::new();
        };
        let names: Vec<&str> = run.flows.iter().map(|f| f.name.as_str()).collect();
        let mut counts: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(names.len());
        for n in &names {
            *counts.entry(n).or_default() += 1;
        }
        names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let dup = counts[n] > 1;
                (
                    i,
                    if dup {
                        format!("{n}#{i}")
                    } else {
                        n.to_string()
                    },
                )
            })
            .collect()
    }

    /// The outputs of flow `flow` (by index) in every repetition of a configuration.
    pub fn flow_runs(&self, config: usize, flow: usize) -> impl Iterator<Item = &FlowOutput> {
        self.config_runs(config)
            .iter()
            .filter_map(move |r| r.flows.get(flow))
    }

    /// The runs of one configuration. `runs` are in configuration order (job order, as
    /// `runner::jobs` makes them), so they are found by binary search: linear time over a
    /// sweep of a million configurations instead of quadratic.
    pub fn config_runs(&self, config: usize) -> &[RunOutput] {
        let lo = self.runs.partition_point(|r| r.config < config);
        let hi = lo + self.runs[lo..].partition_point(|r| r.config <= config);
        &self.runs[lo..hi]
    }

    /// Pooled application latency of one (configuration, flow): the delivered writes'
    /// latencies (an exact histogram), and the censored lower bounds of the undelivered ones.
    pub fn pooled_app_latency(&self, config: usize, flow: usize) -> (LatencyHistogram, Vec<f64>) {
        let mut exact = LatencyHistogram::default();
        for f in self.flow_runs(config, flow) {
            exact.merge(&f.app_latency);
        }
        let censored = self
            .flow_runs(config, flow)
            .flat_map(|f| f.app_censored_ms.iter().copied())
            .collect();
        (exact, censored)
    }

    /// Lines of the CDF: (configuration label, flow, label for the legend, the samples as
    /// ascending `(value, count)` runs).
    pub fn lines(&self) -> Vec<CdfLine> {
        self.lines_on(1)
    }

    /// [`Results::lines`], computed on up to `threads` threads.
    pub fn lines_on(&self, threads: usize) -> Vec<CdfLine> {
        crate::in_order::map_in_order(&self.line_sources(), threads, |s| self.line(s))
    }

    /// The line of one (configuration, flow) of [`Results::lines`].
    fn line(&self, s: &LineSource) -> CdfLine {
        (
            self.configs[s.config].label(),
            s.name.clone(),
            self.line_label(s),
            self.line_runs(s),
        )
    }

    /// The legend's label of a line: its configuration's, and the flow's name when the
    /// configuration has several flows.
    pub fn line_label(&self, s: &LineSource) -> String {
        let c = self.configs[s.config].label();
        if s.several {
            format!("{c} · {}", s.name)
        } else {
            c
        }
    }

    /// A line's samples as ascending `(value, count)` runs, pooled over the configuration's
    /// repetitions. Undelivered writes stay in the CDF at their lower bound (censored).
    pub fn line_runs(&self, s: &LineSource) -> Vec<(f64, u64)> {
        let (exact, censored) = self.pooled_app_latency(s.config, s.flow);
        merged_runs(&exact, &censored)
    }

    /// What each of [`Results::lines`] is drawn from, in the same order.
    pub fn line_sources(&self) -> Vec<LineSource> {
        let mut out = Vec::new();
        for config in 0..self.configs.len() {
            let flows = self.flows_of(config);
            let several = flows.len() > 1;
            out.extend(flows.into_iter().map(|(flow, name)| LineSource {
                config,
                flow,
                name,
                several,
            }));
        }
        out
    }

    /// Writes every result file into `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> Result<()> {
        self.write_with_lines(dir, &self.lines())
    }

    /// [`Results::write`] with the CDF lines already computed ([`Results::lines`]).
    pub fn write_with_lines(&self, dir: &Path, lines: &[CdfLine]) -> Result<()> {
        debug_assert!(self.runs.windows(2).all(|w| w[0].config <= w[1].config));
        fs::create_dir_all(dir)
            .with_context(|| format!("creating the output directory {}", dir.display()))?;
        self.write_summary(&dir.join("summary.json"))?;
        self.write_timing(&dir.join("timing.json"))?;
        self.write_runs_csv(&dir.join("runs.csv"))?;
        self.write_cdf_csv(&dir.join("latency_cdf.csv"), lines)?;
        self.write_plots(dir, lines)
    }

    fn write_summary(&self, path: &Path) -> Result<()> {
        let file =
            fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        self.write_summary_to(std::io::BufWriter::new(file))
            .with_context(|| format!("writing {}", path.display()))
    }

    /// `summary.json`'s text into `w`.
    pub fn write_summary_to(&self, w: impl std::io::Write) -> serde_json::Result<()> {
        let summary = Summary {
            scenario: self.scenario,
            version: env!("CARGO_PKG_VERSION"),
            overrides: json_map(self.overrides),
            complete: self.complete,
            runs: Lazy(Box::new(move || {
                Box::new(self.runs.iter().map(move |r| {
                    RunJson {
                        params: json_map(&self.configs[r.config].params),
                        repetition: r.repetition,
                        seed: r.seed,
                        flows: r
                            .flows
                            .iter()
                            .map(|f| FlowJson {
                                name: &f.name,
                                metrics: &f.metrics,
                            })
                            .collect(),
                        end_time_s: r.end_time_s,
                        events_processed: r.events_processed,
                        drain_bound_hit: r.drain_bound_hit,
                        dropped_loss: r.dropped_loss,
                        dropped_queue: r.dropped_queue,
                        emu: r.emu.as_ref(),
                    }
                }))
            })),
        };
        write_json_to(w, &summary)
    }

    fn write_timing(&self, path: &Path) -> Result<()> {
        let timing = Timing {
            sim_wall_s: self.runs.iter().map(|r| r.sim_wall_s).sum(),
            events_processed: self.runs.iter().map(|r| r.events_processed).sum(),
            runs: Lazy(Box::new(move || {
                Box::new(self.runs.iter().map(move |r| {
                    RunTiming {
                        params: json_map(&self.configs[r.config].params),
                        repetition: r.repetition,
                        seed: r.seed,
                        sim_wall_s: r.sim_wall_s,
                        events_processed: r.events_processed,
                        ns_per_event: (r.events_processed > 0)
                            .then(|| r.sim_wall_s * 1e9 / r.events_processed as f64),
                    }
                }))
            })),
        };
        write_json(path, &timing)
    }

    /// The swept keys: the first columns of `runs.csv`.
    pub fn param_keys(&self) -> Vec<&str> {
        self.configs.first().map_or(Vec::new(), |c| {
            c.params.iter().map(|p| p.0.as_str()).collect()
        })
    }

    /// Every (run, flow) pair in row order of `runs.csv`.
    pub fn flow_rows(&self) -> impl Iterator<Item = (&RunOutput, &FlowOutput)> {
        self.runs
            .iter()
            .flat_map(|r| r.flows.iter().map(move |f| (r, f)))
    }

    pub fn write_runs_csv(&self, path: &Path) -> Result<()> {
        let mut w =
            csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
        let mut header: Vec<String> = self.param_keys().iter().map(|k| k.to_string()).collect();
        header.extend(RUN_COLUMNS.map(String::from));
        header.extend(FlowMetrics::scalar_names().iter().cloned());
        w.write_record(&header)?;
        // Field by field, numbers formatted into one reused buffer (the text `to_string`
        // makes): a sweep of 100 000 runs made 80 strings per row.
        let mut number = String::new();
        for (r, f) in self.flow_rows() {
            for (_, v) in &self.configs[r.config].params {
                w.write_field(display_value(v))?;
            }
            for n in [r.repetition as u64, r.seed] {
                number.clear();
                write!(number, "{n}").expect("writing to a String");
                w.write_field(&number)?;
            }
            w.write_field(&f.name)?;
            w.write_field(f.metrics.status.to_string())?;
            w.write_field(f.metrics.status_reason.as_deref().unwrap_or_default())?;
            for v in f.metrics.scalar_values() {
                number.clear();
                if let Some(v) = v {
                    write!(number, "{v}").expect("writing to a String");
                }
                w.write_field(&number)?;
            }
            w.write_record(None::<&[u8]>)?;
        }
        w.flush()
            .with_context(|| format!("writing {}", path.display()))
    }

    fn write_cdf_csv(&self, path: &Path, lines: &[CdfLine]) -> Result<()> {
        let mut w =
            csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
        w.write_record(["configuration", "flow", "latency_ms", "fraction"])?;
        // the numbers formatted into two buffers reused for every row (as `to_string` would)
        let (mut xs, mut fs) = (String::new(), String::new());
        for (config, flow, _, samples) in lines {
            for (x, f) in latency_cdf_runs(samples, CDF_POINTS) {
                xs.clear();
                fs.clear();
                write!(xs, "{x}").expect("writing to a String");
                write!(fs, "{f}").expect("writing to a String");
                w.write_record([config.as_str(), flow.as_str(), &xs, &fs])?;
            }
        }
        w.flush()
            .with_context(|| format!("writing {}", path.display()))
    }

    fn write_plots(&self, dir: &Path, lines: &[CdfLine]) -> Result<()> {
        // Only lines with samples, laid out as small multiples (crate::facets).
        let sources = self.line_sources();
        let with_data: Vec<usize> = (0..lines.len())
            .filter(|&i| !lines[i].3.is_empty())
            .collect();
        let flows = self.configs.first().map_or(0, |_| self.flows_of(0).len());
        let keyed: Vec<(&Config, &str)> = with_data
            .iter()
            .map(|&i| (&self.configs[sources[i].config], sources[i].name.as_str()))
            .collect();
        let facets = crate::facets::facets(&keyed, flows);
        let too_many = facets.panels.len() > MAX_PANELS || facets.legend.len() > MAX_LEGEND;
        if with_data.is_empty() || too_many {
            for file in ["latency_cdf.svg", "latency_ccdf.svg"] {
                let _ = fs::remove_file(dir.join(file));
            }
            if too_many {
                eprintln!(
                    "note: {} of up to {} is more than a plot can show (at most {MAX_PANELS} \
                     panels of {MAX_LEGEND} lines): no SVG plots; the CDFs are in \
                     latency_cdf.csv and report.html",
                    count(facets.panels.len(), "panel"),
                    count(facets.legend.len(), "line"),
                );
            }
            return Ok(());
        }
        let points: Vec<Vec<(f64, f64)>> = with_data
            .iter()
            .map(|&i| latency_cdf_runs(&lines[i].3, CDF_POINTS))
            .collect();
        let panels: Vec<Panel> = facets
            .panels
            .iter()
            .map(|(title, members)| Panel {
                title: title.clone(),
                lines: members
                    .iter()
                    .map(|&(e, l)| (e, points[l].clone()))
                    .collect(),
            })
            .collect();
        let series: Vec<Series> = points
            .iter()
            .map(|p| Series {
                label: String::new(),
                points: p.clone(),
            })
            .collect();
        let plots = [
            (
                "latency_cdf.svg",
                View::Cdf,
                suggest_log_x(&series),
                "application-layer latency, CDF",
            ),
            (
                "latency_ccdf.svg",
                View::Ccdf,
                false,
                "application-layer latency, tail (CCDF)",
            ),
        ];
        for (file, view, log_x, what) in plots {
            let spec = PlotSpec::latency(format!("{}: {what}", self.scenario), view, log_x);
            let svg = faceted_cdf_svg(&panels, &facets.legend, &spec)
                .with_context(|| format!("drawing {file}"))?;
            let path = dir.join(file);
            fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }
}

/// `n` and `noun`, plural unless `n` is 1 ("1 panel", "36 panels").
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod count_tests {
    #[test]
    fn singular_and_plural() {
        assert_eq!(super::count(1, "panel"), "1 panel");
        assert_eq!(super::count(36, "panel"), "36 panels");
        assert_eq!(super::count(0, "line"), "0 lines");
    }
}
