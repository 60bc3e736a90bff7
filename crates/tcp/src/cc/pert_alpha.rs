//! Adaptive PERT's additive increase α (Kotla and Reddy, "Making a delay-based protocol adaptive
//! to heterogeneous environments"; full citation in docs/references.md): a PERT flow that shares a
//! queue with loss-based flows raises its increase above one segment per RTT, towards the ratio
//! of how often it backs off early to how often it loses, so that it keeps its share; on an empty
//! path it raises it to scale; otherwise it decays back to 1.
//!
//! Behaviour (the paper's, as its ns-3 port `TcpPertRed` shows it; read, not copied):
//! * Every ACK that grows the window counts towards the packets since the last loss (n_d) and
//!   since the last early response (n_er). A loss event or an early response closes its interval;
//!   the last 8 intervals, weighted as TFRC's loss intervals (RFC 5348 §5.4: 1, 1, 1, 1, 0.8, 0.6,
//!   0.4, 0.2, newest first), give a mean interval I and a probability 1/I (p_drop, p_er).
//! * Each such ACK classifies the queueing delay q against max_q = max(10 ms, max_rtt − min_rtt):
//!   q ≤ T_min is the *high-speed* region, q ≥ max_q/2 the *competitive* region, counted; any
//!   other q (the *safe* region) clears both counts.
//! * Every 5·srtt_0.99: if the competitive count reached cwnd, α moves up by 0.1 towards the
//!   target 1 + p_er/p_drop (reached at q ≥ 0.65·max_q; from 1 at max_q/2 along the paper's
//!   hyperbola; without a loss yet, towards α_max), and down to the target at once if above it;
//!   else if the high-speed count reached cwnd, α += 0.5; else α ← max(0.9·α, 1). α ≤ α_max = 32.
//!   The counts restart.

use super::pert::T_MIN;
use crate::time::Instant;
use std::time::Duration;

/// The largest additive increase, segments per RTT.
pub const ALPHA_MAX: f64 = 32.0;
/// TFRC's interval weights, newest first (RFC 5348 §5.4).
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// The last 8 closed intervals (packets), newest first.
#[derive(Clone, Debug, Default, PartialEq)]
struct Intervals(Vec<u64>);

