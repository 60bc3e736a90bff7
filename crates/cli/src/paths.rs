//! Dotted-path overrides of a scenario document: `--set KEY=VALUE` and sweep keys.
//!
//! A path is `.`-separated; a segment that is a number indexes an array (`flow.0.tcp.mechanisms`
//! is the `mechanisms` key of the first `[[flow]]`), any other segment is a table key. Missing
//! tables are created on the way, and index `len` appends a new table to an array. Values are
//! TOML values; words that do not parse as TOML are strings, also inside `[a, b]` lists, so
//! `[rdb,linear-timeouts]` is `["rdb", "linear-timeouts"]` and `10s` is `"10s"`.

use crate::error::BadInput;
use toml::Value;

/// Splits `KEY=VALUE` (the first `=`) and parses both halves.
pub fn parse_assignment(s: &str) -> Result<(String, Value), BadInput> {
    let Some((key, value)) = s.split_once('=') else {
        return Err(BadInput::new(format!(
            "--set {s:?}: expected KEY=VALUE, e.g. network.loss.rate=0.02"
        )));
    };
    let key = key.trim();
    split_path(key).map_err(|e| BadInput::new(format!("--set {s:?}: {e}")))?;
    let value = value.trim();
    if value.is_empty() {
        return Err(BadInput::new(format!(
            "--set {s:?}: no value for `{key}`; expected KEY=VALUE (use \"\" for an empty string)"
        )));
    }
    Ok((key.to_string(), parse_value(value)))
}

/// Most segments a dotted key may have (the deepest scenario key has 5).
pub const MAX_SEGMENTS: usize = 16;
/// Longest dotted key, in bytes.
pub const MAX_KEY_LEN: usize = 256;

/// The segments of a dotted path; rejects empty paths, empty segments, and paths longer than
/// [`MAX_KEY_LEN`] bytes or [`MAX_SEGMENTS`] segments (checked before splitting: linear time).
pub fn split_path(path: &str) -> Result<Vec<&str>, BadInput> {
    if path.is_empty() {
        return Err(BadInput::new(
            "empty key; expected a dotted path such as network.loss.rate",
        ));
    }
    let shown = |p: &str| -> String {
        if p.len() > 60 {
            let cut = (0..=60).rev().find(|&i| p.is_char_boundary(i)).unwrap_or(0);
            format!("{}…", &p[..cut])
        } else {
            p.to_string()
        }
    };
    if path.len() > MAX_KEY_LEN {
        return Err(BadInput::new(format!(
            "key `{}` is {} bytes long: expected a dotted path of at most {MAX_KEY_LEN} bytes, such as network.loss.rate",
            shown(path),
            path.len()
        )));
    }
    let n = path.bytes().filter(|&b| b == b'.').count() + 1;
    if n > MAX_SEGMENTS {
        return Err(BadInput::new(format!(
            "key `{}` has {n} segments: expected a dotted path of at most {MAX_SEGMENTS} segments, such as network.loss.rate",
            shown(path)
        )));
    }
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.trim().is_empty()) {
        return Err(BadInput::new(format!(
            "key `{path}` has an empty segment; expected a dotted path such as network.loss.rate"
        )));
    }
    Ok(segs.into_iter().map(str::trim).collect())
}

/// A TOML value, or a string when `s` is not one. Lists of bare words are lists of strings.
pub fn parse_value(s: &str) -> Value {
    let s = s.trim();
    if let Ok(mut table) = toml::from_str::<toml::Table>(&format!("v = {s}")) {
        if table.len() == 1 {
            if let Some(v) = table.remove("v") {
                return v;
            }
        }
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if let Some(items) = split_top_level(inner) {
            return Value::Array(items.into_iter().map(parse_value).collect());
        }
    }
    Value::String(unquote(s).to_string())
}

/// Strips one pair of matching quotes, if any.
fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            if s.len() >= 2 {
                return inner;
            }
        }
    }
    s
}

/// Splits a list body at commas outside brackets, braces and quotes; `None` if unbalanced.
/// A trailing comma is allowed; an empty body is an empty list.
fn split_top_level(body: &str) -> Option<Vec<&str>> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0usize);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            (None, ',') if depth == 0 => {
                items.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    let last = body[start..].trim();
    if !last.is_empty() {
        items.push(last);
    }
    if items.iter().any(|s| s.is_empty()) {
        return None;
    }
    Some(items)
}

