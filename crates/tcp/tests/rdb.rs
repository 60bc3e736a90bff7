//! Redundant Data Bundling scripts (docs/spec/mechanisms.md, RDB): the seed variant (cumulative
//! bundling on send up to the MSS, trimming of acked bytes, bundling on retransmission), the patch
//! variant (rdb_max_packets, rdb_max_bytes, dpifl gate, CWR on a hidden loss), and a pair test
//! showing that an unmodified receiver delivers only the new bytes of a bundle.

use crate::common;
use common::*;
use thinlab_tcp::{Endpoint, Event, Instant, Mechanisms, RdbVariant, SendKind, TcpConfig};

fn rdb(variant: RdbVariant) -> TcpConfig {
    let mut c = cfg();
    c.mechanisms = Mechanisms {
        rdb: true,
        ..Mechanisms::default()
    };
    c.rdb_variant = variant;
    c
}

/// Stream byte `i` is `i % 251`, so a payload shows which offsets it carries.
fn bytes(from: u64, to: u64) -> Vec<u8> {
    (from..to).map(|i| (i % 251) as u8).collect()
}

/// Write the next `n` bytes of the stream at `t` and return what goes out, with the `Sent`
/// events' (kind, start, end).
fn write(
    ep: &mut Endpoint,
    t: Instant,
    n: u64,
) -> (Vec<thinlab_tcp::Segment>, Vec<(SendKind, u64, u64)>) {
    let w = ep.bytes_unacked() + ep.snd_una();
    ep.write(t, &bytes(w, w + n)).unwrap();
    let out = drain(ep, t);
    (out, sent(ep))
}

fn sent(ep: &mut Endpoint) -> Vec<(SendKind, u64, u64)> {
    events(ep)
        .into_iter()
        .filter_map(|e| match e {
            Event::Sent {
                kind, start, end, ..
            } => Some((kind, start, end)),
            _ => None,
        })
        .collect()
}

/// One data segment out, covering `[start, end)` with the stream's bytes, of `kind`.
#[track_caller]
fn one(
    p: &Peer,
    r: &(Vec<thinlab_tcp::Segment>, Vec<(SendKind, u64, u64)>),
    kind: SendKind,
    start: u64,
    end: u64,
) {
    assert_eq!(r.0.len(), 1, "{:?}", r.1);
    assert_data(p, &r.0[0], start, end);
    assert_eq!(
        &r.0[0].payload[..],
        &bytes(start, end)[..],
        "payload carries the stream bytes"
    );
    assert_eq!(r.1, vec![(kind, start, end)]);
}

// ---------------------------------------------------------------------------------------
// seed variant

#[test]
fn seed_bundles_the_exact_unacked_range_cumulatively() {
    let (mut ep, p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::Rdb, 0, 200);
    one(&p, &write(&mut ep, ms(1020), 100), SendKind::Rdb, 0, 300);
    assert_eq!(ep.stats().payload_bytes_sent, 600);
    assert_eq!(ep.packets_out(), 3, "one queue entry per original segment");
}

#[test]
fn seed_trims_acked_bytes_so_bundles_shrink() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::Rdb, 0, 200);
    one(&p, &write(&mut ep, ms(1020), 100), SendKind::Rdb, 0, 300);
    // the first segment is acked: later bundles start after it
    ep.handle_segment(ms(1100), p.ack(100));
    one(&p, &write(&mut ep, ms(1105), 100), SendKind::Rdb, 100, 400);
    // a partial ACK inside a segment (a receiver that got part of a bundle) trims it
    ep.handle_segment(ms(1110), p.ack(250));
    one(&p, &write(&mut ep, ms(1115), 100), SendKind::Rdb, 250, 500);
    // everything acked: no bundle
    ep.handle_segment(ms(1215), p.ack(500));
    one(&p, &write(&mut ep, ms(1220), 100), SendKind::New, 500, 600);
}

