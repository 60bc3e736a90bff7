//! The emulator's timing error: how late each packet was written to its TUN device compared
//! with the arrival time the path model computed, summarised as nearest-rank percentiles,
//! over the whole run and per minute of it (whether the emulator drifts on a long run).

use serde::Serialize;
use thinlab_trace::histogram::LatencyHistogram;

/// Nearest-rank statistics of durations in µs: the emulator's delivery lateness, and the
/// hosts' parts of the writes' latency (`crate::host_parts`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Lateness {
    pub count: u64,
    pub mean_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Samples above 1 ms (of the emulator's lateness: deliveries more than 1 ms late).
    pub over_1ms: u64,
}

impl Lateness {
    /// From every delivery's lateness, ns.
    pub fn from_ns(ns: Vec<u64>) -> Lateness {
        let mut h = LatencyHistogram::default();
        for x in ns {
            h.add(x);
        }
        Lateness::from_histogram(&h)
    }

    /// From the exact histogram of the deliveries' lateness (ns): the statistics of the
    /// samples (nearest rank, the mean summed in ascending order), in memory that does not grow
    /// with the number of deliveries.
    pub fn from_histogram(h: &LatencyHistogram) -> Lateness {
        let n = h.len();
        let us = |x: u64| x as f64 / 1e3;
        let rank = |num: u64, den: u64| -> Option<f64> {
            if n == 0 {
                return None;
            }
            let k = (n * num).div_ceil(den).clamp(1, n);
            let mut seen = 0;
            h.runs_ns()
                .find(|&(_, c)| {
                    seen += c;
                    seen >= k
                })
                .map(|(x, _)| us(x))
        };
        let expanded = || {
            h.runs_ns()
                .flat_map(|(x, c)| std::iter::repeat_n(x, c as usize))
        };
        Lateness {
            count: n,
            mean_us: (n > 0).then(|| expanded().map(|x| x as f64).sum::<f64>() / n as f64 / 1e3),
            p50_us: rank(50, 100),
            p99_us: rank(99, 100),
            p999_us: rank(999, 1000),
            max_us: h.runs_ns().last().map(|(x, _)| us(x)),
            over_1ms: h
                .runs_ns()
                .filter(|&(x, _)| x > 1_000_000)
                .map(|(_, c)| c)
                .sum(),
        }
    }
}

/// Lateness in one window of run time.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatenessWindow {
    /// Run time at the window's start, s.
    pub start_s: f64,
    #[serde(flatten)]
    pub lateness: Lateness,
}

/// Run time per timeline window, ns.
pub const WINDOW_NS: u64 = 60_000_000_000;

/// Lateness per [`WINDOW_NS`] of run time: one window's exact histogram at a time, each
/// finished window kept as its summary (memory grows by one summary per minute).
#[derive(Default)]
pub struct Timeline {
    start: u64,
    current: LatencyHistogram,
    windows: Vec<LatenessWindow>,
}

impl Timeline {
    /// A delivery at run time `t` (ns; non-decreasing) that was `late_ns` late.
    pub fn add(&mut self, t: u64, late_ns: u64) {
        if t >= self.start + WINDOW_NS {
            self.close();
            self.start = t - t % WINDOW_NS;
        }
        self.current.add(late_ns);
    }

    fn close(&mut self) {
        if !self.current.is_empty() {
            self.windows.push(LatenessWindow {
                start_s: self.start as f64 / 1e9,
                lateness: Lateness::from_histogram(&self.current),
            });
            self.current = LatencyHistogram::default();
        }
    }

    /// Every window with a delivery, in time order.
    pub fn finish(mut self) -> Vec<LatenessWindow> {
        self.close();
        self.windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_summarises_each_minute_with_deliveries() {
        let mut t = Timeline::default();
        for i in 0..10 {
            t.add(i * 1_000_000_000, 1000 + i); // minute 0
        }
        t.add(61_000_000_000, 5_000);
        t.add(119_999_999_999, 7_000); // minute 1
        t.add(300_000_000_000, 2_000_000); // minute 5 (2..4 had none)
        let w = t.finish();
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].start_s, w[0].lateness.count), (0.0, 10));
        assert_eq!(w[0].lateness.max_us, Some(1.009));
        assert_eq!((w[1].start_s, w[1].lateness.count), (60.0, 2));
        assert_eq!(w[1].lateness.p50_us, Some(5.0));
        assert_eq!((w[2].start_s, w[2].lateness.over_1ms), (300.0, 1));
        assert!(Timeline::default().finish().is_empty());
    }

    #[test]
    fn percentiles_nearest_rank() {
        let l = Lateness::from_ns((1..=100).map(|i| i * 1000).collect());
        assert_eq!(l.count, 100);
        assert_eq!(l.p50_us, Some(50.0));
        assert_eq!(l.p99_us, Some(99.0));
        assert_eq!(l.max_us, Some(100.0));
        assert_eq!(l.over_1ms, 0);
        let e = Lateness::from_ns(vec![]);
        assert_eq!((e.count, e.p50_us, e.max_us), (0, None, None));
        assert_eq!(Lateness::from_ns(vec![2_000_000]).over_1ms, 1);
    }
}
