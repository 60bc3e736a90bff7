//! Command-line arguments (docs/spec/interface.md, "Command line").
//!
//! The doc comments below are clap's `--help` text, printed verbatim in a terminal, so they
//! write `<placeholders>` and `[default: …]` as a user reads them, not as rustdoc markup.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// thinlab: a laboratory for the latency of TCP on interactive thin streams.
#[derive(Debug, Parser)]
#[command(name = "thinlab", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario (all sweep configurations × repetitions) in the simulator.
    Run(RunArgs),
    /// Analyse real captures: a sender-side pcap/pcapng and optionally a receiver-side one.
    Analyze(AnalyzeArgs),
    /// What would a captured stream's latency have been with each mechanism? Replays its
    /// writes over the path estimated from the capture with plain TCP, LT, mFR, ER, RDB,
    /// RDB+LT+mFR, TLP+RACK and the `linux` profile (docs/whatif.md).
    Whatif(WhatifArgs),
    /// Reproduce a published study (docs/references.md) and write a report beside the papers'
    /// numbers: evensen-lab, evensen-apps, hurtig, yin, fairness, petlund-demo,
    /// petlund-variants, modern-linux, or all.
    Reproduce(ReproduceArgs),
    /// Run a scenario in the simulator and over the emulator with the running kernel's TCP
    /// (root), and compare them statistic by statistic (the `linux` profile's fidelity).
    Fidelity(FidelityArgs),
    /// Compare result folders (of `run`, `analyze`'s CDF, the emulator, before vs after):
    /// side-by-side latency tails with relative differences, and `compare.html` with the
    /// overlaid CDFs and CCDFs.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more result folders (each with a `latency_cdf.csv`); the first is the reference.
    #[arg(num_args = 2.., required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where to write the HTML comparison.
    #[arg(long, value_name = "FILE", default_value = "compare.html")]
    pub html: PathBuf,
    /// No table on stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct FidelityArgs {
    /// The scenario file (TOML); its flows should use `tcp.profile = "linux"`.
    pub scenario: PathBuf,
    /// Repetitions per configuration on each side [default: the scenario's].
    #[arg(long, value_name = "N")]
    pub repetitions: Option<u32>,
    /// Override a scenario key on both sides (as for `run`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Output directory [default: results/fidelity-<scenario file name>/]; the two sides go to
    /// `DIR/sim` and `DIR/kernel`, the comparison to `DIR/fidelity.md` and `fidelity.json`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into folders that hold other results.
    #[arg(long)]
    pub force: bool,
    /// Do not run: compare the `DIR/sim` and `DIR/kernel` results already there again.
    #[arg(long)]
    pub compare_only: bool,
    /// No progress bars and no table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// The study: evensen-lab, evensen-apps, hurtig, yin, fairness, petlund-demo,
    /// petlund-variants, modern-linux, or all.
    pub name: String,
    /// Output directory [default: results/reproduce/<study>/; with `all`, one subdirectory
    /// per study].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Shorter runs and fewer points: minutes instead of the full study; the qualitative
    /// checks still hold.
    #[arg(long)]
    pub quick: bool,
    /// Runs in parallel [default: available cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// No progress bars and no verdict table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Capture taken at the data sender (pcap or pcapng).
    pub sender: PathBuf,
    /// Capture taken at the receiver: adds transport- and application-layer latency.
    #[arg(long, value_name = "RECEIVER.pcap")]
    pub receiver: Option<PathBuf>,
    /// Output directory [default: results/analyze-<sender file name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Analyse only this connection: `ADDR:PORT-ADDR:PORT` (either order; IPv6 in brackets).
    #[arg(long, value_name = "ADDR:PORT-ADDR:PORT")]
    pub connection: Option<String>,
    /// The receiver capture's clock minus the sender capture's, ms (e.g. -20), instead of the
    /// offset estimated from the captures (minimum one-way delays each way).
    #[arg(
        long,
        value_name = "MS",
        allow_hyphen_values = true,
        requires = "receiver"
    )]
    pub clock_offset: Option<f64>,
    /// No summary table on stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct WhatifArgs {
    /// Capture taken at the data sender (pcap or pcapng).
    pub capture: PathBuf,
    /// Capture taken at the receiver: application-layer latency and the loss rate.
    #[arg(long, value_name = "RECEIVER.pcap")]
    pub receiver: Option<PathBuf>,
    /// Output directory [default: results/whatif-<capture file name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The flow to replay: `SENDER:PORT-RECEIVER:PORT` [default: the one that sent most].
    #[arg(long, value_name = "ADDR:PORT-ADDR:PORT")]
    pub connection: Option<String>,
    /// Repetitions (seeds) per mechanism set.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub repetitions: u32,
    /// The receiver capture's clock minus the sender capture's, ms (as for `analyze`).
    #[arg(
        long,
        value_name = "MS",
        allow_hyphen_values = true,
        requires = "receiver"
    )]
    pub clock_offset: Option<f64>,
    /// Each set's repetitions run in parallel on N threads [default: available cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// No table on stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Output directory [default: results/<scenario name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override a scenario key by its dotted path, e.g. `network.loss.rate=0.02`,
    /// `flow.0.tcp.mechanisms=[rdb,linear-timeouts]`. Values are TOML; bare words are strings.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Runs in parallel [default: available cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// No progress bar and no summary table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Write pcap files of every flow at its sender and receiver into
    /// `DIR/pcap/<configuration>-rep<r>/` (flows with `capture = true` are captured anyway).
    #[arg(long)]
    pub capture: bool,
    /// Exit with code 3 when some flow did not complete (never established, aborted, or
    /// stopped by the drain bound with data undelivered); the results are written anyway.
    #[arg(long)]
    pub strict: bool,
    /// Run even when the resource estimate says the runs will not fit in memory, and write
    /// into a non-empty folder that holds other results.
    #[arg(long)]
    pub force: bool,
    /// `sim` (virtual time, thinlab's TCP) or `emu` (real time over network namespaces and
    /// the kernel's TCP; needs root) [default: the scenario's `backend`, else sim].
    #[arg(long, value_name = "sim|emu")]
    pub backend: Option<String>,
    /// `parquet` also writes `runs.parquet` (typed columns) and `writes.parquet` (every
    /// write's milestones; the simulator keeps them, so memory grows with the writes).
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    pub format: Format,
    /// Run the sweep's runs as tasks on a Ray cluster (`auto`: the one `ray start` made on this
    /// machine, or one started for the command; else its address, e.g. `10.0.0.5:6379`). Needs
    /// the Python package with Ray: `pip install ./python[ray]`.
    #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "auto")]
    pub ray: Option<String>,
}

/// Result file formats of `thinlab run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `summary.json`, `runs.csv`, `latency_cdf.csv`, plots, `report.html`.
    Csv,
    /// All of those, plus `runs.parquet` and `writes.parquet`.
    Parquet,
}
