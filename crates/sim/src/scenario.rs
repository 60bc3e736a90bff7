//! A validated scenario (docs/spec/interface.md, "Scenario file"): [`Scenario::from_toml`]
//! deserializes the TOML value through serde_path_to_error into [`crate::schema`] and then checks
//! every value, so each error names the dotted key, the value and what was expected.
//!
//! Conventions fixed here:
//! - `network.rtt` and `flow.rtt` are split evenly per direction (the reverse half gets the odd
//!   nanosecond); `flow.rtt`/`access_bandwidth` form a per-flow access link on the client side.
//! - `[network.forward.loss]` / `[network.reverse.loss]` replace `[network.loss]` for that
//!   direction entirely (forward = client → server).
//! - Defaults: `seed = 1`, `repetitions = 1`, `queue_packets = 1000`, `jitter = 0`, loss none,
//!   flow `name = "flow<i>"`, `rtt = 0`, `start = 0`, `direction = "forward"`, tcp profile
//!   `linux-2.6.22`.
//! - Every flow must start before `duration` (sources generate in `[start, duration)`).
//! - A `[[flow]]` with `count = N` is N flows `<name>0` … `<name>N−1` ([`crate::flow_group`]).

use crate::error::ScenarioError;
use crate::flow_group::Group;
use crate::schema::*;
use crate::tcp_config::validate_tcp;
use crate::units::fmt_duration;
use std::time::Duration;
use thinlab_tcp::TcpConfig;

/// A scenario ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    /// How long sources generate data (absolute simulated time); the run then drains.
    pub duration: Duration,
    pub repetitions: u32,
    pub network: Network,
    pub flows: Vec<Flow>,
}

/// The shared bottleneck, one link per direction.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub rtt: Duration,
    /// Bits per second, each direction.
    pub bandwidth: u64,
    pub queue: QueueLimit,
    /// Per-packet extra delay, uniform in `[0, jitter]`, never reordering.
    pub jitter: Duration,
    /// Client → server.
    pub forward_loss: LossModel,
    /// Server → client.
    pub reverse_loss: LossModel,
}

/// Drop-tail limit on the packets waiting behind the one being serialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    Bernoulli {
        rate: f64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        loss_good: f64,
        loss_bad: f64,
    },
    /// 1-based indices of packets entering this direction of the bottleneck.
    Positions(Vec<u64>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Data client → server.
    Forward,
    /// Data server → client.
    Reverse,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub name: String,
    /// Extra round-trip access delay, split evenly per direction.
    pub rtt: Duration,
    /// Per-flow access link rate in bit/s.
    pub access_bandwidth: Option<u64>,
    pub start: Duration,
    pub direction: Direction,
    pub app: App,
    pub tcp: TcpConfig,
    /// Write pcap files at both hosts when the run is given a capture directory
    /// ([`crate::pcap_out`]).
    pub capture: bool,
}

/// A traffic source.
#[derive(Clone, Debug, PartialEq)]
pub enum App {
    /// `payload_bytes` every `interval`, each gap moved by a uniform draw in ±`jitter`
    /// (`jitter` < `interval`; zero by default).
    Fixed {
        payload_bytes: u64,
        interval: Duration,
        jitter: Duration,
    },
    /// Exponentially distributed sizes (≥ 1 byte) and gaps with the given means.
    Exponential {
        mean_payload_bytes: f64,
        mean_interval: Duration,
    },
    /// `payload_bytes` every `payload_bytes · 8 / rate` seconds.
    Cbr { rate: u64, payload_bytes: u64 },
    /// Keeps the send buffer full; `bytes` in total then close, or unbounded until `duration`.
    Bulk { bytes: Option<u64> },
    /// `writes × write_bytes` written back-to-back at start, then close.
    Transfer { writes: u64, write_bytes: u64 },
    /// Replays a trace's writes: (offset from establishment in ns, bytes), offsets
    /// non-decreasing, loaded and checked at validation ([`crate::trace_source`]).
    Trace {
        writes: crate::trace_source::TraceWrites,
    },
    /// An application profile of Evensen (2008) Table 2.1 ([`crate::app_profiles`]): payload sizes
    /// and gaps drawn from the distributions fitted to the table's row `name`.
    Profile { name: String },
    /// ns-2-style web background traffic ([`crate::app_http`]): Pareto II page sizes, one
    /// write per page, exponential gaps between page starts.
    Http(crate::app_http::Http),
}

