//! Handshake scripts: active and passive open, SYN / SYN-ACK retransmission on the initial
//! RTO (doubling), giving up, option negotiation (each option on/off on either side).

use crate::common;
use common::*;
use thinlab_tcp::event::DropReason;
use thinlab_tcp::{Endpoint, EndpointError, Event, Flags, SendKind, State, TcpOptions};

#[test]
fn active_open_sends_syn_with_options_then_acks_synack() {
    let mut c = cfg();
    c.sack = true;
    c.timestamps = true;
    c.window_scale = true;
    let mut ep = Endpoint::connect(ms(0), c, EP_PORT, PEER_PORT, EP_ISN);
    assert_eq!(ep.state(), State::SynSent);
    let out = drain(&mut ep, ms(0));
    assert_eq!(out.len(), 1);
    let syn = &out[0];
    assert_eq!(syn.flags, Flags::SYN);
    assert_eq!(syn.seq, EP_ISN);
    assert_eq!(syn.options.mss, Some(1000));
    assert!(syn.options.sack_permitted);
    assert!(syn.options.window_scale.is_some());
    assert_eq!(syn.options.timestamps, Some((0, 0)));
    assert_eq!(ep.poll_timeout(), Some(ms(1000)));
    let evs = events(&mut ep);
    assert!(evs.contains(&Event::Sent {
        at: ms(0),
        start: 0,
        end: 0,
        kind: SendKind::Handshake,
        syn: true,
        fin: false
    }));

    let p = Peer::new(EP_ISN);
    let opts = TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        window_scale: Some(2),
        timestamps: Some((777, 0)),
        ..Default::default()
    };
    ep.handle_segment(ms(40), p.syn_ack(opts));
    assert_eq!(ep.state(), State::Established);
    let out = drain(&mut ep, ms(40));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::ACK);
    assert_eq!(out[0].seq, EP_ISN.wrapping_add(1));
    assert_eq!(out[0].ack, PEER_ISN + 1);
    assert_eq!(out[0].options.timestamps, Some((40, 777)));
    assert_eq!(ep.srtt(), Some(dur(40)), "handshake RTT sample");
    assert_eq!(
        ep.poll_timeout(),
        None,
        "no timer once established and idle"
    );
    let n = ep.negotiated();
    assert_eq!(n.send_mss, 1000);
    assert!(n.sack && n.timestamps);
    assert_eq!(n.snd_wscale, 2);
}

#[test]
fn syn_retransmitted_at_initial_rto_and_twice_that() {
    let mut ep = Endpoint::connect(ms(0), cfg(), EP_PORT, PEER_PORT, EP_ISN);
    assert_eq!(drain(&mut ep, ms(0)).len(), 1);
    let out = run_until(&mut ep, ms(3999));
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![ms(1000), ms(3000)]);
    for (_, s) in &out {
        assert_eq!(s.flags, Flags::SYN);
        assert_eq!(s.seq, EP_ISN);
    }
    assert_eq!(ep.poll_timeout(), Some(ms(7000)));
    // Karn: the SYN was retransmitted, so the SYN-ACK gives no RTT sample
    let p = Peer::new(EP_ISN);
    ep.handle_segment(ms(3050), p.syn_ack(mss_opts(1000)));
    assert_eq!(ep.state(), State::Established);
    assert_eq!(ep.srtt(), None);
    assert_eq!(ep.rto(), dur(1000), "backoff cleared once established");
}

#[test]
fn syn_gives_up_after_syn_retries() {
    let mut c = cfg();
    c.syn_retries = 2;
    let mut ep = Endpoint::connect(ms(0), c, EP_PORT, PEER_PORT, EP_ISN);
    drain(&mut ep, ms(0));
    let out = run_until(&mut ep, ms(100_000));
    assert_eq!(
        out.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        vec![ms(1000), ms(3000)]
    );
    assert_eq!(ep.state(), State::Closed);
    assert_eq!(ep.write(ms(8000), b"x"), Err(EndpointError::TimedOut));
}

