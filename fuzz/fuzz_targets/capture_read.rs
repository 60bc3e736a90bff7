//! Fuzz the capture reader and flow reconstruction (`thinlab analyze`): any bytes, as a pcap
//! or pcapng file, must read without panicking; reading stops at most at the end of the input;
//! streaming the same bytes in small chunks must give exactly what reading them whole gives;
//! and whatever packets come out must analyse without panicking, alone or as both sides.
#![no_main]

use libfuzzer_sys::fuzz_target;
use thinlab_trace::flows::analyze;
use thinlab_trace::pcap::{read_capture, CaptureReader};

fuzz_target!(|data: &[u8]| {
    let cap = read_capture(data);
    if let Some(at) = cap.stats.stopped_at {
        assert!(at <= data.len() as u64);
    }
    assert_eq!(cap.stats.bytes, data.len() as u64);
    assert!(cap.stats.tcp_packets <= cap.stats.records);
    assert_eq!(cap.stats.tcp_packets, cap.packets.len() as u64);
    // The same bytes streamed in chunks of 1..=64 bytes (chosen by the input's length).
    let mut r = CaptureReader::with_chunk(data, 1 + data.len() % 64);
    let streamed: Vec<_> = r.by_ref().collect();
    assert_eq!(streamed, cap.packets);
    assert_eq!(r.finish(), cap.stats);
    let _ = analyze(&cap.packets, None);
    let _ = analyze(&cap.packets, Some(&cap.packets));
});
