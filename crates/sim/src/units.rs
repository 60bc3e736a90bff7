//! Unit-bearing scenario values: durations (`"100ms"`, `"1.5s"`, `"2min"`, `"1h"`, `"250us"`,
//! `"10ns"`; a plain number means seconds), rates (`"100Mbit"`, `"300kbit"`, `"10Gbit"`,
//! `"500bit"`, optionally with `/s`, or `bps`/`kbps`/`Mbps`/`Gbps`; a plain number means bit/s)
//! and byte sizes (a plain integer, or `"64KiB"`, `"32KB"`, `"1MiB"`, `"1MB"`, `"1GB"`, `"1500B"`).
//!
//! Each has a pure parser (`parse_*`) and a serde wrapper type that accepts the string or the
//! number form, so a bad value is reported by serde with its dotted key, the value and the
//! expected form.

use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;

/// What a duration looks like, for error messages.
pub const DURATION_EXPECTED: &str =
    "a duration like \"100ms\", \"1.5s\", \"2min\", \"1h\" or \"250us\" (a number means seconds)";
/// What a rate looks like, for error messages.
pub const RATE_EXPECTED: &str =
    "a rate like \"100Mbit\", \"300kbit\", \"10Gbit\" or \"500bit\" (a number means bit/s)";
/// What a byte size looks like, for error messages.
pub const SIZE_EXPECTED: &str = "a byte count like 65536, \"64KiB\", \"32KB\" or \"1MB\"";

/// Splits `"1.5s"` into (`1.5`, `"s"`), tolerating spaces between number and unit.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '_' || c == '+' || c == '-' || c == 'e')
        })
        .unwrap_or(s.len());
    // 'e' is part of an exponent only if followed by a digit or sign; otherwise it starts a unit.
    let mut end = end;
    if let Some(pos) = s[..end].find('e') {
        let rest = &s[pos + 1..];
        if !rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
            end = pos;
        }
    }
    let num: String = s[..end].chars().filter(|&c| c != '_').collect();
    let value: f64 = num.parse().ok()?;
    Some((value, s[end..].trim()))
}

/// Parses a duration string. Rejects negative, non-finite and unknown units.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let (v, unit) = split_number(s)?;
    let scale_ns = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" | "" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => return None,
    };
    secs_ns_to_duration(v * scale_ns)
}

fn secs_ns_to_duration(ns: f64) -> Option<Duration> {
    if !ns.is_finite() || !(0.0..=1e18).contains(&ns) {
        return None;
    }
    Some(Duration::from_nanos(ns.round() as u64))
}

/// Parses a rate string into bits per second. Rejects negative and non-finite values
/// (zero is returned as zero; callers decide whether it is allowed).
pub fn parse_rate(s: &str) -> Option<u64> {
    let (v, unit) = split_number(s)?;
    let unit = unit.strip_suffix("/s").unwrap_or(unit);
    let scale = match unit {
        "bit" | "bps" | "" => 1.0,
        "kbit" | "Kbit" | "kbps" | "Kbps" => 1e3,
        "Mbit" | "mbit" | "Mbps" | "mbps" => 1e6,
        "Gbit" | "gbit" | "Gbps" | "gbps" => 1e9,
        _ => return None,
    };
    let bps = v * scale;
    if !bps.is_finite() || !(0.0..=1e15).contains(&bps) {
        return None;
    }
    Some(bps.round() as u64)
}

/// Parses a byte size string.
pub fn parse_size(s: &str) -> Option<u64> {
    let (v, unit) = split_number(s)?;
    let scale = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "KiB" => 1024.0,
        "MB" => 1e6,
        "MiB" => 1024.0 * 1024.0,
        "GB" => 1e9,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let b = v * scale;
    if !b.is_finite() || !(0.0..=1e18).contains(&b) || b.fract() != 0.0 {
        return None;
    }
    Some(b as u64)
}

/// A duration as written in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct DurationValue(pub Duration);

/// A rate in bits per second as written in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct RateValue(pub u64);

/// A byte count as written in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct SizeValue(pub u64);

impl DurationValue {
    /// The limit, when `s` is a well-formed duration that is only too large.
    fn too_large(s: &str) -> Option<&'static str> {
        let (v, unit) = split_number(s)?;
        (v.is_finite() && v > 0.0 && parse_duration(&format!("1{unit}")).is_some())
            .then_some("1e18 ns (about 277 777 h, or 31 years)")
    }
}

