//! Fuzz the whole `thinlab analyze SENDER --receiver RECEIVER` path on arbitrary bytes: the
//! input is split into a sender and a receiver capture (the first two bytes give the split),
//! both are streamed through `CaptureReader` (chunk size from the third byte) into the
//! streaming `Analyzer`, and every connection's metrics are computed. Nothing may panic, and
//! the reader's statistics must be consistent with what it yielded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use thinlab_trace::flows::{Analyzer, Select};
use thinlab_trace::pcap::CaptureReader;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let split = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let chunk = 1 + usize::from(data[2]);
    let body = &data[3..];
    let (snd, rcv) = body.split_at(split.min(body.len()));
    let mut a = Analyzer::new();
    let mut r = CaptureReader::with_chunk(snd, chunk);
    let mut n = 0u64;
    for p in &mut r {
        a.sender_packet(&p);
        n += 1;
    }
    let st = r.finish();
    assert_eq!(st.tcp_packets, n);
    assert!(st.stopped_at.is_none_or(|at| at <= snd.len() as u64));
    let conns = a.connections();
    let mut rx = a.finish_sender(Select::Primary);
    let mut r = CaptureReader::with_chunk(rcv, chunk);
    for p in &mut r {
        rx.receiver_packet(&p);
    }
    let st = r.finish();
    assert!(st.stopped_at.is_none_or(|at| at <= rcv.len() as u64));
    let out = rx.finish();
    assert_eq!(out.len(), conns);
    for c in &out {
        let m = &c.metrics;
        assert!(m.retransmissions <= m.data_packets_sent);
        assert!(c.first_ns <= c.last_ns);
    }
});
