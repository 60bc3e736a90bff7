//! Receiver acknowledgment policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2, mechanisms.md §9), one
//! model per `DelayedAckModel`:
//!
//! - `Linux`: quick-ACK mode (the first [`QUICKACKS`] ACKs go out at once, re-entered after
//!   the receiver was idle for longer than its RTO, as `tcp_event_data_recv` does); otherwise
//!   an ACK is delayed by the adaptive ATO of `tcp_event_data_recv` (min [`ATO_MIN`] = 40 ms,
//!   halved toward the minimum for back-to-back segments, grown by the inter-arrival time
//!   when it is below the ATO, capped at the receiver's RTO) and additionally capped at
//!   `cfg.delayed_ack_timeout` (our stand-in for TCP_DELACK_MAX, 200 ms). An ACK is sent at
//!   once when more than one full-sized segment (`rcv_mss`, estimated as Linux
//!   `tcp_measure_rcv_mss` does, starting at 536) is unacknowledged. Not modelled: pingpong
//!   (interactive) mode.
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
    /// In-order segments / bytes received since the last ACK we sent.
    pub unacked_segs: u32,
    pub unacked_bytes: u64,
    rcv_mss: u32,
    max_mss: u32,
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
        }
    }

    /// Current Linux ATO (zero before the first data segment).
    pub fn ato(&self) -> Duration {
        self.ato
    }
    pub fn quick(&self) -> u32 {
        self.quick
    }

    /// A data segment of `len` payload bytes arrived; `rto` is the receiver's current RTO.
    pub fn on_data(&mut self, now: Instant, len: usize, arrival: Arrival, rto: Duration) -> AckDecision {
        self.unacked_segs += 1;
        self.unacked_bytes += len as u64;
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
                    || self.quick > 0
                    || self.unacked_bytes > self.rcv_mss as u64
                {
                    AckDecision::Now
                } else {
                    AckDecision::Delay(now + self.ato.min(self.timeout).max(ATO_MIN.min(self.timeout)))
                }
            }
        }
    }

    /// `tcp_measure_rcv_mss` and `tcp_event_data_recv`.
    fn linux_update(&mut self, now: Instant, len: usize, rto: Duration) {
        if len as u32 >= self.rcv_mss {
            self.rcv_mss = (len as u32).min(self.max_mss);
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
            self.quick -= 1;
        }
        self.unacked_segs = 0;
        self.unacked_bytes = 0;
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
            assert_eq!(d.on_data(now, 100, Arrival::InOrder, RTO), AckDecision::Now);
            d.on_ack_sent();
        }
        let now = Instant::from_millis(20);
        assert_eq!(d.on_data(now, 100, Arrival::InOrder, RTO), AckDecision::Delay(now + ATO_MIN));
        // two full-sized segments: immediate
        assert_eq!(d.on_data(now, 1448, Arrival::InOrder, RTO), AckDecision::Now);
    }

    #[test]
    fn ato_adapts() {
        assert_eq!(next_ato(ATO_MIN, Duration::from_millis(5), RTO), ATO_MIN);
        assert_eq!(next_ato(Duration::from_millis(100), Duration::from_millis(50), RTO), Duration::from_millis(100));
        assert_eq!(next_ato(ATO_MIN, Duration::from_millis(140), RTO), ATO_MIN);
    }

    #[test]
    fn freebsd_every_second() {
        let mut d = DelayedAck::new(DelayedAckModel::FreeBsd6, Duration::from_millis(100), 1448);
        let now = Instant::from_millis(3);
        assert_eq!(d.on_data(now, 10, Arrival::InOrder, RTO), AckDecision::Delay(Instant::from_millis(103)));
        assert_eq!(d.on_data(now, 10, Arrival::InOrder, RTO), AckDecision::Now);
        d.on_ack_sent();
        assert_eq!(d.on_data(now, 10, Arrival::Urgent, RTO), AckDecision::Now);
    }
}
