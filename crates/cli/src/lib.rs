//! The `thinlab` command as a library: the binary (`main.rs`) parses the command line and calls
//! into these modules; the Python package (`python/`) calls the same functions, so both give
//! the same results (docs/spec/interface.md).
//!
//! Modules: [`args`] (command line), [`analyze`] (the `analyze` command), [`paths`] (dotted-path
//! `--set` overrides), [`sweep`] (`[sweep]` expansion), [`run`] (the `run` command), [`reproduce`]
//! (the `reproduce` command: the published studies of docs/references.md), [`runner`] (parallel
//! runs; [`in_order`] spreads a single run's output work over threads), [`progress`] (progress
//! bar), [`output`] (result files), [`table`] (stdout summary), [`error`] (exit codes: 2 for bad
//! input, 1 otherwise).

// The modules' docs are a developer's map of the command; they link private items freely.
#![allow(rustdoc::private_intra_doc_links)]

pub mod analyze;
pub mod args;
pub mod capture_flows;
pub mod compare;
pub mod emu_backend;
pub mod error;
pub mod estimate;
pub mod facets;
pub mod fidelity;
pub mod folder;
pub mod health;
pub mod in_order;
pub mod interned;
pub mod interrupt;
pub mod memguard;
pub mod output;
pub mod parquet_out;
pub mod paths;
pub mod progress;
pub mod ray_bridge;
pub mod report_html;
pub mod reproduce;
pub mod resources;
pub mod run;
pub mod runner;
pub mod sweep;
pub mod table;
pub mod tables;
pub mod whatif;
pub mod whatif_path;
pub mod write_rows;
pub mod write_spill;

use thinlab_sim as sim;
