//! How a flow ended (docs/scenarios.md, "Run health"): whether every write was delivered, and
//! if not, why not.

use serde::{Deserialize, Serialize};

/// The outcome of one flow. `Completed` exactly when every write the application made was
/// delivered to the receiving application; every other value means some write was not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowStatus {
    /// Every write was delivered.
    #[default]
    Completed,
    /// The connection never opened (the handshake failed): nothing was written.
    NeverEstablished,
    /// The connection died (retransmission timeouts, reset) with writes undelivered.
    Aborted,
    /// The run's drain bound ended it with writes still undelivered.
    DrainBoundHit,
    /// `thinlab analyze`: the capture ended with writes not yet delivered (or acknowledged).
    CaptureEnded,
}

impl FlowStatus {
    /// The name used in `summary.json` and `runs.csv`.
    pub fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Completed => "completed",
            FlowStatus::NeverEstablished => "never_established",
            FlowStatus::Aborted => "aborted",
            FlowStatus::DrainBoundHit => "drain_bound_hit",
            FlowStatus::CaptureEnded => "capture_ended",
        }
    }

    /// In words, for messages: "never established", "stopped by the drain bound", ….
    pub fn describe(self) -> &'static str {
        match self {
            FlowStatus::Completed => "completed",
            FlowStatus::NeverEstablished => "never established",
            FlowStatus::Aborted => "aborted",
            FlowStatus::DrainBoundHit => "stopped by the drain bound",
            FlowStatus::CaptureEnded => "cut off by the end of the capture",
        }
    }

    pub fn is_completed(self) -> bool {
        self == FlowStatus::Completed
    }
}

impl std::fmt::Display for FlowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
