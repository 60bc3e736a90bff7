//! The loss-recovery component: one owner for the recovery state machine ([`Recovery`]), the
//! loss detectors and the loss timers, shaped like s2n-quic's recovery `Manager` with a
//! `Context`: the endpoint keeps the connection (states, windows, the receive side, output) and
//! lends the component, per call, what it needs of it in a [`Ctx`]. Nothing here reaches into
//! the endpoint.
//!
//! Detectors, each in its own file, are chosen by `TcpConfig::mechanisms` and report what they
//! concluded as a [`Verdict`] that this module applies:
//!
//! | detector | file | inputs | verdicts |
//! |---|---|---|---|
//! | dupthresh family: RFC 5681 dupthresh, thin dupACK, Early Retransmit (+ its Linux delay), the F-RTO threshold of Yin et al. | `dupthresh.rs` | duplicate ACKs, SACKed count, thin test | threshold, episode kind, ER delay timer |
//! | RACK (RFC 8985 §6) | `rack_tlp.rs` | delivered segments' send times | segments lost, reorder timer, enter recovery |
//! | TLP (RFC 8985 §7) | `rack_tlp.rs` | sends and ACKs while open | probe timer, probe |
//! | RTO (RFC 6298) with exponential or linear backoff | `rto.rs` | timer expiry | enter Loss, backoff |
//! | D-SACK / undo (RFC 2883, RFC 3708) | `dsack.rs` | D-SACK blocks, timestamps | undo, RACK's reordering window |
//! | RDB hidden loss (the Linux RDB patch) and adaptive RDB's loss signals | `rdb.rs` | ACKs of bundled data | CWR, allowance |
//!
//! The order on an ACK of the established connection ([`LossRecovery::on_ack`]), each step
//! seeing the effects of the ones before:
//!
//! 1. RACK notes the send times of the segments this ACK delivers (before they leave the
//!    queue);
//! 2. the cumulative ACK takes segments off the queue (`Event::Acked`);
//! 3. the SACK blocks: a D-SACK is recognised and counted, the scoreboard takes the rest;
//! 4. RTT sample (Karn's rule, timestamps), the RTT round, backoff and retry count reset;
//! 5. the dupthresh family gives this ACK's threshold (or arms the ER delay);
//! 6. RACK detects losses and arms its reorder timer (with RACK on, dupthresh defers to it);
//! 7. the recovery state machine: enter / continue / leave fast recovery or Loss, partial
//!    ACKs, SACK loss marking;
//! 8. PRR's window for what the ACK delivered;
//! 9. D-SACK undo and the reordering window's round;
//! 10. trace events of what recovery did;
//! 11. congestion-window growth (outside recovery, when the window was in use);
//! 12. RDB: hidden loss → CWR (patch), loss signals / allowance (adaptive);
//! 13. the retransmission timer (stop, restart or keep);
//! 14. the loss probe: episode end, re-arm.
//!
//! An ACK that can change nothing here (nothing outstanding, nothing new, no duplicate, no
//! SACK option, recovery Open, no D-SACK undo due: a one-way transfer's receiver gets only
//! such) makes only the few writes these steps would make, without running them (`quiet.rs`).
//!
//! Timer expiries go through [`LossRecovery::on_timer`]. The output path asks the component
//! for what it may send (the recovery state machine's window and retransmission kind, a due
//! probe: [`LossRecovery::take_probe`], RDB's bundles) and tells it what it sent
//! ([`LossRecovery::on_data_sent`], [`LossRecovery::on_probe_sent`]).

mod ack;
mod dsack;
mod dupthresh;
mod quiet;
mod rack_tlp;
mod rdb;
mod rto;

pub use ack::{AckInfo, AckParse};
pub use dupthresh::DupthreshVerdict;
pub use rack_tlp::RackTlpState;
pub use rdb::RdbState;
pub use rto::{thin_now, RtoExpiry};

use super::{sack, AckEvent, Phase, Recovery, Transition};
use crate::cc::{Cc, CongestionControl, CongestionEvent};
use crate::config::TcpConfig;
use crate::cwnd_validation::CwndUsage;
use crate::event::{Event, RecoveryEvent, SendKind};
use crate::event_log::EventLog;
use crate::rtt::RttEstimator;
use crate::send_queue::{AckedSummary, SendQueue};
use crate::stats::Stats;
use crate::time::Instant;
use crate::timers::{TimerKind, Timers};
use std::time::Duration;