impl Intervals {
    fn close(&mut self, n: u64) {
        self.0.insert(0, n);
        self.0.truncate(WEIGHTS.len());
    }
    /// 1 / the weighted mean interval; 0 before the first interval.
    fn probability(&self) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let w = &WEIGHTS[..self.0.len()];
        let sum: f64 = self.0.iter().zip(w).map(|(&n, &w)| n as f64 * w).sum();
        let mean = sum / w.iter().sum::<f64>();
        if mean > 0.0 {
            1.0 / mean
        } else {
            1.0
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveAlpha {
    alpha: f64,
    since_loss: u64,
    since_early: u64,
    losses: Intervals,
    early: Intervals,
    compete: u64,
    highspeed: u64,
    last_update: Option<Instant>,
}

impl Default for AdaptiveAlpha {
    fn default() -> Self {
        AdaptiveAlpha {
            alpha: 1.0,
            since_loss: 0,
            since_early: 0,
            losses: Intervals::default(),
            early: Intervals::default(),
            compete: 0,
            highspeed: 0,
            last_update: None,
        }
    }
}

impl AdaptiveAlpha {
    /// Segments per RTT of additive increase.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn on_loss(&mut self) {
        self.losses.close(self.since_loss);
        self.since_loss = 0;
    }
    pub fn on_early_response(&mut self) {
        self.early.close(self.since_early);
        self.since_early = 0;
    }

    /// An ACK that grows the window: queueing delay `q`, `max_q`, smoothed RTT `srtt`.
    pub fn on_ack(
        &mut self,
        now: Instant,
        q: Duration,
        max_q: Duration,
        srtt: Duration,
        cwnd: u32,
    ) {
        self.since_loss += 1;
        self.since_early += 1;
        if q <= T_MIN {
            self.highspeed += 1;
        } else if q >= max_q / 2 {
            self.compete += 1;
        } else {
            self.compete = 0;
            self.highspeed = 0;
        }
        let last = *self.last_update.get_or_insert(now);
        if now.saturating_duration_since(last) < srtt * 5 {
            return;
        }
        let cwnd = cwnd as u64;
        if self.compete >= cwnd {
            let p_drop = self.losses.probability();
            let target = if p_drop > 0.0 {
                competitive_target(1.0 + self.early.probability() / p_drop, q, max_q)
            } else {
                ALPHA_MAX
            };
            self.alpha = (self.alpha + 0.1).min(target);
        } else if self.highspeed >= cwnd {
            self.alpha += 0.5;
        } else {
            self.alpha *= 0.9;
        }
        self.alpha = self.alpha.clamp(1.0, ALPHA_MAX);
        self.compete = 0;
        self.highspeed = 0;
        self.last_update = Some(now);
    }
}

/// The competitive region's target: `full` (= 1 + p_er/p_drop) from 0.65·max_q on, rising from 1
/// at max_q/2 along 1 + (full − 1)·(16/15)·(1 − 0.01·max_q / (q − 0.49·max_q)).
fn competitive_target(full: f64, q: Duration, max_q: Duration) -> f64 {
    let (q, m) = (q.as_secs_f64(), max_q.as_secs_f64());
    if q > m / 2.0 && q < 0.65 * m {
        1.0 + (full - 1.0) * (16.0 / 15.0) * (1.0 - 0.01 * m / (q - 0.49 * m))
    } else {
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn tfrc_weighted_probability() {
        let mut i = Intervals::default();
        assert_eq!(i.probability(), 0.0);
        i.close(10);
        assert!((i.probability() - 0.1).abs() < 1e-12);
        for _ in 0..3 {
            i.close(10);
        }
        i.close(40); // newest: (40 + 10·3 + 10·0.8) / 4.8
        let want = 4.8 / 78.0;
        assert!((i.probability() - want).abs() < 1e-12);
        for _ in 0..20 {
            i.close(5);
        }
        assert_eq!(i.0.len(), 8);
        assert!((i.probability() - 0.2).abs() < 1e-12);
    }

    #[test]
    fn target_is_continuous_at_the_region_edges() {
        let m = ms(100);
        assert!((competitive_target(5.0, ms(50) + Duration::from_micros(1), m) - 1.0).abs() < 0.01);
        assert!((competitive_target(5.0, ms(65), m) - 5.0).abs() < 1e-9);
        assert_eq!(competitive_target(5.0, ms(80), m), 5.0);
    }

    /// Drives `a` with ACKs 10 ms apart at queueing delay `q` (max_q 100 ms, srtt 100 ms,
    /// cwnd 2) for `n` ACKs, with a loss every `loss_every` and an early response every
    /// `early_every` ACKs.
    fn drive(
        a: &mut AdaptiveAlpha,
        clock: &mut u64,
        q: Duration,
        n: u64,
        loss_every: u64,
        early_every: u64,
    ) {
        for i in 1..=n {
            *clock += 10;
            a.on_ack(Instant::from_millis(*clock), q, ms(100), ms(100), 2);
            if i % loss_every == 0 {
                a.on_loss();
            }
            if i % early_every == 0 {
                a.on_early_response();
            }
        }
    }

    #[test]
    fn competitive_region_climbs_towards_the_ratio_of_early_responses_to_losses() {
        let mut a = AdaptiveAlpha::default();
        let t = &mut 0;
        // early response every 5 ACKs, loss every 40: target 1 + 8 = 9
        drive(&mut a, t, ms(80), 200, 40, 5);
        let after_40_updates = a.alpha();
        assert!(
            after_40_updates > 1.0 && after_40_updates < 9.0,
            "{after_40_updates}"
        );
        drive(&mut a, t, ms(80), 20_000, 40, 5);
        assert!((a.alpha() - 9.0).abs() < 1e-9, "{}", a.alpha());
        // the safe region decays it back to 1
        drive(&mut a, t, ms(20), 20_000, 40, 5);
        assert_eq!(a.alpha(), 1.0);
        // an empty path: +0.5 per update, up to α_max
        drive(&mut a, t, ms(2), 20_000, u64::MAX, u64::MAX);
        assert_eq!(a.alpha(), ALPHA_MAX);
    }
}
