//! An exact latency histogram at the recording resolution (nanoseconds): one count per distinct
//! value, so a long run keeps memory proportional to the number of distinct latencies, not to
//! the number of writes, and every statistic computed from it (mean, nearest-rank percentiles,
//! the CDF) is bit-for-bit the one computed from the individual samples.
//!
//! Equality with the samples holds because a latency in ms is always `ns as f64 / 1e6`, which is
//! monotone in `ns`: ascending keys are the samples in ascending order, and the mean sums the
//! same values in the same order (`LatencyStats::from_runs`).
//!
//! Adding is amortised O(log n) with sequential memory access: new values go to an unsorted
//! tail, which is sorted (a long tail by an LSD radix sort over the bytes in which its values
//! differ) and merged in place into the ascending `(ns, count)` runs once it is as long as the
//! runs (at least `MIN_PENDING`). A flow of bulk writes has as many distinct latencies
//! as writes, and a tree's insert per write (a cache miss per level) cost a sixth of a dumbbell's
//! simulation. Readers see the runs and the tail merged.

use serde::{Deserialize, Serialize};

/// The unsorted tail is merged into the runs when it holds this many values or as many as the
/// runs.
const MIN_PENDING: usize = 16;

/// Counts of latencies, in nanoseconds. Serializes as its `(ns, count)` pairs, ascending.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "Vec<(u64, u64)>", into = "Vec<(u64, u64)>")]
pub struct LatencyHistogram {
    /// `entries[..sorted]`: `(ns, count)` runs, ascending, distinct, counts > 0; after them, the
    /// values added since the last merge, unsorted, as `(ns, count of consecutive adds)` (one
    /// vector keeps the histogram as small as a tree's handle: there is one per milestone and
    /// flow).
    entries: Vec<(u64, u64)>,
    sorted: usize,
    total: u64,
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total && self.runs_ns().eq(other.runs_ns())
    }
}

impl Eq for LatencyHistogram {}

impl From<Vec<(u64, u64)>> for LatencyHistogram {
    fn from(mut pairs: Vec<(u64, u64)>) -> Self {
        pairs.retain(|&(_, n)| n > 0);
        let total = pairs.iter().map(|p| p.1).sum();
        let entries = into_sorted_runs(pairs);
        LatencyHistogram {
            sorted: entries.len(),
            entries,
            total,
        }
    }
}

impl From<LatencyHistogram> for Vec<(u64, u64)> {
    fn from(h: LatencyHistogram) -> Self {
        h.runs_ns().collect()
    }
}

impl LatencyHistogram {
    pub fn add(&mut self, ns: u64) {
        self.total += 1;
        // A value equal to the last one added counts there (a stream over a fixed path repeats
        // its latency write after write).
        if self.entries.len() > self.sorted {
            if let Some(last) = self.entries.last_mut().filter(|l| l.0 == ns) {
                last.1 += 1;
                return;
            }
        }
        self.entries.push((ns, 1));
        let pending = self.entries.len() - self.sorted;
        if pending >= self.sorted.max(MIN_PENDING) {
            self.compact();
        }
    }

    /// Merges the unsorted values into the runs, so that reading needs no sorting: for a
    /// finished histogram that will be read several times. In place: the tail is sorted
    /// (`sort_by_value`) and run-length encoded where it lies, then merged with the runs from
    /// the back, through one copy of the tail.
    pub fn compact(&mut self) {
        let s = self.sorted;
        if self.entries.len() == s {
            return;
        }
        let mut scratch = Vec::new();
        sort_by_value(&mut self.entries[s..], &mut scratch);
        let tail = run_length_in_place(&mut self.entries[s..]);
        self.entries.truncate(s + tail);
        merge_tail_in_place(&mut self.entries, s, scratch);
        self.sorted = self.entries.len();
    }

    /// Add every count of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.compact();
        let s = self.entries.len();
        self.entries.extend(other.runs_ns());
        merge_tail_in_place(&mut self.entries, s, Vec::new());
        self.sorted = self.entries.len();
        self.total += other.total;
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// `(value, count)` pairs held: the sorted runs and the unsorted tail, where equal values
    /// added one after the other share a pair. Far fewer than [`len`](Self::len) when the
    /// values repeat, as over a fixed path; as many when nearly every value is new, which is
    /// what makes adding costly (the tail is sorted and merged).
    pub fn stored(&self) -> usize {
        self.entries.len()
    }

