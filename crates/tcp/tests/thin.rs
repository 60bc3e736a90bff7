//! Thin-stream mechanism scripts (docs/spec/mechanisms.md: thin-stream detection to thin dupACK,
//! Early Retransmit): thin dupACK, linear timeouts
//! (both variants), Early Retransmit (RFC 5827 and the Linux RTT/4 delay), Yin et al.'s F-RTO
//! threshold, and the attribution of retransmissions to Early / Fast / Rto. Each mechanism has its
//! exact trigger and output, and a script showing it stays off when its condition fails.

use crate::common;
use common::*;
use std::time::Duration;
use thinlab_tcp::endpoint::timers::TimerKind;
use thinlab_tcp::recovery::Phase;
use thinlab_tcp::{
    Endpoint, Event, LinearTimeouts, Mechanisms, SendKind, TcpConfig, ThinDetection,
};

fn with(m: Mechanisms) -> TcpConfig {
    let mut c = cfg();
    c.limited_transmit = false;
    c.mechanisms = m;
    c
}

/// A connection that has been through one fast-recovery episode (so it is no longer in the
/// initial slow start: `pif4` can call it thin) and has nothing outstanding at t = 1200 ms.
/// cwnd = ssthresh = 5; SRTT = 100 ms; RTO = 300 ms.
fn warmed(c: TcpConfig) -> (Endpoint, Peer) {
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(100));
    ep.write(ms(1000), &[1u8; 10_000]).unwrap();
    assert_eq!(drain(&mut ep, ms(1000)).len(), 10);
    assert!(!ep.is_thin(), "10 in flight in the initial slow start");
    for i in 0..3 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
    }
    assert_eq!(drain(&mut ep, ms(1102)).len(), 1);
    ep.handle_segment(ms(1200), p.ack(10_000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (5, 5));
    assert!(!ep.in_initial_slow_start());
    assert_eq!(ep.rto(), dur(300));
    events(&mut ep);
    (ep, p)
}

/// Write `n` segments at `t` and check they all leave.
fn send(ep: &mut Endpoint, t: thinlab_tcp::Instant, n: usize) {
    ep.write(t, &vec![2u8; 1000 * n]).unwrap();
    assert_eq!(drain(ep, t).len(), n);
    events(ep);
}

