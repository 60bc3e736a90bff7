//! The `tcp` table of a flow mapped onto [`TcpConfig`]: the profile first, then each key
//! overrides one field; a `mechanisms` list replaces the profile's set (profile "linux" runs
//! ["tlp", "rack"] unless a list says otherwise). Names are looked up in thinlab-tcp's
//! registry (`thinlab_tcp::registry`).

use crate::error::ScenarioError;
use crate::schema::RawTcp;
use thinlab_tcp::{
    CcAlgorithm, CwndReduction, DelayedAckModel, Mechanisms, Profile, RdbVariant, TcpConfig,
    ThinDetection,
};

/// `value` looked up by `from_name`, or an error naming the key, the value and the choices.
fn named<T>(
    key: String,
    value: &str,
    from_name: fn(&str) -> Option<T>,
    choices: String,
) -> Result<T, ScenarioError> {
    from_name(value).ok_or_else(|| {
        ScenarioError::invalid(key, format!("\"{value}\""), format!("one of {choices}"))
    })
}

pub(crate) fn validate_tcp(prefix: &str, t: Option<RawTcp>) -> Result<TcpConfig, ScenarioError> {
    let key = |s: &str| format!("{prefix}.{s}");
    let Some(t) = t else {
        return Ok(TcpConfig::from_profile(Profile::Linux2622));
    };
    let profile = match t.profile.as_deref() {
        None => Profile::Linux2622,
        Some(p) => Profile::from_name(p).ok_or_else(|| {
            ScenarioError::invalid(
                key("profile"),
                format!("\"{p}\""),
                "one of \"linux-2.6.22\", \"linux\", \"freebsd-6\", \"ns2\", \"rfc\"",
            )
        })?,
    };
    let mut c = TcpConfig::from_profile(profile);
    if let Some(cc) = t.cc.as_deref() {
        c.cc = named(key("cc"), cc, CcAlgorithm::from_name, CcAlgorithm::names())?;
    }
    if let Some(ms) = &t.mechanisms {
        c.mechanisms = Mechanisms::from_names(ms).map_err(|(i, name)| {
            ScenarioError::invalid(
                format!("{prefix}.mechanisms.{i}"),
                format!("\"{name}\""),
                format!("one of {}", thinlab_tcp::Mechanism::names()),
            )
        })?;
    }
    if let Some(mss) = t.mss {
        if !(64..=65_000).contains(&mss) {
            return Err(ScenarioError::invalid(
                key("mss"),
                mss,
                "an MSS between 64 and 65000 bytes",
            ));
        }
        c.mss = mss;
    }
    if let Some(v) = t.nodelay {
        c.nodelay = v;
    }
    if let Some(v) = t.sack {
        c.sack = v;
    }
    if !c.sack {
        // TLP and RACK need SACK (docs/scenarios.md): a list naming them is refused; a
        // profile's default set loses them.
        if let Some(ms) = &t.mechanisms {
            if let Some(i) = ms.iter().position(|m| m == "tlp" || m == "rack") {
                return Err(ScenarioError::invalid(
                    format!("{prefix}.mechanisms.{i}"),
                    format!("\"{}\"", ms[i]),
                    format!(
                        "mechanisms that work without SACK: \"{}\" needs `{prefix}.sack = true`",
                        ms[i]
                    ),
                ));
            }
        }
        c.mechanisms.tlp = false;
        c.mechanisms.rack = false;
    }
    if let Some(d) = t.delayed_ack.as_deref() {
        c.delayed_ack = named(
            key("delayed_ack"),
            d,
            DelayedAckModel::from_name,
            DelayedAckModel::names(),
        )?;
    }
    if let Some(d) = t.rto_min {
        c.rto_min = d.0;
    }
    if let Some(d) = t.rto_initial {
        if d.0.is_zero() {
            return Err(ScenarioError::invalid(
                key("rto_initial"),
                "\"0s\"",
                "a positive duration",
            ));
        }
        c.rto_initial = d.0;
    }
    if let Some(d) = t.clock_granularity {
        if d.0.is_zero() {
            return Err(ScenarioError::invalid(
                key("clock_granularity"),
                "\"0s\"",
                "a positive duration (one clock tick, e.g. \"1ms\")",
            ));
        }
        c.clock_granularity = d.0;
    }
    if c.rto_min > c.rto_max {
        return Err(ScenarioError::invalid(
            key("rto_min"),
            format!("\"{:?}\"", c.rto_min),
            format!("at most the profile's maximum RTO ({:?})", c.rto_max),
        ));
    }
    if let Some(v) = t.rdb_max_bytes {
        c.rdb_max_bytes = u32::try_from(v.0).map_err(|_| {
            ScenarioError::invalid(
                key("rdb_max_bytes"),
                v.0,
                "a byte count below 4 GiB (0 = the MSS)",
            )
        })?;
    }
    if let Some(v) = t.rdb_max_packets {
        c.rdb_max_packets = match u32::try_from(v) {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(ScenarioError::invalid(
                    key("rdb_max_packets"),
                    v,
                    "a segment count of at least 1",
                ))
            }
        };
    }
    if let Some(v) = t.rdb_variant.as_deref() {
        c.rdb_variant = named(
            key("rdb_variant"),
            v,
            RdbVariant::from_name,
            RdbVariant::names(),
        )?;
    }
    if let Some(v) = t.thin_detection.as_deref() {
        c.thin_detection = named(
            key("thin_detection"),
            v,
            ThinDetection::from_name,
            ThinDetection::names(),
        )?;
    }
    if let Some(v) = t.retrans_collapse {
        c.retrans_collapse = v;
    }
    if let Some(v) = t.dsack {
        c.dsack = v;
    }
    if let Some(hz) = t.clock_hz {
        c.clock_hz = match hz {
            0 => None,
            1..=10_000 => Some(hz as u32),
            _ => {
                return Err(ScenarioError::invalid(
                    key("clock_hz"),
                    hz,
                    "a kernel timer frequency in Hz (100, 250, 300 or 1000 are Linux's choices) or 0 for exact timers",
                ))
            }
        };
    }
    if let Some(v) = t.cwnd_reduction.as_deref() {
        c.cwnd_reduction = CwndReduction::from_name(v).ok_or_else(|| {
            ScenarioError::invalid(
                key("cwnd_reduction"),
                format!("\"{v}\""),
                "\"prr\" (RFC 6937, the linux profile's) or \"immediate\" (cwnd = ssthresh at once)",
            )
        })?;
    }
    for (name, v, slot) in [
        ("send_buffer", t.send_buffer, &mut c.send_buffer),
        ("recv_buffer", t.recv_buffer, &mut c.recv_buffer),
    ] {
        if let Some(v) = v {
            if !(1..=1 << 30).contains(&v.0) {
                return Err(ScenarioError::invalid(
                    key(name),
                    v.0,
                    "a buffer size between 1 byte and 1 GiB",
                ));
            }
            *slot = v.0 as usize;
        }
    }
    Ok(c)
}
