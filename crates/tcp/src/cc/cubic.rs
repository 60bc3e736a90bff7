//! CUBIC (RFC 9438), windows in segments, time in seconds (C has units segment/s³).
//!
//! * W_cubic(t) = C·(t − K)³ + W_max, C = 0.4 (§4.2 eq. 1, §5.1 default);
//!   K = ∛((W_max − cwnd_epoch)/C) (eq. 2), 0 when cwnd_epoch ≥ W_max (Linux `bictcp_update`).
//! * Epoch: starts at the first ACK in congestion avoidance (t = now − t_epoch). Per ACK the
//!   target is W_cubic(t + SRTT) clamped to [cwnd, 1.5·cwnd] (§4.2; SRTT is this module's own
//!   RFC 6298 smoothing, gain 1/8, of the samples the endpoint passes to `on_ack`), and cwnd
//!   grows by (target − cwnd)/cwnd per acknowledged segment (§4.4 concave, §4.5 convex: same
//!   formula, the region is only which side of W_max cwnd is on).
//! * Reno-friendly region (§4.3): W_est starts at cwnd_epoch and grows by
//!   α_cubic·acked/cwnd, α_cubic = 3(1 − β)/(1 + β) ≈ 0.5294, switching to 1 once
//!   W_est ≥ cwnd_prior. When W_cubic(t) < W_est, cwnd = W_est. Like Linux (`tcp_cwnd` in
//!   `bictcp_update` only ever lowers `cnt`) we take max(cubic growth, W_est), so an ACK never
//!   shrinks the window.
//! * Fractional growth is kept in `frac` (segments, in [0, 1)); `cwnd` is the integer part, as
//!   Linux keeps `snd_cwnd` integral and accumulates in `snd_cwnd_cnt`/`cnt`.
//! * Multiplicative decrease (§4.6): ssthresh = max(⌊base·β⌋, 2), β = 0.7; cwnd_prior =
//!   cwnd; cwnd = ssthresh. `base` is cwnd in the Linux profiles (Linux
//!   `bictcp_recalc_ssthresh`), FlightSize in `rfc` (`TcpConfig::reduction_base`).
//!   Fast convergence (§4.7): W_max = cwnd·(1 + β)/2 if cwnd < the previous W_max, else cwnd.
//! * Recovery exit: cwnd = ssthresh (as the Reno family here).
//! * RTO (§4.8): ssthresh as in §4.6 (held on a repeated RTO before new data is acknowledged,
//!   as `RenoWindow`), W_max/cwnd_prior as on a loss, cwnd = 1. The first congestion-avoidance
//!   epoch after it uses K = 0, W_max = cwnd at its start and W_est = that cwnd.
//! * Restart after idle (RFC 5681 §4.1 / RFC 2861, as `RenoWindow`): ssthresh =
//!   max(ssthresh, ¾cwnd), cwnd = min(cwnd, IW), and the epoch is reset so that t does not
//!   count the idle time (Linux instead shifts `epoch_start` by the idle time on
//!   `CA_EVENT_TX_START`; a reset recomputes K from the restarted window).
//! * Growth only while cwnd-limited (in_flight ≥ cwnd), as `RenoWindow`.
//! * HyStart (RFC 9406) is not implemented: slow start is RFC 5681's, as Reno's.
//! * Not implemented: spurious-congestion undo (§4.9), ECN, pacing.

use super::{CongestionControl, CongestionEvent, INFINITE_SSTHRESH};
use crate::time::Instant;
use std::time::Duration;

/// C (segments/s³), RFC 9438 §5.1.
pub const C: f64 = 0.4;
/// β_cubic, RFC 9438 §5.1.
pub const BETA: f64 = 0.7;
/// α_cubic = 3(1 − β)/(1 + β), RFC 9438 §4.3.
pub const ALPHA_CUBIC: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// K = ∛((W_max − cwnd_epoch)/C) in seconds; 0 if cwnd_epoch ≥ W_max.
pub fn k_secs(w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / C).cbrt()
}

/// W_cubic(t) = C·(t − K)³ + W_max, segments.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

/// One congestion-avoidance epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Epoch {
    pub start: Instant,
    /// K, seconds.
    pub k: f64,
    /// The W_max of the curve (the plateau), segments.
    pub origin: f64,
    /// Reno-friendly estimate, segments.
    pub w_est: f64,
}

