//! How the plots of a sweep are laid out so they stay readable with any number of
//! configurations (the "small multiples" of Tufte, "The Visual Display of Quantitative
//! Information"): one colour per value of a *colour parameter* (the mechanism set when it is
//! swept), the same in every plot of the report; one facet (a small plot) per combination of
//! the other swept parameters when there are more than [`ONE_PLOT_MAX`] configurations; and,
//! for the metric-vs-parameter plots, an *x parameter* (the first numeric one) with one line per
//! combination of the others.

use std::collections::HashSet;

use crate::interned::Index;
use crate::sweep::{display_value, Config};
use serde::Serialize;

/// Most configurations drawn in one plot; with more, the plots are faceted.
pub const ONE_PLOT_MAX: usize = 8;

/// Where each configuration goes. Indices point into the label vectors.
#[derive(Debug, Serialize, PartialEq)]
pub struct Layout {
    /// Legend entries: one per colour.
    pub colours: Vec<String>,
    /// Titles of the facets (a single `""` when not faceted).
    pub facets: Vec<String>,
    /// The swept parameter on the x axis of the metric-vs-parameter plots (none when nothing
    /// is swept), whether its values are numbers, and its values' labels and numbers.
    pub x_param: Option<String>,
    pub x_numeric: bool,
    pub x_labels: Vec<String>,
    pub x_values: Vec<f64>,
    /// Lines of the metric-vs-parameter plots: label and colour index.
    pub mvp_lines: Vec<(String, usize)>,
    /// Per configuration: colour, facet, x position and metric-vs-parameter line.
    pub configs: Vec<ConfigPlace>,
}

#[derive(Debug, Serialize, PartialEq, Clone, Copy)]
pub struct ConfigPlace {
    pub colour: usize,
    pub facet: usize,
    pub x: usize,
    pub line: usize,
}