/// Sets `path` in `doc` to `value`, creating missing tables (and appending at index `len`).
pub fn set_path(doc: &mut Value, path: &str, value: Value) -> Result<(), BadInput> {
    let segs = split_path(path)?;
    let mut cur = doc;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        // Only built for a message (keeps the walk linear in the key's length).
        let here = || {
            if i == 0 {
                "the top level".to_string()
            } else {
                format!("`{}`", segs[..i].join("."))
            }
        };
        cur = match cur {
            Value::Table(t) => {
                if last {
                    t.insert(seg.to_string(), value);
                    return Ok(());
                }
                t.entry(seg.to_string())
                    .or_insert_with(|| Value::Table(toml::Table::new()))
            }
            Value::Array(a) => {
                let Ok(idx) = seg.parse::<usize>() else {
                    return Err(BadInput::new(format!(
                        "cannot set `{path}`: {} is a list, so `{seg}` must be an index (0..{})",
                        here(),
                        a.len()
                    )));
                };
                if idx > a.len() {
                    return Err(BadInput::new(format!(
                        "cannot set `{path}`: index {idx} is out of range for {}, which has {} \
                         element(s); expected an index up to {}",
                        here(),
                        a.len(),
                        a.len()
                    )));
                }
                if last {
                    if idx == a.len() {
                        a.push(value);
                    } else {
                        a[idx] = value;
                    }
                    return Ok(());
                }
                if idx == a.len() {
                    a.push(Value::Table(toml::Table::new()));
                }
                &mut a[idx]
            }
            other => {
                return Err(BadInput::new(format!(
                    "cannot set `{path}`: {} = {} is a {}, not a table or list",
                    here(),
                    other,
                    other.type_str()
                )))
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Value {
        Value::Table(toml::from_str(s).unwrap())
    }

    #[test]
    fn values() {
        assert_eq!(parse_value("0.02"), Value::Float(0.02));
        assert_eq!(parse_value("3"), Value::Integer(3));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("10s"), Value::String("10s".into()));
        assert_eq!(
            parse_value("linux-2.6.22"),
            Value::String("linux-2.6.22".into())
        );
        assert_eq!(parse_value("\"quoted\""), Value::String("quoted".into()));
        assert_eq!(parse_value("[]"), Value::Array(vec![]));
        assert_eq!(
            parse_value("[60, 61]"),
            Value::Array(vec![Value::Integer(60), Value::Integer(61)])
        );
        let s = |x: &str| Value::String(x.into());
        assert_eq!(
            parse_value("[rdb,linear-timeouts]"),
            Value::Array(vec![s("rdb"), s("linear-timeouts")])
        );
        assert_eq!(
            parse_value("[[], [rdb], \"a,b\"]"),
            Value::Array(vec![
                Value::Array(vec![]),
                Value::Array(vec![s("rdb")]),
                s("a,b")
            ])
        );
        assert_eq!(parse_value("[a,,b]"), s("[a,,b]"));
        let t = parse_value("{ kind = \"fixed\", payload_bytes = 120 }");
        assert_eq!(t.get("payload_bytes"), Some(&Value::Integer(120)));
        assert_eq!(parse_value("1\nx = 2"), s("1\nx = 2"));
    }

    #[test]
    fn assignments() {
        assert_eq!(
            parse_assignment("duration=10s").unwrap(),
            ("duration".into(), Value::String("10s".into()))
        );
        assert_eq!(
            parse_assignment(" a.b = 1 ").unwrap(),
            ("a.b".into(), Value::Integer(1))
        );
        assert!(parse_assignment("x=a=b").is_ok_and(|(_, v)| v == Value::String("a=b".into())));
        let deep = format!("{}=1", vec!["a"; 30_000].join("."));
        let e = parse_assignment(&deep).unwrap_err();
        assert!(e.0.contains("59999 bytes long"), "{e}");
        let deep = format!("{}=1", vec!["a"; 17].join("."));
        let e = parse_assignment(&deep).unwrap_err();
        assert!(
            e.0.contains("17 segments") && e.0.contains("at most 16"),
            "{e}"
        );
        let long = format!("{}=1", "k".repeat(300));
        let e = parse_assignment(&long).unwrap_err();
        assert!(e.0.contains("300 bytes long"), "{e}");
        for bad in ["duration", "=1", "a..b=1", ".a=1", "a.=1", "a="] {
            let e = parse_assignment(bad).unwrap_err();
            assert!(e.0.contains("expected"), "{bad}: {e}");
        }
    }

    #[test]
    fn set_existing_and_new_keys() {
        let mut d = doc("duration = \"60s\"\n[network.loss]\nrate = 0.0\n[[flow]]\nname = \"a\"\n");
        set_path(&mut d, "network.loss.rate", Value::Float(0.5)).unwrap();
        set_path(&mut d, "flow.0.tcp.mechanisms", parse_value("[rdb]")).unwrap();
        set_path(
            &mut d,
            "network.forward.loss.model",
            parse_value("positions"),
        )
        .unwrap();
        set_path(&mut d, "flow.1.name", parse_value("b")).unwrap();
        set_path(&mut d, "duration", parse_value("10s")).unwrap();
        let want = doc(
            "duration = \"10s\"\n[network.loss]\nrate = 0.5\n[network.forward.loss]\nmodel = \"positions\"\n\
             [[flow]]\nname = \"a\"\ntcp = { mechanisms = [\"rdb\"] }\n[[flow]]\nname = \"b\"\n",
        );
        assert_eq!(d, want);
    }

    #[test]
    fn set_errors_name_the_key() {
        let mut d = doc("duration = \"60s\"\n[[flow]]\nname = \"a\"\n");
        let e = set_path(&mut d, "flow.5.name", Value::Integer(1)).unwrap_err();
        assert!(
            e.0.contains("flow.5.name") && e.0.contains("index 5") && e.0.contains("`flow`"),
            "{e}"
        );
        let e = set_path(&mut d, "flow.x.name", Value::Integer(1)).unwrap_err();
        assert!(e.0.contains("must be an index"), "{e}");
        let e = set_path(&mut d, "duration.x", Value::Integer(1)).unwrap_err();
        assert!(e.0.contains("`duration` = \"60s\" is a string"), "{e}");
    }
}
