//! The crate's integration tests as one test binary (Cargo.toml: `autotests = false` and one
//! `[[test]]`): each file of `tests/` is a module here, so the dependencies are linked into one
//! executable instead of one per file. A new test file needs its `mod` line below; run one
//! file's tests with `cargo test -p thinlab --test integration FILE::`. `emu.rs` and
//! `fidelity.rs` are binaries of their own (Cargo.toml): their real-time runs must not share
//! the machine with the other tests.

mod analyze;
mod analyze_capture;
mod bad_input;
mod cli;
mod common;
mod formats_and_ray;
mod identical_results;
mod real_captures;
mod report_html;
mod reproduce;
mod result_folder;
mod test_files_declared;
mod write_spill;
