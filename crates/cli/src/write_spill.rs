//! Per-write rows spilled to a temporary file while a run goes (`thinlab run --format
//! parquet`), so that `writes.parquet` costs no memory per write: each flow collects its rows
//! (handed over by its recorder as writes are retired, `thinlab_trace::FlowRecorder::with_sink`)
//! in a small buffer and appends it to the run's file as a chunk when full; an index of the
//! chunks gives each flow's rows back in order. The operating system removes the file when the
//! spill is dropped.

use crate::write_rows::WriteRow;
use anyhow::{anyhow, Context, Result};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};
use thinlab_trace::{WriteRecord, WriteSink};

/// Bytes of one row: presence flags, then the write time, its bytes and four milestones (ns).
const ROW: usize = 7 * 8;
/// Rows buffered per flow before they go to the file, over every flow of a run (so that many
/// flows buffer little each), within these bounds.
const BUFFERED_ROWS: usize = 1 << 16;
const MIN_CHUNK: usize = 16;
const MAX_CHUNK: usize = 4096;

/// A run's spilled rows: shared by its flows' sinks while it runs, read once it is over.
#[derive(Clone)]
pub struct WriteSpill(Arc<Mutex<Spill>>);

struct Spill {
    file: Option<File>,
    len: u64,
    /// Per flow, its chunks in order: (file offset, rows).
    chunks: Vec<Vec<(u64, u32)>>,
    rows_per_chunk: usize,
    error: Option<io::Error>,
}

impl std::fmt::Debug for WriteSpill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WriteSpill({} rows)", self.rows())
    }
}

