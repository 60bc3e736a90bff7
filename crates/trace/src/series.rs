//! A flow's per-write latency series in constant memory: the application latency of its
//! delivered writes, in write order, kept as the maxima of consecutive buckets of writes (so
//! every stall stays visible in a plot), plus the worst write. What `report.html` draws per flow.
//!
//! The bucket size starts at 1 write and doubles whenever the series would exceed its number of
//! points (neighbouring buckets merge, keeping their maximum), so the points are always the
//! maxima of `chunks(bucket)` of the full series, whatever its length, and memory stays bounded.

use serde::{Deserialize, Serialize};
use thinlab_tcp::Instant;

/// The worst write of a series: when it was written, its latency and the end offset of its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorstWrite {
    pub write_time_ns: u64,
    pub latency_ns: u64,
    pub end: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySeries {
    /// Most points kept (even, ≥ 2).
    max_points: usize,
    /// Writes per point.
    bucket: u64,
    /// Maximum latency (ns) of each full bucket, in write order.
    points: Vec<u64>,
    /// The bucket being filled: its maximum and how many writes it has.
    open_max: u64,
    open_len: u64,
    /// Writes pushed.
    count: u64,
    /// The write with the largest latency (the last of equals).
    worst: Option<WorstWrite>,
}

impl LatencySeries {
    /// An empty series of at most `max_points` points (rounded up to an even number ≥ 2).
    pub fn new(max_points: usize) -> Self {
        LatencySeries {
            max_points: max_points.max(2).next_multiple_of(2),
            bucket: 1,
            points: Vec::new(),
            open_max: 0,
            open_len: 0,
            count: 0,
            worst: None,
        }
    }

    /// The next delivered write: written at `write_time`, `latency_ns` to deliver, ending at
    /// stream offset `end`.
    pub fn push(&mut self, write_time: Instant, latency_ns: u64, end: u64) {
        if self.worst.is_none_or(|w| latency_ns >= w.latency_ns) {
            self.worst = Some(WorstWrite {
                write_time_ns: write_time.as_nanos(),
                latency_ns,
                end,
            });
        }
        self.count += 1;
        self.open_max = if self.open_len == 0 {
            latency_ns
        } else {
            self.open_max.max(latency_ns)
        };
        self.open_len += 1;
        if self.open_len == self.bucket {
            self.points.push(self.open_max);
            self.open_len = 0;
            if self.points.len() == self.max_points {
                self.points = self.points.chunks(2).map(|p| p[0].max(p[1])).collect();
                self.bucket *= 2;
            }
        }
    }

    /// Writes pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Writes per point.
    pub fn bucket(&self) -> u64 {
        self.bucket
    }

    /// `(index of the bucket's first write, its maximum latency ns)`, the last bucket possibly
    /// partial; at most `max_points` points.
    pub fn points(&self) -> Vec<(u64, u64)> {
        let open = (self.open_len > 0).then_some(self.open_max);
        self.points
            .iter()
            .copied()
            .chain(open)
            .enumerate()
            .map(|(i, max)| (i as u64 * self.bucket, max))
            .collect()
    }

    pub fn worst(&self) -> Option<WorstWrite> {
        self.worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn series(lat: &[u64], max_points: usize) -> LatencySeries {
        let mut s = LatencySeries::new(max_points);
        for (i, &l) in lat.iter().enumerate() {
            s.push(Instant::from_nanos(i as u64 * 10), l, i as u64 + 1);
        }
        s
    }

    proptest! {
        #[test]
        fn points_are_the_bucket_maxima_of_the_whole_series(
            lat in proptest::collection::vec(0u64..1000, 0..3000),
            max_points in 2usize..40,
        ) {
            let s = series(&lat, max_points);
            let b = s.bucket() as usize;
            let expected: Vec<(u64, u64)> = lat
                .chunks(b)
                .enumerate()
                .map(|(i, c)| ((i * b) as u64, *c.iter().max().unwrap()))
                .collect();
            prop_assert_eq!(s.points(), expected);
            prop_assert!(s.points().len() <= max_points.next_multiple_of(2));
            prop_assert_eq!(s.count(), lat.len() as u64);
            // the last write of the largest latency, as Iterator::max_by_key picks it
            let worst = lat.iter().enumerate().max_by_key(|&(_, l)| l);
            prop_assert_eq!(
                s.worst().map(|w| (w.latency_ns, w.end)),
                worst.map(|(i, &l)| (l, i as u64 + 1))
            );
        }
    }

    #[test]
    fn a_stall_survives_merging() {
        let mut lat = vec![5u64; 10_000];
        lat[7777] = 3_000_000_000;
        let s = series(&lat, 800);
        assert_eq!(s.bucket(), 16);
        assert_eq!(s.points().len(), 625);
        let stall: Vec<_> = s.points().into_iter().filter(|p| p.1 > 5).collect();
        assert_eq!(stall, vec![(7776, 3_000_000_000)]);
        assert_eq!(s.worst().unwrap().write_time_ns, 77_770);
    }
}
