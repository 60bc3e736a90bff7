//! Connection teardown scripts: FIN in both orders, simultaneous close, TIME-WAIT, RST
//! (sending on abort, accepting a valid RST, challenge ACK for an in-window one).

use crate::common;
use common::*;
use thinlab_tcp::{EndpointError, Event, Flags, State};

#[test]
fn active_close_fin_wait_to_time_wait_then_closed() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    ep.write(ms(20), b"last words").unwrap();
    ep.close(ms(20));
    assert_eq!(ep.state(), State::FinWait1);
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.len(), 1, "FIN rides on the last data");
    assert!(out[0].flags.fin());
    assert_data(&p, &out[0], 0, 10);
    assert_eq!(ep.write(ms(21), b"x"), Err(EndpointError::ClosedForSending));
    p.fin_acked = true;
    ep.handle_segment(ms(30), p.ack(10));
    assert_eq!(ep.state(), State::FinWait2);
    assert_eq!(ep.poll_timeout(), None);
    ep.handle_segment(ms(40), p.fin(0));
    assert_eq!(ep.state(), State::TimeWait);
    let out = drain(&mut ep, ms(40));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 1, "FIN acknowledged");
    assert!(ep.peer_closed());
    assert_eq!(ep.poll_timeout(), Some(ms(40) + dur(60_000)));
    // a retransmitted FIN is re-acknowledged and restarts TIME-WAIT
    ep.handle_segment(ms(1000), p.fin(0));
    let out = drain(&mut ep, ms(1000));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 1);
    assert_eq!(ep.poll_timeout(), Some(ms(1000) + dur(60_000)));
    run_until(&mut ep, ms(100_000));
    assert_eq!(ep.state(), State::Closed);
    let states: Vec<_> = events(&mut ep)
        .into_iter()
        .filter_map(|e| match e {
            Event::StateChanged { to, .. } => Some(to),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        vec![
            State::FinWait1,
            State::FinWait2,
            State::TimeWait,
            State::Closed
        ]
    );
}

#[test]
fn passive_close_close_wait_last_ack() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.data(0, 5));
    let mut fin = p.fin(5);
    fin.payload = bytes::Bytes::new();
    ep.handle_segment(ms(21), fin);
    assert_eq!(ep.state(), State::CloseWait);
    assert!(!ep.peer_closed(), "data not read yet");
    assert_eq!(ep.read().unwrap().len(), 5);
    assert!(ep.peer_closed());
    let out = drain(&mut ep, ms(21));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 6);
    ep.write(ms(22), b"bye").unwrap();
    ep.close(ms(22));
    assert_eq!(ep.state(), State::LastAck);
    let out = drain(&mut ep, ms(22));
    assert_eq!(out.len(), 1);
    assert!(out[0].flags.fin());
    p.fin_acked = true;
    ep.handle_segment(ms(30), p.ack_at(3, 6));
    assert_eq!(ep.state(), State::Closed);
    assert_eq!(ep.poll_timeout(), None);
}

#[test]
fn fin_is_retransmitted_on_rto() {
    let (mut ep, _p) = client(cfg(), mss_opts(1000), ms(10));
    ep.close(ms(20));
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.len(), 1);
    assert!(out[0].flags.fin() && out[0].payload.is_empty());
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(20) + rto);
    assert_eq!(out.len(), 1);
    assert!(out[0].1.flags.fin());
    assert_eq!(out[0].0, ms(20) + rto);
}

#[test]
fn simultaneous_close_goes_through_closing() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    ep.close(ms(20));
    drain(&mut ep, ms(20));
    // the peer's FIN crosses ours: it does not acknowledge our FIN
    ep.handle_segment(ms(25), p.fin(0));
    assert_eq!(ep.state(), State::Closing);
    let out = drain(&mut ep, ms(25));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 1);
    p.fin_acked = true;
    ep.handle_segment(ms(30), p.ack_at(0, 1));
    assert_eq!(ep.state(), State::TimeWait);
}

