//! PERT, Probabilistic Early Response TCP (Bhandarkar, Reddy, Zhang, Loguinov, "Emulating AQM from
//! End Hosts", SIGCOMM 2007 / CCR 37(4), as used by Yin et al., "Improving the Performance of
//! Delay Based Protocol in Delivering Real Time Media via Early Retransmission"; full citations in
//! docs/references.md), the PERT/RED variant: NewReno window arithmetic ([`RenoWindow`]: growth,
//! loss and RTO responses, restart after idle) plus a delay-based early response that emulates
//! RED at the sender (specified in the congestion-control section of docs/spec/mechanisms.md).
//!
//! * Per RTT sample r: min_rtt = min(min_rtt, r); srtt_0.99 ← 0.99·srtt_0.99 + 0.01·r (the
//!   first sample initialises it). Queueing delay q = srtt_0.99 − min_rtt.
//! * p(q) ([`probability`]): 0 for q < T_min = 5 ms; p_max·(q − T_min)/(T_max − T_min) up to T_max
//!   = 10 ms, p_max = 0.05; p_max + (1 − p_max)·(q − T_max)/T_max up to 2·T_max; 1 beyond (RED's
//!   "gentle" shape, Yin et al. Fig. 1).
//! * On each ACK that reaches `on_ack` (new data acknowledged outside recovery), with
//!   probability p(q): cwnd ← ⌊0.65·cwnd⌋ (reduction by β = 0.35), ssthresh ← max(cwnd, 2),
//!   and that ACK does not grow the window. At most once per RTT: no new early response until
//!   the latest RTT sample has elapsed since the last reduction (early response, fast
//!   recovery or RTO).
//! * The draw is a SplitMix64 stream seeded from `TcpConfig::cc_seed`, one draw per ACK on which
//!   p > 0 and the once-per-RTT gate is open, so a run is reproducible.
//!
//! Sources and what is unverified:
//! * The paper's full text was not available here. T_min = 5 ms, T_max = 10 ms, p_max = 0.05, the
//!   0.99 history weight and β = 0.35 are the project's specification (docs/spec/mechanisms.md,
//!   congestion control), taken from Yin et al. §II.C; they agree with an
//!   independent ns-3 PERT/RED implementation (`TcpPertRed`: Thresh1 5 ms, Thresh2 10 ms, Thresh3
//!   20 ms = 2·Thresh2, MaxP 0.05, Beta 0.35, `m_pertSrtt·0.99 + 0.01·rtt`, ssthresh = max((1 −
//!   β)·cwnd, 2)), which we read but did not copy.
//! * Unverified choices: that ns-3 code only responds in congestion avoidance (cwnd > ssthresh) and
//!   gates by acknowledged sequence; we respond in slow start too (the specification says
//!   "per ACK") and gate by time (the latest RTT sample), since the controller does not see
//!   sequence numbers. It also recomputes p on a timer (every 1/170 s) and adapts α and the upper
//!   threshold from max_rtt; plain PERT here evaluates p(q) on every ACK with fixed thresholds
//!   (PERT/RED); `pert-adaptive` below adds the adaptations. Setting ssthresh on an early response is the ns-3 behaviour; we could not check it
//!   against the paper.
//!
//! Adaptive PERT (`cc = "pert-adaptive"`, after Kotla and Reddy, "Making a delay-based protocol
//! adaptive to heterogeneous environments", which Yin et al. cite for an adaptive PERT), its
//! three adaptations:
//! * the upper threshold follows the path's queue: the probability reaches 1 at
//!   T_3 = max(2·T_max, 0.65·(max_rtt − min_rtt)) instead of 2·T_max, so a deep buffer that
//!   loss-based flows keep full does not pin p at 1;
//! * the reduction follows the queue: β = q / (q + max_q) with max_q = max(10 ms, max_rtt −
//!   min_rtt), cwnd ← ⌊(1 − β)·cwnd⌋ (to the nearest 1/1000 of the window).
//! * the additive increase α follows the flow's competition ([`super::pert_alpha`]).

use super::pert_alpha::AdaptiveAlpha;
use super::reno::RenoWindow;
use super::{CongestionControl, CongestionEvent};
use crate::time::Instant;
use std::time::Duration;

