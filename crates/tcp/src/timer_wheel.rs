//! The Linux kernel timer wheel (`kernel/time/timer.c` since Linux 4.8: `calc_wheel_index`,
//! `calc_index`), selected by `TcpConfig::clock_hz` (scenario `tcp.clock_hz`, 250 in the
//! `linux` profile).
//!
//! TCP's retransmission, probe, reorder and delayed-ACK timers are `timer_list` timers armed
//! `d` jiffies ahead (`usecs_to_jiffies` rounds a duration *up* to whole jiffies). The wheel
//! files a timer in a level by how far ahead it is, and every level has a granularity:
//!
//! | level | timers this many jiffies ahead | granularity |
//! |---|---|---|
//! | 0 | < 63 | 1 jiffy |
//! | 1 | < 504 | 8 jiffies |
//! | 2 | < 4 032 | 64 jiffies |
//! | n | < 63 · 8ⁿ | 8ⁿ jiffies |
//!
//! so that it never fires early, the expiry is rounded *up* to the next multiple of the
//! granularity strictly above the nominal expiry jiffy (`(expires + gran) >> shift << shift`),
//! and the timer runs at that jiffy tick. At HZ = 250 an RTO of 300 ms (75 jiffies, level 1)
//! fires 300–332 ms after it was armed; a 1 s SYN timer fires 1.000–1.032 s after it.
//! Ticks fall on multiples of the jiffy since the simulation's time zero.
//!
//! Invariant: `fire_at(now, d) ≥ now + d`, on a jiffy boundary, and less than one granularity
//! of its level (plus one jiffy) later than that.

use crate::time::Instant;
use std::time::Duration;

/// Bits per level (64 buckets).
const LVL_BITS: u32 = 6;
/// Each level is 8× coarser than the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// Levels of a HZ = 1000 wheel (the deepest a TCP timer can reach: 120 s is level 3).
const LVL_DEPTH: u32 = 9;

/// A jiffy clock and the wheel's rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerWheel {
    jiffy_ns: u64,
}

impl TimerWheel {
    /// A wheel ticking `hz` times a second (`hz` ≥ 1).
    pub fn new(hz: u32) -> TimerWheel {
        TimerWheel {
            jiffy_ns: 1_000_000_000 / u64::from(hz.max(1)),
        }
    }

    /// One jiffy.
    pub fn jiffy(&self) -> Duration {
        Duration::from_nanos(self.jiffy_ns)
    }

    /// Linux `usecs_to_jiffies`: a duration in whole jiffies, rounded up.
    pub fn to_jiffies(&self, d: Duration) -> u64 {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        ns.div_ceil(self.jiffy_ns)
    }

    /// A duration rounded up to whole jiffies.
    pub fn round_up(&self, d: Duration) -> Duration {
        Duration::from_nanos(self.to_jiffies(d).saturating_mul(self.jiffy_ns))
    }

    /// When a timer armed at `now` to expire `timeout` later runs.
    pub fn fire_at(&self, now: Instant, timeout: Duration) -> Instant {
        let clk = now.as_nanos() / self.jiffy_ns;
        let delta = self.to_jiffies(timeout);
        let expires = clk.saturating_add(delta);
        let shift = LVL_CLK_SHIFT * level(delta);
        let bucket = (expires.saturating_add(1 << shift) >> shift) << shift;
        Instant::from_nanos(bucket.saturating_mul(self.jiffy_ns))
    }
}

/// The wheel level of a timer `delta` jiffies ahead (Linux `calc_wheel_index`).
fn level(delta: u64) -> u32 {
    let start = |n: u32| ((1u64 << LVL_BITS) - 1) << ((n - 1) * LVL_CLK_SHIFT);
    (1..LVL_DEPTH)
        .find(|&n| delta < start(n))
        .map_or(LVL_DEPTH - 1, |n| n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn levels_follow_the_kernel_bounds() {
        assert_eq!(level(0), 0);
        assert_eq!(level(62), 0);
        assert_eq!(level(63), 1);
        assert_eq!(level(503), 1);
        assert_eq!(level(504), 2);
        assert_eq!(level(4031), 2);
        assert_eq!(level(4032), 3);
    }

    #[test]
    fn hz250_rto_of_300ms_fires_on_the_32ms_grid() {
        let w = TimerWheel::new(250);
        assert_eq!(w.jiffy(), ms(4));
        // armed at t = 0: expires jiffy 75, level 1 (granularity 8) → jiffy 80 = 320 ms
        assert_eq!(w.fire_at(Instant::ZERO, ms(300)), Instant::from_millis(320));
        // armed at 10 ms (jiffy 2): expires 77 → 80
        assert_eq!(
            w.fire_at(Instant::from_millis(10), ms(300)),
            Instant::from_millis(320)
        );
        // armed at 30 ms (jiffy 7): expires 82 → 88 = 352 ms
        assert_eq!(
            w.fire_at(Instant::from_millis(30), ms(300)),
            Instant::from_millis(352)
        );
    }

    #[test]
    fn a_one_second_syn_timer_fires_between_1000_and_1032_ms() {
        let w = TimerWheel::new(250);
        for start_us in (0..8000).step_by(250) {
            let now = Instant::from_nanos(start_us * 1000);
            let fired = w.fire_at(now, ms(1000)) - now;
            assert!(fired >= ms(1000) && fired <= ms(1032), "{fired:?}");
        }
        assert_eq!(
            w.fire_at(Instant::ZERO, ms(1000)),
            Instant::from_millis(1024)
        );
    }

    #[test]
    fn level_0_fires_one_jiffy_after_the_nominal_expiry_tick() {
        let w = TimerWheel::new(1000);
        // 40 ms at HZ 1000 from 5.5 ms: jiffy 5 + 40 = 45, + 1 → 46 ms
        assert_eq!(
            w.fire_at(Instant::from_nanos(5_500_000), ms(40)),
            Instant::from_millis(46)
        );
        // durations round up to whole jiffies first
        assert_eq!(w.to_jiffies(Duration::from_micros(4001)), 5);
        assert_eq!(TimerWheel::new(250).round_up(ms(301)), ms(304));
    }

    #[test]
    fn never_early_and_on_a_tick() {
        let w = TimerWheel::new(250);
        for now_us in [0u64, 1, 3999, 4000, 123_457, 9_999_999] {
            for d_ms in [0u64, 1, 4, 200, 252, 300, 1000, 2016, 16_000, 120_000] {
                let now = Instant::from_nanos(now_us * 1000);
                let at = w.fire_at(now, ms(d_ms));
                assert!(at >= now + ms(d_ms));
                assert_eq!(at.as_nanos() % 4_000_000, 0);
                let gran = 4 * 8u64.pow(level(w.to_jiffies(ms(d_ms))));
                assert!(at - now <= ms(d_ms) + ms(gran + 4), "{now_us} {d_ms}");
            }
        }
    }
}
