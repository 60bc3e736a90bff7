//! Loss recovery's shortcut for an ACK that can change nothing (`recovery/manager/quiet.rs`)
//! leaves every state as the full fourteen steps would: two pairs of endpoints run the same
//! drawn transfer (`common::drawn_transfer`: every profile, congestion controller, mechanism
//! set and RDB variant; drops, reordering and duplication both ways) in lockstep, one with the
//! shortcut and one without. B's every data segment is a quiet ACK. Every 5 ms of virtual
//! time (for the first 120 s, then once at the end) the two pairs' loss-recovery and timer
//! states, trace events and delivered bytes must be equal.

use crate::common;
use common::*;
use proptest::prelude::*;

/// The state text of an endpoint, without the switch itself.
fn state(ep: &thinlab_tcp::Endpoint) -> String {
    ep.recovery_state_text()
        .replace("quiet_shortcut: false", "quiet_shortcut: true")
}

fn lockstep(t: &DrawnTransfer) -> Result<(), TestCaseError> {
    let (mut with, mut without) = (t.pair(), t.pair());
    without.a.set_quiet_ack_shortcut(false);
    without.b.set_quiet_ack_shortcut(false);
    let expected = with.expected_b();
    let mut t = ms(0);
    let end = ms(120_000);
    while t < end {
        t += dur(5);
        with.run(t);
        without.run(t);
        prop_assert_eq!(state(&with.a), state(&without.a), "A at {:?}", t);
        prop_assert_eq!(state(&with.b), state(&without.b), "B at {:?}", t);
        prop_assert_eq!(&with.events_a, &without.events_a);
        prop_assert_eq!(&with.events_b, &without.events_b);
        if with.b.peer_closed() && without.b.peer_closed() && t > ms(60_000) {
            break;
        }
    }
    // a transfer still going (long backoffs) runs to its end in one step, and ends alike
    with.run(ms(10_000_000));
    without.run(ms(10_000_000));
    prop_assert_eq!(state(&with.a), state(&without.a));
    prop_assert_eq!(state(&with.b), state(&without.b));
    prop_assert_eq!(&with.events_a, &without.events_a);
    prop_assert_eq!(&with.events_b, &without.events_b);
    prop_assert_eq!(with.received_b(), without.received_b());
    prop_assert_eq!(with.received_b(), expected);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn quiet_ack_shortcut_changes_no_state(t in drawn_transfer()) {
        lockstep(&t)?;
    }
}
