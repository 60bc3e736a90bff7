//! Data transfer scripts: segmentation at the MSS, ACK processing, Nagle on/off, delayed ACK
//! per model, receive reassembly with SACK blocks, flow control and zero-window probing.

use crate::common;
use common::*;
use thinlab_tcp::{DelayedAckModel, Endpoint, Event, Flags, SendKind, TcpOptions};

#[test]
fn data_is_segmented_at_mss_and_acked() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(100));
    assert_eq!(ep.write(ms(200), &[7u8; 2500]).unwrap(), 2500);
    let out = drain(&mut ep, ms(200));
    assert_eq!(out.len(), 3);
    assert_data(&p, &out[0], 0, 1000);
    assert_data(&p, &out[1], 1000, 2000);
    assert_data(&p, &out[2], 2000, 2500);
    assert!(out
        .iter()
        .all(|s| s.flags.contains(Flags::ACK | Flags::PSH)));
    assert_eq!(ep.poll_timeout(), Some(ms(200) + ep.rto()));
    let evs = events(&mut ep);
    assert_eq!(sent_kinds(&evs), vec![SendKind::New; 3]);
    ep.handle_segment(ms(300), p.ack(2000));
    assert_eq!(ep.bytes_unacked(), 500);
    let evs = events(&mut ep);
    assert!(evs.contains(&Event::Acked {
        at: ms(300),
        una: 2000
    }));
    // RFC 6298 5.3: restarted on an ACK of new data
    assert_eq!(ep.poll_timeout(), Some(ms(300) + ep.rto()));
    ep.handle_segment(ms(301), p.ack(2500));
    assert_eq!(ep.poll_timeout(), None, "5.2: stopped when all is acked");
    let st = ep.stats();
    assert_eq!(st.data_segments_sent, 3);
    assert_eq!(st.payload_bytes_sent, 2500);
    assert_eq!(st.segments_sent, 5, "SYN, ACK, three data");
}

#[test]
fn receives_in_order_and_out_of_order_with_sack_blocks() {
    let mut c = cfg();
    c.sack = true;
    let (mut ep, p) = client(c, sack_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.data(0, 100));
    let a = drain(&mut ep, ms(20));
    assert_eq!(p.acked_peer(&a[0]), 100);
    assert!(a[0].options.sack_blocks.is_empty());
    ep.handle_segment(ms(21), p.data(200, 100));
    ep.handle_segment(ms(22), p.data(400, 100));
    let a = drain(&mut ep, ms(22));
    assert_eq!(a.len(), 1, "the two ACKs coalesce into one at poll time");
    assert_eq!(p.acked_peer(&a[0]), 100);
    let blocks: Vec<_> = a[0]
        .options
        .sack_blocks
        .iter()
        .map(|&(l, r)| (l.wrapping_sub(PEER_ISN + 1), r.wrapping_sub(PEER_ISN + 1)))
        .collect();
    assert_eq!(blocks, vec![(400, 500), (200, 300)], "most recent first");
    // fill the first hole: delivered up to 300, one block left
    ep.handle_segment(ms(23), p.data(100, 100));
    let a = drain(&mut ep, ms(23));
    assert_eq!(p.acked_peer(&a[0]), 300);
    assert_eq!(a[0].options.sack_blocks.len(), 1);
    let mut got = 0;
    while let Some(b) = ep.read() {
        got += b.len();
    }
    assert_eq!(got, 300);
    let evs = events(&mut ep);
    assert!(evs.contains(&Event::Arrived {
        at: ms(21),
        start: 200,
        end: 300
    }));
    assert!(evs.contains(&Event::Delivered {
        at: ms(23),
        start: 100,
        end: 300
    }));
    // an overlapping segment delivers only its new part
    ep.handle_segment(ms(24), p.data(250, 300));
    let evs = events(&mut ep);
    assert!(evs.contains(&Event::Arrived {
        at: ms(24),
        start: 250,
        end: 550
    }));
    assert!(evs.contains(&Event::Delivered {
        at: ms(24),
        start: 300,
        end: 550
    }));
}

