//! The offset (and drift) between the clocks of a sender-side and a receiver-side capture,
//! estimated from the captures themselves, as one-way-delay tools do (Paxson, "On Calibrating
//! Measurements of Packet Transit Times"; the minimum-delay method of OWAMP, RFC 4656):
//!
//! - a data segment sent at `s` (sender clock) and captured arriving at `r` (receiver clock)
//!   gives a forward sample `r - s = owd_fwd + offset`;
//! - an ACK sent at `r'` (receiver clock) and captured arriving at `s'` (sender clock) gives a
//!   reverse sample `s' - r' = owd_rev - offset`.
//!
//! With `F` and `R` the minima of the samples (the packets that met no queue), and the two
//! minimum one-way delays taken as equal, `offset = (F - R) / 2`: the receiver clock minus
//! the sender clock. `F + R` is the minimum round trip between the two capture points and does
//! not depend on the offset: it is never negative for captures that belong together, and is
//! minus that round trip for captures passed the wrong way round (the "sender" capture taken
//! at the receiver). The estimate is wrong by half the difference of the true minimum one-way
//! delays (an asymmetric path, or large data segments against small ACKs on a slow link).
//!
//! Drift: the offset estimated over each half of the capture; a clock running at a different
//! rate makes them differ by `drift × (time between the halves)`.

use serde::Serialize;

/// Fewest samples each way in each half for a drift estimate.
pub const DRIFT_MIN_SAMPLES: u64 = 20;
/// Shortest capture for a drift estimate, ns.
pub const DRIFT_MIN_SPAN_NS: u64 = 30_000_000_000;
/// Drift is applied only when it moves the ends of the capture by more than this, ns
/// (below it, the estimate's own noise is of the same size).
pub const DRIFT_APPLY_NS: f64 = 1_000_000.0;

/// Minimum forward and reverse samples over one part of the capture.
#[derive(Clone, Copy, Debug, Default)]
struct Minima {
    fwd: Option<i64>,
    rev: Option<i64>,
    n_fwd: u64,
    n_rev: u64,
}

impl Minima {
    fn offset(&self) -> Option<f64> {
        Some((self.fwd? as f64 - self.rev? as f64) / 2.0)
    }
}

/// Collects samples of one connection; `mid_ns` (sender clock) splits it into halves.
#[derive(Clone, Debug)]
pub struct ClockSamples {
    first_ns: u64,
    last_ns: u64,
    all: Minima,
    halves: [Minima; 2],
}

/// `a − b` in ns, saturating (timestamps of a corrupt capture can be anything).
fn diff(a: u64, b: u64) -> i64 {
    (i128::from(a) - i128::from(b)).clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

fn min_opt(a: Option<i64>, b: i64) -> Option<i64> {
    Some(a.map_or(b, |a| a.min(b)))
}

impl ClockSamples {
    /// Samples of a connection captured at the sender from `first_ns` to `last_ns`.
    pub fn new(first_ns: u64, last_ns: u64) -> Self {
        ClockSamples {
            first_ns,
            last_ns,
            all: Minima::default(),
            halves: [Minima::default(); 2],
        }
    }

    fn half(&self, sender_ns: u64) -> usize {
        usize::from(sender_ns >= self.first_ns + (self.last_ns - self.first_ns) / 2)
    }

    /// A data segment sent at `sent_ns` (sender clock) arrived at `arrived_ns` (receiver clock).
    pub fn forward(&mut self, sent_ns: u64, arrived_ns: u64) {
        let d = diff(arrived_ns, sent_ns);
        let h = self.half(sent_ns);
        for m in [&mut self.all, &mut self.halves[h]] {
            m.fwd = min_opt(m.fwd, d);
            m.n_fwd += 1;
        }
    }

    /// An ACK sent at `sent_ns` (receiver clock) arrived at `arrived_ns` (sender clock).
    pub fn reverse(&mut self, sent_ns: u64, arrived_ns: u64) {
        let d = diff(arrived_ns, sent_ns);
        let h = self.half(arrived_ns);
        for m in [&mut self.all, &mut self.halves[h]] {
            m.rev = min_opt(m.rev, d);
            m.n_rev += 1;
        }
    }

    /// The estimate; `None` without at least one sample each way.
    pub fn estimate(&self) -> Option<ClockEstimate> {
        let (f, r) = (self.all.fwd?, self.all.rev?);
        let offset = self.all.offset()?;
        let span = self.last_ns - self.first_ns;
        let drift = (span >= DRIFT_MIN_SPAN_NS
            && self
                .halves
                .iter()
                .all(|h| h.n_fwd >= DRIFT_MIN_SAMPLES && h.n_rev >= DRIFT_MIN_SAMPLES))
        .then(|| {
            let (a, b) = (self.halves[0].offset()?, self.halves[1].offset()?);
            // Half midpoints are a quarter of the span from each end: half a span apart.
            Some((b - a) / (span as f64 / 2.0))
        })
        .flatten();
        let applied = drift.is_some_and(|d| (d * span as f64 / 2.0).abs() > DRIFT_APPLY_NS);
        Some(ClockEstimate {
            offset_ns: offset,
            drift_ppm: drift.map(|d| d * 1e6),
            drift_applied: applied,
            min_forward_ms: f as f64 / 1e6,
            min_reverse_ms: r as f64 / 1e6,
            min_round_trip_ms: (f as f64 + r as f64) / 1e6,
            forward_samples: self.all.n_fwd,
            reverse_samples: self.all.n_rev,
            mid_ns: self.first_ns + span / 2,
        })
    }
}

/// The estimated relation of the clocks: `receiver = sender + offset + drift·(t − mid)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClockEstimate {
    #[serde(skip)]
    pub offset_ns: f64,
    /// Relative rate of the receiver clock, parts per million (null: capture too short or too
    /// few samples in a half).
    pub drift_ppm: Option<f64>,
    /// Whether the drift was applied (only when it moves the ends by more than 1 ms).
    pub drift_applied: bool,
    /// Minimum forward (data) and reverse (ACK) sample, before correction, ms.
    pub min_forward_ms: f64,
    pub min_reverse_ms: f64,
    /// `min_forward + min_reverse`: the minimum round trip between the capture points.
    pub min_round_trip_ms: f64,
    pub forward_samples: u64,
    pub reverse_samples: u64,
    #[serde(skip)]
    pub mid_ns: u64,
}

