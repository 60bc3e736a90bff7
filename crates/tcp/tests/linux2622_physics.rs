//! Physics of the `linux-2.6.22` profile (issue "foundation", reproduction targets A.1–A.2):
//! RTO ≈ RTT + 200 ms once the estimator has settled, a lost segment of a thin stream waits
//! one RTO, and a segment lost three times waits RTO·(1+2+4) with exponential backoff.
//! Two endpoints through an in-memory link with a fixed one-way delay (tests/common).

use crate::common;
use common::*;
use std::time::Duration;
use thinlab_tcp::{Event, Instant, Profile, SendKind, TcpConfig};

fn linux() -> TcpConfig {
    TcpConfig::from_profile(Profile::Linux2622)
}

/// Send times of the data segments of A that start at stream offset `off`.
fn sends_of(pair: &Pair, off: u64) -> Vec<(Instant, SendKind)> {
    pair.events_a
        .iter()
        .filter_map(|e| match e {
            Event::Sent {
                at,
                start,
                end,
                kind,
                ..
            } if *start == off && end > start => Some((*at, *kind)),
            _ => None,
        })
        .collect()
}

fn within(d: Duration, target_ms: u64, tol_ms: u64) -> bool {
    let (lo, hi) = (dur(target_ms - tol_ms), dur(target_ms + tol_ms));
    lo <= d && d <= hi
}

#[test]
fn rto_settles_at_rtt_plus_200ms() {
    for (rtt, want) in [(100u64, 300u64), (10, 210)] {
        let mut pair = Pair::new(linux(), linux(), dur(rtt / 2));
        pair.schedule_writes(ms(1000), dur(140), 200, 120);
        pair.run(ms(40_000));
        let rto = pair.a.rto();
        assert!(
            within(rto, want, 5),
            "RTT {rtt} ms: RTO {rto:?}, want {want} ± 5 ms"
        );
    }
}

#[test]
fn single_loss_is_retransmitted_one_rto_after_first_send() {
    let mut pair = Pair::new(linux(), linux(), dur(50));
    pair.schedule_writes(ms(1000), dur(140), 200, 120);
    let lost = 150 * 120; // write 150: the estimator has long settled
    pair.drop_ab.seq = vec![lost];
    let expected = pair.expected_b();
    pair.run(ms(60_000));
    assert_eq!(pair.received_b(), expected);
    let sends = sends_of(&pair, lost);
    assert_eq!(sends.len(), 2, "{sends:?}");
    assert_eq!(sends[1].1, SendKind::Rto);
    let gap = sends[1].0 - sends[0].0;
    assert!(
        within(gap, 300, 5),
        "retransmitted {gap:?} after the first send, want ~300 ms"
    );
}

#[test]
fn triple_loss_waits_rto_times_seven() {
    let mut pair = Pair::new(linux(), linux(), dur(50));
    pair.schedule_writes(ms(1000), dur(140), 200, 120);
    let lost = 150 * 120;
    pair.drop_ab.seq = vec![lost, lost, lost]; // the first send and the next two retransmissions
    let expected = pair.expected_b();
    pair.run(ms(60_000));
    assert_eq!(pair.received_b(), expected);
    let sends = sends_of(&pair, lost);
    assert_eq!(sends.len(), 4, "{sends:?}");
    assert!(sends[1..].iter().all(|s| s.1 == SendKind::Rto));
    let rto = 300;
    for (k, mult) in [(1usize, 1u64), (2, 3), (3, 7)] {
        let waited = sends[k].0 - sends[0].0;
        assert!(
            within(waited, rto * mult, 5 * mult),
            "retransmission {k} after {waited:?}, want {} ms",
            rto * mult
        );
    }
    // Target A.2's "200·(1+2+4) = 1400 ms" is the same rule with the RTO at its 200 ms floor.
    assert_eq!(pair.a.stats().rto_events, 3);
}
