//! `thinlab._native`: the Rust side of the Python package (PyO3). It calls the same library
//! functions as the `thinlab` command (crate `thinlab`, lib `thinlab_cli`), in the
//! interpreter's process: no subprocess. The Python side (`python/thinlab/`) wraps it into
//! `thinlab.run`, `thinlab.analyze`, `Results`, `Campaign` and the Ray engine.
//!
//! - `plan`: a scenario loaded, overridden and expanded into its runs; running them.
//! - `runs`: finished runs (serializable, for Ray and campaigns) and their result tables.
//! - `capture`: `analyze` of pcap files.
//! - `errors`: Rust errors as Python exceptions.

mod capture;
mod errors;
mod plan;
mod runs;

use pyo3::prelude::*;

/// thinlab's simulator and analyzer, called from Python (use the `thinlab` package).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ThinlabError", py.get_type::<errors::ThinlabError>())?;
    m.add("ScenarioError", py.get_type::<errors::ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<plan::Plan>()?;
    m.add_class::<runs::RunSet>()?;
    m.add_class::<runs::Tables>()?;
    m.add_function(wrap_pyfunction!(capture::analyze, m)?)?;
    Ok(())
}
