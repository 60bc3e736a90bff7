//! The capture analyser's split of retransmissions into `fast` (ACK-clocked) and `rto`
//! (timer-driven): the heuristic of `flows::classify_retransmission`, at its edges.

use std::net::{IpAddr, Ipv4Addr};
use thinlab_tcp::event::SendKind;
use thinlab_tcp::wire::{Flags, Segment};
use thinlab_trace::flows::{analyze, classify_retransmission, ACK_CLOCKED_WINDOW_NS};
use thinlab_trace::pcap::TcpPacket;

const MS: u64 = 1_000_000;
const T0: u64 = 1_000_000_000_000;
const ISN: u32 = 1000;
const PEER_ISN: u32 = 5000;

fn host(i: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, i))
}

/// A packet from the sender (10.0.0.1:40000) or the receiver (10.0.0.2:5001).
fn pkt(from_sender: bool, ts_ns: u64, seq: u32, ack: u32, flags: Flags, len: u32) -> TcpPacket {
    let (src, dst, sp, dp) = if from_sender {
        (host(1), host(2), 40000, 5001)
    } else {
        (host(2), host(1), 5001, 40000)
    };
    TcpPacket {
        ts_ns,
        src,
        dst,
        seg: Segment {
            src_port: sp,
            dst_port: dp,
            seq,
            ack,
            flags,
            window: 1000,
            ..Segment::default()
        },
        payload_len: len,
        record: 0,
    }
}

/// Handshake, then two 100-byte segments at T0+10 ms and T0+11 ms.
fn start() -> Vec<TcpPacket> {
    let ack = Flags::ACK;
    vec![
        pkt(true, T0, ISN, 0, Flags::SYN, 0),
        pkt(false, T0 + MS, PEER_ISN, ISN + 1, Flags::SYN.union(ack), 0),
        pkt(true, T0 + 2 * MS, ISN + 1, PEER_ISN + 1, ack, 0),
        pkt(true, T0 + 10 * MS, ISN + 1, PEER_ISN + 1, ack, 100),
        pkt(true, T0 + 11 * MS, ISN + 101, PEER_ISN + 1, ack, 100),
    ]
}

/// An ACK for the first segment from the receiver at `at`.
fn ack_first(at: u64) -> TcpPacket {
    pkt(false, at, PEER_ISN + 1, ISN + 101, Flags::ACK, 0)
}

/// A retransmission of the second segment at `at`.
fn rexmit_second(at: u64) -> TcpPacket {
    pkt(true, at, ISN + 101, PEER_ISN + 1, Flags::ACK, 100)
}

fn causes(pk: &[TcpPacket]) -> (u64, u64, u64, u64) {
    let c = &analyze(pk, None)[0].metrics;
    (
        c.retransmissions,
        c.retransmissions_by_cause.fast,
        c.retransmissions_by_cause.rto,
        c.rto_events,
    )
}

#[test]
fn the_window_is_inclusive_and_one_nanosecond_later_is_a_timeout() {
    assert_eq!(ACK_CLOCKED_WINDOW_NS, MS);
    let ack_at = T0 + 60 * MS;
    for (delay, fast) in [
        (0, true),
        (ACK_CLOCKED_WINDOW_NS, true),
        (ACK_CLOCKED_WINDOW_NS + 1, false),
        (200 * MS, false),
    ] {
        let want = if fast {
            SendKind::FastRetransmit
        } else {
            SendKind::Rto
        };
        assert_eq!(classify_retransmission(ack_at + delay, Some(ack_at)), want);
        let mut pk = start();
        pk.push(ack_first(ack_at));
        pk.push(rexmit_second(ack_at + delay));
        let (total, f, r, events) = causes(&pk);
        assert_eq!(total, 1, "delay {delay}");
        assert_eq!((f, r), if fast { (1, 0) } else { (0, 1) }, "delay {delay}");
        // The second segment is the first unacknowledged byte: a timer-driven retransmission
        // of it is one RTO expiry.
        assert_eq!(events, u64::from(!fast), "delay {delay}");
    }
}

#[test]
fn with_no_ack_seen_every_retransmission_is_a_timeout() {
    // The handshake's SYN-ACK is from the receiver but carries the ACK flag: drop it so the
    // sender has seen no ACK at all.
    assert_eq!(classify_retransmission(T0, None), SendKind::Rto);
    let mut pk = start();
    pk.remove(1);
    // 200 ms later: a copy at the same instant would be a capture duplicate, not a
    // retransmission (flows::DUPLICATE_WINDOW_NS).
    pk.push(rexmit_second(T0 + 211 * MS));
    assert_eq!(causes(&pk), (1, 0, 1, 0));
}

#[test]
fn a_retransmission_stamped_before_the_ack_is_ack_clocked() {
    // Non-monotonic capture timestamps: the retransmission's time is before the last ACK's.
    assert_eq!(
        classify_retransmission(T0, Some(T0 + 5 * MS)),
        SendKind::FastRetransmit
    );
    let mut pk = start();
    pk.push(ack_first(T0 + 60 * MS));
    pk.push(rexmit_second(T0 + 30 * MS));
    assert_eq!(causes(&pk), (1, 1, 0, 0));
}

#[test]
fn a_timer_driven_retransmission_above_una_is_no_rto_expiry() {
    // Nothing acknowledged: the retransmission of the *second* segment is timer-driven
    // (counted under `rto`) but is not of the first unacknowledged byte, so no RTO event.
    let mut pk = start();
    pk.push(rexmit_second(T0 + 300 * MS));
    assert_eq!(causes(&pk), (1, 0, 1, 0));
    // Retransmitting the first segment is one; doing it again before any ACK a second
    // (backed-off) one.
    let mut pk = start();
    pk.push(pkt(
        true,
        T0 + 300 * MS,
        ISN + 1,
        PEER_ISN + 1,
        Flags::ACK,
        100,
    ));
    pk.push(pkt(
        true,
        T0 + 900 * MS,
        ISN + 1,
        PEER_ISN + 1,
        Flags::ACK,
        100,
    ));
    assert_eq!(causes(&pk), (2, 0, 2, 2));
    let m = &analyze(&pk, None)[0].metrics;
    assert!(m.frozen_time_ms > 0.0, "{}", m.frozen_time_ms);
}

#[test]
fn new_data_and_bundles_are_never_retransmissions() {
    // A segment carrying old and new bytes is an RDB bundle, not a retransmission, however
    // soon after an ACK it leaves.
    let mut pk = start();
    pk.push(ack_first(T0 + 60 * MS));
    pk.push(pkt(
        true,
        T0 + 60 * MS,
        ISN + 101,
        PEER_ISN + 1,
        Flags::ACK,
        200,
    ));
    let m = &analyze(&pk, None)[0].metrics;
    assert_eq!(m.retransmissions, 0);
    assert_eq!(m.rdb_bundles, 1);
}