#[test]
fn passive_open_and_synack_retransmission() {
    let mut ep = Endpoint::listen(cfg(), EP_PORT, EP_ISN);
    assert_eq!(ep.state(), State::Listen);
    assert!(drain(&mut ep, ms(0)).is_empty());
    let p = Peer::new(EP_ISN);
    ep.handle_segment(ms(10), p.syn(mss_opts(1200)));
    assert_eq!(ep.state(), State::SynReceived);
    let out = drain(&mut ep, ms(10));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::SYN | Flags::ACK);
    assert_eq!(out[0].seq, EP_ISN);
    assert_eq!(out[0].ack, PEER_ISN + 1);
    assert_eq!(out[0].options.mss, Some(1000));
    assert!(!out[0].options.sack_permitted);
    let out = run_until(&mut ep, ms(3500));
    assert_eq!(
        out.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        vec![ms(1010), ms(3010)]
    );
    assert!(out.iter().all(|(_, s)| s.flags == Flags::SYN | Flags::ACK));
    // a retransmitted SYN from the peer is answered with the SYN-ACK again
    ep.handle_segment(ms(3100), p.syn(mss_opts(1200)));
    let out = drain(&mut ep, ms(3100));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::SYN | Flags::ACK);
    // the ACK completes the handshake
    let mut p = p;
    ep.handle_segment(ms(3200), p.ack(0));
    assert_eq!(ep.state(), State::Established);
    assert_eq!(ep.srtt(), None, "SYN-ACK was retransmitted: no sample");
    assert!(drain(&mut ep, ms(3200)).is_empty(), "nothing to say");
    assert_eq!(ep.negotiated().send_mss, 1000);
}

#[test]
fn passive_open_rtt_sample_and_data_in_third_segment() {
    let mut ep = Endpoint::listen(cfg(), EP_PORT, EP_ISN);
    let p = Peer::new(EP_ISN);
    ep.handle_segment(ms(0), p.syn(mss_opts(500)));
    drain(&mut ep, ms(0));
    ep.handle_segment(ms(30), p.data(0, 100));
    assert_eq!(ep.state(), State::Established);
    assert_eq!(ep.srtt(), Some(dur(30)));
    assert_eq!(ep.read().map(|b| b.len()), Some(100));
    assert_eq!(ep.negotiated().send_mss, 500);
    let out = drain(&mut ep, ms(30));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 100);
}

#[test]
fn listen_rejects_ack_with_rst_and_ignores_other_ports() {
    let mut ep = Endpoint::listen(cfg(), EP_PORT, EP_ISN);
    let mut p = Peer::new(EP_ISN);
    let mut s = p.ack(0);
    ep.handle_segment(ms(1), s.clone());
    let out = drain(&mut ep, ms(1));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::RST);
    assert_eq!(out[0].seq, s.ack);
    assert_eq!(ep.stats().dropped_bad_ack, 1);
    s.dst_port = 9;
    s.flags = Flags::SYN;
    ep.handle_segment(ms(2), s);
    assert!(drain(&mut ep, ms(2)).is_empty());
    assert_eq!(ep.stats().dropped_wrong_connection, 1);
    assert_eq!(ep.state(), State::Listen);
    let evs = events(&mut ep);
    assert!(evs.iter().any(|e| matches!(
        e,
        Event::Dropped {
            reason: DropReason::WrongConnection,
            ..
        }
    )));
    assert!(evs.iter().any(|e| matches!(
        e,
        Event::Sent {
            kind: SendKind::Rst,
            ..
        }
    )));
}

#[test]
fn syn_sent_bad_ack_gets_rst() {
    let mut ep = Endpoint::connect(ms(0), cfg(), EP_PORT, PEER_PORT, EP_ISN);
    drain(&mut ep, ms(0));
    let p = Peer::new(EP_ISN);
    let mut sa = p.syn_ack(mss_opts(1000));
    sa.ack = sa.ack.wrapping_add(5);
    ep.handle_segment(ms(10), sa.clone());
    assert_eq!(ep.state(), State::SynSent);
    let out = drain(&mut ep, ms(10));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::RST);
    assert_eq!(out[0].seq, sa.ack);
    // a RST with an acceptable ACK resets the attempt
    let mut rst = p.syn_ack(TcpOptions::default());
    rst.flags = Flags::RST | Flags::ACK;
    ep.handle_segment(ms(20), rst);
    assert_eq!(ep.state(), State::Closed);
    assert_eq!(ep.write(ms(20), b"x"), Err(EndpointError::Reset));
}

