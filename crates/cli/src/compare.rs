//! `thinlab compare DIR_A DIR_B [...]`: result folders side by side (simulator vs emulator,
//! before vs after a change, a capture's analysis vs a simulation).
//!
//! Every folder's `latency_cdf.csv` gives, per (configuration, flow), the pooled CDF of
//! application-layer latency, whose points at or above the 99th percentile are exact (the body
//! is thinned, see docs/scenarios.md): so the table shows only what the file holds exactly —
//! the nearest-rank p99 and p99.9 and the maximum — and the relative difference of each
//! against the first folder. `compare.html` overlays the CDFs and CCDFs, one plot per
//! (configuration, flow), one colour per folder.

use crate::args::CompareArgs;
use crate::error::BadInput;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One folder's CDF lines: `((configuration, flow), points (latency ms, fraction ≤))`.
type Lines = Vec<((String, String), Vec<(f64, f64)>)>;

/// One folder's CDF points by (configuration, flow).
type ByKey<'a> = HashMap<&'a (String, String), &'a Vec<(f64, f64)>>;

/// Reads `dir/latency_cdf.csv`.
fn read_lines(dir: &Path) -> Result<Lines> {
    let path = dir.join("latency_cdf.csv");
    if !dir.is_dir() {
        return Err(BadInput::new(format!("{}: not a directory", dir.display())).into());
    }
    if !path.is_file() {
        return Err(BadInput::new(format!(
            "{}: not a thinlab result folder (no latency_cdf.csv; `thinlab run` and `thinlab analyze` write one)",
            dir.display()
        ))
        .into());
    }
    let mut r =
        csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let header: Vec<String> = r.headers()?.iter().map(str::to_string).collect();
    if header != ["configuration", "flow", "latency_ms", "fraction"] {
        return Err(BadInput::new(format!(
            "{}: unexpected columns {header:?} (expected configuration, flow, latency_ms, fraction)",
            path.display()
        ))
        .into());
    }
    let mut lines: Lines = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: line {}", path.display(), i + 2))?;
        let num = |k: usize| -> Result<f64> {
            rec[k].parse::<f64>().map_err(|_| {
                BadInput::new(format!(
                    "{}: line {}: `{}` is not a number",
                    path.display(),
                    i + 2,
                    &rec[k]
                ))
                .into()
            })
        };
        let key = (rec[0].to_string(), rec[1].to_string());
        let point = (num(2)?, num(3)?);
        match lines.last_mut() {
            Some((k, pts)) if *k == key => pts.push(point),
            _ => lines.push((key, vec![point])),
        }
    }
    Ok(lines)
}

/// Nearest-rank quantile `q` of a CDF whose points at fraction ≥ `q` are exact: the smallest
/// latency whose fraction reaches `q` (with a tolerance for the decimal printing).
fn quantile(points: &[(f64, f64)], q: f64) -> Option<f64> {
    points.iter().find(|p| p.1 >= q - 1e-12).map(|p| p.0)
}

