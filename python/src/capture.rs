//! `analyze`: `thinlab analyze` of a sender capture (and optionally the receiver's), in this
//! process. The result folder is written as the CLI writes it; the per-write rows of the
//! listed connections come back as an Arrow IPC stream (their "write" is the first send: a
//! capture cannot see the application's writes).

use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::Arc;
use thinlab_cli::write_rows::WriteRow;

/// Analyses `sender` (and `receiver`) into the folder `out`; returns the per-write rows.
#[pyfunction]
#[pyo3(signature = (sender, out, receiver=None, connection=None, clock_offset=None))]
pub fn analyze<'py>(
    py: Python<'py>,
    sender: PathBuf,
    out: PathBuf,
    receiver: Option<PathBuf>,
    connection: Option<String>,
    clock_offset: Option<f64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let args = thinlab_cli::args::AnalyzeArgs {
        sender,
        receiver,
        out: Some(out),
        connection,
        clock_offset,
        quiet: true,
    };
    let bytes = py
        .detach(|| {
            let conns = thinlab_cli::analyze::analyze_listing(args)?;
            writes_ipc(&conns)
        })
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// One row per write of every connection: `flow` (the connection's id), `write`, the write
/// time and the latencies, as in `Results.writes`.
fn writes_ipc(conns: &[thinlab_trace::flows::ConnectionAnalysis]) -> anyhow::Result<Vec<u8>> {
    use arrow_array::builder::StringBuilder;
    use arrow_array::{ArrayRef, RecordBatch};
    let rows: Vec<(String, usize, WriteRow)> = conns
        .iter()
        .flat_map(|c| {
            let id = c.id();
            c.records
                .writes
                .iter()
                .enumerate()
                .map(move |(i, w)| (id.clone(), i, WriteRow::from_record(w)))
        })
        .collect();
    let mut flow = StringBuilder::new();
    rows.iter().for_each(|r| flow.append_value(&r.0));
    let mut columns: Vec<(&str, ArrayRef)> = vec![("flow", Arc::new(flow.finish()))];
    columns.extend(thinlab_cli::tables::write_columns(
        rows.iter().map(|r| (r.1, &r.2)),
    ));
    let batch =
        RecordBatch::try_from_iter_with_nullable(columns.into_iter().map(|(n, a)| (n, a, true)))?;
    thinlab_cli::tables::ipc_bytes(&batch)
}
