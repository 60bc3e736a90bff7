//! Rust errors as Python exceptions, with the CLI's messages. Bad input (a scenario key, an
//! override, a file) raises `ScenarioError` (a `ValueError` in spirit: the caller must fix
//! something) carrying `key`, `value` and `expected` where the simulator's schema names them;
//! everything else raises `ThinlabError`. Nothing a user passes crashes the interpreter.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use thinlab_cli::error::BadInput;
use thinlab_sim::ScenarioError as SimScenarioError;

create_exception!(
    _native,
    ThinlabError,
    PyException,
    "A run, an analysis or a file operation failed."
);
create_exception!(
    _native,
    ScenarioError,
    ThinlabError,
    "Bad input: the message names the key, the value and what was expected (attributes `key`, \
     `value`, `expected`; None where the message is all there is)."
);

/// `e` as the Python exception a caller can act on.
pub fn to_py(e: anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    let sim = e.chain().find_map(|c| c.downcast_ref::<SimScenarioError>());
    let bad = e.chain().any(|c| c.downcast_ref::<BadInput>().is_some());
    if sim.is_none() && !bad {
        return ThinlabError::new_err(message);
    }
    Python::attach(|py| {
        let err = ScenarioError::new_err(message);
        let (key, value, expected) = match sim {
            Some(SimScenarioError::Invalid {
                key,
                value,
                expected,
            }) => (
                Some(key.clone()),
                Some(value.clone()),
                Some(expected.clone()),
            ),
            Some(SimScenarioError::Schema { key, message }) => {
                let (value, expected) = schema_parts(message);
                (Some(key.clone()), value, expected)
            }
            _ => (None, None, None),
        };
        let v = err.value(py);
        let _ = v.setattr("key", key);
        let _ = v.setattr("value", value);
        let _ = v.setattr("expected", expected);
        err
    })
}

/// A [`BadInput`] message as a `ScenarioError`.
pub fn bad_input(message: impl Into<String>) -> PyErr {
    to_py(BadInput::new(message).into())
}

/// The value and the expectation in serde's words (`invalid value: string "abc", expected a
/// duration`; `unknown field `x`, expected one of …`), where the message has them.
fn schema_parts(message: &str) -> (Option<String>, Option<String>) {
    let Some((what, expected)) = message.split_once(", expected ") else {
        return (None, None);
    };
    let value = [
        "invalid value: ",
        "invalid type: ",
        "unknown field ",
        "unknown variant ",
    ]
    .iter()
    .find_map(|p| what.strip_prefix(p))
    .map(str::to_string);
    (value, Some(expected.to_string()))
}
