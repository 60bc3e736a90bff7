//! Loading the writes of an `app.kind = "trace"` source (docs/scenarios.md, `app`).
//!
//! A trace file is either
//! - a **pcap/pcapng capture** (recognised by its magic number): the connection is
//!   reconstructed with [`thinlab_trace::flows::analyze`]; for the chosen connection's data
//!   sender, each data segment's *new* bytes (those beyond the highest byte sent before) become
//!   one write at that segment's capture time, relative to the first such segment.
//!   Retransmitted bytes, pure ACKs and the other direction are ignored (as seed 000's
//!   tracepump did). `connection = "A:P-B:P"` (either order) picks a connection; by default
//!   the one with the most new payload bytes (ties: the first seen).
//! - a **CSV** of `time,bytes` rows: optional header line `time,bytes`, `time` in seconds (a
//!   float) or a duration string (`"140ms"`, quotes optional) from the trace start, `bytes` an
//!   integer ≥ 1, times non-decreasing. Empty lines and lines starting with `#` are skipped.
//!
//! Relative paths are resolved against the current directory of the process.

use crate::error::ScenarioError;
use crate::units::parse_duration;
use std::path::Path;
use std::sync::Arc;

/// The writes of a trace source: (offset from the trace start in ns, bytes).
pub type TraceWrites = Arc<[(u64, u32)]>;

const PCAP_MAGICS: [[u8; 4]; 5] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x0a, 0x0d, 0x0d, 0x0a],
];

/// Largest trace file read (a pipe or a device such as `/dev/zero` is read up to this).
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// The contents of `path`, refusing anything longer than `limit` bytes — also pipes and
/// devices, which are read only that far, in chunks (the buffer never holds more than
/// `limit + 1` bytes). Input that is neither a capture (by its magic number) nor text (it
/// holds a NUL byte) is refused at its first chunk: `/dev/zero` costs one read.
fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("it is a directory"));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(std::io::Error::other(format!(
            "it has {} bytes, more than the limit",
            meta.len()
        )));
    }
    let cap = limit as usize + 1;
    let mut data: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match f.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let is_capture = data.len() >= 4 && PCAP_MAGICS.iter().any(|m| data[..4] == *m)
            || data.is_empty() && n >= 4 && PCAP_MAGICS.iter().any(|m| chunk[..4] == *m);
        if !is_capture && chunk[..n].contains(&0) {
            return Err(std::io::Error::other(
                "it holds binary data that is neither a pcap/pcapng capture nor a CSV text",
            ));
        }
        if data.len() + n > cap - 1 {
            return Err(std::io::Error::other(
                "it holds more bytes than the limit (a pipe or a device that does not end?)",
            ));
        }
        if data.capacity() < data.len() + n {
            // Doubling, but never past the limit.
            let want = (data.len() + n).max(data.capacity() * 2).min(cap);
            data.reserve_exact(want - data.len());
        }
        data.extend_from_slice(&chunk[..n]);
    }
    Ok(data)
}

/// Loads and validates the trace `file` of the app whose dotted prefix is `prefix`
/// (e.g. `flow.0.app`).
pub fn load(
    prefix: &str,
    file: &str,
    connection: Option<&str>,
) -> Result<TraceWrites, ScenarioError> {
    let fkey = format!("{prefix}.file");
    let fval = format!("\"{file}\"");
    let data = read_limited(Path::new(file), MAX_TRACE_BYTES).map_err(|e| {
        ScenarioError::invalid(
            &fkey,
            &fval,
            format!("a readable pcap/pcapng or CSV file of at most {} MiB (relative paths are relative to the current directory): {e}", MAX_TRACE_BYTES >> 20),
        )
    })?;
    let writes = if data.len() >= 4 && PCAP_MAGICS.iter().any(|m| data[..4] == *m) {
        from_pcap(prefix, &fkey, &fval, &data, connection)?
    } else {
        if let Some(c) = connection {
            return Err(ScenarioError::invalid(
                format!("{prefix}.connection"),
                format!("\"{c}\""),
                "no connection for a CSV trace (only a pcap/pcapng trace has connections)",
            ));
        }
        from_csv(&fkey, &fval, &data)?
    };
    if writes.is_empty() {
        return Err(ScenarioError::invalid(
            fkey,
            fval,
            "a trace with at least one write",
        ));
    }
    Ok(writes.into())
}