#[test]
fn seed_stays_within_the_mss_and_the_byte_cap() {
    let (mut ep, p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 400), SendKind::New, 0, 400);
    one(&p, &write(&mut ep, ms(1010), 400), SendKind::Rdb, 0, 800);
    // 400 new + [400, 800) fits, [0, 400) would exceed the MSS
    one(&p, &write(&mut ep, ms(1020), 400), SendKind::Rdb, 400, 1200);

    let mut c = rdb(RdbVariant::Seed);
    c.rdb_max_bytes = 500;
    let (mut ep, p) = client(c, mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 200), SendKind::New, 0, 200);
    one(&p, &write(&mut ep, ms(1010), 200), SendKind::Rdb, 0, 400);
    one(&p, &write(&mut ep, ms(1020), 200), SendKind::Rdb, 200, 600);
    one(&p, &write(&mut ep, ms(1030), 400), SendKind::New, 600, 1000);
}

#[test]
fn seed_does_not_bundle_a_full_sized_segment() {
    let (mut ep, p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(
        &p,
        &write(&mut ep, ms(1010), 1000),
        SendKind::New,
        100,
        1100,
    );
    // a small one after it still bundles what fits: [100, 1100) does not, so nothing
    one(
        &p,
        &write(&mut ep, ms(1020), 100),
        SendKind::New,
        1100,
        1200,
    );
}

#[test]
fn seed_bundles_on_retransmission() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(100));
    write(&mut ep, ms(1000), 100);
    write(&mut ep, ms(1010), 100);
    write(&mut ep, ms(1020), 100);
    // nothing is acknowledged: the RTO retransmission of [0, 100) carries [100, 300) too
    let out = run_until(&mut ep, ms(1500));
    assert_eq!(
        out.len(),
        1,
        "one retransmission covers the whole queue: {out:?}"
    );
    assert_data(&p, &out[0].1, 0, 300);
    assert_eq!(&out[0].1.payload[..], &bytes(0, 300)[..]);
    assert_eq!(sent(&mut ep), vec![(SendKind::Rto, 0, 300)]);
    assert_eq!(ep.stats().retransmissions_rto, 1);
    // acked data is never resent: after a partial ACK the next retransmission starts there
    let t = out[0].0;
    ep.handle_segment(t + dur(10), p.ack(150));
    let out = run_until(&mut ep, t + dur(5000));
    assert!(!out.is_empty());
    assert_data(&p, &out[0].1, 150, 300);
    assert_eq!(&out[0].1.payload[..], &bytes(150, 300)[..]);
}

#[test]
fn without_rdb_nothing_is_bundled() {
    let (mut ep, p) = client(cfg(), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::New, 100, 200);
    let out = run_until(&mut ep, ms(2000));
    assert_data(&p, &out[0].1, 0, 100);
}

// ---------------------------------------------------------------------------------------
// patch variant

fn patch(max_packets: u32, max_bytes: u32) -> TcpConfig {
    let mut c = rdb(RdbVariant::Patch);
    c.rdb_max_packets = max_packets;
    c.rdb_max_bytes = max_bytes;
    c
}

#[test]
fn patch_bundles_at_most_rdb_max_packets_earlier_segments() {
    let (mut ep, p) = client(patch(1, 0), mss_opts(1000), ms(100));
    assert!(
        ep.srtt().is_some(),
        "SRTT from the handshake: dpifl can call the stream thin"
    );
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::Rdb, 0, 200);
    one(&p, &write(&mut ep, ms(1020), 100), SendKind::Rdb, 100, 300);
    one(&p, &write(&mut ep, ms(1030), 100), SendKind::Rdb, 200, 400);

    let (mut ep, p) = client(patch(2, 0), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::Rdb, 0, 200);
    one(&p, &write(&mut ep, ms(1020), 100), SendKind::Rdb, 0, 300);
    one(&p, &write(&mut ep, ms(1030), 100), SendKind::Rdb, 100, 400);
}

#[test]
fn patch_respects_rdb_max_bytes() {
    let (mut ep, p) = client(patch(3, 250), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::Rdb, 0, 200);
    one(&p, &write(&mut ep, ms(1020), 100), SendKind::Rdb, 100, 300);
    one(&p, &write(&mut ep, ms(1030), 200), SendKind::New, 300, 500);
}