/// Two spills are equal when they are the same spill (a run's output compared with itself).
impl PartialEq for WriteSpill {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl WriteSpill {
    /// An empty spill for a run of `flows` flows (the file is created with the first chunk).
    pub fn new(flows: usize) -> Self {
        WriteSpill(Arc::new(Mutex::new(Spill {
            file: None,
            len: 0,
            chunks: vec![Vec::new(); flows],
            rows_per_chunk: (BUFFERED_ROWS / flows.max(1)).clamp(MIN_CHUNK, MAX_CHUNK),
            error: None,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Spill> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where flow `flow`'s recorder hands its writes' records.
    pub fn sink(&self, flow: usize) -> WriteSink {
        let mut buffer = FlowBuffer {
            spill: self.clone(),
            flow,
            encoded: Vec::new(),
            rows: 0,
            rows_per_chunk: self.lock().rows_per_chunk,
        };
        Box::new(move |w: &WriteRecord| buffer.push(&WriteRow::from_record(w)))
    }

    /// Rows spilled, over every flow.
    pub fn rows(&self) -> u64 {
        let s = self.lock();
        s.chunks.iter().flatten().map(|c| u64::from(c.1)).sum()
    }

    /// Rows of flow `flow`.
    pub fn flow_rows(&self, flow: usize) -> u64 {
        let s = self.lock();
        s.chunks
            .get(flow)
            .map_or(0, |c| c.iter().map(|c| u64::from(c.1)).sum())
    }

    /// The first error writing the file, if any (the run reports it).
    pub fn check(&self) -> Result<()> {
        match &self.lock().error {
            Some(e) => Err(anyhow!(
                "spilling the per-write rows to a temporary file: {e}"
            )),
            None => Ok(()),
        }
    }

    /// Flow `flow`'s rows in write order, a chunk at a time, to `each`.
    pub fn for_each_chunk(
        &self,
        flow: usize,
        mut each: impl FnMut(&[WriteRow]) -> Result<()>,
    ) -> Result<()> {
        let s = self.lock();
        let Some(chunks) = s.chunks.get(flow) else {
            return Ok(());
        };
        let mut bytes = Vec::new();
        let mut rows = Vec::new();
        for &(offset, n) in chunks {
            let file = s.file.as_ref().context("the spill file is missing")?;
            bytes.resize(n as usize * ROW, 0);
            file.read_exact_at(&mut bytes, offset)
                .context("reading back the spilled per-write rows")?;
            rows.clear();
            rows.extend(bytes.chunks_exact(ROW).map(decode));
            each(&rows)?;
        }
        Ok(())
    }
}

impl Spill {
    fn append(&mut self, flow: usize, encoded: &[u8], rows: usize) {
        if self.error.is_some() || rows == 0 {
            return;
        }
        if self.file.is_none() {
            match tempfile::tempfile() {
                Ok(f) => self.file = Some(f),
                Err(e) => return self.error = Some(e),
            }
        }
        let file = self.file.as_mut().expect("created above");
        match file.write_all(encoded) {
            Ok(()) => {
                if let Some(c) = self.chunks.get_mut(flow) {
                    c.push((self.len, rows as u32));
                }
                self.len += encoded.len() as u64;
            }
            Err(e) => self.error = Some(e),
        }
    }
}

/// One flow's rows not yet in the file; flushed when full and when the recorder drops it.
struct FlowBuffer {
    spill: WriteSpill,
    flow: usize,
    encoded: Vec<u8>,
    rows: usize,
    rows_per_chunk: usize,
}

impl FlowBuffer {
    fn push(&mut self, row: &WriteRow) {
        encode(row, &mut self.encoded);
        self.rows += 1;
        if self.rows == self.rows_per_chunk {
            self.flush();
        }
    }

    fn flush(&mut self) {
        self.spill
            .lock()
            .append(self.flow, &self.encoded, self.rows);
        self.encoded.clear();
        self.rows = 0;
    }
}

impl Drop for FlowBuffer {
    fn drop(&mut self) {
        self.flush();
    }
}

fn encode(r: &WriteRow, out: &mut Vec<u8>) {
    let opts = [r.first_send_ns, r.transport_ns, r.app_ns, r.acked_ns];
    let flags = opts
        .iter()
        .enumerate()
        .fold(0u64, |f, (i, o)| f | (u64::from(o.is_some()) << i));
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&r.write_ns.to_le_bytes());
    out.extend_from_slice(&r.bytes.to_le_bytes());
    for o in opts {
        out.extend_from_slice(&o.unwrap_or(0).to_le_bytes());
    }
}

fn decode(b: &[u8]) -> WriteRow {
    let word = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    let flags = word(0);
    let opt = |i: usize| (flags >> i & 1 == 1).then(|| word(3 + i));
    WriteRow {
        write_ns: word(1),
        bytes: word(2),
        first_send_ns: opt(0),
        transport_ns: opt(1),
        app_ns: opt(2),
        acked_ns: opt(3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thinlab_tcp::Instant;

    fn record(i: u64) -> WriteRecord {
        let at = |d: u64| (!i.is_multiple_of(d + 2)).then(|| Instant::from_nanos(i * 1000 + d));
        WriteRecord {
            write_time: Instant::from_nanos(i * 1000),
            start: i * 10,
            end: i * 10 + 1 + i % 7,
            first_send: at(1),
            transport: at(2),
            app: at(3),
            acked: at(4),
        }
    }

    #[test]
    fn every_flow_gets_its_rows_back_in_order() {
        // Three flows writing interleaved, one of them past several chunks, one not at all.
        let flows = 3;
        let spill = WriteSpill::new(flows);
        let per_flow = [0usize, 3 * MAX_CHUNK + 5, 40];
        {
            let mut sinks: Vec<WriteSink> = (0..flows).map(|f| spill.sink(f)).collect();
            for i in 0..per_flow.iter().copied().max().unwrap() {
                for (f, sink) in sinks.iter_mut().enumerate() {
                    if i < per_flow[f] {
                        sink(&record(i as u64 * 3 + f as u64));
                    }
                }
            }
        } // the sinks flush as they drop
        spill.check().unwrap();
        assert_eq!(spill.rows(), per_flow.iter().sum::<usize>() as u64);
        for (f, &n) in per_flow.iter().enumerate() {
            let mut got = Vec::new();
            spill
                .for_each_chunk(f, |rows| {
                    got.extend_from_slice(rows);
                    Ok(())
                })
                .unwrap();
            let want: Vec<WriteRow> = (0..n)
                .map(|i| WriteRow::from_record(&record(i as u64 * 3 + f as u64)))
                .collect();
            assert_eq!(got, want, "flow {f}");
            assert_eq!(spill.flow_rows(f), n as u64);
        }
    }
}