    /// Distinct values.
    pub fn distinct(&self) -> usize {
        self.runs_ns().count()
    }

    /// `(latency in ns, count)`, ascending.
    pub fn runs_ns(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (runs, pending) = self.entries.split_at(self.sorted);
        let pending = if pending.is_empty() {
            Vec::new()
        } else {
            into_sorted_runs(pending.to_vec())
        };
        MergeRuns {
            a: runs.iter().copied().peekable(),
            b: pending.into_iter().peekable(),
        }
    }

    /// `(latency in ms, count)`, ascending.
    pub fn runs_ms(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.runs_ns().map(|(ns, n)| (ns_to_ms(ns), n))
    }

    /// Every sample in ms, ascending.
    pub fn samples_ms(&self) -> impl Iterator<Item = f64> + '_ {
        self.runs_ms()
            .flat_map(|(v, n)| std::iter::repeat_n(v, n as usize))
    }
}

/// A `(value, count)` pair.
type Run = (u64, u64);

/// `pairs` (any order) sorted and run-length encoded, in their own storage.
fn into_sorted_runs(mut pairs: Vec<Run>) -> Vec<Run> {
    sort_by_value(&mut pairs, &mut Vec::new());
    let n = run_length_in_place(&mut pairs);
    pairs.truncate(n);
    pairs
}

/// Tails shorter than this are sorted by comparison; longer ones by radix.
const RADIX_MIN: usize = 64;

/// Sorts `(value, count)` pairs by value (the order of equal values is left open: they are
/// added up next). Long slices go through an LSD radix sort on the value's bytes, skipping the
/// bytes all values share (latencies differ in their low four or five bytes), with `scratch`
/// as the second buffer.
fn sort_by_value(v: &mut [Run], scratch: &mut Vec<Run>) {
    if v.len() < RADIX_MIN {
        v.sort_unstable_by_key(|p| p.0);
        return;
    }
    let first = v[0].0;
    let differ = v.iter().fold(0u64, |d, p| d | (p.0 ^ first));
    scratch.clear();
    scratch.resize(v.len(), (0, 0));
    // `in_v`: whether the data are in `v` (else in `scratch`) after the passes so far
    let mut in_v = true;
    for shift in (0..64).step_by(8) {
        if (differ >> shift) & 0xff == 0 {
            continue;
        }
        let (src, dst): (&[Run], &mut [Run]) = if in_v {
            (v, scratch.as_mut_slice())
        } else {
            (scratch.as_slice(), v)
        };
        let mut start = [0usize; 256];
        for p in src {
            start[((p.0 >> shift) & 0xff) as usize] += 1;
        }
        let mut sum = 0;
        for c in start.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &p in src {
            let b = ((p.0 >> shift) & 0xff) as usize;
            dst[start[b]] = p;
            start[b] += 1;
        }
        in_v = !in_v;
    }
    if !in_v {
        v.copy_from_slice(scratch);
    }
}

/// Adds up the counts of equal neighbours of the sorted `v` into its first `n` places and
/// returns `n`.
fn run_length_in_place(v: &mut [Run]) -> usize {
    let mut n = 0;
    for i in 0..v.len() {
        if n > 0 && v[n - 1].0 == v[i].0 {
            v[n - 1].1 += v[i].1;
        } else {
            v[n] = v[i];
            n += 1;
        }
    }
    n
}