/// The correction applied to a connection's receiver-side timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClockCorrection {
    /// `"estimated"` (from the captures), `"given"` (`--clock-offset`) or `"none"` (no sample
    /// pair to estimate from).
    pub source: &'static str,
    /// Receiver clock minus sender clock, ms, at the middle of the capture.
    pub offset_ms: f64,
    /// Drift applied, ppm (0 when none).
    pub drift_ppm: f64,
    #[serde(skip)]
    pub mid_ns: u64,
}

impl ClockCorrection {
    pub const NONE: ClockCorrection = ClockCorrection {
        source: "none",
        offset_ms: 0.0,
        drift_ppm: 0.0,
        mid_ns: 0,
    };

    pub fn from_estimate(e: &ClockEstimate) -> Self {
        ClockCorrection {
            source: "estimated",
            offset_ms: e.offset_ns / 1e6,
            drift_ppm: if e.drift_applied {
                e.drift_ppm.unwrap_or(0.0)
            } else {
                0.0
            },
            mid_ns: e.mid_ns,
        }
    }

    pub fn given(offset_ms: f64) -> Self {
        ClockCorrection {
            source: "given",
            offset_ms,
            drift_ppm: 0.0,
            mid_ns: 0,
        }
    }

    /// A receiver-clock time on the sender's clock (clamped at 0).
    pub fn to_sender(&self, receiver_ns: u64) -> u64 {
        // Integer arithmetic on the absolute times (ns since 1970 exceed f64's 53 bits).
        let dt = diff(receiver_ns, self.mid_ns);
        let shift = (self.offset_ms * 1e6 + self.drift_ppm * 1e-6 * dt as f64).round() as i128;
        (i128::from(receiver_ns) - shift).clamp(0, u64::MAX.into()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_is_half_the_difference_of_the_minima() {
        // True one-way delays 50 ms each way, receiver clock 20 ms behind.
        let mut c = ClockSamples::new(0, 11_000_000_000);
        let off: i64 = -20_000_000;
        for i in 0..100u64 {
            let s = 1_000_000_000 + i * 100_000_000;
            let q = (i % 7) * 3_000_000; // queueing on some
            c.forward(s, (s as i64 + 50_000_000 + q as i64 + off) as u64);
            let r = (s + 1_000_000) as i64 + off; // the ACK leaves, on the receiver's clock
            c.reverse(r as u64, s + 1_000_000 + 50_000_000 + q);
        }
        let e = c.estimate().unwrap();
        assert_eq!(e.offset_ns, -20_000_000.0);
        assert_eq!(e.min_round_trip_ms, 100.0);
        assert_eq!(e.drift_ppm, None, "10 s is too short for drift");
        let k = ClockCorrection::from_estimate(&e);
        assert_eq!(k.to_sender(1_000_000_000), 1_020_000_000);
    }

    #[test]
    fn drift_is_found_and_applied_on_a_long_capture() {
        // Receiver clock 100 ppm fast: +6 ms over 60 s.
        let mut c = ClockSamples::new(0, 60_000_000_000);
        let rx = |t: u64| t + t / 10_000;
        for i in 0..600u64 {
            let s = i * 100_000_000;
            c.forward(s, rx(s + 30_000_000));
            c.reverse(rx(s + 40_000_000), s + 70_000_000);
        }
        let e = c.estimate().unwrap();
        let d = e.drift_ppm.unwrap();
        assert!((d - 100.0).abs() < 2.0, "{d}");
        assert!(e.drift_applied);
        let k = ClockCorrection::from_estimate(&e);
        for t in [1_000_000_000u64, 59_000_000_000] {
            let back = k.to_sender(rx(t)) as i64 - t as i64;
            assert!(back.abs() < 100_000, "{t}: {back} ns off");
        }
    }

    #[test]
    fn swapped_captures_have_a_negative_round_trip() {
        let mut c = ClockSamples::new(0, 1_000_000_000);
        // Data "arrives" 50 ms before it is sent and ACKs likewise: the roles are reversed.
        c.forward(100_000_000, 50_000_000);
        c.reverse(200_000_000, 150_000_000);
        assert!(c.estimate().unwrap().min_round_trip_ms < 0.0);
    }
}
