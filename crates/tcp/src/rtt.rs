//! RTT estimation and the retransmission timeout, one model per `RtoModel`
//! (docs/spec/mechanisms.md,
//! RTO models; RFC 6298; Linux `tcp_rtt_estimator`/`__tcp_set_rto`; FreeBSD 6 `tcp_xmit_timer` as
//! in Hurtig
//! (2006) App. C.1.1; ns-2 `rtt_update` as in Yin et al. §II.A).
//!
//! Pure arithmetic: the endpoint feeds samples (already filtered by Karn's rule) and asks for
//! the base RTO; backoff is applied by [`backed_off`] (or [`RttEstimator::backed_off_rto`],
//! which knows FreeBSD's table and where it adds its slop).
//!
//! Each model keeps its state the way its source does, in units of the clock granularity
//! (`TcpConfig::clock_granularity`, "ticks"), except RFC 6298 which works in nanoseconds:
//!
//! * `Linux` (2.6.22): a sample is rounded UP to whole jiffies (at least one, as
//!   `tcp_rtt_estimator` turns 0 into 1). `srtt` is kept ×8, `mdev` ×4. The mdev update is
//!   asymmetric: when the RTT *falls* (m < srtt) and |error| exceeds mdev, the excess is weighted
//!   a further 1/8 (so effectively 1/32), which keeps a falling RTT from inflating the RTO.
//!   `rttvar` = max(`mdev_max`, rto_min), where `mdev_max` is the largest mdev seen in the current
//!   RTT round; at the end of a round `rttvar` decays by 1/4 of its excess over `mdev_max`. RTO =
//!   srtt + rttvar, i.e. SRTT + max(rto_min, 4·mdev) in steady state. [`RttEstimator::on_sample`]
//!   treats every sample as ending a round (exact for thin streams, which have at most one sample
//!   per RTT); [`RttEstimator::on_sample_in_round`] lets the endpoint pass Linux's `after(snd_una,
//!   rtt_seq)` itself. Steady RTT R: RTO → R + 200 ms when 2R ≤ 200 ms (210 ms at 10 ms, 300 ms at
//!   100 ms); above that the per-round decay stops once the excess is under 4 jiffies (333 ms at
//!   130 ms, ≈ Evensen's (2008) "~330 ms").
//! * `Rfc6298`: exactly RFC 6298 §2; samples rounded up to G.
//! * `FreeBsd6`: `t_srtt` ×32, `t_rttvar` ×16, deltas ×4 (`TCP_DELTA_SHIFT`). The sample is
//!   `ticks + 1` where `ticks` = whole ticks elapsed (floor), as tcp_input.c passes `ticks -
//!   tsecr + 1`. First sample: srtt = r, rttvar = r/2 (Hurtig (2006) Listing C.1). Later samples
//!   use `rtt - 1` ("adjust rtt to origin 0"): this branch is *not* in Hurtig (2006); it is
//!   FreeBSD 6 `tcp_xmit_timer` (4.4BSD lineage). RTO = `TCPT_RANGESET(TCP_REXMTVAL,
//!   max(t_rttmin, rtt+2), REXMTMAX)` which adds `tcp_rexmit_slop` (200 ms) *before* clamping
//!   (Listings C.2–C.4). A first sample r gives 3·r + 200 ms; Hurtig's 28.8 ms handshake RTT
//!   gives r = 29 ticks and 287 ms. Ambiguity: "r" in docs/spec/mechanisms.md is the
//!   `tcp_xmit_timer` argument (ticks + 1), so a measured 28–28.99 ms yields 287 ms and an exact
//!   29 ms yields 290 ms.
//! * `Ns2`: `rtt_update` of ns-2 `tcp.cc`: sample `int(tao/tick + 0.5)` (the timestamp-option
//!   branch; at least 1 tick), `t_srtt_` ×8, `t_rttvar_` ×4, first sample srtt = r, rttvar = r/2,
//!   `t_rtxcur_ = ((t_rttvar_ << 3) + t_srtt_) >> 3` ticks, then `rtt_timeout`: max(minrto),
//!   min(maxrto), at least 2 ticks. Yin et al.'s formulas (2) and (3) omit the sample weights (1/8,
//!   1/4); ns-2 (and RFC 6298) apply them, and so do we. The ns-2 code *truncates* the 1/8-tick
//!   fraction of SRTT + 4·RTTVAR to whole ticks (docs/spec/mechanisms.md says "rounded up"); we
//!   follow the code: the result is a whole number of ticks either way.

