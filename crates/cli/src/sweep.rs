//! The `[sweep]` table: a cartesian product over dotted keys with list values.
//!
//! `[sweep]` maps dotted keys to lists (`"network.loss.rate" = [0.0, 0.01]`); nested tables
//! are flattened to dotted keys too, so `[sweep.network.loss] rate = [..]` and
//! `--set sweep.network.loss.rate=[0,0.01]` mean the same. Axes are ordered by key; the first
//! axis varies slowest. A key also given with `--set` is fixed by the `--set` and leaves the
//! sweep. Each configuration is the base document with its values set by [`crate::paths`].

use crate::error::BadInput;
use crate::paths::{set_path, split_path};
use toml::Value;

/// One swept key and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<Value>,
}

/// One point of the sweep: the value of every swept key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    pub params: Vec<(String, Value)>,
}

impl Config {
    /// `key=value, …` (strings unquoted), or `default` when nothing is swept.
    pub fn label(&self) -> String {
        if self.params.is_empty() {
            return "default".into();
        }
        let parts: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", display_value(v)))
            .collect();
        parts.join(", ")
    }

    /// The base document with this configuration's values set.
    pub fn apply(&self, base: &Value) -> Result<Value, BadInput> {
        let mut doc = base.clone();
        for (k, v) in &self.params {
            set_path(&mut doc, k, v.clone()).map_err(|e| BadInput::new(format!("sweep: {e}")))?;
        }
        Ok(doc)
    }
}

/// A value as a user would type it: strings bare, lists as `[a, b]`.
pub fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(display_value).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// Removes `[sweep]` from `doc` and returns its axes, minus keys in `fixed` (set by `--set`).
pub fn take_sweep(doc: &mut Value, fixed: &[String]) -> Result<Vec<Axis>, BadInput> {
    let Some(table) = doc.as_table_mut() else {
        return Err(BadInput::new("the scenario must be a TOML table"));
    };
    let Some(sweep) = table.remove("sweep") else {
        return Ok(Vec::new());
    };
    let Value::Table(sweep) = sweep else {
        return Err(BadInput::new(format!(
            "`sweep` = {sweep}: expected a table of dotted keys with lists of values, \
             e.g. [sweep] \"network.loss.rate\" = [0.0, 0.01]"
        )));
    };
    let mut axes = Vec::new();
    flatten("", sweep, &mut axes)?;
    axes.retain(|a| !fixed.contains(&a.key));
    axes.sort_by(|a, b| a.key.cmp(&b.key));
    if let Some(w) = axes.windows(2).find(|w| w[0].key == w[1].key) {
        return Err(BadInput::new(format!(
            "sweep key `{}` is given twice (once dotted, once as nested tables): expected each key once",
            w[0].key
        )));
    }
    Ok(axes)
}

fn flatten(prefix: &str, table: toml::Table, out: &mut Vec<Axis>) -> Result<(), BadInput> {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k
        } else {
            format!("{prefix}.{k}")
        };
        split_path(&key).map_err(|e| BadInput::new(format!("sweep: {e}")))?;
        match v {
            Value::Table(t) => flatten(&key, t, out)?,
            Value::Array(values) if values.is_empty() => {
                return Err(BadInput::new(format!(
                    "sweep key `{key}` = []: expected a non-empty list of values"
                )))
            }
            Value::Array(values) => out.push(Axis { key, values }),
            other => {
                return Err(BadInput::new(format!(
                    "sweep key `{key}` = {other}: expected a list of values, e.g. [{other}]"
                )))
            }
        }
    }
    Ok(())
}

/// The cartesian product of the axes (one empty configuration when there are none).
pub fn expand(axes: &[Axis]) -> Vec<Config> {
    let mut configs = vec![Config::default()];
    for axis in axes {
        configs = configs
            .into_iter()
            .flat_map(|c| {
                axis.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.params.push((axis.key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    configs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::parse_value;

    fn doc(s: &str) -> Value {
        Value::Table(toml::from_str(s).unwrap())
    }

    #[test]
    fn product_size_order_and_apply() {
        let mut d = doc(
            "name = \"x\"\n[network.loss]\nrate = 0.0\n[sweep]\n\"network.loss.rate\" = [0.0, 0.01, 0.02]\n\
             \"flow.0.tcp.mechanisms\" = [[], [\"rdb\"]]\n[sweep.network]\nrtt = [\"50ms\", \"100ms\"]\n",
        );
        let axes = take_sweep(&mut d, &[]).unwrap();
        assert!(d.get("sweep").is_none());
        let keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(
            keys,
            ["flow.0.tcp.mechanisms", "network.loss.rate", "network.rtt"]
        );
        let configs = expand(&axes);
        assert_eq!(configs.len(), 12);
        assert_eq!(
            configs[0].label(),
            "flow.0.tcp.mechanisms=[], network.loss.rate=0.0, network.rtt=50ms"
        );
        assert_eq!(
            configs[11].label(),
            "flow.0.tcp.mechanisms=[rdb], network.loss.rate=0.02, network.rtt=100ms"
        );
        let applied = configs[1].apply(&doc("[[flow]]\nname = \"a\"\n")).unwrap();
        assert_eq!(applied["network"]["rtt"], parse_value("100ms"));
        assert_eq!(
            applied["flow"][0]["tcp"]["mechanisms"],
            Value::Array(vec![])
        );
    }

    #[test]
    fn no_sweep_is_one_config_and_set_keys_leave_the_sweep() {
        let mut d = doc("name = \"x\"\n");
        assert_eq!(
            expand(&take_sweep(&mut d, &[]).unwrap()),
            vec![Config::default()]
        );
        assert_eq!(Config::default().label(), "default");
        let mut d = doc("[sweep]\n\"a.b\" = [1, 2]\nc = [3, 4, 5]\n");
        let axes = take_sweep(&mut d, &["a.b".into()]).unwrap();
        assert_eq!(expand(&axes).len(), 3);
    }

    #[test]
    fn bad_sweeps_name_the_key() {
        let mut d = doc("[sweep]\n\"network.loss.rate\" = 0.01\n");
        let e = take_sweep(&mut d, &[]).unwrap_err();
        assert!(
            e.0.contains("`network.loss.rate` = 0.01") && e.0.contains("expected a list"),
            "{e}"
        );
        let mut d = doc("[sweep]\n\"x\" = []\n");
        assert!(take_sweep(&mut d, &[]).unwrap_err().0.contains("non-empty"));
        let mut d = doc("sweep = 3\n");
        assert!(take_sweep(&mut d, &[])
            .unwrap_err()
            .0
            .contains("`sweep` = 3"));
        let mut d = doc("[sweep]\n\"a..b\" = [1]\n");
        assert!(take_sweep(&mut d, &[])
            .unwrap_err()
            .0
            .contains("empty segment"));
        let mut d =
            doc("[sweep]\n\"network.loss.rate\" = [0.0]\n[sweep.network.loss]\nrate = [0.1]\n");
        assert!(take_sweep(&mut d, &[])
            .unwrap_err()
            .0
            .contains("given twice"));
    }
}