/// T_min: no early response below this queueing delay.
pub const T_MIN: Duration = Duration::from_millis(5);
/// T_max: the probability reaches P_MAX here, and 1 at 2·T_max.
pub const T_MAX: Duration = Duration::from_millis(10);
/// p_max.
pub const P_MAX: f64 = 0.05;
/// Weight of the history in srtt_0.99.
pub const SRTT_WEIGHT: f64 = 0.99;
/// The window kept by an early response: 1 − β = 0.65, as a fraction.
pub const KEEP_NUM: u32 = 65;
pub const KEEP_DEN: u32 = 100;

/// Early-response probability for queueing delay `q` (PERT/RED with the gentle segment).
pub fn probability(q: Duration) -> f64 {
    probability_up_to(q, 2 * T_MAX)
}

/// The same curve with the probability reaching 1 at `upper` (≥ T_max) instead of 2·T_max.
pub fn probability_up_to(q: Duration, upper: Duration) -> f64 {
    let (q, tmin, tmax) = (q.as_secs_f64(), T_MIN.as_secs_f64(), T_MAX.as_secs_f64());
    let upper = upper.as_secs_f64().max(tmax + 1e-9);
    if q < tmin {
        0.0
    } else if q < tmax {
        P_MAX * (q - tmin) / (tmax - tmin)
    } else if q < upper {
        P_MAX + (1.0 - P_MAX) * (q - tmax) / (upper - tmax)
    } else {
        1.0
    }
}

/// Adaptive PERT's floor of max_q, the queue its reduction is measured against.
pub const ADAPTIVE_MIN_MAX_Q: Duration = Duration::from_millis(10);
/// Adaptive PERT's upper threshold as a share of max_rtt − min_rtt.
pub const ADAPTIVE_UPPER_SHARE: f64 = 0.65;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic generator for the draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1), 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pert {
    w: RenoWindow,
    /// srtt_0.99, seconds.
    srtt99: Option<f64>,
    min_rtt: Option<Duration>,
    max_rtt: Option<Duration>,
    last_rtt: Option<Duration>,
    /// Adaptive PERT (Kotla and Reddy): upper threshold and β follow max_rtt − min_rtt, and
    /// the additive increase follows the competition.
    adaptive: Option<AdaptiveAlpha>,
    /// When the window was last reduced (early response, recovery or RTO).
    last_reduction: Option<Instant>,
    rng: SplitMix64,
    early_responses: u64,
}

// No NaN is ever stored in `srtt99`.
impl Eq for Pert {}

