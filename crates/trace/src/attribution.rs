//! Why a captured segment was retransmitted, judged from its timing against the ACK stream
//! seen at the sender, into the causes the simulator reports (dupACK fast retransmit, RACK,
//! Early Retransmit, tail loss probe, RTO), each with a confidence.
//!
//! Timers follow RFC 6298 (Paxson, Allman, Chu, Sargent, "Computing TCP's Retransmission
//! Timer": the RTO is at least SRTT + 4·RTTVAR and, on Linux, at least SRTT + 200 ms), RFC 8985
//! (Cheng, Cardwell, Dukkipati, Jha, "The RACK-TLP Loss Detection Algorithm for TCP": the
//! probe timeout is about 2·SRTT after the last transmission and probes the highest segment;
//! RACK waits a reordering window of min_RTT/4 after the ACK that revealed the loss) and RFC
//! 5827 (Allman et al., "Early Retransmit for TCP and SCTP": fewer than three duplicate ACKs).
//!
//! The rules, in order, for a segment carrying no new byte sent at `t`:
//! 1. **ACK-clocked** (at most [`ACK_CLOCKED_WINDOW_NS`] after the last incoming ACK): after an
//!    ACK that advanced the cumulative point (recovery) or after ≥ 3 duplicate ACKs: `fast`
//!    (high); after 1–2 duplicate ACKs: `rack` when the ACK carried SACK blocks (RACK marks a
//!    segment lost at once when it was sent a reordering window before the SACKed one, as in
//!    a thin stream), `early` without (Early Retransmit, thin dupACK), both medium; after
//!    another ACK: `fast` (low).
//! 2. **RACK reorder timer**: the last ACK was a duplicate (or carried SACK blocks), nothing was
//!    retransmitted since, and `t` is within min_RTT/4 + [`TIMER_SLACK_NS`] of it and under one
//!    SRTT: `rack` (medium).
//! 3. **Tail loss probe**: the first timer-driven retransmission since the cumulative ACK last
//!    advanced, either well before any RTO could fire (less than 3/4 of SRTT + 200 ms after
//!    the RTO timer was last started: the later of the last advancing ACK and the first
//!    transmission of the oldest unacknowledged segment; medium) or of the highest segment
//!    while more are outstanding (RTO retransmits the first; medium): `tlp`. A sender whose
//!    RTO is shorter than SRTT + 150 ms (a lowered minimum RTO) has its timeouts counted here.
//! 4. Otherwise `rto`: high when it repeats an earlier timeout of the same episode after a
//!    backed-off interval, medium for a first timeout of several segments outstanding, low for a
//!    first timeout of a single outstanding segment (a Linux probe capped at the RTO fires at
//!    the same moment).
//!
//! A capture taken away from the sender sees ACKs and retransmissions shifted; use the
//! sender-side capture.

use serde::Serialize;
use std::collections::VecDeque;
use thinlab_tcp::event::SendKind;

/// A retransmission leaving at most this long after an incoming ACK is ACK-clocked.
pub const ACK_CLOCKED_WINDOW_NS: u64 = 1_000_000;
/// Timer granularity and scheduling slack allowed on top of a computed timer, ns.
pub const TIMER_SLACK_NS: u64 = 20_000_000;
/// The smallest RTO Linux uses on top of SRTT (`TCP_RTO_MIN`), ns.
pub const LINUX_RTO_MIN_NS: f64 = 200_000_000.0;

/// How sure a classification is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confidence {
    High,
    Medium,
    Low,
}

/// Retransmissions classified with each confidence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConfidenceCounts {
    pub high: u64,
    pub medium: u64,
    pub low: u64,
}

impl ConfidenceCounts {
    fn add(&mut self, c: Confidence) {
        match c {
            Confidence::High => self.high += 1,
            Confidence::Medium => self.medium += 1,
            Confidence::Low => self.low += 1,
        }
    }
}

/// The sender's view of the ACK stream, for [`Attributor::classify`].
#[derive(Clone, Debug, Default)]
pub struct Attributor {
    last_ack_at: Option<u64>,
    last_ack_advanced: bool,
    last_ack_dup_or_sack: bool,
    last_ack_sack: bool,
    /// The last ACK that advanced the cumulative point.
    last_advance_at: Option<u64>,
    dupacks_since_advance: u32,
    last_data_at: Option<u64>,
    /// Timer-driven retransmissions since the cumulative ACK last advanced, and the time of
    /// the last one.
    episode_timeouts: u32,
    episode_last_at: Option<u64>,
    episode_last_interval: Option<u64>,
    retransmitted_since_ack: bool,
    /// (segment end, first transmission, retransmitted): RTT samples (Karn's rule).
    unacked: VecDeque<(u64, u64, bool)>,
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    min_rtt_ns: Option<u64>,
    pub counts: ConfidenceCounts,
}