/// `k=v, k2=v2` of the parameters `keys` of `c` (`all` when `keys` is empty).
fn label_of(c: &Config, keys: &[usize]) -> String {
    if keys.is_empty() {
        return "all".into();
    }
    keys.iter()
        .map(|&k| format!("{}={}", c.params[k].0, display_value(&c.params[k].1)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The layout of `configs` (all with the same swept keys, as the sweep makes them).
pub fn layout(configs: &[Config]) -> Layout {
    let keys: Vec<&str> = configs.first().map_or(Vec::new(), |c| {
        c.params.iter().map(|p| p.0.as_str()).collect()
    });
    let distinct = |k: usize| {
        let values: HashSet<String> = configs
            .iter()
            .map(|c| display_value(&c.params[k].1))
            .collect();
        values.len()
    };
    let counts: Vec<usize> = (0..keys.len()).map(distinct).collect();
    // The colour parameter: the mechanism set, else the parameter with the most values.
    let colour_key = keys
        .iter()
        .position(|k| k.ends_with("mechanisms"))
        .or_else(|| (0..keys.len()).max_by_key(|&k| (counts[k], std::cmp::Reverse(k))));
    let numeric = |k: usize| {
        configs.iter().all(|c| {
            matches!(
                c.params[k].1,
                toml::Value::Integer(_) | toml::Value::Float(_)
            )
        })
    };
    let x_key = (0..keys.len())
        .find(|&k| numeric(k) && counts[k] > 1)
        .or_else(|| (0..keys.len()).find(|&k| Some(k) != colour_key && counts[k] > 1))
        .or(colour_key);
    let faceted = configs.len() > ONE_PLOT_MAX;
    let facet_keys: Vec<usize> = (0..keys.len())
        .filter(|&k| faceted && Some(k) != colour_key)
        .collect();
    let line_keys: Vec<usize> = (0..keys.len()).filter(|&k| Some(k) != x_key).collect();
    let mut out = Layout {
        colours: Vec::new(),
        facets: Vec::new(),
        x_param: x_key.map(|k| keys[k].to_string()),
        x_numeric: x_key.is_some_and(numeric),
        x_labels: Vec::new(),
        x_values: Vec::new(),
        mvp_lines: Vec::new(),
        configs: Vec::with_capacity(configs.len()),
    };
    let (mut colours, mut facets, mut x_labels) =
        (Index::default(), Index::default(), Index::default());
    let mut mvp_lines = Index::default();
    for c in configs {
        let colour = match (faceted, colour_key) {
            (true, Some(k)) => colours.intern(&mut out.colours, label_of(c, &[k])),
            _ => colours.intern(&mut out.colours, c.label()),
        };
        let facet = if faceted {
            facets.intern(&mut out.facets, label_of(c, &facet_keys))
        } else {
            facets.intern(&mut out.facets, String::new())
        };
        let x = match x_key {
            Some(k) => {
                let n = out.x_labels.len();
                let i = x_labels.intern(&mut out.x_labels, display_value(&c.params[k].1));
                if i == n {
                    let v = match c.params[k].1 {
                        toml::Value::Integer(v) => v as f64,
                        toml::Value::Float(v) => v,
                        _ => i as f64,
                    };
                    out.x_values.push(v);
                }
                i
            }
            None => x_labels.intern(&mut out.x_labels, "default".into()),
        };
        if x_key.is_none() && out.x_values.is_empty() {
            out.x_values.push(0.0);
        }
        let line_label = label_of(c, &line_keys);
        let line = mvp_lines.intern_with(line_label, |line_label| {
            // A line's colour: its colour parameter's value when that is not on the x axis.
            let lc = match colour_key {
                Some(k) if Some(k) != x_key && faceted => {
                    colours.intern(&mut out.colours, label_of(c, &[k]))
                }
                _ if !faceted && line_keys.len() == keys.len() => colour,
                _ => out.mvp_lines.len(),
            };
            out.mvp_lines.push((line_label.to_string(), lc));
            out.mvp_lines.len() - 1
        });
        out.configs.push(ConfigPlace {
            colour,
            facet,
            x,
            line,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::Value;

    fn sweep(axes: &[(&str, Vec<Value>)]) -> Vec<Config> {
        let mut out = vec![Config { params: vec![] }];
        for (k, vals) in axes {
            out = out
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut p = c.params.clone();
                        p.push((k.to_string(), v.clone()));
                        Config { params: p }
                    })
                })
                .collect();
        }
        out
    }

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    #[test]
    fn few_configurations_share_one_plot_with_a_colour_each() {
        let c = sweep(&[(
            "network.loss.rate",
            vec![Value::Float(0.0), Value::Float(0.05)],
        )]);
        let l = layout(&c);
        assert_eq!(l.facets, [""]);
        assert_eq!(
            l.colours,
            ["network.loss.rate=0.0", "network.loss.rate=0.05"]
        );
        assert_eq!(l.x_param.as_deref(), Some("network.loss.rate"));
        assert!(l.x_numeric);
        assert_eq!(l.x_values, [0.0, 0.05]);
        assert_eq!(l.mvp_lines, [("all".to_string(), 0)]);
    }

    #[test]
    fn many_configurations_are_faceted_with_one_colour_per_mechanism_set() {
        let mechs: Vec<Value> = (0..8)
            .map(|i| Value::Array(vec![s(&format!("m{i}"))]))
            .collect();
        let c = sweep(&[
            (
                "flow.0.tcp.delayed_ack",
                vec![s("off"), s("linux"), s("freebsd6")],
            ),
            ("flow.0.tcp.mechanisms", mechs),
        ]);
        let l = layout(&c);
        assert_eq!(l.facets.len(), 3);
        assert_eq!(l.facets[1], "flow.0.tcp.delayed_ack=linux");
        assert_eq!(l.colours.len(), 8, "{:?}", l.colours);
        // The same mechanism set has the same colour in every facet.
        for (i, p) in l.configs.iter().enumerate() {
            assert_eq!(p.colour, i % 8);
            assert_eq!(p.facet, i / 8);
        }
        // No numeric parameter: delayed_ack on the x axis, a line per mechanism set coloured
        // like its CDFs.
        assert_eq!(l.x_param.as_deref(), Some("flow.0.tcp.delayed_ack"));
        assert!(!l.x_numeric);
        assert_eq!(l.mvp_lines.len(), 8);
        assert!(l.mvp_lines.iter().enumerate().all(|(i, m)| m.1 == i));
    }

    #[test]
    fn nothing_swept() {
        let l = layout(&[Config { params: vec![] }]);
        assert_eq!((l.colours.len(), l.facets.len()), (1, 1));
        assert_eq!(l.x_param, None);
        assert_eq!(l.x_labels, ["default"]);
        assert_eq!(l.x_values, [0.0]);
    }
}
