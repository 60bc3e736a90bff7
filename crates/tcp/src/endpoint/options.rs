//! Option negotiation on SYN / SYN-ACK: MSS (RFC 9293 §3.7.1), SACK-permitted (RFC 2018),
//! window scale and timestamps (RFC 7323). Each option is used only if both sides offered it;
//! a SYN-ACK carries only options the SYN offered. Without an MSS option the peer's MSS is 536.
//! `cfg.mss` is payload bytes: the effective send MSS is `min(cfg.mss, peer MSS)`.
//!
//! The timestamp clock is milliseconds of the driver's time (Linux jiffies at HZ=1000).

use crate::config::TcpConfig;
use crate::wire::TcpOptions;

/// RFC 9293 default send MSS when the SYN has no MSS option.
pub const DEFAULT_MSS: u16 = 536;
/// RFC 7323 §2.3 maximum shift.
pub const MAX_WSCALE: u8 = 14;

/// What the handshake settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    pub send_mss: u16,
    pub sack: bool,
    pub timestamps: bool,
    /// Shift applied to the peer's window field.
    pub snd_wscale: u8,
    /// Shift applied to our window field.
    pub rcv_wscale: u8,
}

impl Negotiated {
    /// Before the handshake: nothing negotiated.
    pub fn initial(cfg: &TcpConfig) -> Self {
        Negotiated {
            send_mss: cfg.mss.min(DEFAULT_MSS),
            sack: false,
            timestamps: false,
            snd_wscale: 0,
            rcv_wscale: 0,
        }
    }
}

/// The smallest shift that lets the receive buffer be advertised in 16 bits.
pub fn our_wscale(recv_buffer: usize) -> u8 {
    let mut s = 0u8;
    while s < MAX_WSCALE && (recv_buffer >> s) > 0xffff {
        s += 1;
    }
    s
}

pub use crate::time::ts_clock;

/// Options of our SYN (active open) or SYN-ACK (`peer` = the SYN's options).
pub fn handshake_options(cfg: &TcpConfig, peer: Option<&TcpOptions>, tsval: u32) -> TcpOptions {
    let offered = |ours: bool, theirs: fn(&TcpOptions) -> bool| ours && peer.is_none_or(theirs);
    let mut o = TcpOptions {
        mss: Some(cfg.mss),
        ..TcpOptions::default()
    };
    if offered(cfg.window_scale, |p| p.window_scale.is_some()) {
        o.window_scale = Some(our_wscale(cfg.recv_buffer));
    }
    if offered(cfg.sack, |p| p.sack_permitted) {
        o.sack_permitted = true;
    }
    if offered(cfg.timestamps, |p| p.timestamps.is_some()) {
        let ecr = peer.and_then(|p| p.timestamps).map_or(0, |t| t.0);
        o.timestamps = Some((tsval, ecr));
    }
    o
}

/// Settle the options from our configuration and the peer's SYN or SYN-ACK options.
pub fn negotiate(cfg: &TcpConfig, peer: &TcpOptions) -> Negotiated {
    let ws = cfg.window_scale && peer.window_scale.is_some();
    Negotiated {
        send_mss: cfg.mss.min(peer.mss.unwrap_or(DEFAULT_MSS)).max(1),
        sack: cfg.sack && peer.sack_permitted,
        timestamps: cfg.timestamps && peer.timestamps.is_some(),
        snd_wscale: if ws {
            peer.window_scale.unwrap_or(0).min(MAX_WSCALE)
        } else {
            0
        },
        rcv_wscale: if ws { our_wscale(cfg.recv_buffer) } else { 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Profile;

    #[test]
    fn both_sides_must_offer() {
        let mut a = TcpConfig::from_profile(Profile::Linux2622);
        let syn = handshake_options(&a, None, 5);
        assert!(syn.sack_permitted && syn.window_scale.is_some() && syn.timestamps == Some((5, 0)));
        let mut b = a.clone();
        b.sack = false;
        b.mss = 1000;
        let synack = handshake_options(&b, Some(&syn), 9);
        assert!(!synack.sack_permitted);
        assert_eq!(synack.timestamps, Some((9, 5)));
        let n = negotiate(&a, &synack);
        assert_eq!(n.send_mss, 1000);
        assert!(!n.sack && n.timestamps);
        a.window_scale = false;
        let n = negotiate(&a, &synack);
        assert_eq!((n.snd_wscale, n.rcv_wscale), (0, 0));
        assert_eq!(negotiate(&a, &TcpOptions::default()).send_mss, 536);
        assert_eq!(our_wscale(256 * 1024), 3);
    }
}
