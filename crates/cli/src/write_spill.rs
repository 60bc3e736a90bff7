//! Per-write rows spilled to a temporary file while a run goes (`thinlab run --format
//! parquet`, the Python API's `writes=True`), so that they cost no memory per write: each flow
//! collects its rows (handed over by its recorder as writes are retired,
//! `thinlab_trace::FlowRecorder::with_sink`) in a small buffer and appends it to the run's log
//! as a chunk when full; an index of the chunks gives each flow's rows back in order. The log
//! is the emulator's spill log (`thinlab_emu::spill`: an anonymous temporary file of fixed-size
//! records, removed by the operating system when dropped). When the run ends its log is moved
//! into the [`WriteStore`] its batch of runs shares, so that thousands of finished runs hold
//! one open file, not one each.

use crate::write_rows::WriteRow;
use anyhow::{anyhow, Context, Result};
use std::sync::{Arc, Mutex, MutexGuard};
use thinlab_emu::spill::{Record, SpillLog, SpillStore};
use thinlab_trace::{WriteRecord, WriteSink};

/// Rows buffered per flow before they go to the file, over every flow of a run (so that many
/// flows buffer little each), within these bounds.
const BUFFERED_ROWS: usize = 1 << 16;
const MIN_CHUNK: usize = 16;
const MAX_CHUNK: usize = 4096;

/// A row as 7 little-endian words: presence flags, then the write time, its bytes and four
/// milestones (ns; 0 when absent).
impl Record for WriteRow {
    const SIZE: usize = 7 * 8;

    fn encode(&self, out: &mut [u8]) {
        let opts = [
            self.first_send_ns,
            self.transport_ns,
            self.app_ns,
            self.acked_ns,
        ];
        let flags = opts
            .iter()
            .enumerate()
            .fold(0u64, |f, (i, o)| f | (u64::from(o.is_some()) << i));
        let words = [flags, self.write_ns, self.bytes]
            .into_iter()
            .chain(opts.map(|o| o.unwrap_or(0)));
        for (chunk, w) in out.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
    }

    fn decode(b: &[u8]) -> Self {
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
}

/// Where the finished runs of one batch keep their rows (one file for them all).
pub type WriteStore = SpillStore<WriteRow>;

/// A run's spilled rows: shared by its flows' sinks while it runs, read once it is over.
#[derive(Clone)]
pub struct WriteSpill(Arc<Mutex<Spill>>);

struct Spill {
    /// Being written (the run goes on), then finished ([`WriteSpill::finish`]).
    log: Log,
    /// Per flow, its chunks in order: (first record, rows), in the run's log while it is
    /// written, in the store once finished.
    chunks: Vec<Vec<(u64, usize)>>,
    rows_per_chunk: usize,
}

enum Log {
    Writing(SpillLog<WriteRow>),
    Finished(WriteStore),
    Failed(String),
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
            log: Log::Writing(SpillLog::default()),
            chunks: vec![Vec::new(); flows],
            rows_per_chunk: (BUFFERED_ROWS / flows.max(1)).clamp(MIN_CHUNK, MAX_CHUNK),
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
            rows: Vec::new(),
            rows_per_chunk: self.lock().rows_per_chunk,
        };
        Box::new(move |w: &WriteRecord| buffer.push(WriteRow::from_record(w)))
    }

    /// Rows spilled, over every flow.
    pub fn rows(&self) -> u64 {
        let s = self.lock();
        s.chunks.iter().flatten().map(|c| c.1 as u64).sum()
    }

    /// The run is over (every sink dropped): its rows move to `store` (and its own file is
    /// closed), or the first error writing or moving them is returned.
    pub fn finish(&self, store: &WriteStore) -> Result<()> {
        let mut s = self.lock();
        let log = std::mem::replace(&mut s.log, Log::Failed(String::new()));
        s.log = match log {
            Log::Writing(log) => match log.finish().and_then(|done| store.append(done)) {
                Ok(first) => {
                    s.chunks.iter_mut().flatten().for_each(|c| c.0 += first);
                    Log::Finished(store.clone())
                }
                Err(e) => Log::Failed(e.to_string()),
            },
            other => other,
        };
        match &s.log {
            Log::Failed(e) => Err(anyhow!(
                "spilling the per-write rows to a temporary file: {e}"
            )),
            _ => Ok(()),
        }
    }

    /// Flow `flow`'s rows in write order, a chunk at a time, to `each` (once finished).
    pub fn for_each_chunk(
        &self,
        flow: usize,
        mut each: impl FnMut(&[WriteRow]) -> Result<()>,
    ) -> Result<()> {
        let s = self.lock();
        let Log::Finished(store) = &s.log else {
            return Err(anyhow!(
                "the per-write rows were read before the run finished"
            ));
        };
        for &(first, n) in s.chunks.get(flow).into_iter().flatten() {
            let rows = store
                .range(first, n)
                .context("reading back the spilled per-write rows")?;
            each(&rows)?;
        }
        Ok(())
    }
}

/// One flow's rows not yet in the file; flushed when full and when the recorder drops it.
struct FlowBuffer {
    spill: WriteSpill,
    flow: usize,
    rows: Vec<WriteRow>,
    rows_per_chunk: usize,
}

impl FlowBuffer {
    fn push(&mut self, row: WriteRow) {
        self.rows.push(row);
        if self.rows.len() == self.rows_per_chunk {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.rows.is_empty() {
            return;
        }
        let mut s = self.spill.lock();
        let Spill { log, chunks, .. } = &mut *s;
        if let Log::Writing(log) = log {
            let first = log.len();
            self.rows.iter().for_each(|r| log.push(r));
            if let Some(c) = chunks.get_mut(self.flow) {
                c.push((first, self.rows.len()));
            }
        }
        self.rows.clear();
    }
}

impl Drop for FlowBuffer {
    fn drop(&mut self) {
        self.flush();
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
          // another run's rows in the store first: this run's positions are shifted
        let store = WriteStore::default();
        let other = WriteSpill::new(1);
        (0..40).for_each(|i| other.sink(0)(&record(1000 + i)));
        other.finish(&store).unwrap();
        spill.finish(&store).unwrap();
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
        }
    }

    #[test]
    fn rows_are_not_read_before_the_run_finished() {
        let spill = WriteSpill::new(1);
        spill.sink(0)(&record(1));
        assert!(spill.for_each_chunk(0, |_| Ok(())).is_err());
    }
}
