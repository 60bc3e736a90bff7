//! A timer event whose deadline moved later only re-arms its timer (`Sim::timer`): tests that
//! servicing the endpoint in full on such events, as before, changes no result.

use super::Sim;
use crate::Scenario;
use std::cell::Cell;

thread_local! {
    /// Timer events whose deadline had moved later, on this thread.
    pub(super) static EARLY: Cell<u64> = const { Cell::new(0) };
}

/// A timer event whose deadline moved later only re-arms the timer: servicing the endpoint
/// in full instead (as before) changes no result, over the timers of thin streams with RDB
/// and linear timeouts, of an old profile on a 250 Hz timer wheel, of a bulk flow with a
/// small receive buffer and of a server that sends, with losses both ways.
#[test]
fn early_timer_events_only_rearm() {
    let s = Scenario::from_toml_str(
        r#"
        name = "early-timers"
        seed = 5
        duration = "30s"
        [network]
        rtt = "80ms"
        bandwidth = "4Mbit"
        queue_packets = 20
        [network.loss]
        model = "bernoulli"
        rate = 0.03
        [[flow]]
        name = "thin"
        app = { kind = "fixed", payload_bytes = 100, interval = "120ms" }
        tcp = { profile = "linux", mechanisms = ["rdb", "linear-timeouts"] }
        [[flow]]
        name = "old"
        app = { kind = "exponential", payload_bytes = 200, interval = "70ms" }
        tcp = { profile = "linux-2.6.22", clock_hz = 250 }
        [[flow]]
        name = "bulk"
        start = "2s"
        app = { kind = "bulk" }
        tcp = { profile = "linux", recv_buffer = 8192 }
        [[flow]]
        name = "down"
        direction = "reverse"
        app = { kind = "fixed", payload_bytes = 400, interval = "40ms" }
        "#,
    )
    .expect("scenario");
    let run = |full_service: bool| {
        let mut sim = Sim::new(&s, 11);
        sim.service_early_timers = full_service;
        EARLY.with(|n| n.set(0));
        let result = sim.run(&mut |_| {});
        (result, EARLY.with(Cell::get))
    };
    let ((rearm, early), (full, early_full)) = (run(false), run(true));
    assert!(early > 100, "only {early} early timer events");
    assert_eq!(early, early_full);
    assert!(
        rearm
            .flows
            .iter()
            .filter(|f| f.records.bytes_delivered > 0)
            .count()
            >= 4
    );
    assert_eq!(rearm, full);
}