fn from_pcap(
    prefix: &str,
    fkey: &str,
    fval: &str,
    data: &[u8],
    connection: Option<&str>,
) -> Result<Vec<(u64, u32)>, ScenarioError> {
    let cap = thinlab_trace::pcap::read_capture(data);
    let conns = thinlab_trace::flows::analyze(&cap.packets, None);
    let new_bytes = |c: &thinlab_trace::flows::ConnectionAnalysis| -> u64 {
        c.records.writes.iter().map(|w| w.end - w.start).sum()
    };
    let chosen = match connection {
        Some(sel) => conns.iter().find(|c| c.matches(sel)).ok_or_else(|| {
            let ids: Vec<String> = conns.iter().map(|c| c.id()).collect();
            ScenarioError::invalid(
                format!("{prefix}.connection"),
                format!("\"{sel}\""),
                format!(
                    "a connection \"A:P-B:P\" of {fval}; it has: {}",
                    if ids.is_empty() {
                        "none".to_string()
                    } else {
                        ids.join(", ")
                    }
                ),
            )
        })?,
        None => {
            let mut best: Option<&thinlab_trace::flows::ConnectionAnalysis> = None;
            for c in &conns {
                if best.is_none_or(|b| new_bytes(c) > new_bytes(b)) {
                    best = Some(c);
                }
            }
            best.ok_or_else(|| {
                ScenarioError::invalid(fkey, fval, "a capture with at least one TCP connection")
            })?
        }
    };
    let Some(first) = chosen.records.writes.first() else {
        return Err(ScenarioError::invalid(
            fkey,
            fval,
            format!("a capture whose connection {} carries data", chosen.id()),
        ));
    };
    let t0 = first.write_time.as_nanos();
    let mut out = Vec::with_capacity(chosen.records.writes.len());
    for w in &chosen.records.writes {
        let bytes = u32::try_from(w.end - w.start).unwrap_or(u32::MAX);
        if bytes == 0 {
            continue;
        }
        out.push((w.write_time.as_nanos().saturating_sub(t0), bytes));
    }
    Ok(out)
}

fn from_csv(fkey: &str, fval: &str, data: &[u8]) -> Result<Vec<(u64, u32)>, ScenarioError> {
    let text = std::str::from_utf8(data).map_err(|_| {
        ScenarioError::invalid(
            fkey,
            fval,
            "a pcap/pcapng capture or a UTF-8 CSV of time,bytes rows",
        )
    })?;
    let mut out: Vec<(u64, u32)> = Vec::new();
    let mut first_row = true;
    for (n, line) in text.lines().enumerate() {
        let lineno = n + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what: &str| {
            ScenarioError::invalid(
                fkey,
                fval,
                format!("a CSV of time,bytes rows, but CSV line {lineno} (\"{line}\") {what}"),
            )
        };
        let fields: Vec<&str> = line
            .split(',')
            .map(|f| f.trim().trim_matches('"'))
            .collect();
        if first_row {
            first_row = false;
            if fields.len() == 2
                && fields[0].eq_ignore_ascii_case("time")
                && fields[1].eq_ignore_ascii_case("bytes")
            {
                continue;
            }
        }
        if fields.len() != 2 {
            return Err(bad("does not have two columns, time and bytes"));
        }
        let t = parse_duration(fields[0])
            .ok_or_else(|| {
                bad("has no time ≥ 0 in seconds (like 0.14) or as a duration (like \"140ms\")")
            })?
            .as_nanos() as u64;
        let b: u32 = match fields[1].parse::<u64>() {
            Ok(b) if b >= 1 && b <= u64::from(u32::MAX) => b as u32,
            _ => return Err(bad("has bytes that are not an integer ≥ 1")),
        };
        if let Some(&(prev, _)) = out.last() {
            if t < prev {
                return Err(bad("goes back in time (times must be non-decreasing)"));
            }
        }
        out.push((t, b));
    }
    Ok(out)
}