/// What the endpoint lends the loss-recovery component for one call.
pub struct Ctx<'a> {
    pub now: Instant,
    pub cfg: &'a TcpConfig,
    /// SACK / timestamps were negotiated; the MSS we send.
    pub sack: bool,
    pub timestamps: bool,
    pub send_mss: u32,
    /// The connection is synchronized (past the handshake) / ESTABLISHED.
    pub synchronized: bool,
    pub established: bool,
    /// The peer's window (bytes) and the largest it ever offered.
    pub snd_wnd: u64,
    pub max_snd_wnd: u64,
    /// The send queue is the scoreboard.
    pub snd: &'a mut SendQueue,
    pub cc: &'a mut Cc,
    pub rtt: &'a mut RttEstimator,
    pub timers: &'a mut Timers,
    pub stats: &'a mut Stats,
    pub events: &'a mut EventLog,
    pub cwnd_usage: &'a CwndUsage,
    /// The last transmission of data (or FIN).
    pub last_send: Option<Instant>,
}

/// What a detector concluded, applied in one place (`LossRecovery::apply`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Start a fast-recovery episode now; `early` names the kind of its first retransmission
    /// when an early mechanism started it.
    EnterRecovery {
        dupthresh: u32,
        early: Option<SendKind>,
    },
    /// A congestion signal without loss recovery (Linux CWR): the controller's decrease
    /// from `base`, at once.
    EnterCwr {
        base: u32,
    },
    /// Run a timer `after` from now.
    Arm(TimerKind, Duration),
    /// Run a timer at an absolute time.
    ArmAt(TimerKind, Instant),
    Stop(TimerKind),
}

/// The loss-recovery component of one connection.
#[derive(Clone, Debug)]
// In declaration order (repr(C)): what every ACK touches first, the state of mechanisms that are
// off or idle on most ACKs (RDB, linear timeouts, F-RTO) last (docs/performance/many-flows.md, "Hot
// fields first").
#[repr(C)]
pub struct LossRecovery {
    /// Quiet ACKs take their shortcut (`quiet.rs`; off only to compare results without it).
    /// First: every ACK reads it, and last it had a cache line of its own.
    quiet_shortcut: bool,
    /// The recovery state machine (phase, episode, PRR, undo).
    pub rec: Recovery,
    pub(crate) rack_tlp: RackTlpState,
    /// Linux `rtt_seq`: snd_nxt when the current RTT round began (rttvar decays per round).
    rtt_seq: u64,
    /// Consecutive RTO expiries without a fresh RTT sample (exponential backoff exponent).
    pub backoff: u32,
    /// RTO expiries since new data was last acknowledged.
    pub retries: u32,
    /// `SeedSrtt` linear timeouts: k·SRTT added to the base RTO after k linear expiries (only
    /// while `retries > 0`, i.e. until new data is acknowledged).
    linear_extra: Duration,
    pub(crate) dupthresh: dupthresh::DupthreshState,
    pub(crate) rdb: RdbState,
}

impl LossRecovery {
    pub fn new(cfg: &TcpConfig) -> Self {
        LossRecovery {
            rec: Recovery::new(cfg),
            rack_tlp: RackTlpState::default(),
            dupthresh: Default::default(),
            rdb: RdbState::default(),
            backoff: 0,
            retries: 0,
            linear_extra: Duration::ZERO,
            rtt_seq: 0,
            quiet_shortcut: quiet::shortcut_enabled(),
        }
    }

    /// The handshake settled the options: SACK-based recovery and RACK need SACK.
    pub fn on_established(&mut self, cfg: &TcpConfig, sack: bool) {
        self.rec.sack = sack;
        self.rec.rack = cfg.mechanisms.rack && sack;
    }