use crate::config::{RtoModel, TcpConfig};
use crate::timer_wheel::TimerWheel;
use std::time::Duration;

#[cfg(test)]
mod tests;

/// FreeBSD `net.inet.tcp.rexmit_slop` default (Hurtig (2006) Table C.2), added to every RTO.
pub const FREEBSD_REXMIT_SLOP: Duration = Duration::from_millis(200);
/// FreeBSD 6 `tcp_backoff[]`: the multiplier stops at 64 (`TCP_MAXRXTSHIFT` = 12 entries).
const FREEBSD_BACKOFF: [u64; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
/// Internal cap on tick counts so the scaled fixed-point arithmetic never overflows.
const MAX_TICKS: i64 = 1 << 40;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Ticks: `srtt` ×8, `mdev` ×4; `mdev_max`, `rttvar` unscaled ticks (Linux keeps them as
    /// "4·mdev" values, which is what they are).
    Linux {
        srtt: i64,
        mdev: i64,
        mdev_max: i64,
        rttvar: i64,
    },
    /// Nanoseconds, unscaled.
    Rfc { srtt: u64, rttvar: u64 },
    /// Ticks: `srtt` ×32, `rttvar` ×16; `last` the last `tcp_xmit_timer` argument.
    FreeBsd { srtt: i64, rttvar: i64, last: i64 },
    /// Ticks: `srtt` ×8, `rttvar` ×4.
    Ns2 { srtt: i64, rttvar: i64 },
}

/// The per-connection RTT estimator.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    model: RtoModel,
    /// Clock granularity in nanoseconds (≥ 1).
    tick: u64,
    /// The RTO is rounded up to a multiple of this (nanoseconds, ≥ 1): one jiffy when
    /// `clock_hz` is set (Linux keeps `icsk_rto` in jiffies, `__tcp_set_rto`).
    rto_quantum: u64,
    rto_min: Duration,
    /// `rto_min` in whole ticks, rounded up (computed once: a division, and the Linux model
    /// asks for it on every sample).
    rto_min_ticks: i64,
    rto_initial: Duration,
    rto_max: Duration,
    state: Option<State>,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    /// [`Self::rto`], recomputed whenever `state` changes (it is asked for on every segment).
    rto: Duration,
}