#[test]
fn patch_bundles_only_while_dpifl_thin() {
    // SRTT 5 ms: one packet in flight × 10 ms is not below it, so the stream is not thin
    let (mut ep, p) = client(patch(1, 0), mss_opts(1000), ms(5));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1001), 100), SendKind::New, 100, 200);
    // the seed variant has no thin test
    let (mut ep, p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(5));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1001), 100), SendKind::Rdb, 0, 200);
    // at 100 ms SRTT, 9 in flight are thin, 10 are not
    let mut c = patch(1, 0);
    c.initial_window = 20;
    let (mut ep, p) = client(c, mss_opts(1000), ms(100));
    for k in 0..10 {
        let r = write(&mut ep, ms(1000 + k), 100);
        assert_eq!(
            r.1[0].0,
            if k == 0 { SendKind::New } else { SendKind::Rdb },
            "write {k}"
        );
    }
    one(
        &p,
        &write(&mut ep, ms(1010), 100),
        SendKind::New,
        1000,
        1100,
    );
}

#[test]
fn patch_enters_cwr_once_on_a_hidden_loss() {
    let (mut ep, mut p) = client(patch(1, 0), mss_opts(1000), ms(100));
    let cwnd0 = ep.cwnd();
    assert!(cwnd0 >= 10);
    write(&mut ep, ms(1000), 100); // [0, 100)
    write(&mut ep, ms(1010), 100); // [0, 200): RDB, redundant part from 0
    write(&mut ep, ms(1020), 100); // [100, 300)
    write(&mut ep, ms(1030), 100); // [200, 400)
                                   // [0, 100) was lost; the RDB packet [0, 200) repaired it: the ACK jumps 0 -> 200
    ep.handle_segment(ms(1110), p.ack(200));
    assert_eq!(ep.rdb_hidden_losses(), 1);
    assert_eq!(ep.rdb_cwr_events(), 1);
    let reduced = ep.cwnd();
    assert!(reduced < cwnd0, "cwnd {reduced} after CWR (was {cwnd0})");
    assert_eq!(reduced, ep.ssthresh());
    assert!(!ep.in_initial_slow_start());
    // [200, 300) lost too, repaired by [200, 400): same window, no second reduction
    ep.handle_segment(ms(1130), p.ack(400));
    assert_eq!(ep.rdb_hidden_losses(), 2);
    assert_eq!(ep.rdb_cwr_events(), 1, "one reduction per window");
    assert!(ep.cwnd() >= reduced);
    assert_eq!(
        ep.stats().retransmissions_fast + ep.stats().retransmissions_rto,
        0
    );
}

#[test]
fn patch_no_cwr_without_a_hidden_loss() {
    let (mut ep, mut p) = client(patch(1, 0), mss_opts(1000), ms(100));
    let cwnd0 = ep.cwnd();
    write(&mut ep, ms(1000), 100);
    write(&mut ep, ms(1010), 100);
    ep.handle_segment(ms(1100), p.ack(100)); // the original arrived
    ep.handle_segment(ms(1110), p.ack(200));
    assert_eq!((ep.rdb_hidden_losses(), ep.rdb_cwr_events()), (0, 0));
    assert!(ep.cwnd() >= cwnd0);
    assert!(ep.in_initial_slow_start());
}

#[test]
fn patch_never_bundles_on_retransmission() {
    let (mut ep, p) = client(patch(1, 0), mss_opts(1000), ms(100));
    write(&mut ep, ms(1000), 100);
    write(&mut ep, ms(1010), 100);
    let out = run_until(&mut ep, ms(2000));
    assert_data(&p, &out[0].1, 0, 100);
}

// ---------------------------------------------------------------------------------------
// receiver side

