//! The sans-IO TCP endpoint (RFC 9293), orchestrating the mechanisms of the sibling modules:
//!
//! - `fsm`: the connection state machine and the RFC 9293 §3.10.7 segment-arrival checks
//!   (acceptability, RST, SYN, challenge ACKs);
//! - `input`: ACK processing on the sending side (cumulative ACK, SACK, RTT, recovery,
//!   window update) and data/FIN processing on the receiving side;
//! - `output`: what goes out next (RST, SYN, retransmissions, new data under cwnd, the peer's
//!   window, Nagle and sender SWS avoidance, window probes, pure ACKs);
//! - [`crate::send_queue`] (shared with recovery), [`reassembly`], [`delayed_ack`], [`options`],
//!   [`timers`]; loss recovery is in [`crate::recovery`], RTT in [`crate::rtt`], congestion
//!   control in [`crate::cc`].
//!
//! Time is always an argument; nothing reads a clock. Bad network input never panics and is
//! never an error: it is dropped, counted in [`Stats`] and reported as `Event::Dropped`.
//!
//! Deviations and choices (see also the module headers): a SYN's payload is ignored; a RST in
//! SYN-RECEIVED closes the endpoint instead of returning to LISTEN; PAWS (RFC 7323 §5) is not
//! implemented; FIN-WAIT-2 has no timeout; `close` in SYN-SENT with data written keeps the
//! connection and sends data and FIN after the handshake; `Event::Acked` reports data offsets only (an ACK
//! of just our FIN produces none); handshake retransmissions produce `Sent{kind: Handshake}`
//! but no `RtoFired` and are not counted in `rto_events`; in a simultaneous open the peer's
//! SYN-ACK fails the acceptability test in SYN-RECEIVED and is answered with an ACK (RFC 9293
//! as written), so the open completes when that ACK is answered, half an RTT later than
//! Linux, which accepts the SYN-ACK.

pub mod delayed_ack;
mod dsack_receiver;
mod fsm;
mod input;
mod loss_accessors;
pub mod options;
mod output;
pub mod reassembly;
pub mod select_window;
pub use crate::timers;

use crate::cc::{Cc, CongestionControl};
use crate::config::TcpConfig;
use crate::event::{DropReason, Event};
use crate::event_log::EventLog;
use crate::recovery::manager::{Ctx, LossRecovery, RtoExpiry};
use crate::recovery::Phase;
use crate::rtt::{backed_off, RttEstimator};
use crate::send_queue::SendQueue;
use crate::stats::Stats;
use crate::time::Instant;
use crate::timers::{TimerKind, Timers};
use crate::wire::{Segment, TcpOptions};
use bytes::Bytes;
use delayed_ack::DelayedAck;
use options::Negotiated;
use reassembly::Reassembly;
use std::sync::Arc;
use std::time::Duration;

pub use crate::state::State;

/// Misuse of the API (never produced by network input).
#[derive(Clone, Copy, Debug, thiserror::Error, PartialEq, Eq)]
pub enum EndpointError {
    #[error("the connection is closed for sending")]
    ClosedForSending,
    #[error("the connection was reset")]
    Reset,
    #[error("the connection timed out")]
    TimedOut,
}

