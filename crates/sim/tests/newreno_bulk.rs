//! A bulk NewReno flow under random loss, compared with the steady-state TCP throughput model
//! of Padhye et al. (SIGCOMM 1998, "Modeling TCP Throughput", eq. 31, the "full model" with
//! timeouts) and the simpler square-root law of Mathis et al. (CCR 1997):
//!   B(p) ≈ 1 / (RTT·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²))   segments per second
//! with b = segments acknowledged per ACK (1: delayed ACK off) and T0 the RTO.
//! The model is approximate (±30–40 % against measurements in the paper), so the test accepts
//! a band around it; the point is that the loss response has the right shape and scale.
//! Measured (seed 7, 300 s, RTT 100 ms, MSS 1448): goodput/model = 1.51 at 0.5 %, 1.24 at 1 %,
//! 1.27 at 2 % (NewReno), 1.21 at 1 % (SACK). We sit above the model because it assumes that a
//! loss takes the rest of its round with it (correlated losses), so it charges each loss
//! event more than independent Bernoulli losses cost; and NewReno/SACK repair several losses of
//! one window with a single halving.

use thinlab_sim::{run, Scenario};

fn padhye_bps(mss: f64, rtt: f64, t0: f64, p: f64, b: f64) -> f64 {
    let denom = rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    mss * 8.0 / denom
}

fn goodput(loss: f64, sack: bool) -> f64 {
    let s = Scenario::from_toml_str(&format!(
        r#"
name = "bulk-loss"
duration = "300s"
[network]
rtt = "100ms"
bandwidth = "100Mbit"
[network.forward.loss]
model = "bernoulli"
rate = {loss}
[[flow]]
app = {{ kind = "bulk" }}
tcp = {{ profile = "linux-2.6.22", delayed_ack = "off", sack = {sack}, send_buffer = 4194304, recv_buffer = 4194304 }}
"#
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let r = run(&s, 7);
    let f = &r.flows[0];
    f.records.bytes_delivered as f64 * 8.0 / f.duration.as_secs_f64()
}

#[test]
fn newreno_bulk_throughput_follows_the_padhye_model() {
    for (p, sack) in [(0.005, false), (0.01, false), (0.02, false), (0.01, true)] {
        let got = goodput(p, sack);
        // RTO ≈ RTT + 200 ms for the linux-2.6.22 profile
        let model = padhye_bps(1448.0, 0.1, 0.3, p, 1.0);
        let ratio = got / model;
        eprintln!(
            "loss {p} sack {sack}: goodput {:.0} bit/s, Padhye {:.0} bit/s, ratio {ratio:.2}",
            got, model
        );
        assert!(
            (0.6..=1.6).contains(&ratio),
            "loss {p} sack {sack}: ratio {ratio:.2}"
        );
    }
}

#[test]
fn throughput_falls_with_loss_as_one_over_sqrt_p() {
    let g1 = goodput(0.0025, false);
    let g4 = goodput(0.01, false);
    // quadrupling p halves throughput in the square-root regime (timeouts make it a bit more)
    let ratio = g1 / g4;
    assert!(
        (1.6..=2.8).contains(&ratio),
        "g(0.25 %)/g(1 %) = {ratio:.2}"
    );
}
