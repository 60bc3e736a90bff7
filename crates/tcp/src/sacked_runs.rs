//! The SACKed segments of the retransmission queue as merged runs of sequence space, so that a
//! walk of the un-SACKed segments (RACK's loss detection, RFC 8985 §6.2) jumps over a SACKed run
//! in one lookup instead of visiting each of its segments, as Linux walks its list of
//! segments in flight without the SACKed ones (`tcp_rack_detect_loss` over `tsorted_sent_queue`).
//!
//! Segments are contiguous in sequence space, so the runs are exactly the maximal stretches of
//! consecutive SACKed segments. They change as the scoreboard does: a segment becomes SACKed
//! (added, merging with touching runs), an RTO un-SACKs the head (removed), a cumulative ACK
//! removes a prefix (trimmed).

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SackedRuns {
    /// `start → end` of each run, disjoint and not touching.
    runs: BTreeMap<u64, u64>,
}

impl SackedRuns {
    /// The segment `[start, end)` became SACKed.
    pub fn add(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.runs.range(..=start).next_back() {
            if e >= start {
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

    /// The segment `[start, end)` is no longer SACKed.
    pub fn remove(&mut self, start: u64, end: u64) {
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

    /// Everything below `x` left the queue (cumulative ACK).
    pub fn trim_below(&mut self, x: u64) {
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

    /// The end of the run containing `x`, if a run does.
    pub fn run_end(&self, x: u64) -> Option<u64> {
        let (_, &e) = self.runs.range(..=x).next_back()?;
        (e > x).then_some(e)
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
        let mut r = SackedRuns::default();
        r.add(100, 200);
        r.add(300, 400);
        r.add(200, 300);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(100, 400)]);
        assert_eq!(r.run_end(150), Some(400));
        assert_eq!(r.run_end(400), None);
        r.remove(100, 200);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(200, 400)]);
        r.remove(250, 300);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(200, 250), (300, 400)]);
        r.trim_below(350);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(350, 400)]);
        r.trim_below(400);
        assert_eq!(r.iter().count(), 0);
    }
}