fn rel(v: Option<f64>, reference: Option<f64>) -> String {
    match (v, reference) {
        (Some(v), Some(r)) if r != 0.0 => format!("{:+.1} %", 100.0 * (v - r) / r),
        _ => "-".into(),
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

#[derive(Serialize)]
struct CompareLine {
    folder: usize,
    n: f64,
    points: Vec<(f64, f64)>,
}

#[derive(Serialize)]
struct Group {
    label: String,
    lines: Vec<CompareLine>,
}

#[derive(Serialize)]
struct CompareData {
    version: &'static str,
    folders: Vec<String>,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    groups: Vec<Group>,
}

pub fn compare(args: CompareArgs) -> Result<()> {
    let folders: Vec<Lines> = args
        .dirs
        .iter()
        .map(|d| read_lines(d))
        .collect::<Result<_>>()?;
    let names: Vec<String> = args.dirs.iter().map(|d| d.display().to_string()).collect();
    // every (configuration, flow) of any folder, in first-seen order, and each folder's lines
    // by key (the first, as a search would find it): no search per key, which made folders of
    // 100 000 lines quadratic
    let mut keys: Vec<&(String, String)> = Vec::new();
    let mut seen: HashSet<&(String, String)> = HashSet::new();
    let by_key: Vec<ByKey> = folders
        .iter()
        .map(|f| {
            let mut m = HashMap::with_capacity(f.len());
            for (k, points) in f {
                if seen.insert(k) {
                    keys.push(k);
                }
                m.entry(k).or_insert(points);
            }
            m
        })
        .collect();
    let mut header = vec![
        "configuration".to_string(),
        "flow".to_string(),
        "folder".to_string(),
    ];
    header.extend(["p99 ms", "Δ p99", "p99.9 ms", "Δ p99.9", "max ms", "Δ max"].map(String::from));
    let mut rows = Vec::new();
    let mut groups = Vec::new();
    for &key in &keys {
        let find = |m: &ByKey| m.get(key).map(|p| (*p).clone());
        let stats = |p: &Option<Vec<(f64, f64)>>| {
            p.as_ref().map_or((None, None, None), |p| {
                (quantile(p, 0.99), quantile(p, 0.999), p.last().map(|x| x.0))
            })
        };
        let reference = stats(&find(&by_key[0]));
        let mut lines = Vec::new();
        for (i, f) in by_key.iter().enumerate() {
            let pts = find(f);
            let s = stats(&pts);
            rows.push(vec![
                key.0.clone(),
                key.1.clone(),
                names[i].clone(),
                ms(s.0),
                if i == 0 {
                    String::new()
                } else {
                    rel(s.0, reference.0)
                },
                ms(s.1),
                if i == 0 {
                    String::new()
                } else {
                    rel(s.1, reference.1)
                },
                ms(s.2),
                if i == 0 {
                    String::new()
                } else {
                    rel(s.2, reference.2)
                },
            ]);
            if let Some(points) = pts {
                // report.js reads points as (latency, count ≤) over n: fractions over 1
                lines.push(CompareLine {
                    folder: i,
                    n: 1.0,
                    points,
                });
            }
        }
        groups.push(Group {
            label: format!("{} · {}", key.0, key.1),
            lines,
        });
    }
    if !args.quiet {
        print!("{}", render(&header, &rows));
    }
    let data = CompareData {
        version: env!("CARGO_PKG_VERSION"),
        folders: names,
        header,
        rows,
        groups,
    };
    let html = crate::report_html::page("thinlab compare", "compare", &data)?;
    std::fs::write(&args.html, html).with_context(|| format!("writing {}", args.html.display()))?;
    if !args.quiet {
        println!("\nwrote {}", args.html.display());
    }
    Ok(())
}

/// The table as aligned text, up to [`crate::table::MAX_ROWS`] rows and then a count of the
/// rest (as `thinlab run`'s table).
fn render(header: &[String], rows: &[Vec<String>]) -> String {
    crate::table::aligned(header, rows, 3, "compare.html has")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_differences() {
        let cdf = [(10.0, 0.5), (20.0, 0.99), (30.0, 0.999), (40.0, 1.0)];
        assert_eq!(quantile(&cdf, 0.99), Some(20.0));
        assert_eq!(quantile(&cdf, 0.999), Some(30.0));
        assert_eq!(rel(Some(30.0), Some(20.0)), "+50.0 %");
        assert_eq!(rel(Some(10.0), Some(0.0)), "-");
    }

    #[test]
    fn the_table_shows_the_first_rows_and_counts_the_rest() {
        use crate::table::MAX_ROWS;
        let header = vec!["configuration".to_string(), "p99 ms".to_string()];
        let rows: Vec<Vec<String>> = (0..150)
            .map(|i| vec![format!("c{i}"), format!("{i}.0")])
            .collect();
        let text = render(&header, &rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + MAX_ROWS + 1, "{text}");
        assert!(lines[MAX_ROWS].starts_with("c99 "), "{text}");
        assert_eq!(
            lines[MAX_ROWS + 1],
            "… and 50 more rows (compare.html has all 150)"
        );
        assert_eq!(render(&header, &rows[..3]).lines().count(), 4);
    }
}
