//! Whether a flow is done is asked only after its sender's or its client's service
//! (`flow_end::service_may_end`): tests that asking after every service, as before, changes no
//! result.

use super::Sim;
use crate::{RunResult, Scenario};

/// Runs `toml` as built and with every service asking whether the flow is done; both results
/// must be equal.
fn run_both_ways(toml: &str) -> RunResult {
    let s = Scenario::from_toml_str(toml).expect("scenario");
    let run = |every_service_asks: bool| {
        let mut sim = Sim::new(&s, 3);
        sim.every_service_asks_done = every_service_asks;
        sim.run(&mut |_| {})
    };
    let (as_built, asking) = (run(false), run(true));
    assert_eq!(as_built, asking);
    as_built
}

/// Flows that complete both ways (the sender is the client, or the server), with loss both
/// ways, beside a thin stream that runs to the end.
#[test]
fn flows_complete_as_when_every_service_asked() {
    let r = run_both_ways(
        r#"
        name = "done"
        seed = 2
        duration = "20s"
        [network]
        rtt = "60ms"
        bandwidth = "5Mbit"
        queue_packets = 30
        [network.loss]
        model = "bernoulli"
        rate = 0.02
        [[flow]]
        name = "up"
        app = { kind = "bulk", bytes = "300KB" }
        [[flow]]
        name = "down"
        direction = "reverse"
        start = "1s"
        app = { kind = "bulk", bytes = "200KB" }
        [[flow]]
        name = "thin"
        app = { kind = "fixed", payload_bytes = 120, interval = "100ms" }
        "#,
    );
    assert_eq!(r.flows.iter().filter(|f| f.completed).count(), 3);
}

/// A server that would send, whose client gives up on its SYN (the forward direction loses
/// everything): the client is the receiver, and its giving up ends the flow and the run.
#[test]
fn a_receiving_client_that_gives_up_ends_the_run() {
    let r = run_both_ways(
        r#"
        name = "done-dead"
        seed = 2
        duration = "600s"
        [network]
        rtt = "60ms"
        bandwidth = "5Mbit"
        [network.forward.loss]
        model = "bernoulli"
        rate = 1.0
        [[flow]]
        name = "down"
        direction = "reverse"
        app = { kind = "fixed", payload_bytes = 120, interval = "100ms" }
        "#,
    );
    assert!(!r.flows[0].completed);
    assert!(
        r.end_time.as_nanos() < 300_000_000_000,
        "the run went on to {:?} after the client gave up",
        r.end_time
    );
}
