//! Linux behaviours of the `linux` profile as segment scripts. Proportional Rate Reduction
//! (RFC 6937): the thin-stream behaviour of
//! a `linux`-profile sender (CUBIC, RACK-TLP, PRR). RACK enters recovery on the SACK of the
//! next write; the lost head is the only thing PRR lets out (cwnd = pipe 0 + sndcnt 1), so a
//! write made meanwhile waits for the fast retransmission's ACK; if that retransmission is
//! lost too, only the RTO recovers it. With `CwndReduction::Immediate` (cwnd = ssthresh at
//! once) the same write leaves at once. The timer wheel (`clock_hz`): the RTO in whole
//! jiffies, firing on its wheel level's grid.

use crate::common;
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
    thin_loss_with(linux(reduction))
}

fn thin_loss_with(c: TcpConfig) -> (Endpoint, Peer) {
    let (mut ep, mut p) = client(c, sack_opts(1000), ms(100));
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
    assert_eq!(sent_kinds(&events(&mut ep)), vec![SendKind::RackRetransmit]);
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

// ---------------------------------------------------------------------------------------
// The timer wheel (`clock_hz`) of the same sender

#[test]
fn hz250_rto_is_whole_jiffies_and_fires_on_the_level_1_grid() {
    use thinlab_tcp::endpoint::timers::TimerKind;
    let mut c = linux(CwndReduction::Prr);
    c.mechanisms = Mechanisms::default();
    c.clock_granularity = dur(1) / 1000;
    for (hz, expect_ms) in [(None, 1300), (Some(250), 1312), (Some(1000), 1304)] {
        c.clock_hz = hz;
        let (mut ep, p) = client(c.clone(), sack_opts(1000), ms(100));
        assert_eq!(ep.rto(), dur(300), "SRTT 100 ms + 200 ms is whole jiffies");
        ep.write(ms(1000), &[1u8; 100]).unwrap();
        drain(&mut ep, ms(1000));
        // 250 Hz: jiffy 250 + 75 = 325, level 1 (8 jiffies) → 328 = 1312 ms;
        // 1000 Hz: 1000 + 300 = 1300, level 1 (8 jiffies) → 1304 ms
        assert_eq!(ep.timer(TimerKind::Rto), Some(ms(expect_ms)), "{hz:?}");
        let out = run_until(&mut ep, ms(2000));
        assert_eq!(out[0].0, ms(expect_ms));
        assert_data(&p, &out[0].1, 0, 100);
    }
}

// ---------------------------------------------------------------------------------------
// Retransmission collapse

#[test]
fn an_rto_retransmission_collapses_every_unacked_write_into_one_segment() {
    for collapse in [true, false] {
        let mut c = linux(CwndReduction::Prr);
        c.mechanisms = Mechanisms::default();
        c.retrans_collapse = collapse;
        let (mut ep, mut p) = client(c, sack_opts(1000), ms(100));
        for t in [1000, 1140, 1280] {
            ep.write(ms(t), &[1u8; 100]).unwrap();
            assert_eq!(drain(&mut ep, ms(t)).len(), 1);
        }
        events(&mut ep);
        // RTO 300 ms from the first send (timer restarted on nothing: it runs from 1000)
        let out = run_until(&mut ep, ms(1300));
        assert_eq!(out.len(), 1, "cwnd 1 after the RTO");
        let end = if collapse { 300 } else { 100 };
        assert_data(&p, &out[0].1, 0, end);
        if collapse {
            // nothing is left to repair once that one segment is acknowledged
            ep.handle_segment(ms(1400), p.ack(300));
            assert!(drain(&mut ep, ms(1400)).is_empty());
            assert_eq!(ep.stats().retransmissions_rto, 1);
        } else {
            ep.handle_segment(ms(1400), p.ack(100));
            assert_eq!(drain(&mut ep, ms(1400)).len(), 2, "B and C go one by one");
        }
    }
}

#[test]
fn collapse_stops_at_a_sacked_segment_and_at_the_mss() {
    let mut c = linux(CwndReduction::Prr);
    c.mechanisms = Mechanisms::default();
    c.retrans_collapse = true;
    let (mut ep, mut p) = client(c, sack_opts(1000), ms(100));
    for (i, t) in [1000u64, 1010, 1020, 1030].into_iter().enumerate() {
        let n = if i == 1 { 600 } else { 300 };
        ep.write(ms(t), &vec![1u8; n]).unwrap();
        assert_eq!(drain(&mut ep, ms(t)).len(), 1);
    }
    // segments [0,300) [300,900) [900,1200) [1200,1500); the last is SACKed
    ep.handle_segment(ms(1130), p.sack(0, &[(1200, 1500)]));
    events(&mut ep);
    let out = run_until(&mut ep, ms(1400));
    // [0,300)+[300,900) = 900 ≤ 1000, + [900,1200) would be 1200 > MSS
    assert_data(&p, &out[0].1, 0, 900);
}

#[test]
fn collapse_does_not_absorb_a_sacked_segment() {
    let mut c = linux(CwndReduction::Prr);
    c.mechanisms = Mechanisms::default();
    c.retrans_collapse = true;
    let (mut ep, mut p) = client(c, sack_opts(1000), ms(100));
    for t in [1000u64, 1010, 1020] {
        ep.write(ms(t), &[1u8; 100]).unwrap();
        assert_eq!(drain(&mut ep, ms(t)).len(), 1);
    }
    ep.handle_segment(ms(1110), p.sack(0, &[(100, 200)]));
    let out = run_until(&mut ep, ms(1400));
    assert_data(&p, &out[0].1, 0, 100);
}

// ---------------------------------------------------------------------------------------
// D-SACK and undo

/// Peer-stream offsets of the SACK blocks in an ACK from the endpoint.
fn blocks_of(p: &Peer, seg: &thinlab_tcp::Segment) -> Vec<(i64, i64)> {
    let base = p.isn.wrapping_add(1);
    let off = |s: u32| s.wrapping_sub(base) as i32 as i64;
    seg.options
        .sack_blocks
        .iter()
        .map(|&(l, r)| (off(l), off(r)))
        .collect()
}

fn dsack_cfg(dsack: bool) -> TcpConfig {
    let mut c = linux(CwndReduction::Prr);
    c.dsack = dsack;
    c
}

#[test]
fn receiver_reports_a_duplicate_and_the_old_part_of_an_overlapping_segment() {
    let (mut ep, p) = client(dsack_cfg(true), sack_opts(1000), ms(100));
    ep.handle_segment(ms(200), p.data(0, 100));
    drain(&mut ep, ms(200));
    // an exact duplicate: D-SACK [0, 100) below the cumulative ACK 100
    ep.handle_segment(ms(210), p.data(0, 100));
    let out = drain(&mut ep, ms(210));
    assert_eq!(out.len(), 1);
    assert_eq!(p.acked_peer(&out[0]), 100);
    assert_eq!(blocks_of(&p, &out[0]), vec![(0, 100)]);
    // a bundle [50, 200): its old part [50, 100) is reported (Linux tcp_data_queue)
    ep.handle_segment(ms(220), p.data(50, 150));
    ep.read();
    let out = drain(&mut ep, ms(220));
    assert_eq!(p.acked_peer(&out[0]), 200);
    assert_eq!(blocks_of(&p, &out[0]), vec![(50, 100)]);
    // reported once: the next ACK carries no D-SACK
    ep.handle_segment(ms(230), p.data(200, 10));
    ep.read();
    let out = drain(&mut ep, ms(230));
    assert!(blocks_of(&p, &out[0]).is_empty());
    // without D-SACK nothing is reported
    let (mut ep, p) = client(dsack_cfg(false), sack_opts(1000), ms(100));
    ep.handle_segment(ms(200), p.data(0, 100));
    drain(&mut ep, ms(200));
    ep.handle_segment(ms(210), p.data(0, 100));
    let out = drain(&mut ep, ms(210));
    assert!(blocks_of(&p, &out[0]).is_empty());
}

#[test]
fn a_dsack_of_the_only_retransmission_undoes_the_reduction() {
    let (mut ep, mut p) = thin_loss_with(dsack_cfg(true));
    assert_eq!(ep.ssthresh(), 7);
    // the original A was only delayed: its ACK ends the episode (no timestamps: no undo yet)
    ep.handle_segment(ms(1250), p.ack(200));
    assert_eq!(ep.recovery_phase(), Phase::Open);
    assert_eq!(ep.cwnd(), 7);
    // then the retransmission arrives and is D-SACKed: every retransmission was spurious
    ep.handle_segment(ms(1340), p.sack(200, &[(0, 100)]));
    assert_eq!(ep.stats().dsacks, 1);
    assert_eq!(ep.stats().undos, 1);
    assert_eq!(
        (ep.cwnd(), ep.ssthresh()),
        (10, thinlab_tcp::cc::INFINITE_SSTHRESH)
    );
    // without D-SACK processing the reduction stays
    let (mut ep, mut p) = thin_loss_with(dsack_cfg(false));
    ep.handle_segment(ms(1250), p.ack(200));
    ep.handle_segment(ms(1340), p.sack(200, &[(0, 100)]));
    assert_eq!((ep.stats().dsacks, ep.stats().undos), (0, 0));
    assert_eq!(ep.cwnd(), 7);
}

#[test]
fn dsacks_of_data_never_retransmitted_are_ignored() {
    // RDB's bundles are D-SACKed by a Linux receiver: not our retransmissions
    let (mut ep, mut p) = client(dsack_cfg(true), sack_opts(1000), ms(100));
    ep.write(ms(1000), &[1u8; 100]).unwrap();
    drain(&mut ep, ms(1000));
    ep.handle_segment(ms(1100), p.sack(100, &[(0, 100)]));
    assert_eq!(ep.stats().dsack_dups, 1);
    assert_eq!(ep.stats().dsacks, 0);
    assert_eq!(ep.stats().spurious_retransmissions, 0);
}

// ---------------------------------------------------------------------------------------
// The handshake's final ACK

#[test]
fn the_handshake_ack_leaves_alone_before_a_write_made_at_the_same_instant() {
    for alone in [true, false] {
        let mut c = linux(CwndReduction::Prr);
        c.handshake_ack_alone = alone;
        let mut ep = thinlab_tcp::Endpoint::connect(ms(0), c, EP_PORT, PEER_PORT, EP_ISN);
        let syn = drain(&mut ep, ms(0));
        let p = Peer::new(syn[0].seq);
        ep.handle_segment(ms(100), p.syn_ack(sack_opts(1000)));
        ep.write(ms(100), &[1u8; 120]).unwrap();
        let out = drain(&mut ep, ms(100));
        if alone {
            // as Linux: connect() returns after the ACK went out, then the write is sent
            assert_eq!(out.len(), 2);
            assert!(out[0].payload.is_empty() && out[0].flags.ack());
            assert_data(&p, &out[1], 0, 120);
        } else {
            assert_eq!(out.len(), 1, "the ACK rides on the data");
            assert_data(&p, &out[0], 0, 120);
        }
    }
}

#[test]
fn recovery_is_traced_loss_entry_reduction_exit() {
    use thinlab_tcp::RecoveryEvent as R;
    let (mut ep, mut p) = client(linux(CwndReduction::Prr), sack_opts(1000), ms(100));
    for t in [1000, 1140] {
        ep.write(ms(t), &[1u8; 100]).unwrap();
        drain(&mut ep, ms(t));
    }
    events(&mut ep);
    ep.handle_segment(ms(1240), p.sack(0, &[(100, 200)]));
    let rec = |evs: Vec<Event>| -> Vec<R> {
        evs.into_iter()
            .filter_map(|e| match e {
                Event::Recovery { what, .. } => Some(what),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        rec(events(&mut ep)),
        vec![
            R::LossMarked { segments: 1 },
            R::Entered,
            R::Reduction {
                cwnd: 1,
                ssthresh: 7
            }
        ]
    );
    drain(&mut ep, ms(1240));
    ep.handle_segment(ms(1340), p.ack(200));
    assert_eq!(rec(events(&mut ep)), vec![R::Exited]);
}
