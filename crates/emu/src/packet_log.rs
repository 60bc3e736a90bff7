//! The emulator's per-flow log of every packet it read from or wrote to a TUN device: a
//! [`SpillLog`] of 36-byte records, so that a long run's memory does not grow with the
//! packets it carries; it is read back as a stream when the run's delivery records are built
//! (`records::build`).

use crate::emulator::PktEvent;
use crate::packet::TcpHeader;
use crate::spill::{Record, SpillLog, SpilledLog};

/// A log being written.
pub type PacketLog = SpillLog<PktEvent>;
/// A finished log, in time order.
pub type SpilledPackets = SpilledLog<PktEvent>;

impl Record for PktEvent {
    const SIZE: usize = 36;

    fn encode(&self, b: &mut [u8]) {
        let h = &self.h;
        b.fill(0);
        b[0..8].copy_from_slice(&self.t.to_le_bytes());
        b[8] = self.side;
        b[9] = self.out as u8;
        b[10] = h.flags;
        b[12..14].copy_from_slice(&h.window.to_le_bytes());
        b[14..16].copy_from_slice(&h.src_port.to_le_bytes());
        b[16..18].copy_from_slice(&h.dst_port.to_le_bytes());
        b[20..24].copy_from_slice(&h.seq.to_le_bytes());
        b[24..28].copy_from_slice(&h.ack.to_le_bytes());
        b[28..32].copy_from_slice(&h.payload_len.to_le_bytes());
        b[32..36].copy_from_slice(&h.ip_len.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Self {
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        PktEvent {
            t: u64::from_le_bytes(b[0..8].try_into().expect("8 bytes")),
            side: b[8],
            out: b[9] != 0,
            h: TcpHeader {
                src_port: u16_at(14),
                dst_port: u16_at(16),
                seq: u32_at(20),
                ack: u32_at(24),
                flags: b[10],
                window: u16_at(12),
                payload_len: u32_at(28),
                ip_len: u32_at(32),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_comes_back() {
        let ev = |i: u64| PktEvent {
            t: i * 1000 + 7,
            side: (i % 2) as u8,
            out: i.is_multiple_of(3),
            h: TcpHeader {
                src_port: 40000 + (i % 100) as u16,
                dst_port: 5001,
                seq: u32::MAX - i as u32,
                ack: i as u32 * 3,
                flags: 0x18,
                window: 65535 - i as u16,
                payload_len: (i % 1500) as u32,
                ip_len: 52 + (i % 1500) as u32,
            },
        };
        let n = 5000;
        let mut log = PacketLog::default();
        for i in 0..n {
            log.push(&ev(i));
        }
        let log: SpilledPackets = log.finish().unwrap();
        assert_eq!(log.len(), n);
        for (i, e) in log.iter().enumerate() {
            let want = ev(i as u64);
            assert_eq!((e.t, e.side, e.out), (want.t, want.side, want.out));
            assert_eq!(e.h, want.h);
        }
    }
}
