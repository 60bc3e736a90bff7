//! A one-way link: FIFO serialisation at `rate`, then propagation `delay` plus an optional
//! per-packet jitter that never reorders, behind a drop-tail queue.
//!
//! The link is computed at admission rather than with a departure event: a packet offered at
//! `now` starts serialising at `max(now, busy_until)`, finishes `ser = ceil(bits·10⁹/rate)` ns
//! later, and arrives at the far end at `max(tx_end + delay + jitter, previous arrival)`. The
//! queue is the set of admitted packets that have not started serialising at `now` (the
//! packet in service is not in the queue); a packet that would wait is dropped when the queue
//! already holds `limit` packets (or when its bytes would exceed `limit` bytes). This is
//! exactly a FIFO drop-tail queue in front of a serialiser, with one event per packet less.

use crate::scenario::QueueLimit;
use std::collections::VecDeque;

/// Bytes of framing outside the TCP header: Ethernet II header (14) + IPv4 header (20).
pub const FRAMING_BYTES: u32 = 14 + 20;

/// TCP header length with the options in `opts` exactly as the wire codec lays them out
/// (Linux's word-aligned layout; 20..=60 bytes).
pub fn tcp_header_len(opts: &thinlab_tcp::TcpOptions) -> u32 {
    thinlab_tcp::wire::header_len(opts) as u32
}

/// Bytes a segment occupies on a link: framing + TCP header with options + payload.
pub fn frame_len(seg: &thinlab_tcp::Segment) -> u32 {
    FRAMING_BYTES + tcp_header_len(&seg.options) + seg.payload.len() as u32
}

/// Serialisation time in ns of `bytes` at `rate_bps` (rounded up; zero for an infinite rate).
#[inline]
pub fn serialisation_ns(bytes: u32, rate_bps: Option<u64>) -> u64 {
    match rate_bps {
        None => 0,
        // bytes·8·10⁹ fits in a u64 below 2³¹ bytes: a 64-bit division instead of a 128-bit one.
        Some(r) if bytes < 1 << 31 => (bytes as u64 * 8_000_000_000).div_ceil(r.max(1)),
        Some(r) => ((bytes as u128 * 8 * 1_000_000_000).div_ceil(r.max(1) as u128)) as u64,
    }
}

/// Counters of one link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to the queue (after any loss model).
    pub offered: u64,
    /// Packets admitted and carried.
    pub carried: u64,
    pub carried_bytes: u64,
    /// Packets dropped because the queue was full.
    pub dropped_queue: u64,
    /// Largest queue seen, in packets (excluding the one in service).
    pub max_queue_packets: u64,
}

#[derive(Debug)]
pub struct Link {
    rate_bps: Option<u64>,
    delay_ns: u64,
    limit: Option<QueueLimit>,
    /// When the last admitted packet finishes serialising.
    busy_until: u64,
    /// When the last admitted packet arrives at the far end.
    last_arrival: u64,
    /// Admitted packets not yet in service at the last check: (tx_start, bytes).
    waiting: VecDeque<(u64, u32)>,
    waiting_bytes: u64,
    /// The last packet size offered and its serialisation time: sizes repeat (a direction
    /// carries full segments or ACKs), and this spares the division.
    last_size: (u32, u64),
    pub stats: LinkStats,
}

impl Link {
    /// `rate_bps = None` is an infinite rate (pure delay, never queues); `limit = None` an
    /// unbounded queue.
    pub fn new(rate_bps: Option<u64>, delay_ns: u64, limit: Option<QueueLimit>) -> Link {
        Link {
            rate_bps,
            delay_ns,
            limit,
            busy_until: 0,
            last_arrival: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            last_size: (0, serialisation_ns(0, rate_bps)),
            stats: LinkStats::default(),
        }
    }

    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    pub fn delay_ns(&self) -> u64 {
        self.delay_ns
    }

    /// Packets waiting behind the one in service at `now`.
    pub fn queue_len(&mut self, now: u64) -> usize {
        self.prune(now);
        self.waiting.len()
    }

