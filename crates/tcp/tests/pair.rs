//! Pair tests: two endpoints through an in-memory link with a fixed one-way delay and
//! scripted drops; delivery, byte equality and per-write latency.

use crate::common;
use common::*;
use proptest::prelude::*;
use std::time::Duration;
use thinlab_tcp::{Event, Profile, SendKind, State, TcpConfig};

fn thin_cfg() -> TcpConfig {
    let mut c = TcpConfig::from_profile(Profile::Linux2622);
    c.nodelay = true;
    c
}

fn count_kind(evs: &[Event], k: SendKind) -> usize {
    evs.iter()
        .filter(|e| matches!(e, Event::Sent { kind, .. } if *kind == k))
        .count()
}

#[test]
fn lossless_bulk_transfer_and_close() {
    for profile in Profile::ALL {
        let c = TcpConfig::from_profile(profile);
        let mut pair = Pair::new(c.clone(), c, dur(10));
        pair.schedule_writes(ms(100), dur(0), 1, 20_000);
        let expected = pair.expected_b();
        pair.close_a_at = Some(ms(101));
        pair.run(ms(200_000));
        assert_eq!(pair.received_b(), expected, "{profile:?}");
        assert!(pair.b.peer_closed());
        assert_eq!(pair.a.state(), State::Closed, "{profile:?}: TIME-WAIT over");
        assert_eq!(pair.b.state(), State::Closed, "{profile:?}");
        assert_eq!(
            pair.a.stats().retransmissions_rto + pair.a.stats().retransmissions_fast,
            0
        );
        assert!(pair.events_a.iter().any(|e| matches!(
            e,
            Event::StateChanged {
                to: State::TimeWait,
                ..
            }
        )));
    }
}

#[test]
fn thin_stream_without_loss_has_one_way_latency() {
    let mut pair = Pair::new(thin_cfg(), thin_cfg(), dur(50));
    let times = pair.schedule_writes(ms(1000), dur(150), 20, 100);
    pair.run(ms(10_000));
    for (k, t) in times.iter().enumerate() {
        assert_eq!(pair.b_has(100 * (k + 1)), Some(*t + dur(50)), "write {k}");
    }
    // Linux receiver, application reading at once: each small segment is acknowledged when
    // the read empties the queue, so RTT samples are the path RTT and RTO = RTT + 200 ms
    // (reproduction target: ~300 ms at 100 ms RTT)
    assert_eq!(pair.a.rtt_latest(), Some(dur(100)));
    assert_eq!(pair.a.srtt(), Some(dur(100)));
    assert_eq!(pair.a.rto(), dur(300));
}

#[test]
fn receiver_that_does_not_read_delays_acks() {
    let mut pair = Pair::new(thin_cfg(), thin_cfg(), dur(50));
    pair.b_reads = false;
    pair.schedule_writes(ms(1000), dur(150), 20, 100);
    pair.run(ms(10_000));
    // after 16 quick ACKs the delayed-ACK timer (ATO 40 ms, doubled on each expiry, capped at
    // the receiver's SRTT of 100 ms) decides
    let latest = pair.a.rtt_latest().unwrap();
    assert_eq!(latest, dur(200));
    assert_eq!(pair.b.rcv_nxt(), 2000);
}

#[test]
fn thin_stream_loss_is_repaired_by_rto() {
    let mut pair = Pair::new(thin_cfg(), thin_cfg(), dur(50));
    let times = pair.schedule_writes(ms(1000), dur(150), 10, 100);
    let expected = pair.expected_b();
    pair.drop_ab.seq = vec![300]; // the fourth write
    pair.run(ms(20_000));
    assert_eq!(pair.received_b(), expected);
    let rto = Duration::from_millis(300); // Linux: RTT 100 ms + 200 ms
    let t3 = times[3];
    // write 3 is delivered after its retransmission: t3 + RTO + one-way delay (RTO timer
    // restarted by the ACK of write 2 at t2 + RTT = t3 - 50 ms)
    let got = pair.b_has(400).unwrap();
    assert!(
        got >= t3 + (rto - dur(50)) && got <= t3 + rto + dur(60),
        "latency {:?}",
        got - t3
    );
    // head-of-line blocking: write 4 is delivered together with write 3
    assert_eq!(pair.b_has(500), Some(got));
    assert_eq!(pair.a.stats().rto_events, 1);
    assert_eq!(count_kind(&pair.events_a, SendKind::Rto), 1);
    assert_eq!(
        count_kind(&pair.events_a, SendKind::FastRetransmit),
        0,
        "too few dupACKs in a thin stream"
    );
}

