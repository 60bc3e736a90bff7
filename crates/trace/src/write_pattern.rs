//! What a capture cannot see: the application's write calls. A capture shows when bytes
//! first left, so latency is measured from the first transmission; writes that waited in the
//! send buffer (held by the congestion window, or behind a retransmission) or were merged into
//! one segment with later writes are invisible, and latency from the write is higher.
//!
//! For a **fixed-size, fixed-interval source** (the thin streams of Griwodz and Halvorsen, "The
//! Fun of using TCP for an MMORPG": game and VoIP traffic) the writes can be recovered: the
//! segments' new bytes are whole multiples of the write size `S`, and the `j`-th write of the
//! stream was made at `t0 + j·T`. `T` is the span of the stream over the number of writes
//! (checked against the median gap of single-write segments), `t0` the earliest
//! `first_send(j) − j·T` (the write that left at once). Each write's hold is then
//! `first_send(j) − (t0 + j·T)`; their mean is what first-send latency misses on the mean.
//! The estimate assumes the source never paused; a stream that does not fit (sizes not
//! multiples of one size, gaps not regular) gets no estimate.

use crate::records::WriteRecord;
use serde::Serialize;

/// Share of segments that must carry exactly the modal size, and of single-write gaps that
/// must lie within [`GAP_TOLERANCE`] of the median gap, for a fixed-size fixed-interval source.
pub const MIN_SHARE: f64 = 0.5;
pub const GAP_TOLERANCE: f64 = 0.1;
/// A write held longer than this share of the interval counts as held.
pub const HELD_SHARE_OF_INTERVAL: f64 = 0.05;

/// The writes recovered from a fixed-size, fixed-interval stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WritePattern {
    pub write_bytes: u64,
    pub interval_ms: f64,
    /// Writes the source made (bytes / write size).
    pub writes: u64,
    /// Writes that left in a segment together with an earlier write (not first in it).
    pub merged_writes: u64,
    /// Writes that first left more than 5 % of the interval after they were made.
    pub held_writes: u64,
    /// Mean and largest time from write to first transmission, ms: what latency from first
    /// send misses.
    pub mean_hold_ms: f64,
    pub max_hold_ms: f64,
}

/// Segments `(first transmission ns, new bytes)` in order.
fn segments(writes: &[WriteRecord]) -> Vec<(u64, u64)> {
    writes
        .iter()
        .filter_map(|w| Some((w.first_send?.as_nanos(), w.end - w.start)))
        .collect()
}

/// The pattern of `writes` (one per segment's new bytes, as a capture gives them), if they
/// come from a fixed-size, fixed-interval source.
pub fn estimate(writes: &[WriteRecord]) -> Option<WritePattern> {
    let seg = segments(writes);
    if seg.len() < 10 {
        return None;
    }
    let mut sizes: Vec<u64> = seg.iter().map(|s| s.1).collect();
    sizes.sort_unstable();
    let (mut best, mut best_n, mut i) = (0, 0, 0);
    while i < sizes.len() {
        let j = sizes[i..].partition_point(|&x| x == sizes[i]) + i;
        if j - i > best_n {
            (best, best_n) = (sizes[i], j - i);
        }
        i = j;
    }
    let s = best;
    if s == 0 || (best_n as f64) < MIN_SHARE * seg.len() as f64 || seg.iter().any(|x| x.1 % s != 0)
    {
        return None;
    }
    let n: u64 = seg.iter().map(|x| x.1 / s).sum();
    let span = seg.last()?.0 - seg[0].0;
    // The first write of the first segment and the last of the last span n − 1 intervals
    // (plus the holds at both ends, small against a long stream).
    let t = span as f64 / (n - 1) as f64;
    let mut gaps: Vec<f64> = seg
        .windows(2)
        .filter(|w| w[0].1 == s && w[1].1 == s)
        .map(|w| (w[1].0 - w[0].0) as f64)
        .collect();
    if gaps.len() < 5 {
        return None;
    }
    gaps.sort_unstable_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    let near = gaps
        .iter()
        .filter(|&&g| (g - median).abs() <= GAP_TOLERANCE * median)
        .count();
    if (near as f64) < MIN_SHARE * gaps.len() as f64 || (t - median).abs() > GAP_TOLERANCE * median
    {
        return None;
    }
    // Write j's first transmission, and its hold against the grid.
    let mut sends = Vec::with_capacity(n as usize);
    let mut merged = 0;
    for &(at, bytes) in &seg {
        for k in 0..bytes / s {
            sends.push(at as f64);
            merged += u64::from(k > 0);
        }
    }
    let t0 = sends
        .iter()
        .enumerate()
        .map(|(j, &at)| at - j as f64 * t)
        .fold(f64::INFINITY, f64::min);
    let holds: Vec<f64> = sends
        .iter()
        .enumerate()
        .map(|(j, &at)| (at - (t0 + j as f64 * t)) / 1e6)
        .collect();
    let held = holds
        .iter()
        .filter(|&&h| h > HELD_SHARE_OF_INTERVAL * t / 1e6)
        .count() as u64;
    Some(WritePattern {
        write_bytes: s,
        interval_ms: t / 1e6,
        writes: n,
        merged_writes: merged,
        held_writes: held,
        mean_hold_ms: holds.iter().sum::<f64>() / n as f64,
        max_hold_ms: holds.iter().copied().fold(0.0, f64::max),
    })
}

/// The write times recovered (ns, on the capture's clock) and sizes: `t0 + j·T`, `S` each.
pub fn writes(p: &WritePattern, writes: &[WriteRecord]) -> Vec<(u64, u64)> {
    let seg = segments(writes);
    let t = p.interval_ms * 1e6;
    let mut sends = Vec::new();
    for &(at, bytes) in &seg {
        for _ in 0..bytes / p.write_bytes {
            sends.push(at as f64);
        }
    }
    let t0 = sends
        .iter()
        .enumerate()
        .map(|(j, &at)| at - j as f64 * t)
        .fold(f64::INFINITY, f64::min);
    (0..sends.len())
        .map(|j| ((t0 + j as f64 * t).max(0.0) as u64, p.write_bytes))
        .collect()
}
