//! The human summary printed at the end of a run: per configuration and flow, the pooled
//! application-layer latency (all repetitions) and the retransmissions summed over them.
//! `writes` counts the delivered writes (the latency samples) over all repetitions.

use crate::output::Results;
use std::fmt::Write;
use thinlab_trace::LatencyStats;

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// The table as text, one line per (configuration, flow).
pub fn render(results: &Results<'_>) -> String {
    let mut rows: Vec<[String; 7]> = Vec::new();
    for (i, c) in results.configs.iter().enumerate() {
        for (f, name) in results.flows_of(i) {
            let s = LatencyStats::from_samples(&results.pooled_app_latency(i, f));
            let retrans: u64 = results
                .flow_runs(i, f)
                .map(|o| o.metrics.retransmissions)
                .sum();
            rows.push([
                c.label(),
                name,
                s.count.to_string(),
                ms(s.mean),
                ms(s.p99),
                ms(s.max),
                retrans.to_string(),
            ]);
        }
    }
    let header = [
        "configuration",
        "flow",
        "writes",
        "mean ms",
        "p99 ms",
        "max ms",
        "retrans",
    ];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w - c.chars().count();
            if i < 2 {
                let _ = write!(out, "{c}{}  ", " ".repeat(pad));
            } else {
                let _ = write!(out, "{}{c}  ", " ".repeat(pad));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    };
    line(&mut out, &header.map(String::from));
    for r in &rows {
        line(&mut out, r);
    }
    out
}
