//! Receiver acknowledgment policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2, docs/spec/mechanisms.md,
//! receiver behaviour),
//! one model per `DelayedAckModel`:
//!
//! - `Linux` (Linux `tcp_event_data_recv`, `__tcp_ack_snd_check`, `tcp_send_delayed_ack`,
//!   `tcp_delack_timer`, `tcp_cleanup_rbuf`, `tcp_event_data_sent`):
//!   - quick-ACK mode: the first [`QUICKACKS`] ACKs go out at once; re-entered after the
//!     receiver was idle for longer than its RTO; not in effect in pingpong mode;
//!   - otherwise an ACK is delayed by the adaptive ATO (min [`ATO_MIN`] = 40 ms): halved toward
//!     the minimum for back-to-back segments, `ato/2 + m` when the inter-arrival time `m` is
//!     below it (capped at the RTO), doubled when the delayed-ACK timer fires outside pingpong
//!     mode; the delay is capped at `cfg.delayed_ack_timeout` (TCP_DELACK_MAX, 200 ms) and at
//!     the receiver's SRTT (but not below 40 ms);
//!   - an ACK goes out at once when more than one full-sized segment (`rcv_mss`, estimated as
//!     `tcp_measure_rcv_mss` does, starting at 536) of *new* data is unacknowledged: Linux
//!     compares `rcv_nxt - rcv_wup` (how far rcv_nxt moved since the last ACK) with `rcv_mss`,
//!     so the already-received part of a redundant (RDB) bundle does not count;
//!   - "pushed" small segments (shorter than `rcv_mss`): when the application's read empties
//!     the receive queue, the ACK goes out at once unless in pingpong mode (two such segments:
//!     even in pingpong mode) — `tcp_cleanup_rbuf`. So a unidirectional thin stream whose
//!     application reads promptly is acknowledged immediately, as on Linux;
//!   - pingpong (interactive) mode is entered when we send data within one ATO of receiving,
//!     and left (ATO reset to 40 ms) when the delayed-ACK timer fires.
//! - `FreeBsd6`: ACK every second segment; otherwise after the fixed `delayed_ack_timeout`
//!   (100 ms), counted from the first unacknowledged segment.
//! - `Off`: every data segment is acknowledged at once.
//!
//! All models: out-of-order data, a segment filling a hole, a duplicate segment and a FIN are
//! acknowledged at once. A pending ACK rides on any data segment sent meanwhile.

use crate::config::DelayedAckModel;
use crate::time::Instant;
use std::time::Duration;

/// Linux TCP_MAX_QUICKACKS.
pub const QUICKACKS: u32 = 16;
/// Linux TCP_ATO_MIN.
pub const ATO_MIN: Duration = Duration::from_millis(40);
/// Linux TCP_MSS_DEFAULT: initial receive-MSS estimate.
pub const RCV_MSS_INIT: u32 = 536;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDecision {
    Now,
    /// Delay; the delayed-ACK timer should fire at this time (unless already armed earlier).
    Delay(Instant),
}

/// How a data segment related to the receive queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    InOrder,
    /// Out of order, filled a hole, duplicate, or carried a FIN: acknowledge at once.
    Urgent,
}

#[derive(Clone, Debug)]
pub struct DelayedAck {
    model: DelayedAckModel,
    timeout: Duration,
    quick: u32,
    ato: Duration,
    last_rcv: Option<Instant>,
    /// Segments received / new in-order bytes (rcv_nxt advance) since the last ACK we sent.
    pub unacked_segs: u32,
    pub unacked_bytes: u64,
    rcv_mss: u32,
    max_mss: u32,
    pingpong: bool,
    /// Small segments received since the last ACK (Linux ICSK_ACK_PUSHED / PUSHED2), 0..=2.
    pushed: u8,
}

impl DelayedAck {
    pub fn new(model: DelayedAckModel, timeout: Duration, mss: u16) -> Self {
        DelayedAck {
            model,
            timeout,
            quick: 0,
            ato: Duration::ZERO,
            last_rcv: None,
            unacked_segs: 0,
            unacked_bytes: 0,
            rcv_mss: RCV_MSS_INIT.min(mss as u32),
            max_mss: mss as u32,
            pingpong: false,
            pushed: 0,
        }
    }

    /// Current Linux ATO (zero before the first data segment).
    pub fn ato(&self) -> Duration {
        self.ato
    }
    pub fn quick(&self) -> u32 {
        self.quick
    }
    /// The receiver's estimate of the peer's segment size (Linux `icsk_ack.rcv_mss`).
    pub fn rcv_mss(&self) -> u32 {
        self.rcv_mss
    }
    pub fn pingpong(&self) -> bool {
        self.pingpong
    }