    /// Apply a detector's verdict.
    fn apply(&mut self, c: &mut Ctx, v: Verdict) {
        match v {
            Verdict::EnterRecovery { dupthresh, early } => {
                let nxt = c.snd.nxt_seq();
                self.rec
                    .enter_recovery(c.snd, c.cc, c.now, nxt, dupthresh, early);
            }
            Verdict::EnterCwr { base } => {
                c.cc.on_congestion_event(c.now, CongestionEvent::Cwr, base);
                let (cwnd, ssthresh) = (c.cc.cwnd(), c.cc.ssthresh());
                let what = RecoveryEvent::Reduction { cwnd, ssthresh };
                c.events.push_back(Event::Recovery { at: c.now, what });
            }
            Verdict::Arm(k, d) => c.timers.arm(k, c.now, d),
            Verdict::ArmAt(k, at) => c.timers.set(k, at),
            Verdict::Stop(k) => c.timers.stop(k),
        }
    }

    /// One ACK of the synchronized connection, in the order of the module header.
    pub fn on_ack(&mut self, c: &mut Ctx, ack: &AckInfo) {
        if self.is_quiet_ack(c, ack) {
            // nothing outstanding and nothing new: the steps below would change nothing else
            self.on_quiet_ack(c);
            return;
        }
        let now = c.now;
        let in_flight_before = self.rec.pipe(c.snd);
        // what this ACK delivers (PRR): packets that left the queue plus newly SACKed ones
        let (packets_before, left_before) = (c.snd.packets_out(), self.rec.left(c.snd));
        let losses_before = c.snd.losses();
        let phase_at_start = self.rec.phase;
        let data_una_before = c.snd.una;
        // 1. RACK: send times of the delivered segments
        self.rack_advance(c, ack);
        // 2. cumulative ACK
        let mut summary = AckedSummary::default();
        if ack.acked_new {
            summary = c.snd.ack(ack.ack as u64);
            if c.snd.una > data_una_before {
                c.events.push_back(Event::Acked {
                    at: now,
                    una: c.snd.una,
                });
            }
        }
        let undo_before = self.rec.undo;
        let prior_delivered = self.rack_tlp.delivered;
        // 3. SACK blocks: D-SACK first, then the scoreboard takes valid blocks of outstanding data
        if c.sack && !ack.sack_blocks.is_empty() {
            for &(start, end) in &ack.sack_blocks {
                c.events.push_back(Event::Sacked {
                    at: now,
                    start,
                    end,
                });
            }
            self.dsack_on_blocks(c, &ack.sack_blocks, ack.ack.max(0) as u64);
            let (lo, hi) = (c.snd.una_seq(), c.snd.nxt_seq());
            let blocks = ack.blocks_within(lo, hi);
            sack::apply_blocks(c.snd, &blocks);
        }
        // 4. RTT
        let (sample, ca_sample) = self.rtt_on_ack(c, ack, &summary);
        // 5.–6. the dupthresh family, then RACK (which defers dupthresh to itself)
        let thresh = self.ack_dupthresh(c, ack.acked_new, ack.dupack, sample);
        let thresh = self.rack_on_ack(c, thresh);
        // 7. the recovery state machine
        let ev = AckEvent {
            now,
            acked_segments: summary.segments,
            acked_new: ack.acked_new,
            dupack: ack.dupack,
            una_seq: c.snd.una_seq(),
            nxt_seq: c.snd.nxt_seq(),
            dupthresh: thresh,
        };
        let phase_before = self.rec.phase;
        let t = self.rec.on_ack(c.snd, c.cc, &ev);
        // 8. PRR
        let delivered = packets_before.saturating_sub(c.snd.packets_out()) as i64
            + self.rec.left(c.snd) as i64
            - left_before as i64;
        let newly_lost = (c.snd.losses() - losses_before) as u32;
        self.rec.prr_on_ack(
            c.snd,
            c.cc,
            delivered.max(0) as u32,
            newly_lost,
            ack.acked_new,
        );
        self.rack_tlp.delivered += delivered.max(0) as u64;
        // 9.–10. undo, trace
        let undos_before = c.stats.undos;
        self.dsack_after_ack(c, t, undo_before, ack.ecr, prior_delivered);
        self.trace_recovery(c, phase_at_start, losses_before, undos_before);
        // 11. growth
        if ack.acked_new && phase_before != Phase::Recovery && t != Transition::EnteredRecovery {
            let limited = cwnd_limited(c, in_flight_before);
            c.cc.on_ack(now, summary.segments, limited, ca_sample);
        }
        // 12. RDB
        let hole = ack.dupack || ack.has_sack_option;
        if ack.acked_new {
            self.rdb_on_ack(c, data_una_before, in_flight_before, hole);
        } else if hole {
            self.rdb_on_hole(c);
        }
        // 13.–14. the retransmission timer, the loss probe
        self.rto_on_ack(c, ack.acked_new);
        self.tlp_on_ack(c, ack.acked_new);
    }

