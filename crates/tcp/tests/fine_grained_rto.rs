//! Fine-grained RTO (Yin et al. §IV "fine grained" ns-2: tick 1 ms, min RTO 1 ms; Linux with
//! rto_min 1 ms at HZ=1000): the RTT models honour `rto_min` and `clock_granularity`, so the RTO of
//! a steady path falls to a few ms above the RTT instead of RTT + 200 ms, and the endpoint's timer
//! fires at that RTO.

use crate::common;
use common::*;
use std::time::Duration;
use thinlab_tcp::rtt::RttEstimator;
use thinlab_tcp::{Profile, RtoModel, SendKind, TcpConfig};

fn us(x: u64) -> Duration {
    Duration::from_micros(x)
}

fn fine(profile: Profile) -> TcpConfig {
    let mut c = TcpConfig::from_profile(profile);
    c.rto_min = dur(1);
    c.clock_granularity = dur(1);
    c
}

fn steady(c: &TcpConfig, rtt: Duration, n: usize) -> RttEstimator {
    let mut e = RttEstimator::new(c);
    for _ in 0..n {
        e.on_sample(rtt);
    }
    e
}

#[test]
fn linux_fine_grained_rto_follows_the_rtt() {
    let c = fine(Profile::Linux2622);
    assert_eq!(c.rto_model, RtoModel::Linux);
    // first sample: RTO = 3·RTT ("make sure rto = 3*rtt")
    assert_eq!(steady(&c, dur(10), 1).rto(), dur(30));
    // steady RTT: Linux's fixed-point decay stalls (mdev at 3 quarter-jiffies, rttvar at
    // mdev_max + 3 = 6 jiffies), so RTO = RTT + 6 ms instead of RTT + 200 ms
    assert_eq!(steady(&c, dur(10), 200).rto(), dur(16));
    assert_eq!(steady(&c, dur(100), 400).rto(), dur(106));
    // sub-jiffy RTT: one jiffy sample, RTO = 3 jiffies
    assert_eq!(steady(&c, us(300), 200).rto(), dur(3));
    // the default rto_min keeps RTT + 200 ms
    let d = TcpConfig::from_profile(Profile::Linux2622);
    assert_eq!(steady(&d, dur(10), 200).rto(), dur(210));
    // granularity: samples round up to whole jiffies (10.2 ms -> 11 at HZ=1000, 12 at HZ=250)
    assert_eq!(steady(&c, us(10_200), 200).rto(), dur(17));
    let mut c4 = c.clone();
    c4.clock_granularity = dur(4);
    let r = steady(&c4, us(10_200), 200).rto();
    assert_eq!(
        r,
        dur(36),
        "3-jiffy samples: 3·RTT, rttvar cannot decay below 6 jiffies"
    );
    assert_eq!(r.as_nanos() % 4_000_000, 0, "whole jiffies");
    assert_eq!(
        steady(&c4, us(300), 200).rto(),
        dur(12),
        "rto_min 1 ms rounds up to a jiffy"
    );
}

#[test]
fn ns2_fine_grained_tick_and_min() {
    let mut c = TcpConfig::from_profile(Profile::Ns2);
    assert_eq!((c.clock_granularity, c.rto_min), (dur(10), dur(200)));
    // coarse ns-2: 10 ms tick, 200 ms minimum
    assert_eq!(steady(&c, dur(100), 200).rto(), dur(200));
    c.clock_granularity = dur(1);
    c.rto_min = dur(1);
    // first sample: SRTT + 4·(R/2) = 3R
    assert_eq!(steady(&c, dur(100), 1).rto(), dur(300));
    // steady: rttvar stalls at 3/4 tick (×4 fixed point) -> SRTT + 3 ticks
    assert_eq!(steady(&c, dur(100), 400).rto(), dur(103));
    assert_eq!(steady(&c, dur(10), 400).rto(), dur(13));
    // sub-tick samples count as 1 tick; at least 2 ticks (ns-2 rtt_timeout)
    assert_eq!(steady(&c, us(300), 400).rto(), dur(3));
}

#[test]
fn endpoint_timer_fires_at_the_fine_grained_rto() {
    let mut c = cfg();
    c.rto_min = dur(1);
    c.clock_granularity = dur(1);
    let (mut ep, mut p) = client(c, mss_opts(1000), ms(10));
    // 50 clean exchanges at 10 ms RTT
    let mut t = ms(100);
    for k in 1..=50u64 {
        ep.write(t, &[1u8; 100]).unwrap();
        assert_eq!(drain(&mut ep, t).len(), 1);
        ep.handle_segment(t + dur(10), p.ack(100 * k));
        t += dur(20);
    }
    let rto = ep.rto();
    assert_eq!(rto, dur(16), "RTT + 6 ms, not RTT + 200 ms");
    events(&mut ep);
    ep.write(t, &[1u8; 100]).unwrap();
    drain(&mut ep, t);
    let out = run_until(&mut ep, t + rto);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, t + rto);
    assert_eq!(
        sent_kinds(&events(&mut ep)),
        vec![SendKind::New, SendKind::Rto]
    );
}
