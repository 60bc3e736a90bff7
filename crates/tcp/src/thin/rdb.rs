//! Redundant Data Bundling (docs/spec/mechanisms.md, RDB). Knobs: `Mechanisms::rdb`
//! (`tcp.mechanisms`
//! contains `"rdb"`), `TcpConfig::rdb_variant` (`"seed"` | `"patch"`), `rdb_max_bytes` (0 = the MSS
//! is the only limit), `rdb_max_packets` (patch only, default 1).
//!
//! * `Seed` — Evensen (2008) ch. 3 (`tcp_trans_merge_prev`, `tcp_retrans_merge_redundant`): a new
//!   segment smaller than the MSS (no SYN/FIN) carries the still-unacknowledged earlier segments
//!   that fit, as one contiguous range starting at the earliest bundled byte (cumulative: every
//!   packet repeats all unacked data that fits); a retransmitted segment is extended with the
//!   following sent-but-unacked segments up to one MSS. Acknowledged bytes are trimmed from the
//!   queue before any bundle is built (`SendQueue::ack` trims a partially acked head), so acked
//!   data is never resent.
//! * `Patch` — the Linux RDB patch (2015–2016, `tcp_rdb.c`): only while `dpifl`-thin and with
//!   `TCP_NODELAY`; walks backwards from the segment before the new one, adding earlier
//!   segments while the total stays within min(MSS, max_bytes) and the count within
//!   `rdb_max_packets`; never before the head of the queue, never with a FIN. Hidden-loss
//!   reaction: if the segment ending at the new snd_una was sent in an RDB packet whose
//!   redundant part started at `rdb_start`, every earlier segment acked by the same ACK with
//!   seq ≥ `rdb_start` counts as lost, and any such loss puts the sender into CWR (cwnd reduced
//!   once per window, as for a loss).
//!
//! Bundling works on whole queued segments: the bundle is the contiguous range of the queue's
//! segments `[bundle_start, new.end)`; the queue itself keeps one entry per original segment,
//! so the scoreboard, SACK and recovery are unchanged by RDB.
//!
//! Invariant: a bundle never exceeds the byte limit, never starts below the head of the queue
//! (snd_una), never contains a FIN, and always ends with the new segment's bytes.

use crate::config::{RdbVariant, TcpConfig};

/// One queued segment as RDB sees it (stream offsets, `[start, end)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QSeg {
    pub start: u64,
    pub end: u64,
    pub fin: bool,
}

