//! The results as Arrow record batches (Apache Arrow columnar format): the rows of `runs.csv`
//! with typed columns, the per-write rows, and the CDF of `latency_cdf.csv`. They feed
//! `runs.parquet`/`writes.parquet` ([`crate::parquet_out`]) and the Python API, which receives
//! them as Arrow IPC streams (whole columns, never row by row).
//!
//! A swept key's column is typed by its values: integers → Int64, numbers → Float64, booleans
//! → Boolean, anything else → the text `runs.csv` holds. Counts are UInt64, other metrics
//! Float64, both null where `summary.json` has `null`.

use crate::output::{CdfLine, Results, CDF_POINTS, RUN_COLUMNS};
use crate::sweep::display_value;
use crate::write_rows::WriteRow;
use anyhow::{Context, Result};
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;
use thinlab_trace::histogram::ns_to_ms;
use thinlab_trace::metrics::latency_cdf_runs;
use thinlab_trace::FlowMetrics;
use toml::Value;

/// Columns by name, in order.
struct Columns(Vec<(String, ArrayRef)>);

impl Columns {
    fn push(&mut self, name: impl Into<String>, array: ArrayRef) {
        self.0.push((name.into(), array));
    }

    fn batch(self) -> Result<RecordBatch> {
        let fields: Vec<Field> = self
            .0
            .iter()
            .map(|(n, a)| Field::new(n, a.data_type().clone(), true))
            .collect();
        let arrays = self.0.into_iter().map(|(_, a)| a).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
            .context("building an Arrow record batch")
    }
}

/// The Arrow type of a swept key's column, from all its values.
fn param_type<'a>(values: impl Iterator<Item = &'a Value> + Clone) -> DataType {
    if values.clone().all(|v| v.is_integer()) {
        DataType::Int64
    } else if values.clone().all(|v| v.is_integer() || v.is_float()) {
        DataType::Float64
    } else if values.clone().all(|v| v.is_bool()) {
        DataType::Boolean
    } else {
        DataType::Utf8
    }
}

/// One column of swept-key values, a row per item of `values`.
fn param_column<'a>(values: impl Iterator<Item = &'a Value> + Clone) -> ArrayRef {
    param_column_of(&param_type(values.clone()), values)
}

/// The Arrow types of the swept keys' columns for rows of configurations `configs`.
fn param_types(results: &Results, configs: impl Iterator<Item = usize> + Clone) -> Vec<DataType> {
    (0..results.param_keys().len())
        .map(|i| param_type(configs.clone().map(|c| &results.configs[c].params[i].1)))
        .collect()
}

/// One column of type `ty` (from [`param_type`]) of swept-key values, a row per item of
/// `values`.
fn param_column_of<'a>(ty: &DataType, values: impl Iterator<Item = &'a Value>) -> ArrayRef {
    match ty {
        DataType::Int64 => {
            let mut b = Int64Builder::new();
            values.for_each(|v| b.append_option(v.as_integer()));
            Arc::new(b.finish())
        }
        DataType::Float64 => {
            let mut b = Float64Builder::new();
            values.for_each(|v| b.append_option(v.as_float().or(v.as_integer().map(|i| i as f64))));
            Arc::new(b.finish())
        }
        DataType::Boolean => {
            let mut b = BooleanBuilder::new();
            values.for_each(|v| b.append_option(v.as_bool()));
            Arc::new(b.finish())
        }
        _ => {
            let mut b = StringBuilder::new();
            values.for_each(|v| b.append_value(display_value(v)));
            Arc::new(b.finish())
        }
    }
}

/// The swept keys' columns for rows that belong to configurations `configs` (one per row).
fn param_columns(results: &Results, configs: &[usize], out: &mut Columns) {
    for (i, key) in results.param_keys().iter().enumerate() {
        let values = configs.iter().map(|&c| &results.configs[c].params[i].1);
        out.push(*key, param_column(values));
    }
}