    fn prune(&mut self, now: u64) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting_bytes -= bytes as u64;
            self.waiting.pop_front();
        }
    }

    /// Offers a `bytes`-long frame at `now` with extra delay `jitter_ns`. Returns the arrival
    /// time at the far end, or `None` if the drop-tail queue is full.
    pub fn offer(&mut self, now: u64, bytes: u32, jitter_ns: u64) -> Option<u64> {
        self.stats.offered += 1;
        let tx_start = now.max(self.busy_until);
        if tx_start > now {
            self.prune(now);
            let full = match self.limit {
                None => false,
                Some(QueueLimit::Packets(p)) => self.waiting.len() as u64 >= p,
                Some(QueueLimit::Bytes(b)) => self.waiting_bytes + bytes as u64 > b,
            };
            if full {
                self.stats.dropped_queue += 1;
                return None;
            }
            self.waiting.push_back((tx_start, bytes));
            self.waiting_bytes += bytes as u64;
            self.stats.max_queue_packets =
                self.stats.max_queue_packets.max(self.waiting.len() as u64);
        }
        if self.last_size.0 != bytes {
            self.last_size = (bytes, serialisation_ns(bytes, self.rate_bps));
        }
        let tx_end = tx_start.saturating_add(self.last_size.1);
        self.busy_until = tx_end;
        let arrival = tx_end
            .saturating_add(self.delay_ns)
            .saturating_add(jitter_ns)
            .max(self.last_arrival);
        self.last_arrival = arrival;
        self.stats.carried += 1;
        self.stats.carried_bytes += bytes as u64;
        Some(arrival)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_and_propagation_exact() {
        // 1000 bytes at 8 Mbit/s = 1 ms; delay 10 ms.
        let mut l = Link::new(Some(8_000_000), 10_000_000, None);
        assert_eq!(l.offer(0, 1000, 0), Some(11_000_000));
        // Back-to-back: the second waits for the first.
        assert_eq!(l.offer(0, 1000, 0), Some(12_000_000));
        // After the link went idle, no waiting.
        assert_eq!(
            l.offer(50_000_000, 500, 0),
            Some(50_000_000 + 500_000 + 10_000_000)
        );
        // Sizes alternating (segments and ACKs): each its own serialisation time.
        let mut l = Link::new(Some(8_000_000), 0, None);
        for (i, bytes) in [1000, 40, 40, 1000, 1500, 40].into_iter().enumerate() {
            let now = 1_000_000_000 * i as u64;
            assert_eq!(l.offer(now, bytes, 0), Some(now + 1000 * bytes as u64));
        }
        // Rounding up: 1 byte at 3 bit/s.
        assert_eq!(serialisation_ns(1, Some(3)), 2_666_666_667);
        assert_eq!(serialisation_ns(1500, None), 0);
    }

    #[test]
    fn drop_tail_packets() {
        let mut l = Link::new(Some(8_000_000), 0, Some(QueueLimit::Packets(2)));
        let r: Vec<bool> = (0..5).map(|_| l.offer(0, 1000, 0).is_some()).collect();
        // One in service, two queued, two dropped.
        assert_eq!(r, vec![true, true, true, false, false]);
        assert_eq!(l.stats.dropped_queue, 2);
        // At 1 ms the first is done and the second in service: one slot frees.
        assert_eq!(l.queue_len(1_000_000), 1);
        assert!(l.offer(1_000_000, 1000, 0).is_some());
        assert!(l.offer(1_000_000, 1000, 0).is_none());
    }

    #[test]
    fn drop_tail_bytes() {
        let mut l = Link::new(Some(8_000_000), 0, Some(QueueLimit::Bytes(2500)));
        assert!(l.offer(0, 1000, 0).is_some()); // in service
        assert!(l.offer(0, 1000, 0).is_some()); // 1000 queued
        assert!(l.offer(0, 1000, 0).is_some()); // 2000 queued
        assert!(l.offer(0, 1000, 0).is_none()); // 3000 > 2500
        assert!(l.offer(0, 500, 0).is_some()); // 2500 fits exactly
        assert!(l.offer(0, 1, 0).is_none());
    }

    #[test]
    fn jitter_never_reorders() {
        let mut l = Link::new(Some(100_000_000), 1_000_000, None);
        let a = l.offer(0, 100, 5_000_000).unwrap();
        let b = l.offer(0, 100, 0).unwrap();
        assert!(b >= a);
        assert_eq!(a, b);
    }

    #[test]
    fn infinite_rate_pure_delay() {
        let mut l = Link::new(None, 7, Some(QueueLimit::Packets(1)));
        for _ in 0..10 {
            assert_eq!(l.offer(3, 1500, 0), Some(10));
        }
    }
}
