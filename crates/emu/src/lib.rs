//! thinlab-emu: the real-time backend. The same scenario as the simulator, run over real
//! network namespaces, TUN devices and the running kernel's TCP.
//!
//! ```text
//!  client netns                 this process (root netns)                  server netns
//!  kernel TCP ── tl-c (TUN) ──► emulator thread: thinlab_sim::path::Paths ──► tl-s (TUN) ── kernel TCP
//!  10.200.0.1   ◄────────────── (rate, queue, delay, jitter, loss: the     ◄────────────── 10.200.0.2
//!  app threads                  simulator's models and seeds)                app threads
//! ```
//!
//! - [`netns`]: anonymous namespaces (gone with the process, whatever happens);
//! - [`tun`]: TUN devices and their addresses; [`packet`]: the header fields the emulator reads;
//! - [`emulator`]: the forwarding thread and its timing; [`stats`]: its lateness;
//! - [`kernel_app`]: the applications on kernel sockets (the simulator's traffic sources);
//! - [`records`]: the logs merged into the same delivery records as the simulator's
//!   ([`spill`]: logs spilled to a temporary file as they are written: the emulator's
//!   [`packet_log`] and the applications' writes and reads);
//! - [`support`]: which scenario keys map onto kernel settings; [`tcp_info`]: what the kernel
//!   reports; [`capture`]: pcap files at both ends; [`driver`]: one run, setup to teardown,
//!   returning a [`report`];
//! - [`thinlab_app`]: `tcp.stack = "thinlab"`, thinlab's endpoint over its own TUN device.

pub mod capture;
pub mod driver;
pub mod emulator;
pub mod error;
pub mod host_parts;
pub mod kernel_app;
pub mod netns;
pub mod packet;
pub mod packet_log;
pub mod records;
pub mod report;
pub mod signal;
pub mod spill;
pub mod stats;
pub mod support;
pub mod sys;
pub mod tcp_info;
pub mod thinlab_app;
pub mod tun;

pub use driver::{drain_bound, preflight, run, FlowOutcome, Options, RunOutcome, RunReport};
pub use error::EmuError;
