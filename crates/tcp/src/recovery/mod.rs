//! Loss detection and recovery: fast retransmit / fast recovery with NewReno partial ACKs
//! (RFC 6582) when SACK is not negotiated, SACK-based recovery (RFC 6675: scoreboard, pipe,
//! NextSeg) when it is, Limited Transmit (RFC 3042), and the RTO "Loss" state (RFC 6298 §5,
//! Linux go-back-N). Decisions live in the sub-modules as pure functions:
//! [`dupack`] (what is a duplicate ACK, dupthresh), [`sack`] (scoreboard, IsLost),
//! [`newreno`] (partial ACKs), [`rto`] (Karn's rule, timer rules).
//!
//! Packets in flight are counted Linux-style in segments:
//! `packets_out - (sacked_out + lost_out) + retrans_out`, where without SACK "sacked" is the
//! number of duplicate ACKs received in the episode.
//!
//! Thin-stream additions: [`thin_dupack`] and [`early_retransmit`] lower `dupack::dupthresh`;
//! [`er_threshold`] (Yin et al.'s F-RTO threshold) starts an episode early; the endpoint marks such
//! episodes with `next_episode_early` so that their retransmission is `SendKind::Early`
//! (`EarlyThreshold` for the F-RTO threshold); with RACK active, fast retransmissions are
//! `SendKind::RackRetransmit`.
//!
//! Extension points: `dupack::dupthresh` (thin dupACK, Early Retransmit), `Phase` (a TLP probe
//! state later), `Recovery::on_rto` (linear timeouts decide the backoff in the endpoint).

pub mod dsack;
pub mod dupack;
pub mod early_retransmit;
pub mod er_threshold;
pub mod manager;
pub mod newreno;
pub mod prr;
pub mod rack;
pub mod rto;
pub mod sack;
pub mod thin_dupack;
pub mod tlp;
pub mod undo;

use crate::cc::{Cc, CongestionControl, CongestionEvent};
use crate::config::{CwndReduction, ReductionBase, TcpConfig};
use crate::event::SendKind;
use crate::send_queue::SendQueue;
use crate::time::Instant;
use prr::{Prr, PrrAck};
use undo::Undo;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Normal operation (Linux Open/Disorder).
    Open,
    /// Fast recovery after dupACK/SACK loss detection.
    Recovery,
    /// After a retransmission timeout, until the data outstanding at the timeout is acked.
    Loss,
}

/// What changed on an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    None,
    EnteredRecovery,
    PartialAck,
    ExitedRecovery,
    ExitedLoss,
}

/// The facts of one ACK after the scoreboard has been updated.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: Instant,
    /// Segments removed by the cumulative ACK.
    pub acked_segments: u32,
    /// snd_una advanced.
    pub acked_new: bool,
    pub dupack: bool,
    /// Sequence-space snd_una / snd_nxt after the ACK.
    pub una_seq: u64,
    pub nxt_seq: u64,
    pub dupthresh: u32,
}

#[derive(Clone, Debug)]
pub struct Recovery {
    pub phase: Phase,
    /// RFC 6582 `recover` (Linux high_seq): sequence-space snd_nxt when the episode began.
    pub recover: Option<u64>,
    /// Duplicate ACKs since snd_una last advanced.
    pub dupacks: u32,
    /// Without SACK: duplicate ACKs standing for segments that left the network.
    pub reno_sacked: u32,
    /// The next retransmission goes out regardless of cwnd (first one of an episode).
    pub force_retransmit: bool,
    pub sack: bool,
    pub limited_transmit: bool,
    /// Reno's or NewReno's end of a fast-recovery episode.
    pub exit_rule: newreno::FastRecoveryExit,
    /// Set by the endpoint before each ACK: an episode entered on this ACK was started by
    /// Early Retransmit (`SendKind::Early`) or the F-RTO threshold (`EarlyThreshold`), not by
    /// dupthresh/thin dupACK.
    pub next_episode_early: Option<SendKind>,
    /// The kind of the current episode's first retransmission, if it is an early one.
    early_first: Option<SendKind>,
    /// RACK decides losses on this connection (its fast retransmissions are RACK's).
    pub rack: bool,
    /// What a congestion event's multiplicative decrease applies to.
    pub reduction_base: ReductionBase,
    /// How the window comes down during fast recovery.
    pub cwnd_reduction: CwndReduction,
    /// PRR's state while a fast-recovery episode runs with `CwndReduction::Prr`.
    prr: Option<Prr>,
    /// Episodes may be undone (`TcpConfig::dsack`).
    undo_enabled: bool,
    /// What an undo of the last fast-recovery episode restores; kept after the episode ends
    /// (a late D-SACK may still undo it, Linux keeps `undo_marker`) until the next episode,
    /// an RTO or the undo.
    pub undo: Option<Undo>,
}

