//! Small multiples for the CDF plots of a sweep: lines are coloured by one swept key (the
//! mechanism set when it is swept, else the last key), with the same colour in every panel,
//! and the other swept keys make the panels, one per combination of their values. With several
//! flows, the flow joins the colour key. A sweep of one key is one panel.

use crate::interned::Index;
use crate::sweep::{display_value, Config};

/// The panels and the legend of one plot.
#[derive(Debug, PartialEq)]
pub struct Facets {
    /// Legend entries, in order of first appearance; a line's colour is its entry's index.
    pub legend: Vec<String>,
    /// Panels in order of first appearance: title, and the lines (legend entry, line index).
    pub panels: Vec<(String, Vec<(usize, usize)>)>,
}

/// The swept key lines are coloured by: the mechanism set if swept, else the last key.
fn colour_key(keys: &[&str]) -> Option<usize> {
    keys.iter()
        .position(|k| k.ends_with("mechanisms"))
        .or(keys.len().checked_sub(1))
}

/// `key=value`, with only the key's last dotted segment (`mechanisms=[rdb]`) when `short`.
fn label(key: &str, value: &toml::Value, short: bool) -> String {
    let key = if short {
        key.rsplit('.').next().unwrap_or(key)
    } else {
        key
    };
    format!("{key}={}", display_value(value))
}

/// Per swept key: whether its labels are shortened (some whole `key=value` of it is longer
/// than 36 characters).
fn shortened(lines: &[(&Config, &str)], keys: usize) -> Vec<bool> {
    (0..keys)
        .map(|k| {
            lines.iter().any(|(c, _)| {
                let (key, v) = &c.params[k];
                label(key, v, false).chars().count() > 36
            })
        })
        .collect()
}

/// Facets of `lines`: each line's configuration and flow name; `flows` is how many flows the
/// configurations have.
pub fn facets(lines: &[(&Config, &str)], flows: usize) -> Facets {
    let keys: Vec<&str> = lines.first().map_or(Vec::new(), |(c, _)| {
        c.params.iter().map(|p| p.0.as_str()).collect()
    });
    let colour = colour_key(&keys);
    let short = shortened(lines, keys.len());
    let mut out = Facets {
        legend: Vec::new(),
        panels: Vec::new(),
    };
    // Entries and titles to their places in `out` (a linear search made 10 000 flows' lines
    // quadratic: 50 million comparisons).
    let mut legend = Index::default();
    let mut panel_index = Index::default();
    for (i, (config, flow)) in lines.iter().enumerate() {
        let mut entry = colour.map_or(String::new(), |c| {
            let (k, v) = &config.params[c];
            label(k, v, short[c])
        });
        if flows > 1 || entry.is_empty() {
            entry = if entry.is_empty() {
                flow.to_string()
            } else {
                format!("{entry} · {flow}")
            };
        }
        let title: Vec<String> = config
            .params
            .iter()
            .enumerate()
            .filter(|(j, _)| Some(*j) != colour)
            .map(|(j, (k, v))| label(k, v, short[j]))
            .collect();
        let title = title.join(", ");
        let e = legend.intern(&mut out.legend, entry);
        let p = panel_index.intern_with(title, |title| {
            out.panels.push((title.to_string(), Vec::new()));
            out.panels.len() - 1
        });
        out.panels[p].1.push((e, i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::parse_value;

    fn config(pairs: &[(&str, &str)]) -> Config {
        Config {
            params: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), parse_value(v)))
                .collect(),
        }
    }

    #[test]
    fn mechanisms_colour_the_lines_and_the_other_keys_make_panels() {
        let mut configs = Vec::new();
        for ack in ["off", "linux", "freebsd6"] {
            for mech in ["[]", "[rdb]", "[thin-dupack]", "[rdb, tlp]"] {
                // labels that fit are whole
                configs.push(config(&[
                    ("flow.0.tcp.delayed_ack", ack),
                    ("flow.0.tcp.mechanisms", mech),
                ]));
            }
        }
        let lines: Vec<(&Config, &str)> = configs.iter().map(|c| (c, "game")).collect();
        let f = facets(&lines, 1);
        assert_eq!(f.panels.len(), 3);
        assert_eq!(f.panels[1].0, "flow.0.tcp.delayed_ack=linux");
        assert_eq!(
            f.legend,
            [
                "flow.0.tcp.mechanisms=[]",
                "flow.0.tcp.mechanisms=[rdb]",
                "flow.0.tcp.mechanisms=[thin-dupack]",
                "flow.0.tcp.mechanisms=[rdb, tlp]"
            ]
        );
        // one long value shortens every label of its key
        let mut long = configs.clone();
        long[0].params[1].1 = parse_value("[rdb, linear-timeouts, thin-dupack]");
        let lines: Vec<(&Config, &str)> = long.iter().map(|c| (c, "game")).collect();
        let g = facets(&lines, 1);
        assert_eq!(g.legend[1], "mechanisms=[rdb]");
        // the same mechanism set has the same colour in every panel
        for (_, members) in &f.panels {
            assert_eq!(
                members.iter().map(|m| m.0).collect::<Vec<_>>(),
                [0, 1, 2, 3]
            );
        }
    }

    #[test]
    fn one_key_is_one_panel_and_no_key_colours_by_flow() {
        let configs: Vec<Config> = ["0.0", "0.01"]
            .iter()
            .map(|v| config(&[("network.loss.rate", v)]))
            .collect();
        let lines: Vec<(&Config, &str)> = configs.iter().map(|c| (c, "game")).collect();
        let f = facets(&lines, 1);
        assert_eq!(f.panels.len(), 1);
        assert_eq!(
            f.legend,
            ["network.loss.rate=0.0", "network.loss.rate=0.01"]
        );
        let none = Config::default();
        let f = facets(&[(&none, "a"), (&none, "b")], 2);
        assert_eq!(f.legend, ["a", "b"]);
        assert_eq!(f.panels, vec![(String::new(), vec![(0, 0), (1, 1)])]);
        let f = facets(&[(&configs[0], "a"), (&configs[0], "b")], 2);
        assert_eq!(
            f.legend,
            ["network.loss.rate=0.0 · a", "network.loss.rate=0.0 · b"]
        );
    }
}