fn rto_fired(evs: &[Event]) -> Vec<(Duration, u32)> {
    evs.iter()
        .filter_map(|e| match e {
            Event::RtoFired { rto, backoff, .. } => Some((*rto, *backoff)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// thin dupACK

fn thin_dupack() -> Mechanisms {
    Mechanisms {
        thin_dupack: true,
        ..Mechanisms::default()
    }
}

#[test]
fn thin_dupack_fires_on_the_first_dupack_with_three_in_flight() {
    let (mut ep, mut p) = warmed(with(thin_dupack()));
    send(&mut ep, ms(1200), 3);
    assert!(ep.is_thin());
    ep.handle_segment(ms(1300), p.ack(10_000));
    let out = drain(&mut ep, ms(1300));
    assert_eq!(out.len(), 1, "one dupACK is enough while thin");
    assert_data(&p, &out[0], 10_000, 11_000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::FastRetransmit]);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    assert_eq!(
        ep.stats().retransmissions_fast,
        2,
        "warm-up episode + this one"
    );
    assert_eq!(ep.stats().retransmissions_early, 0);
}

#[test]
fn fast_retransmit_of_the_head_restarts_the_rto_timer() {
    // a thin stream: one write every 140 ms; the first is lost, the second's dupACK arrives
    // 240 ms after the loss, 60 ms before the original RTO deadline
    let (mut ep, mut p) = warmed(with(thin_dupack()));
    send(&mut ep, ms(1200), 1);
    assert_eq!(ep.timer(TimerKind::Rto), Some(ms(1500)));
    send(&mut ep, ms(1340), 1);
    ep.handle_segment(ms(1440), p.ack(10_000));
    assert_eq!(drain(&mut ep, ms(1440)).len(), 1);
    assert_eq!(
        ep.timer(TimerKind::Rto),
        Some(ms(1740)),
        "restarted by the retransmission"
    );
    // its ACK arrives before the restarted timer: no spurious RTO
    ep.handle_segment(ms(1540), p.ack(12_000));
    assert!(run_until(&mut ep, ms(3000)).is_empty());
    assert_eq!(ep.stats().rto_events, 0);
}

#[test]
fn thin_dupack_waits_for_three_with_four_in_flight() {
    let (mut ep, mut p) = warmed(with(thin_dupack()));
    send(&mut ep, ms(1200), 4);
    assert!(!ep.is_thin());
    for i in 0..2 {
        ep.handle_segment(ms(1300 + i), p.ack(10_000));
        assert!(
            drain(&mut ep, ms(1300 + i)).is_empty(),
            "dupACK {} with 4 in flight",
            i + 1
        );
    }
    ep.handle_segment(ms(1302), p.ack(10_000));
    let out = drain(&mut ep, ms(1302));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 10_000, 11_000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::FastRetransmit]);
}

#[test]
fn thin_dupack_off_or_in_initial_slow_start_needs_three() {
    // mechanism off: three in flight, thin, one dupACK does nothing
    let (mut ep, mut p) = warmed(with(Mechanisms::default()));
    send(&mut ep, ms(1200), 3);
    assert!(ep.is_thin());
    ep.handle_segment(ms(1300), p.ack(10_000));
    assert!(drain(&mut ep, ms(1300)).is_empty());
    // mechanism on but still in the initial slow start: `pif4` says not thin
    let (mut ep, mut p) = client(with(thin_dupack()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 3);
    assert!(ep.in_initial_slow_start() && !ep.is_thin());
    ep.handle_segment(ms(1100), p.ack(0));
    assert!(drain(&mut ep, ms(1100)).is_empty());
    // ... where `dpifl` (3 × 10 ms < 100 ms) calls it thin
    let mut c = with(thin_dupack());
    c.thin_detection = ThinDetection::Dpifl;
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 3);
    assert!(ep.is_thin());
    ep.handle_segment(ms(1100), p.ack(0));
    assert_eq!(drain(&mut ep, ms(1100)).len(), 1);
}

// ---------------------------------------------------------------------------------------
// linear timeouts

fn lt(variant: LinearTimeouts) -> TcpConfig {
    let mut c = with(Mechanisms {
        linear_timeouts: true,
        ..Mechanisms::default()
    });
    c.linear_timeouts_variant = variant;
    c
}

#[test]
fn linear_timeouts_linux_six_linear_then_exponential() {
    let (mut ep, _p) = client(lt(LinearTimeouts::Linux), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 1);
    let r = ep.rto();
    assert_eq!(r, dur(300));
    let t0 = ms(1000);
    let out = run_until(&mut ep, t0 + r * 21);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    let want: Vec<_> = [1u32, 2, 3, 4, 5, 6, 7, 9, 13, 21]
        .iter()
        .map(|&k| t0 + r * k)
        .collect();
    assert_eq!(times, want, "t0 + k·RTO for k = 1..7, then doubling");
    let evs = events(&mut ep);
    assert_eq!(sent_kinds(&evs), vec![SendKind::Rto; 10]);
    let fired = rto_fired(&evs);
    assert_eq!(
        fired[..7].iter().map(|f| f.1).collect::<Vec<_>>(),
        vec![0, 0, 0, 0, 0, 0, 1]
    );
    assert_eq!(fired[7..], [(r * 2, 2), (r * 4, 3), (r * 8, 4)]);
    assert_eq!(ep.stats().retransmissions_rto, 10);
}

#[test]
fn linear_timeouts_seed_variant_adds_srtt_per_expiry() {
    let (mut ep, _p) = client(lt(LinearTimeouts::SeedSrtt), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 1);
    assert_eq!((ep.rto(), ep.srtt()), (dur(300), Some(dur(100))));
    let out = run_until(&mut ep, ms(1000 + 4200));
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    // intervals 300, 400, 500, 600, 700, 800, 900 ms
    let want: Vec<_> = [300, 700, 1200, 1800, 2500, 3300, 4200]
        .iter()
        .map(|&d| ms(1000 + d))
        .collect();
    assert_eq!(times, want);
    // the 7th expiry doubles RTO_6 = 900 ms
    assert_eq!(ep.poll_timeout(), Some(ms(1000 + 4200 + 1800)));
}

#[test]
fn linear_timeouts_off_when_not_thin_or_not_established() {
    // four in flight: not thin at the expiry, exponential
    let (mut ep, _p) = client(lt(LinearTimeouts::Linux), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 4);
    let r = ep.rto();
    let out = run_until(&mut ep, ms(1000) + r * 7);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        vec![ms(1000) + r, ms(1000) + r * 3, ms(1000) + r * 7]
    );
    // closing (FIN-WAIT-1): Linux requires ESTABLISHED
    let (mut ep, _p) = client(lt(LinearTimeouts::Linux), mss_opts(1000), ms(100));
    ep.write(ms(1000), &[1u8; 500]).unwrap();
    ep.close(ms(1000));
    assert_eq!(drain(&mut ep, ms(1000)).len(), 1);
    let out = run_until(&mut ep, ms(1000) + r * 7);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        vec![ms(1000) + r, ms(1000) + r * 3, ms(1000) + r * 7]
    );
    // mechanism off: exponential even though thin
    let (mut ep, _p) = client(with(Mechanisms::default()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 1);
    let out = run_until(&mut ep, ms(1000) + r * 7);
    assert_eq!(out.len(), 3);
    assert!(ep.is_thin(), "thin after the first RTO, but LT is off");
}

