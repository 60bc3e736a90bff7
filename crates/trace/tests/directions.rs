//! Every direction that carries data is a flow: a request/response exchange gives two, the
//! reply direction seen at its receiver only (latencies unknown) from one capture, and fully
//! from two.

use std::net::{IpAddr, Ipv4Addr};
use thinlab_tcp::wire::{Flags, Segment};
use thinlab_trace::flows::analyze;
use thinlab_trace::pcap::TcpPacket;

const MS: u64 = 1_000_000;
const T0: u64 = 1_000_000_000_000;

/// A packet from the client (10.0.0.1:40000) or the server (10.0.0.2:5001).
fn pkt(client: bool, ts_ns: u64, seq: u32, ack: u32, flags: Flags, len: u32) -> TcpPacket {
    let h = |i| IpAddr::V4(Ipv4Addr::new(10, 0, 0, i));
    let (src, dst, sp, dp) = if client {
        (h(1), h(2), 40000, 5001)
    } else {
        (h(2), h(1), 5001, 40000)
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

/// The client sends 10 requests of 200 bytes, the server answers each with 50 bytes; one-way
/// delay 20 ms. Returns (client-side capture, server-side capture).
fn exchange() -> (Vec<TcpPacket>, Vec<TcpPacket>) {
    let (c_isn, s_isn) = (1000u32, 5000u32);
    let a = Flags::ACK;
    let owd = 20 * MS;
    let (mut at_c, mut at_s) = (Vec::new(), Vec::new());
    let mut both = |t: u64, client: bool, p: TcpPacket| {
        let (tc, ts) = if client { (t, t + owd) } else { (t + owd, t) };
        at_c.push(TcpPacket {
            ts_ns: T0 + tc,
            ..p.clone()
        });
        at_s.push(TcpPacket {
            ts_ns: T0 + ts,
            ..p
        });
    };
    both(0, true, pkt(true, 0, c_isn, 0, Flags::SYN, 0));
    both(
        owd,
        false,
        pkt(false, 0, s_isn, c_isn + 1, Flags::SYN | a, 0),
    );
    both(2 * owd, true, pkt(true, 0, c_isn + 1, s_isn + 1, a, 0));
    for i in 0..10u32 {
        let t = 100 * MS * u64::from(i + 1);
        let (cs, ss) = (c_isn + 1 + 200 * i, s_isn + 1 + 50 * i);
        both(t, true, pkt(true, 0, cs, ss, a, 200));
        // The answer carries the ACK of the request; the client ACKs the answer.
        both(t + owd, false, pkt(false, 0, ss, cs + 200, a, 50));
        both(t + 2 * owd, true, pkt(true, 0, cs + 200, ss + 50, a, 0));
    }
    (at_c, at_s)
}

#[test]
fn both_directions_are_flows() {
    let (c, s) = exchange();
    let one = analyze(&c, None);
    assert_eq!(one.len(), 2);
    assert_eq!(one[0].id(), "10.0.0.1:40000-10.0.0.2:5001");
    assert!(one[0].at_sender);
    assert_eq!(one[0].metrics.unique_bytes_sent, 2000);
    assert_eq!(one[0].metrics.ack_latency_ms.p50, Some(40.0));
    assert_eq!(one[1].id(), "10.0.0.2:5001-10.0.0.1:40000");
    assert!(!one[1].at_sender, "seen at its receiver only");
    assert_eq!(one[1].metrics.unique_bytes_sent, 500);
    assert_eq!(
        one[1].metrics.ack_latency_ms.count, 0,
        "unknown, not measured"
    );

    let two = analyze(&c, Some(&s));
    assert_eq!(two.len(), 2);
    for (f, bytes) in two.iter().zip([2000, 500]) {
        assert!(f.at_sender && f.receiver_matched, "{}", f.id());
        assert_eq!(f.metrics.unique_bytes_sent, bytes);
        // 20 ms one way, both clocks equal and the path symmetric: the estimate is exact.
        assert_eq!(f.metrics.app_latency_ms.p50, Some(20.0), "{}", f.id());
        assert_eq!(f.clock.unwrap().offset_ms, 0.0);
    }
}