    /// A data segment of `len` payload bytes arrived, of which `new_bytes` advanced rcv_nxt
    /// (0 for out-of-order or duplicate data; less than `len` for a segment that overlaps data
    /// already received, such as an RDB bundle); `rto` and `srtt` are the receiver's own.
    pub fn on_data(
        &mut self,
        now: Instant,
        len: usize,
        new_bytes: u64,
        arrival: Arrival,
        rto: Duration,
        srtt: Option<Duration>,
    ) -> AckDecision {
        self.unacked_segs += 1;
        self.unacked_bytes += new_bytes;
        // tcp_measure_rcv_mss, in every model: window selection rounds to this estimate
        if len as u32 >= self.rcv_mss {
            self.rcv_mss = (len as u32).min(self.max_mss);
        }
        match self.model {
            DelayedAckModel::Off => AckDecision::Now,
            DelayedAckModel::FreeBsd6 => {
                if arrival == Arrival::Urgent || self.unacked_segs >= 2 {
                    AckDecision::Now
                } else {
                    AckDecision::Delay(now + self.timeout)
                }
            }
            DelayedAckModel::Linux => {
                self.linux_update(now, len, rto);
                if arrival == Arrival::Urgent
                    || (self.quick > 0 && !self.pingpong)
                    || self.unacked_bytes > self.rcv_mss as u64
                {
                    AckDecision::Now
                } else {
                    AckDecision::Delay(now + self.linux_delay(srtt))
                }
            }
        }
    }

    /// `tcp_send_delayed_ack`: the ATO capped at TCP_DELACK_MAX and at the SRTT (≥ 40 ms).
    fn linux_delay(&self, srtt: Option<Duration>) -> Duration {
        let mut max_ato = self.timeout;
        if let Some(s) = srtt {
            max_ato = max_ato.min(s.max(ATO_MIN));
        }
        self.ato.max(ATO_MIN).min(max_ato)
    }

    /// The delayed-ACK timer fired (`tcp_delack_timer`): inflate the ATO, or leave pingpong.
    pub fn on_timer(&mut self, rto: Duration) {
        if self.model != DelayedAckModel::Linux {
            return;
        }
        if self.pingpong {
            self.pingpong = false;
            self.ato = ATO_MIN;
        } else {
            self.ato = (self.ato * 2).min(rto).max(ATO_MIN);
        }
    }

    /// We sent new data (`tcp_event_data_sent`): a reply within one ATO of the last arrival
    /// makes the connection interactive (pingpong).
    pub fn on_data_sent(&mut self, now: Instant) {
        if self.model != DelayedAckModel::Linux {
            return;
        }
        if let Some(last) = self.last_rcv {
            if now - last < self.ato {
                self.pingpong = true;
            }
        }
    }

    /// The application read data and the receive queue is now `emptied` or not
    /// (`tcp_cleanup_rbuf`). Returns true if the ACK should go out now.
    pub fn on_read(&mut self, emptied: bool) -> bool {
        self.model == DelayedAckModel::Linux
            && self.unacked_segs > 0
            && emptied
            && (self.pushed >= 2 || (self.pushed == 1 && !self.pingpong))
    }

    /// `tcp_measure_rcv_mss` and `tcp_event_data_recv`.
    fn linux_update(&mut self, now: Instant, len: usize, rto: Duration) {
        if len as u32 >= self.rcv_mss {
            self.rcv_mss = (len as u32).min(self.max_mss);
        } else {
            self.pushed = (self.pushed + 1).min(2);
        }
        match self.last_rcv {
            None => {
                self.quick = QUICKACKS;
                self.ato = ATO_MIN;
            }
            Some(last) => {
                let m = now - last;
                self.ato = next_ato(self.ato, m, rto);
                if m > rto {
                    self.quick = QUICKACKS;
                }
            }
        }
        self.last_rcv = Some(now);
    }

    /// An ACK (pure or piggybacked) went out.
    pub fn on_ack_sent(&mut self) {
        if self.unacked_segs > 0 && self.quick > 0 {
            // tcp_dec_quickack_mode: leaving quick-ACK mode resets the ATO
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = ATO_MIN;
            }
        }
        self.unacked_segs = 0;
        self.unacked_bytes = 0;
        self.pushed = 0;
    }
}

