//! Loss-recovery scripts: fast retransmit after exactly three duplicate ACKs (not two), the
//! window-update rule, Limited Transmit, NewReno partial ACKs, SACK recovery, RTO with
//! exponential backoff and go-back-N, Karn's rule.

use crate::common;
use common::*;
use thinlab_tcp::recovery::Phase;
use thinlab_tcp::{Endpoint, Event, SendKind, TcpConfig, TcpOptions};

/// Established client that has sent `n` full segments of 1000 bytes at t=1000 ms.
fn sent(c: TcpConfig, opts: TcpOptions, n: usize) -> (Endpoint, Peer) {
    let (mut ep, mut p) = client(c, opts, ms(100));
    ep.write(ms(1000), &vec![9u8; 1000 * n]).unwrap();
    let out = drain(&mut ep, ms(1000));
    assert_eq!(out.len(), n.min(ep.cwnd() as usize));
    events(&mut ep);
    p.ack = 0;
    (ep, p)
}

fn no_lt() -> TcpConfig {
    let mut c = cfg();
    c.limited_transmit = false;
    c
}

#[test]
fn fast_retransmit_after_exactly_three_dupacks() {
    let (mut ep, mut p) = sent(no_lt(), mss_opts(1000), 5);
    // segment 0 lost; 1..4 arrive and each produces a duplicate ACK
    for i in 1..=2 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
        assert!(
            drain(&mut ep, ms(1100 + i)).is_empty(),
            "no retransmission after {i} dupACKs"
        );
    }
    assert_eq!(ep.recovery_phase(), Phase::Open);
    ep.handle_segment(ms(1103), p.ack(0));
    let out = drain(&mut ep, ms(1103));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    let evs = events(&mut ep);
    assert_eq!(sent_kinds(&evs), vec![SendKind::FastRetransmit]);
    assert_eq!(ep.stats().duplicate_acks_received, 3);
    assert_eq!(ep.stats().retransmissions_fast, 1);
    // a fourth dupACK does not retransmit again
    ep.handle_segment(ms(1104), p.ack(0));
    assert!(drain(&mut ep, ms(1104)).is_empty());
    // the ACK of everything ends recovery, cwnd = ssthresh
    ep.handle_segment(ms(1200), p.ack(5000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.cwnd(), ep.ssthresh());
    assert_eq!(
        ep.ssthresh(),
        5,
        "half of cwnd 10 (Linux tcp_reno_ssthresh)"
    );
}

#[test]
fn rfc_reduction_halves_the_flight_size_not_cwnd() {
    let mut c = no_lt();
    c.reduction_base = thinlab_tcp::ReductionBase::FlightSize;
    let (mut ep, mut p) = sent(c, mss_opts(1000), 5);
    for i in 1..=3 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
    }
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    assert_eq!(
        ep.ssthresh(),
        2,
        "half of the 5 segments in flight (RFC 5681 eq. 4)"
    );
}

#[test]
fn window_change_makes_an_ack_not_a_dupack() {
    let (mut ep, mut p) = sent(no_lt(), mss_opts(1000), 5);
    for (i, w) in [60000u16, 60001, 60002, 60003].into_iter().enumerate() {
        p.window = w;
        let t = ms(1100 + i as u64);
        ep.handle_segment(t, p.ack(0));
        assert!(
            drain(&mut ep, t).is_empty(),
            "window update #{i} is not a dupACK"
        );
    }
    assert_eq!(ep.stats().duplicate_acks_received, 0);
    assert_eq!(ep.recovery_phase(), Phase::Open);
    // same window three times now: those are dupACKs
    for i in 0..3 {
        ep.handle_segment(ms(1200 + i), p.ack(0));
    }
    assert_eq!(drain(&mut ep, ms(1202)).len(), 1);
}

#[test]
fn ack_carrying_data_is_not_a_dupack() {
    let (mut ep, p) = sent(no_lt(), mss_opts(1000), 5);
    for i in 0..3u64 {
        ep.handle_segment(ms(1100 + i), p.data(10 * i, 10));
    }
    let out = drain(&mut ep, ms(1102));
    assert!(
        out.iter().all(|s| s.payload.is_empty()),
        "only ACKs of the peer's data: {out:?}"
    );
    assert_eq!(ep.stats().retransmissions_fast, 0);
}