impl Pert {
    pub fn new(initial_window: u32, seed: u64) -> Self {
        Pert {
            w: RenoWindow::new(initial_window),
            srtt99: None,
            min_rtt: None,
            max_rtt: None,
            last_rtt: None,
            adaptive: None,
            last_reduction: None,
            rng: SplitMix64::new(seed),
            early_responses: 0,
        }
    }
    /// Adaptive PERT (the module header says which adaptations).
    pub fn adaptive(initial_window: u32, seed: u64) -> Self {
        Pert {
            adaptive: Some(AdaptiveAlpha::default()),
            ..Pert::new(initial_window, seed)
        }
    }
    pub fn is_adaptive(&self) -> bool {
        self.adaptive.is_some()
    }
    /// The window state (for tests and tracing).
    pub fn window(&self) -> &RenoWindow {
        &self.w
    }
    /// Early responses taken so far.
    pub fn early_responses(&self) -> u64 {
        self.early_responses
    }
    /// srtt_0.99.
    pub fn srtt99(&self) -> Option<Duration> {
        self.srtt99.map(Duration::from_secs_f64)
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// q = srtt_0.99 − min_rtt, once there is a sample.
    pub fn queueing_delay(&self) -> Option<Duration> {
        let (s, m) = (self.srtt99?, self.min_rtt?);
        Some(Duration::from_secs_f64((s - m.as_secs_f64()).max(0.0)))
    }

    fn on_sample(&mut self, r: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.max_rtt = Some(self.max_rtt.map_or(r, |m| m.max(r)));
        let x = r.as_secs_f64();
        self.srtt99 = Some(match self.srtt99 {
            None => x,
            Some(s) => SRTT_WEIGHT * s + (1.0 - SRTT_WEIGHT) * x,
        });
        self.last_rtt = Some(r);
    }

    /// max_rtt − min_rtt: the largest queueing delay this flow has seen.
    fn rtt_range(&self) -> Duration {
        match (self.max_rtt, self.min_rtt) {
            (Some(a), Some(b)) => a.saturating_sub(b),
            _ => Duration::ZERO,
        }
    }

    /// Adaptive PERT's T_3 = max(2·T_max, 0.65·(max_rtt − min_rtt)).
    pub fn adaptive_upper(&self) -> Duration {
        (2 * T_MAX).max(self.rtt_range().mul_f64(ADAPTIVE_UPPER_SHARE))
    }

    /// max_q = max(10 ms, max_rtt − min_rtt).
    fn max_q(&self) -> Duration {
        ADAPTIVE_MIN_MAX_Q.max(self.rtt_range())
    }

    /// Adaptive PERT's β = q / (q + max_q).
    pub fn adaptive_beta(&self, q: Duration) -> f64 {
        let q = q.as_secs_f64();
        q / (q + self.max_q().as_secs_f64())
    }

    /// Window growth on an ACK with no early response: NewReno's, with adaptive PERT's α
    /// segments per RTT in congestion avoidance.
    fn grow(&mut self, now: Instant, acked: u32, cwnd_limited: bool) {
        if !self.is_adaptive() {
            return self.w.on_ack(acked, cwnd_limited);
        }
        let (Some(q), Some(srtt)) = (self.queueing_delay(), self.srtt99()) else {
            return self.w.on_ack(acked, cwnd_limited);
        };
        let (max_q, cwnd) = (self.max_q(), self.w.cwnd());
        let mut alpha = 1.0;
        if let Some(a) = &mut self.adaptive {
            a.on_ack(now, q, max_q, srtt, cwnd);
            alpha = a.alpha();
        }
        let Some(acked) = self.w.ack_past_slow_start(acked, cwnd_limited) else {
            return;
        };
        let per = ((self.w.cwnd() as f64 / alpha).round() as u32).max(1);
        self.w.cong_avoid_ai(per, acked);
    }

    fn gate_open(&self, now: Instant) -> bool {
        match (self.last_reduction, self.last_rtt) {
            (None, _) => true,
            (Some(t), Some(rtt)) => now.saturating_duration_since(t) >= rtt,
            (Some(_), None) => false,
        }
    }

    /// The early response: draws if p > 0 and the gate is open; `true` if it reduced cwnd.
    fn early_response(&mut self, now: Instant) -> bool {
        let Some(q) = self.queueing_delay() else {
            return false;
        };
        let p = if self.is_adaptive() {
            probability_up_to(q, self.adaptive_upper())
        } else {
            probability(q)
        };
        if p <= 0.0 || !self.gate_open(now) {
            return false;
        }
        if self.rng.next_f64() >= p {
            return false;
        }
        if self.is_adaptive() {
            let keep = 1.0 - self.adaptive_beta(q);
            self.w.scale_down((keep * 1000.0).round() as u32, 1000);
        } else {
            self.w.scale_down(KEEP_NUM, KEEP_DEN);
        }
        if let Some(a) = &mut self.adaptive {
            a.on_early_response();
        }
        self.last_reduction = Some(now);
        self.early_responses += 1;
        true
    }
}

impl CongestionControl for Pert {
    fn cwnd(&self) -> u32 {
        self.w.cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.w.ssthresh()
    }
    fn on_ack(&mut self, now: Instant, acked: u32, cwnd_limited: bool, rtt: Option<Duration>) {
        if let Some(r) = rtt {
            self.on_sample(r);
        }
        if !self.early_response(now) {
            self.grow(now, acked, cwnd_limited);
        }
    }
    fn on_congestion_event(&mut self, now: Instant, event: CongestionEvent, base: u32) {
        self.w.on_congestion_event(event, base);
        if let Some(a) = &mut self.adaptive {
            a.on_loss();
        }
        self.last_reduction = Some(now);
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.w.undo(prior_cwnd, prior_ssthresh)
    }
    fn on_exit_recovery(&mut self, _now: Instant) {
        self.w.on_exit_recovery();
    }
    fn on_idle_restart(&mut self, _now: Instant) {
        self.w.on_idle_restart();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::TestHooks;
    use crate::cc::NewReno;

    const T: Instant = Instant::ZERO;
    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }
    fn us(x: u64) -> Duration {
        Duration::from_micros(x)
    }
    fn at_ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }
    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn probability_table() {
        for (q_us, p) in [
            (0, 0.0),
            (4_999, 0.0),
            (5_000, 0.0),
            (6_000, 0.01),
            (7_500, 0.025),
            (9_000, 0.04),
            (10_000, 0.05),
            (12_000, 0.05 + 0.95 * 0.2),
            (15_000, 0.525),
            (19_000, 0.05 + 0.95 * 0.9),
            (20_000, 1.0),
            (50_000, 1.0),
        ] {
            close(probability(us(q_us)), p);
        }
    }

