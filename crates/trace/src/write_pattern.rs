//! What a capture cannot see: the application's write calls. A capture shows when bytes
//! first left, so latency is measured from the first transmission; writes that waited in the
//! send buffer (held by the congestion window, or behind a retransmission) or were merged into
//! one segment with later writes are invisible, and latency from the write is higher.
//!
//! For a **fixed-size, fixed-interval source** (the thin streams of Griwodz and Halvorsen, "The
//! Fun of using TCP for an MMORPG": game and VoIP traffic) the writes can be recovered: the
//! common segment sizes below the largest (which is the MSS when writes coalesce) are whole
//! multiples of the write size `S` (their greatest common divisor), write `j` is bytes
//! `[j·S, (j+1)·S)` of the stream and first left with the segment carrying byte `j·S`, and it
//! was made at `t0 + j·T`. No write leaves before it is made, so the grid is a line under every
//! point `(j, first_send(j))`: the edge of their lower convex hull spanning the most writes
//! (its ends are writes that left at once), checked against the median gap of consecutive
//! single-write segments where there are enough. Each write's hold is then
//! `first_send(j) − (t0 + j·T)`; their mean is what first-send latency misses on the mean.
//! The estimate assumes the source never paused; a stream that does not fit (sizes not
//! multiples of one size, gaps not regular) gets no estimate.

use crate::records::WriteRecord;
use serde::Serialize;

/// Share of single-write gaps that must lie within [`GAP_TOLERANCE`] of the median gap, for a
/// fixed-interval source.
pub const MIN_SHARE: f64 = 0.5;
/// A segment size is "common" when this share of the segments has it.
pub const COMMON_SHARE: f64 = 0.05;
/// Smallest write size taken for a source's (a smaller common divisor is a coincidence).
pub const MIN_WRITE_BYTES: u64 = 8;
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

