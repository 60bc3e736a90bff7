//! Fuzz the capture reader and flow reconstruction (`thinlab analyze`): any bytes, as a pcap
//! or pcapng file, must read without panicking; reading stops at most at the end of the input;
//! and whatever packets come out must analyse without panicking, alone or as both sides.
#![no_main]

use libfuzzer_sys::fuzz_target;
use thinlab_trace::flows::analyze;
use thinlab_trace::pcap::read_capture;

fuzz_target!(|data: &[u8]| {
    let cap = read_capture(data);
    if let Some(at) = cap.stats.stopped_at {
        assert!(at <= data.len() as u64);
    }
    assert!(cap.stats.tcp_packets <= cap.stats.records);
    let _ = analyze(&cap.packets, None);
    let _ = analyze(&cap.packets, Some(&cap.packets));
});