/// Linux's adaptive ATO (`tcp_event_data_recv`): `m` is the time since the previous data
/// segment arrived.
pub fn next_ato(ato: Duration, m: Duration, rto: Duration) -> Duration {
    if m <= ATO_MIN / 2 {
        ato / 2 + ATO_MIN / 2
    } else if m < ato {
        (ato / 2 + m).min(rto)
    } else {
        ato
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTO: Duration = Duration::from_secs(1);

    #[test]
    fn linux_quickack_then_delayed() {
        let mut d = DelayedAck::new(DelayedAckModel::Linux, Duration::from_millis(200), 1448);
        for i in 0..QUICKACKS {
            let now = Instant::from_millis(i as u64);
            assert_eq!(
                d.on_data(now, 100, 100, Arrival::InOrder, RTO, None),
                AckDecision::Now
            );
            d.on_ack_sent();
        }
        let now = Instant::from_millis(20);
        assert_eq!(
            d.on_data(now, 100, 100, Arrival::InOrder, RTO, None),
            AckDecision::Delay(now + ATO_MIN)
        );
        // two full-sized segments: immediate
        assert_eq!(
            d.on_data(now, 1448, 1448, Arrival::InOrder, RTO, None),
            AckDecision::Now
        );
    }

    #[test]
    fn linux_timer_inflates_and_read_acks_pushed_segments() {
        let mut d = DelayedAck::new(DelayedAckModel::Linux, Duration::from_millis(200), 1448);
        for i in 0..QUICKACKS {
            d.on_data(
                Instant::from_millis(i as u64),
                1448,
                1448,
                Arrival::InOrder,
                RTO,
                None,
            );
            d.on_ack_sent();
        }
        let t = Instant::from_millis(100);
        assert_eq!(
            d.on_data(t, 100, 100, Arrival::InOrder, RTO, None),
            AckDecision::Delay(t + ATO_MIN)
        );
        assert!(
            d.on_read(true),
            "a small pushed segment, queue drained: ACK now"
        );
        assert!(!d.on_read(false));
        d.on_timer(RTO);
        assert_eq!(d.ato(), ATO_MIN * 2);
        // capped by the receiver's SRTT
        d.on_ack_sent();
        let t = Instant::from_millis(300);
        let srtt = Some(Duration::from_millis(50));
        assert_eq!(
            d.on_data(t, 100, 100, Arrival::InOrder, RTO, srtt),
            AckDecision::Delay(t + Duration::from_millis(50))
        );
        // replying within the ATO enters pingpong: a single pushed segment no longer forces it
        d.on_data_sent(t + Duration::from_millis(1));
        assert!(d.pingpong());
        assert!(!d.on_read(true));
        d.on_timer(RTO);
        assert!(!d.pingpong());
        assert_eq!(d.ato(), ATO_MIN);
    }

    #[test]
    fn linux_counts_only_new_bytes_toward_ack_now() {
        let mut d = DelayedAck::new(DelayedAckModel::Linux, Duration::from_millis(200), 1448);
        for i in 0..QUICKACKS {
            d.on_data(
                Instant::from_millis(i as u64),
                1448,
                1448,
                Arrival::InOrder,
                RTO,
                None,
            );
            d.on_ack_sent();
        }
        // rcv_mss is now 1448: a 1000-byte bundle with 120 new bytes, then another: 240 new
        // bytes are unacknowledged, far below one MSS, so the ACK is still delayed
        let t = Instant::from_millis(100);
        assert_eq!(
            d.on_data(t, 1000, 120, Arrival::InOrder, RTO, None),
            AckDecision::Delay(t + ATO_MIN)
        );
        assert_eq!(
            d.on_data(t, 1000, 120, Arrival::InOrder, RTO, None),
            AckDecision::Delay(t + ATO_MIN)
        );
        assert_eq!(d.unacked_bytes, 240);
        // new data beyond one MSS since the last ACK: now
        assert_eq!(
            d.on_data(t, 1448, 1448, Arrival::InOrder, RTO, None),
            AckDecision::Now
        );
    }

    #[test]
    fn ato_adapts() {
        assert_eq!(next_ato(ATO_MIN, Duration::from_millis(5), RTO), ATO_MIN);
        assert_eq!(
            next_ato(Duration::from_millis(100), Duration::from_millis(50), RTO),
            Duration::from_millis(100)
        );
        assert_eq!(next_ato(ATO_MIN, Duration::from_millis(140), RTO), ATO_MIN);
    }

    #[test]
    fn freebsd_every_second() {
        let mut d = DelayedAck::new(DelayedAckModel::FreeBsd6, Duration::from_millis(100), 1448);
        let now = Instant::from_millis(3);
        assert_eq!(
            d.on_data(now, 10, 10, Arrival::InOrder, RTO, None),
            AckDecision::Delay(Instant::from_millis(103))
        );
        assert_eq!(
            d.on_data(now, 10, 10, Arrival::InOrder, RTO, None),
            AckDecision::Now
        );
        d.on_ack_sent();
        assert_eq!(
            d.on_data(now, 10, 10, Arrival::Urgent, RTO, None),
            AckDecision::Now
        );
    }
}