#[test]
fn at_most_three_sack_blocks_with_timestamps() {
    let mut c = cfg();
    c.sack = true;
    c.timestamps = true;
    let mut o = sack_opts(1000);
    o.timestamps = Some((1, 0));
    let (mut ep, p) = client(c, o, ms(10));
    for i in 0..5u64 {
        ep.handle_segment(ms(20 + i), p.data(100 + 200 * i, 100));
    }
    let a = drain(&mut ep, ms(30));
    assert_eq!(a[0].options.sack_blocks.len(), 3);
    let first = a[0].options.sack_blocks[0].0.wrapping_sub(PEER_ISN + 1);
    assert_eq!(first, 900);
}

#[test]
fn nagle_holds_small_segments_while_data_is_outstanding() {
    let mut c = cfg();
    c.nodelay = false;
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(10));
    ep.write(ms(20), b"aaaa").unwrap();
    assert_eq!(drain(&mut ep, ms(20)).len(), 1, "nothing outstanding: sent");
    ep.write(ms(21), b"bbbb").unwrap();
    ep.write(ms(22), b"cccc").unwrap();
    assert!(drain(&mut ep, ms(22)).is_empty(), "held by Nagle");
    ep.handle_segment(ms(30), p.ack(4));
    let out = drain(&mut ep, ms(30));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 4, 12);
    // a full-sized segment is not held
    ep.write(ms(31), &[1u8; 1500]).unwrap();
    let out = drain(&mut ep, ms(31));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 12, 1012);
}

#[test]
fn nodelay_sends_every_write() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    for i in 0..3u64 {
        ep.write(ms(20 + i), b"abcd").unwrap();
        let out = drain(&mut ep, ms(20 + i));
        assert_eq!(out.len(), 1);
        assert_data(&p, &out[0], 4 * i, 4 * i + 4);
    }
}

#[test]
fn ack_piggybacks_on_data() {
    let mut c = cfg();
    c.delayed_ack = DelayedAckModel::FreeBsd6;
    c.delayed_ack_timeout = dur(100);
    let (mut ep, p) = client(c, mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.data(0, 10));
    assert!(drain(&mut ep, ms(20)).is_empty());
    ep.write(ms(30), b"reply").unwrap();
    let out = drain(&mut ep, ms(30));
    assert_eq!(out.len(), 1, "data carries the ACK, no pure ACK");
    assert_eq!(p.acked_peer(&out[0]), 10);
    assert_eq!(out[0].payload.len(), 5);
    assert!(
        run_until(&mut ep, ms(200)).is_empty(),
        "delayed ACK cancelled"
    );
}

#[test]
fn delayed_ack_off_acks_every_segment() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    for i in 0..4u64 {
        ep.handle_segment(ms(20 + i), p.data(10 * i, 10));
        let out = drain(&mut ep, ms(20 + i));
        assert_eq!(out.len(), 1);
        assert_eq!(p.acked_peer(&out[0]), 10 * (i as i64 + 1));
        assert!(events(&mut ep).iter().any(|e| matches!(
            e,
            Event::Sent {
                kind: SendKind::Ack,
                ..
            }
        )));
    }
}

#[test]
fn delayed_ack_freebsd_every_second_segment_or_100ms() {
    let mut c = cfg();
    c.delayed_ack = DelayedAckModel::FreeBsd6;
    c.delayed_ack_timeout = dur(100);
    let (mut ep, p) = client(c, mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.data(0, 100));
    assert!(drain(&mut ep, ms(20)).is_empty());
    ep.handle_segment(ms(30), p.data(100, 100));
    let out = drain(&mut ep, ms(30));
    assert_eq!(out.len(), 1, "second segment: ACK now");
    assert_eq!(p.acked_peer(&out[0]), 200);
    ep.handle_segment(ms(40), p.data(200, 100));
    assert!(drain(&mut ep, ms(40)).is_empty());
    assert_eq!(ep.poll_timeout(), Some(ms(140)));
    let out = run_until(&mut ep, ms(500));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(140), "delayed ACK after 100 ms");
    assert_eq!(p.acked_peer(&out[0].1), 300);
    // out-of-order data is acknowledged at once
    ep.handle_segment(ms(600), p.data(400, 100));
    let out = drain(&mut ep, ms(600));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 300);
    // and so is the segment that fills the hole
    ep.handle_segment(ms(610), p.data(300, 100));
    let out = drain(&mut ep, ms(610));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 500);
}