#[test]
fn linear_timeouts_fresh_ack_restarts_the_count() {
    let (mut ep, mut p) = client(lt(LinearTimeouts::Linux), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 1);
    let out = run_until(&mut ep, ms(1000 + 1800));
    assert_eq!(out.len(), 6);
    ep.handle_segment(ms(2850), p.ack(1000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    // a new episode gets six linear retransmissions again
    send(&mut ep, ms(3000), 1);
    let r = ep.rto();
    let out = run_until(&mut ep, ms(3000) + r * 7);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    let want: Vec<_> = (1..=7).map(|k| ms(3000) + r * k).collect();
    assert_eq!(times, want);
}

// ---------------------------------------------------------------------------------------
// Early Retransmit

fn er() -> Mechanisms {
    Mechanisms {
        early_retransmit: true,
        ..Mechanisms::default()
    }
}

#[test]
fn early_retransmit_threshold_is_outstanding_minus_one() {
    // 3 outstanding, nothing unsent: ER_thresh = 2
    let (mut ep, mut p) = client(with(er()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 3);
    ep.handle_segment(ms(1100), p.ack(0));
    assert!(
        drain(&mut ep, ms(1100)).is_empty(),
        "first dupACK of 3 outstanding"
    );
    ep.handle_segment(ms(1101), p.ack(0));
    let out = drain(&mut ep, ms(1101));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Early]);
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    let s = ep.stats();
    assert_eq!(
        (
            s.retransmissions_early,
            s.retransmissions_fast,
            s.retransmissions_rto
        ),
        (1, 0, 0)
    );

    // 2 outstanding: ER_thresh = 1
    let (mut ep, mut p) = client(with(er()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 2);
    ep.handle_segment(ms(1100), p.ack(0));
    assert_eq!(drain(&mut ep, ms(1100)).len(), 1);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Early]);

    // window-limited (peer window 3000, 2000 bytes unsent): no new data can be sent, ER applies
    let (mut ep, mut p) = client(with(er()), mss_opts(1000), ms(100));
    p.window = 3000;
    ep.handle_segment(ms(900), p.ack(0));
    ep.write(ms(1000), &[3u8; 5000]).unwrap();
    assert_eq!(drain(&mut ep, ms(1000)).len(), 3);
    events(&mut ep);
    ep.handle_segment(ms(1100), p.ack(0));
    ep.handle_segment(ms(1101), p.ack(0));
    assert_eq!(sent_kinds(&events(&mut ep)), vec![]);
    let out = drain(&mut ep, ms(1101));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Early]);
}

