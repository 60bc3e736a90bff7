//! The event calendar (`EventQueue::with_calendar`, on for many flows) changes no result: runs
//! with it, in rings from far shorter than a round trip (most events in its overflow) to the
//! default, equal the run with every event in the heap.

use super::{Sim, CALENDAR_BITS, CALENDAR_SHIFT};
use crate::Scenario;

/// Thin streams on a lossy path with jitter (timers backed off to seconds), a bulk flow, a
/// server that sends, and flows with access links (lanes whose next event falls beyond the
/// horizon).
fn scenario() -> Scenario {
    let mut toml = String::from(
        r#"
        name = "calendar"
        seed = 9
        duration = "25s"
        [network]
        rtt = "70ms"
        bandwidth = "3Mbit"
        queue_packets = 25
        jitter = "1ms"
        [network.loss]
        model = "bernoulli"
        rate = 0.08
        [[flow]]
        name = "bulk"
        start = "3s"
        app = { kind = "bulk" }
        [[flow]]
        name = "down"
        direction = "reverse"
        app = { kind = "fixed", payload_bytes = 400, interval = "45ms" }
        "#,
    );
    for i in 0..30 {
        toml.push_str(&format!(
            "[[flow]]\nname = \"thin{i}\"\nstart = \"{}ms\"\nrtt = \"{}ms\"\naccess_bandwidth = \"20Mbit\"\n\
             app = {{ kind = \"exponential\", payload_bytes = 120, interval = \"{}ms\" }}\n",
            i * 37,
            5 + i % 4,
            60 + 10 * (i % 5)
        ));
    }
    Scenario::from_toml_str(&toml).expect("scenario")
}

#[test]
fn a_calendar_changes_no_result() {
    let s = scenario();
    let run = |calendar| Sim::with_queue(&s, 4, false, calendar).run(&mut |_| {});
    let heap = run(None);
    let delivering = heap.flows.iter().filter(|f| f.records.bytes_delivered > 0);
    assert_eq!(delivering.count(), 32);
    assert!(
        heap.flows
            .iter()
            .map(|f| f.sender_stats.rto_events)
            .sum::<u64>()
            > 20
    );
    for calendar in [(12, 6), (16, 8), (CALENDAR_SHIFT, CALENDAR_BITS), (24, 6)] {
        assert_eq!(run(Some(calendar)), heap, "calendar {calendar:?}");
    }
}

/// On for thousands of flows whose state is prefetched, off otherwise.
#[test]
fn on_only_for_many_prefetched_flows() {
    use super::{calendar_worth_it, CALENDAR_FROM_FLOWS};
    if std::env::var_os("THINLAB_CALENDAR").is_some() {
        return;
    }
    assert!(calendar_worth_it(10_000, true));
    assert!(calendar_worth_it(CALENDAR_FROM_FLOWS, true));
    assert!(!calendar_worth_it(CALENDAR_FROM_FLOWS - 1, true));
    assert!(!calendar_worth_it(10_000, false));
}