#[test]
fn delayed_ack_linux_quickack_then_40ms() {
    let mut c = cfg();
    c.delayed_ack = DelayedAckModel::Linux;
    c.delayed_ack_timeout = dur(200);
    let (mut ep, p) = client(c, mss_opts(1000), ms(10));
    let mut off = 0;
    for i in 0..16u64 {
        let t = ms(100 + i);
        ep.handle_segment(t, p.data(off, 100));
        off += 100;
        let out = drain(&mut ep, t);
        assert_eq!(out.len(), 1, "quick-ACK segment {i}");
    }
    let t = ms(117);
    ep.handle_segment(t, p.data(off, 100));
    off += 100;
    assert!(drain(&mut ep, t).is_empty(), "quick-ACK mode over");
    let out = run_until(&mut ep, ms(1000));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(157), "ATO 40 ms");
    assert_eq!(p.acked_peer(&out[0].1), off as i64);
    // more than one full-sized segment unacknowledged: ACK at once
    ep.handle_segment(ms(200), p.data(off, 1000));
    assert!(drain(&mut ep, ms(200)).is_empty());
    ep.handle_segment(ms(201), p.data(off + 1000, 1000));
    assert_eq!(drain(&mut ep, ms(201)).len(), 1);
    off += 2000;
    // idle for longer than the RTO (210 ms here): quick-ACK mode again
    assert_eq!(ep.rto(), dur(210));
    ep.handle_segment(ms(500), p.data(off, 100));
    assert_eq!(drain(&mut ep, ms(500)).len(), 1);
}

#[test]
fn zero_window_persist_probe_and_reopen() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(100));
    ep.write(ms(200), &[1u8; 3000]).unwrap();
    let out = drain(&mut ep, ms(200));
    assert_eq!(out.len(), 3);
    // all acked, but the window is closed
    p.window = 0;
    ep.handle_segment(ms(300), p.ack(3000));
    ep.write(ms(300), &[2u8; 500]).unwrap();
    assert!(drain(&mut ep, ms(300)).is_empty());
    let rto = ep.rto();
    assert_eq!(ep.poll_timeout(), Some(ms(300) + rto));
    let out = run_until(&mut ep, ms(300) + rto);
    assert_eq!(out.len(), 1);
    let probe = &out[0].1;
    assert!(probe.payload.is_empty());
    assert_eq!(p.off(probe.seq), 2999, "probe uses an old sequence number");
    assert!(events(&mut ep).iter().any(|e| matches!(
        e,
        Event::Sent {
            kind: SendKind::WindowProbe,
            ..
        }
    )));
    // the persist timer backs off
    assert_eq!(ep.poll_timeout(), Some(ms(300) + rto + rto * 2));
    // window reopens
    p.window = 65535;
    ep.handle_segment(ms(2000), p.ack(3000));
    let out = drain(&mut ep, ms(2000));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 3000, 3500);
}

#[test]
fn sends_within_the_peer_window_only() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    p.window = 2500;
    ep.handle_segment(ms(11), p.ack(0));
    ep.write(ms(20), &[0u8; 5000]).unwrap();
    let out = drain(&mut ep, ms(20));
    // 1000 + 1000, then 500 is at least half the max window? no (500*2 < 2500): SWS holds it
    assert_eq!(out.len(), 2);
    ep.handle_segment(ms(30), p.ack(2000));
    let out = drain(&mut ep, ms(30));
    assert_eq!(out.len(), 2);
    assert_data(&p, &out[0], 2000, 3000);
    assert_data(&p, &out[1], 3000, 4000);
}