#[test]
fn early_retransmit_off_when_new_data_can_be_sent_or_four_outstanding() {
    // new data written and not yet sent when the dupACKs arrive: ER does not apply
    let (mut ep, mut p) = client(with(er()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 2);
    ep.write(ms(1100), &[4u8; 1000]).unwrap();
    ep.handle_segment(ms(1100), p.ack(0));
    let out = drain(&mut ep, ms(1100));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 2000, 3000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::New]);
    // four outstanding: two dupACKs do nothing, the third is an ordinary fast retransmit
    let (mut ep, mut p) = client(with(er()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 4);
    for i in 0..2 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
        assert!(drain(&mut ep, ms(1100 + i)).is_empty());
    }
    ep.handle_segment(ms(1102), p.ack(0));
    assert_eq!(drain(&mut ep, ms(1102)).len(), 1);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::FastRetransmit]);
    // mechanism off: 2 outstanding, one dupACK does nothing
    let (mut ep, mut p) = client(with(Mechanisms::default()), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 2);
    ep.handle_segment(ms(1100), p.ack(0));
    assert!(drain(&mut ep, ms(1100)).is_empty());
}

#[test]
fn early_retransmit_linux_delay_of_a_quarter_rtt() {
    let mut c = with(er());
    c.early_retransmit_delay = true;
    let (mut ep, mut p) = client(c.clone(), mss_opts(1000), ms(100));
    assert_eq!(ep.srtt(), Some(dur(100)));
    send(&mut ep, ms(1000), 2);
    ep.handle_segment(ms(1100), p.ack(0));
    assert!(drain(&mut ep, ms(1100)).is_empty(), "delayed");
    assert_eq!(ep.poll_timeout(), Some(ms(1125)), "SRTT/4 = 25 ms");
    assert!(run_until(&mut ep, ms(1124)).is_empty());
    let out = run_until(&mut ep, ms(1125));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(1125));
    assert_data(&p, &out[0].1, 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Early]);
    assert_eq!(ep.stats().retransmissions_early, 1);

    // an ACK of new data during the delay cancels it
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 2);
    ep.handle_segment(ms(1100), p.ack(0));
    ep.handle_segment(ms(1110), p.ack(1000));
    let out = run_until(&mut ep, ms(1200));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(ep.stats().retransmissions_early, 0);
    assert_eq!(ep.recovery_phase(), Phase::Open);
}

// --------------------------------------------------------------------------------------- F-RTO
// threshold (Yin et al.)

/// An established connection whose F-RTO estimator has seen ten 100 ms samples.
fn frto_warmed(m: Mechanisms) -> (Endpoint, Peer, thinlab_tcp::Instant) {
    let (mut ep, mut p) = client(with(m), mss_opts(1000), ms(100));
    let mut t = ms(1000);
    for k in 1..=10u64 {
        send(&mut ep, t, 1);
        t += dur(100);
        ep.handle_segment(t, p.ack(1000 * k));
        t += dur(10);
    }
    events(&mut ep);
    (ep, p, t)
}

#[test]
fn er_threshold_fires_on_a_dupack_after_frto() {
    let m = Mechanisms {
        er_threshold: true,
        ..Mechanisms::default()
    };
    let (mut ep, mut p, t) = frto_warmed(m);
    let est = *ep.frto_estimator();
    assert_eq!(est.srtt(), Some(dur(100)));
    // SVAR = 50 ms · (3/4)^9; F-RTO = 100 + 2·SVAR + 100
    let th = est.threshold().unwrap();
    assert!(th > dur(207) && th < dur(208), "{th:?}");
    assert!(ep.rto() > th, "the RTO must not come first");
    send(&mut ep, t, 4);
    let una = 10_000;
    // first dupACK exactly at F-RTO: not yet (strictly greater)
    ep.handle_segment(t + th, p.ack(una));
    assert!(drain(&mut ep, t + th).is_empty());
    // second dupACK 1 ns later: recovery starts without a third
    let t2 = t + th + Duration::from_nanos(1);
    ep.handle_segment(t2, p.ack(una));
    let out = drain(&mut ep, t2);
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], una, una + 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::EarlyThreshold]);
    assert_eq!(ep.stats().retransmissions_early_threshold, 1);
    assert_eq!(ep.stats().retransmissions_fast, 0);
}