/// Segments `(stream start, first transmission ns, new bytes)` in stream order.
fn segments(writes: &[WriteRecord]) -> Vec<(u64, u64, u64)> {
    writes
        .iter()
        .filter_map(|w| Some((w.start, w.first_send?.as_nanos(), w.end - w.start)))
        .collect()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The write size: the greatest common divisor of the common segment sizes below the largest,
/// if most segments below the largest are multiples of it.
fn write_size(seg: &[(u64, u64, u64)]) -> Option<u64> {
    let largest = seg.iter().map(|x| x.2).max()?;
    let mut sizes: Vec<u64> = seg.iter().map(|x| x.2).filter(|&b| b < largest).collect();
    if sizes.is_empty() {
        sizes = seg.iter().map(|x| x.2).collect(); // every segment the same size
    }
    sizes.sort_unstable();
    let mut g = 0;
    let mut i = 0;
    while i < sizes.len() {
        let j = sizes[i..].partition_point(|&x| x == sizes[i]) + i;
        if (j - i) as f64 >= COMMON_SHARE * seg.len() as f64 {
            g = gcd(g, sizes[i]);
        }
        i = j;
    }
    let multiples = sizes.iter().filter(|&&b| g > 0 && b % g == 0).count();
    (g >= MIN_WRITE_BYTES && multiples as f64 >= MIN_SHARE * sizes.len() as f64).then_some(g)
}

/// Each write's first transmission (ns) and whether it shares its segment with an earlier
/// write: write `j` is bytes `[j·S, (j+1)·S)`.
fn write_sends(seg: &[(u64, u64, u64)], s: u64) -> Vec<(f64, bool)> {
    let first = seg[0].0;
    let end = seg.last().map_or(first, |x| x.0 + x.2);
    let n = (end - first) / s;
    let mut out = Vec::with_capacity(n as usize);
    let mut k = 0;
    for j in 0..n {
        let o = first + j * s;
        while k + 1 < seg.len() && seg[k].0 + seg[k].2 <= o {
            k += 1;
        }
        out.push((seg[k].1 as f64, seg[k].0 != o && seg[k].0 < o));
    }
    out
}

/// The pattern of `writes` (one per segment's new bytes, as a capture gives them), if they
/// come from a fixed-size, fixed-interval source.
pub fn estimate(writes: &[WriteRecord]) -> Option<WritePattern> {
    let seg = segments(writes);
    if seg.len() < 10 {
        return None;
    }
    let s = write_size(&seg)?;
    let sends = write_sends(&seg, s);
    let n = sends.len();
    if n < 10 {
        return None;
    }
    let (t0, t) = grid(&sends)?;
    let mut gaps: Vec<f64> = seg
        .windows(2)
        .filter(|w| w[0].2 == s && w[1].2 == s)
        .map(|w| w[1].1 as f64 - w[0].1 as f64)
        .collect();
    if gaps.len() >= 5 {
        gaps.sort_unstable_by(f64::total_cmp);
        let median = gaps[gaps.len() / 2];
        let near = gaps
            .iter()
            .filter(|&&g| (g - median).abs() <= GAP_TOLERANCE * median)
            .count();
        if (near as f64) < MIN_SHARE * gaps.len() as f64
            || (t - median).abs() > GAP_TOLERANCE * median
        {
            return None;
        }
    }
    // Each write's hold against the grid, folded (no per-write vector).
    let (mut sum, mut max, mut held) = (0.0, 0.0f64, 0u64);
    for (j, &(at, _)) in sends.iter().enumerate() {
        let h = (at - (t0 + j as f64 * t)) / 1e6;
        sum += h;
        max = max.max(h);
        held += u64::from(h > HELD_SHARE_OF_INTERVAL * t / 1e6);
    }
    Some(WritePattern {
        write_bytes: s,
        interval_ms: t / 1e6,
        writes: n as u64,
        merged_writes: sends.iter().filter(|x| x.1).count() as u64,
        held_writes: held,
        mean_hold_ms: sum / n as f64,
        max_hold_ms: max,
    })
}

/// `(t0, T)`: the edge of the lower convex hull of `(j, send(j))` spanning the most writes.
fn grid(sends: &[(f64, bool)]) -> Option<(f64, f64)> {
    let mut hull: Vec<(f64, f64)> = Vec::new();
    for (j, &(y, _)) in sends.iter().enumerate() {
        let p = (j as f64, y);
        while hull.len() >= 2 {
            let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            // Drop b unless a → b → p turns left (b stays below the chord a–p).
            if (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0) <= 0.0 {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(p);
    }
    let (a, b) = hull
        .windows(2)
        .map(|w| (w[0], w[1]))
        .max_by(|x, y| (x.1 .0 - x.0 .0).total_cmp(&(y.1 .0 - y.0 .0)))?;
    let t = (b.1 - a.1) / (b.0 - a.0);
    (t > 0.0).then_some((a.1 - a.0 * t, t))
}

/// The writes recovered: (time ns on the capture's clock, bytes), `t0 + j·T` and `S` each.
pub fn writes(p: &WritePattern, writes: &[WriteRecord]) -> Vec<(u64, u64)> {
    let seg = segments(writes);
    if seg.is_empty() {
        return Vec::new();
    }
    let sends = write_sends(&seg, p.write_bytes);
    let Some((t0, t)) = grid(&sends) else {
        return Vec::new();
    };
    (0..sends.len())
        .map(|j| ((t0 + j as f64 * t).max(0.0) as u64, p.write_bytes))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use thinlab_tcp::Instant;

    fn rec(start: u64, end: u64, sent_ms: f64) -> WriteRecord {
        WriteRecord {
            write_time: Instant::from_nanos(0),
            start,
            end,
            first_send: Some(Instant::from_nanos((sent_ms * 1e6) as u64)),
            transport: None,
            app: None,
            acked: None,
        }
    }

    #[test]
    fn equal_segments_every_140ms_with_some_held_and_merged() {
        // 100 writes of 120 bytes every 140 ms from t = 1 s; writes 10 and 11 left together
        // at write 11's time + 30 ms (held 170 and 30 ms).
        let mut w = Vec::new();
        let mut j = 0u64;
        while j < 100 {
            let t = 1000.0 + 140.0 * j as f64;
            if j == 10 {
                w.push(rec(j * 120, (j + 2) * 120, t + 140.0 + 30.0));
                j += 2;
            } else {
                w.push(rec(j * 120, (j + 1) * 120, t));
                j += 1;
            }
        }
        let p = estimate(&w).expect("a fixed-interval source");
        assert_eq!((p.write_bytes, p.writes, p.merged_writes), (120, 100, 1));
        assert!((p.interval_ms - 140.0).abs() < 1e-6, "{}", p.interval_ms);
        assert_eq!(p.held_writes, 2);
        assert!((p.mean_hold_ms - 2.0).abs() < 1e-6, "{}", p.mean_hold_ms);
        assert!((p.max_hold_ms - 170.0).abs() < 1e-6);
        let ws = writes(&p, &w);
        assert_eq!(ws.len(), 100);
        assert_eq!(ws[11].0, (1000.0e6 + 140.0e6 * 11.0) as u64);
    }

    #[test]
    fn irregular_sizes_give_no_pattern() {
        let w: Vec<WriteRecord> = (0..50u64)
            .map(|i| rec(i * 1000, i * 1000 + 137 + (i * 7919) % 500, i as f64 * 10.0))
            .collect();
        assert_eq!(estimate(&w), None);
    }
}
