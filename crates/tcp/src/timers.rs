//! The endpoint's timer table (docs/architecture.md, "timers in a table"): one deadline per kind,
//! checked in the fixed order of [`TimerKind::ORDER`] so that simultaneous expiries are handled
//! deterministically. `Tlp` and `Reorder` serve RFC 8985 (`recovery::manager`). Timers are armed
//! with a timeout from now ([`Timers::arm`]); with a [`TimerWheel`] (`tcp.clock_hz`) the deadline
//! is where the Linux timer wheel would run the timer, else exactly `now + timeout`.

use crate::time::Instant;
use crate::timer_wheel::TimerWheel;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimerKind {
    /// Retransmission timer (RFC 6298), also SYN/SYN-ACK retransmission.
    Rto = 0,
    /// Tail loss probe (RFC 8985 §7).
    Tlp = 1,
    /// RACK reordering timer (RFC 8985 §6.2).
    Reorder = 2,
    /// Delayed ACK (RFC 1122 §4.2.3.2, docs/spec/mechanisms.md, receiver behaviour).
    DelayedAck = 3,
    /// Zero-window probe (persist timer, RFC 9293 §3.8.6.1).
    Persist = 4,
    /// TIME-WAIT (2·MSL).
    TimeWait = 5,
    /// Linux mode-2 Early Retransmit delay (RFC 5827 §6 mitigation A.3; Linux
    /// `ICSK_TIME_EARLY_RETRANS`).
    EarlyRetransmit = 6,
}

impl TimerKind {
    pub const COUNT: usize = 7;
    /// Order in which expired timers are run.
    pub const ORDER: [TimerKind; TimerKind::COUNT] = [
        TimerKind::Rto,
        TimerKind::Tlp,
        TimerKind::Reorder,
        TimerKind::EarlyRetransmit,
        TimerKind::DelayedAck,
        TimerKind::Persist,
        TimerKind::TimeWait,
    ];
}

/// The deadlines are plain instants with a bit mask of the armed ones, not `Option`s: 56 bytes
/// instead of 112 for what nearly every event reads (docs/performance/many-flows.md, "Hot fields
/// first").
#[derive(Clone, Debug)]
pub struct Timers {
    /// Each timer's deadline; `Instant::MAX` when it is not armed, so that the earliest is a
    /// plain minimum (`armed` tells it from a timer armed for `Instant::MAX`).
    deadline: [Instant; TimerKind::COUNT],
    /// Bit `k` set: timer `k` is armed.
    armed: u8,
    wheel: Option<TimerWheel>,
}

impl Default for Timers {
    fn default() -> Timers {
        Timers::new(None)
    }
}

impl Timers {
    pub fn new(wheel: Option<TimerWheel>) -> Timers {
        Timers {
            deadline: [Instant::MAX; TimerKind::COUNT],
            armed: 0,
            wheel,
        }
    }
    /// The timer wheel, if timers run on jiffies.
    pub fn wheel(&self) -> Option<&TimerWheel> {
        self.wheel.as_ref()
    }
    /// When a timer armed at `now` for `timeout` runs.
    pub fn fire_at(&self, now: Instant, timeout: Duration) -> Instant {
        match &self.wheel {
            Some(w) => w.fire_at(now, timeout),
            None => now + timeout,
        }
    }
    /// Arm `k` to run `timeout` after `now` (on the wheel's tick, if any).
    pub fn arm(&mut self, k: TimerKind, now: Instant, timeout: Duration) {
        let at = self.fire_at(now, timeout);
        self.set(k, at);
    }
    /// [`Self::arm`] unless `k` is already armed.
    pub fn arm_if_idle(&mut self, k: TimerKind, now: Instant, timeout: Duration) {
        if !self.is_armed(k) {
            self.arm(k, now, timeout);
        }
    }
    pub fn set(&mut self, k: TimerKind, at: Instant) {
        self.deadline[k as usize] = at;
        self.armed |= 1 << k as u8;
    }
    /// Arm only if not already armed (keeps the earlier deadline).
    pub fn set_if_idle(&mut self, k: TimerKind, at: Instant) {
        if !self.is_armed(k) {
            self.set(k, at);
        }
    }
    pub fn stop(&mut self, k: TimerKind) {
        self.deadline[k as usize] = Instant::MAX;
        self.armed &= !(1 << k as u8);
    }
    pub fn get(&self, k: TimerKind) -> Option<Instant> {
        self.is_armed(k).then_some(self.deadline[k as usize])
    }
    pub fn is_armed(&self, k: TimerKind) -> bool {
        self.armed & (1 << k as u8) != 0
    }
    pub fn stop_all(&mut self) {
        self.deadline = [Instant::MAX; TimerKind::COUNT];
        self.armed = 0;
    }
    /// Earliest deadline of all timers.
    pub fn next(&self) -> Option<Instant> {
        self.deadline
            .iter()
            .copied()
            .min()
            .filter(|_| self.armed != 0)
    }
    /// The first timer in `ORDER` that has expired at `now`; it is disarmed.
    pub fn pop_expired(&mut self, now: Instant) -> Option<TimerKind> {
        for k in TimerKind::ORDER {
            if self.is_armed(k) && self.deadline[k as usize] <= now {
                self.stop(k);
                return Some(k);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_order_and_next() {
        let mut t = Timers::default();
        t.set(TimerKind::TimeWait, Instant::from_millis(5));
        t.set(TimerKind::Rto, Instant::from_millis(7));
        t.set_if_idle(TimerKind::Rto, Instant::from_millis(1));
        assert_eq!(t.next(), Some(Instant::from_millis(5)));
        let now = Instant::from_millis(10);
        assert_eq!(t.pop_expired(now), Some(TimerKind::Rto));
        assert_eq!(t.pop_expired(now), Some(TimerKind::TimeWait));
        assert_eq!(t.pop_expired(now), None);
        assert_eq!(t.next(), None);
    }

    #[test]
    fn armed_for_the_end_of_time_is_armed() {
        let mut t = Timers::default();
        t.set(TimerKind::Persist, Instant::MAX);
        assert!(t.is_armed(TimerKind::Persist));
        assert_eq!(t.get(TimerKind::Persist), Some(Instant::MAX));
        assert_eq!(t.next(), Some(Instant::MAX));
        t.set_if_idle(TimerKind::Persist, Instant::from_millis(1));
        assert_eq!(t.get(TimerKind::Persist), Some(Instant::MAX));
        assert_eq!(t.pop_expired(Instant::from_millis(1)), None);
        t.set(TimerKind::Rto, Instant::from_millis(3));
        assert_eq!(t.next(), Some(Instant::from_millis(3)));
        t.stop(TimerKind::Rto);
        t.stop(TimerKind::Persist);
        assert_eq!((t.next(), t.get(TimerKind::Rto)), (None, None));
    }
}