#[test]
fn window_update_after_read_when_window_was_small() {
    let mut c = cfg();
    c.recv_buffer = 4000;
    let (mut ep, p) = client(c, mss_opts(1000), ms(10));
    for i in 0..4u64 {
        ep.handle_segment(ms(20), p.data(1000 * i, 1000));
    }
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.last().unwrap().window, 0);
    // a segment beyond the closed window is not acceptable: ACK and drop
    ep.handle_segment(ms(21), p.data(4000, 10));
    let out = drain(&mut ep, ms(21));
    assert_eq!(out.len(), 1);
    assert_eq!(ep.stats().dropped_out_of_window, 1);
    while ep.read().is_some() {}
    let out = drain(&mut ep, ms(22));
    assert_eq!(out.len(), 1, "window update");
    assert_eq!(out[0].window, 4000);
}

/// A client that negotiated timestamps with a peer whose SYN-ACK carried TSval 500.
fn timestamps_client() -> (Endpoint, Peer) {
    let mut c = cfg();
    c.timestamps = true;
    let o = TcpOptions {
        mss: Some(1000),
        timestamps: Some((500, 0)),
        ..Default::default()
    };
    client(c, o, ms(10))
}

#[test]
fn timestamps_are_echoed() {
    let (mut ep, mut p) = timestamps_client();
    p.ts = Some((600, 10));
    ep.handle_segment(ms(50), p.data(0, 10));
    let out = drain(&mut ep, ms(50));
    assert_eq!(out[0].options.timestamps, Some((50, 600)));
}

#[test]
fn a_retransmission_whose_ack_was_lost_refreshes_the_echoed_timestamp() {
    let (mut ep, mut p) = timestamps_client();
    p.ts = Some((600, 10));
    ep.handle_segment(ms(50), p.data(0, 10));
    assert_eq!(
        drain(&mut ep, ms(50))[0].options.timestamps,
        Some((50, 600))
    );
    // That ACK is lost; the peer retransmits the same bytes much later: the duplicate ACK
    // must echo the retransmission's TSval (Linux, FreeBSD), not 600.
    p.ts = Some((9_000, 10));
    ep.handle_segment(ms(8_450), p.data(0, 10));
    let out = drain(&mut ep, ms(8_450));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].options.timestamps, Some((8_450, 9_000)));
    // Older duplicates (ending before the ACK point) do not move it.
    ep.handle_segment(ms(8_460), p.data(10, 10));
    drain(&mut ep, ms(8_460));
    p.ts = Some((9_500, 10));
    ep.handle_segment(ms(8_470), p.data(0, 10));
    let out = drain(&mut ep, ms(8_470));
    assert_eq!(out[0].options.timestamps.map(|t| t.1), Some(9_000));
}

#[test]
fn small_window_is_used_after_the_persist_timeout() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    p.window = 500;
    ep.handle_segment(ms(11), p.ack(0));
    ep.write(ms(20), &[0u8; 2000]).unwrap();
    // 500 bytes < half the largest window ever offered (65535): sender SWS avoidance waits
    assert!(drain(&mut ep, ms(20)).is_empty());
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(20) + rto);
    assert_eq!(out.len(), 1, "override timeout sends what fits");
    assert_data(&p, &out[0].1, 0, 500);
}

#[test]
fn every_data_segment_is_reported_as_arrived() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.data(0, 100));
    ep.handle_segment(ms(21), p.data(0, 100)); // duplicate, dropped as old
    let evs = events(&mut ep);
    let arrived: Vec<_> = evs
        .iter()
        .filter(|e| matches!(e, Event::Arrived { .. }))
        .collect();
    assert_eq!(arrived.len(), 2);
    let delivered = evs
        .iter()
        .filter(|e| matches!(e, Event::Delivered { .. }))
        .count();
    assert_eq!(delivered, 1);
    assert_eq!(ep.stats().dropped_out_of_window, 1);
}

