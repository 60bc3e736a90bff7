//! The capture analyser's attribution of retransmissions to fast / early / RACK / TLP / RTO
//! by their timing against the ACK stream (`thinlab_trace::attribution`), at its edges.

use std::net::{IpAddr, Ipv4Addr};
use thinlab_tcp::wire::{Flags, Segment};
use thinlab_trace::flows::{analyze, ACK_CLOCKED_WINDOW_NS};
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

/// (retransmissions, fast, early, rack, tlp, rto, rto_events).
fn causes(pk: &[TcpPacket]) -> (u64, u64, u64, u64, u64, u64, u64) {
    let m = &analyze(pk, None)[0].metrics;
    let c = &m.retransmissions_by_cause;
    (
        m.retransmissions,
        c.fast,
        c.early,
        c.rack,
        c.tlp,
        c.rto,
        m.rto_events,
    )
}

/// A duplicate ACK of the handshake (nothing acknowledged) at `at`, with a SACK block for
/// the second segment or without.
fn dupack(at: u64, sack: bool) -> TcpPacket {
    let mut p = pkt(false, at, PEER_ISN + 1, ISN + 1, Flags::ACK, 0);
    if sack {
        p.seg.options.sack_blocks.push((ISN + 101, ISN + 201));
    }
    p
}

fn rexmit_first(at: u64) -> TcpPacket {
    pkt(true, at, ISN + 1, PEER_ISN + 1, Flags::ACK, 100)
}

#[test]
fn the_ack_clocked_window_is_inclusive() {
    assert_eq!(ACK_CLOCKED_WINDOW_NS, MS);
    // The ACK advances the cumulative point (an RTT sample of 50 ms): a retransmission within
    // 1 ms of it is recovery (fast); 1 ns later it is timer-driven, and leaving only 50 ms
    // after the last transmission it can only be a tail loss probe (no RTO is that short).
    let ack_at = T0 + 60 * MS;
    for (delay, want) in [
        (0, (1, 1, 0, 0, 0, 0, 0)),
        (ACK_CLOCKED_WINDOW_NS, (1, 1, 0, 0, 0, 0, 0)),
        (ACK_CLOCKED_WINDOW_NS + 1, (1, 0, 0, 0, 1, 0, 0)),
    ] {
        let mut pk = start();
        pk.push(ack_first(ack_at));
        pk.push(rexmit_second(ack_at + delay));
        assert_eq!(causes(&pk), want, "delay {delay}");
    }
}

#[test]
fn a_timeout_of_the_only_outstanding_segment_after_srtt_plus_200ms_is_an_rto() {
    // SRTT 50 ms: a probe would fire well before 3/4 of 250 ms after the last send; 250 ms
    // after it, the retransmission of the first unacknowledged (and only) segment is an RTO.
    let mut pk = start();
    pk.push(ack_first(T0 + 60 * MS));
    pk.push(rexmit_second(T0 + 261 * MS));
    assert_eq!(causes(&pk), (1, 0, 0, 0, 0, 1, 1));
    // Again 500 ms later, without an ACK: a backed-off RTO.
    pk.push(rexmit_second(T0 + 761 * MS));
    assert_eq!(causes(&pk), (2, 0, 0, 0, 0, 2, 2));
}

#[test]
fn a_first_timeout_probing_the_highest_segment_is_a_tail_loss_probe() {
    // No ACK seen at all (SYN-ACK dropped): the retransmission of the second (highest)
    // segment while the first is outstanding is what a TLP sends (an RTO resends the first).
    let mut pk = start();
    pk.remove(1);
    pk.push(rexmit_second(T0 + 211 * MS));
    assert_eq!(causes(&pk), (1, 0, 0, 0, 1, 0, 0));
}

#[test]
fn a_retransmission_stamped_before_the_ack_is_ack_clocked() {
    // Non-monotonic capture timestamps: the retransmission's time is before the last ACK's.
    let mut pk = start();
    pk.push(ack_first(T0 + 60 * MS));
    pk.push(rexmit_second(T0 + 30 * MS));
    assert_eq!(causes(&pk).1, 1);
}

#[test]
fn timeouts_of_the_first_segment_are_rto_expiries() {
    // Retransmitting the first segment is one; doing it again before any ACK a second
    // (backed-off) one. The SYN-ACK is the last ACK: no duplicate, no SACK.
    let mut pk = start();
    pk.push(rexmit_first(T0 + 300 * MS));
    pk.push(rexmit_first(T0 + 900 * MS));
    assert_eq!(causes(&pk), (2, 0, 0, 0, 0, 2, 2));
    let m = &analyze(&pk, None)[0].metrics;
    assert!(m.frozen_time_ms > 0.0, "{}", m.frozen_time_ms);
}

#[test]
fn duplicate_acks_decide_between_fast_early_and_rack() {
    // The first segment is lost, the second arrives: one duplicate ACK (SACKing the second
    // when `sack`), and the first is resent at once.
    let at = T0 + 61 * MS;
    for (sack, want) in [
        (true, (1, 0, 0, 1, 0, 0, 0)),
        (false, (1, 0, 1, 0, 0, 0, 0)),
    ] {
        let mut pk = start();
        pk.push(dupack(T0 + 60 * MS, sack));
        pk.push(dupack(at, sack));
        pk.push(rexmit_first(at));
        assert_eq!(causes(&pk), want, "sack {sack}");
    }
    // Three duplicates: classic fast retransmit.
    let mut pk = start();
    for i in 0..4 {
        pk.push(dupack(T0 + (60 + i) * MS, true));
    }
    pk.push(rexmit_first(T0 + 63 * MS));
    assert_eq!(causes(&pk), (1, 1, 0, 0, 0, 0, 0));
}

#[test]
fn a_retransmission_a_reordering_window_after_a_sack_is_rack() {
    // RTT sample 50 ms (the first segment is ACKed, then a third is lost while a fourth
    // is SACKed); RACK waits min_RTT/4 = 12.5 ms after the SACK, within the timer slack.
    let ack = Flags::ACK;
    let mut pk = start();
    pk.push(ack_first(T0 + 60 * MS));
    pk.push(pkt(false, T0 + 61 * MS, PEER_ISN + 1, ISN + 201, ack, 0));
    pk.push(pkt(true, T0 + 100 * MS, ISN + 201, PEER_ISN + 1, ack, 100));
    pk.push(pkt(true, T0 + 101 * MS, ISN + 301, PEER_ISN + 1, ack, 100));
    let mut d = pkt(false, T0 + 151 * MS, PEER_ISN + 1, ISN + 201, ack, 0);
    d.seg.options.sack_blocks.push((ISN + 301, ISN + 401));
    pk.push(d);
    pk.push(pkt(true, T0 + 164 * MS, ISN + 201, PEER_ISN + 1, ack, 100));
    assert_eq!(causes(&pk), (1, 0, 0, 1, 0, 0, 0));
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