#[test]
fn bulk_loss_is_repaired_by_fast_retransmit() {
    for sack in [false, true] {
        let mut c = TcpConfig::from_profile(Profile::Linux2622);
        c.sack = sack;
        c.initial_window = 10;
        let mut pair = Pair::new(c.clone(), c, dur(20));
        pair.schedule_writes(ms(500), dur(0), 1, 100_000);
        let expected = pair.expected_b();
        pair.drop_ab.seq = vec![1448 * 3, 1448 * 6];
        pair.run(ms(30_000));
        assert_eq!(pair.received_b(), expected, "sack={sack}");
        let st = pair.a.stats();
        assert_eq!(st.rto_events, 0, "sack={sack}");
        assert_eq!(st.retransmissions_fast, 2, "sack={sack}");
        assert_eq!(pair.a.negotiated().sack, sack);
    }
}

#[test]
fn dropped_syn_and_dropped_acks() {
    let mut c = thin_cfg();
    c.rto_initial = dur(1000);
    let mut pair = Pair::new(c.clone(), c, dur(10));
    pair.drop_ab.nth = vec![1]; // the SYN
    pair.drop_ba.blackout = Some((ms(1500), ms(1800)));
    pair.schedule_writes(ms(1100), dur(100), 10, 50);
    let expected = pair.expected_b();
    pair.run(ms(20_000));
    assert_eq!(pair.received_b(), expected);
    assert!(pair.events_a.iter().any(
        |e| matches!(e, Event::StateChanged { at, to: State::Established, .. } if *at == ms(1020))
    ));
    assert_eq!(pair.a.bytes_unacked(), 0);
}

#[test]
fn data_both_directions() {
    let c = TcpConfig::from_profile(Profile::FreeBsd6);
    let mut pair = Pair::new(c.clone(), c, dur(5));
    pair.run(ms(100));
    pair.b.write(ms(100), b"hello from b").unwrap();
    pair.a.write(ms(100), b"hello from a").unwrap();
    pair.run(ms(1000));
    assert_eq!(pair.received_b(), b"hello from a");
    let got_a: Vec<u8> = pair
        .read_a
        .iter()
        .flat_map(|(_, b)| b.iter().copied())
        .collect();
    assert_eq!(got_a, b"hello from b");
}

#[test]
fn receiver_window_limits_and_reopens() {
    let mut ca = TcpConfig::from_profile(Profile::Ns2);
    ca.send_buffer = 1 << 20;
    let mut cb = ca.clone();
    cb.recv_buffer = 3000;
    let mut pair = Pair::new(ca, cb, dur(5));
    pair.schedule_writes(ms(100), dur(0), 1, 50_000);
    let expected = pair.expected_b();
    pair.run(ms(60_000));
    assert_eq!(pair.received_b(), expected);
    assert!(pair.a.stats().data_segments_sent >= 50);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    /// Any drop pattern: the receiver's byte stream equals the sender's and the run ends.
    #[test]
    fn any_drops_deliver_the_same_bytes(
        drops_ab in proptest::collection::vec(2usize..80, 0..8),
        drops_ba in proptest::collection::vec(2usize..80, 0..8),
        sack: bool, ts: bool, writes in 1usize..30, size in 1usize..3000,
        profile in 0usize..5, cc in 0usize..4, mech in 0u8..128, variant in 0usize..3,
    ) {
        let mut c = drawn(profile, cc, mech, variant);
        c.sack = sack;
        c.timestamps = ts;
        c.send_buffer = 1 << 20;
        let mut pair = Pair::new(c.clone(), c, dur(15));
        pair.drop_ab.nth = drops_ab;
        pair.drop_ba.nth = drops_ba;
        pair.schedule_writes(ms(100), dur(30), writes, size);
        let expected = pair.expected_b();
        pair.close_a_at = Some(ms(100) + dur(30) * writes as u32);
        pair.run(ms(3_000_000));
        prop_assert_eq!(pair.received_b(), expected);
        prop_assert!(pair.b.peer_closed());
    }
}

/// Loss, reordering and duplication in both directions: the same bytes, the run ends, and
/// the sender's bookkeeping is clean at the end.
fn reordering_duplication_holds(t: &DrawnTransfer) -> Result<(), TestCaseError> {
    let mut pair = t.pair();
    let expected = pair.expected_b();
    pair.run(ms(10_000_000));
    prop_assert_eq!(pair.received_b(), expected);
    prop_assert!(pair.b.peer_closed());
    prop_assert_eq!(pair.a.bytes_unacked(), 0);
    prop_assert_eq!(pair.a.packets_out(), 0);
    prop_assert_eq!(pair.a.state(), State::Closed);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn any_drops_reordering_duplication(t in drawn_transfer()) {
        reordering_duplication_holds(&t)?;
    }
}

/// A case proptest once found: B's first segment (its SYN-ACK) lost, one write of one byte.
#[test]
fn syn_ack_lost_then_one_byte() {
    let t = DrawnTransfer {
        drops_ba: vec![1],
        writes: 1,
        size: 1,
        ..DrawnTransfer::default()
    };
    reordering_duplication_holds(&t).unwrap();
}
