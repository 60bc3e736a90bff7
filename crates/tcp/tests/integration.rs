//! The crate's integration tests as one test binary (Cargo.toml: `autotests = false` and one
//! `[[test]]`): each file of `tests/` is a module here, so the dependencies are linked into one
//! executable instead of one per file. A new test file needs its `mod` line below; run one
//! file's tests with `cargo test -p thinlab-tcp --test integration FILE::`.

mod close;
mod common;
mod data;
mod fine_grained_rto;
mod fuzz_script;
mod handshake;
mod linux2622_physics;
mod linux_behaviour;
mod pair;
mod quiet_ack;
mod rack_tlp;
mod rdb;
mod recovery;
mod robustness;
mod thin;