#[test]
fn fin_and_ack_of_our_fin_in_one_segment() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    ep.close(ms(20));
    drain(&mut ep, ms(20));
    p.fin_acked = true;
    let mut s = p.fin(0);
    s.ack = p.wire(0).wrapping_add(1);
    ep.handle_segment(ms(30), s);
    assert_eq!(ep.state(), State::TimeWait);
}

#[test]
fn out_of_order_fin_waits_for_the_data() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.fin(100));
    assert_eq!(ep.state(), State::Established);
    ep.handle_segment(ms(21), p.data(0, 100));
    assert_eq!(ep.state(), State::CloseWait);
    let out = drain(&mut ep, ms(21));
    assert_eq!(p.acked_peer(out.last().unwrap()), 101);
}

#[test]
fn abort_sends_rst() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    ep.write(ms(20), b"abc").unwrap();
    drain(&mut ep, ms(20));
    ep.abort(ms(30));
    assert_eq!(ep.state(), State::Closed);
    let out = drain(&mut ep, ms(30));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::RST);
    assert_eq!(p.off(out[0].seq), 3);
    assert_eq!(ep.poll_timeout(), None);
    // a closed endpoint answers anything but a RST with a RST
    ep.handle_segment(ms(40), p.data(0, 10));
    let out = drain(&mut ep, ms(40));
    assert_eq!(out.len(), 1);
    assert!(out[0].flags.rst());
    ep.handle_segment(ms(41), p.rst(0));
    assert!(drain(&mut ep, ms(41)).is_empty());
}

#[test]
fn valid_rst_resets_in_window_rst_is_challenged() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    // in the window but not exactly rcv_nxt: challenge ACK, still established
    ep.handle_segment(ms(20), p.rst(100));
    assert_eq!(ep.state(), State::Established);
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::ACK);
    // outside the window: silently dropped
    ep.handle_segment(ms(21), p.rst(1_000_000));
    assert!(drain(&mut ep, ms(21)).is_empty());
    assert_eq!(ep.state(), State::Established);
    // exactly rcv_nxt: reset
    ep.handle_segment(ms(22), p.rst(0));
    assert_eq!(ep.state(), State::Closed);
    assert_eq!(ep.write(ms(23), b"x"), Err(EndpointError::Reset));
    assert!(drain(&mut ep, ms(23)).is_empty(), "no reply to a RST");
}

#[test]
fn syn_in_established_gets_challenge_ack() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(10));
    let mut s = p.data(0, 0);
    s.flags = Flags::SYN;
    ep.handle_segment(ms(20), s);
    assert_eq!(ep.state(), State::Established);
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::ACK);
    assert_eq!(ep.stats().dropped_bad_state, 1);
}

#[test]
fn ack_for_unsent_data_is_answered_and_dropped() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    ep.handle_segment(ms(20), p.ack(500));
    let out = drain(&mut ep, ms(20));
    assert_eq!(out.len(), 1);
    assert_eq!(ep.stats().dropped_bad_ack, 1);
    assert_eq!(ep.bytes_unacked(), 0);
}

#[test]
fn data_and_fin_acked_to_the_data_end_retransmits_only_the_fin() {
    let (mut ep, mut p) = client(cfg(), mss_opts(1000), ms(10));
    ep.write(ms(20), b"last words").unwrap();
    ep.close(ms(20));
    let out = drain(&mut ep, ms(20));
    assert!(out[0].flags.fin());
    assert_data(&p, &out[0], 0, 10);
    // the peer acknowledges the data but not the FIN (it lost nothing; its FIN ACK is lost)
    ep.handle_segment(ms(30), p.ack(10));
    assert_eq!(ep.state(), State::FinWait1);
    let out = run_until(&mut ep, ms(5000));
    let first = &out[0].1;
    assert!(first.flags.fin(), "the FIN is retransmitted");
    assert!(
        first.payload.is_empty(),
        "without the acknowledged data: {} bytes",
        first.payload.len()
    );
    assert_eq!(p.off(first.seq), 10);
}
