//! The one place that says which values of the scenario contract are implemented.
//!
//! The interface (docs/spec/interface.md) names app kinds, TCP profiles, congestion controls,
//! mechanisms and RDB/thin-detection knobs that later issues implement. The scenario parser accepts
//! their keys and recognises their values, then asks [`check`]; a later issue turns a feature on by
//! making [`implemented`] return `true` for it.

use crate::error::ScenarioError;

/// A value of the contract that may not be implemented yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// `app.kind = "profile"` (application profiles of Evensen (2008) Table 2.1).
    AppProfile,
    /// `app.kind = "trace"` (trace replay).
    AppTrace,
    /// `app.kind = "http"` (on/off background flows).
    AppHttp,
    /// `tcp.profile = "linux"` (a modern Linux profile).
    ProfileLinux,
    /// `tcp.cc = "cubic"`.
    CcCubic,
    /// `tcp.cc = "pert"`.
    CcPert,
    /// A name of `tcp.mechanisms`.
    Mechanism(&'static str),
    /// `tcp.rdb_max_bytes`, `tcp.rdb_max_packets`, `tcp.rdb_variant`.
    RdbKnob,
    /// `tcp.thin_detection`.
    ThinDetection,
}

impl Feature {
    fn describe(self) -> String {
        match self {
            Feature::AppProfile => "the \"profile\" app kind".into(),
            Feature::AppTrace => "the \"trace\" app kind".into(),
            Feature::AppHttp => "the \"http\" app kind".into(),
            Feature::ProfileLinux => "the \"linux\" TCP profile".into(),
            Feature::CcCubic => "CUBIC congestion control".into(),
            Feature::CcPert => "PERT congestion control".into(),
            Feature::Mechanism(m) => format!("the \"{m}\" mechanism"),
            Feature::RdbKnob => "RDB tuning".into(),
            Feature::ThinDetection => "thin-stream detection tuning".into(),
        }
    }
}

/// Whether the simulator and the TCP endpoint implement `f`. Flip entries here.
pub fn implemented(f: Feature) -> bool {
    match f {
        Feature::AppTrace | Feature::AppProfile | Feature::AppHttp => true,
        Feature::ProfileLinux => true,
        Feature::CcCubic | Feature::CcPert => true,
        Feature::Mechanism(m) => matches!(
            m,
            "rdb"
                | "linear-timeouts"
                | "thin-dupack"
                | "early-retransmit"
                | "er-threshold"
                | "tlp"
                | "rack"
        ),
        Feature::RdbKnob => true,
        Feature::ThinDetection => true,
    }
}

/// `Ok` if `f` is implemented, else a `NotImplemented` error naming `key` and `value`.
pub fn check(f: Feature, key: &str, value: impl std::fmt::Display) -> Result<(), ScenarioError> {
    if implemented(f) {
        Ok(())
    } else {
        Err(ScenarioError::NotImplemented {
            key: key.to_string(),
            value: value.to_string(),
            feature: f.describe(),
        })
    }
}
