//! Proportional Rate Reduction (RFC 6937) segment scripts: the Linux thin-stream behaviour of
//! a `linux`-profile sender (CUBIC, RACK-TLP, PRR). RACK enters recovery on the SACK of the
//! next write; the lost head is the only thing PRR lets out (cwnd = pipe 0 + sndcnt 1), so a
//! write made meanwhile waits for the fast retransmission's ACK; if that retransmission is
//! lost too, only the RTO recovers it. With `CwndReduction::Immediate` (cwnd = ssthresh at
//! once) the same write leaves at once.

mod common;
use common::*;
use thinlab_tcp::recovery::Phase;
use thinlab_tcp::{CcAlgorithm, CwndReduction, Endpoint, Event, Mechanisms, SendKind, TcpConfig};

fn linux(reduction: CwndReduction) -> TcpConfig {
    let mut c = cfg();
    c.sack = true;
    c.cc = CcAlgorithm::Cubic;
    c.initial_window = 10;
    c.cwnd_reduction = reduction;
    c.mechanisms = Mechanisms {
        tlp: true,
        rack: true,
        ..Mechanisms::default()
    };
    c
}

/// Established at 100 ms (SRTT 100 ms); write A (100 B) at 1000 ms, lost; write B at 1140 ms,
/// SACKed at 1240 ms: RACK marks A lost and recovery starts.
fn thin_loss(reduction: CwndReduction) -> (Endpoint, Peer) {
    let (mut ep, mut p) = client(linux(reduction), sack_opts(1000), ms(100));
    for t in [1000, 1140] {
        ep.write(ms(t), &[1u8; 100]).unwrap();
        assert_eq!(drain(&mut ep, ms(t)).len(), 1);
    }
    events(&mut ep);
    ep.handle_segment(ms(1240), p.sack(0, &[(100, 200)]));
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    let out = drain(&mut ep, ms(1240));
    assert_eq!(out.len(), 1, "the fast retransmission");
    assert_data(&p, &out[0], 0, 100);
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::FastRetransmit]);
    assert_eq!(ep.ssthresh(), 7, "CUBIC: 0.7 × cwnd 10");
    (ep, p)
}

#[test]
fn prr_holds_the_next_write_until_the_fast_retransmission_is_acked() {
    let (mut ep, mut p) = thin_loss(CwndReduction::Prr);
    assert_eq!(ep.cwnd(), 1, "pipe 0 + sndcnt 1");
    ep.write(ms(1280), &[2u8; 100]).unwrap();
    assert!(
        drain(&mut ep, ms(1280)).is_empty(),
        "C waits: pipe 1 = cwnd 1"
    );
    // the retransmission's ACK ends recovery: cwnd = ssthresh, C leaves
    ep.handle_segment(ms(1340), p.ack(200));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.cwnd(), 7);
    let out = drain(&mut ep, ms(1340));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 200, 300);
}

#[test]
fn immediate_reduction_sends_the_next_write_at_once() {
    let (mut ep, p) = thin_loss(CwndReduction::Immediate);
    assert_eq!(ep.cwnd(), 7);
    ep.write(ms(1280), &[2u8; 100]).unwrap();
    let out = drain(&mut ep, ms(1280));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0], 200, 300);
}

#[test]
fn prr_lost_fast_retransmission_is_repaired_by_the_rto_with_the_held_write() {
    let (mut ep, p) = thin_loss(CwndReduction::Prr);
    ep.write(ms(1280), &[2u8; 100]).unwrap();
    assert!(drain(&mut ep, ms(1280)).is_empty());
    // no ACK ever comes: nothing was sent after the retransmission, so RACK cannot see its
    // loss; the probe is not allowed in recovery; the RTO fires
    let out = run_until(&mut ep, ms(3000));
    let evs = events(&mut ep);
    let rto_at = evs
        .iter()
        .find_map(|e| match e {
            Event::RtoFired { at, .. } => Some(*at),
            _ => None,
        })
        .expect("an RTO");
    assert!(rto_at >= ms(1240) + dur(300), "RTO at {rto_at:?}");
    let first = &out[0];
    assert_eq!(first.0, rto_at, "nothing leaves before the RTO");
    assert_data(&p, &first.1, 0, 100);
    assert_eq!(sent_kinds(&evs)[0], SendKind::Rto);
}

#[test]
fn prr_paces_a_bulk_recovery_at_ssthresh_over_prior_cwnd() {
    // 10 segments in flight, the first lost; SACKs of 1..9 arrive one by one. PRR sends about
    // 0.7 × what is delivered, never a burst.
    let (mut ep, mut p) = client(linux(CwndReduction::Prr), sack_opts(1000), ms(100));
    ep.write(ms(1000), &vec![3u8; 20_000]).unwrap();
    assert_eq!(drain(&mut ep, ms(1000)).len(), 10);
    events(&mut ep);
    let mut sent_during = 0;
    for i in 1..10u64 {
        let t = ms(1100 + i);
        ep.handle_segment(t, p.sack(0, &[(1000, 1000 * (i + 1))]));
        let n = drain(&mut ep, t).len();
        assert!(n <= 2, "at most two segments per ACK, got {n} at SACK {i}");
        sent_during += n;
    }
    assert_eq!(ep.recovery_phase(), Phase::Recovery);
    // 9 delivered: ⌈7 · 9 / 10⌉ = 7 sent, the fast retransmission included
    assert_eq!(sent_during, 7);
}
