//! An exact latency histogram at the recording resolution (nanoseconds): one count per distinct
//! value, so a long run keeps memory proportional to the number of distinct latencies, not to
//! the number of writes, and every statistic computed from it (mean, nearest-rank percentiles,
//! the CDF) is bit-for-bit the one computed from the individual samples.
//!
//! Equality with the samples holds because a latency in ms is always `ns as f64 / 1e6`, which is
//! monotone in `ns`: ascending keys are the samples in ascending order, and the mean sums the
//! same values in the same order (`LatencyStats::from_runs`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of latencies, in nanoseconds. Serializes as its `(ns, count)` pairs, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<(u64, u64)>", into = "Vec<(u64, u64)>")]
pub struct LatencyHistogram {
    counts: BTreeMap<u64, u64>,
    total: u64,
}

impl From<Vec<(u64, u64)>> for LatencyHistogram {
    fn from(pairs: Vec<(u64, u64)>) -> Self {
        let mut h = LatencyHistogram::default();
        for (ns, n) in pairs.into_iter().filter(|&(_, n)| n > 0) {
            *h.counts.entry(ns).or_insert(0) += n;
            h.total += n;
        }
        h
    }
}

impl From<LatencyHistogram> for Vec<(u64, u64)> {
    fn from(h: LatencyHistogram) -> Self {
        h.counts.into_iter().collect()
    }
}

impl LatencyHistogram {
    pub fn add(&mut self, ns: u64) {
        *self.counts.entry(ns).or_insert(0) += 1;
        self.total += 1;
    }

    /// Add every count of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (&ns, &n) in &other.counts {
            *self.counts.entry(ns).or_insert(0) += n;
        }
        self.total += other.total;
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Distinct values.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// `(latency in ns, count)`, ascending.
    pub fn runs_ns(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&ns, &n)| (ns, n))
    }

    /// `(latency in ms, count)`, ascending.
    pub fn runs_ms(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.counts.iter().map(|(&ns, &n)| (ns_to_ms(ns), n))
    }

    /// Every sample in ms, ascending.
    pub fn samples_ms(&self) -> impl Iterator<Item = f64> + '_ {
        self.runs_ms()
            .flat_map(|(v, n)| std::iter::repeat_n(v, n as usize))
    }
}

/// The one conversion of a latency from ns to ms used everywhere.
pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// `(value, count)` runs of `hist` and of the extra `samples_ms` (any order, NaNs dropped),
/// merged ascending: the sorted multiset of both, run-length encoded.
pub fn merged_runs(hist: &LatencyHistogram, samples_ms: &[f64]) -> Vec<(f64, u64)> {
    let mut extra: Vec<f64> = samples_ms.iter().copied().filter(|x| !x.is_nan()).collect();
    extra.sort_unstable_by(f64::total_cmp);
    let mut out: Vec<(f64, u64)> = Vec::with_capacity(hist.distinct() + extra.len());
    let mut push = |v: f64, n: u64| match out.last_mut() {
        Some((last, c)) if last.total_cmp(&v).is_eq() => *c += n,
        _ => out.push((v, n)),
    };
    let mut e = extra.into_iter().peekable();
    for (v, n) in hist.runs_ms() {
        while let Some(x) = e.next_if(|x| x.total_cmp(&v).is_lt()) {
            push(x, 1);
        }
        push(v, n);
    }
    for x in e {
        push(x, 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_the_sorted_samples() {
        let mut h = LatencyHistogram::default();
        for ns in [3_000_000, 1_000_000, 3_000_000, 2_500_000] {
            h.add(ns);
        }
        assert_eq!(h.len(), 4);
        assert_eq!(h.distinct(), 3);
        assert_eq!(h.samples_ms().collect::<Vec<_>>(), vec![1.0, 2.5, 3.0, 3.0]);
        let runs = merged_runs(&h, &[2.5, 0.5, f64::NAN, 9.0]);
        assert_eq!(runs, vec![(0.5, 1), (1.0, 1), (2.5, 2), (3.0, 2), (9.0, 1)]);
        let mut g = LatencyHistogram::default();
        g.add(1_000_000);
        h.merge(&g);
        assert_eq!(h.runs_ms().next(), Some((1.0, 2)));
        assert_eq!(h.len(), 5);
    }
}