/// `e[..s]` and `e[s..]`, both ascending run lists, merged into one in `e` (counts of equal
/// values added), from the back, through a copy of the tail in `buf`.
fn merge_tail_in_place(e: &mut Vec<Run>, s: usize, mut buf: Vec<Run>) {
    buf.clear();
    buf.extend_from_slice(&e[s..]);
    let (mut i, mut j, mut w) = (s, buf.len(), e.len());
    // Invariant: w ≥ i + j, so writing e[w - 1] never overwrites an unread e[..i].
    while j > 0 {
        let b = buf[j - 1];
        let out = if i > 0 && e[i - 1].0 > b.0 {
            i -= 1;
            e[i]
        } else if i > 0 && e[i - 1].0 == b.0 {
            i -= 1;
            j -= 1;
            (b.0, e[i].1 + b.1)
        } else {
            j -= 1;
            b
        };
        w -= 1;
        e[w] = out;
    }
    // the rest of the runs is already in place, ending at `i`; equal values merged leave a gap
    if w > i {
        e.drain(i..w);
    }
}

/// Merges two ascending `(value, count)` streams, adding the counts of equal values (each
/// stream may itself repeat a value).
struct MergeRuns<A: Iterator<Item = (u64, u64)>, B: Iterator<Item = (u64, u64)>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A: Iterator<Item = (u64, u64)>, B: Iterator<Item = (u64, u64)>> Iterator for MergeRuns<A, B> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        let v = match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => return None,
        };
        let mut n = 0;
        while let Some((_, c)) = self.a.next_if(|x| x.0 == v) {
            n += c;
        }
        while let Some((_, c)) = self.b.next_if(|y| y.0 == v) {
            n += c;
        }
        Some((v, n))
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

    /// Whatever the values and merges, the runs are those of a map counting each value.
    #[test]
    fn runs_equal_a_counting_map() {
        use proptest::prelude::*;
        // Half the draws among three values: long runs of equal consecutive values.
        let values = proptest::collection::vec(prop_oneof![0u64..300, 0u64..3], 0..2000);
        proptest!(|(a in values.clone(), b in values, cut in 0usize..2000)| {
            let mut want = std::collections::BTreeMap::<u64, u64>::new();
            let mut h = LatencyHistogram::default();
            let mut g = LatencyHistogram::default();
            for (i, &v) in a.iter().enumerate() {
                *want.entry(v).or_default() += 1;
                h.add(v);
                if i == cut {
                    // a read in between changes nothing
                    prop_assert_eq!(h.len(), i as u64 + 1);
                    let _ = h.distinct();
                }
            }
            for &v in &b {
                *want.entry(v).or_default() += 1;
                g.add(v);
            }
            h.merge(&g);
            let want: Vec<(u64, u64)> = want.into_iter().collect();
            prop_assert_eq!(h.runs_ns().collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(h.len(), (a.len() + b.len()) as u64);
            prop_assert_eq!(h.distinct(), want.len());
            let back: LatencyHistogram = Vec::from(h.clone()).into();
            prop_assert_eq!(back, h);
        });
    }

    /// Long tails (sorted by radix) of values spread over many bytes, with repeats, merge into
    /// the runs of a counting map; so do the pieces of an in-place merge that adds up equal
    /// values.
    #[test]
    fn radix_sorted_tails_equal_a_counting_map() {
        use proptest::prelude::*;
        let value = prop_oneof![
            any::<u64>(),
            1_000_000u64..1_000_400,
            (0u64..5).prop_map(|x| x << 40),
        ];
        proptest!(|(a in proptest::collection::vec(value, 0..3000))| {
            let mut want = std::collections::BTreeMap::<u64, u64>::new();
            let mut h = LatencyHistogram::default();
            for &v in &a {
                *want.entry(v).or_default() += 1;
                h.add(v);
            }
            h.compact();
            let want: Vec<(u64, u64)> = want.into_iter().collect();
            prop_assert_eq!(h.runs_ns().collect::<Vec<_>>(), want);
        });
        let mut v: Vec<(u64, u64)> = (0..1000u64).rev().map(|x| (x * 7919 % 1000, 1)).collect();
        let mut scratch = Vec::new();
        sort_by_value(&mut v, &mut scratch);
        assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
        let mut e = vec![(1, 1), (3, 1), (5, 1), (0, 2), (3, 4), (9, 1)];
        merge_tail_in_place(&mut e, 3, Vec::new());
        assert_eq!(e, vec![(0, 2), (1, 1), (3, 5), (5, 1), (9, 1)]);
    }

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
