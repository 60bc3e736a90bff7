//! RACK-TLP (RFC 8985) segment scripts: the probe timeout for one and several segments
//! outstanding, the probe's content (new data, else the highest segment), when TLP is not
//! armed, the cap at the RTO deadline, one probe per episode; RACK's time-based loss marking
//! at the exact end of the reordering window, the reorder timer, the deferral of dupthresh; and
//! a pair test where RACK repairs a thin-stream loss long before the RTO.

use crate::common;
use common::*;
use thinlab_tcp::endpoint::timers::TimerKind;
use thinlab_tcp::recovery::Phase;
use thinlab_tcp::{Endpoint, Event, Mechanisms, SendKind, TcpConfig};

fn rt(rto_min_ms: u64, tlp: bool, rack: bool) -> TcpConfig {
    let mut c = cfg();
    c.sack = true;
    c.rto_min = dur(rto_min_ms);
    c.mechanisms = Mechanisms {
        tlp,
        rack,
        ..Mechanisms::default()
    };
    c
}

/// Established at t = 100 ms with SRTT = min_RTT = 100 ms, RTO = 300 ms, SACK negotiated.
fn start(c: TcpConfig) -> (Endpoint, Peer) {
    let (ep, p) = client(c, sack_opts(1000), ms(100));
    assert_eq!(ep.srtt(), Some(dur(100)));
    assert_eq!(ep.rto(), dur(300));
    (ep, p)
}

fn send(ep: &mut Endpoint, t: thinlab_tcp::Instant, bytes: usize, n: usize) {
    ep.write(t, &vec![7u8; bytes]).unwrap();
    assert_eq!(drain(ep, t).len(), n);
}

fn rto_count(evs: &[Event]) -> usize {
    evs.iter()
        .filter(|e| matches!(e, Event::RtoFired { .. }))
        .count()
}

// ---------------------------------------------------------------------------------------
// TLP

#[test]
fn tlp_one_segment_allowance_is_200ms_not_rto_min() {
    // rto_min 10 ms: RTO = SRTT + 4·mdev = 300 ms. The worst-case delayed-ACK allowance is
    // RFC 8985's fixed 200 ms (Linux TCP_RTO_MIN), not rto_min: the PTO 2·100 + 200 = 400 ms
    // exceeds the RTO, so the probe fires at the RTO deadline (1300), not at 2·100 + 10 = 1210
    let (mut ep, p) = start(rt(10, true, false));
    send(&mut ep, ms(1000), 100, 1);
    assert_eq!(ep.timer(TimerKind::Tlp), Some(ms(1300)));
    assert_eq!(ep.timer(TimerKind::Rto), Some(ms(1300)));
    events(&mut ep);
    assert!(run_until(&mut ep, ms(1299)).is_empty());
    let out = run_until(&mut ep, ms(1300));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(1300));
    assert_data(&p, &out[0].1, 0, 100);
    assert_eq!(
        sent_kinds(&events(&mut ep)),
        vec![SendKind::Tlp],
        "the probe goes first"
    );
    assert_eq!(ep.stats().retransmissions_tlp, 1);
    // the RTO runs from the probe (Linux tcp_send_loss_probe, tcp_rearm_rto)
    assert_eq!(ep.timer(TimerKind::Rto), Some(ms(1300) + ep.rto()));
    assert_eq!(ep.timer(TimerKind::Tlp), None, "one probe per episode");
}

#[test]
fn tlp_one_segment_linux_constants_when_the_rto_is_longer() {
    for rto_min in [200, 10] {
        tlp_one_segment_linux_constants(rto_min);
    }
}

