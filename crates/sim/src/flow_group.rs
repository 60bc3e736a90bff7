//! Flow groups (docs/spec/interface.md, "Scenario file"): `count = N` on a `[[flow]]` makes N
//! identical flows named `<name><k>` (k = 0..N), and `start_spread` spreads their starts over
//! `[start, start + start_spread)`, stratified: member k starts at
//! `start + start_spread · (k + u_k) / N`, rounded to the millisecond, with `u_k` uniform in
//! [0, 1) from a SplitMix64 hash of (flow index, k) — the same in every run of the file. This is
//! how Yin et al. ("Improving the Performance of Delay Based Protocol in Delivering Real Time
//! Media via Early Retransmission", §III.A) start their flows: uniformly over the first 50 s.

use crate::error::ScenarioError;
use crate::rng::splitmix;
use crate::scenario::Flow;
use crate::units::fmt_duration;
use std::time::Duration;

/// The most members one `[[flow]]` may have.
pub const MAX_COUNT: u64 = 100_000;

/// A validated `count` / `start_spread` pair of flow `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    index: usize,
    count: Option<u64>,
    spread: Duration,
}

impl Group {
    /// Checks `count` (1..=MAX_COUNT) and `start_spread` (needs `count`; every member must start
    /// before `duration`).
    pub fn new(
        index: usize,
        count: Option<u64>,
        spread: Option<Duration>,
        start: Duration,
        duration: Duration,
    ) -> Result<Group, ScenarioError> {
        let k = |s: &str| format!("flow.{index}.{s}");
        if let Some(n) = count {
            if n == 0 || n > MAX_COUNT {
                return Err(ScenarioError::invalid(
                    k("count"),
                    n,
                    format!("a whole number of flows from 1 to {MAX_COUNT}"),
                ));
            }
        }
        if let Some(s) = spread {
            if count.is_none() {
                return Err(ScenarioError::invalid(
                    k("start_spread"),
                    format!("\"{}\"", fmt_duration(s)),
                    "a `count` on the same flow (start_spread spreads the starts of a group)",
                ));
            }
            if start + s > duration {
                return Err(ScenarioError::invalid(
                    k("start_spread"),
                    format!("\"{}\"", fmt_duration(s)),
                    format!(
                        "at most duration − start ({}), so that every member starts before duration",
                        fmt_duration(duration.saturating_sub(start))
                    ),
                ));
            }
        }
        Ok(Group {
            index,
            count,
            spread: spread.unwrap_or(Duration::ZERO),
        })
    }

    /// The start offset of member `k` from the group's `start`.
    pub fn offset(&self, k: u64) -> Duration {
        let n = self.count.unwrap_or(1);
        let z = splitmix(
            (self.index as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(k + 1),
        );
        let u = (z >> 11) as f64 / (1u64 << 53) as f64;
        let s = self.spread.as_secs_f64() * (k as f64 + u) / n as f64;
        let ms = (s * 1000.0).round();
        // Rounding may reach the spread's end; stay inside it.
        Duration::from_millis(ms as u64).min(self.spread.saturating_sub(Duration::from_millis(1)))
    }

    /// The flows of the group: `flow` itself without a `count`, else its members.
    pub fn members(&self, flow: Flow) -> Vec<Flow> {
        let Some(n) = self.count else {
            return vec![flow];
        };
        (0..n)
            .map(|k| {
                let mut m = flow.clone();
                m.name = format!("{}{k}", flow.name);
                m.start = flow.start + self.offset(k);
                m
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn starts_are_stratified_inside_the_spread_and_reproducible() {
        let g = Group::new(2, Some(200), Some(ms(50_000)), ms(1000), ms(60_000)).unwrap();
        let o: Vec<Duration> = (0..200).map(|k| g.offset(k)).collect();
        assert!(o.iter().all(|&x| x < ms(50_000)));
        // member k lies in its stratum [k, k + 1) · 250 ms (± the rounding)
        for (k, x) in o.iter().enumerate() {
            let lo = 250 * k as u64;
            assert!(*x >= ms(lo) && *x <= ms(lo + 250), "{k}: {x:?}");
        }
        let mean = o.iter().map(|x| x.as_secs_f64()).sum::<f64>() / 200.0;
        assert!((mean - 25.0).abs() < 0.5, "{mean}");
        assert_eq!(o, (0..200).map(|k| g.offset(k)).collect::<Vec<_>>());
        // another flow index draws other offsets
        let h = Group::new(3, Some(200), Some(ms(50_000)), ms(0), ms(60_000)).unwrap();
        assert_ne!(o, (0..200).map(|k| h.offset(k)).collect::<Vec<_>>());
    }

    #[test]
    fn no_spread_means_one_start() {
        let g = Group::new(0, Some(3), None, ms(0), ms(10)).unwrap();
        assert!((0..3).all(|k| g.offset(k) == Duration::ZERO));
    }

    #[test]
    fn bad_values_name_the_key() {
        let key = |r: Result<Group, ScenarioError>| r.unwrap_err().to_string();
        assert!(key(Group::new(1, Some(0), None, ms(0), ms(10))).contains("flow.1.count"));
        assert!(key(Group::new(1, Some(MAX_COUNT + 1), None, ms(0), ms(10))).contains("count"));
        let e = key(Group::new(0, None, Some(ms(5)), ms(0), ms(10)));
        assert!(
            e.contains("flow.0.start_spread") && e.contains("count"),
            "{e}"
        );
        let e = key(Group::new(0, Some(2), Some(ms(10)), ms(1), ms(10)));
        assert!(e.contains("start_spread") && e.contains("duration"), "{e}");
    }
}
