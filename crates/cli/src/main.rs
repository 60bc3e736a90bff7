//! `thinlab`: runs scenarios in the simulator and writes results (docs/spec/interface.md).
//! The commands live in the library ([`thinlab_cli`]); this file parses the command line.

use clap::Parser;
use std::process::ExitCode;
use thinlab_cli::{analyze, args, compare, error, fidelity, memguard, reproduce, run, whatif};

/// Large allocations are checked against the memory limits first ([`memguard`]).
#[global_allocator]
static ALLOC: memguard::Guarded = memguard::Guarded;

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