#[test]
fn er_threshold_off_before_frto_or_when_disabled() {
    let m = Mechanisms {
        er_threshold: true,
        ..Mechanisms::default()
    };
    let (mut ep, mut p, t) = frto_warmed(m);
    send(&mut ep, t, 4);
    ep.handle_segment(t + dur(150), p.ack(10_000));
    ep.handle_segment(t + dur(200), p.ack(10_000));
    assert!(drain(&mut ep, t + dur(200)).is_empty(), "200 ms < F-RTO");
    let (mut ep, mut p, t) = frto_warmed(Mechanisms::default());
    assert_eq!(ep.frto_estimator().threshold(), None, "not fed when off");
    send(&mut ep, t, 4);
    ep.handle_segment(t + dur(250), p.ack(10_000));
    ep.handle_segment(t + dur(260), p.ack(10_000));
    assert!(drain(&mut ep, t + dur(260)).is_empty());
}

// ---------------------------------------------------------------------------------------
// attribution

#[test]
fn retransmissions_by_cause() {
    let m = Mechanisms {
        early_retransmit: true,
        linear_timeouts: true,
        ..Mechanisms::default()
    };
    let (mut ep, mut p) = client(with(m), mss_opts(1000), ms(100));
    // Fast: 5 outstanding, three dupACKs
    send(&mut ep, ms(1000), 5);
    for i in 0..3 {
        ep.handle_segment(ms(1100 + i), p.ack(0));
    }
    assert_eq!(drain(&mut ep, ms(1102)).len(), 1);
    let mut kinds = sent_kinds(&events(&mut ep));
    ep.handle_segment(ms(1200), p.ack(5000));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    // Early: 2 outstanding (cwnd 2 now), one dupACK
    send(&mut ep, ms(1300), 2);
    ep.handle_segment(ms(1400), p.ack(5000));
    assert_eq!(drain(&mut ep, ms(1400)).len(), 1);
    kinds.extend(sent_kinds(&events(&mut ep)));
    ep.handle_segment(ms(1500), p.ack(7000));
    // Rto: one segment, no ACK
    send(&mut ep, ms(1600), 1);
    let rto = ep.rto();
    assert_eq!(run_until(&mut ep, ms(1600) + rto).len(), 1);
    kinds.extend(sent_kinds(&events(&mut ep)));
    assert_eq!(
        kinds,
        vec![SendKind::FastRetransmit, SendKind::Early, SendKind::Rto]
    );
    let s = ep.stats();
    assert_eq!(
        (
            s.retransmissions_early,
            s.retransmissions_fast,
            s.retransmissions_rto
        ),
        (1, 1, 1)
    );
}

#[test]
fn early_retransmit_counts_sacked_segments() {
    // RFC 5827 §3.2: with SACK, ER_thresh SACKed segments above the hole are enough, even if
    // they arrive in a single ACK
    let mut c = with(er());
    c.sack = true;
    let (mut ep, mut p) = client(c.clone(), sack_opts(1000), ms(100));
    send(&mut ep, ms(1000), 3);
    ep.handle_segment(ms(1100), p.sack(0, &[(1000, 3000)]));
    let out = drain(&mut ep, ms(1100));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 0, 1000);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::Early]);
    // one SACKed segment of three: not yet
    let (mut ep, mut p) = client(c, sack_opts(1000), ms(100));
    send(&mut ep, ms(1000), 3);
    ep.handle_segment(ms(1100), p.sack(0, &[(1000, 2000)]));
    assert!(drain(&mut ep, ms(1100)).is_empty());
}

#[test]
fn linear_timeouts_follow_the_configured_thin_test() {
    // six in flight at SRTT 100 ms: thin by dpifl (6 × 10 ms < 100 ms), not by pif4
    let mut c = lt(LinearTimeouts::Linux);
    c.thin_detection = ThinDetection::Dpifl;
    let (mut ep, _p) = client(c, mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 6);
    let r = ep.rto();
    let out = run_until(&mut ep, ms(1000) + r * 3);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        vec![ms(1000) + r, ms(1000) + r * 2, ms(1000) + r * 3]
    );
    let (mut ep, _p) = client(lt(LinearTimeouts::Linux), mss_opts(1000), ms(100));
    send(&mut ep, ms(1000), 6);
    let out = run_until(&mut ep, ms(1000) + r * 3);
    let times: Vec<_> = out.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![ms(1000) + r, ms(1000) + r * 3]);
}
