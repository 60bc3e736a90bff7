//! Logs that a long run writes as it goes and reads back once, spilled to an anonymous
//! temporary file as fixed-size records (through a 64 KiB buffer), so that the run's memory
//! does not grow with what it logs: the emulator's packets (`packet_log`) and the
//! applications' writes and reads (`records::Span`). The file is created on the first record
//! and removed by the operating system when the log is dropped.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;

/// A value stored as `SIZE` bytes.
pub trait Record: Sized {
    const SIZE: usize;
    fn encode(&self, out: &mut [u8]);
    fn decode(b: &[u8]) -> Self;
}

/// Records read at once when streaming a log back.
const CHUNK: usize = 2048;
/// Bytes buffered before a write to the file.
const BUFFER: usize = 64 * 1024;

/// A log being written. A write error is kept, not returned: [`SpillLog::push`] is called
/// in timing-sensitive loops, and the run reports the error when it finishes the log.
pub struct SpillLog<R: Record> {
    out: Option<BufWriter<File>>,
    len: u64,
    error: Option<io::Error>,
    scratch: Vec<u8>,
    _record: PhantomData<R>,
}

impl<R: Record> Default for SpillLog<R> {
    fn default() -> Self {
        SpillLog {
            out: None,
            len: 0,
            error: None,
            scratch: vec![0; R::SIZE],
            _record: PhantomData,
        }
    }
}

impl<R: Record> SpillLog<R> {
    pub fn push(&mut self, r: &R) {
        if self.error.is_some() {
            return;
        }
        if self.out.is_none() {
            match tempfile::tempfile() {
                Ok(f) => self.out = Some(BufWriter::with_capacity(BUFFER, f)),
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            }
        }
        r.encode(&mut self.scratch);
        let out = self.out.as_mut().expect("created above");
        match out.write_all(&self.scratch) {
            Ok(()) => self.len += 1,
            Err(e) => self.error = Some(e),
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The log, complete, to be read back; or the first error writing it.
    pub fn finish(self) -> io::Result<SpilledLog<R>> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let file = match self.out {
            Some(out) => Some(out.into_inner().map_err(|e| e.into_error())?),
            None => None,
        };
        Ok(SpilledLog {
            file,
            len: self.len,
            _record: PhantomData,
        })
    }
}

/// Writes every record of `items` into a new log (for logs built at once, as in tests).
pub fn collect<R: Record>(items: impl IntoIterator<Item = R>) -> io::Result<SpilledLog<R>> {
    let mut log = SpillLog::default();
    for r in items {
        log.push(&r);
    }
    log.finish()
}

/// A finished log: its records, in the order they were pushed.
pub struct SpilledLog<R: Record> {
    file: Option<File>,
    len: u64,
    _record: PhantomData<R>,
}

impl<R: Record> Default for SpilledLog<R> {
    fn default() -> Self {
        SpilledLog {
            file: None,
            len: 0,
            _record: PhantomData,
        }
    }
}

impl<R: Record> std::fmt::Debug for SpilledLog<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SpilledLog({} records)", self.len)
    }
}

impl<R: Record> SpilledLog<R> {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every record, streamed from the file (independent of other iterators over the log).
    /// A read error ends the stream early and is returned by [`SpilledLog::check`].
    pub fn iter(&self) -> impl Iterator<Item = R> + '_ {
        let mut buf = vec![0u8; R::SIZE * CHUNK];
        let mut offset = 0u64;
        let total = self.len * R::SIZE as u64;
        let mut pending: Vec<R> = Vec::new();
        std::iter::from_fn(move || {
            if pending.is_empty() {
                let file = self.file.as_ref()?;
                let n = ((total - offset) as usize).min(buf.len());
                if n == 0 || file.read_exact_at(&mut buf[..n], offset).is_err() {
                    return None;
                }
                offset += n as u64;
                pending = buf[..n]
                    .chunks_exact(R::SIZE)
                    .rev()
                    .map(R::decode)
                    .collect();
            }
            pending.pop()
        })
    }

    /// Records `first..first + n`, read from the file at once.
    pub fn range(&self, first: u64, n: usize) -> io::Result<Vec<R>> {
        read_range(self.file.as_ref(), self.len, first, n)
    }

    /// Whether every record can be read back (counts them).
    pub fn check(&self) -> io::Result<()> {
        let n = self.iter().count() as u64;
        if n == self.len {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "read back {n} of {} records",
                self.len
            )))
        }
    }
}

/// Finished logs of many runs kept in one file, so that a process holding the logs of
/// thousands of finished runs holds one open file, not one per run. Appending copies a log's
/// bytes (and drops its file); a log's records keep their order, from the position `append`
/// returns. Shared between threads (`Clone` shares the store); the file is created with the
/// first record and removed by the operating system when the last clone is dropped.
pub struct SpillStore<R: Record> {
    inner: std::sync::Arc<std::sync::Mutex<Store>>,
    _record: PhantomData<R>,
}

#[derive(Default)]
struct Store {
    file: Option<File>,
    records: u64,
}

impl<R: Record> Clone for SpillStore<R> {
    fn clone(&self) -> Self {
        SpillStore {
            inner: self.inner.clone(),
            _record: PhantomData,
        }
    }
}