#[derive(Clone, Debug, PartialEq)]
// In declaration order (repr(C)): the window first, the cubic growth state (touched only when the
// window grows) last (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct Cubic {
    cwnd: u32,
    ssthresh: u32,
    initial_window: u32,
    /// The next epoch is the first after an RTO (§4.8: K = 0, W_max = cwnd).
    after_rto: bool,
    /// An RTO fired and no new data has been acknowledged since.
    in_rto_loss: bool,
    srtt: Option<Duration>,
    /// Fractional segments accrued towards the next increment, in [0, 1).
    frac: f64,
    /// W_max, segments (0: no congestion event yet).
    w_max: f64,
    /// cwnd before the last reduction, segments (for the α_cubic switch of §4.3).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
}

// No NaN is ever stored (all values are finite sums/products of finite numbers).
impl Eq for Cubic {}

impl Cubic {
    pub fn new(initial_window: u32) -> Self {
        let iw = initial_window.max(1);
        Cubic {
            cwnd: iw,
            ssthresh: INFINITE_SSTHRESH,
            frac: 0.0,
            initial_window: iw,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            after_rto: false,
            in_rto_loss: false,
            srtt: None,
        }
    }

    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    /// The current epoch, if congestion avoidance has started.
    pub fn epoch(&self) -> Option<&Epoch> {
        self.epoch.as_ref()
    }
    /// cwnd including the fractional accumulator.
    pub fn cwnd_f64(&self) -> f64 {
        self.cwnd as f64 + self.frac
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    fn set_cwnd_f64(&mut self, w: f64) {
        let w = w.clamp(1.0, INFINITE_SSTHRESH as f64);
        let whole = w.floor();
        self.cwnd = whole as u32;
        self.frac = w - whole;
    }

    fn update_srtt(&mut self, rtt: Duration) {
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => (s * 7 + rtt) / 8,
        });
    }

    fn start_epoch(&mut self, now: Instant) -> Epoch {
        let cw = self.cwnd_f64();
        let (k, origin) = if self.after_rto {
            self.after_rto = false;
            self.w_max = cw;
            (0.0, cw)
        } else if self.w_max > cw {
            (k_secs(self.w_max, cw), self.w_max)
        } else {
            (0.0, cw)
        };
        Epoch {
            start: now,
            k,
            origin,
            w_est: cw,
        }
    }

    /// Congestion avoidance for `acked` segments (RFC 9438 §4.2–4.5).
    fn cong_avoid(&mut self, now: Instant, acked: u32) {
        let mut e = match self.epoch.take() {
            Some(e) => e,
            None => self.start_epoch(now),
        };
        let cw = self.cwnd_f64();
        let acked = acked as f64;
        let t = now.saturating_duration_since(e.start).as_secs_f64();
        let rtt = self.srtt.map_or(0.0, |d| d.as_secs_f64());
        let target = w_cubic(t + rtt, e.k, e.origin).clamp(cw, 1.5 * cw);
        let mut w = cw + (target - cw) / cw * acked;
        let alpha = if e.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA_CUBIC
        };
        e.w_est += alpha * acked / cw;
        if w_cubic(t, e.k, e.origin) < e.w_est {
            w = w.max(e.w_est);
        }
        self.set_cwnd_f64(w);
        self.epoch = Some(e);
    }

    /// §4.6/§4.7: W_max with fast convergence, cwnd_prior, ssthresh.
    fn reduce(&mut self, in_flight: u32) {
        let cw = self.cwnd_f64();
        self.w_max = if cw < self.w_max {
            cw * (1.0 + BETA) / 2.0
        } else {
            cw
        };
        self.cwnd_prior = cw;
        self.ssthresh = ((in_flight as f64 * BETA) as u32).max(2);
        self.epoch = None;
        self.frac = 0.0;
    }
}

impl Cubic {
    /// Fast recovery: ssthresh from `base` (`reduce`), cwnd to it.
    fn start_recovery(&mut self, base: u32) {
        self.in_rto_loss = false;
        self.reduce(base);
        self.cwnd = self.ssthresh;
    }
    fn exit_recovery(&mut self) {
        self.cwnd = self.ssthresh;
        self.frac = 0.0;
        self.epoch = None;
    }
    /// RTO: ssthresh from `base` once per timeout episode, cwnd to 1.
    fn timeout(&mut self, base: u32) {
        if !self.in_rto_loss {
            self.reduce(base);
        }
        self.in_rto_loss = true;
        self.after_rto = true;
        self.epoch = None;
        self.cwnd = 1;
        self.frac = 0.0;
    }
}