// In declaration order (repr(C)), the fields an event touches first and the rarely touched last:
// with thousands of flows, a flow's state is a cache miss per line it touches, so the hot fields
// share lines (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct Endpoint {
    /// Shared with other endpoints of the same configuration ([`Endpoint::share_config`]).
    cfg: Arc<TcpConfig>,
    /// Peer's advertised window, bytes (scaled).
    snd_wnd: u64,
    max_snd_wnd: u64,
    /// Peer sequence offset / our ack offset of the last window update (RFC 9293 SND.WL1/2).
    snd_wl1: i64,
    snd_wl2: i64,
    /// Right edge of the window we last advertised (peer offsets).
    rcv_adv: u64,
    /// The window we last advertised (Linux `tp->rcv_wnd`; `select_window.rs` hysteresis).
    rcv_wnd: u64,
    /// rcv_nxt (sequence space) in the last ACK we sent (RFC 7323 Last.ACK.sent).
    last_ack_sent: u64,
    iss: u32,
    irs: u32,
    ts_recent: u32,
    syn_retries: u32,
    persist_backoff: u32,
    neg: Negotiated,
    local_port: u16,
    remote_port: u16,
    state: State,
    error: Option<EndpointError>,
    ack_now: bool,
    /// The handshake's final ACK must leave alone (`TcpConfig::handshake_ack_alone`).
    handshake_ack_pending: bool,
    fin_rcvd: bool,
    probe_pending: bool,
    /// The persist timer fired with a small non-zero window: send what fits, overriding
    /// sender SWS avoidance and Nagle once (RFC 9293 §3.8.6.2.1 override timeout).
    sws_override: bool,
    syn_pending: bool,
    syn_retransmitted: bool,
    close_requested: bool,
    syn_sent_at: Option<Instant>,
    /// Last transmission of data (or FIN).
    last_send: Option<Instant>,
    /// Offset of the peer's FIN once seen (possibly out of order).
    fin_at: Option<u64>,
    events: EventLog,
    /// A RST to send (boxed: rare, and the pointer keeps the check on a hot line).
    rst_pending: Option<Box<Segment>>,
    timers: Timers,
    rtt: RttEstimator,
    snd: SendQueue,
    rcv: Reassembly,
    delack: DelayedAck,
    /// A duplicate to report as the first SACK block of the next segment (RFC 2883).
    dsack_block: Option<(u64, u64)>,
    /// Whether the window is in use (`TcpConfig::cwnd_limited_window`).
    cwnd_usage: crate::cwnd_validation::CwndUsage,
    /// Loss recovery: the recovery state machine, the loss detectors and their timers' logic.
    loss: LossRecovery,
    cc: Cc,
    stats: Stats,
    /// The peer's SYN options (to build our SYN-ACK and its retransmissions).
    peer_syn: Option<TcpOptions>,
}

impl Endpoint {
    fn new(cfg: TcpConfig, local_port: u16, isn: u32, state: State) -> Endpoint {
        let neg = Negotiated::initial(&cfg);
        Endpoint {
            neg,
            state,
            local_port,
            remote_port: 0,
            iss: isn,
            irs: 0,
            peer_syn: None,
            snd: SendQueue::new(cfg.send_buffer),
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: -1,
            snd_wl2: 0,
            syn_pending: false,
            syn_sent_at: None,
            syn_retransmitted: false,
            syn_retries: 0,
            probe_pending: false,
            sws_override: false,
            persist_backoff: 0,
            rst_pending: None,
            last_send: None,
            close_requested: false,
            rcv: Reassembly::new(),
            fin_at: None,
            fin_rcvd: false,
            rcv_adv: 0,
            rcv_wnd: 0,
            ack_now: false,
            dsack_block: None,
            handshake_ack_pending: false,
            cwnd_usage: Default::default(),
            delack: DelayedAck::new(cfg.delayed_ack, cfg.delayed_ack_timeout, cfg.mss),
            ts_recent: 0,
            last_ack_sent: 0,
            rtt: RttEstimator::new(&cfg),
            cc: Cc::new(&cfg),
            loss: LossRecovery::new(&cfg),
            timers: Timers::new(cfg.clock_hz.map(crate::timer_wheel::TimerWheel::new)),
            events: EventLog::default(),
            stats: Stats::default(),
            error: None,
            cfg: Arc::new(cfg),
        }
    }

    /// Active open: queue a SYN to `remote_port` from `local_port` with initial sequence `isn`.
    pub fn connect(
        now: Instant,
        config: TcpConfig,
        local_port: u16,
        remote_port: u16,
        isn: u32,
    ) -> Endpoint {
        let mut ep = Endpoint::new(config, local_port, isn, State::Closed);
        ep.remote_port = remote_port;
        ep.syn_pending = true;
        ep.set_state(now, State::SynSent);
        ep
    }
    /// Passive open: wait in LISTEN on `local_port`; the first SYN fixes the peer.
    pub fn listen(config: TcpConfig, local_port: u16, isn: u32) -> Endpoint {
        Endpoint::new(config, local_port, isn, State::Listen)
    }
    /// Application write: accepts up to the free send-buffer space and returns how much it took.
    /// Data written before the handshake completes is sent once it does.
    pub fn write(&mut self, _now: Instant, data: &[u8]) -> Result<usize, EndpointError> {
        self.check_writable()?;
        Ok(self.snd.write(data))
    }
    /// [`Endpoint::write`] without a copy: the send buffer keeps a slice of `data` (a
    /// simulator's payload can be one shared, never-written buffer).
    pub fn write_bytes(&mut self, _now: Instant, data: Bytes) -> Result<usize, EndpointError> {
        self.check_writable()?;
        Ok(self.snd.write_bytes(data))
    }
    fn check_writable(&self) -> Result<(), EndpointError> {
        if let Some(e) = &self.error {
            return Err(*e);
        }
        let open = matches!(
            self.state,
            State::Listen
                | State::SynSent
                | State::SynReceived
                | State::Established
                | State::CloseWait
        );
        if !open || self.snd.fin_queued {
            return Err(EndpointError::ClosedForSending);
        }
        Ok(())
    }
    /// Next chunk of in-order received data, if any. Reading reopens the receive window.
    /// Most calls find none; that answer is given here, inlined into the caller, without the
    /// body's stack frame.
    #[inline]
    pub fn read(&mut self) -> Option<Bytes> {
        if !self.rcv.has_readable() {
            return None;
        }
        self.read_chunk()
    }