fn tlp_one_segment_linux_constants(rto_min: u64) {
    // a 600 ms RTT sample inflates mdev: RTO = SRTT + 4·mdev exceeds 2·SRTT + 200 ms, and the
    // 200 ms does not depend on rto_min
    let (mut ep, mut p) = start(rt(rto_min, true, false));
    send(&mut ep, ms(1000), 100, 1);
    ep.handle_segment(ms(1600), p.ack(100));
    let srtt = ep.srtt().unwrap();
    send(&mut ep, ms(2000), 100, 1);
    let pto = ms(2000) + 2 * srtt + dur(200);
    assert!(
        ep.timer(TimerKind::Rto).unwrap() > pto,
        "RTO {:?}",
        ep.rto()
    );
    assert_eq!(ep.timer(TimerKind::Tlp), Some(pto));
    events(&mut ep);
    let out = run_until(&mut ep, pto);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, pto);
    assert_data(&p, &out[0].1, 100, 200);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Tlp]);
}

#[test]
fn tlp_several_outstanding_waits_two_srtt_plus_2ms_and_probes_the_highest() {
    let (mut ep, p) = start(rt(200, true, false));
    send(&mut ep, ms(1000), 3000, 3);
    assert_eq!(ep.timer(TimerKind::Tlp), Some(ms(1202)));
    events(&mut ep);
    assert!(run_until(&mut ep, ms(1201)).is_empty());
    let out = run_until(&mut ep, ms(1202));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0].1, 2000, 3000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Tlp]);
    assert_eq!(ep.recovery_phase(), Phase::Open, "a probe is not recovery");
    assert_eq!(
        ep.timer(TimerKind::Rto),
        Some(ms(1502)),
        "the RTO restarts from the probe"
    );
}

#[test]
fn tlp_sends_new_data_when_it_can_even_beyond_cwnd() {
    let (mut ep, p) = start(rt(200, true, false));
    ep.write(ms(1000), &[1u8; 11_000]).unwrap();
    assert_eq!(drain(&mut ep, ms(1000)).len(), 10, "initial window 10");
    events(&mut ep);
    let out = run_until(&mut ep, ms(1202));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(1202));
    assert_data(&p, &out[0].1, 10_000, 11_000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::TlpNewData]);
    assert_eq!(ep.stats().retransmissions_tlp, 0);
    assert_eq!(
        ep.stats().tlp_probes,
        1,
        "a probe of new data counts as a probe"
    );
}

#[test]
fn tlp_one_probe_per_episode_until_the_probe_is_acked() {
    let (mut ep, mut p) = start(rt(200, true, false));
    send(&mut ep, ms(1000), 3000, 3);
    assert_eq!(run_until(&mut ep, ms(1202)).len(), 1);
    assert_eq!(ep.timer(TimerKind::Tlp), None);
    // an ACK of new data below the probe's snd_nxt does not start a new episode
    ep.handle_segment(ms(1250), p.ack(1000));
    assert_eq!(ep.timer(TimerKind::Tlp), None);
    // nothing more until the RTO (restarted by that ACK)
    events(&mut ep);
    let rto_at = ep.timer(TimerKind::Rto).unwrap();
    assert!(rto_at > ms(1250));
    assert!(run_until(
        &mut ep,
        thinlab_tcp::Instant::from_nanos(rto_at.as_nanos() - 1_000_000)
    )
    .is_empty());
    let out = run_until(&mut ep, rto_at);
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0].1, 1000, 2000);
    assert_eq!(rto_count(&events(&mut ep)), 1);
    // everything acknowledged; new data arms a fresh probe
    ep.handle_segment(ms(1650), p.ack(3000));
    send(&mut ep, ms(2000), 2000, 2);
    assert!(ep.timer(TimerKind::Tlp).is_some());
}

#[test]
fn tlp_episode_ends_when_the_probe_is_acked() {
    let (mut ep, mut p) = start(rt(200, true, false));
    send(&mut ep, ms(1000), 3000, 3);
    assert_eq!(run_until(&mut ep, ms(1202)).len(), 1);
    ep.handle_segment(ms(1302), p.ack(3000));
    send(&mut ep, ms(1400), 2000, 2);
    assert_eq!(
        ep.timer(TimerKind::Tlp),
        Some(ms(1400) + 2 * ep.srtt().unwrap() + dur(2))
    );
}

