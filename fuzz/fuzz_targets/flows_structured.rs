//! Fuzz flow reconstruction on well-formed packets with arbitrary header fields: each 12-byte
//! chunk of the input is one packet (direction, which capture, flags, time step, sequence and
//! acknowledgment deltas, payload length, window) of at most three connections, so the fuzzer
//! spends its time in `flows` (sequence unwrapping and wraparound, SYN/FIN/RST anywhere,
//! reordering, duplicates, retransmissions, receiver-only packets) instead of in the container
//! format. Nothing may panic, and the metrics must be internally consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::net::{IpAddr, Ipv4Addr};
use thinlab_tcp::wire::{Flags, Segment};
use thinlab_trace::flows::analyze;
use thinlab_trace::pcap::TcpPacket;

fuzz_target!(|data: &[u8]| {
    let mut snd = Vec::new();
    let mut rcv = Vec::new();
    let mut ts = 1_000_000_000u64;
    let mut seq = [0x7fff_fff0u32, 0xffff_fff0];
    for (i, c) in data.chunks_exact(12).enumerate() {
        let dir = usize::from(c[0] & 1);
        let conn = u16::from((c[0] >> 1) % 3);
        let to_rx = c[0] & 0x08 != 0;
        let both = c[0] & 0x10 != 0;
        // Time: mostly forward, sometimes backward (non-monotonic capture clocks).
        let step = u64::from(u16::from_le_bytes([c[1], c[2]])) * 1000;
        ts = if c[0] & 0x20 != 0 { ts.saturating_sub(step) } else { ts + step };
        let dseq = i16::from_le_bytes([c[3], c[4]]) as i32;
        seq[dir] = seq[dir].wrapping_add(dseq as u32);
        let ack = seq[1 - dir].wrapping_add(u32::from(c[5]));
        let payload_len = u32::from(u16::from_le_bytes([c[6], c[7]]) % 3000);
        let hosts = [
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        ];
        let ports = [40000 + conn, 5001];
        let p = TcpPacket {
            ts_ns: ts,
            src: hosts[dir],
            dst: hosts[1 - dir],
            seg: Segment {
                src_port: ports[dir],
                dst_port: ports[1 - dir],
                seq: seq[dir],
                ack,
                flags: Flags(c[8]),
                window: u16::from_le_bytes([c[9], c[10]]),
                ..Segment::default()
            },
            payload_len,
            record: i as u64,
        };
        if c[11] & 1 == 0 {
            seq[dir] = seq[dir].wrapping_add(payload_len);
        }
        if to_rx || both {
            rcv.push(p.clone());
        }
        if !to_rx || both {
            snd.push(p);
        }
    }
    for c in analyze(&snd, Some(&rcv)).iter().chain(&analyze(&snd, None)) {
        let m = &c.metrics;
        assert!(m.retransmissions <= m.data_packets_sent);
        assert!(m.unique_bytes_sent <= m.payload_bytes_sent);
        assert!(c.first_ns <= c.last_ns);
        assert!(c.extras.packets <= snd.len() as u64);
    }
});
