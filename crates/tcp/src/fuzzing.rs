//! A byte-driven script for fuzzing an established endpoint (the `endpoint_segments` fuzz
//! target and a property test run it): every input is a valid script. The endpoint runs the
//! `linux` profile with every mechanism on (the RDB variant and the receiver's SACK/timestamp
//! offer chosen by the first bytes); the script writes, reads, lets time pass, closes, and
//! injects arbitrary segments from the peer — ACKs of any value, SACK and D-SACK blocks
//! anywhere, window changes, old, overlapping and out-of-order data, FIN, RST.
//!
//! After every step the endpoint must not have panicked and [`Endpoint::check_consistency`]
//! must hold; [`run_script`] panics otherwise.

use crate::config::{Mechanisms, Profile, RdbVariant, TcpConfig};
use crate::endpoint::Endpoint;
use crate::time::Instant;
use crate::wire::{Flags, Segment, TcpOptions};
use bytes::Bytes;

const EP_ISN: u32 = 1_000_000;
const PEER_ISN: u32 = 5_000_000;

/// Reads bytes of the script, 0 once exhausted.
struct Script<'a>(std::slice::Iter<'a, u8>);

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        self.0.next().copied().unwrap_or(0)
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }
    fn done(&self) -> bool {
        self.0.len() == 0
    }
}

/// Run one script; panics if the endpoint's invariants break. Returns the endpoint's counters
/// (what the script exercised).
pub fn run_script(data: &[u8]) -> crate::Stats {
    let mut s = Script(data.iter());
    let mut cfg = TcpConfig::from_profile(Profile::Linux);
    cfg.mechanisms = Mechanisms {
        rdb: true,
        linear_timeouts: true,
        thin_dupack: true,
        early_retransmit: true,
        er_threshold: true,
        tlp: true,
        rack: true,
    };
    let first = s.byte();
    cfg.rdb_variant =
        [RdbVariant::Seed, RdbVariant::Patch, RdbVariant::Adaptive][first as usize % 3];
    cfg.send_buffer = 64 * 1024;
    let peer_sack = first & 4 == 0;
    let peer_ts = first & 8 == 0;
    let mut now = Instant::ZERO;
    let mut ep = Endpoint::connect(now, cfg, 1000, 2000, EP_ISN);
    while ep.poll_transmit(now).is_some() {}
    now = Instant::from_millis(50);
    let syn_ack = Segment {
        src_port: 2000,
        dst_port: 1000,
        seq: PEER_ISN,
        ack: EP_ISN.wrapping_add(1),
        flags: Flags::SYN | Flags::ACK,
        window: 65535,
        options: TcpOptions {
            mss: Some(1000),
            sack_permitted: peer_sack,
            timestamps: peer_ts.then_some((1, 1)),
            window_scale: Some(2),
            ..TcpOptions::default()
        },
        payload: Bytes::new(),
    };
    ep.handle_segment(now, syn_ack);
    check(&ep, "handshake");
    let mut sent_to = 0u32; // highest stream offset the endpoint has sent
    while !s.done() {
        let op = s.byte() % 8;
        match op {
            0 => {
                let n = s.byte() as usize * 8 + 1;
                let _ = ep.write(now, &vec![7u8; n]);
            }
            1 => {
                now += std::time::Duration::from_micros(u64::from(s.u16()) * 20);
                if ep.poll_timeout().is_some_and(|t| t <= now) {
                    ep.handle_timeout(now);
                }
            }
            2 | 3 => {
                // an ACK near what was sent (op 3: possibly beyond it), maybe with SACK blocks
                // (above the ACK, or below it as a D-SACK) and a window change
                let d = u32::from(s.byte()) * 16;
                let ack = if op == 2 {
                    sent_to.saturating_sub(d)
                } else {
                    sent_to + d / 64
                };
                let mut seg = peer_segment(ack, 0, Flags::ACK, s.u16(), peer_ts.then_some((2, 1)));
                for _ in 0..(s.byte() % 5) {
                    let (a, b) = (u32::from(s.byte()), u32::from(s.byte()));
                    let l = if a & 1 == 0 {
                        ack + a * 8
                    } else {
                        ack.saturating_sub(a * 8)
                    };
                    let r = l + b * 8 + 1;
                    let wire = |o: u32| EP_ISN.wrapping_add(1).wrapping_add(o);
                    if seg
                        .options
                        .sack_blocks
                        .try_push((wire(l), wire(r)))
                        .is_err()
                    {
                        break;
                    }
                }
                ep.handle_segment(now, seg);
            }
            4 => {
                // peer data: anywhere around what it has sent, any length
                let off = u32::from(s.u16());
                let len = s.byte() as usize * 4;
                let mut seg = peer_segment(sent_to, off, Flags::ACK | Flags::PSH, 65535, None);
                seg.payload = Bytes::from(vec![9u8; len]);
                ep.handle_segment(now, seg);
            }
            5 => {
                let _ = ep.read();
            }
            6 => {
                let flags = [Flags::ACK | Flags::FIN, Flags::RST, Flags::ACK | Flags::SYN]
                    [s.byte() as usize % 3];
                let off = u32::from(s.byte());
                ep.handle_segment(now, peer_segment(sent_to, off, flags, 65535, None));
            }
            _ => {
                if s.byte() == 0 {
                    ep.close(now);
                }
            }
        }
        while let Some(seg) = ep.poll_transmit(now) {
            let off = seg.seq.wrapping_sub(EP_ISN.wrapping_add(1));
            if off < 1 << 30 {
                sent_to = sent_to.max(off + seg.payload.len() as u32);
            }
        }
        while ep.poll_event().is_some() {}
        check(&ep, "step");
    }
    ep.stats().clone()
}

fn peer_segment(ack: u32, off: u32, flags: Flags, window: u16, ts: Option<(u32, u32)>) -> Segment {
    Segment {
        src_port: 2000,
        dst_port: 1000,
        seq: PEER_ISN.wrapping_add(1).wrapping_add(off),
        ack: EP_ISN.wrapping_add(1).wrapping_add(ack),
        flags,
        window,
        options: TcpOptions {
            timestamps: ts,
            ..TcpOptions::default()
        },
        payload: Bytes::new(),
    }
}

fn check(ep: &Endpoint, at: &str) {
    if let Err(e) = ep.check_consistency() {
        panic!("{at}: {e}");
    }
}
