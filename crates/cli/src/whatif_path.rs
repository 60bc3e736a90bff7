//! The path and the writes of a captured flow, for `thinlab whatif`: what the simulator
//! needs to replay the same application over the same network.
//!
//! - **Writes**: for a fixed-size, fixed-interval source the writes recovered on their grid
//!   ([`thinlab_trace::write_pattern`], so held and merged writes are made when the application
//!   made them); otherwise each segment's new bytes at its first transmission, as trace replay
//!   reads a capture (`app.kind = "trace"`).
//! - **Round trip**: data first sent → cumulatively ACKed, per write; the minimum is the
//!   propagation round trip, and twice the median excess the jitter (uniform `[0, J]` has median
//!   `J/2`). Writes that were retransmitted are in the samples (a capture does not mark them)
//!   but move neither the minimum nor, while fewer than half are lost, the median (the
//!   ambiguity of Karn and Partridge, "Improving Round-Trip Time Estimates in Reliable
//!   Transport Protocols").
//! - **Loss**: with the receiver capture, data segments sent and never captured arriving, and
//!   packets the receiver sent that the sender capture lacks (the ACK direction); the data
//!   direction's burstiness from the sequence of losses (`extras.loss_after_loss`) as a
//!   two-state Gilbert-Elliott chain (Gilbert, "Capacity of a Burst-Noise Channel"; Elliott,
//!   "Estimates of Error Rates for Codes on Burst-Noise Channels"): `r = 1 − P(loss | loss)`,
//!   `p = rate·r / (1 − rate)`, so that its stationary rate is the measured one and
//!   independent losses give Bernoulli. With the sender capture only: retransmissions per data
//!   segment (an upper bound: spurious retransmissions count), independent, and the ACK
//!   direction taken to lose at the same rate.
//! - **Bottleneck rate**: not estimated; 100 Mbit/s, far above a thin stream's rate.

use serde::Serialize;
use thinlab_trace::flows::ConnectionAnalysis;
use thinlab_trace::write_pattern::{self, WritePattern};

/// Bottleneck rate assumed (not visible in a thin stream's capture).
pub const ASSUMED_BANDWIDTH: &str = "100Mbit";

/// The path estimated from a captured flow.
#[derive(Clone, Debug, Serialize)]
pub struct PathEstimate {
    pub rtt_ms: f64,
    pub jitter_ms: f64,
    pub rtt_samples: u64,
    pub forward_loss_rate: f64,
    pub reverse_loss_rate: f64,
    /// Gilbert-Elliott `(p, r)` of the data direction (null: independent losses assumed).
    pub forward_burst: Option<(f64, f64)>,
    /// `"receiver capture"` or `"retransmissions (upper bound)"`.
    pub loss_from: &'static str,
    pub bandwidth: &'static str,
}

/// The writes to replay: `(ns since the first, bytes)`, and the pattern they came from.
pub struct Writes {
    pub writes: Vec<(u64, u64)>,
    pub pattern: Option<WritePattern>,
}

pub fn writes(c: &ConnectionAnalysis) -> Writes {
    let pattern = write_pattern::estimate(&c.records.writes);
    let mut w: Vec<(u64, u64)> = match &pattern {
        Some(p) => write_pattern::writes(p, &c.records.writes),
        None => c
            .records
            .writes
            .iter()
            .filter_map(|w| Some((w.first_send?.as_nanos(), w.end - w.start)))
            .collect(),
    };
    w.sort_by_key(|x| x.0);
    let t0 = w.first().map_or(0, |x| x.0);
    for x in &mut w {
        x.0 -= t0;
    }
    Writes { writes: w, pattern }
}

pub fn path(c: &ConnectionAnalysis) -> Option<PathEstimate> {
    let mut rtts: Vec<f64> = c
        .records
        .writes
        .iter()
        .filter_map(|w| Some((w.acked? - w.first_send?).as_nanos() as f64 / 1e6))
        .collect();
    if rtts.is_empty() {
        return None;
    }
    rtts.sort_unstable_by(f64::total_cmp);
    let min = rtts[0];
    let median = rtts[rtts.len() / 2];
    let e = &c.extras;
    let (loss, from) = match e.loss_rate {
        Some(l) => (l, "receiver capture"),
        None => (
            e.estimated_loss_rate.unwrap_or(0.0),
            "retransmissions (upper bound)",
        ),
    };
    let burst = e
        .loss_after_loss
        .filter(|_| loss > 0.0 && loss < 1.0)
        .map(|after| {
            let r = (1.0 - after).clamp(1e-6, 1.0);
            ((loss * r / (1.0 - loss)).min(1.0), r)
        });
    Some(PathEstimate {
        rtt_ms: min,
        jitter_ms: 2.0 * (median - min),
        rtt_samples: rtts.len() as u64,
        forward_loss_rate: loss,
        reverse_loss_rate: e.reverse_loss_rate.unwrap_or(loss),
        forward_burst: burst,
        loss_from: from,
        bandwidth: ASSUMED_BANDWIDTH,
    })
}