impl Recovery {
    pub fn new(cfg: &TcpConfig) -> Self {
        let limited_transmit = cfg.limited_transmit;
        Recovery {
            phase: Phase::Open,
            recover: None,
            dupacks: 0,
            reno_sacked: 0,
            force_retransmit: false,
            sack: false,
            limited_transmit,
            exit_rule: newreno::FastRecoveryExit::for_config(cfg),
            next_episode_early: None,
            early_first: None,
            rack: false,
            reduction_base: cfg.reduction_base,
            cwnd_reduction: cfg.cwnd_reduction,
            prr: None,
            undo_enabled: cfg.dsack,
            undo: None,
        }
    }

    /// A retransmission was sent at `now` (undo accounting of the episode).
    pub fn on_retransmit(&mut self, now: Instant) {
        if let (Phase::Recovery, Some(u)) = (self.phase, &mut self.undo) {
            u.on_retransmit(now);
        }
    }

    /// Undo the last fast-recovery episode: restore the window it replaced and, if it is still
    /// running, return to Open (Linux `tcp_undo_cwnd_reduction` then `tcp_try_to_open`).
    pub fn undo_recovery(&mut self, cc: &mut Cc) {
        if let Some(u) = self.undo.take() {
            if self.phase == Phase::Recovery {
                self.exit();
            }
            cc.undo(u.prior_cwnd, u.prior_ssthresh);
        }
    }

    /// The congestion window in force: PRR's during a PRR episode, the controller's otherwise.
    pub fn cwnd(&self, cc: &Cc) -> u32 {
        match (&self.prr, self.phase) {
            (Some(p), Phase::Recovery) => p.cwnd,
            _ => cc.cwnd(),
        }
    }

    /// A data segment was sent (PRR's `prr_out`).
    pub fn on_transmit(&mut self) {
        if let Some(p) = &mut self.prr {
            p.on_sent();
        }
    }

    /// PRR's window update for one ACK (or a reorder-timer expiry, which Linux counts as one
    /// delivered segment); no-op outside a PRR episode.
    pub fn prr_on_ack(
        &mut self,
        q: &SendQueue,
        cc: &Cc,
        delivered: u32,
        newly_lost: u32,
        una_advanced: bool,
    ) {
        if self.phase != Phase::Recovery {
            return;
        }
        let pipe = self.pipe(q);
        if let Some(p) = &mut self.prr {
            p.on_ack(&PrrAck {
                delivered,
                newly_lost,
                una_advanced,
                pipe,
                ssthresh: cc.ssthresh(),
            });
        }
    }

    /// The window a congestion event reduces: cwnd, or the RFC 5681 FlightSize `flight`.
    pub fn reduction_base(&self, cc: &Cc, flight: u32) -> u32 {
        match self.reduction_base {
            ReductionBase::Cwnd => cc.cwnd(),
            ReductionBase::FlightSize => flight,
        }
    }

    /// Segments that have left the network according to the scoreboard.
    pub fn left(&self, q: &SendQueue) -> u32 {
        if self.sack {
            q.sacked_out()
        } else {
            self.reno_sacked
        }
    }

    /// RFC 6675 pipe / Linux `tcp_packets_in_flight`.
    pub fn pipe(&self, q: &SendQueue) -> u32 {
        (q.packets_out() + q.retrans_out()).saturating_sub(self.left(q) + q.lost_out())
    }

    /// Segments counted against cwnd when deciding whether one more may be sent.
    pub fn cwnd_usage(&self, q: &SendQueue) -> u32 {
        match self.phase {
            Phase::Open => {
                // RFC 3042: the first two duplicate ACKs each allow one new segment.
                let lt = if self.limited_transmit {
                    self.dupacks.min(2)
                } else {
                    0
                };
                q.packets_out().saturating_sub(lt)
            }
            Phase::Recovery | Phase::Loss => self.pipe(q),
        }
    }

    /// Kind of a retransmission of a lost segment in the current phase (called once per
    /// retransmission sent: the first one of an early episode is `Early`).
    pub fn retransmit_kind(&mut self) -> SendKind {
        match self.phase {
            Phase::Loss => SendKind::Rto,
            _ => match self.early_first.take() {
                Some(k) => k,
                None if self.rack => SendKind::RackRetransmit,
                None => SendKind::FastRetransmit,
            },
        }
    }

    /// Whether the scoreboard says it is time to start fast retransmit (RFC 5681 §3.2 /
    /// RFC 6675 §5: dupthresh dupACKs, or dupthresh SACKed segments above snd_una), and the
    /// RFC 6582 §3.2 rule allows it: snd_una at or beyond the previous episode's `recover`
    /// (stale duplicate ACKs from below `recover` must not start a second episode; `>=`
    /// rather than the RFC's `>` keeps a loss of the first segment after an episode
    /// recoverable without the RFC's ACK heuristic, as Linux does).
    fn time_to_recover(&self, q: &SendQueue, ev: &AckEvent) -> bool {
        if q.is_empty() {
            return false;
        }
        let by_dup = self.dupacks >= ev.dupthresh;
        let by_sack = self.sack && q.sacked_out() >= ev.dupthresh;
        let after_previous = self.recover.is_none_or_le(ev.una_seq);
        (by_dup || by_sack) && after_previous
    }