    #[test]
    fn srtt_099_and_queueing_delay() {
        let mut c = Pert::new(3, 1);
        assert_eq!(c.queueing_delay(), None);
        c.ack_with_flight(T, 1, 1, Some(ms(100)));
        assert_eq!(c.queueing_delay(), Some(Duration::ZERO));
        c.ack_with_flight(T, 1, 1, Some(ms(200)));
        // 0.99·0.1 + 0.01·0.2 = 0.101 s
        close(c.srtt99.unwrap(), 0.101);
        assert_eq!(c.min_rtt(), Some(ms(100)));
        let q = c.queueing_delay().unwrap().as_secs_f64();
        assert!((q - 0.001).abs() < 1e-9);
    }

    /// A PERT at cwnd 100 whose srtt_0.99 is 200 ms and min_rtt 100 ms (q = 99 ms, p = 1)
    /// after the next sample.
    fn congested(seed: u64) -> Pert {
        let mut c = Pert::new(3, seed);
        c.ack_with_flight(T, 97, 3, None);
        assert_eq!(c.cwnd(), 100);
        c.ack_with_flight(T, 1, 100, Some(ms(200))); // q = 0: normal slow-start growth
        assert_eq!(c.cwnd(), 101);
        c
    }

    #[test]
    fn early_response_keeps_0_65() {
        let mut c = congested(7);
        c.ack_with_flight(at_ms(1), 1, 101, Some(ms(100)));
        // srtt_0.99 = 0.199, min 0.1 → q = 99 ms, p = 1: cwnd = ⌊0.65·101⌋ = 65, no growth
        assert_eq!(c.early_responses(), 1);
        assert_eq!((c.cwnd(), c.ssthresh()), (65, 65));
        assert!(!c.in_initial_slow_start());
        for (w, kept) in [(100, 65), (20, 13), (3, 1), (2, 1), (1, 0)] {
            let mut r = RenoWindow::new(w);
            r.scale_down(KEEP_NUM, KEEP_DEN);
            assert_eq!((r.cwnd(), r.ssthresh()), (kept.max(1), kept.max(2)));
        }
    }

    #[test]
    fn at_most_once_per_rtt() {
        let mut c = congested(7);
        c.ack_with_flight(at_ms(1), 1, 101, Some(ms(100)));
        assert_eq!((c.early_responses(), c.cwnd()), (1, 65));
        // 99 ms later (last RTT sample 100 ms): p is still 1 but the gate is closed; the ACKs
        // grow the window as NewReno's congestion avoidance does
        for i in 0..65 {
            c.ack_with_flight(at_ms(2 + i), 1, 65, Some(ms(100)));
        }
        assert_eq!((c.early_responses(), c.cwnd()), (1, 66));
        c.ack_with_flight(at_ms(100), 1, 66, Some(ms(100)));
        assert_eq!(c.early_responses(), 1);
        // one RTT after the response: the next one (⌊0.65·66⌋ = 42)
        c.ack_with_flight(at_ms(101), 1, 66, Some(ms(100)));
        assert_eq!((c.early_responses(), c.cwnd()), (2, 42));
        // a loss response also closes the gate for an RTT
        c.enter_recovery(at_ms(300), 42);
        c.on_exit_recovery(at_ms(350));
        assert_eq!(c.cwnd(), 21);
        c.ack_with_flight(at_ms(399), 1, 21, Some(ms(100)));
        assert_eq!((c.early_responses(), c.cwnd()), (2, 21));
        c.ack_with_flight(at_ms(400), 1, 21, Some(ms(100)));
        assert_eq!((c.early_responses(), c.cwnd()), (3, 13));
    }

