//! RACK: time-based loss detection (RFC 8985 §6; Linux `net/ipv4/tcp_recovery.c`), switched on
//! by `Mechanisms::rack` (scenario `tcp.mechanisms = ["rack"]`, on in the `linux` profile) and
//! active only when SACK is negotiated.
//!
//! State (RFC 8985 §6.1): `RACK.xmit_ts` / `RACK.end_seq` of the most recently *sent* segment
//! that has been delivered (cumulatively ACKed or SACKed), `RACK.rtt` (Linux `rack.rtt_us`: the
//! RTT measured from the last delivered segment's latest transmission), and whether
//! reordering has been seen (Linux `reord_seen`).
//!
//! Rule: a segment not yet delivered is lost if a segment sent after it has been delivered and
//! `now >= its send time + RACK.rtt + reo_wnd`. For a segment sent earlier but not yet past that
//! deadline, the reorder timer is armed for the remainder (RFC 8985 §6.2 step 5; Linux adds
//! two jiffies of slack to this timer, we arm it at the exact remainder).
//!
//! `reo_wnd` (Linux `tcp_rack_reo_wnd`): min_RTT/4, at most SRTT; 0 while no reordering has
//! been seen and either the sender is already in recovery or at least `dupthresh` (3) segments
//! are SACKed — this is how RACK subsumes the dupthresh rule. With D-SACK on, the window is
//! `steps × min_RTT/4` (Linux `reo_wnd_steps`, grown by D-SACKs: `recovery::dsack`).
//!
//! Updating (Linux `tcp_rack_advance`): a delivered segment that was retransmitted is skipped
//! when its RTT from the latest transmission is below min_RTT (the delivery may be the
//! original's) or when timestamps show the ACK echoes an earlier transmission.
//!
//! A lost retransmission is detected the same way (its latest transmission time is older than
//! RACK's segment), so it is retransmitted again without waiting for the RTO.

use crate::send_queue::SendQueue;
use crate::time::Instant;
use std::time::Duration;

/// RACK's per-connection state.
#[derive(Clone, Debug, Default)]
pub struct RackState {
    /// Transmission time of the most recently sent delivered segment.
    pub xmit_ts: Option<Instant>,
    /// Its end (sequence space).
    pub end_seq: u64,
    /// RTT of the most recently delivered segment.
    pub rtt: Duration,
    /// RACK advanced on the current ACK (Linux `rack.advanced`).
    pub advanced: bool,
    /// A never-retransmitted segment was delivered below the highest SACKed one.
    pub reord_seen: bool,
    /// Highest end of a SACKed segment so far (Linux `fack`-like).
    pub fack: u64,
}

/// RFC 8985 `RACK_sent_after`: (t1, seq1) was sent after (t2, seq2).
pub fn sent_after(t1: Instant, seq1: u64, t2: Instant, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl RackState {
    /// One segment was delivered (newly ACKed or SACKed) at `now`; it was last sent at `xmit`
    /// and ends at `end_seq`. `retransmitted`: it was ever retransmitted; `ts_says_earlier`:
    /// timestamps show the ACK echoes a transmission before the latest one.
    pub fn on_delivered(
        &mut self,
        now: Instant,
        xmit: Instant,
        end_seq: u64,
        retransmitted: bool,
        ts_says_earlier: bool,
        min_rtt: Option<Duration>,
    ) {
        let rtt = now.saturating_duration_since(xmit);
        if retransmitted && (ts_says_earlier || min_rtt.is_some_and(|m| rtt < m)) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        let newer = self
            .xmit_ts
            .is_none_or(|t| sent_after(xmit, end_seq, t, self.end_seq));
        if newer {
            self.xmit_ts = Some(xmit);
            self.end_seq = end_seq;
        }
    }
}

/// The inputs of the reordering window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReoInput {
    pub min_rtt: Option<Duration>,
    pub srtt: Option<Duration>,
    pub reord_seen: bool,
    /// In fast recovery or after an RTO.
    pub in_recovery: bool,
    pub sacked_out: u32,
    /// Linux `tp->reordering` (3).
    pub dupthresh: u32,
    /// Multiples of min_RTT/4 (D-SACK-driven, [`crate::recovery::dsack::ReoWindow`]).
    pub steps: u8,
}

/// Linux `tcp_rack_reo_wnd`: min_RTT/4 bounded by SRTT; 0 when no reordering was seen and the
/// sender is in recovery or `dupthresh` segments are SACKed.
pub fn reo_wnd(i: &ReoInput) -> Duration {
    if !i.reord_seen && (i.in_recovery || i.sacked_out >= i.dupthresh) {
        return Duration::ZERO;
    }
    let quarter =
        i.min_rtt.or(i.srtt).map_or(Duration::ZERO, |m| m / 4) * u32::from(i.steps.max(1));
    i.srtt.map_or(quarter, |s| quarter.min(s))
}

/// Time left before a segment sent at `sent` counts as lost: `sent + rtt + reo_wnd - now`, or
/// `None` if it is lost now.
pub fn remaining(
    now: Instant,
    sent: Instant,
    rtt: Duration,
    reo_wnd: Duration,
) -> Option<Duration> {
    let deadline = sent + rtt + reo_wnd;
    (deadline > now).then(|| deadline - now)
}

/// RFC 8985 §6.2: a segment sent at `sent` is lost at `now` given RACK's state.
pub fn is_lost(now: Instant, sent: Instant, rtt: Duration, reo_wnd: Duration) -> bool {
    remaining(now, sent, rtt, reo_wnd).is_none()
}