    #[inline(never)]
    fn read_chunk(&mut self) -> Option<Bytes> {
        let b = self.rcv.read()?;
        if self.delack.on_read(self.rcv.readable_len() == 0) {
            self.ack_now = true;
        }
        // Receiver window update (Linux tcp_cleanup_rbuf): if the advertised window is at most
        // half the maximum and reading at least doubled it, tell the peer at once.
        let cur = self.rcv_adv.saturating_sub(self.rcv_nxt_seq());
        let new = self.select_window();
        if self.is_synchronized()
            && cur * 2 <= self.max_rcv_window()
            && new >= 2 * cur
            && new >= self.cfg.mss as u64
        {
            self.ack_now = true;
        }
        Some(b)
    }
    /// Application close: send FIN after all written data.
    pub fn close(&mut self, now: Instant) {
        match self.state {
            State::Listen => self.set_state(now, State::Closed),
            // RFC 9293 deletes the TCB of a SYN-SENT connection; with data already written we
            // keep it and send the data and FIN once established (like SYN-RECEIVED).
            State::SynSent if self.snd.written == 0 => self.set_state(now, State::Closed),
            State::SynSent | State::SynReceived => {
                self.close_requested = true;
                self.snd.fin_queued = true;
            }
            State::Established => {
                self.snd.fin_queued = true;
                self.set_state(now, State::FinWait1);
            }
            State::CloseWait => {
                self.snd.fin_queued = true;
                self.set_state(now, State::LastAck);
            }
            _ => {}
        }
    }
    /// Abort: send RST and go to CLOSED.
    pub fn abort(&mut self, now: Instant) {
        let synchronized = matches!(
            self.state,
            State::SynReceived
                | State::Established
                | State::FinWait1
                | State::FinWait2
                | State::CloseWait
        );
        if synchronized {
            let seq = crate::seq::to_wire(self.iss, self.snd.nxt_seq());
            self.rst_pending = Some(Box::new(self.rst_segment(seq, None)));
        }
        if self.error.is_none() {
            self.error = Some(EndpointError::ClosedForSending);
        }
        self.set_state(now, State::Closed);
    }
    /// Feed one incoming segment. Bad input is dropped and counted, never an error.
    pub fn handle_segment(&mut self, now: Instant, seg: Segment) {
        self.on_segment(now, seg);
    }
    /// Feed one incoming wire-format TCP segment (header + payload) whose pseudo-header
    /// checksum the caller has already verified or does not need. Malformed input is dropped and counted.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        match crate::wire::parse(bytes) {
            Ok(seg) => self.handle_segment(now, seg),
            Err(_) => {
                self.stats.segments_received += 1;
                self.drop_segment(now, DropReason::Malformed);
            }
        }
    }
    /// Run expired timers. Call when `now >= poll_timeout()`.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(k) = self.timers.pop_expired(now) {
            match k {
                TimerKind::Rto => self.on_rto_timer(now),
                TimerKind::DelayedAck => {
                    self.delack.on_timer(self.rto());
                    self.ack_now = true;
                }
                TimerKind::Persist => self.on_persist_timer(now),
                TimerKind::TimeWait => self.set_state(now, State::Closed),
                TimerKind::EarlyRetransmit | TimerKind::Tlp | TimerKind::Reorder => {
                    self.on_loss_timer(now, k)
                }
            }
        }
    }
    /// Next segment to send, if any. Every event asks until the answer is `None`, so most
    /// calls have nothing to send; an established connection's `None` is given here, inlined
    /// into the caller, without the stack frame of `next_segment`.
    #[inline]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if self.nothing_to_send() {
            // debug builds (every test) check the shortcut against the full answer, which
            // changes nothing when it is `None`
            #[cfg(debug_assertions)]
            assert!(
                self.next_segment(now).is_none(),
                "nothing_to_send() said None, next_segment() sent a segment"
            );
            return None;
        }
        self.next_segment(now)
    }

    /// Whether [`Self::next_segment`] would answer `None` and change nothing, judged for an
    /// established connection only (otherwise `false`): its checks in its order, each the
    /// condition under which that step returns nothing (no RST, no handshake ACK, no loss
    /// probe, no lost segment without a retransmission, no unsent data or FIN, no window
    /// probe, no ACK due).
    #[inline(always)]
    fn nothing_to_send(&self) -> bool {
        self.state == State::Established
            && self.rst_pending.is_none()
            && !self.handshake_ack_pending
            && !self.loss.probe_pending()
            && !self.snd.may_need_retransmission()
            && !self.snd.has_new_to_send()
            && !self.probe_pending
            && !self.ack_now
    }
    /// Earliest time at which `handle_timeout` must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }
    /// Prefetches what asking `slot`'s endpoint for [`Endpoint::poll_timeout`] reads (whether
    /// there is one, and its timers' deadlines), for a caller that will ask whether a queued
    /// timer event is still due ([`crate::prefetch`]). It reads nothing itself: the lines are
    /// found by their offsets, so a slot not yet in the caches does not stall the caller.
    #[inline]
    pub fn prefetch_timers_in(slot: &Option<Endpoint>) {
        // `Option<Endpoint>` keeps its tag in a niche of the endpoint (asserted below), so an
        // endpoint in the slot starts at the slot's address. The compiler picks the niche
        // (rustc 1.95: `syn_sent_at`'s tag, bytes 104–111), so every line from the start to
        // the end of the deadlines is fetched: the fields before `timers` are the endpoint's
        // scalars, and the niche lies among them.
        const _: () =
            assert!(std::mem::size_of::<Option<Endpoint>>() == std::mem::size_of::<Endpoint>());
        let at = (slot as *const Option<Endpoint>).cast::<u8>();
        crate::prefetch::prefetch_bytes(
            at,
            std::mem::offset_of!(Endpoint, timers) + std::mem::size_of::<Timers>(),
        );
    }
    /// Prefetches the heap storage the next segment or timer will touch (its queues' fronts and
    /// the trace-event buffer), for callers that run many endpoints ([`crate::prefetch`]).
    #[inline]
    pub fn prefetch_buffers(&self) {
        let (at, room) = self.events.storage();
        crate::prefetch::prefetch_bytes(at, room.min(4) * std::mem::size_of::<Event>());
        self.snd.prefetch_buffers();
        self.rcv.prefetch_buffers();
    }
    /// Next trace event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
    /// Hands every pending trace event to `f` in order, then forgets them: the same events as
    /// calling [`Endpoint::poll_event`] until it returns `None`, read where they lie instead of
    /// moved out one by one through the stack (which made the simulator 1.7 % slower,
    /// docs/performance/many-flows.md, "Fewer stalls per event").
    #[inline]
    pub fn drain_events(&mut self, mut f: impl FnMut(&Event)) {
        for ev in self.events.unread() {
            f(ev);
        }
        self.events.clear();
    }
    pub fn state(&self) -> State {
        self.state
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The peer's FIN has been received and all its data read (EOF).
    pub fn peer_closed(&self) -> bool {
        self.fin_rcvd && self.rcv.readable_len() == 0
    }
    /// Whether written bytes wait to be sent for the first time (an ACK that opens the window
    /// sends them).
    pub fn has_unsent(&self) -> bool {
        self.snd.unsent_len() > 0
    }
    /// Bytes written and not yet acknowledged, plus unsent.
    pub fn bytes_unacked(&self) -> u64 {
        self.snd.unacked_len()
    }
    /// Current RTO including backoff (and the seed variant's linear increment).
    pub fn rto(&self) -> Duration {
        self.loss.rto(self.rtt.rto(), self.cfg.rto_max)
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Keeps this endpoint's configuration in `shared`'s storage when the two are equal but for
    /// `cc_seed` (read only when the endpoint is made; [`Endpoint::config`] then shows
    /// `shared`'s). Thousands of connections with one configuration then hold it once, where
    /// it stays in the cache, instead of once each (docs/performance/many-flows.md, "One
    /// configuration for many flows"). Returns whether it did.
    pub fn share_config(&mut self, shared: &Arc<TcpConfig>) -> bool {
        let equal = TcpConfig {
            cc_seed: self.cfg.cc_seed,
            ..TcpConfig::clone(shared)
        } == *self.cfg;
        if equal {
            self.cfg = Arc::clone(shared);
        }
        equal
    }

    // --- additional read-only accessors (diagnostics, tests, later mechanisms)

    /// The most recent RTT sample.
    pub fn rtt_latest(&self) -> Option<Duration> {
        self.rtt.latest()
    }
    /// The RTT estimator (for thin-stream detection and TLP later).
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Congestion window, segments.
    /// Check the endpoint's internal invariants (send queue and scoreboard, windows, the
    /// window in force); `Err` names the first violation. O(queue length): for tests and fuzzing.
    pub fn check_consistency(&self) -> Result<(), String> {
        self.snd.check()?;
        if self.cwnd() == 0 {
            return Err("cwnd 0".into());
        }
        if self.loss.rec.pipe(&self.snd) > self.snd.packets_out() + self.snd.retrans_out() {
            return Err("pipe exceeds packets out".into());
        }
        if self.snd.unacked_len() > self.cfg.send_buffer as u64 {
            return Err(format!(
                "{} bytes buffered, buffer {}",
                self.snd.unacked_len(),
                self.cfg.send_buffer
            ));
        }
        Ok(())
    }

    pub fn cwnd(&self) -> u32 {
        self.loss.cwnd(&self.cc)
    }
    pub fn ssthresh(&self) -> u32 {
        self.cc.ssthresh()
    }
    /// Still in the initial slow start (for `pif4` thin-stream detection, docs/spec/mechanisms.md,
    /// thin-stream detection).
    pub fn in_initial_slow_start(&self) -> bool {
        self.cc.in_initial_slow_start()
    }
    /// Segments sent and not cumulatively acknowledged (Linux packets_out).
    pub fn packets_out(&self) -> u32 {
        self.snd.packets_out()
    }
    /// Segments in flight (RFC 6675 pipe, Linux tcp_packets_in_flight).
    pub fn packets_in_flight(&self) -> u32 {
        self.loss.rec.pipe(&self.snd)
    }
    pub fn recovery_phase(&self) -> Phase {
        self.loss.rec.phase
    }
    /// The options the handshake settled.
    pub fn negotiated(&self) -> Negotiated {
        self.neg
    }
    /// Peer's advertised window, bytes.
    pub fn send_window(&self) -> u64 {
        self.snd_wnd
    }
    /// Consecutive RTO expiries without a fresh RTT sample.
    pub fn backoff(&self) -> u32 {
        self.loss.backoff
    }
    /// The error that ended the connection, if any.
    pub fn error(&self) -> Option<EndpointError> {
        self.error
    }
    /// Deadline of one timer (for tests and drivers that want to display it).
    pub fn timer(&self, kind: TimerKind) -> Option<Instant> {
        self.timers.get(kind)
    }
    /// Our stream offset of the next new byte (snd_nxt, data only).
    pub fn snd_nxt(&self) -> u64 {
        self.snd.nxt
    }
    /// Our first unacknowledged stream offset (snd_una, data only).
    pub fn snd_una(&self) -> u64 {
        self.snd.una
    }
    /// Next expected offset of the peer's stream.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv.rcv_nxt
    }

    // --- shared helpers for the submodules

    fn set_state(&mut self, now: Instant, to: State) {
        let from = self.state;
        if from == to {
            return;
        }
        self.state = to;
        self.events
            .push_back(Event::StateChanged { at: now, from, to });
        match to {
            State::TimeWait => {
                self.timers.stop_all();
                self.timers
                    .set(TimerKind::TimeWait, now + self.cfg.time_wait);
            }
            State::Closed => self.timers.stop_all(),
            _ => {}
        }
    }

    fn drop_segment(&mut self, now: Instant, reason: DropReason) {
        let s = &mut self.stats;
        match reason {
            DropReason::Malformed => s.dropped_malformed += 1,
            DropReason::WrongConnection => s.dropped_wrong_connection += 1,
            DropReason::OutOfWindow => s.dropped_out_of_window += 1,
            DropReason::BadAck => s.dropped_bad_ack += 1,
            DropReason::BadState => s.dropped_bad_state += 1,
        }
        self.events.push_back(Event::Dropped { at: now, reason });
    }

    fn is_synchronized(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent)
    }

    /// rcv_nxt in sequence space (counts the peer's FIN).
    fn rcv_nxt_seq(&self) -> u64 {
        self.rcv.rcv_nxt + self.fin_rcvd as u64
    }

    fn max_rcv_window(&self) -> u64 {
        (self.cfg.recv_buffer as u64).min(0xffff_u64 << self.neg.rcv_wscale)
    }

    /// Free receive space we could advertise now.
    fn rcv_window(&self) -> u64 {
        (self.cfg.recv_buffer.saturating_sub(self.rcv.buffered()) as u64).min(self.max_rcv_window())
    }

    /// The window Linux would offer now (`__tcp_select_window`, `select_window.rs`).
    fn select_window(&self) -> u64 {
        select_window::linux_select(&select_window::WindowInput {
            free_space: self.rcv_window(),
            allowed_space: self.cfg.recv_buffer as u64,
            window_clamp: self.max_rcv_window(),
            rcv_mss: self.delack.rcv_mss() as u64,
            wscale: self.neg.rcv_wscale,
            rcv_wnd: self.rcv_wnd,
        })
    }

    /// Lend the loss-recovery component what it needs of the connection for one call.
    fn loss_ctx(&mut self, now: Instant) -> (&mut LossRecovery, Ctx<'_>) {
        let synchronized = self.is_synchronized();
        let established = self.state == State::Established;
        let ctx = Ctx {
            now,
            cfg: &self.cfg,
            sack: self.neg.sack,
            timestamps: self.neg.timestamps,
            send_mss: self.neg.send_mss as u32,
            synchronized,
            established,
            snd_wnd: self.snd_wnd,
            max_snd_wnd: self.max_snd_wnd,
            snd: &mut self.snd,
            cc: &mut self.cc,
            rtt: &mut self.rtt,
            timers: &mut self.timers,
            stats: &mut self.stats,
            events: &mut self.events,
            cwnd_usage: &self.cwnd_usage,
            last_send: self.last_send,
        };
        (&mut self.loss, ctx)
    }

    /// The retransmission timer: the handshake's here, the established connection's in the
    /// loss-recovery component.
    fn on_rto_timer(&mut self, now: Instant) {
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.syn_retries >= self.cfg.syn_retries {
                    self.error = Some(EndpointError::TimedOut);
                    self.set_state(now, State::Closed);
                    return;
                }
                self.syn_retries += 1;
                self.loss.backoff = crate::recovery::rto::backoff_after_expiry(self.loss.backoff);
                self.syn_retransmitted = true;
                self.syn_pending = true;
            }
            State::Closed | State::Listen | State::TimeWait => {}
            _ => self.on_loss_timer(now, TimerKind::Rto),
        }
    }

    /// A loss timer of the established connection (RTO, TLP, RACK reorder, ER delay).
    fn on_loss_timer(&mut self, now: Instant, kind: TimerKind) {
        let (loss, mut c) = self.loss_ctx(now);
        if let Some(RtoExpiry::GiveUp) = loss.on_timer(&mut c, kind) {
            self.error = Some(EndpointError::TimedOut);
            self.set_state(now, State::Closed);
        }
    }

    fn on_persist_timer(&mut self, now: Instant) {
        if self.snd.unsent_len() == 0 || !self.snd.is_empty() {
            self.persist_backoff = 0;
            return;
        }
        let usable = (self.snd.una + self.snd_wnd).saturating_sub(self.snd.nxt);
        if usable > 0 {
            self.sws_override = true;
        } else {
            self.probe_pending = true;
        }
        self.persist_backoff += 1;
        let d = backed_off(self.rtt.rto(), self.persist_backoff, self.cfg.rto_max);
        self.timers.arm(TimerKind::Persist, now, d);
    }
}
