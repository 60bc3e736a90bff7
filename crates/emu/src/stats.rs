//! The emulator's timing error: how late each packet was written to its TUN device compared
//! with the arrival time the path model computed, summarised as nearest-rank percentiles.

use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Lateness {
    pub count: u64,
    pub mean_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Deliveries more than 1 ms late.
    pub over_1ms: u64,
}

impl Lateness {
    pub fn from_ns(mut ns: Vec<u64>) -> Lateness {
        ns.sort_unstable();
        let n = ns.len();
        let us = |x: u64| x as f64 / 1e3;
        let rank = |num: usize, den: usize| -> Option<f64> {
            if n == 0 {
                return None;
            }
            let k = (n * num).div_ceil(den).clamp(1, n);
            Some(us(ns[k - 1]))
        };
        Lateness {
            count: n as u64,
            mean_us: (n > 0).then(|| ns.iter().map(|&x| x as f64).sum::<f64>() / n as f64 / 1e3),
            p50_us: rank(50, 100),
            p99_us: rank(99, 100),
            p999_us: rank(999, 1000),
            max_us: ns.last().map(|&x| us(x)),
            over_1ms: ns.iter().filter(|&&x| x > 1_000_000).count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