/// The rows of `runs.csv`: swept keys, repetition, seed, flow, status, status_reason, metrics.
pub fn runs_batch(results: &Results) -> Result<RecordBatch> {
    let rows: Vec<_> = results.flow_rows().collect();
    let mut cols = Columns(Vec::new());
    let configs: Vec<usize> = rows.iter().map(|(r, _)| r.config).collect();
    param_columns(results, &configs, &mut cols);
    let mut repetition = UInt32Builder::new();
    let mut seed = UInt64Builder::new();
    let mut flow = StringBuilder::new();
    let mut status = StringBuilder::new();
    let mut reason = StringBuilder::new();
    for (r, f) in &rows {
        repetition.append_value(r.repetition);
        seed.append_value(r.seed);
        flow.append_value(&f.name);
        status.append_value(f.metrics.status.as_str());
        reason.append_option(f.metrics.status_reason.as_deref());
    }
    let fixed: [ArrayRef; 5] = [
        Arc::new(repetition.finish()),
        Arc::new(seed.finish()),
        Arc::new(flow.finish()),
        Arc::new(status.finish()),
        Arc::new(reason.finish()),
    ];
    for (name, array) in RUN_COLUMNS.into_iter().zip(fixed) {
        cols.push(name, array);
    }
    let scalars: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|(_, f)| f.metrics.scalar_values())
        .collect();
    for (m, name) in FlowMetrics::scalar_names().iter().enumerate() {
        let values = scalars.iter().map(|s| s[m]);
        let array: ArrayRef = if FlowMetrics::is_count(name) {
            let mut b = UInt64Builder::new();
            values.for_each(|v| b.append_option(v.map(|v| v as u64)));
            Arc::new(b.finish())
        } else {
            let mut b = Float64Builder::new();
            values.for_each(|v| b.append_option(v));
            Arc::new(b.finish())
        };
        cols.push(name, array);
    }
    cols.batch()
}

/// One row per write of every flow of every run that kept its writes (swept keys, run: its
/// index in the results, repetition, seed, flow, then [`write_columns`]), as consecutive
/// batches (at least one, empty if there is no write), each of some writes of one flow, all
/// with the same columns: for runs whose rows were
/// spilled to a file ([`crate::write_spill`]) a chunk is read at a time, so writing them out
/// needs no memory per write.
pub fn for_each_writes_batch(
    results: &Results,
    mut each: impl FnMut(RecordBatch) -> Result<()>,
) -> Result<()> {
    let has_rows = |r: &crate::runner::RunOutput| match &r.write_spill {
        Some(spill) => spill.rows() > 0,
        None => r
            .flows
            .iter()
            .any(|f| f.writes.as_ref().is_some_and(|w| !w.is_empty())),
    };
    let types = param_types(
        results,
        results
            .runs
            .iter()
            .filter(|r| has_rows(r))
            .map(|r| r.config),
    );
    let mut sent = false;
    for (run_index, r) in results.runs.iter().enumerate() {
        for (flow, f) in r.flows.iter().enumerate() {
            let mut first = 0usize;
            let mut batch = |rows: &[WriteRow]| -> Result<()> {
                if rows.is_empty() {
                    return Ok(());
                }
                let key = RunKey {
                    index: run_index,
                    config: r.config,
                    repetition: r.repetition,
                    seed: r.seed,
                };
                let b = writes_rows_batch(results, &types, &key, &f.name, first, rows)?;
                first += rows.len();
                sent = true;
                each(b)
            };
            match &r.write_spill {
                Some(spill) => spill.for_each_chunk(flow, &mut batch)?,
                None => batch(f.writes.as_deref().unwrap_or_default())?,
            }
        }
    }
    if !sent {
        let key = RunKey {
            index: 0,
            config: 0,
            repetition: 0,
            seed: 0,
        };
        each(writes_rows_batch(results, &types, &key, "", 0, &[])?)?;
    }
    Ok(())
}

/// Which run rows belong to: its index in the results, configuration, repetition and seed.
struct RunKey {
    index: usize,
    config: usize,
    repetition: u32,
    seed: u64,
}