#[test]
fn limited_transmit_sends_new_data_on_first_two_dupacks() {
    let mut c = cfg();
    c.initial_window = 4;
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(100));
    ep.write(ms(1000), &[1u8; 8000]).unwrap();
    assert_eq!(drain(&mut ep, ms(1000)).len(), 4, "cwnd-limited");
    events(&mut ep);
    ep.handle_segment(ms(1100), p.ack(0));
    let out = drain(&mut ep, ms(1100));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 4000, 5000);
    ep.handle_segment(ms(1101), p.ack(0));
    let out = drain(&mut ep, ms(1101));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 5000, 6000);
    ep.handle_segment(ms(1102), p.ack(0));
    let out = drain(&mut ep, ms(1102));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    let kinds = sent_kinds(&events(&mut ep));
    assert_eq!(
        kinds,
        vec![SendKind::New, SendKind::New, SendKind::FastRetransmit]
    );

    // without Limited Transmit the dupACKs send nothing
    let mut c = cfg();
    c.initial_window = 4;
    c.limited_transmit = false;
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(100));
    ep.write(ms(1000), &[1u8; 8000]).unwrap();
    drain(&mut ep, ms(1000));
    for i in 0..2 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
        assert!(drain(&mut ep, ms(1100 + i)).is_empty());
    }
}

#[test]
fn newreno_partial_ack_retransmits_next_hole_and_exits_at_recover() {
    let (mut ep, mut p) = sent(no_lt(), mss_opts(1000), 6);
    // segments 0 and 2 lost; 1, 3, 4, 5 arrive -> four dupACKs
    for i in 0..3 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
    }
    let out = drain(&mut ep, ms(1102));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    ep.handle_segment(ms(1103), p.ack(0));
    assert!(drain(&mut ep, ms(1103)).is_empty());
    // retransmission of 0 arrives: the receiver now misses 2 -> partial ACK
    ep.handle_segment(ms(1200), p.ack(2000));
    let out = drain(&mut ep, ms(1200));
    assert_eq!(
        out.len(),
        1,
        "partial ACK retransmits the next hole at once"
    );
    assert_data(&p, &out[0], 2000, 3000);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    let kinds = sent_kinds(&events(&mut ep));
    assert_eq!(
        kinds,
        vec![SendKind::FastRetransmit, SendKind::FastRetransmit]
    );
    // ACK at the recovery point ends the episode
    ep.handle_segment(ms(1300), p.ack(6000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.stats().retransmissions_fast, 2);
    assert_eq!(ep.stats().rto_events, 0);
}

#[test]
fn sack_recovery_retransmits_the_holes() {
    let mut c = no_lt();
    c.sack = true;
    let (mut ep, mut p) = sent(c, sack_opts(1000), 8);
    // segments 1 and 3 lost
    ep.handle_segment(ms(1100), p.ack(1000));
    ep.handle_segment(ms(1101), p.sack(1000, &[(2000, 3000)]));
    ep.handle_segment(ms(1102), p.sack(1000, &[(4000, 5000), (2000, 3000)]));
    assert!(drain(&mut ep, ms(1102)).is_empty());
    ep.handle_segment(ms(1103), p.sack(1000, &[(4000, 6000), (2000, 3000)]));
    let out = drain(&mut ep, ms(1103));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 1000, 2000);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    // a third SACKed segment above the second hole: IsLost, retransmit it
    ep.handle_segment(ms(1104), p.sack(1000, &[(4000, 7000), (2000, 3000)]));
    let out = drain(&mut ep, ms(1104));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 3000, 4000);
    ep.handle_segment(ms(1105), p.sack(1000, &[(4000, 8000), (2000, 3000)]));
    assert!(drain(&mut ep, ms(1105)).is_empty(), "nothing else is lost");
    ep.handle_segment(ms(1200), p.sack(3000, &[(4000, 8000)]));
    assert!(
        drain(&mut ep, ms(1200)).is_empty(),
        "hole 3 already retransmitted"
    );
    ep.handle_segment(ms(1201), p.ack(8000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.stats().retransmissions_fast, 2);
    assert_eq!(ep.packets_out(), 0);
}

