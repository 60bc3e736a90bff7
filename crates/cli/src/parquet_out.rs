//! `runs.parquet` and `writes.parquet` (`thinlab run --format parquet`, and the Python API on
//! request): the Arrow tables of [`crate::tables`] written with the `parquet` crate, Snappy
//! compressed, with the resolved scenario and thinlab's version in the file's key-value
//! metadata (`thinlab.scenario`, `thinlab.version`).

use crate::output::Results;
use anyhow::{Context, Result};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

/// Writes `batch` into `path` with `scenario` (the resolved TOML) in its metadata.
pub fn write(path: &Path, batch: &RecordBatch, scenario: &str) -> Result<()> {
    write_batches(path, scenario, |each| each(batch.clone()))
}

/// Writes the batches `batches` hands to its argument (at least one, all with the same
/// columns) into `path` as one table, with `scenario` (the resolved TOML) in its metadata.
fn write_batches(
    path: &Path,
    scenario: &str,
    batches: impl FnOnce(&mut dyn FnMut(RecordBatch) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let metadata = [
        ("thinlab.scenario", scenario),
        ("thinlab.version", env!("CARGO_PKG_VERSION")),
    ];
    let mut writer: Option<(ArrowWriter<std::fs::File>, SchemaRef)> = None;
    batches(&mut |batch: RecordBatch| {
        if writer.is_none() {
            // In the Arrow schema too: pyarrow and polars show the schema's metadata.
            let schema = Arc::new(
                batch.schema().as_ref().clone().with_metadata(
                    metadata
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect::<std::collections::HashMap<String, String>>(),
                ),
            );
            let file = std::fs::File::create(path)
                .with_context(|| format!("creating {}", path.display()))?;
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_key_value_metadata(Some(
                    metadata
                        .iter()
                        .map(|(k, v)| KeyValue::new(k.to_string(), v.to_string()))
                        .collect(),
                ))
                .build();
            let w = ArrowWriter::try_new(file, schema.clone(), Some(props))
                .with_context(|| format!("starting {}", path.display()))?;
            writer = Some((w, schema));
        }
        let (w, schema) = writer.as_mut().expect("created above");
        let batch = batch
            .with_schema(schema.clone())
            .context("adding the metadata")?;
        w.write(&batch)
            .with_context(|| format!("writing {}", path.display()))
    })?;
    let (w, _) = writer.context("no rows to write")?;
    w.close()
        .map(drop)
        .with_context(|| format!("writing {}", path.display()))
}

/// `runs.parquet` and `writes.parquet` of `results` into `dir`; the writes a batch at a time
/// (runs that spilled theirs to a file are read back a chunk at a time).
pub fn write_results(dir: &Path, results: &Results, scenario: &str) -> Result<()> {
    write(
        &dir.join("runs.parquet"),
        &crate::tables::runs_batch(results)?,
        scenario,
    )?;
    write_batches(&dir.join("writes.parquet"), scenario, |each| {
        crate::tables::for_each_writes_batch(results, each)
    })
}