impl RttEstimator {
    pub fn new(cfg: &TcpConfig) -> Self {
        let tick = u64::try_from(cfg.clock_granularity.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        let mut e = RttEstimator {
            model: cfg.rto_model,
            tick,
            rto_quantum: cfg
                .clock_hz
                .map_or(1, |hz| TimerWheel::new(hz).jiffy().as_nanos() as u64),
            rto_min: cfg.rto_min,
            rto_min_ticks: 0,
            rto_initial: cfg.rto_initial,
            rto_max: cfg.rto_max,
            state: None,
            min_rtt: None,
            latest: None,
            rto: Duration::ZERO,
        };
        e.rto_min_ticks = e.ticks_up(e.rto_min);
        e.rto = e.compute_rto();
        e
    }

    /// Feed one RTT sample (a segment that was not retransmitted, Karn's rule). For `Linux`
    /// the sample also ends an RTT round (see the module docs).
    pub fn on_sample(&mut self, rtt: Duration) {
        self.on_sample_in_round(rtt, true);
    }

    /// As [`Self::on_sample`]; `ends_round` is Linux's `after(snd_una, rtt_seq)` (the ACK covers
    /// data sent after the previous round ended; the endpoint then sets `rtt_seq = snd_nxt`).
    /// Only the `Linux` model uses it.
    pub fn on_sample_in_round(&mut self, rtt: Duration, ends_round: bool) {
        self.latest = Some(rtt);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let tick = self.tick as i64;
        let ns = nanos(rtt) as i64;
        self.state = Some(match (self.model, self.state) {
            (RtoModel::Linux, st) => {
                let m = ((ns + tick - 1) / tick).clamp(1, MAX_TICKS);
                linux_update(st, m, self.rto_min_ticks, ends_round)
            }
            (RtoModel::Rfc6298, st) => {
                let r = (ns as u64).div_ceil(self.tick).saturating_mul(self.tick);
                match st {
                    Some(State::Rfc { srtt, rttvar }) => State::Rfc {
                        rttvar: rttvar - rttvar / 4 + srtt.abs_diff(r) / 4,
                        srtt: srtt - srtt / 8 + r / 8,
                    },
                    _ => State::Rfc {
                        srtt: r,
                        rttvar: r / 2,
                    },
                }
            }
            (RtoModel::FreeBsd6, st) => {
                let r = (ns / tick).min(MAX_TICKS) + 1;
                match st {
                    Some(State::FreeBsd { srtt, rttvar, .. }) => {
                        let mut delta = ((r - 1) << 2) - (srtt >> 3);
                        let srtt = (srtt + delta).max(1);
                        delta = delta.abs() - (rttvar >> 2);
                        let rttvar = (rttvar + delta).max(1);
                        State::FreeBsd {
                            srtt,
                            rttvar,
                            last: r,
                        }
                    }
                    _ => State::FreeBsd {
                        srtt: r << 5,
                        rttvar: r << 3,
                        last: r,
                    },
                }
            }
            (RtoModel::Ns2, st) => {
                let r = ((ns + tick / 2) / tick).clamp(1, MAX_TICKS);
                match st {
                    Some(State::Ns2 { srtt, rttvar }) => {
                        let mut delta = r - (srtt >> 3);
                        let srtt = (srtt + delta).max(1);
                        delta = delta.abs() - (rttvar >> 2);
                        let rttvar = (rttvar + delta).max(1);
                        State::Ns2 { srtt, rttvar }
                    }
                    _ => State::Ns2 {
                        srtt: r << 3,
                        rttvar: r << 1,
                    },
                }
            }
        });
        self.rto = self.compute_rto();
    }

    /// Base RTO (no backoff): `rto_initial` before the first sample; otherwise per model,
    /// clamped to the model's minimum and `rto_max` and quantised to the clock granularity.
    #[inline]
    pub fn rto(&self) -> Duration {
        self.rto
    }

    fn compute_rto(&self) -> Duration {
        let Some(st) = self.state else {
            return self.clamp(self.rto_initial);
        };
        let raw = match st {
            State::Linux { srtt, rttvar, .. } => self.ticks((srtt >> 3) + rttvar),
            State::Rfc { srtt, rttvar } => {
                let v = srtt.saturating_add(self.tick.max(rttvar.saturating_mul(4)));
                Duration::from_nanos(v.div_ceil(self.tick).saturating_mul(self.tick))
            }
            State::FreeBsd { last, .. } => {
                let lower = self.rto_min_ticks.max(last + 2);
                self.ticks(self.freebsd_rexmtval(st) + self.slop_ticks())
                    .max(self.ticks(lower))
            }
            State::Ns2 { srtt, rttvar } => {
                let cur = self.ticks(((rttvar << 3) + srtt) >> 3);
                cur.max(self.rto_min).max(self.ticks(2))
            }
        };
        self.clamp(raw)
    }

    /// The RTO after `backoff` consecutive expiries. For all models but `FreeBsd6` this is
    /// [`backed_off`]`(self.rto(), backoff, rto_max)`. FreeBSD 6 `tcp_timer_rexmt` multiplies
    /// `TCP_REXMTVAL` by `tcp_backoff[t_rxtshift]` (capped at 64) and adds the 200 ms slop
    /// *after* the multiplication: a 29-tick sample backs off 287, 374, 548, 896 ms, …
    pub fn backed_off_rto(&self, backoff: u32) -> Duration {
        match self.state {
            Some(st @ State::FreeBsd { .. }) if backoff > 0 => {
                let mult = FREEBSD_BACKOFF[(backoff as usize).min(FREEBSD_BACKOFF.len() - 1)];
                let base = self.freebsd_rexmtval(st);
                let v = self.ticks(base.saturating_mul(mult as i64) + self.slop_ticks());
                self.clamp(v.max(self.ticks(self.rto_min_ticks)))
            }
            _ => backed_off(self.rto(), backoff, self.rto_max),
        }
    }

    pub fn srtt(&self) -> Option<Duration> {
        Some(match self.state? {
            State::Linux { srtt, .. } | State::Ns2 { srtt, .. } => self.frac_ticks(srtt, 3),
            State::Rfc { srtt, .. } => Duration::from_nanos(srtt),
            State::FreeBsd { srtt, .. } => self.frac_ticks(srtt, 5),
        })
    }

    /// The smoothed variation (RTTVAR, or Linux mdev).
    pub fn rttvar(&self) -> Option<Duration> {
        Some(match self.state? {
            State::Linux { mdev, .. } | State::Ns2 { rttvar: mdev, .. } => self.frac_ticks(mdev, 2),
            State::Rfc { rttvar, .. } => Duration::from_nanos(rttvar),
            State::FreeBsd { rttvar, .. } => self.frac_ticks(rttvar, 4),
        })
    }

    /// A congestion-control RTT sample (Linux `ca_rtt_us`, `tcp_update_rtt_min`): only the
    /// minimum RTT learns from it.
    pub fn note_min_rtt(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }

    /// The model this estimator implements.
    pub fn model(&self) -> RtoModel {
        self.model
    }

    /// `TCP_REXMTVAL`: max(t_rttmin, (srtt/8 + rttvar) / 4) in ticks (scaled values).
    fn freebsd_rexmtval(&self, st: State) -> i64 {
        let State::FreeBsd { srtt, rttvar, .. } = st else {
            unreachable!()
        };
        self.rto_min_ticks.max(((srtt >> 3) + rttvar) >> 2)
    }

    fn slop_ticks(&self) -> i64 {
        self.ticks_up(FREEBSD_REXMIT_SLOP)
    }

    /// `d` in whole ticks, rounded up.
    fn ticks_up(&self, d: Duration) -> i64 {
        (nanos(d).div_ceil(self.tick) as i64).min(MAX_TICKS)
    }

    fn ticks(&self, n: i64) -> Duration {
        Duration::from_nanos((n.max(0) as u64).saturating_mul(self.tick))
    }

    /// A fixed-point tick count with `shift` fraction bits, as a duration.
    fn frac_ticks(&self, v: i64, shift: u32) -> Duration {
        let ns = (v.max(0) as u128 * self.tick as u128) >> shift;
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    fn clamp(&self, d: Duration) -> Duration {
        let d = d.max(self.rto_min).min(self.rto_max);
        if self.rto_quantum == 1 {
            // No quantum (no `clock_hz`): no division (by 1, its quotient is long and slow).
            return Duration::from_nanos(d.as_nanos() as u64);
        }
        let ns = (d.as_nanos() as u64).div_ceil(self.rto_quantum);
        Duration::from_nanos(ns.saturating_mul(self.rto_quantum))
    }
}

/// One `tcp_rtt_estimator` step (Linux 2.6.22) in jiffies. `min` is rto_min in jiffies.
fn linux_update(st: Option<State>, m: i64, min: i64, ends_round: bool) -> State {
    let Some(State::Linux {
        mut srtt,
        mut mdev,
        mut mdev_max,
        mut rttvar,
    }) = st
    else {
        // No previous measure: srtt = m, mdev = m/2 (×4 → 2m), "make sure rto = 3*rtt".
        let mdev = m << 1;
        let rttvar = mdev.max(min);
        return State::Linux {
            srtt: m << 3,
            mdev,
            mdev_max: rttvar,
            rttvar,
        };
    };
    let mut err = m - (srtt >> 3);
    srtt += err;
    if err < 0 {
        // RTT fell: damp the mdev increase by a further 1/8 (Linux's asymmetric update).
        err = -err - (mdev >> 2);
        if err > 0 {
            err >>= 3;
        }
    } else {
        err -= mdev >> 2;
    }
    mdev += err;
    if mdev > mdev_max {
        mdev_max = mdev;
        rttvar = rttvar.max(mdev_max);
    }
    if ends_round {
        if mdev_max < rttvar {
            rttvar -= (rttvar - mdev_max) >> 2;
        }
        mdev_max = min;
    }
    State::Linux {
        srtt,
        mdev,
        mdev_max,
        rttvar,
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).min(1 << 62)
}

/// `rto · 2^backoff`, capped at `max`.
#[inline]
pub fn backed_off(rto: Duration, backoff: u32, max: Duration) -> Duration {
    if backoff == 0 {
        // The common case (no expiry since the last RTT sample): no 128-bit arithmetic.
        return rto.min(max);
    }
    let v = if backoff >= 64 {
        if rto.is_zero() {
            Duration::ZERO
        } else {
            Duration::MAX
        }
    } else {
        let f = 1u128 << backoff;
        let ns = rto.as_nanos().saturating_mul(f);
        u64::try_from(ns).map_or(Duration::MAX, Duration::from_nanos)
    };
    v.min(max)
}
