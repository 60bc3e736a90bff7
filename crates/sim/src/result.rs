//! What a run produces: per-flow delivery records (thinlab-trace) and endpoint counters, plus
//! the network's drop counts and run bookkeeping.

use crate::link::LinkStats;
use crate::sim::TracedWindow;
use std::time::Duration;
use thinlab_tcp::{Instant, Stats};
use thinlab_trace::series::WorstWrite;
use thinlab_trace::{FlowRecords, FlowStatus};

/// The outcome of one run of a scenario with one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub flows: Vec<FlowResult>,
    /// Simulated time at which the run stopped.
    pub end_time: Instant,
    /// Events popped from the event queue (including stale timer events).
    pub events_processed: u64,
    /// The run stopped at the drain bound with some flow still unfinished.
    pub drain_bound_hit: bool,
    pub drops: DropCounts,
    /// Every link: `forward`, `reverse` (the bottleneck), then `flow<i>.access-up` /
    /// `flow<i>.access-down` for flows with an access link.
    pub links: Vec<LinkReport>,
}

/// Packets dropped in the network, by cause and place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Lost by the loss model entering the bottleneck, client → server.
    pub loss_forward: u64,
    /// Lost by the loss model entering the bottleneck, server → client.
    pub loss_reverse: u64,
    /// Drop-tail overflow of the forward bottleneck queue.
    pub queue_forward: u64,
    /// Drop-tail overflow of the reverse bottleneck queue.
    pub queue_reverse: u64,
    /// Drop-tail overflow of any per-flow access link queue.
    pub queue_access: u64,
}

impl DropCounts {
    pub fn total(&self) -> u64 {
        self.loss_forward
            + self.loss_reverse
            + self.queue_forward
            + self.queue_reverse
            + self.queue_access
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkReport {
    pub name: String,
    pub stats: LinkStats,
}

/// One flow (one TCP connection) of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    pub name: String,
    pub records: FlowRecords,
    /// Active time for goodput: from the flow's start (its connect) until its last byte was
    /// delivered to the receiving application (the end of the run if nothing was).
    pub duration: Duration,
    /// Counters of the data sender's endpoint (client for forward flows, server for reverse).
    pub sender_stats: Stats,
    pub receiver_stats: Stats,
    /// This flow's packets lost by the loss model (both directions).
    pub dropped_loss: u64,
    /// This flow's packets dropped by a full queue (both directions, any link).
    pub dropped_queue: u64,
    /// Every written byte was delivered and acknowledged (and a finite flow's FIN acknowledged).
    pub completed: bool,
    /// How the flow ended: `completed` exactly when every write was delivered.
    pub status: FlowStatus,
    /// Why it did not complete; `None` when completed.
    pub status_reason: Option<String>,
    /// What the flow did around its worst write, when the run was asked to trace it
    /// (`run_keeping`) and could within its memory bound.
    pub worst_window: Option<Box<(WorstWrite, TracedWindow)>>,
}