impl App {
    /// Whether the source closes the connection after its last write.
    pub fn is_finite(&self) -> bool {
        matches!(self, App::Transfer { .. } | App::Bulk { bytes: Some(_) })
    }
}

impl Scenario {
    /// Parses TOML text (syntax errors become [`ScenarioError::Syntax`]).
    pub fn from_toml_str(s: &str) -> Result<Scenario, ScenarioError> {
        let v: toml::Value =
            toml::from_str(s).map_err(|e| ScenarioError::Syntax(e.message().to_string()))?;
        Scenario::from_toml(v)
    }

    /// Deserializes and validates a scenario value (the CLI removes `[sweep]` first).
    pub fn from_toml(v: toml::Value) -> Result<Scenario, ScenarioError> {
        if !v.is_table() {
            return Err(ScenarioError::invalid(
                "(top level)",
                v.type_str(),
                "a table",
            ));
        }
        let raw: RawScenario =
            serde_path_to_error::deserialize(v).map_err(ScenarioError::from_serde)?;
        validate(raw)
    }

    /// The largest `rto_max` of any flow (for the drain bound).
    pub fn max_rto_max(&self) -> Duration {
        self.flows
            .iter()
            .map(|f| f.tcp.rto_max)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

fn validate(raw: RawScenario) -> Result<Scenario, ScenarioError> {
    if raw.name.trim().is_empty() {
        return Err(ScenarioError::invalid("name", "\"\"", "a non-empty name"));
    }
    let duration = raw.duration.0;
    if duration.is_zero() {
        return Err(ScenarioError::invalid(
            "duration",
            "\"0s\"",
            "a positive duration",
        ));
    }
    let repetitions = raw.repetitions.unwrap_or(1);
    if repetitions == 0 {
        return Err(ScenarioError::invalid("repetitions", 0, "at least 1"));
    }
    let network = validate_network(raw.network)?;
    let raw_flows = match raw.flow {
        Some(f) if !f.is_empty() => f,
        _ => {
            return Err(ScenarioError::invalid(
                "flow",
                "(none)",
                "at least one [[flow]] table with an `app`",
            ))
        }
    };
    // Each [[flow]] is one flow or a group of them; `origin` keeps the table index for errors.
    let mut flows = Vec::with_capacity(raw_flows.len());
    let mut origin = Vec::with_capacity(raw_flows.len());
    for (i, f) in raw_flows.into_iter().enumerate() {
        let (count, spread) = (f.count, f.start_spread.as_ref().map(|d| d.0));
        let flow = validate_flow(i, f, duration)?;
        let group = Group::new(i, count, spread, flow.start, duration)?;
        for m in group.members(flow) {
            flows.push(m);
            origin.push(i);
        }
    }
    let mut names = std::collections::HashSet::with_capacity(flows.len());
    for (f, &i) in flows.iter().zip(&origin) {
        if !names.insert(f.name.as_str()) {
            return Err(ScenarioError::invalid(
                format!("flow.{i}.name"),
                format!("\"{}\"", f.name),
                "a name no other flow has (results are keyed by flow name)",
            ));
        }
    }
    Ok(Scenario {
        name: raw.name,
        seed: raw.seed.map_or(1, |s| s.0),
        duration,
        repetitions,
        network,
        flows,
    })
}

fn validate_network(n: RawNetwork) -> Result<Network, ScenarioError> {
    if n.bandwidth.0 == 0 {
        return Err(ScenarioError::invalid(
            "network.bandwidth",
            "0",
            "a positive rate like \"100Mbit\"",
        ));
    }
    let queue = match (n.queue_packets, n.queue_bytes) {
        (Some(_), Some(_)) => {
            return Err(ScenarioError::invalid(
                "network.queue_bytes",
                "(set together with network.queue_packets)",
                "only one of queue_packets and queue_bytes",
            ))
        }
        (Some(0), None) => {
            return Err(ScenarioError::invalid(
                "network.queue_packets",
                0,
                "at least 1 packet",
            ))
        }
        (Some(p), None) => QueueLimit::Packets(p),
        (None, Some(b)) if b.0 < 100 => {
            return Err(ScenarioError::invalid(
                "network.queue_bytes",
                b.0,
                "at least 100 bytes (one small frame)",
            ))
        }
        (None, Some(b)) => QueueLimit::Bytes(b.0),
        (None, None) => QueueLimit::Packets(1000),
    };
    let base = match n.loss {
        Some(l) => validate_loss("network.loss", l)?,
        None => LossModel::None,
    };
    let dir = |d: Option<RawDirection>, key: &str| -> Result<LossModel, ScenarioError> {
        match d.and_then(|d| d.loss) {
            Some(l) => validate_loss(&format!("network.{key}.loss"), l),
            None => Ok(base.clone()),
        }
    };
    let forward_loss = dir(n.forward, "forward")?;
    let reverse_loss = dir(n.reverse, "reverse")?;
    Ok(Network {
        rtt: n.rtt.0,
        bandwidth: n.bandwidth.0,
        queue,
        jitter: n.jitter.map_or(Duration::ZERO, |j| j.0),
        forward_loss,
        reverse_loss,
    })
}

fn probability(key: &str, v: Option<f64>, model: &str) -> Result<f64, ScenarioError> {
    match v {
        None => Err(ScenarioError::invalid(
            key,
            "(missing)",
            format!("a probability in [0, 1] (required by model \"{model}\")"),
        )),
        Some(x) if !(0.0..=1.0).contains(&x) => {
            Err(ScenarioError::invalid(key, x, "a probability in [0, 1]"))
        }
        Some(x) => Ok(x),
    }
}

fn validate_loss(prefix: &str, l: RawLoss) -> Result<LossModel, ScenarioError> {
    let present: Vec<(&str, bool)> = vec![
        ("rate", l.rate.is_some()),
        ("p", l.p.is_some()),
        ("r", l.r.is_some()),
        ("loss_good", l.loss_good.is_some()),
        ("loss_bad", l.loss_bad.is_some()),
        ("positions", l.positions.is_some()),
    ];
    let allowed: &[&str] = match l.model.as_str() {
        "none" => &[],
        "bernoulli" => &["rate"],
        "gilbert-elliott" => &["p", "r", "loss_good", "loss_bad"],
        "positions" => &["positions"],
        other => {
            return Err(ScenarioError::invalid(
                format!("{prefix}.model"),
                format!("\"{other}\""),
                "one of \"none\", \"bernoulli\", \"gilbert-elliott\", \"positions\"",
            ))
        }
    };
    for (k, p) in present {
        if p && !allowed.contains(&k) {
            let exp = if allowed.is_empty() {
                format!("no parameters for model \"{}\"", l.model)
            } else {
                format!("only {} for model \"{}\"", allowed.join(", "), l.model)
            };
            return Err(ScenarioError::invalid(
                format!("{prefix}.{k}"),
                "(set)",
                exp,
            ));
        }
    }
    let key = |k: &str| format!("{prefix}.{k}");
    Ok(match l.model.as_str() {
        "none" => LossModel::None,
        "bernoulli" => LossModel::Bernoulli {
            rate: probability(&key("rate"), l.rate, "bernoulli")?,
        },
        "gilbert-elliott" => {
            let m = "gilbert-elliott";
            LossModel::GilbertElliott {
                p: probability(&key("p"), l.p, m)?,
                r: probability(&key("r"), l.r, m)?,
                loss_good: probability(&key("loss_good"), l.loss_good.or(Some(0.0)), m)?,
                loss_bad: probability(&key("loss_bad"), l.loss_bad.or(Some(1.0)), m)?,
            }
        }
        _ => {
            let raw = l.positions.ok_or_else(|| {
                ScenarioError::invalid(
                    key("positions"),
                    "(missing)",
                    "a list of 1-based packet indices",
                )
            })?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, p) in raw.into_iter().enumerate() {
                if p < 1 {
                    return Err(ScenarioError::invalid(
                        format!("{prefix}.positions.{i}"),
                        p,
                        "a 1-based packet index (≥ 1)",
                    ));
                }
                out.push(p as u64);
            }
            out.sort_unstable();
            out.dedup();
            LossModel::Positions(out)
        }
    })
}

fn validate_flow(i: usize, f: RawFlow, duration: Duration) -> Result<Flow, ScenarioError> {
    let k = |s: &str| format!("flow.{i}.{s}");
    let name = f.name.unwrap_or_else(|| format!("flow{i}"));
    let start = f.start.map_or(Duration::ZERO, |s| s.0);
    if start >= duration {
        return Err(ScenarioError::invalid(
            k("start"),
            format!("\"{}\"", fmt_duration(start)),
            format!("a start before duration ({})", fmt_duration(duration)),
        ));
    }
    let access_bandwidth = match f.access_bandwidth {
        Some(r) if r.0 == 0 => {
            return Err(ScenarioError::invalid(
                k("access_bandwidth"),
                "0",
                "a positive rate",
            ))
        }
        r => r.map(|r| r.0),
    };
    let direction = match f.direction.as_deref() {
        None | Some("forward") => Direction::Forward,
        Some("reverse") => Direction::Reverse,
        Some(o) => {
            return Err(ScenarioError::invalid(
                k("direction"),
                format!("\"{o}\""),
                "\"forward\" or \"reverse\"",
            ))
        }
    };
    let app = validate_app(&k("app"), f.app)?;
    check_write_count(&k("app"), &app, duration - start)?;
    let tcp = validate_tcp(&k("tcp"), f.tcp)?;
    Ok(Flow {
        name,
        rtt: f.rtt.map_or(Duration::ZERO, |r| r.0),
        access_bandwidth,
        start,
        direction,
        app,
        tcp,
        capture: f.capture.unwrap_or(false),
    })
}

fn validate_app(prefix: &str, a: RawApp) -> Result<App, ScenarioError> {
    let key = |s: &str| format!("{prefix}.{s}");
    let present = [
        ("payload_bytes", a.payload_bytes.is_some()),
        ("interval", a.interval.is_some()),
        ("rate", a.rate.is_some()),
        ("bytes", a.bytes.is_some()),
        ("writes", a.writes.is_some()),
        ("write_bytes", a.write_bytes.is_some()),
        ("name", a.name.is_some()),
        ("file", a.file.is_some()),
        ("connection", a.connection.is_some()),
        ("off", a.off.is_some()),
        ("shape", a.shape.is_some()),
        ("jitter", a.jitter.is_some()),
    ];
    let allowed: &[&str] = match a.kind.as_str() {
        "fixed" => &["payload_bytes", "interval", "jitter"],
        "exponential" => &["payload_bytes", "interval"],
        "cbr" => &["rate", "payload_bytes"],
        "bulk" => &["bytes"],
        "transfer" => &["writes", "write_bytes"],
        "profile" => &["name"],
        "trace" => &["file", "connection"],
        "http" => &["payload_bytes", "off", "shape"],
        other => {
            return Err(ScenarioError::invalid(
                key("kind"),
                format!("\"{other}\""),
                "one of \"fixed\", \"exponential\", \"cbr\", \"bulk\", \"transfer\", \"profile\", \"trace\", \"http\"",
            ))
        }
    };
    for (k, p) in present {
        if p && !allowed.contains(&k) {
            return Err(ScenarioError::invalid(
                key(k),
                "(set)",
                format!("only {} for app kind \"{}\"", allowed.join(", "), a.kind),
            ));
        }
    }
    let missing = |k: &str, what: &str| {
        ScenarioError::invalid(
            key(k),
            "(missing)",
            format!("{what} (required by kind \"{}\")", a.kind),
        )
    };
    let positive_int = |k: &str, v: Option<f64>| -> Result<u64, ScenarioError> {
        let v = v.ok_or_else(|| missing(k, "a positive number of bytes"))?;
        if !(v >= 1.0 && v.fract() == 0.0 && v <= 1e12) {
            return Err(ScenarioError::invalid(
                key(k),
                v,
                "a positive whole number of bytes",
            ));
        }
        Ok(v as u64)
    };
    let positive_dur =
        |k: &str, v: Option<crate::units::DurationValue>| -> Result<Duration, ScenarioError> {
            let v = v.ok_or_else(|| missing(k, "a positive duration"))?.0;
            if v.is_zero() {
                return Err(ScenarioError::invalid(
                    key(k),
                    "\"0s\"",
                    "a positive duration",
                ));
            }
            Ok(v)
        };
    Ok(match a.kind.as_str() {
        "fixed" => {
            let interval = positive_dur("interval", a.interval)?;
            let jitter = a.jitter.map_or(Duration::ZERO, |j| j.0);
            if jitter >= interval {
                return Err(ScenarioError::invalid(
                    key("jitter"),
                    format!("{jitter:?}"),
                    "a jitter below the interval (gaps are interval ± jitter)",
                ));
            }
            App::Fixed {
                payload_bytes: positive_int("payload_bytes", a.payload_bytes)?,
                interval,
                jitter,
            }
        }
        "exponential" => {
            let m = a
                .payload_bytes
                .ok_or_else(|| missing("payload_bytes", "a positive mean payload"))?;
            if !(m.is_finite() && (1.0..=1e12).contains(&m)) {
                return Err(ScenarioError::invalid(
                    key("payload_bytes"),
                    m,
                    "a mean payload of at least 1 byte",
                ));
            }
            App::Exponential {
                mean_payload_bytes: m,
                mean_interval: positive_dur("interval", a.interval)?,
            }
        }
        "cbr" => {
            let rate = a.rate.ok_or_else(|| missing("rate", "a positive rate"))?.0;
            if rate == 0 {
                return Err(ScenarioError::invalid(
                    key("rate"),
                    "0",
                    "a positive rate like \"300kbit\"",
                ));
            }
            let payload_bytes = positive_int("payload_bytes", a.payload_bytes)?;
            if payload_bytes as u128 * 8 * 1_000_000_000 / (rate as u128) == 0 {
                return Err(ScenarioError::invalid(
                    key("rate"),
                    rate,
                    "a rate low enough for a non-zero write interval",
                ));
            }
            App::Cbr {
                rate,
                payload_bytes,
            }
        }
        "bulk" => match a.bytes {
            Some(b) if b.0 == 0 => {
                return Err(ScenarioError::invalid(
                    key("bytes"),
                    0,
                    "a positive byte count",
                ))
            }
            b => App::Bulk {
                bytes: b.map(|b| b.0),
            },
        },
        "transfer" => {
            let writes = a
                .writes
                .ok_or_else(|| missing("writes", "a positive number of writes"))?;
            if writes == 0 {
                return Err(ScenarioError::invalid(key("writes"), 0, "at least 1 write"));
            }
            let wb = a
                .write_bytes
                .ok_or_else(|| missing("write_bytes", "a positive byte count"))?
                .0;
            if wb == 0 {
                return Err(ScenarioError::invalid(
                    key("write_bytes"),
                    0,
                    "a positive byte count",
                ));
            }
            if !matches!(writes.checked_mul(wb), Some(t) if t <= 1 << 40) {
                return Err(ScenarioError::invalid(
                    key("writes"),
                    writes,
                    "writes × write_bytes at most 1 TiB",
                ));
            }
            App::Transfer {
                writes,
                write_bytes: wb,
            }
        }
        "profile" => {
            let name = a
                .name
                .ok_or_else(|| missing("name", "an application profile name"))?;
            if crate::app_profiles::profile(&name).is_none() {
                let known = crate::app_profiles::names()
                    .iter()
                    .map(|n| format!("\"{n}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(ScenarioError::invalid(
                    key("name"),
                    format!("\"{name}\""),
                    format!("one of {known} (the TCP rows of Evensen (2008) Table 2.1)"),
                ));
            }
            App::Profile { name }
        }
        "trace" => {
            let file = a
                .file
                .as_deref()
                .ok_or_else(|| missing("file", "a pcap/pcapng or CSV file path"))?;
            App::Trace {
                writes: crate::trace_source::load(prefix, file, a.connection.as_deref())?,
            }
        }
        _ => {
            let d = crate::app_http::Http::default();
            let mean_page_bytes = match a.payload_bytes {
                None => d.mean_page_bytes,
                Some(m) if m.is_finite() && (1.0..=1e12).contains(&m) => m,
                Some(m) => {
                    return Err(ScenarioError::invalid(
                        key("payload_bytes"),
                        m,
                        "a mean page size of at least 1 byte (at most 1e12)",
                    ))
                }
            };
            let shape = match a.shape {
                None => d.shape,
                Some(x) if x.is_finite() && x > 1.0 && x <= 100.0 => x,
                Some(x) => {
                    return Err(ScenarioError::invalid(
                        key("shape"),
                        x,
                        "a Pareto II shape in (1, 100] (the mean is infinite for shape ≤ 1)",
                    ))
                }
            };
            let mean_off = match a.off {
                None => d.mean_off,
                Some(_) => positive_dur("off", a.off)?,
            };
            App::Http(crate::app_http::Http {
                mean_page_bytes,
                shape,
                mean_off,
            })
        }
    })
}

/// Most application writes one flow may generate (each becomes one delivery record).
pub const MAX_WRITES_PER_FLOW: u64 = 100_000_000;

/// The mean gap between writes of a source that writes at a rate (and the key that sets it),
/// `None` for sources whose write count is not set by a gap.
fn write_gap_ns(app: &App) -> Option<(&'static str, u128)> {
    Some(match *app {
        App::Fixed { interval, .. } => ("interval", interval.as_nanos()),
        App::Exponential { mean_interval, .. } => ("interval", mean_interval.as_nanos()),
        App::Http(h) => ("off", h.mean_off.as_nanos()),
        App::Profile { ref name } => (
            "name",
            crate::app_profiles::profile(name).map_or(1, |p| (p.row.iat_avg_ms * 1e6) as u128),
        ),
        App::Cbr {
            rate,
            payload_bytes,
        } => (
            "rate",
            crate::app::cbr_interval_ns(rate, payload_bytes) as u128,
        ),
        _ => return None,
    })
}

impl Flow {
    /// About how many application writes (delivery records) this flow makes in a run of
    /// `duration` on a bottleneck of `bandwidth` bit/s: for a bulk source, one per refill of
    /// a third of its send buffer at the rate of the slower of the bottleneck and its access
    /// link. An estimate for resource checks, not a promise.
    pub fn estimated_writes(&self, duration: Duration, bandwidth: u64) -> u64 {
        let active = duration.saturating_sub(self.start);
        if let Some((_, gap)) = write_gap_ns(&self.app) {
            return (active.as_nanos() / gap.max(1)).min(u128::from(u64::MAX)) as u64 + 1;
        }
        match self.app {
            App::Transfer { writes, .. } => writes,
            App::Trace { ref writes } => writes.len() as u64,
            App::Bulk { bytes } => {
                let rate = self
                    .access_bandwidth
                    .map_or(bandwidth, |a| a.min(bandwidth));
                let by_rate = (rate as u128 * active.as_nanos() / 8 / 1_000_000_000) as u64;
                let total = bytes.map_or(by_rate, |b| b.min(by_rate));
                let chunk = (self.tcp.send_buffer as u64 / 3).max(1);
                total / chunk + 1
            }
            _ => 1,
        }
    }
}

/// Rejects sources that would generate more than [`MAX_WRITES_PER_FLOW`] writes.
fn check_write_count(prefix: &str, app: &App, active: Duration) -> Result<(), ScenarioError> {
    let (key, interval_ns) = match *app {
        App::Trace { ref writes } if writes.len() as u64 > MAX_WRITES_PER_FLOW => {
            return Err(ScenarioError::invalid(
                format!("{prefix}.file"),
                format!("({} writes)", writes.len()),
                format!("at most {MAX_WRITES_PER_FLOW} writes"),
            ))
        }
        App::Transfer { writes, .. } if writes > MAX_WRITES_PER_FLOW => {
            return Err(ScenarioError::invalid(
                format!("{prefix}.writes"),
                writes,
                format!("at most {MAX_WRITES_PER_FLOW} writes"),
            ))
        }
        _ => match write_gap_ns(app) {
            Some(g) => g,
            None => return Ok(()),
        },
    };
    let writes = active.as_nanos() / interval_ns.max(1);
    if writes > MAX_WRITES_PER_FLOW as u128 {
        return Err(ScenarioError::invalid(
            format!("{prefix}.{key}"),
            format!(
                "{} between writes on average, {writes} writes in {}",
                crate::units::fmt_duration(Duration::from_nanos(interval_ns as u64)),
                crate::units::fmt_duration(active)
            ),
            format!("at most {MAX_WRITES_PER_FLOW} writes per flow over the flow's active time (a longer interval or a shorter duration)"),
        ));
    }
    Ok(())
}
