//! `thinlab`: runs scenarios in the simulator and writes results (docs/spec/interface.md).
//!
//! Modules: [`args`] (command line), [`analyze`] (the `analyze` command), [`paths`] (dotted-path
//! `--set` overrides), [`sweep`] (`[sweep]` expansion), [`run`] (the `run` command), [`reproduce`]
//! (the `reproduce` command: the published studies of docs/references.md), [`runner`] (parallel
//! runs), [`progress`] (progress bar), [`output`] (result files), [`table`] (stdout summary),
//! [`error`] (exit codes: 2 for bad input, 1 otherwise).

mod analyze;
mod args;
mod capture_flows;
mod compare;
mod emu_backend;
mod error;
mod estimate;
mod fidelity;
mod folder;
mod health;
mod interrupt;
mod memguard;
mod output;
mod paths;
mod progress;
mod report_html;
mod reproduce;
mod resources;
mod run;
mod runner;
mod sweep;
mod table;
mod whatif;
mod whatif_path;

use thinlab_sim as sim;

use clap::Parser;

/// Large allocations are checked against the memory limits first ([`memguard`]).
#[global_allocator]
static ALLOC: memguard::Guarded = memguard::Guarded;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    memguard::start();
    let result = match cli.command {
        args::Command::Run(a) => run::run(a),
        args::Command::Analyze(a) => analyze::analyze(a),
        args::Command::Whatif(a) => whatif::whatif(a),
        args::Command::Reproduce(a) => reproduce::reproduce(a),
        args::Command::Fidelity(a) => fidelity::fidelity(a),
        args::Command::Compare(a) => compare::compare(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(error::exit_code(&e) as u8)
        }
    }
}