/// RFC 8985 `RACK_detect_loss`: mark lost every undelivered segment sent before RACK's
/// segment whose deadline has passed; for a lost segment whose retransmission was sent before
/// RACK's segment, the retransmission is deemed lost and the segment may go again (Linux's
/// walk of the `tsorted` list includes SACKED_RETRANS segments). Segments marked lost and not
/// yet retransmitted are skipped. Returns the
/// number newly marked and the longest remaining wait of the others (for the reorder timer).
pub fn detect_loss(
    q: &mut SendQueue,
    r: &RackState,
    now: Instant,
    reo_wnd: Duration,
) -> (u32, Option<Duration>) {
    let Some(rack_ts) = r.xmit_ts else {
        return (0, None);
    };
    let mut newly = 0;
    let mut wait: Option<Duration> = None;
    let mut i = 0;
    while let Some(s) = q.get(i) {
        if s.sacked {
            // delivered: jump over the whole SACKed run (if a segment in it was first sent
            // after RACK's, so is the next un-SACKed one, and the walk stops there instead)
            i = q
                .index_from(q.sacked_run_end(s.start).unwrap_or(s.seq_end()))
                .max(i + 1);
            continue;
        }
        // The queue is in sequence order and first transmissions go out in sequence order, so
        // once a segment was *first* sent after RACK's segment, every later one was too (and
        // a retransmission is later still): nothing beyond can be lost by RACK's rule. This
        // bounds the walk by the segments sent before RACK's one, as Linux's walk of its
        // send-time-sorted list is, instead of the whole queue on every ACK.
        if sent_after(s.first_sent, s.seq_end(), rack_ts, r.end_seq) {
            break;
        }
        // skip lost segments whose retransmission has not been sent yet, and those sent after
        // RACK's segment
        if (s.lost && !s.retrans) || !sent_after(rack_ts, r.end_seq, s.last_sent, s.seq_end()) {
            i += 1;
            continue;
        }
        match remaining(now, s.last_sent, r.rtt, reo_wnd) {
            None => {
                if s.lost {
                    // its retransmission is lost too: send it again
                    q.set_retrans_lost(i);
                } else {
                    q.set_lost(i);
                }
                newly += 1;
            }
            Some(d) => wait = Some(wait.map_or(d, |w| w.max(d))),
        }
        i += 1;
    }
    (newly, wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }
    fn at(x: u64) -> Instant {
        Instant::from_millis(x)
    }

    #[test]
    fn window() {
        let i = ReoInput {
            min_rtt: Some(ms(100)),
            srtt: Some(ms(120)),
            reord_seen: false,
            in_recovery: false,
            sacked_out: 1,
            dupthresh: 3,
            steps: 1,
        };
        assert_eq!(
            reo_wnd(&ReoInput {
                steps: 3,
                srtt: Some(ms(200)),
                ..i
            }),
            ms(75)
        );
        assert_eq!(reo_wnd(&i), ms(25));
        assert_eq!(
            reo_wnd(&ReoInput {
                srtt: Some(ms(10)),
                ..i
            }),
            ms(10)
        );
        assert_eq!(reo_wnd(&ReoInput { sacked_out: 3, ..i }), ms(0));
        assert_eq!(
            reo_wnd(&ReoInput {
                in_recovery: true,
                ..i
            }),
            ms(0)
        );
        assert_eq!(
            reo_wnd(&ReoInput {
                sacked_out: 3,
                reord_seen: true,
                ..i
            }),
            ms(25)
        );
    }

    #[test]
    fn loss_rule_and_detection() {
        assert!(!is_lost(at(1124), at(1000), ms(100), ms(25)));
        assert!(is_lost(at(1125), at(1000), ms(100), ms(25)));
        let mut q = SendQueue::new(10_000);
        q.write(&[0u8; 300]);
        for t in [1000, 1010, 1020] {
            q.push_new(at(t), 100, false);
        }
        q.set_sacked(2);
        let mut r = RackState::default();
        r.on_delivered(at(1120), at(1020), 300, false, false, Some(ms(100)));
        assert_eq!(
            (r.xmit_ts, r.end_seq, r.rtt),
            (Some(at(1020)), 300, ms(100))
        );
        // older delivery does not move RACK's segment but updates its RTT
        r.on_delivered(at(1121), at(1000), 100, false, false, Some(ms(100)));
        assert_eq!((r.xmit_ts, r.rtt), (Some(at(1020)), ms(121)));
        r.rtt = ms(100);
        assert_eq!(detect_loss(&mut q, &r, at(1120), ms(25)), (0, Some(ms(15))));
        assert_eq!(detect_loss(&mut q, &r, at(1125), ms(25)), (1, Some(ms(10))));
        assert_eq!(detect_loss(&mut q, &r, at(1135), ms(25)), (1, None));
        assert_eq!(q.lost_out(), 2);
        // retransmissions of both; a later-sent segment delivered after them finds them lost
        // only once their own windows have passed
        q.on_retransmit(0, at(1140));
        q.on_retransmit(1, at(1150));
        assert_eq!(q.retrans_out(), 2);
        let r3 = RackState {
            xmit_ts: Some(at(1160)),
            end_seq: 400,
            rtt: ms(100),
            ..RackState::default()
        };
        assert_eq!(detect_loss(&mut q, &r3, at(1270), ms(25)), (1, Some(ms(5))));
        assert_eq!((q.retrans_out(), q.first_to_retransmit()), (1, Some(0)));
        // a retransmission delivered sooner than min_RTT is ambiguous and skipped
        let mut r2 = RackState::default();
        r2.on_delivered(at(1050), at(1000), 100, true, false, Some(ms(100)));
        assert!(r2.xmit_ts.is_none() && !r2.advanced);
    }
}
