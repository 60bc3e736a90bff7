//! thinlab-tcp: a sans-IO TCP endpoint (RFC 9293) carrying the latency mechanisms for interactive
//! thin streams studied in the thin-stream literature (docs/references.md) (RDB, linear timeouts,
//! thin dupACK, Early Retransmit) and the modern ones (TLP, RACK).
//!
//! No clock, no I/O, no global randomness: time is an [`Instant`] passed into every call.
//! Inputs: [`Endpoint::handle_segment`], [`Endpoint::handle_timeout`], [`Endpoint::write`],
//! [`Endpoint::read`]. Outputs: [`Endpoint::poll_transmit`], [`Endpoint::poll_timeout`],
//! [`Endpoint::poll_event`].
//!
//! Inside, sequence numbers are unwrapped `u64` stream offsets (offset 0 = first data byte);
//! 32-bit wrapping sequence numbers exist only at the wire ([`seq`], [`wire`]).

pub mod cc;
pub mod config;
pub mod cwnd_validation;
pub mod endpoint;
pub mod event;
pub mod event_log;
#[doc(hidden)]
pub mod fuzzing;
pub mod islost_index;
pub mod prefetch;
pub mod recovery;
pub mod registry;
pub mod rtt;
pub mod runs;
pub mod send_queue;
pub mod seq;
pub mod state;
pub mod stats;
pub mod thin;
pub mod time;
pub mod timer_wheel;
pub mod timers;
pub mod wire;

pub use config::{
    CcAlgorithm, CwndReduction, DelayedAckModel, LinearTimeouts, Mechanisms, Profile, RdbVariant,
    ReductionBase, RtoModel, TcpConfig, ThinDetection,
};
pub use endpoint::{Endpoint, EndpointError, State};
pub use event::{Event, RecoveryEvent, SendKind};
pub use registry::Mechanism;
pub use stats::Stats;
pub use std::time::Duration;
pub use time::Instant;
pub use wire::{Flags, Segment, TcpOptions};
