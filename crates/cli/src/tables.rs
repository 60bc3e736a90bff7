//! The results as Arrow record batches (Apache Arrow columnar format): the rows of `runs.csv`
//! with typed columns, the per-write rows, and the CDF of `latency_cdf.csv`. They feed
//! `runs.parquet`/`writes.parquet` ([`crate::parquet_out`]) and the Python API, which receives
//! them as Arrow IPC streams (whole columns, never row by row).
//!
//! A swept key's column is typed by its values: integers → Int64, numbers → Float64, booleans
//! → Boolean, anything else → the text `runs.csv` holds. Counts are UInt64, other metrics
//! Float64, both null where `summary.json` has `null`.

use crate::output::{metric_names, CdfLine, Results, CDF_POINTS, RUN_COLUMNS};
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
    match param_type(values.clone()) {
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
    let scalars: Vec<Vec<(String, Option<f64>)>> =
        rows.iter().map(|(_, f)| f.metrics.scalars()).collect();
    for (m, name) in metric_names().into_iter().enumerate() {
        let values = scalars.iter().map(|s| s[m].1);
        let array: ArrayRef = if FlowMetrics::is_count(&name) {
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

/// One row per write of every flow of every run that kept its writes: swept keys, run (its
/// index in the results), repetition, seed, flow, then [`write_columns`].
pub fn writes_batch(results: &Results) -> Result<RecordBatch> {
    let mut rows: Vec<(usize, usize, &str, u32, u64, usize, &WriteRow)> = Vec::new();
    for (run_index, r) in results.runs.iter().enumerate() {
        for f in &r.flows {
            for (i, w) in f.writes.iter().flatten().enumerate() {
                rows.push((run_index, r.config, &f.name, r.repetition, r.seed, i, w));
            }
        }
    }
    let mut cols = Columns(Vec::new());
    let configs: Vec<usize> = rows.iter().map(|r| r.1).collect();
    param_columns(results, &configs, &mut cols);
    let mut run = UInt64Builder::new();
    let mut repetition = UInt32Builder::new();
    let mut seed = UInt64Builder::new();
    let mut flow = StringBuilder::new();
    for &(run_index, _, name, rep, s, _, _) in &rows {
        run.append_value(run_index as u64);
        repetition.append_value(rep);
        seed.append_value(s);
        flow.append_value(name);
    }
    cols.push("run", Arc::new(run.finish()));
    cols.push("repetition", Arc::new(repetition.finish()));
    cols.push("seed", Arc::new(seed.finish()));
    cols.push("flow", Arc::new(flow.finish()));
    for (name, array) in write_columns(rows.iter().map(|r| (r.5, r.6))) {
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