/// The batch of `rows`, writes `first..` of flow `name` of run `run`.
fn writes_rows_batch(
    results: &Results,
    types: &[DataType],
    run: &RunKey,
    name: &str,
    first: usize,
    rows: &[WriteRow],
) -> Result<RecordBatch> {
    let mut cols = Columns(Vec::new());
    for (i, key) in results.param_keys().iter().enumerate() {
        let values = rows
            .iter()
            .map(|_| &results.configs[run.config].params[i].1);
        cols.push(*key, param_column_of(&types[i], values));
    }
    let n = rows.len();
    let constant = |v: u64| Arc::new(arrow_array::UInt64Array::from(vec![v; n])) as ArrayRef;
    cols.push("run", constant(run.index as u64));
    cols.push(
        "repetition",
        Arc::new(arrow_array::UInt32Array::from(vec![run.repetition; n])),
    );
    cols.push("seed", constant(run.seed));
    cols.push(
        "flow",
        Arc::new(arrow_array::StringArray::from(vec![name; n])),
    );
    for (name, array) in write_columns(rows.iter().enumerate().map(|(i, w)| (first + i, w))) {
        cols.push(name, array);
    }
    cols.batch()
}

/// The columns of a write's own values, a row per `(index in its flow, write)`: write, the
/// write time, bytes, and the latency from the write to its first send, to the receiver's TCP
/// (transport), to the receiving application (app) and to its cumulative ACK, in ms (null when
/// not reached).
pub fn write_columns<'a>(
    rows: impl Iterator<Item = (usize, &'a WriteRow)>,
) -> Vec<(&'static str, ArrayRef)> {
    let mut write = UInt64Builder::new();
    let mut write_time = Float64Builder::new();
    let mut bytes = UInt64Builder::new();
    let mut lat: [Float64Builder; 4] = Default::default();
    for (i, w) in rows {
        write.append_value(i as u64);
        write_time.append_value(ns_to_ms(w.write_ns));
        bytes.append_value(w.bytes);
        for (b, t) in lat
            .iter_mut()
            .zip([w.first_send_ns, w.transport_ns, w.app_ns, w.acked_ns])
        {
            b.append_option(w.latency_ms(t));
        }
    }
    let mut out: Vec<(&'static str, ArrayRef)> = vec![
        ("write", Arc::new(write.finish())),
        ("write_time_ms", Arc::new(write_time.finish())),
        ("bytes", Arc::new(bytes.finish())),
    ];
    let names = [
        "first_send_ms",
        "transport_latency_ms",
        "app_latency_ms",
        "ack_latency_ms",
    ];
    for (name, mut b) in names.into_iter().zip(lat) {
        out.push((name, Arc::new(b.finish())));
    }
    out
}

/// The rows of `latency_cdf.csv`: configuration, flow, latency_ms, fraction.
pub fn cdf_batch(lines: &[CdfLine]) -> Result<RecordBatch> {
    let mut config = StringBuilder::new();
    let mut flow = StringBuilder::new();
    let mut x = Float64Builder::new();
    let mut fraction = Float64Builder::new();
    for (c, f, _, samples) in lines {
        for (v, p) in latency_cdf_runs(samples, CDF_POINTS) {
            config.append_value(c);
            flow.append_value(f);
            x.append_value(v);
            fraction.append_value(p);
        }
    }
    let mut cols = Columns(Vec::new());
    cols.push("configuration", Arc::new(config.finish()));
    cols.push("flow", Arc::new(flow.finish()));
    cols.push("latency_ms", Arc::new(x.finish()));
    cols.push("fraction", Arc::new(fraction.finish()));
    cols.batch()
}

/// Rows gathered into one record batch of an Arrow IPC file ([`write_writes_ipc_file`]), so that
/// a reader gets few large chunks while the writer holds at most about this many rows.
pub const IPC_FILE_BATCH_ROWS: usize = 1 << 16;