    /// A loss timer expired (`Rto` of the established connection, `Tlp`, `Reorder`,
    /// `EarlyRetransmit`). An RTO expiry that exhausted the retries is returned for the
    /// endpoint to close the connection.
    pub fn on_timer(&mut self, c: &mut Ctx, kind: TimerKind) -> Option<RtoExpiry> {
        match kind {
            // a loss probe due at the same instant goes first
            TimerKind::Rto => return self.on_rto_deadline(c),
            TimerKind::Tlp => self.on_tlp_timer(c),
            TimerKind::Reorder => self.on_reorder_timer(c),
            TimerKind::EarlyRetransmit => self.on_early_retransmit_timer(c),
            TimerKind::DelayedAck | TimerKind::Persist | TimerKind::TimeWait => {}
        }
        None
    }

    /// Trace events for what recovery did (phase changes, losses marked, the window reduced
    /// or restored). Most ACKs did none of it: that answer is given inline, without the
    /// body's stack frame.
    #[inline(always)]
    fn trace_recovery(
        &mut self,
        c: &mut Ctx,
        phase_before: Phase,
        losses_before: u64,
        undos_before: u64,
    ) {
        if c.snd.losses() != losses_before
            || self.rec.phase != phase_before
            || c.stats.undos != undos_before
        {
            self.trace_recovery_events(c, phase_before, losses_before, undos_before);
        }
    }

    #[inline(never)]
    fn trace_recovery_events(
        &mut self,
        c: &mut Ctx,
        phase_before: Phase,
        losses_before: u64,
        undos_before: u64,
    ) {
        use crate::event::RecoveryEvent as R;
        let now = c.now;
        let mut push = |what| c.events.push_back(Event::Recovery { at: now, what });
        let marked = c.snd.losses() - losses_before;
        if marked > 0 {
            push(R::LossMarked {
                segments: marked as u32,
            });
        }
        // the window is read only for an event that reports it (not on every ACK)
        let window = |rec: &Recovery, cc: &Cc| (rec.cwnd(cc), cc.ssthresh());
        match (phase_before, self.rec.phase) {
            (Phase::Open, Phase::Recovery) => {
                push(R::Entered);
                let (cwnd, ssthresh) = window(&self.rec, c.cc);
                push(R::Reduction { cwnd, ssthresh });
            }
            (Phase::Recovery, Phase::Open) => push(R::Exited),
            _ => {}
        }
        if c.stats.undos > undos_before {
            let (cwnd, ssthresh) = window(&self.rec, c.cc);
            push(R::Undo { cwnd, ssthresh });
        }
    }

    /// The window in force (PRR's during a PRR episode).
    pub fn cwnd(&self, cc: &Cc) -> u32 {
        self.rec.cwnd(cc)
    }

    /// Whether new data could be sent now (unsent data, cwnd room, peer-window room).
    fn can_send_new(&self, c: &Ctx) -> bool {
        c.snd.unsent_len() > 0
            && self.rec.cwnd_usage(c.snd) < self.rec.cwnd(c.cc)
            && c.snd.una + c.snd_wnd > c.snd.nxt
    }
}

/// Whether the window was in use, so that this ACK may grow it: the flight before the ACK
/// reached cwnd (Linux 2.6.22), or, with `cwnd_limited_window`, the window-usage rule of
/// `cwnd_validation` (modern Linux `tcp_is_cwnd_limited`).
fn cwnd_limited(c: &Ctx, in_flight_before: u32) -> bool {
    let cwnd = c.cc.cwnd();
    if c.cfg.cwnd_limited_window {
        c.cwnd_usage.may_grow(cwnd, cwnd < c.cc.ssthresh())
    } else {
        in_flight_before >= cwnd
    }
}
