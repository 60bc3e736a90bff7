//! The crate's integration tests as one test binary (Cargo.toml: `autotests = false` and one
//! `[[test]]`): each file of `tests/` is a module here, so the dependencies are linked into one
//! executable instead of one per file. A new test file needs its `mod` line below; run one
//! file's tests with `cargo test -p thinlab-sim --test integration FILE::`.

mod app_http;
mod app_profile;
mod capture;
mod cc;
mod common;
mod compact_records;
mod health;
mod mechanisms;
mod newreno_bulk;
mod properties;
mod rack_tlp;
mod rdb;
mod rdb_adaptive;
mod rdb_repaired;
mod run;
mod scenario;
mod storm;
mod trace_replay;
mod worst_window;
