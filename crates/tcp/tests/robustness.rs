//! Bad input never panics and never returns an error: it is dropped, counted and reported.

use crate::common;
use bytes::Bytes;
use common::*;
use proptest::prelude::*;
use thinlab_tcp::event::DropReason;
use thinlab_tcp::wire::SackBlocks;
use thinlab_tcp::{Endpoint, Event, Flags, Segment, TcpOptions};

#[test]
fn malformed_bytes_are_counted() {
    let (mut ep, _) = client(cfg(), mss_opts(1000), ms(10));
    ep.handle_bytes(ms(20), &[1, 2, 3]);
    assert_eq!(ep.stats().dropped_malformed, 1);
    assert!(events(&mut ep).contains(&Event::Dropped {
        at: ms(20),
        reason: DropReason::Malformed
    }));
    assert!(drain(&mut ep, ms(20)).is_empty());
}

#[test]
fn wire_bytes_are_processed() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    let mut buf = Vec::new();
    thinlab_tcp::wire::tcp::emit(&p.data(0, 10), &mut buf);
    ep.handle_bytes(ms(20), &buf);
    assert_eq!(ep.read().map(|b| b.len()), Some(10));
}

fn arb_segment() -> impl Strategy<Value = Segment> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u8>(),
        any::<u16>(),
        0usize..3000,
        proptest::option::of(any::<u16>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of((any::<u32>(), any::<u32>())),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..4),
        any::<bool>(),
    )
        .prop_map(
            |(seq, ack, flags, window, len, mss, ws, ts, blocks, near)| {
                let (seq, ack) = if near {
                    // near the live sequence space, so that most of the state machine is reached
                    (
                        PEER_ISN.wrapping_add(seq % 5000),
                        EP_ISN.wrapping_add(ack % 5000),
                    )
                } else {
                    (seq, ack)
                };
                let mut sb = SackBlocks::new();
                for (l, r) in blocks {
                    let l = if near {
                        EP_ISN.wrapping_add(l % 6000)
                    } else {
                        l
                    };
                    let r = if near {
                        EP_ISN.wrapping_add(r % 6000)
                    } else {
                        r
                    };
                    sb.push((l, r));
                }
                Segment {
                    src_port: PEER_PORT,
                    dst_port: EP_PORT,
                    seq,
                    ack,
                    flags: Flags(flags),
                    window,
                    options: TcpOptions {
                        mss,
                        window_scale: ws,
                        sack_permitted: flags & 1 == 0,
                        timestamps: ts,
                        sack_blocks: sb,
                    },
                    payload: Bytes::from(vec![0u8; len]),
                }
            },
        )
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let (mut ep, _) = client(cfg(), mss_opts(1000), ms(10));
        ep.handle_bytes(ms(20), &bytes);
        drain(&mut ep, ms(20));
        run_until(&mut ep, ms(100_000));
    }

    #[test]
    fn random_segments_never_panic(segs in proptest::collection::vec(arb_segment(), 1..40), sack: bool, ts: bool, listen: bool) {
        let mut c = cfg();
        c.sack = sack;
        c.timestamps = ts;
        c.window_scale = true;
        let mut ep = if listen {
            Endpoint::listen(c, EP_PORT, EP_ISN)
        } else {
            let mut o = sack_opts(1000);
            o.timestamps = ts.then_some((1, 0));
            o.window_scale = Some(2);
            client(c, o, ms(10)).0
        };
        let base = ep.stats().segments_sent;
        ep.write(ms(11), &[5u8; 4000]).ok();
        drain(&mut ep, ms(11));
        let mut t = 12;
        for s in segs {
            ep.handle_segment(ms(t), s);
            drain(&mut ep, ms(t));
            while ep.read().is_some() {}
            if let Some(d) = ep.poll_timeout() {
                if d <= ms(t) {
                    ep.handle_timeout(ms(t));
                    drain(&mut ep, ms(t));
                }
            }
            t += 7;
            let st = ep.stats();
            let dropped = st.dropped_malformed + st.dropped_wrong_connection + st.dropped_out_of_window
                + st.dropped_bad_ack + st.dropped_bad_state;
            prop_assert!(dropped <= st.segments_received);
        }
        run_until(&mut ep, ms(10_000_000));
        // one Sent event per segment
        let evs = events(&mut ep);
        let sent = evs.iter().filter(|e| matches!(e, Event::Sent { .. })).count() as u64;
        prop_assert_eq!(sent + base, ep.stats().segments_sent);
    }
}
