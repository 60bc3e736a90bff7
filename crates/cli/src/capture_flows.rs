//! Captures in, flows out, for `analyze` and `whatif`: reads the sender capture (and the
//! receiver capture) with [`thinlab_trace::pcap`], reconstructs every direction that carries
//! data as a flow ([`thinlab_trace::flows`]: the data sender's directions from the sender
//! capture, the reverse directions from the receiver capture), puts the receiver's timestamps
//! on the sender's clock ([`thinlab_trace::clock`]), and refuses input that cannot be analysed
//! (exit 2): not a capture, empty, no TCP, captures that do not belong together or are passed
//! the wrong way round.

use crate::error::BadInput;
use anyhow::Result;
use std::fs::File;
use std::net::SocketAddr;
use std::path::Path;
use thinlab_trace::flows::{merge, Analyzer, ConnectionAnalysis, Select, TimestampAnomalies};
use thinlab_trace::pcap::{CaptureReader, CaptureStats};

/// A minimum round trip between the capture points below this (ms) means the captures are
/// swapped: data reaches the receiver before it leaves the sender.
pub const SWAPPED_BELOW_MS: f64 = -0.1;

/// What reading both captures found.
pub struct Flows {
    pub snd: CaptureStats,
    pub rcv: Option<CaptureStats>,
    pub conns: Vec<ConnectionAnalysis>,
    pub timestamps: TimestampAnomalies,
    /// Packets of connections beyond the analyser's limit.
    pub skipped_packets: u64,
}

fn open(path: &Path, what: &str) -> Result<CaptureReader<File>> {
    let f = File::open(path).map_err(|e| {
        BadInput::new(format!(
            "cannot read {what} capture {}: {e}",
            path.display()
        ))
    })?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(BadInput::new(format!(
            "cannot read {what} capture {}: it is a directory",
            path.display()
        ))
        .into());
    }
    Ok(CaptureReader::from_file(f))
}

/// Exit 2 for a file that is not a capture, is empty, or has no TCP packet.
pub fn check_has_tcp(path: &Path, s: &CaptureStats) -> Result<()> {
    if s.tcp_packets > 0 {
        return Ok(());
    }
    let why = if s.bytes == 0 {
        "the file is empty".to_string()
    } else if s.format == "unknown" {
        format!(
            "not a pcap or pcapng capture ({})",
            s.stop_reason.as_deref().unwrap_or("unknown format")
        )
    } else if s.records == 0 {
        format!("the {} capture has no packet", s.format)
    } else {
        format!(
            "none of its {} packets is TCP (dropped: {:?})",
            s.records, s.dropped
        )
    };
    Err(BadInput::new(format!("{}: {why}; nothing to analyse", path.display())).into())
}

/// Exit 2 unless `sel` is `ADDR:PORT-ADDR:PORT` (IPv6 in brackets).
pub fn check_selector(sel: &str) -> Result<()> {
    let ok = sel
        .split_once('-')
        .is_some_and(|(a, b)| a.parse::<SocketAddr>().is_ok() && b.parse::<SocketAddr>().is_ok());
    if ok {
        Ok(())
    } else {
        Err(BadInput::new(format!(
            "--connection {sel}: expected ADDR:PORT-ADDR:PORT, e.g. 10.0.0.1:40000-10.0.0.2:5001 or [::1]:40000-[::1]:5001"
        ))
        .into())
    }
}

/// Reads the captures; `clock_offset_ms` (receiver clock minus sender clock) replaces the
/// estimate.
pub fn read(sender: &Path, receiver: Option<&Path>, clock_offset_ms: Option<f64>) -> Result<Flows> {
    // Both files are opened before reading either, so a bad path fails at once; each is then
    // streamed (memory: per-connection state and per-write records, not the packets).
    let mut snd_reader = open(sender, "sender")?;
    let rcv_reader = receiver.map(|p| open(p, "receiver")).transpose()?;
    let mut a = if receiver.is_some() {
        Analyzer::new()
    } else {
        Analyzer::sender_only()
    };
    for p in &mut snd_reader {
        a.sender_packet(&p);
    }
    let snd = snd_reader.finish();
    check_has_tcp(sender, &snd)?;
    let timestamps = a.timestamps;
    let skipped_packets = a.skipped_packets();
    let (Some(mut r), Some(rpath)) = (rcv_reader, receiver) else {
        return Ok(Flows {
            snd,
            rcv: None,
            conns: a.finish_sender(Select::All).finish(),
            timestamps,
            skipped_packets,
        });
    };
    let primaries = a.primaries();
    let mut fwd = a.finish_sender(Select::Primary);
    let mut b = Analyzer::reverse_of(primaries.clone());
    for p in &mut r {
        fwd.receiver_packet(&p);
        b.sender_packet(&p);
    }
    let rcv = r.finish();
    check_has_tcp(rpath, &rcv)?;
    // The reverse directions: the receiver capture is their sender capture.
    let mut rev = b.finish_sender(Select::SecondaryOf(&primaries));
    if let Some(ms) = clock_offset_ms {
        fwd.set_clock_offset_ms(ms);
        rev.set_clock_offset_ms(-ms);
    }
    if !rev.is_empty() {
        let mut again = open(sender, "sender")?;
        for p in &mut again {
            rev.receiver_packet(&p);
        }
    }
    let conns = merge(fwd.finish(), rev.finish());
    check_belong(sender, rpath, &conns)?;
    Ok(Flows {
        snd,
        rcv: Some(rcv),
        conns,
        timestamps,
        skipped_packets,
    })
}

/// Exit 2 when no connection of the sender capture is in the receiver capture, or when data
/// reaches the receiver before it left the sender (the captures swapped).
fn check_belong(sender: &Path, receiver: &Path, conns: &[ConnectionAnalysis]) -> Result<()> {
    if !conns.iter().any(|c| c.receiver_matched) {
        return Err(BadInput::new(format!(
            "{} and {} do not belong together: no connection of the sender capture is in the receiver capture",
            sender.display(),
            receiver.display()
        ))
        .into());
    }
    let swapped = conns.iter().find(|c| {
        c.clock_estimate
            .is_some_and(|e| e.min_round_trip_ms < SWAPPED_BELOW_MS)
    });
    if let Some(c) = swapped {
        let e = c.clock_estimate.unwrap();
        return Err(BadInput::new(format!(
            "{} and {} look swapped: on {} data reaches the receiver capture {:.3} ms before it leaves the sender capture, counting the ACKs' way back too (a round trip of {:.3} ms); pass the data sender's capture first and the receiver's with --receiver",
            sender.display(),
            receiver.display(),
            c.id(),
            -e.min_round_trip_ms,
            e.min_round_trip_ms
        ))
        .into());
    }
    Ok(())
}
