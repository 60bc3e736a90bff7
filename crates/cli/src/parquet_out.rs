//! `runs.parquet` and `writes.parquet` (`thinlab run --format parquet`, and the Python API on
//! request): the Arrow tables of [`crate::tables`] written with the `parquet` crate, Snappy
//! compressed, with the resolved scenario and thinlab's version in the file's key-value
//! metadata (`thinlab.scenario`, `thinlab.version`).

use crate::output::Results;
use anyhow::{Context, Result};
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::path::Path;

/// Writes `batch` into `path` with `scenario` (the resolved TOML) in its metadata.
pub fn write(path: &Path, batch: &RecordBatch, scenario: &str) -> Result<()> {
    let metadata = [
        ("thinlab.scenario", scenario),
        ("thinlab.version", env!("CARGO_PKG_VERSION")),
    ];
    // In the Arrow schema too: pyarrow and polars show the schema's metadata.
    let schema = batch.schema().as_ref().clone().with_metadata(
        metadata
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<std::collections::HashMap<String, String>>(),
    );
    let batch = batch
        .clone()
        .with_schema(std::sync::Arc::new(schema))
        .context("adding the metadata")?;
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(
            metadata
                .iter()
                .map(|(k, v)| KeyValue::new(k.to_string(), v.to_string()))
                .collect(),
        ))
        .build();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))
        .with_context(|| format!("starting {}", path.display()))?;
    w.write(&batch)
        .and_then(|()| w.close().map(drop))
        .with_context(|| format!("writing {}", path.display()))
}

/// `runs.parquet` and `writes.parquet` of `results` into `dir`.
pub fn write_results(dir: &Path, results: &Results, scenario: &str) -> Result<()> {
    write(
        &dir.join("runs.parquet"),
        &crate::tables::runs_batch(results)?,
        scenario,
    )?;
    write(
        &dir.join("writes.parquet"),
        &crate::tables::writes_batch(results)?,
        scenario,
    )
}