impl QSeg {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Payload limit of a bundled packet: the MSS, or `max_bytes` if set and smaller.
pub fn byte_limit(mss: u64, max_bytes: u32) -> u64 {
    if max_bytes == 0 {
        mss
    } else {
        mss.min(max_bytes as u64)
    }
}

/// How many earlier segments a bundle on send may carry (`None` = no count limit).
pub fn packet_limit(cfg: &TcpConfig) -> Option<u32> {
    match cfg.rdb_variant {
        RdbVariant::Seed => None,
        RdbVariant::Patch => Some(cfg.rdb_max_packets),
        // the allowance decides (`rdb_adaptive`); this is the limit without one
        RdbVariant::Adaptive => None,
    }
}

/// Bundling on send. `new` is the segment about to be sent for the first time; `earlier`
/// yields the queued segments before it, **newest first** (the walk goes backwards from the
/// segment before the new one to the head of the queue). Returns the first byte of the bundle
/// if at least one earlier segment fits, else `None` (send `new` alone).
pub fn bundle_range(
    earlier: impl IntoIterator<Item = QSeg>,
    new: QSeg,
    mss: u64,
    limit: u64,
    max_packets: Option<u32>,
) -> Option<u64> {
    if new.fin || new.is_empty() || new.len() >= mss {
        return None;
    }
    let (mut start, mut total, mut count) = (new.start, new.len(), 0u32);
    for s in earlier {
        if max_packets.is_some_and(|m| count >= m)
            || s.fin
            || s.end != start
            || total + s.len() > limit
        {
            break;
        }
        total += s.len();
        start = s.start;
        count += 1;
    }
    (count > 0).then_some(start)
}

/// Bundling on retransmission (seed variant): the retransmitted segment `seg` is extended with
/// the following queued segments (`following`, oldest first) while the total stays within
/// `limit`. Returns the new end and how many following segments were taken.
pub fn retransmit_extent(
    following: impl IntoIterator<Item = QSeg>,
    seg: QSeg,
    limit: u64,
) -> (u64, usize) {
    let (mut end, mut total, mut n) = (seg.end, seg.len(), 0);
    if seg.fin {
        return (end, 0);
    }
    for s in following {
        if s.fin || s.start != end || s.is_empty() || total + s.len() > limit {
            break;
        }
        total += s.len();
        end = s.end;
        n += 1;
    }
    (end, n)
}

/// Patch hidden-loss test. The ACK moved snd_una from `una_before` to the end of the segment
/// `[last_start, ..)`, which was sent in an RDB packet whose redundant part began at
/// `rdb_start`. Earlier segments acked by this ACK with seq ≥ `rdb_start` exist exactly when a
/// segment boundary lies in `[max(rdb_start, una_before), last_start)`; the queue is
/// contiguous and both `rdb_start` (a segment start, or the head at send time) and
/// `una_before` are boundaries, so the test is `max(rdb_start, una_before) < last_start`.
pub fn hidden_loss(una_before: u64, last_start: u64, rdb_start: u64) -> bool {
    rdb_start.max(una_before) < last_start
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(bounds: &[(u64, u64)]) -> Vec<QSeg> {
        bounds
            .iter()
            .map(|&(start, end)| QSeg {
                start,
                end,
                fin: false,
            })
            .collect()
    }
    fn new(start: u64, end: u64) -> QSeg {
        QSeg {
            start,
            end,
            fin: false,
        }
    }

    #[test]
    fn seed_bundles_everything_unacked_that_fits() {
        let q = segs(&[(0, 100), (100, 200), (200, 300)]);
        let e = q.iter().rev().copied();
        assert_eq!(bundle_range(e, new(300, 400), 1000, 1000, None), Some(0));
        // only the newest two fit under 350 bytes
        let e = q.iter().rev().copied();
        assert_eq!(bundle_range(e, new(300, 400), 1000, 350, None), Some(100));
        // nothing fits
        let e = q.iter().rev().copied();
        assert_eq!(bundle_range(e, new(300, 400), 1000, 150, None), None);
        // nothing unacked
        assert_eq!(bundle_range([], new(300, 400), 1000, 1000, None), None);
    }

    #[test]
    fn full_sized_fin_and_empty_segments_are_not_bundled() {
        let q = segs(&[(0, 10)]);
        assert_eq!(
            bundle_range(q.clone(), new(10, 1010), 1000, 1000, None),
            None
        );
        assert_eq!(
            bundle_range(
                q.clone(),
                QSeg {
                    start: 10,
                    end: 20,
                    fin: true
                },
                1000,
                1000,
                None
            ),
            None
        );
        assert_eq!(bundle_range(q.clone(), new(10, 10), 1000, 1000, None), None);
        assert_eq!(
            bundle_range(q, new(10, 999), 1000, 1000, None),
            Some(0),
            "≤ MSS in total"
        );
    }

    #[test]
    fn patch_counts_packets() {
        let q = segs(&[(0, 100), (100, 200), (200, 300)]);
        for (m, want) in [
            (0, None),
            (1, Some(200)),
            (2, Some(100)),
            (3, Some(0)),
            (9, Some(0)),
        ] {
            let e = q.iter().rev().copied();
            assert_eq!(
                bundle_range(e, new(300, 400), 1000, 1000, Some(m)),
                want,
                "max_packets {m}"
            );
        }
    }

    #[test]
    fn limits() {
        assert_eq!(byte_limit(1448, 0), 1448);
        assert_eq!(byte_limit(1448, 240), 240);
        assert_eq!(byte_limit(1000, 5000), 1000);
    }

    #[test]
    fn retransmission_extends_forward() {
        let q = segs(&[(100, 200), (200, 300), (300, 400)]);
        assert_eq!(retransmit_extent(q.clone(), new(0, 100), 1000), (400, 3));
        assert_eq!(retransmit_extent(q.clone(), new(0, 100), 250), (200, 1));
        assert_eq!(retransmit_extent(q, new(0, 100), 100), (100, 0));
        let f = [QSeg {
            start: 100,
            end: 150,
            fin: true,
        }];
        assert_eq!(
            retransmit_extent(f, new(0, 100), 1000),
            (100, 0),
            "never with a FIN"
        );
    }

    #[test]
    fn hidden_loss_table() {
        // RDB packet [100, 300) carrying segment [100, 200) and new [200, 300)
        assert!(
            hidden_loss(100, 200, 100),
            "ACK 100 -> 300: [100, 200) was lost"
        );
        assert!(
            !hidden_loss(200, 200, 100),
            "[100, 200) acked before: no loss"
        );
        assert!(!hidden_loss(100, 200, 200), "not bundled");
        assert!(hidden_loss(0, 200, 50), "head trimmed to 50 at send time");
    }
}