impl RateValue {
    fn too_large(s: &str) -> Option<&'static str> {
        let (v, unit) = split_number(s)?;
        (v.is_finite() && v > 1.0 && parse_rate(&format!("1{unit}")).is_some())
            .then_some("1e15 bit/s (1 000 000 Gbit)")
    }
}

impl SizeValue {
    fn too_large(s: &str) -> Option<&'static str> {
        let (v, unit) = split_number(s)?;
        (v.is_finite() && v >= 1e9 && v.fract() == 0.0 && parse_size(&format!("1{unit}")).is_some())
            .then_some("1e18 bytes")
    }
}

/// A seed: an integer from 0 to 2^64 − 1. TOML integers stop at 2^63 − 1, so larger seeds
/// are written as strings (`seed = "18446744073709551615"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SeedValue(pub u64);

impl<'de> Deserialize<'de> for SeedValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SeedValue, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SeedValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number from 0 to 18446744073709551615 (above 9223372036854775807 as a string, e.g. \"18446744073709551615\")")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SeedValue, E> {
                Ok(SeedValue(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SeedValue, E> {
                u64::try_from(v)
                    .map(SeedValue)
                    .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<SeedValue, E> {
                s.trim()
                    .parse()
                    .map(SeedValue)
                    .map_err(|_| E::invalid_value(Unexpected::Str(s), &self))
            }
        }
        d.deserialize_any(V)
    }
}

macro_rules! unit_visitor {
    ($ty:ident, $visitor:ident, $expected:expr, $parse:expr, $from_f64:expr) => {
        struct $visitor;
        impl<'de> Visitor<'de> for $visitor {
            type Value = $ty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str($expected)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                $parse(s).map($ty).ok_or_else(|| match $ty::too_large(s) {
                    Some(limit) => {
                        E::custom(format!("{s:?} is too large: expected at most {limit}"))
                    }
                    None => E::invalid_value(Unexpected::Str(s), &self),
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                if v < 0 {
                    return Err(E::invalid_value(Unexpected::Signed(v), &self));
                }
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                $from_f64(v)
                    .map($ty)
                    .ok_or_else(|| E::invalid_value(Unexpected::Float(v), &self))
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                d.deserialize_any($visitor)
            }
        }
    };
}

unit_visitor!(
    DurationValue,
    DurationVisitor,
    DURATION_EXPECTED,
    parse_duration,
    |v: f64| { secs_ns_to_duration(v * 1e9) }
);
unit_visitor!(
    RateValue,
    RateVisitor,
    RATE_EXPECTED,
    parse_rate,
    |v: f64| { (v.is_finite() && (0.0..=1e15).contains(&v)).then(|| v.round() as u64) }
);
unit_visitor!(
    SizeValue,
    SizeVisitor,
    SIZE_EXPECTED,
    parse_size,
    |v: f64| {
        (v.is_finite() && (0.0..=1e18).contains(&v) && v.fract() == 0.0).then_some(v as u64)
    }
);

/// Formats a duration the way scenarios write them (for messages).
#[allow(clippy::manual_is_multiple_of)] // `is_multiple_of` is newer than the MSRV
pub fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100ms"), Some(Duration::from_millis(100)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2min"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("0ms"), Some(Duration::ZERO));
        assert_eq!(parse_duration("10 ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_duration("1e-3s"), Some(Duration::from_millis(1)));
        assert_eq!(parse_duration("-5ms"), None);
        assert_eq!(parse_duration("5 parsecs"), None);
        assert_eq!(parse_duration("ms"), None);
        assert_eq!(parse_duration(""), None);
        assert_eq!(parse_duration("inf s"), None);
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100Mbit"), Some(100_000_000));
        assert_eq!(parse_rate("300kbit"), Some(300_000));
        assert_eq!(parse_rate("10Gbit"), Some(10_000_000_000));
        assert_eq!(parse_rate("500bit"), Some(500));
        assert_eq!(parse_rate("1.5Mbit/s"), Some(1_500_000));
        assert_eq!(parse_rate("25Mbps"), Some(25_000_000));
        assert_eq!(parse_rate("-1Mbit"), None);
        assert_eq!(parse_rate("1MB"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("32KB"), Some(32000));
        assert_eq!(parse_size("1500"), Some(1500));
        assert_eq!(parse_size("1.5B"), None);
        assert_eq!(parse_size("1x"), None);
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_duration(Duration::from_millis(140)), "140ms");
        assert_eq!(fmt_duration(Duration::from_secs(2)), "2s");
        assert_eq!(fmt_duration(Duration::from_nanos(5)), "5ns");
    }
}
