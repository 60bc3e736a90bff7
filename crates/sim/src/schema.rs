//! The raw TOML schema of a scenario file (docs/spec/interface.md), as serde structs with
//! `deny_unknown_fields` everywhere. Variant-specific keys (loss model parameters, app kinds) are
//! flat optional fields so that serde_path_to_error reports the exact dotted key of any bad value;
//! [`crate::scenario`] then checks which keys belong to which variant.

use crate::units::{DurationValue, RateValue, SizeValue};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: String,
    #[serde(default)]
    pub seed: Option<crate::units::SeedValue>,
    pub duration: DurationValue,
    #[serde(default)]
    pub repetitions: Option<u32>,
    pub network: RawNetwork,
    /// `[[flow]]` tables; absent means no flows, which validation rejects with a clear message.
    #[serde(default)]
    pub flow: Option<Vec<RawFlow>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    pub rtt: DurationValue,
    pub bandwidth: RateValue,
    #[serde(default)]
    pub queue_packets: Option<u64>,
    #[serde(default)]
    pub queue_bytes: Option<SizeValue>,
    #[serde(default)]
    pub jitter: Option<DurationValue>,
    #[serde(default)]
    pub loss: Option<RawLoss>,
    #[serde(default)]
    pub forward: Option<RawDirection>,
    #[serde(default)]
    pub reverse: Option<RawDirection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDirection {
    #[serde(default)]
    pub loss: Option<RawLoss>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoss {
    pub model: String,
    #[serde(default)]
    pub rate: Option<f64>,
    #[serde(default)]
    pub p: Option<f64>,
    #[serde(default)]
    pub r: Option<f64>,
    #[serde(default)]
    pub loss_good: Option<f64>,
    #[serde(default)]
    pub loss_bad: Option<f64>,
    #[serde(default)]
    pub positions: Option<Vec<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFlow {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub rtt: Option<DurationValue>,
    #[serde(default)]
    pub access_bandwidth: Option<RateValue>,
    #[serde(default)]
    pub start: Option<DurationValue>,
    /// A flow group: this many copies (`crate::flow_group`).
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub start_spread: Option<DurationValue>,
    #[serde(default)]
    pub direction: Option<String>,
    pub app: RawApp,
    #[serde(default)]
    pub tcp: Option<RawTcp>,
    /// Write pcap files at both hosts of this flow (see `crate::pcap_out`).
    #[serde(default)]
    pub capture: Option<bool>,
}

/// All keys of every app kind; `kind` selects which are required/allowed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApp {
    pub kind: String,
    #[serde(default)]
    pub payload_bytes: Option<f64>,
    #[serde(default)]
    pub interval: Option<DurationValue>,
    #[serde(default)]
    pub rate: Option<RateValue>,
    #[serde(default)]
    pub bytes: Option<SizeValue>,
    #[serde(default)]
    pub writes: Option<u64>,
    #[serde(default)]
    pub write_bytes: Option<SizeValue>,
    /// `profile` kind (later issue).
    #[serde(default)]
    pub name: Option<String>,
    /// `trace` kind: pcap/pcapng or CSV file (relative to the current directory).
    #[serde(default)]
    pub file: Option<String>,
    /// `trace` kind: `"A:P-B:P"` picks one connection of a pcap.
    #[serde(default)]
    pub connection: Option<String>,
    /// `http` kind: mean time between the starts of two pages (`crate::app_http`).
    #[serde(default)]
    pub off: Option<DurationValue>,
    /// `http` kind: Pareto II shape of the page sizes.
    #[serde(default)]
    pub shape: Option<f64>,
    /// `fixed` kind: each gap is `interval` plus a uniform draw in ±`jitter`.
    #[serde(default)]
    pub jitter: Option<DurationValue>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTcp {
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub cc: Option<String>,
    #[serde(default)]
    pub mechanisms: Option<Vec<String>>,
    #[serde(default)]
    pub mss: Option<u16>,
    #[serde(default)]
    pub nodelay: Option<bool>,
    #[serde(default)]
    pub sack: Option<bool>,
    #[serde(default)]
    pub delayed_ack: Option<String>,
    #[serde(default)]
    pub rto_min: Option<DurationValue>,
    #[serde(default)]
    pub rto_initial: Option<DurationValue>,
    #[serde(default)]
    pub clock_granularity: Option<DurationValue>,
    #[serde(default)]
    pub rdb_max_bytes: Option<SizeValue>,
    #[serde(default)]
    pub rdb_max_packets: Option<u64>,
    #[serde(default)]
    pub rdb_variant: Option<String>,
    #[serde(default)]
    pub thin_detection: Option<String>,
    #[serde(default)]
    pub cwnd_reduction: Option<String>,
    #[serde(default)]
    pub clock_hz: Option<i64>,
    #[serde(default)]
    pub retrans_collapse: Option<bool>,
    #[serde(default)]
    pub dsack: Option<bool>,
    #[serde(default)]
    pub send_buffer: Option<SizeValue>,
    #[serde(default)]
    pub recv_buffer: Option<SizeValue>,
}
