//! Loss models applied at the bottleneck's ingress, per direction.
//!
//! - `none`;
//! - `bernoulli { rate }`: each packet is lost independently with probability `rate`;
//! - `gilbert-elliott { p, r, loss_good, loss_bad }`: a two-state Markov chain advanced once
//!   per packet (Good→Bad with `p`, Bad→Good with `r`, starting Good), then the packet is lost
//!   with the new state's loss probability. Stationary loss rate
//!   `(r·loss_good + p·loss_bad) / (p + r)`;
//! - `positions [i, …]`: exactly the packets with these 1-based indices among all packets
//!   entering that direction of the bottleneck (SYN, SYN-ACK and pure ACKs included) are lost.
//!
//! Random models keep one state and one random stream per (flow, direction), seeded from
//! (run seed, component), so one flow's losses do not depend on the others' packets. The
//! positions model counts all flows' packets in the direction (it is a global script).

use crate::rng::Rng;
use crate::scenario::LossModel;
use rand::Rng as _;

/// The random part of a loss model for one flow in one direction.
#[derive(Debug)]
pub struct FlowLoss {
    rng: Rng,
    bad: bool,
}

impl FlowLoss {
    pub fn new(rng: Rng) -> FlowLoss {
        FlowLoss { rng, bad: false }
    }

    /// Whether the next packet of this flow is lost under `model`; `position` is the 1-based
    /// index of the packet among all packets entering this direction.
    pub fn lose(&mut self, model: &LossModel, position: u64) -> bool {
        match *model {
            LossModel::None => false,
            LossModel::Bernoulli { rate } => rate > 0.0 && self.rng.gen::<f64>() < rate,
            LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.bad { r } else { p };
                if flip > 0.0 && self.rng.gen::<f64>() < flip {
                    self.bad = !self.bad;
                }
                let l = if self.bad { loss_bad } else { loss_good };
                l > 0.0 && self.rng.gen::<f64>() < l
            }
            LossModel::Positions(ref pos) => pos.binary_search(&position).is_ok(),
        }
    }
}

/// The stationary loss rate of a model (positions: 0, as it has no rate).
pub fn stationary_rate(model: &LossModel) -> f64 {
    match *model {
        LossModel::None | LossModel::Positions(_) => 0.0,
        LossModel::Bernoulli { rate } => rate,
        LossModel::GilbertElliott {
            p,
            r,
            loss_good,
            loss_bad,
        } => {
            if p + r == 0.0 {
                loss_good
            } else {
                (r * loss_good + p * loss_bad) / (p + r)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Component};

    fn rate_of(model: &LossModel, n: u64) -> f64 {
        let mut l = FlowLoss::new(stream(
            7,
            Component::Loss {
                flow: 0,
                forward: true,
            },
        ));
        (1..=n).filter(|&i| l.lose(model, i)).count() as f64 / n as f64
    }

    #[test]
    fn bernoulli_rate() {
        for rate in [0.0, 0.005, 0.05, 0.3, 1.0] {
            let m = LossModel::Bernoulli { rate };
            let got = rate_of(&m, 200_000);
            let sd = (rate * (1.0 - rate) / 200_000.0).sqrt();
            assert!(
                (got - rate).abs() <= 5.0 * sd + 1e-12,
                "rate {rate}: got {got}"
            );
        }
    }

    #[test]
    fn gilbert_elliott_stationary() {
        let m = LossModel::GilbertElliott {
            p: 0.01,
            r: 0.2,
            loss_good: 0.001,
            loss_bad: 0.6,
        };
        let expect = stationary_rate(&m);
        assert!((expect - (0.2 * 0.001 + 0.01 * 0.6) / 0.21).abs() < 1e-12);
        let got = rate_of(&m, 1_000_000);
        assert!(
            (got - expect).abs() < 0.1 * expect,
            "expected {expect}, got {got}"
        );
    }

    #[test]
    fn gilbert_elliott_is_bursty() {
        // Mean burst length in Bad with loss_bad = 1 is 1/r.
        let m = LossModel::GilbertElliott {
            p: 0.01,
            r: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut l = FlowLoss::new(stream(
            3,
            Component::Loss {
                flow: 0,
                forward: true,
            },
        ));
        let (mut bursts, mut lost, mut prev) = (0u64, 0u64, false);
        for i in 1..=500_000 {
            let x = l.lose(&m, i);
            if x {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = x;
        }
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 4.0).abs() < 0.3, "mean burst {mean_burst}");
    }

    #[test]
    fn positions_exact() {
        let m = LossModel::Positions(vec![1, 5, 60]);
        let mut l = FlowLoss::new(stream(
            1,
            Component::Loss {
                flow: 0,
                forward: true,
            },
        ));
        let lost: Vec<u64> = (1..=100).filter(|&i| l.lose(&m, i)).collect();
        assert_eq!(lost, vec![1, 5, 60]);
    }
}
