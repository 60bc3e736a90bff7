//! thinlab-sim: a deterministic discrete-event simulator driving thinlab-tcp endpoints.
//!
//! Virtual time in ns; an event queue ordered by (time, insertion counter); one bottleneck
//! link per direction shared by all flows (rate, propagation delay, drop-tail queue in packets
//! or bytes, jitter that never reorders); optional per-flow access links; the loss models
//! none, bernoulli, gilbert-elliott and positions; traffic sources fixed, exponential, cbr,
//! bulk, transfer, trace, profile and http. Each random stream is seeded from (run seed,
//! component), so the same seed gives the same [`RunResult`] and adding a flow does not change
//! another flow's losses.
//!
//! ```no_run
//! let s = thinlab_sim::Scenario::from_toml_str(r#"
//!     name = "x"
//!     duration = "10s"
//!     [network]
//!     rtt = "100ms"
//!     bandwidth = "10Mbit"
//!     [[flow]]
//!     app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
//! "#).unwrap();
//! let r = thinlab_sim::run(&s, s.seed);
//! println!("{} writes", r.flows[0].records.write_count());
//! ```

pub mod app;
pub mod app_http;
pub mod app_profiles;
pub mod error;
pub mod event;
pub mod flow_group;
pub mod link;
pub mod loss;
pub mod path;
pub mod pcap_out;
pub mod result;
pub mod rng;
pub mod scenario;
pub mod schema;
mod sim;
pub mod tcp_config;
pub mod trace_source;
pub mod units;

pub use error::ScenarioError;
pub use pcap_out::CaptureOptions;
pub use result::{DropCounts, FlowResult, LinkReport, RunResult};
pub use scenario::{App, Direction, Flow, LossModel, Network, QueueLimit, Scenario};
pub use sim::{
    drain_bound, run, run_captured, run_captured_keeping, run_keeping, run_keeping_writes,
    run_observed, run_traced, Keep, TraceFilter, TracedWindow, WorstWindow,
};