#[test]
fn tlp_not_armed_without_sack() {
    let (mut ep, p) = client(rt(200, true, true), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 3000, 3);
    assert_eq!(ep.timer(TimerKind::Tlp), None);
    events(&mut ep);
    let out = run_until(&mut ep, ms(1300));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0].1, 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Rto]);
}

#[test]
fn tlp_not_armed_in_recovery_nor_with_sacked_segments() {
    let (mut ep, mut p) = start(rt(200, true, false));
    send(&mut ep, ms(1000), 5000, 5);
    assert!(ep.timer(TimerKind::Tlp).is_some());
    ep.handle_segment(ms(1100), p.sack(0, &[(1000, 2000)]));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.timer(TimerKind::Tlp), None, "Linux Disorder: no probe");
    ep.handle_segment(ms(1101), p.sack(0, &[(1000, 4000)]));
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    assert_eq!(ep.timer(TimerKind::Tlp), None);
    ep.handle_segment(ms(1200), p.sack(1000, &[(1000, 4000)]));
    assert_eq!(ep.timer(TimerKind::Tlp), None, "partial ACK in recovery");
}

#[test]
fn tlp_capped_by_the_rto_deadline_and_probe_goes_first() {
    // Linux constants: one segment, PTO = 2·100 + 200 = 400 ms > RTO 300 ms
    let (mut ep, p) = start(rt(200, true, true));
    send(&mut ep, ms(1000), 100, 1);
    assert_eq!(ep.timer(TimerKind::Rto), Some(ms(1300)));
    assert_eq!(ep.timer(TimerKind::Tlp), Some(ms(1300)));
    events(&mut ep);
    let out = run_until(&mut ep, ms(1300));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0].1, 0, 100);
    let evs = events(&mut ep);
    assert_eq!(sent_kinds(&evs), vec![SendKind::Tlp]);
    assert_eq!(rto_count(&evs), 0, "the probe, not an RTO");
    assert_eq!(ep.stats().rto_events, 0);
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.timer(TimerKind::Rto), Some(ms(1600)));
    // the probe is lost too: the RTO follows
    let out = run_until(&mut ep, ms(1600));
    assert_eq!(out.len(), 1);
    assert_eq!(rto_count(&events(&mut ep)), 1);
}

// ---------------------------------------------------------------------------------------
// RACK

#[test]
fn rack_marks_lost_when_the_reorder_window_has_passed() {
    let (mut ep, mut p) = start(rt(200, false, true));
    send(&mut ep, ms(1000), 1000, 1);
    send(&mut ep, ms(1010), 1000, 1);
    events(&mut ep);
    // the later segment is SACKed at 1110: RACK.rtt = 100, reo_wnd = min_RTT/4 = 25 ms
    ep.handle_segment(ms(1110), p.sack(0, &[(1000, 2000)]));
    assert_eq!(ep.rack_reo_wnd(), dur(25));
    assert!(
        drain(&mut ep, ms(1110)).is_empty(),
        "not before 1000 + 100 + 25"
    );
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.timer(TimerKind::Reorder), Some(ms(1125)));
    assert!(run_until(&mut ep, ms(1124)).is_empty());
    let out = run_until(&mut ep, ms(1125));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(1125));
    assert_data(&p, &out[0].1, 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::RackRetransmit]);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    assert_eq!(ep.stats().retransmissions_rack, 1);
    assert_eq!(ep.stats().retransmissions_fast, 0);
}

#[test]
fn rack_marks_at_once_when_the_sack_arrives_after_the_deadline() {
    let (mut ep, mut p) = start(rt(200, false, true));
    send(&mut ep, ms(1000), 1000, 1);
    send(&mut ep, ms(1100), 1000, 1);
    events(&mut ep);
    // SACK of the second at 1200: deadline of the first = 1000 + 100 + 25 = 1125 < 1200
    ep.handle_segment(ms(1200), p.sack(0, &[(1000, 2000)]));
    let out = drain(&mut ep, ms(1200));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::RackRetransmit]);
    assert_eq!(ep.timer(TimerKind::Reorder), None);
}