#[test]
fn dupacks_keep_their_window_when_the_application_reads_between_them() {
    // Linux __tcp_select_window: the offer moves in rcv_mss steps, so reading 300 bytes
    // between two out-of-order arrivals does not change the window of the second dupACK
    // (a byte-exact window would grow by 300 and the sender would not count it, RFC 5681 §2)
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.data(0, 300));
    ep.handle_segment(ms(20), p.data(300, 500));
    drain(&mut ep, ms(20));
    ep.handle_segment(ms(30), p.data(1000, 100));
    let a = drain(&mut ep, ms(30));
    assert_eq!(a.len(), 1);
    assert_eq!(ep.read().map(|b| b.len()), Some(300));
    ep.handle_segment(ms(40), p.data(1100, 100));
    let b = drain(&mut ep, ms(40));
    assert_eq!(b.len(), 1);
    assert_eq!(a[0].ack, b[0].ack, "both are duplicate ACKs");
    assert_eq!(a[0].window, b[0].window, "the window field is unchanged");
    // once the free space is a whole MSS estimate (536, nothing measured above it) beyond
    // the offer, the window moves, to a multiple of that estimate
    ep.handle_segment(ms(50), p.data(800, 200));
    drain(&mut ep, ms(50));
    while ep.read().is_some() {}
    ep.handle_segment(ms(60), p.data(1300, 100));
    let c = drain(&mut ep, ms(60));
    assert!(
        c[0].window > b[0].window,
        "{} vs {}",
        c[0].window,
        b[0].window
    );
    assert_eq!(c[0].window % 536, 0);
}

#[test]
fn linux_delayed_ack_counts_only_the_new_bytes_of_an_overlapping_segment() {
    let mut c = cfg();
    c.delayed_ack = thinlab_tcp::DelayedAckModel::Linux;
    let (mut ep, p) = client(c, mss_opts(1000), ms(10));
    // leave quick-ACK mode (16 immediate ACKs)
    for i in 0..16u64 {
        ep.handle_segment(ms(20 + i), p.data(100 * i, 100));
        assert_eq!(drain(&mut ep, ms(20 + i)).len(), 1, "quick ACK {i}");
    }
    ep.handle_segment(ms(40), p.data(1600, 100));
    assert!(drain(&mut ep, ms(40)).is_empty(), "delayed");
    // a 500-byte RDB-style bundle [1300, 1800) with 100 new bytes: 200 new bytes are
    // unacknowledged, below one rcv_mss (536), so the ACK stays delayed (counting the
    // segment's 500 bytes would make 600 and force it out)
    ep.handle_segment(ms(41), p.data(1300, 500));
    assert_eq!(ep.rcv_nxt(), 1800);
    assert!(drain(&mut ep, ms(41)).is_empty(), "still delayed");
    // 400 more new bytes: 600 > 536, now
    ep.handle_segment(ms(42), p.data(1800, 400));
    assert_eq!(drain(&mut ep, ms(42)).len(), 1);
}

/// An endpoint keeps a shared configuration when it equals its own but for the congestion
/// controller's seed (read only when the endpoint is made), and keeps its own otherwise.
#[test]
fn share_config_only_when_equal_but_for_the_seed() {
    use std::sync::Arc;
    let mut own = cfg();
    own.cc_seed = 7;
    let mut ep = Endpoint::listen(own.clone(), 80, 1);
    let shared = Arc::new(cfg());
    assert!(ep.share_config(&shared));
    assert!(std::ptr::eq(ep.config(), &*shared));
    let mut other = cfg();
    other.mss = 536;
    let mut ep = Endpoint::listen(own.clone(), 80, 1);
    assert!(!ep.share_config(&Arc::new(other)));
    assert_eq!(ep.config(), &own);
}

#[test]
fn drain_events_hands_out_what_poll_event_would() {
    let run = |drain_by_reference: bool| {
        let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(100));
        let mut seen = Vec::new();
        for i in 0..3u64 {
            ep.write(ms(200 + 100 * i), &[1u8; 1500]).unwrap();
            drain(&mut ep, ms(200 + 100 * i));
            ep.handle_segment(ms(250 + 100 * i), p.ack(1500 * (i + 1)));
            if drain_by_reference {
                ep.drain_events(|e| seen.push(e.clone()));
            } else {
                seen.extend(events(&mut ep));
            }
            assert_eq!(ep.poll_event(), None, "nothing left after a drain");
        }
        seen
    };
    let polled = run(false);
    assert!(polled.len() >= 9, "sends and ACKs traced: {polled:?}");
    assert_eq!(run(true), polled);
}
