//! Errors for bad scenario input. Every variant names the dotted key (e.g.
//! `flow.0.app.interval`), the offending value and what was expected.

/// A scenario that cannot be run, with the key, the value and the expectation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// The text is not TOML at all.
    #[error("scenario is not valid TOML: {0}")]
    Syntax(String),
    /// Rejected while deserializing: unknown key, missing key, wrong type, unparseable value.
    /// `message` is serde's, which names the value and the expectation.
    #[error("`{key}`: {message}")]
    Schema { key: String, message: String },
    /// A well-typed value outside what is allowed.
    #[error("`{key}` = {value}: expected {expected}")]
    Invalid {
        key: String,
        value: String,
        expected: String,
    },
}

/// serde's type names in words a user knows: "expected f64" → "expected a number".
fn plain_words(message: &str) -> String {
    const TYPES: [(&str, &str); 12] = [
        ("f64", "a number"),
        ("f32", "a number"),
        ("u64", "a whole number ≥ 0"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u16", "a whole number from 0 to 65535"),
        ("u8", "a whole number from 0 to 255"),
        ("usize", "a whole number ≥ 0"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
        ("bool", "true or false"),
        ("a boolean", "true or false"),
        ("a sequence", "a list"),
    ];
    let mut out = message.to_string();
    for (rust, words) in TYPES {
        out = out.replace(&format!("expected {rust}"), &format!("expected {words}"));
    }
    out.replace("invalid type: sequence", "invalid type: list")
        .replace("invalid type: map", "invalid type: table")
}

impl ScenarioError {
    /// The dotted key the error is about (empty for the top level or syntax errors).
    pub fn key(&self) -> &str {
        match self {
            ScenarioError::Syntax(_) => "",
            ScenarioError::Schema { key, .. } | ScenarioError::Invalid { key, .. } => key,
        }
    }

    pub(crate) fn invalid(
        key: impl Into<String>,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        ScenarioError::Invalid {
            key: key.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    pub(crate) fn from_serde(err: serde_path_to_error::Error<toml::de::Error>) -> Self {
        use serde_path_to_error::Segment;
        let key = err
            .path()
            .iter()
            .filter_map(|s| match s {
                Segment::Seq { index } => Some(index.to_string()),
                Segment::Map { key } => Some(key.clone()),
                Segment::Enum { variant } => Some(variant.clone()),
                Segment::Unknown => None,
            })
            .collect::<Vec<_>>()
            .join(".");
        let inner = err.into_inner();
        let message = plain_words(inner.message().trim());
        let key = if key.is_empty() {
            "(top level)".to_string()
        } else {
            key
        };
        ScenarioError::Schema { key, message }
    }
}