impl Attributor {
    /// An ACK arrived at `t`: it advanced the cumulative point to `una` or not, was a duplicate
    /// ACK, or carried SACK blocks.
    pub fn ack(&mut self, t: u64, una: u64, advanced: bool, dup: bool, sack: bool) {
        self.last_ack_at = Some(t);
        self.last_ack_advanced = advanced;
        self.last_ack_dup_or_sack = dup || (sack && !advanced);
        self.last_ack_sack = sack;
        self.retransmitted_since_ack = false;
        if advanced {
            self.last_advance_at = Some(t);
            self.dupacks_since_advance = 0;
            self.episode_timeouts = 0;
            self.episode_last_at = None;
            self.episode_last_interval = None;
            let mut sample = None;
            while self.unacked.front().is_some_and(|&(e, _, _)| e <= una) {
                let (_, sent, rexmit) = self.unacked.pop_front().unwrap();
                sample = (!rexmit).then(|| t.saturating_sub(sent));
            }
            if let Some(r) = sample {
                self.rtt_sample(r);
            }
        } else if dup {
            self.dupacks_since_advance += 1;
        }
    }

    fn rtt_sample(&mut self, r: u64) {
        let r = r as f64;
        self.min_rtt_ns = Some(self.min_rtt_ns.map_or(r as u64, |m| m.min(r as u64)));
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(r);
                self.rttvar_ns = r / 2.0;
            }
            Some(s) => {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (s - r).abs();
                self.srtt_ns = Some(0.875 * s + 0.125 * r);
            }
        }
    }

    /// New data `[.., end)` left at `t`.
    pub fn new_data(&mut self, t: u64, end: u64) {
        self.last_data_at = Some(t);
        self.unacked.push_back((end, t, false));
    }

    /// A retransmission `[start, end)` left at `t`, with `una` the first unacknowledged byte
    /// and `highest` the end of the data sent before: its cause and how sure that is.
    pub fn classify(
        &mut self,
        t: u64,
        start: u64,
        end: u64,
        una: u64,
        highest: u64,
    ) -> (SendKind, Confidence) {
        for u in self
            .unacked
            .iter_mut()
            .filter(|u| u.0 > start && u.0 <= end)
        {
            u.2 = true;
        }
        let since_data = self.last_data_at.map(|d| t.saturating_sub(d));
        self.last_data_at = Some(t);
        // When the RTO timer was last (re)started.
        let rto_start = match (self.last_advance_at, self.unacked.front()) {
            (Some(a), Some(&(_, tx, _))) => Some(a.max(tx)),
            (a, u) => a.or(u.map(|u| u.1)),
        };
        let since_rto_start = rto_start.map(|r| t.saturating_sub(r));
        let ack_clocked = self
            .last_ack_at
            .is_some_and(|a| t.saturating_sub(a) <= ACK_CLOCKED_WINDOW_NS);
        let retransmitted_before = std::mem::replace(&mut self.retransmitted_since_ack, true);
        let (kind, conf) = if ack_clocked {
            if self.last_ack_advanced || self.dupacks_since_advance >= 3 {
                (SendKind::FastRetransmit, Confidence::High)
            } else if self.dupacks_since_advance > 0 && self.last_ack_sack {
                (SendKind::RackRetransmit, Confidence::Medium)
            } else if self.dupacks_since_advance > 0 {
                (SendKind::Early, Confidence::Medium)
            } else {
                (SendKind::FastRetransmit, Confidence::Low)
            }
        } else {
            self.timer_driven(
                t,
                start,
                end,
                una,
                highest,
                since_data,
                since_rto_start,
                retransmitted_before,
            )
        };
        self.counts.add(conf);
        (kind, conf)
    }

    #[allow(clippy::too_many_arguments)]
    fn timer_driven(
        &mut self,
        t: u64,
        start: u64,
        end: u64,
        una: u64,
        highest: u64,
        since_data: Option<u64>,
        since_rto_start: Option<u64>,
        retransmitted_before: bool,
    ) -> (SendKind, Confidence) {
        let since_ack = self.last_ack_at.map(|a| t.saturating_sub(a));
        let srtt = self.srtt_ns;
        if let (Some(gap), Some(min_rtt), Some(s)) = (since_ack, self.min_rtt_ns, srtt) {
            if self.last_ack_dup_or_sack
                && !retransmitted_before
                && gap <= min_rtt / 4 + TIMER_SLACK_NS
                && (gap as f64) < s
            {
                return (SendKind::RackRetransmit, Confidence::Medium);
            }
        }
        let first = self.episode_timeouts == 0;
        let interval = self.episode_last_at.map(|l| t.saturating_sub(l));
        self.episode_timeouts += 1;
        self.episode_last_at = Some(t);
        let backed_off = match (interval, self.episode_last_interval) {
            (Some(i), Some(p)) => i as f64 >= 1.5 * p as f64,
            _ => false,
        };
        if interval.is_some() {
            self.episode_last_interval = interval;
        } else {
            self.episode_last_interval = since_data;
        }
        if first {
            let early = match (since_rto_start, srtt) {
                (Some(d), Some(s)) => (d as f64) < 0.75 * (s + LINUX_RTO_MIN_NS),
                _ => false,
            };
            if early {
                return (SendKind::Tlp, Confidence::Medium);
            }
            if end >= highest && start > una {
                return (SendKind::Tlp, Confidence::Medium);
            }
            let single = start <= una && end >= highest;
            return (
                SendKind::Rto,
                if single {
                    Confidence::Low
                } else {
                    Confidence::Medium
                },
            );
        }
        (
            SendKind::Rto,
            if backed_off {
                Confidence::High
            } else {
                Confidence::Medium
            },
        )
    }
}