#[test]
fn receiver_delivers_only_the_new_bytes_of_a_bundle() {
    let (mut a, mut b) = (rdb(RdbVariant::Seed), cfg());
    a.mss = 1000;
    b.mss = 1000;
    let mut pair = Pair::new(a, b, dur(50));
    // 120 B every 30 ms, faster than the 100 ms RTT: every packet carries unacked data
    let n = 60;
    let times = pair.schedule_writes(ms(200), dur(30), n, 120);
    let expected = pair.expected_b();
    // drop data packets (A→B) 5, 9 and 10 (two in a row), and ACKs 6 and 7 (B→A)
    pair.drop_ab.nth = vec![5, 9, 10];
    pair.drop_ba.nth = vec![6, 7];
    pair.run(ms(10_000));
    assert_eq!(pair.received_b(), expected, "the stream is intact");
    // the receiver delivered every byte exactly once
    let delivered: u64 = pair
        .events_b
        .iter()
        .filter_map(|e| match e {
            Event::Delivered { start, end, .. } => Some(end - start),
            _ => None,
        })
        .sum();
    assert_eq!(delivered, expected.len() as u64);
    // bundles overlapped rcv_nxt
    let overlapping = pair
        .events_a
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Sent {
                    kind: SendKind::Rdb,
                    ..
                }
            )
        })
        .count();
    assert!(overlapping > 10, "{overlapping} RDB packets");
    assert_eq!(
        pair.a.stats().retransmissions_rto + pair.a.stats().retransmissions_fast,
        0
    );
    // no write waited for more than one interval beyond the one-way delay
    for (k, t) in times.iter().enumerate() {
        let at = pair.b_has((k + 1) * 120).expect("delivered");
        assert!(at - *t <= dur(50 + 30 + 30), "write {k}: {:?}", at - *t);
    }
}

#[test]
fn a_bundle_that_repairs_a_loss_gives_the_true_ca_rtt_sample() {
    // handshake RTT 100 ms, then the path's RTT is 80 ms. The write at 1000 is lost, the next
    // one (1140) bundles it, and the ACK of both arrives at 1220. The RTO estimator takes the
    // sample from the oldest segment (220 ms, Linux seq_rtt: it must cover ACK delays), the
    // minimum RTT and congestion control take it from the newest (80 ms, Linux ca_rtt), not
    // one write interval too high.
    let (mut ep, mut p) = client(rdb(RdbVariant::Seed), mss_opts(1000), ms(100));
    assert_eq!(
        ep.rtt_estimator().min_rtt(),
        Some(dur(100)),
        "handshake sample"
    );
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1140), 100), SendKind::Rdb, 0, 200);
    ep.handle_segment(ms(1220), p.ack(200));
    assert_eq!(ep.rtt_latest(), Some(dur(220)));
    assert_eq!(ep.rtt_estimator().min_rtt(), Some(dur(80)));
}

// ---------------------------------------------------------------------------------------
// adaptive variant (thin/rdb_adaptive.rs)

#[test]
fn adaptive_stays_off_without_a_loss() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Adaptive), mss_opts(1000), ms(100));
    // earlier data is unacknowledged at every write, but nothing was ever lost: no bundle
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1050), 100), SendKind::New, 100, 200);
    ep.handle_segment(ms(1100), p.ack(100));
    one(&p, &write(&mut ep, ms(1120), 100), SendKind::New, 200, 300);
    assert_eq!(ep.rdb_allowance(), 0);
    assert_eq!(
        ep.rdb_skipped(),
        (2, 0),
        "the seed variant would have bundled twice"
    );
    assert_eq!(ep.rdb_loss_episodes(), 0);
    assert_eq!(ep.stats().payload_bytes_sent, 300, "no redundant byte");
}

#[test]
fn adaptive_a_hole_turns_bundling_on_and_clean_acks_turn_it_off() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Adaptive), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1050), 100), SendKind::New, 100, 200);
    // [0, 100) was lost: the receiver's duplicate ACK for [100, 200) is a loss signal
    ep.handle_segment(ms(1100), p.ack(0));
    assert_eq!((ep.rdb_allowance(), ep.rdb_loss_episodes()), (1, 1));
    // a second duplicate ACK about the same hole is the same episode
    ep.handle_segment(ms(1101), p.ack(0));
    assert_eq!((ep.rdb_allowance(), ep.rdb_loss_episodes()), (1, 1));
    // the next write carries everything unacknowledged, lost head first (seed bundle)
    one(&p, &write(&mut ep, ms(1120), 100), SendKind::Rdb, 0, 300);
    // the bundle repaired [0, 100): the ACK covers the head together with the bundle, which
    // the hidden-loss test sees, but it is the episode already counted
    ep.handle_segment(ms(1220), p.ack(300));
    assert_eq!((ep.rdb_allowance(), ep.rdb_loss_episodes()), (1, 1));
    // a clean ACK drains the allowance: bundling is off again
    one(&p, &write(&mut ep, ms(1300), 100), SendKind::New, 300, 400);
    ep.handle_segment(ms(1400), p.ack(400));
    assert_eq!(ep.rdb_allowance(), 0);
    one(&p, &write(&mut ep, ms(1500), 100), SendKind::New, 400, 500);
    one(&p, &write(&mut ep, ms(1550), 100), SendKind::New, 500, 600);
    assert_eq!(
        ep.rdb_skipped(),
        (2, 0),
        "[100, 200) and [500, 600) went alone"
    );
}