impl<R: Record> Default for SpillStore<R> {
    fn default() -> Self {
        SpillStore {
            inner: Default::default(),
            _record: PhantomData,
        }
    }
}

impl<R: Record> SpillStore<R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records in the store, over every log appended.
    pub fn len(&self) -> u64 {
        self.lock().records
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `log` to the end of the store; returns the position of its first record.
    pub fn append(&self, log: SpilledLog<R>) -> io::Result<u64> {
        let mut store = self.lock();
        let first = store.records;
        let Some(from) = &log.file else {
            return Ok(first);
        };
        if store.file.is_none() {
            store.file = Some(tempfile::tempfile()?);
        }
        let file = store.file.as_ref().expect("created above");
        let mut buf = vec![0u8; R::SIZE * CHUNK];
        let (mut offset, total) = (0u64, log.len * R::SIZE as u64);
        let at = first * R::SIZE as u64;
        while offset < total {
            let n = ((total - offset) as usize).min(buf.len());
            from.read_exact_at(&mut buf[..n], offset)?;
            file.write_all_at(&buf[..n], at + offset)?;
            offset += n as u64;
        }
        store.records += log.len;
        Ok(first)
    }

    /// Records `first..first + n`, read from the file at once.
    pub fn range(&self, first: u64, n: usize) -> io::Result<Vec<R>> {
        let store = self.lock();
        read_range(store.file.as_ref(), store.records, first, n)
    }
}

/// Records `first..first + n` of the `len` records in `file` (`None`: none written yet).
fn read_range<R: Record>(
    file: Option<&File>,
    len: u64,
    first: u64,
    n: usize,
) -> io::Result<Vec<R>> {
    let end = first.saturating_add(n as u64);
    if end > len {
        return Err(io::Error::other(format!("records {first}..{end} of {len}")));
    }
    let Some(file) = file else {
        return Ok(Vec::new());
    };
    let mut buf = vec![0u8; n * R::SIZE];
    file.read_exact_at(&mut buf, first * R::SIZE as u64)?;
    Ok(buf.chunks_exact(R::SIZE).map(R::decode).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Pair(u64, u32);

    impl Record for Pair {
        const SIZE: usize = 12;
        fn encode(&self, out: &mut [u8]) {
            out[..8].copy_from_slice(&self.0.to_le_bytes());
            out[8..].copy_from_slice(&self.1.to_le_bytes());
        }
        fn decode(b: &[u8]) -> Self {
            Pair(
                u64::from_le_bytes(b[..8].try_into().unwrap()),
                u32::from_le_bytes(b[8..].try_into().unwrap()),
            )
        }
    }

    #[test]
    fn a_store_keeps_each_log_at_its_position() {
        let store = SpillStore::<Pair>::default();
        let a = collect((0..5000u64).map(|i| Pair(i, 1))).unwrap();
        let b = collect(std::iter::empty()).unwrap();
        let c = collect((0..7u64).map(|i| Pair(i, 3))).unwrap();
        assert_eq!(store.append(a).unwrap(), 0);
        assert_eq!(store.append(b).unwrap(), 5000);
        assert_eq!(store.append(c).unwrap(), 5000);
        assert_eq!(store.len(), 5007);
        assert_eq!(store.range(4999, 1).unwrap(), vec![Pair(4999, 1)]);
        assert_eq!(store.range(5005, 2).unwrap(), vec![Pair(5, 3), Pair(6, 3)]);
        assert!(store.range(5006, 2).is_err());
        let all = store.range(0, 5007).unwrap();
        assert!(all[..5000]
            .iter()
            .enumerate()
            .all(|(i, p)| *p == Pair(i as u64, 1)));
    }

    #[test]
    fn a_range_reads_those_records() {
        let log = collect((0..100u64).map(|i| Pair(i, i as u32))).unwrap();
        assert_eq!(
            log.range(40, 3).unwrap(),
            vec![Pair(40, 40), Pair(41, 41), Pair(42, 42)]
        );
        assert!(log.range(99, 2).is_err());
        assert!(log.range(100, 0).unwrap().is_empty());
    }

    #[test]
    fn records_come_back_in_order_across_chunks() {
        let n = 3 * CHUNK as u64 + 17;
        let log = collect((0..n).map(|i| Pair(i * 1000 + 7, u32::MAX - i as u32))).unwrap();
        assert_eq!(log.len(), n);
        log.check().unwrap();
        for (i, p) in log.iter().enumerate() {
            assert_eq!(p, Pair(i as u64 * 1000 + 7, u32::MAX - i as u32));
        }
        // two streams over one log are independent
        let (mut a, mut b) = (log.iter(), log.iter());
        assert_eq!(a.next(), b.next());
        let want = Pair((CHUNK as u64 + 1) * 1000 + 7, u32::MAX - CHUNK as u32 - 1);
        assert_eq!(a.nth(CHUNK), Some(want));
        assert_eq!(b.next(), Some(Pair(1007, u32::MAX - 1)));
    }

    #[test]
    fn an_empty_log_has_no_file_and_no_records() {
        let log = SpillLog::<Pair>::default().finish().unwrap();
        assert!(log.is_empty());
        assert_eq!(log.iter().count(), 0);
        log.check().unwrap();
    }
}
