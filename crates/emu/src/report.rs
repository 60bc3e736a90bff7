//! What an emulated run returns: per flow the delivery records in the simulator's terms
//! ([`FlowOutcome`]), and what only a real run has ([`RunReport`], written as `emu.json`):
//! the emulator's lateness, SCHED_FIFO, the sysctls and congestion control read back,
//! `TCP_INFO`, the namespaces' TCP counters, drops by cause.

use crate::host_parts::HostParts;
use crate::kernel_app::SocketReport;
use crate::stats::{Lateness, LatenessWindow};
use crate::tcp_info::NetCounters;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;
use thinlab_sim::DropCounts;
use thinlab_trace::FlowRecords;

/// One flow's outcome, in the simulator's terms.
#[derive(Clone, Debug)]
pub struct FlowOutcome {
    pub name: String,
    pub records: FlowRecords,
    /// Active time for goodput (as the simulator defines it).
    pub duration: Duration,
    pub completed: bool,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    /// How the flow ended, and why if not completed.
    pub status: thinlab_trace::status::FlowStatus,
    pub status_reason: Option<String>,
}

/// What an emulated run measured besides the records (`emu.json`).
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub seed: u64,
    /// `uname -r` of the kernel whose TCP ran.
    pub kernel: String,
    /// Delivery lateness of the emulator against the path model.
    pub lateness: Lateness,
    /// The same per minute of run time (drift over a long run).
    pub lateness_by_minute: Vec<LatenessWindow>,
    pub sched_fifo: bool,
    /// Why SCHED_FIFO was not used, if it was not.
    pub sched_fifo_error: Option<String>,
    pub spin_us: u64,
    /// The TCP sysctls of the namespaces, read back after setting them.
    pub sysctls: BTreeMap<String, String>,
    pub flows: Vec<FlowReport>,
    /// TCP counters of each namespace at the end.
    pub client_netstat: Option<NetCounters>,
    pub server_netstat: Option<NetCounters>,
    pub drops: DropCountsJson,
    /// Packets written into a TUN device by the emulator.
    pub packets_delivered: u64,
    /// Packets read that belong to no flow (not forwarded).
    pub packets_ignored: u64,
    /// Inodes of the two namespaces (both gone when the run returns).
    pub netns_inodes: [u64; 2],
    /// Names under /run/netns with thinlab's prefix (left by something else; not touched).
    pub leftovers: Vec<String>,
    pub end_time_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    pub name: String,
    /// The socket that sent the data and the one that received it.
    pub sender: SocketReport,
    pub receiver: SocketReport,
    /// The parts of the writes' latency spent in the two hosts (write call → on the sender's
    /// wire; arrived at the receiver's host → read), which the emulator's lateness does not
    /// see and the simulator has no counterpart for on a lossless path.
    pub host_parts: HostParts,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct DropCountsJson {
    pub loss_forward: u64,
    pub loss_reverse: u64,
    pub queue_forward: u64,
    pub queue_reverse: u64,
    pub queue_access: u64,
}

impl From<DropCounts> for DropCountsJson {
    fn from(d: DropCounts) -> Self {
        DropCountsJson {
            loss_forward: d.loss_forward,
            loss_reverse: d.loss_reverse,
            queue_forward: d.queue_forward,
            queue_reverse: d.queue_reverse,
            queue_access: d.queue_access,
        }
    }
}

/// An emulated run's results.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub flows: Vec<FlowOutcome>,
    pub end_time: Duration,
    pub report: RunReport,
    pub drops: DropCounts,
}