#[test]
fn adaptive_a_repaired_loss_in_a_new_episode_doubles_the_allowance() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Adaptive), mss_opts(1000), ms(100));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1050), 100), SendKind::New, 100, 200);
    ep.handle_segment(ms(1100), p.ack(0)); // episode 1 (data up to 200)
    one(&p, &write(&mut ep, ms(1120), 100), SendKind::Rdb, 0, 300);
    ep.handle_segment(ms(1220), p.ack(300)); // same episode: allowance stays 1
                                             // [300, 400) is lost; the next write bundles it (allowance 1) and the ACK of both shows
                                             // the bundle repaired it: a new episode, allowance 1 → 2
    one(&p, &write(&mut ep, ms(1230), 100), SendKind::New, 300, 400);
    one(&p, &write(&mut ep, ms(1240), 100), SendKind::Rdb, 300, 500);
    ep.handle_segment(ms(1340), p.ack(500));
    assert_eq!((ep.rdb_allowance(), ep.rdb_loss_episodes()), (2, 2));
    // two clean ACKs later it is spent
    for (i, t) in [(5u64, 1400u64), (6, 1600)] {
        one(
            &p,
            &write(&mut ep, ms(t), 100),
            SendKind::New,
            i * 100,
            (i + 1) * 100,
        );
        ep.handle_segment(ms(t + 100), p.ack((i + 1) * 100));
    }
    assert_eq!(ep.rdb_allowance(), 0);
}

#[test]
fn adaptive_a_retransmission_is_a_loss_signal_and_is_extended() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Adaptive), mss_opts(1000), ms(100));
    write(&mut ep, ms(1000), 100);
    write(&mut ep, ms(1010), 100);
    // nothing acknowledged: the RTO retransmission counts as a loss and carries [100, 200)
    let out = run_until(&mut ep, ms(1500));
    assert_eq!(out.len(), 1);
    assert_data(&p, &out[0].1, 0, 200);
    assert_eq!(sent(&mut ep), vec![(SendKind::Rto, 0, 200)]);
    assert_eq!((ep.rdb_allowance(), ep.rdb_loss_episodes()), (1, 1));
    ep.handle_segment(ms(1500), p.ack(100));
    // allowance drained by that clean ACK: the next write goes alone, [100, 200) unacked
    assert_eq!(ep.rdb_allowance(), 0);
    one(&p, &write(&mut ep, ms(1510), 100), SendKind::New, 200, 300);
}

#[test]
fn adaptive_does_not_bundle_when_the_write_interval_exceeds_the_rto() {
    let (mut ep, mut p) = client(rdb(RdbVariant::Adaptive), mss_opts(1000), ms(100));
    assert_eq!(ep.rto(), dur(300));
    one(&p, &write(&mut ep, ms(1000), 100), SendKind::New, 0, 100);
    one(&p, &write(&mut ep, ms(1010), 100), SendKind::New, 100, 200);
    ep.handle_segment(ms(1100), p.ack(0)); // a hole: allowance 1
    assert_eq!(ep.rdb_allowance(), 1);
    // 301 ms after the previous segment (timers not run): the head's retransmission would
    // already be out, a bundle cannot beat it
    one(&p, &write(&mut ep, ms(1311), 100), SendKind::New, 200, 300);
    assert_eq!(ep.rdb_skipped(), (1, 1));
    // within one RTO of the previous segment it bundles again
    one(&p, &write(&mut ep, ms(1400), 100), SendKind::Rdb, 0, 400);
}
