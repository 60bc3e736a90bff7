//! The crate's integration tests as one test binary (Cargo.toml: `autotests = false` and one
//! `[[test]]`): each file of `tests/` is a module here, so the dependencies are linked into one
//! executable instead of one per file. A new test file needs its `mod` line below; run one
//! file's tests with `cargo test -p thinlab-trace --test integration FILE::`.

mod directions;
mod pcap_reader;
mod retransmission_heuristic;
