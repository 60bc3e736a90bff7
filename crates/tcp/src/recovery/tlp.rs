//! Tail Loss Probe (RFC 8985 §7; Linux `tcp_schedule_loss_probe`, `tcp_send_loss_probe`),
//! switched on by `Mechanisms::tlp` (scenario `tcp.mechanisms = ["tlp"]`, on in the `linux`
//! profile).
//!
//! Arming (Linux `tcp_schedule_loss_probe`): SACK negotiated, data outstanding, the sender in
//! the Open state (not in fast recovery nor after an RTO), and no probe of this episode
//! outstanding. The probe timeout is
//!
//! - `2·SRTT + WCDelAckT` with exactly one segment outstanding: the receiver may be holding its
//!   ACK for the delayed-ACK timer; RFC 8985 §7.2 fixes the worst-case delayed-ACK time at
//!   200 ms and Linux adds the constant `TCP_RTO_MIN` (200 ms, = `TCP_DELACK_MAX`), not the
//!   profile's configurable `rto_min`, so a lowered `rto_min` does not shorten the allowance,
//! - `2·SRTT + 2 ms` (Linux `TCP_TIMEOUT_MIN`, 2 jiffies) with more than one,
//! - 1 s (Linux `TCP_TIMEOUT_INIT`) without an RTT sample,
//!
//! and never later than the RTO deadline. The timer is (re)armed from `now` on every new-data
//! transmission and on every ACK of new data, as Linux does.
//!
//! On expiry one probe goes out: a new segment if the peer's window allows one (regardless of
//! cwnd, Linux `tcp_write_xmit(.., push_one = 2)`), else a retransmission of the highest sent
//! segment (`SendKind::Tlp`). `TLP.end_seq` (Linux `tlp_high_seq`) is then snd_nxt, and no
//! further probe is sent until the cumulative ACK reaches it (one probe per tail episode).
//!
//! Invariant: the probe deadline is at most the RTO deadline; if both expire at the same
//! instant the probe goes first (Linux's single transmit timer serves the probe). Once a probe
//! is sent the RTO restarts from it (`tcp_send_loss_probe` clears the pending probe timer, so
//! `tcp_rearm_rto` arms a full RTO).
//!
//! Not implemented: TLP loss detection (RFC 8985 §7.4), which needs D-SACK to tell whether
//! the probe repaired a loss; a probe that repairs a loss therefore does not reduce cwnd.

use crate::time::Instant;
use std::time::Duration;

/// Added to 2·SRTT when exactly one segment is outstanding: RFC 8985 WCDelAckT, Linux's
/// constant `TCP_RTO_MIN` / `TCP_DELACK_MAX`.
pub const WC_DEL_ACK_T: Duration = Duration::from_millis(200);
/// Added to 2·SRTT when more than one segment is outstanding (Linux `TCP_TIMEOUT_MIN`).
pub const PTO_MIN_EXTRA: Duration = Duration::from_millis(2);
/// The probe timeout before any RTT sample (Linux `TCP_TIMEOUT_INIT`, RFC 8985 §7.2).
pub const PTO_NO_SAMPLE: Duration = Duration::from_secs(1);

/// Whether a probe may be scheduled (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`).
pub fn may_arm(sack: bool, packets_out: u32, open: bool, probe_outstanding: bool) -> bool {
    sack && packets_out > 0 && open && !probe_outstanding
}

/// The probe timeout as a duration from the moment of arming.
pub fn pto_duration(srtt: Option<Duration>, packets_out: u32) -> Duration {
    match srtt {
        None => PTO_NO_SAMPLE,
        Some(s) if packets_out == 1 => 2 * s + WC_DEL_ACK_T,
        Some(s) => 2 * s + PTO_MIN_EXTRA,
    }
}

/// The probe timeout on a jiffy clock (Linux `tcp_schedule_loss_probe`): 2·SRTT rounded up
/// to whole jiffies, plus `TCP_RTO_MIN` with one segment outstanding, else 2 jiffies
/// (`TCP_TIMEOUT_MIN`).
pub fn pto_jiffies(
    w: &crate::timer_wheel::TimerWheel,
    srtt: Option<Duration>,
    packets_out: u32,
) -> Duration {
    match srtt {
        None => PTO_NO_SAMPLE,
        Some(s) if packets_out == 1 => w.round_up(2 * s) + WC_DEL_ACK_T,
        Some(s) => w.round_up(2 * s) + 2 * w.jiffy(),
    }
}

/// The probe deadline: `now + pto_duration(..)`, capped by the RTO deadline if one is armed.
pub fn pto(
    now: Instant,
    srtt: Option<Duration>,
    packets_out: u32,
    rto_deadline: Option<Instant>,
) -> Instant {
    let at = now + pto_duration(srtt, packets_out);
    match rto_deadline {
        Some(r) if r < at => r.max(now),
        _ => at,
    }
}

/// What the probe is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// One new segment (unsent data and room in the peer's window).
    New,
    /// A retransmission of the highest sent segment.
    RetransmitHighest,
}

/// RFC 8985 §7.3: new data if possible, else the highest sent segment.
pub fn choose(unsent: u64, peer_window_room: u64) -> Probe {
    if unsent > 0 && peer_window_room > 0 {
        Probe::New
    } else {
        Probe::RetransmitHighest
    }
}

/// Whether the episode's probe is acknowledged (Linux `tcp_process_tlp_ack`: the cumulative
/// ACK is at or beyond `tlp_high_seq`), so that a new probe may be armed.
pub fn episode_over(una_seq: u64, tlp_high_seq: u64) -> bool {
    una_seq >= tlp_high_seq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn pto_formula() {
        assert_eq!(pto_duration(Some(ms(100)), 1), ms(400));
        assert_eq!(
            pto_duration(Some(ms(30)), 1),
            ms(260),
            "WCDelAckT is 200 ms whatever the RTT"
        );
        assert_eq!(pto_duration(Some(ms(100)), 2), ms(202));
        assert_eq!(pto_duration(None, 3), ms(1000));
        let now = Instant::from_millis(1000);
        assert_eq!(pto(now, Some(ms(100)), 2, None), Instant::from_millis(1202));
        assert_eq!(
            pto(now, Some(ms(100)), 1, Some(Instant::from_millis(1300))),
            Instant::from_millis(1300)
        );
        assert_eq!(
            pto(now, Some(ms(100)), 2, Some(Instant::from_millis(1300))),
            Instant::from_millis(1202)
        );
        assert_eq!(
            pto(now, Some(ms(100)), 2, Some(Instant::from_millis(900))),
            now
        );
    }

    #[test]
    fn arming_and_choice() {
        assert!(may_arm(true, 1, true, false));
        assert!(!may_arm(false, 1, true, false));
        assert!(!may_arm(true, 0, true, false));
        assert!(!may_arm(true, 1, false, false));
        assert!(!may_arm(true, 1, true, true));
        assert_eq!(choose(10, 100), Probe::New);
        assert_eq!(choose(0, 100), Probe::RetransmitHighest);
        assert_eq!(choose(10, 0), Probe::RetransmitHighest);
        assert!(episode_over(10, 10) && !episode_over(9, 10));
    }
}
