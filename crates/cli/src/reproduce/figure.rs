//! Figures of a report: writes an SVG next to `report.md` and returns the Markdown that
//! shows it.

use super::Ctx;
use anyhow::{Context, Result};
use thinlab_trace::latency_cdf;
use thinlab_trace::plot::{cdf_svg, suggest_log_x, PlotSpec, Series, View};
use thinlab_trace::xy_plot::{xy_svg, XySeries, XySpec};

fn write(ctx: &Ctx, file: &str, svg: String, title: &str) -> Result<String> {
    let (path, link) = ctx.figure_path(file);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
    Ok(format!("![{title}]({link})\n"))
}

/// A line chart of `series` into `file`.
pub fn xy(ctx: &Ctx, file: &str, spec: &XySpec, series: &[XySeries]) -> Result<String> {
    let svg = xy_svg(series, spec).with_context(|| format!("drawing {file}"))?;
    write(ctx, file, svg, &spec.title)
}

/// A CDF (or CCDF) of latency samples, one line per `(label, samples ms)`, against `x_label`.
pub fn latency(
    ctx: &Ctx,
    file: &str,
    title: &str,
    x_label: &str,
    view: View,
    series: &[(String, Vec<f64>)],
) -> Result<String> {
    let series: Vec<Series> = series
        .iter()
        .map(|(label, samples)| Series {
            label: label.clone(),
            points: latency_cdf(samples, 400),
        })
        .collect();
    let log_x = view == View::Cdf && suggest_log_x(&series);
    let mut spec = PlotSpec::latency(title, view, log_x);
    spec.x_label = x_label.to_string();
    let svg = cdf_svg(&series, &spec).with_context(|| format!("drawing {file}"))?;
    write(ctx, file, svg, title)
}

/// Shorthand for one line.
pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> XySeries {
    XySeries {
        label: label.into(),
        points,
    }
}