    /// Update the recovery state for one ACK (cumulative part and SACK blocks already applied
    /// to `q`).
    pub fn on_ack(&mut self, q: &mut SendQueue, cc: &mut Cc, ev: &AckEvent) -> Transition {
        if ev.acked_new {
            self.dupacks = 0;
            self.reno_sacked = newreno::reno_sacked_after_ack(self.reno_sacked, ev.acked_segments);
        } else if ev.dupack {
            self.dupacks += 1;
            if !self.sack {
                self.reno_sacked =
                    newreno::reno_sacked_after_dupack(self.reno_sacked, q.packets_out());
            }
        }
        if q.is_empty() {
            self.reno_sacked = 0;
        }
        match self.phase {
            Phase::Open => {
                if self.time_to_recover(q, ev) {
                    let early = std::mem::take(&mut self.next_episode_early);
                    self.enter_recovery(q, cc, ev.now, ev.nxt_seq, ev.dupthresh, early);
                    return Transition::EnteredRecovery;
                }
                if !self.sack && ev.acked_new {
                    self.reno_sacked = 0;
                }
                Transition::None
            }
            Phase::Recovery => {
                let recover = self.recover.unwrap_or(0);
                // NewReno ends the episode at `recover`; Reno on the first new ACK
                if ev.acked_new && self.exit_rule.ends_episode(ev.una_seq, recover) {
                    self.exit();
                    cc.on_exit_recovery(ev.now);
                    return Transition::ExitedRecovery;
                }
                let mut t = Transition::None;
                if ev.acked_new && newreno::on_partial_ack(q, recover) {
                    self.force_retransmit = true;
                    t = Transition::PartialAck;
                }
                if self.sack {
                    sack::mark_lost(q, ev.dupthresh);
                }
                t
            }
            Phase::Loss => {
                if ev.acked_new && ev.una_seq >= self.recover.unwrap_or(0) {
                    self.exit();
                    return Transition::ExitedLoss;
                }
                Transition::None
            }
        }
    }

    /// Start a fast-recovery episode: the head is lost (and, with SACK, whatever the
    /// scoreboard says at `dupthresh`); its retransmission goes out regardless of cwnd.
    /// `early`: the episode was started by Early Retransmit / the F-RTO threshold (the kind
    /// of its first retransmission).
    pub fn enter_recovery(
        &mut self,
        q: &mut SendQueue,
        cc: &mut Cc,
        now: Instant,
        nxt_seq: u64,
        dupthresh: u32,
        early: Option<SendKind>,
    ) {
        let base = self.reduction_base(cc, self.pipe(q) + self.left(q));
        // Linux tcp_current_ssthresh: at least ¾ of the window in use
        let prior_cwnd = cc.cwnd();
        let prior_ssthresh = cc.ssthresh().max((prior_cwnd >> 1) + (prior_cwnd >> 2));
        cc.on_congestion_event(now, CongestionEvent::FastRecovery, base);
        self.undo = self
            .undo_enabled
            .then(|| Undo::start(prior_cwnd, prior_ssthresh));
        self.prr = (self.cwnd_reduction == CwndReduction::Prr).then(|| Prr::start(prior_cwnd));
        self.phase = Phase::Recovery;
        self.recover = Some(nxt_seq);
        q.set_lost(0);
        if self.sack {
            sack::mark_lost(q, dupthresh);
        }
        self.force_retransmit = true;
        self.early_first = early;
    }

    fn exit(&mut self) {
        self.phase = Phase::Open;
        self.prr = None;
        self.dupacks = 0;
        self.reno_sacked = 0;
        self.force_retransmit = false;
        self.early_first = None;
    }

    /// The retransmission timer expired with data outstanding: enter Loss, mark everything
    /// lost (go-back-N) and let the first retransmission out regardless of cwnd.
    pub fn on_rto(&mut self, q: &mut SendQueue, cc: &mut Cc, now: Instant) {
        let base = self.reduction_base(cc, self.pipe(q));
        cc.on_congestion_event(now, CongestionEvent::Timeout, base);
        q.mark_all_lost();
        self.phase = Phase::Loss;
        self.prr = None;
        self.undo = None;
        self.recover = Some(q.nxt_seq());
        self.dupacks = 0;
        self.reno_sacked = 0;
        self.force_retransmit = true;
        self.early_first = None;
    }
}

/// `Option<u64>` helper: `None` or at most `x`.
trait NoneOrLe {
    fn is_none_or_le(&self, x: u64) -> bool;
}
impl NoneOrLe for Option<u64> {
    fn is_none_or_le(&self, x: u64) -> bool {
        self.is_none_or(|r| r <= x)
    }
}