/// Each option (SACK, timestamps, window scale) on/off on either side: used iff both offer,
/// and a SYN-ACK carries only what the SYN offered.
#[test]
fn option_negotiation_matrix() {
    for opt in 0..3 {
        for ours in [false, true] {
            for theirs in [false, true] {
                // passive side under test
                let mut c = cfg();
                match opt {
                    0 => c.sack = ours,
                    1 => c.timestamps = ours,
                    _ => c.window_scale = ours,
                }
                let mut peer_opts = mss_opts(1400);
                match opt {
                    0 => peer_opts.sack_permitted = theirs,
                    1 => peer_opts.timestamps = theirs.then_some((99, 0)),
                    _ => peer_opts.window_scale = theirs.then_some(3),
                }
                let mut ep = Endpoint::listen(c.clone(), EP_PORT, EP_ISN);
                let mut p = Peer::new(EP_ISN);
                p.ts = peer_opts.timestamps;
                ep.handle_segment(ms(0), p.syn(peer_opts.clone()));
                let synack = drain(&mut ep, ms(0)).remove(0);
                let both = ours && theirs;
                let present = match opt {
                    0 => synack.options.sack_permitted,
                    1 => synack.options.timestamps.is_some(),
                    _ => synack.options.window_scale.is_some(),
                };
                assert_eq!(
                    present, both,
                    "SYN-ACK option {opt} ours={ours} theirs={theirs}"
                );
                ep.handle_segment(ms(5), p.ack(0));
                let n = ep.negotiated();
                let used = match opt {
                    0 => n.sack,
                    1 => n.timestamps,
                    _ => n.snd_wscale == 3,
                };
                assert_eq!(
                    used, both,
                    "passive option {opt} ours={ours} theirs={theirs}"
                );
                // timestamps appear on data segments only when negotiated
                ep.write(ms(6), b"hello").unwrap();
                let d = drain(&mut ep, ms(6)).remove(0);
                assert_eq!(d.options.timestamps.is_some(), opt == 1 && both);
                assert!(
                    d.options.mss.is_none()
                        && d.options.window_scale.is_none()
                        && !d.options.sack_permitted
                );

                // active side under test: the SYN offers exactly what we are configured for
                let mut a = Endpoint::connect(ms(0), c, EP_PORT, PEER_PORT, EP_ISN);
                let syn = drain(&mut a, ms(0)).remove(0);
                let offered = match opt {
                    0 => syn.options.sack_permitted,
                    1 => syn.options.timestamps.is_some(),
                    _ => syn.options.window_scale.is_some(),
                };
                assert_eq!(offered, ours);
                let p = Peer::new(EP_ISN);
                a.handle_segment(ms(5), p.syn_ack(peer_opts));
                let n = a.negotiated();
                let used = match opt {
                    0 => n.sack,
                    1 => n.timestamps,
                    _ => n.snd_wscale == 3,
                };
                assert_eq!(
                    used, both,
                    "active option {opt} ours={ours} theirs={theirs}"
                );
                assert_eq!(n.send_mss, 1000);
            }
        }
    }
}

#[test]
fn window_scale_applies_to_later_windows_only() {
    let mut c = cfg();
    c.window_scale = true;
    let opts = TcpOptions {
        mss: Some(1000),
        window_scale: Some(4),
        ..Default::default()
    };
    let mut ep = Endpoint::connect(ms(0), c, EP_PORT, PEER_PORT, EP_ISN);
    drain(&mut ep, ms(0));
    let mut p = Peer::new(EP_ISN);
    let mut sa = p.syn_ack(opts);
    sa.window = 1000;
    ep.handle_segment(ms(10), sa);
    assert_eq!(ep.send_window(), 1000, "SYN-ACK window is never scaled");
    drain(&mut ep, ms(10));
    p.window = 1000;
    ep.handle_segment(ms(11), p.ack(0));
    assert_eq!(ep.send_window(), 16_000);
}

#[test]
fn missing_mss_option_means_536() {
    let (ep, _) = client(cfg(), TcpOptions::default(), ms(10));
    assert_eq!(ep.negotiated().send_mss, 536);
}

#[test]
fn simultaneous_open() {
    let mut ep = Endpoint::connect(ms(0), cfg(), EP_PORT, PEER_PORT, EP_ISN);
    drain(&mut ep, ms(0));
    let mut p = Peer::new(EP_ISN);
    // the peer's SYN crosses ours
    ep.handle_segment(ms(10), p.syn(mss_opts(1000)));
    assert_eq!(ep.state(), State::SynReceived);
    let out = drain(&mut ep, ms(10));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::SYN | Flags::ACK);
    assert_eq!(out[0].seq, EP_ISN, "same ISS as our SYN");
    assert_eq!(out[0].ack, PEER_ISN + 1);
    // the peer's SYN-ACK (old sequence number): answered with an ACK
    ep.handle_segment(ms(20), p.syn_ack(mss_opts(1000)));
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::ACK);
    // the peer's ACK of our SYN completes the open
    ep.handle_segment(ms(30), p.ack(0));
    assert_eq!(ep.state(), State::Established);
    ep.write(ms(31), b"hi").unwrap();
    assert_eq!(drain(&mut ep, ms(31)).len(), 1);
}