impl CongestionControl for Cubic {
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn on_ack(&mut self, now: Instant, acked: u32, cwnd_limited: bool, rtt: Option<Duration>) {
        if let Some(r) = rtt {
            self.update_srtt(r);
        }
        if acked > 0 {
            self.in_rto_loss = false;
        }
        if !cwnd_limited {
            return;
        }
        let mut acked = acked;
        if self.cwnd < self.ssthresh {
            let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
            acked -= cwnd - self.cwnd;
            self.cwnd = cwnd;
            self.frac = 0.0;
            if acked == 0 {
                return;
            }
        }
        self.cong_avoid(now, acked);
    }
    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, base: u32) {
        match event {
            CongestionEvent::FastRecovery => self.start_recovery(base),
            CongestionEvent::Cwr => {
                self.start_recovery(base);
                self.exit_recovery();
            }
            CongestionEvent::Timeout => self.timeout(base),
        }
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        if prior_cwnd > self.cwnd {
            self.cwnd = prior_cwnd;
            self.frac = 0.0;
            self.epoch = None;
        }
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }
    fn on_exit_recovery(&mut self, _now: Instant) {
        self.exit_recovery();
    }
    fn on_idle_restart(&mut self, _now: Instant) {
        let three_quarters = (self.cwnd >> 1) + (self.cwnd >> 2);
        self.ssthresh = self.ssthresh.max(three_quarters);
        self.cwnd = self.cwnd.min(self.initial_window);
        self.frac = 0.0;
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::TestHooks;
    use proptest::prelude::*;

    const T: Instant = Instant::ZERO;
    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }
    fn at_ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }
    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    /// Slow start to `w` (with an RTT sample `rtt`), then a loss at flight `w`.
    fn after_loss(w: u32, rtt: Option<Duration>) -> Cubic {
        let mut c = Cubic::new(1);
        c.ack_with_flight(T, w - 1, 1, rtt);
        assert_eq!(c.cwnd(), w);
        c.enter_recovery(T, w);
        c.on_exit_recovery(T);
        c
    }

    #[test]
    fn constants() {
        close(ALPHA_CUBIC, 0.9 / 1.7);
        close(ALPHA_CUBIC, 0.529_411_764_705_882_4);
    }

    #[test]
    fn k_for_given_w_max() {
        // RFC 9438 eq. 2 with β = 0.7: W_max = 100 → cwnd_epoch = 70, K = ∛(30/0.4) = ∛75.
        close(k_secs(100.0, 70.0), 4.217_163_326_508_746);
        close(k_secs(100.0, 96.8), 2.0); // ∛(3.2/0.4) = ∛8
        close(k_secs(10.0, 7.0), 7.5f64.cbrt());
        assert_eq!(k_secs(50.0, 60.0), 0.0); // cwnd above W_max: K = 0
    }

    #[test]
    fn w_cubic_at_several_t() {
        let k = k_secs(100.0, 96.8);
        for (t, w) in [
            (0.0, 96.8),
            (1.0, 99.6),
            (2.0, 100.0),
            (3.0, 100.4),
            (4.0, 103.2),
            (5.0, 110.8),
        ] {
            close(w_cubic(t, k, 100.0), w);
        }
        // At t = 0 the curve starts at β·W_max: W_cubic(0) = W_max − C·K³ = cwnd_epoch.
        close(w_cubic(0.0, k_secs(100.0, 70.0), 100.0), 70.0);
    }

    #[test]
    fn multiplicative_decrease_is_0_7() {
        let c = after_loss(100, None);
        assert_eq!((c.cwnd(), c.ssthresh()), (70, 70));
        close(c.w_max(), 100.0);
        let c = after_loss(37, None); // ⌊37·0.7⌋ = 25
        assert_eq!((c.cwnd(), c.ssthresh()), (25, 25));
        let mut c = after_loss(2, None);
        assert_eq!((c.cwnd(), c.ssthresh()), (2, 2)); // floor of 2 segments
                                                      // The window uses the flight size, as Reno's ssthresh does.
        c.ack_with_flight(T, 48, 2, None);
        c.enter_recovery(T, 40);
        assert_eq!((c.cwnd(), c.ssthresh()), (28, 28));
    }

    #[test]
    fn first_ca_ack_follows_the_rfc_formulas() {
        let srtt = ms(100);
        let mut c = after_loss(100, Some(srtt));
        assert_eq!(c.srtt(), Some(srtt));
        c.ack_with_flight(at_ms(1000), 1, 70, None);
        let e = c.epoch().unwrap().clone();
        assert_eq!(e.start, at_ms(1000));
        close(e.k, 75f64.cbrt());
        close(e.origin, 100.0);
        // target = W_cubic(0 + 0.1 s) ∈ [70, 105]; cwnd += (target − 70)/70
        let target = w_cubic(0.1, e.k, 100.0);
        close(target, 100.0 + 0.4 * (0.1 - 75f64.cbrt()).powi(3));
        close(c.cwnd_f64(), 70.0 + (target - 70.0) / 70.0);
        close(e.w_est, 70.0 + ALPHA_CUBIC / 70.0);
        assert_eq!(c.cwnd(), 70);
    }

    #[test]
    fn concave_then_plateau_then_convex() {
        // RTT 100 ms, a cwnd of ACKs per RTT: cwnd approaches W_max = 100 around K ≈ 4.2 s,
        // lingers there, and then grows faster than linearly (convex).
        let mut c = after_loss(100, Some(ms(100)));
        let mut samples = vec![];
        for round in 0..80u64 {
            let now = at_ms(1000 + 100 * round);
            for _ in 0..c.cwnd() {
                let w = c.cwnd();
                c.ack_with_flight(now, 1, w, None);
            }
            samples.push(c.cwnd_f64());
        }
        let at = |s: f64| samples[(s * 10.0) as usize - 1];
        // concave: growth slows down approaching W_max
        assert!(at(1.0) - 70.0 > at(2.0) - at(1.0));
        assert!(at(2.0) - at(1.0) > at(3.0) - at(2.0));
        assert!((at(4.0) - 100.0).abs() < 1.5, "at 4 s: {}", at(4.0));
        assert!((at(4.5) - 100.0).abs() < 1.5, "at 4.5 s: {}", at(4.5));
        // convex: beyond K growth accelerates, and W_cubic(t) is tracked within a few segments
        assert!(at(8.0) - at(7.0) > at(7.0) - at(6.0));
        assert!(at(7.0) - at(6.0) > at(6.0) - at(5.0));
        let k = 75f64.cbrt();
        // (from the plateau on, t ≳ 5 s, the Reno-friendly W_est — ~α_cubic per RTT up to
        // cwnd_prior = 100, then 1 per RTT — is above the curve at this RTT and sets cwnd)
        for s in [1.0, 2.0, 3.0] {
            // after the round at s − 0.1 s the target was W_cubic(s); the per-ACK rule closes
            // 1 − 1/e of the gap per round, so cwnd trails the curve slightly
            let want = w_cubic(s, k, 100.0);
            assert!(at(s) <= want + 1e-9, "t={s}: {} vs {want}", at(s));
            assert!(at(s) > 0.97 * want, "t={s}: {} vs {want}", at(s));
        }
        let e = c.epoch().unwrap();
        assert!(at(8.0) >= w_cubic(7.9, k, 100.0));
        assert!(at(8.0) >= e.w_est - 1e-9);
    }

    #[test]
    fn reno_friendly_region_dominates_at_small_rtt_and_window() {
        // W_max = 10, RTT 1 ms: K = ∛7.5 ≈ 1.96 s = ~1960 RTTs, so the cubic curve is nearly
        // flat and AIMD(α_cubic, β) outgrows it.
        let mut c = after_loss(10, Some(ms(1)));
        assert_eq!(c.cwnd(), 7);
        let mut now_us = 1_000_000u64;
        let mut rounds = 0;
        while now_us < 1_500_000 {
            for _ in 0..c.cwnd() {
                let w = c.cwnd();
                c.ack_with_flight(Instant::from_micros(now_us), 1, w, None);
            }
            now_us += 1000;
            rounds += 1;
        }
        let e = c.epoch().unwrap().clone();
        let t = 0.5 - 0.001;
        let cubic = w_cubic(t, e.k, e.origin);
        close(cubic, 10.0 + 0.4 * (t - 7.5f64.cbrt()).powi(3));
        assert!(cubic < 10.0, "W_cubic = {cubic}");
        // cwnd is W_est (Reno-friendly), far above the cubic curve
        close(c.cwnd_f64(), e.w_est);
        assert!(c.cwnd_f64() > 100.0, "cwnd {}", c.cwnd_f64());
        // W_est grew ~α_cubic per RTT up to cwnd_prior = 10, then ~1 per RTT
        let rounds_to_prior = (3.0 / ALPHA_CUBIC).ceil() as i64;
        let expect = 10.0 + (rounds - rounds_to_prior) as f64;
        // (within 2 %: a round acks ⌊cwnd⌋ segments, each adding α/cwnd with fractional cwnd)
        assert!(
            (c.cwnd_f64() - expect).abs() < 0.02 * expect,
            "{} vs {expect}",
            c.cwnd_f64()
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = after_loss(100, None);
        close(c.w_max(), 100.0);
        // A second loss below the previous W_max: W_max = 80·(1 + 0.7)/2 = 68.
        (c.cwnd, c.frac) = (80, 0.0);
        c.enter_recovery(T, 80);
        close(c.w_max(), 68.0);
        assert_eq!((c.cwnd(), c.ssthresh()), (56, 56));
        c.on_exit_recovery(T);
        c.ack_with_flight(at_ms(10), 1, 56, None);
        close(c.epoch().unwrap().k, k_secs(68.0, 56.0)); // ∛30
        close(c.epoch().unwrap().k, 30f64.cbrt());
        // A loss above W_max just records it.
        (c.cwnd, c.frac) = (90, 0.0);
        c.enter_recovery(T, 90);
        close(c.w_max(), 90.0);
    }

    #[test]
    fn rto_uses_beta_and_restarts_with_k_zero() {
        let mut c = Cubic::new(1);
        c.ack_with_flight(T, 99, 1, Some(ms(100)));
        c.rto(T, 100);
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 70));
        close(c.w_max(), 100.0);
        c.rto(T, 1); // repeated timeout: ssthresh held
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 70));
        // slow start back to 70, then the first CA epoch has K = 0 and W_max = 70
        c.ack_with_flight(at_ms(100), 68, 1, None);
        assert_eq!(c.cwnd(), 69);
        assert!(c.epoch().is_none());
        c.ack_with_flight(at_ms(200), 1, 69, None);
        assert_eq!(c.cwnd(), 70);
        assert!(c.epoch().is_none());
        c.ack_with_flight(at_ms(300), 1, 70, None);
        let e = c.epoch().unwrap();
        assert_eq!((e.start, e.k), (at_ms(300), 0.0));
        close(e.origin, 70.0);
        close(c.w_max(), 70.0);
        // α_cubic (W_est < cwnd_prior = 100)
        close(e.w_est, 70.0 + ALPHA_CUBIC / 70.0);
        // the curve is flat at t = 0 with K = 0 (target W_cubic(0.1) = 70.0004), so the
        // Reno-friendly W_est (> W_cubic(0) = 70) sets cwnd
        close(c.cwnd_f64(), e.w_est);
    }

    #[test]
    fn idle_restart_resets_the_epoch() {
        let mut c = after_loss(100, Some(ms(100)));
        c.ack_with_flight(at_ms(1000), 1, 70, None);
        assert!(c.epoch().is_some());
        c.on_idle_restart(at_ms(60_000));
        assert!(c.epoch().is_none());
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 70));
        // slow start to ssthresh, then a new epoch starting now, aiming at W_max = 100
        c.ack_with_flight(at_ms(61_000), 69, 1, None);
        assert_eq!(c.cwnd(), 70);
        c.ack_with_flight(at_ms(61_100), 1, 70, None);
        let e = c.epoch().unwrap();
        assert_eq!(e.start, at_ms(61_100));
        close(e.k, 75f64.cbrt());
    }

    #[test]
    fn slow_start_and_cwnd_limited() {
        let mut c = Cubic::new(3);
        c.ack_with_flight(T, 1, 2, None);
        assert_eq!(c.cwnd(), 3); // not cwnd-limited
        c.ack_with_flight(T, 3, 3, None);
        assert_eq!(c.cwnd(), 6);
        assert!(c.in_initial_slow_start());
    }

    proptest! {
        #[test]
        fn cwnd_at_least_one_and_monotone_between_losses(
            iw in 1u32..20,
            ops in prop::collection::vec((0u8..6, 0u32..3000, 0u64..400), 0..300),
        ) {
            let mut c = Cubic::new(iw);
            let mut now = 0u64;
            for &(op, n, dt) in &ops {
                now += dt;
                let t = at_ms(now);
                let before = c.cwnd_f64();
                match op {
                    0 | 5 => c.ack_with_flight(t, n % 64, n, Some(ms(1 + dt % 300))),
                    1 => c.enter_recovery(t, n),
                    2 => c.on_exit_recovery(t),
                    3 => c.rto(t, n),
                    _ => c.on_idle_restart(t),
                }
                prop_assert!(c.cwnd() >= 1);
                prop_assert!(c.ssthresh() >= 2);
                prop_assert!(c.frac >= 0.0 && c.frac < 1.0);
                if op == 0 || op == 5 {
                    prop_assert!(c.cwnd_f64() >= before, "{} < {}", c.cwnd_f64(), before);
                    // at most slow-start speed (one segment per acked segment)
                    prop_assert!(c.cwnd_f64() - before <= (n % 64) as f64 + 1e-9);
                }
            }
        }
    }
}
