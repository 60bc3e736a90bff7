//! Run health: every flow's `status` (completed exactly when every write was delivered), why
//! a flow did not complete, and goodput over the flow's active time (never above the link).

use proptest::prelude::*;
use thinlab_sim::{run, Scenario};
use thinlab_trace::{flow_metrics, FlowStatus};

fn scenario(s: &str) -> Scenario {
    Scenario::from_toml_str(s).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn bulk_goodput_never_exceeds_the_bottleneck() {
    for cc in ["newreno", "cubic"] {
        let s = scenario(&format!(
            r#"
name = "bulk"
duration = "10s"
[network]
rtt = "50ms"
bandwidth = "1Mbit"
queue_packets = 20
[[flow]]
app = {{ kind = "bulk" }}
tcp = {{ profile = "linux", cc = "{cc}" }}
"#
        ));
        let r = run(&s, 1);
        let f = &r.flows[0];
        let m = flow_metrics(&f.records, f.duration);
        let goodput = m.goodput_bps.unwrap();
        // The bottleneck carries headers too: payload goodput is below 1 Mbit/s, but not far.
        assert!(
            goodput <= 1e6,
            "{cc}: goodput {goodput} bit/s on a 1 Mbit/s link"
        );
        assert!(goodput > 0.8e6, "{cc}: goodput {goodput} bit/s");
        // Bytes delivered while the run drained count, and so does the time they took.
        assert!(m.duration_s > 10.0, "{cc}: active {} s", m.duration_s);
        assert_eq!(f.status, FlowStatus::Completed);
    }
}

#[test]
fn a_connection_that_never_opens_says_so() {
    let s = scenario(
        r#"
name = "dead"
duration = "10s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.loss]
model = "bernoulli"
rate = 1.0
[[flow]]
app = { kind = "fixed", payload_bytes = 100, interval = "100ms" }
"#,
    );
    let r = run(&s, 1);
    let f = &r.flows[0];
    assert_eq!(f.status, FlowStatus::NeverEstablished);
    assert!(
        f.status_reason.as_deref().unwrap().contains("SYN"),
        "{:?}",
        f.status_reason
    );
}

#[test]
fn a_connection_that_dies_is_aborted_and_its_writes_are_censored() {
    // Every data packet after the 5th is lost: the connection dies of retransmission timeouts.
    let positions: Vec<String> = (6..400).map(|i| i.to_string()).collect();
    let s = scenario(&format!(
        r#"
name = "dies"
duration = "1000s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.forward.loss]
model = "positions"
positions = [{}]
[[flow]]
app = {{ kind = "fixed", payload_bytes = 100, interval = "1s" }}
"#,
        positions.join(", ")
    ));
    let r = run(&s, 1);
    let f = &r.flows[0];
    assert_eq!(f.status, FlowStatus::Aborted, "{:?}", f.status_reason);
    assert!(
        f.status_reason
            .as_deref()
            .unwrap()
            .contains("retransmission timeouts"),
        "{:?}",
        f.status_reason
    );
    let m = flow_metrics(&f.records, f.duration);
    assert!(m.writes_undelivered > 0);
    assert_eq!(m.writes, m.writes_delivered + m.writes_undelivered);
    assert_eq!(m.app_latency_ms.censored, m.writes_undelivered);
    assert_eq!(m.app_latency_ms.count, m.writes_delivered);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// `completed` exactly when every write was delivered (the source writes at least once
    /// whenever the connection opens, so an empty flow never completes).
    #[test]
    fn completed_exactly_when_every_write_was_delivered(
        loss in prop_oneof![Just(0.0), 0.0f64..0.5, Just(0.9)],
        seed in 0u64..1000,
    ) {
        let s = scenario(&format!(
            r#"
name = "prop"
duration = "3s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
[network.loss]
model = "bernoulli"
rate = {loss}
[[flow]]
app = {{ kind = "fixed", payload_bytes = 100, interval = "200ms" }}
"#
        ));
        let r = run(&s, seed);
        for f in &r.flows {
            let m = flow_metrics(&f.records, f.duration);
            let all = m.writes > 0 && m.writes_undelivered == 0;
            prop_assert_eq!(f.status == FlowStatus::Completed, all, "{:?} {:?}", f.status, f.status_reason);
            prop_assert_eq!(f.status_reason.is_none(), all);
            if r.drain_bound_hit && !all && f.status != FlowStatus::NeverEstablished {
                prop_assert!(matches!(f.status, FlowStatus::DrainBoundHit | FlowStatus::Aborted));
            }
        }
    }
}