/// The rows of [`for_each_writes_batch`] into the Arrow IPC file `path` (uncompressed, so that a reader
/// can map it instead of reading it: pyarrow's `memory_map`), a batch at a time;
/// runs that spilled their rows are read back a chunk at a time, and gathered into batches of
/// at least `batch_rows` rows (but the last; [`IPC_FILE_BATCH_ROWS`]). Returns the rows written.
pub fn write_writes_ipc_file(
    results: &Results,
    path: &std::path::Path,
    batch_rows: usize,
) -> Result<u64> {
    let mut out = IpcFile {
        path,
        writer: None,
        pending: Vec::new(),
        pending_rows: 0,
        rows: 0,
    };
    for_each_writes_batch(results, |b| {
        out.pending_rows += b.num_rows();
        out.pending.push(b);
        if out.pending_rows >= batch_rows {
            out.flush()?;
        }
        Ok(())
    })?;
    out.flush()?;
    let mut w = out.writer.context("no batch of writes")?;
    w.finish()
        .with_context(|| format!("ending {}", path.display()))?;
    Ok(out.rows)
}

/// An Arrow IPC file being written from gathered batches (created with the first, whose
/// schema it takes).
struct IpcFile<'a> {
    path: &'a std::path::Path,
    writer: Option<arrow_ipc::writer::FileWriter<std::io::BufWriter<std::fs::File>>>,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    rows: u64,
}

impl IpcFile<'_> {
    /// Writes the gathered batches as one.
    fn flush(&mut self) -> Result<()> {
        let Some(first) = self.pending.first() else {
            return Ok(());
        };
        let context = || format!("writing {}", self.path.display());
        let schema = first.schema();
        let batch = arrow_select::concat::concat_batches(&schema, self.pending.iter())
            .with_context(context)?;
        self.pending.clear();
        self.pending_rows = 0;
        if self.writer.is_none() {
            let file = std::fs::File::create(self.path)
                .with_context(|| format!("creating {}", self.path.display()))?;
            let w = arrow_ipc::writer::FileWriter::try_new(std::io::BufWriter::new(file), &schema)
                .with_context(context)?;
            self.writer = Some(w);
        }
        let w = self.writer.as_mut().expect("created above");
        w.write(&batch).with_context(context)?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }
}

/// `batch` as an Arrow IPC stream.
pub fn ipc_bytes(batch: &RecordBatch) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema())
        .context("starting an Arrow IPC stream")?;
    w.write(batch).context("writing an Arrow IPC stream")?;
    w.finish().context("ending an Arrow IPC stream")?;
    drop(w);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<Value> {
        toml::from_str::<toml::Table>(&format!("v = {text}")).unwrap()["v"]
            .as_array()
            .unwrap()
            .clone()
    }

    #[test]
    fn swept_columns_take_the_type_of_all_their_values() {
        assert_eq!(param_type(values("[1, 2]").iter()), DataType::Int64);
        assert_eq!(param_type(values("[0, 0.01]").iter()), DataType::Float64);
        assert_eq!(
            param_type(values("[true, false]").iter()),
            DataType::Boolean
        );
        assert_eq!(param_type(values("[\"a\", 1]").iter()), DataType::Utf8);
        assert_eq!(param_type(values("[[], [\"rdb\"]]").iter()), DataType::Utf8);
        let mixed = values("[0, 0.01]");
        let col = param_column(mixed.iter());
        let col = col
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap();
        assert_eq!(col.values().to_vec(), vec![0.0, 0.01]);
        let lists = values("[[], [\"rdb\", \"tlp\"]]");
        let col = param_column(lists.iter());
        let col = col
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(col.value(1), "[rdb, tlp]");
    }

    #[test]
    fn an_ipc_stream_starts_with_the_continuation_marker() {
        let batch =
            cdf_batch(&[("c".into(), "f".into(), "c".into(), vec![(1.0, 2), (3.0, 1)])]).unwrap();
        assert_eq!(batch.num_rows(), 2);
        let bytes = ipc_bytes(&batch).unwrap();
        assert_eq!(&bytes[..4], &[0xff, 0xff, 0xff, 0xff]);
    }
}
