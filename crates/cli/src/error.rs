//! Exit codes: 2 for a bad scenario or bad arguments ([`BadInput`], the simulator's
//! `ScenarioError`), 3 for `--strict` with a flow that did not complete ([`Incomplete`]),
//! 1 for anything else.

use std::fmt;

/// Input the user must fix; the message names the key, the value and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadInput(pub String);

impl BadInput {
    pub fn new(msg: impl Into<String>) -> Self {
        BadInput(msg.into())
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// `--strict`: some flow did not complete (exit code 3). The results were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete(pub String);

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Incomplete {}

/// Ctrl-C: the finished runs were written, marked incomplete (exit code 130).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted(pub String);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// A command run by another process (the Ray driver) failed with this exit code; it printed
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit(pub u8);

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the Ray driver exited with code {} (its message is above)",
            self.0
        )
    }
}

impl std::error::Error for Exit {}

/// The process exit code for an error.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if let Some(Exit(code)) = err.chain().find_map(|e| e.downcast_ref::<Exit>()) {
        return i32::from(*code);
    }
    if err.chain().any(|e| e.is::<Interrupted>()) {
        return i32::from(crate::interrupt::EXIT_CODE);
    }
    if err.chain().any(|e| e.is::<Incomplete>()) {
        return 3;
    }
    let bad = err
        .chain()
        .any(|e| e.is::<BadInput>() || e.is::<crate::sim::ScenarioError>());
    if bad {
        2
    } else {
        1
    }
}
