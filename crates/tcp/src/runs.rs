//! Ranges of sequence space kept as merged runs (touching ranges merge), so that the run around
//! an offset is one lookup instead of a walk over the pieces that make it up. Used twice:
//!
//! - the sender's SACKed segments (`send_queue`): RACK's loss detection (RFC 8985 §6.2) jumps
//!   over a SACKed run instead of visiting each of its segments, as Linux walks its list of
//!   segments in flight without the SACKed ones (`tcp_rack_detect_loss` over
//!   `tsorted_sent_queue`). Segments are contiguous, so the runs are the maximal stretches of
//!   consecutive SACKed segments: a segment becomes SACKed (added), an RTO un-SACKs the head
//!   (removed), a cumulative ACK removes a prefix (trimmed);
//! - the receiver's out-of-order data (`endpoint::reassembly`): the SACK block around an
//!   arriving segment (RFC 2018 §4) is the run containing it.
//!
//! Lookups on an empty set return before touching the map: a `BTreeMap` emptied by removals
//! keeps its root node, and reading that node on every ACK of a flow that once had a loss was
//! a cache miss per ACK when thousands of flows run (docs/performance/many-flows.md, "Empty maps
//! and rewound queues").

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs {
    /// `start → end` of each run, disjoint and not touching.
    runs: BTreeMap<u64, u64>,
}

impl Runs {
    /// Adds `[start, end)`, merging the runs it overlaps or touches.
    pub fn add(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.runs.range(..=start).next_back() {
            if e >= start {
                // The common case (a sender SACKs its segments in order): the run before grows
                // at its end and reaches no later run, so it stays where it is.
                if self.runs.range(s + 1..=end).next().is_none() {
                    if end > e {
                        self.runs.insert(s, end);
                    }
                    return;
                }
                start = s;
                end = end.max(e);
                self.runs.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.runs.range(start..=end).next() {
            end = end.max(e);
            self.runs.remove(&s);
        }
        self.runs.insert(start, end);
    }

    /// Removes `[start, end)`, which lies inside one run (splitting it).
    pub fn remove(&mut self, start: u64, end: u64) {
        if self.runs.is_empty() {
            return;
        }
        let Some((&s, &e)) = self.runs.range(..=start).next_back() else {
            return;
        };
        if e <= start {
            return;
        }
        self.runs.remove(&s);
        if s < start {
            self.runs.insert(s, start);
        }
        if end < e {
            self.runs.insert(end, e);
        }
    }

    /// Removes everything below `x`.
    pub fn trim_below(&mut self, x: u64) {
        if self.runs.is_empty() {
            return;
        }
        while let Some(entry) = self.runs.first_entry() {
            let (s, e) = (*entry.key(), *entry.get());
            if s >= x {
                break;
            }
            entry.remove();
            if e > x {
                self.runs.insert(x, e);
                break;
            }
        }
    }

    /// The run containing `x`, if one does.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        if self.runs.is_empty() {
            return None;
        }
        let (&s, &e) = self.runs.range(..=x).next_back()?;
        (e > x).then_some((s, e))
    }

    /// The runs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().map(|(&s, &e)| (s, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_merges_remove_splits_trim_cuts() {
        let mut r = Runs::default();
        r.add(100, 200);
        r.add(300, 400);
        r.add(200, 300);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(100, 400)]);
        assert_eq!(r.containing(150), Some((100, 400)));
        assert_eq!(r.containing(400), None);
        r.remove(100, 200);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(200, 400)]);
        r.remove(250, 300);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(200, 250), (300, 400)]);
        r.trim_below(350);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(350, 400)]);
        r.trim_below(400);
        assert_eq!(r.iter().count(), 0);
    }

    /// Any sequence of adds, removes and trims leaves the runs of a set of bytes kept by hand.
    #[test]
    fn matches_a_byte_set() {
        use proptest::prelude::*;
        let op = (0u8..3, 0u64..64, 1u64..16);
        proptest!(|(ops in proptest::collection::vec(op, 1..60))| {
            let (mut r, mut set) = (Runs::default(), [false; 80]);
            for (kind, a, n) in ops {
                let b = a + n;
                match kind {
                    0 => {
                        r.add(a, b);
                        set[a as usize..b as usize].fill(true);
                    }
                    1 => {
                        // remove only what lies inside one run, as the callers do
                        if let Some((_, e)) = r.containing(a).filter(|&(_, e)| b <= e) {
                            prop_assert!(b <= e);
                            r.remove(a, b);
                            set[a as usize..b as usize].fill(false);
                        }
                    }
                    _ => {
                        r.trim_below(a);
                        set[..a as usize].fill(false);
                    }
                }
                let mut want = Vec::new();
                let mut i = 0;
                while i < set.len() {
                    if set[i] {
                        let s = i;
                        while i < set.len() && set[i] {
                            i += 1;
                        }
                        want.push((s as u64, i as u64));
                    }
                    i += 1;
                }
                prop_assert_eq!(r.iter().collect::<Vec<_>>(), want);
            }
        });
    }
}
