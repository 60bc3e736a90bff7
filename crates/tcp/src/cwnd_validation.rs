//! Whether the congestion window is being used, so that an ACK may grow it (RFC 7661 §4;
//! Linux ≥ 4.x `tcp_cwnd_validate`, `tcp_is_cwnd_limited`), selected by
//! `TcpConfig::cwnd_limited_window` (the `linux` profile).
//!
//! Linux 2.6.22, and the other profiles, grow cwnd on an ACK only if the packets in flight
//! before it reached cwnd. Modern Linux remembers, per window of data, whether the sender
//! was cwnd-limited at any transmission of it (`is_cwnd_limited`, until snd_una passes the
//! `cwnd_usage_seq` recorded then), and otherwise the largest flight of that window
//! (`max_packets_out`). An ACK may grow cwnd if that window was cwnd-limited, or, in slow
//! start, while cwnd is below twice its largest flight.
//!
//! This matters for streams that fill their window only now and then, such as a write every
//! 30 ms at 100 ms RTT. There every ACK of a window that once hit cwnd counts, so cwnd regrows
//! after a loss. With the per-ACK rule cwnd stays at ssthresh, and later writes wait for ACKs.

/// The window-usage state of one connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CwndUsage {
    /// Some transmission of the current window found the flight at cwnd.
    pub is_cwnd_limited: bool,
    /// The largest flight of the current window (segments).
    pub max_packets_out: u32,
    /// The window ends when snd_una passes this (sequence space).
    pub usage_seq: u64,
}

impl CwndUsage {
    /// Linux `tcp_cwnd_validate`, after a transmission opportunity: something was sent or the
    /// sender was held by cwnd. `limited`: the flight reached cwnd.
    pub fn on_send(&mut self, una_seq: u64, nxt_seq: u64, packets_out: u32, limited: bool) {
        if una_seq >= self.usage_seq
            || limited
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = limited;
            self.max_packets_out = packets_out;
            self.usage_seq = nxt_seq;
        }
    }

    /// Linux `tcp_is_cwnd_limited`: may an ACK grow `cwnd`?
    pub fn may_grow(&self, cwnd: u32, in_slow_start: bool) -> bool {
        self.is_cwnd_limited || (in_slow_start && cwnd < 2 * self.max_packets_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_that_once_hit_cwnd_counts_until_it_is_acked() {
        let mut u = CwndUsage::default();
        u.on_send(0, 100, 3, true); // flight reached cwnd 3
        assert!(u.may_grow(3, false));
        // later sends of the same window with room left do not clear it
        u.on_send(50, 150, 2, false);
        assert!(u.may_grow(3, false));
        // once snd_una passes the window's end, the next send starts a new window
        u.on_send(100, 200, 1, false);
        assert!(!u.may_grow(3, false));
        assert_eq!(u.max_packets_out, 1);
    }

    #[test]
    fn slow_start_grows_to_twice_the_largest_flight() {
        let mut u = CwndUsage::default();
        u.on_send(0, 100, 4, false);
        assert!(u.may_grow(7, true));
        assert!(!u.may_grow(8, true));
        assert!(!u.may_grow(7, false), "not in congestion avoidance");
    }
}
