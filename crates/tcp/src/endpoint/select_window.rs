//! Receive-window selection: what window an outgoing segment advertises. The Linux rule,
//! `__tcp_select_window` and `tcp_select_window` in `net/ipv4/tcp_output.c` (receiver-side
//! silly window syndrome avoidance, RFC 9293 §3.8.6.2.2 / RFC 1122 §4.2.3.3), without the
//! parts thinlab does not model (memory pressure, `rcv_ssthresh` window growth, the
//! `tcp_adv_win_scale` overhead share):
//!
//! - `full_space` = min(window clamp, receive buffer); `mss` = the receiver's estimate of the
//!   peer's segment size (`icsk_ack.rcv_mss`), at most `full_space`;
//! - if the free space is below half of `full_space` it is rounded down to the window-scale
//!   unit, and a free space below `buffer/16` or below one `mss` advertises **0**;
//! - without window scaling the window moves **in MSS multiples with hysteresis**: the current
//!   offer `rcv_wnd` is kept while it lies in `(free − mss, free]`; otherwise it becomes
//!   `free` rounded down to a multiple of `mss` (and when `mss == full_space`, a free space
//!   more than half a buffer above the offer is advertised whole);
//! - with window scaling the free space is advertised, rounded up to the scale unit;
//! - `tcp_select_window`: the offer never shrinks below what the previous one still grants
//!   (`rcv_wup + rcv_wnd − rcv_nxt`), rounded up to the scale unit.
//!
//! Why it matters here: with a byte-exact window every ACK of a receiver whose application reads
//! varying amounts advertises a different window, and an ACK that changes the window is not a
//! duplicate ACK (RFC 5681 §2, docs/spec/mechanisms.md, thin dupACK), so dupACK-based fast
//! retransmit (and
//! thin dupACK) would stall. Linux's rounding keeps the window field constant across such ACKs.
//!
//! Invariant: the result is a multiple of the scale unit or equal to the unshrunk previous
//! offer, never more than `full_space` rounded up to the scale unit, and 0 only when the
//! free space is below the SWS thresholds.

/// Inputs of one window selection (bytes, unscaled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowInput {
    /// Free receive-buffer space now (`tcp_space`).
    pub free_space: u64,
    /// The whole receive buffer (`tcp_full_space`).
    pub allowed_space: u64,
    /// The largest window we may advertise (`window_clamp`, e.g. 65535 << wscale).
    pub window_clamp: u64,
    /// Receiver's MSS estimate of the peer (`icsk_ack.rcv_mss`).
    pub rcv_mss: u64,
    /// Our receive window scale shift.
    pub wscale: u8,
    /// The window chosen at the last ACK (`tp->rcv_wnd`).
    pub rcv_wnd: u64,
}

/// `__tcp_select_window`: the window we would like to offer now.
pub fn linux_select(i: &WindowInput) -> u64 {
    let full_space = i.window_clamp.min(i.allowed_space);
    let unit = 1u64 << i.wscale;
    let mut mss = i.rcv_mss;
    if mss > full_space {
        mss = full_space;
        if mss == 0 {
            return 0;
        }
    }
    let mut free = i.free_space.min(full_space);
    if free < full_space / 2 {
        free -= free % unit;
        if free < i.allowed_space / 16 || free < mss {
            return 0;
        }
    }
    if i.wscale > 0 {
        free.div_ceil(unit) * unit
    } else {
        let window = i.rcv_wnd;
        if window + mss <= free || window > free {
            free - free % mss.max(1)
        } else if mss == full_space && free > window + full_space / 2 {
            free
        } else {
            window
        }
    }
}

/// `tcp_select_window`: never shrink the offer below `cur_win` (what the previous
/// advertisement still grants beyond rcv_nxt).
pub fn never_shrink(new_win: u64, cur_win: u64, wscale: u8) -> u64 {
    if new_win < cur_win {
        let unit = 1u64 << wscale;
        cur_win.div_ceil(unit) * unit
    } else {
        new_win
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(free: u64, rcv_wnd: u64) -> WindowInput {
        WindowInput {
            free_space: free,
            allowed_space: 65_535,
            window_clamp: 65_535,
            rcv_mss: 1448,
            wscale: 0,
            rcv_wnd,
        }
    }

    #[test]
    fn window_moves_in_mss_multiples_with_hysteresis() {
        // first selection: free space rounded down to a multiple of the MSS
        assert_eq!(linux_select(&input(65_535, 0)), 45 * 1448);
        let w = 40 * 1448;
        // reads of varying size leave the free space within one MSS above the offer: kept
        for free in [w, w + 1, w + 700, w + 1447] {
            assert_eq!(linux_select(&input(free, w)), w, "free {free}");
        }
        // a full MSS more free: the next multiple
        assert_eq!(linux_select(&input(w + 1448, w)), w + 1448);
        // less free than offered: rounded down
        assert_eq!(linux_select(&input(w - 1, w)), 39 * 1448);
    }

    #[test]
    fn receiver_sws_avoidance_and_scaling() {
        // below half the buffer and below one MSS (or buffer/16): a zero window
        assert_eq!(linux_select(&input(1000, 2896)), 0);
        assert_eq!(linux_select(&input(4000, 2896)), 0, "below 65535/16");
        assert_eq!(
            linux_select(&input(5000, 2896)),
            3 * 1448,
            "≥ 65535/16 and ≥ mss: rounded"
        );
        let mut s = input(100_000, 0);
        s.allowed_space = 1 << 20;
        s.window_clamp = 1 << 20;
        s.wscale = 7;
        assert_eq!(
            linux_select(&s),
            99_968,
            "scaled, below half the buffer: down to the unit"
        );
        s.free_space = 600_000;
        assert_eq!(linux_select(&s), 600_064, "scaled: rounded up to the unit");
        // the MSS estimate is capped by the buffer
        let mut s = input(4000, 0);
        s.allowed_space = 4000;
        s.window_clamp = 4000;
        s.rcv_mss = 1000;
        assert_eq!(linux_select(&s), 4000);
        s.free_space = 1500;
        assert_eq!(
            linux_select(&s),
            1000,
            "below half the buffer but ≥ one MSS: rounded down"
        );
        s.free_space = 900;
        assert_eq!(linux_select(&s), 0, "below one MSS");
    }

    #[test]
    fn the_offer_never_shrinks() {
        assert_eq!(never_shrink(2000, 3000, 0), 3000);
        assert_eq!(never_shrink(2000, 3000, 7), 3072);
        assert_eq!(never_shrink(4000, 3000, 0), 4000);
    }
}
