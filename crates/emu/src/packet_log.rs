//! The emulator's per-flow log of every packet it read from or wrote to a TUN device, spilled
//! to an anonymous temporary file as fixed-size records (through a 64 KiB buffer), so that a
//! long run's memory does not grow with the packets it carries: the records are read back as
//! a stream when the run's delivery records are built (`records::build`).

use crate::emulator::PktEvent;
use crate::packet::TcpHeader;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Bytes of one encoded [`PktEvent`].
const RECORD: usize = 36;
/// Records read at once when streaming the log back.
const CHUNK: usize = 2048;

/// A log being written.
pub struct PacketLog {
    out: BufWriter<File>,
    len: u64,
}

impl PacketLog {
    pub fn new() -> io::Result<PacketLog> {
        Ok(PacketLog {
            out: BufWriter::with_capacity(64 * 1024, tempfile::tempfile()?),
            len: 0,
        })
    }

    pub fn push(&mut self, e: &PktEvent) -> io::Result<()> {
        self.len += 1;
        self.out.write_all(&encode(e))
    }

    /// The log, complete, to be read back.
    pub fn finish(self) -> io::Result<SpilledLog> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(SpilledLog {
            file: Some(file),
            len: self.len,
        })
    }
}

/// A finished log: its records, in the order they were pushed (time order).
#[derive(Default)]
pub struct SpilledLog {
    file: Option<File>,
    len: u64,
}

impl SpilledLog {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every record, streamed from the file (independent of other iterators over the log).
    /// A read error ends the stream early and is returned by [`SpilledLog::check`].
    pub fn iter(&self) -> impl Iterator<Item = PktEvent> + '_ {
        let mut buf = vec![0u8; RECORD * CHUNK];
        let mut offset = 0u64;
        let total = self.len * RECORD as u64;
        let mut pending: Vec<PktEvent> = Vec::new();
        std::iter::from_fn(move || {
            if pending.is_empty() {
                let file = self.file.as_ref()?;
                let n = ((total - offset) as usize).min(buf.len());
                if n == 0 || file.read_exact_at(&mut buf[..n], offset).is_err() {
                    return None;
                }
                offset += n as u64;
                pending = buf[..n].chunks_exact(RECORD).rev().map(decode).collect();
            }
            pending.pop()
        })
    }

    /// Whether every record can be read back (counts them).
    pub fn check(&self) -> io::Result<()> {
        let n = self.iter().count() as u64;
        if n == self.len {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "packet log: read back {n} of {} records",
                self.len
            )))
        }
    }
}

fn encode(e: &PktEvent) -> [u8; RECORD] {
    let mut b = [0u8; RECORD];
    let h = &e.h;
    b[0..8].copy_from_slice(&e.t.to_le_bytes());
    b[8] = e.side;
    b[9] = e.out as u8;
    b[10] = h.flags;
    b[12..14].copy_from_slice(&h.window.to_le_bytes());
    b[14..16].copy_from_slice(&h.src_port.to_le_bytes());
    b[16..18].copy_from_slice(&h.dst_port.to_le_bytes());
    b[20..24].copy_from_slice(&h.seq.to_le_bytes());
    b[24..28].copy_from_slice(&h.ack.to_le_bytes());
    b[28..32].copy_from_slice(&h.payload_len.to_le_bytes());
    b[32..36].copy_from_slice(&h.ip_len.to_le_bytes());
    b
}

fn decode(b: &[u8]) -> PktEvent {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_in_order_across_chunks() {
        let mut log = PacketLog::new().unwrap();
        let n = 3 * CHUNK as u64 + 17;
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
        for i in 0..n {
            log.push(&ev(i)).unwrap();
        }
        let log = log.finish().unwrap();
        assert_eq!(log.len(), n);
        log.check().unwrap();
        for (i, e) in log.iter().enumerate() {
            let want = ev(i as u64);
            assert_eq!((e.t, e.side, e.out), (want.t, want.side, want.out));
            assert_eq!(e.h, want.h);
        }
        // two streams over one log are independent
        let (mut a, mut b) = (log.iter(), log.iter());
        assert_eq!(a.next().map(|e| e.t), b.next().map(|e| e.t));
        assert_eq!(a.nth(CHUNK).map(|e| e.t), Some(ev(CHUNK as u64 + 1).t));
        assert_eq!(b.next().map(|e| e.t), Some(ev(1).t));
    }
}