#[test]
fn sack_recovery_without_dupacks_counting_sacked_segments() {
    // three SACKed segments above the hole start recovery even if one ACK carries them all
    let mut c = no_lt();
    c.sack = true;
    let (mut ep, mut p) = sent(c, sack_opts(1000), 5);
    ep.handle_segment(ms(1100), p.sack(0, &[(1000, 4000)]));
    let out = drain(&mut ep, ms(1100));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
}

#[test]
fn rto_with_exponential_backoff() {
    let (mut ep, _p) = sent(cfg(), mss_opts(1000), 1);
    let rto = ep.rto();
    assert!(rto >= dur(200));
    let t0 = ms(1000);
    let out = run_until(&mut ep, t0 + rto * 7);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![t0 + rto, t0 + rto * 3, t0 + rto * 7]);
    let evs = events(&mut ep);
    assert_eq!(sent_kinds(&evs), vec![SendKind::Rto; 3]);
    let fired: Vec<_> = evs
        .iter()
        .filter_map(|e| match e {
            Event::RtoFired { rto, backoff, .. } => Some((*rto, *backoff)),
            _ => None,
        })
        .collect();
    assert_eq!(fired, vec![(rto, 1), (rto * 2, 2), (rto * 4, 3)]);
    assert_eq!(ep.stats().rto_events, 3);
    assert_eq!(ep.stats().retransmissions_rto, 3);
    assert_eq!(ep.stats().frozen_time, rto * 7);
    assert_eq!(ep.rto(), rto * 8);
    assert_eq!(ep.recovery_phase(), Phase::Loss);
    assert_eq!(ep.cwnd(), 1);
}

#[test]
fn karn_no_sample_from_retransmitted_segment_backoff_kept_until_fresh_sample() {
    let (mut ep, mut p) = sent(cfg(), mss_opts(1000), 1);
    let srtt0 = ep.srtt();
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(1000) + rto);
    assert_eq!(out.len(), 1);
    // the ACK for the retransmitted segment: no RTT sample, backoff kept
    ep.handle_segment(ms(1000) + rto + dur(50), p.ack(1000));
    assert_eq!(ep.srtt(), srtt0);
    assert_eq!(ep.rto(), rto * 2);
    assert_eq!(ep.recovery_phase(), Phase::Open);
    // a fresh segment acknowledged: sample taken, backoff cleared
    let t = ms(5000);
    ep.write(t, &[1u8; 100]).unwrap();
    assert_eq!(drain(&mut ep, t).len(), 1);
    ep.handle_segment(t + dur(100), p.ack(1100));
    assert_eq!(ep.srtt(), Some(dur(100)));
    assert_eq!(ep.backoff(), 0);
    assert_eq!(ep.rto(), rto, "same RTT, same RTO");
}

#[test]
fn karn_exception_with_timestamps() {
    let mut c = cfg();
    c.timestamps = true;
    let o = TcpOptions {
        mss: Some(1000),
        timestamps: Some((1, 0)),
        ..Default::default()
    };
    let (mut ep, mut p) = sent(c, o, 1);
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(1000) + rto);
    let tsval = out[0].1.options.timestamps.unwrap().0;
    assert_eq!(tsval as u64, 1000 + rto.as_millis() as u64);
    p.ts = Some((2, tsval));
    ep.handle_segment(ms(1000) + rto + dur(100), p.ack(1000));
    assert_eq!(ep.backoff(), 0, "TSecr gives a valid sample");
    assert_eq!(ep.rtt_latest(), Some(dur(100)));
}