    /// Feeds ACKs with RTT samples oscillating so that q sits between T_min and T_max; returns
    /// the cwnd trace.
    fn trace(seed: u64, base_us: u64, swing_us: u64, n: u64) -> (Vec<u32>, u64) {
        let mut c = Pert::new(10, seed);
        let mut out = vec![];
        for i in 0..n {
            let rtt = us(base_us + if i % 2 == 0 { 0 } else { swing_us });
            let w = c.cwnd();
            c.ack_with_flight(Instant::from_micros(i * 5_000), 1, w, Some(rtt));
            out.push(c.cwnd());
        }
        (out, c.early_responses())
    }

    #[test]
    fn deterministic_with_a_fixed_seed() {
        // samples 100 / 115 ms: srtt_0.99 → 107.5 ms, q → 7.5 ms, p → 0.025
        let (a, na) = trace(42, 100_000, 15_000, 20_000);
        let (b, nb) = trace(42, 100_000, 15_000, 20_000);
        assert_eq!(a, b);
        assert_eq!(na, nb);
        assert!(na > 10, "{na} early responses");
        let (c, _) = trace(43, 100_000, 15_000, 20_000);
        assert_ne!(a, c);
        // the generator itself: SplitMix64 from 0 (reference values of the algorithm)
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut g = SplitMix64::new(0);
        let x = g.next_f64();
        assert!((0.0..1.0).contains(&x));
    }

    #[test]
    fn no_early_response_below_t_min() {
        // samples 100 / 109 ms: q → 4.5 ms < 5 ms
        let (a, n) = trace(42, 100_000, 9_000, 20_000);
        assert_eq!(n, 0);
        // … and the window is exactly NewReno's
        let mut r = NewReno::new(10);
        for (i, &w) in a.iter().enumerate() {
            let inf = r.cwnd();
            r.ack_with_flight(Instant::from_micros(i as u64 * 5_000), 1, inf, None);
            assert_eq!(r.cwnd(), w);
        }
    }

    #[test]
    fn adaptive_threshold_and_reduction_follow_the_rtt_range() {
        // min 100 ms, max 200 ms: T_3 = max(20, 65) = 65 ms, max_q = 100 ms
        let mut c = Pert::adaptive(3, 7);
        c.ack_with_flight(T, 97, 3, None);
        c.ack_with_flight(T, 1, 100, Some(ms(200)));
        c.ack_with_flight(T, 1, 101, Some(ms(100)));
        assert_eq!(c.adaptive_upper(), ms(65));
        close(c.adaptive_beta(ms(100)), 0.5);
        close(c.adaptive_beta(ms(25)), 0.2);
        // the curve: p_max at T_max, 1 at T_3 and beyond, linear between
        close(probability_up_to(ms(10), ms(65)), P_MAX);
        close(probability_up_to(ms(65), ms(65)), 1.0);
        close(
            probability_up_to(us(37_500), ms(65)),
            P_MAX + (1.0 - P_MAX) * 0.5,
        );
        assert_eq!(probability_up_to(ms(15), 2 * T_MAX), probability(ms(15)));
        // q = 0.99·0.2 + 0.01·0.1 − 0.1 = 99 ms ≥ T_3: p = 1, β = 99/199; ⌊101·0.503⌋ = 50
        assert_eq!(c.early_responses(), 1);
        assert_eq!(c.cwnd(), 50);
        // a path with no queue gives plain PERT's curve (T_3 = 2·T_max, max_q = 10 ms)
        let mut d = Pert::adaptive(3, 7);
        d.ack_with_flight(T, 1, 3, Some(ms(100)));
        assert_eq!(d.adaptive_upper(), 2 * T_MAX);
        close(d.adaptive_beta(ms(10)), 0.5);
    }

    #[test]
    fn loss_response_is_newreno() {
        let mut c = Pert::new(3, 0);
        c.ack_with_flight(T, 37, 3, None);
        c.enter_recovery(T, 40);
        assert_eq!((c.cwnd(), c.ssthresh()), (20, 20));
        c.on_exit_recovery(T);
        c.rto(T, 20);
        assert_eq!((c.cwnd(), c.ssthresh()), (1, 10));
    }
}