#[test]
fn rack_reordering_repaired_by_the_original_sends_nothing() {
    let (mut ep, mut p) = start(rt(200, false, true));
    send(&mut ep, ms(1000), 1000, 1);
    send(&mut ep, ms(1010), 1000, 1);
    ep.handle_segment(ms(1110), p.sack(0, &[(1000, 2000)]));
    // the first arrives late (reordered) before the window closes
    ep.handle_segment(ms(1120), p.ack(2000));
    assert!(run_until(&mut ep, ms(1200)).is_empty());
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.stats().retransmissions_fast, 0);
    assert!(
        ep.rack_state().reord_seen,
        "a never-retransmitted segment delivered below the SACKed one"
    );
}

#[test]
fn rack_three_sacked_means_no_reorder_window() {
    let (mut ep, mut p) = start(rt(200, false, true));
    send(&mut ep, ms(1000), 4000, 4);
    ep.handle_segment(ms(1100), p.sack(0, &[(1000, 2000)]));
    ep.handle_segment(ms(1101), p.sack(0, &[(1000, 3000)]));
    assert!(drain(&mut ep, ms(1101)).is_empty());
    ep.handle_segment(ms(1102), p.sack(0, &[(1000, 4000)]));
    assert_eq!(ep.rack_reo_wnd(), dur(0));
    let out = drain(&mut ep, ms(1102));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
}

#[test]
fn rack_defers_dupthresh_and_newreno_keeps_it_without_rack() {
    // three duplicate ACKs without SACK blocks: dupthresh recovery without RACK only
    for rack in [false, true] {
        let (mut ep, mut p) = start(rt(200, false, rack));
        send(&mut ep, ms(1000), 5000, 5);
        for i in 0..3 {
            ep.handle_segment(ms(1100 + i), p.ack(0));
        }
        let out = drain(&mut ep, ms(1102));
        if rack {
            assert!(out.is_empty(), "RACK needs a delivered later-sent segment");
            assert_eq!(ep.recovery_phase(), Phase::Open);
        } else {
            assert_eq!(out.len(), 1);
            assert_eq!(ep.recovery_phase(), Phase::Recovery);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Pair: a thin stream over a 100 ms RTT link, one segment lost

fn pair_latency(m: Mechanisms) -> (thinlab_tcp::Duration, u64) {
    let mut ca = cfg();
    ca.sack = true;
    ca.mechanisms = m;
    let mut cb = cfg();
    cb.sack = true;
    let mut pr = Pair::new(ca, cb, dur(50));
    // 120 B every 60 ms: two in flight; without RACK the loss waits for three later segments
    // to be SACKed (dupthresh)
    let times = pr.schedule_writes(ms(1000), dur(60), 20, 120);
    pr.drop_ab.seq.push(5 * 120);
    let expected = pr.expected_b();
    pr.run(ms(10_000));
    assert!(pr.received_b() == expected);
    let got = pr.b_has(6 * 120).unwrap();
    (got - times[5], pr.a.stats().rto_events)
}

#[test]
fn rack_repairs_a_thin_stream_loss_faster_than_rto() {
    let (none, rto_none) = pair_latency(Mechanisms::default());
    let (rack, rto_rack) = pair_latency(Mechanisms {
        tlp: true,
        rack: true,
        ..Mechanisms::default()
    });
    println!("lost write delivered after: no RACK-TLP {none:?} (RTOs {rto_none}), RACK-TLP {rack:?} (RTOs {rto_rack})");
    assert_eq!(rto_rack, 0);
    // RACK: the next segment's SACK (sent 60 ms later) arrives 160 ms after the loss, past
    // 100 + 25 ms: the retransmission goes at once and arrives 50 ms later
    assert_eq!(rack, dur(210));
    assert!(none >= rack + dur(100), "{none:?} vs {rack:?}");
}