#[test]
fn rto_go_back_n_as_cwnd_allows() {
    let (mut ep, mut p) = sent(cfg(), mss_opts(1000), 4);
    let rto = ep.rto();
    let t1 = ms(1000) + rto;
    let out = run_until(&mut ep, t1);
    assert_eq!(out.len(), 1, "cwnd 1 after RTO");
    assert_data(&p, &out[0].1, 0, 1000);
    ep.handle_segment(t1 + dur(100), p.ack(1000));
    let out = drain(&mut ep, t1 + dur(100));
    assert_eq!(out.len(), 2, "slow start: cwnd 2");
    assert_data(&p, &out[0], 1000, 2000);
    assert_data(&p, &out[1], 2000, 3000);
    let kinds = sent_kinds(&events(&mut ep));
    assert_eq!(kinds, vec![SendKind::Rto; 3]);
    ep.handle_segment(t1 + dur(200), p.ack(3000));
    let out = drain(&mut ep, t1 + dur(200));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 3000, 4000);
    ep.handle_segment(t1 + dur(300), p.ack(4000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.stats().retransmissions_rto, 4);
}

#[test]
fn gives_up_after_max_retries() {
    let mut c = cfg();
    c.max_retries = 2;
    let (mut ep, _p) = sent(c, mss_opts(1000), 1);
    run_until(&mut ep, ms(1_000_000));
    assert_eq!(ep.state(), thinlab_tcp::State::Closed);
    assert_eq!(ep.stats().rto_events, 2);
    assert_eq!(
        ep.write(ms(1_000_001), b"x"),
        Err(thinlab_tcp::EndpointError::TimedOut)
    );
}

#[test]
fn spurious_rto_detected_with_timestamps() {
    let mut c = cfg();
    c.timestamps = true;
    let o = TcpOptions {
        mss: Some(1000),
        timestamps: Some((1, 0)),
        ..Default::default()
    };
    let (mut ep, mut p) = sent(c, o, 1);
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(1000) + rto);
    assert_eq!(out.len(), 1);
    // the ACK of the *original* transmission (TSval 1000) arrives late
    p.ts = Some((2, 1000));
    ep.handle_segment(ms(1000) + rto + dur(5), p.ack(1000));
    assert_eq!(ep.stats().spurious_retransmissions, 1);

    // a genuine loss: the ACK echoes the retransmission's TSval
    let c2 = {
        let mut c = cfg();
        c.timestamps = true;
        c
    };
    let o = TcpOptions {
        mss: Some(1000),
        timestamps: Some((1, 0)),
        ..Default::default()
    };
    let (mut ep, mut p) = sent(c2, o, 1);
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(1000) + rto);
    let tsval = out[0].1.options.timestamps.unwrap().0;
    p.ts = Some((2, tsval));
    ep.handle_segment(ms(1000) + rto + dur(100), p.ack(1000));
    assert_eq!(ep.stats().spurious_retransmissions, 0);
}

#[test]
fn rto_retransmits_the_head_even_if_sacked() {
    // RFC 2018 §8: the receiver may renege on SACKed data
    let mut c = no_lt();
    c.sack = true;
    let (mut ep, mut p) = sent(c, sack_opts(1000), 2);
    ep.handle_segment(ms(1100), p.sack(0, &[(0, 2000)]));
    let rto = ep.rto();
    let out = run_until(&mut ep, ms(1100) + rto);
    assert!(!out.is_empty());
    assert_data(&p, &out[0].1, 0, 1000);
    assert_eq!(
        ep.poll_timeout(),
        Some(out[0].0 + rto * 2),
        "timer restarted, backed off"
    );
}

#[test]
fn reno_leaves_recovery_on_the_first_partial_ack() {
    let mut c = no_lt();
    c.cc = thinlab_tcp::CcAlgorithm::Reno;
    let (mut ep, mut p) = sent(c, mss_opts(1000), 6);
    for i in 0..3 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
    }
    assert_eq!(drain(&mut ep, ms(1102)).len(), 1);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    ep.handle_segment(ms(1200), p.ack(2000));
    assert_eq!(
        ep.recovery_phase(),
        Phase::Open,
        "Reno: any new ACK ends fast recovery"
    );
    assert!(sent_kinds(&events(&mut ep))
        .iter()
        .all(|k| *k != SendKind::Rto));
}
