//! SVG plots of latency distributions (docs/spec/interface.md, "Results": `DIR/*.svg`).
//!
//! One plot holds one line per configuration: the empirical CDF (y = fraction of writes with
//! latency ≤ x) drawn as steps, or the tail view (CCDF, y = fraction with latency ≥ x on a
//! log axis), which shows the p99–max region that a CDF squeezes against y = 1.
//! Input points are what [`crate::metrics::latency_cdf`] returns.
//!
//! Text is emitted as SVG `<text>` elements by plotters' SVG backend; with neither plotters'
//! `ttf` nor `ab_glyph` feature, layout uses its built-in size estimate, so no font files are
//! needed at build or run time.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One line: a label for the legend and CDF points `(value, cumulative fraction)`, ascending.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Which distribution function to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Cumulative distribution, linear y in [0, 1].
    Cdf,
    /// Complementary CDF P(X ≥ x), logarithmic y: the tail view.
    Ccdf,
}

/// Titles and axes of a plot.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotSpec {
    pub title: String,
    pub x_label: String,
    /// Logarithmic x axis (for long tails). Non-positive values are left out.
    pub log_x: bool,
    pub view: View,
    pub width: u32,
    pub height: u32,
}

impl PlotSpec {
    /// A CDF of application-layer latency in ms.
    pub fn latency(title: impl Into<String>, view: View, log_x: bool) -> Self {
        PlotSpec {
            title: title.into(),
            x_label: "application-layer latency (ms)".into(),
            log_x,
            view,
            width: 900,
            height: 560,
        }
    }
}

/// A plot could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("drawing plot: {0}")]
pub struct PlotError(String);

pub(crate) fn err(e: impl std::fmt::Display) -> PlotError {
    PlotError(e.to_string())
}

/// Whether a log x axis suits these series: positive values spanning more than a factor 20.
pub fn suggest_log_x(series: &[Series]) -> bool {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    lo > 0.0 && hi / lo > 20.0
}

/// The step polyline of one series in the chosen view; points unusable on a log axis dropped.
fn step_line(points: &[(f64, f64)], view: View, log_x: bool) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    let mut prev_f = 0.0;
    for &(x, f) in points {
        if !x.is_finite() || (log_x && x <= 0.0) {
            prev_f = f;
            continue;
        }
        match view {
            // Jump from the previous fraction to this one at x.
            View::Cdf => {
                out.push((x, prev_f));
                out.push((x, f));
            }
            // P(X ≥ x) = 1 − F(previous point) at x itself, 1 − F(x) just after it: the drop is
            // at x (the sample), as the CDF's jump; zero cannot be drawn on the log axis.
            View::Ccdf => {
                for y in [1.0 - prev_f, 1.0 - f] {
                    if y > 0.0 {
                        out.push((x, y));
                    }
                }
            }
        }
        prev_f = f;
    }
    out
}

/// A line's legend entry (its colour) and its points.
pub type ColouredLine = (usize, Vec<(f64, f64)>);

/// One panel of a faceted plot: its title and its lines, each the index of its legend entry
/// (which gives its colour) and its CDF points.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub lines: Vec<ColouredLine>,
}

/// Draws the series into an SVG document and returns it: one panel, a legend entry per series.
pub fn cdf_svg(series: &[Series], spec: &PlotSpec) -> Result<String, PlotError> {
    let panel = Panel {
        title: String::new(),
        lines: series
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s.points.clone()))
            .collect(),
    };
    let legend: Vec<String> = series.iter().map(|s| s.label.clone()).collect();
    faceted_cdf_svg(&[panel], &legend, spec)
}

/// Draws small multiples: a grid of `panels` on shared axes, lines coloured by their entry of
/// `legend` (the same colour in every panel), the legend in a column of its own to the right
/// ([`crate::plot_layout`]).
pub fn faceted_cdf_svg(
    panels: &[Panel],
    legend: &[String],
    spec: &PlotSpec,
) -> Result<String, PlotError> {
    let steps: Vec<Vec<ColouredLine>> = panels
        .iter()
        .map(|p| {
            p.lines
                .iter()
                .map(|(i, pts)| (*i, step_line(pts, spec.view, spec.log_x)))
                .collect()
        })
        .collect();
    let all = || steps.iter().flatten().flat_map(|(_, l)| l.iter().copied());
    let (mut lo, mut hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
        (a.min(x), b.max(x))
    });
    if lo > hi {
        (lo, hi) = (1.0, 10.0); // no data: an empty, labelled frame
    }
    let x_range = if spec.log_x {
        (lo / 1.25)..(hi * 1.25)
    } else {
        let pad = ((hi - lo) * 0.03).max(1.0);
        (lo - pad).max(0.0)..(hi + pad)
    };
    let y_min = all()
        .map(|p| p.1)
        .filter(|&y| y > 0.0)
        .fold(1.0f64, f64::min);
    let layout = crate::plot_layout::layout(panels.len(), legend, (spec.width, spec.height));
    let colors = crate::palette::palette(legend.len());
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (layout.width, layout.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let title_style =
            TextStyle::from(("sans-serif", 22).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(
            spec.title.clone(),
            ((layout.width - layout.legend.w) as i32 / 2, 10),
            title_style,
        ))
        .map_err(err)?;
        let y_label = match spec.view {
            View::Cdf => "fraction of writes ≤ x (CDF)",
            View::Ccdf => "fraction of writes ≥ x (CCDF)",
        };
        for (panel, (rect, lines)) in panels.iter().zip(layout.panels.iter().zip(&steps)) {
            let area = root.clone().shrink((rect.x, rect.y), (rect.w, rect.h));
            let ctx = Ctx {
                area: &area,
                title: &panel.title,
                lines,
                colors: &colors,
                spec,
                y_label,
                small: panels.len() > 1,
            };
            let y_log = (y_min / 2.0)..1.5;
            match (spec.log_x, spec.view) {
                (false, View::Cdf) => ctx.draw(x_range.clone(), 0.0..1.02),
                (true, View::Cdf) => ctx.draw(log_axis(x_range.clone()), 0.0..1.02),
                (false, View::Ccdf) => ctx.draw(x_range.clone(), log_axis(y_log)),
                (true, View::Ccdf) => ctx.draw(log_axis(x_range.clone()), log_axis(y_log)),
            }?;
        }
        draw_legend(&root, &layout, legend, &colors)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The legend column: a line sample in each entry's colour and its (shortened) label.
pub(crate) fn draw_legend(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    layout: &crate::plot_layout::Layout,
    legend: &[String],
    colors: &[RGBColor],
) -> Result<(), PlotError> {
    let r = layout.legend;
    let style =
        TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, color)) in legend.iter().zip(colors).enumerate() {
        let y = (r.y + 24 + i as u32 * layout.legend_row) as i32;
        let x = r.x as i32 + 8;
        root.draw(&PathElement::new(
            vec![(x, y), (x + 26, y)],
            color.stroke_width(3),
        ))
        .map_err(err)?;
        root.draw(&Text::new(
            crate::plot_layout::short_label(label),
            (x + 34, y),
            style.clone(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// What every axis combination draws in one panel.
struct Ctx<'a, 'b> {
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &'a str,
    lines: &'a [ColouredLine],
    colors: &'a [RGBColor],
    spec: &'a PlotSpec,
    y_label: &'a str,
    /// A panel of several: smaller text.
    small: bool,
}

impl Ctx<'_, '_> {
    fn draw<X, Y>(&self, x: X, y: Y) -> Result<(), PlotError>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let text = if self.small { 15 } else { 22 };
        let mut chart = framed_chart(
            self.area,
            self.title,
            text,
            &self.spec.x_label,
            self.y_label,
            64,
            x,
            y,
        )?;
        for (i, line) in self.lines {
            let color = self.colors.get(*i).copied().unwrap_or(BLACK);
            chart
                .draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2)))
                .map_err(err)?;
            // A series of one value is a vertical jump (or, in the CCDF, a single point):
            // mark it so that it cannot vanish.
            if let Some(&(x0, _)) = line.first() {
                if line.iter().all(|&(x, _)| x == x0) {
                    chart
                        .draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))
                        .map_err(err)?;
                }
            }
        }
        Ok(())
    }
}

/// A chart on an SVG drawing area with the coordinates `X` and `Y` build.
pub(crate) type Chart<'a, 'b, X, Y> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// The frame every plot shares: caption (none when `title` is empty), margins, described axes
/// with tick labels without float noise, and a light grid. `y_area` is the width left for the
/// y labels.
#[allow(clippy::too_many_arguments)]
pub(crate) fn framed_chart<'a, 'b, X, Y>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
    title_px: u32,
    x_label: &str,
    y_label: &str,
    y_area: u32,
    x: X,
    y: Y,
) -> Result<Chart<'a, 'b, X, Y>, PlotError>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut builder = ChartBuilder::on(root);
    if !title.is_empty() {
        builder.caption(title, ("sans-serif", title_px));
    }
    let mut chart = builder
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 13))
        .max_light_lines(4)
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(210, 210, 210))
        .x_label_formatter(&|v| format_tick(*v))
        .y_label_formatter(&|v| format_tick(*v))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// A logarithmic axis over `r` with the ticks of [`log_ticks`].
pub(crate) fn log_axis(
    r: std::ops::Range<f64>,
) -> impl AsRangedCoord<Value = f64, CoordDescType: ValueFormatter<f64>> {
    let (bold, light) = log_ticks(r.start, r.end);
    r.log_scale().with_key_points(bold).with_light_points(light)
}

/// Ticks of a log axis over `[lo, hi]`: labelled 1-2-5 steps per decade (only powers of ten
/// beyond three decades), light grid lines at the other integer multiples.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return (bold, light);
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let few = last - first <= 3;
    for e in first..=last {
        let p = 10f64.powi(e);
        for m in 1..=9 {
            let v = m as f64 * p;
            if v < lo || v > hi {
                continue;
            }
            if m == 1 || (few && (m == 2 || m == 5)) {
                bold.push(v);
            } else {
                light.push(v);
            }
        }
    }
    (bold, light)
}

/// Tick labels without float noise: 0.001, 0.25, 40, 1200.
pub(crate) fn format_tick(v: f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 || a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.4}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::latency_cdf;

    fn series() -> Vec<Series> {
        let a: Vec<f64> = (0..1000).map(|i| 50.0 + (i % 97) as f64).collect();
        let mut b = a.clone();
        b.extend([400.0, 900.0, 2100.0]);
        vec![
            Series {
                label: "loss=0".into(),
                points: latency_cdf(&a, 300),
            },
            Series {
                label: "loss=0.05 & rdb".into(),
                points: latency_cdf(&b, 300),
            },
        ]
    }

    /// The trimmed contents of every `<text>` element.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some(body.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn svg_has_title_axes_and_legend_text() {
        for view in [View::Cdf, View::Ccdf] {
            for log_x in [false, true] {
                let spec = PlotSpec::latency("quickstart: app latency", view, log_x);
                let svg = cdf_svg(&series(), &spec).unwrap();
                assert!(svg.starts_with("<svg"), "{view:?} {log_x}");
                let t = texts(&svg);
                for want in [
                    "quickstart: app latency",
                    "application-layer latency (ms)",
                    "loss=0",
                    "loss=0.05 &amp; rdb",
                ] {
                    assert!(t.iter().any(|x| x == want), "{want} not in {t:?}");
                }
                assert!(t.iter().any(|x| x.starts_with("fraction of writes")));
                assert!(svg.matches("<polyline").count() >= 2);
            }
        }
    }

    #[test]
    fn small_multiples_draw_a_panel_per_facet_and_one_legend() {
        let s = series();
        let legend: Vec<String> = (0..24).map(|i| format!("mechanisms=set{i}")).collect();
        let panels: Vec<Panel> = (0..3)
            .map(|p| Panel {
                title: format!("delayed_ack=mode{p}"),
                lines: (0..8)
                    .map(|i| (p * 8 + i, s[i % 2].points.clone()))
                    .collect(),
            })
            .collect();
        let svg = faceted_cdf_svg(
            &panels,
            &legend,
            &PlotSpec::latency("sweep", View::Ccdf, true),
        )
        .unwrap();
        let t = texts(&svg);
        for p in 0..3 {
            assert_eq!(
                t.iter()
                    .filter(|x| **x == format!("delayed_ack=mode{p}"))
                    .count(),
                1
            );
        }
        assert_eq!(
            t.iter().filter(|x| x.starts_with("mechanisms=set")).count(),
            24
        );
        assert_eq!(t.iter().filter(|x| *x == "sweep").count(), 1);
        // 24 lines plus 24 legend samples, each in its own colour
        for c in crate::palette::palette(24) {
            let hex = format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
            assert!(svg.matches(&hex).count() >= 2, "{hex} is not drawn twice");
        }
    }

    #[test]
    fn empty_series_still_draws() {
        let s = vec![Series {
            label: "none".into(),
            points: vec![],
        }];
        let svg = cdf_svg(&s, &PlotSpec::latency("t", View::Ccdf, true)).unwrap();
        assert!(texts(&svg).iter().any(|x| x == "none"));
    }

    #[test]
    #[ignore = "writes thinlab-plot-*.svg in the temporary directory, for a look"]
    fn dump() {
        for (name, view, log) in [
            ("cdf", View::Cdf, false),
            ("cdflog", View::Cdf, true),
            ("ccdf", View::Ccdf, true),
        ] {
            let svg = cdf_svg(
                &series(),
                &PlotSpec::latency("quickstart: app latency", view, log),
            )
            .unwrap();
            let path = std::env::temp_dir().join(format!("thinlab-plot-{name}.svg"));
            std::fs::write(path, svg).unwrap();
        }
    }

    #[test]
    fn log_tick_marks() {
        let (bold, light) = log_ticks(40.0, 2500.0);
        assert_eq!(bold, [50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]);
        assert_eq!(light[..3], [40.0, 60.0, 70.0]);
        let (bold, _) = log_ticks(0.5, 5e5);
        assert_eq!(bold, [1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]);
        assert_eq!(log_ticks(0.0, 1.0), (vec![], vec![]));
    }

    /// A series with a single value (every write the same latency) is drawn: a marker in both
    /// views, where the CCDF used to draw nothing.
    #[test]
    fn single_value_series_is_visible() {
        let s = vec![Series {
            label: "constant".into(),
            points: vec![(50.0, 1.0)],
        }];
        for view in [View::Cdf, View::Ccdf] {
            let svg = cdf_svg(&s, &PlotSpec::latency("t", view, false)).unwrap();
            assert!(svg.contains("<circle"), "{view:?}: no marker");
        }
    }

    #[test]
    fn steps_and_tail() {
        let pts = [(1.0, 0.5), (2.0, 1.0)];
        assert_eq!(
            step_line(&pts, View::Cdf, false),
            vec![(1.0, 0.0), (1.0, 0.5), (2.0, 0.5), (2.0, 1.0)]
        );
        // P(X ≥ 1) = 1, P(X ≥ x) = 0.5 on (1, 2], 0 after 2: the drop is at the sample
        assert_eq!(
            step_line(&pts, View::Ccdf, false),
            vec![(1.0, 1.0), (1.0, 0.5), (2.0, 0.5)]
        );
        assert_eq!(
            step_line(&[(5.0, 1.0)], View::Ccdf, false),
            vec![(5.0, 1.0)]
        );
        assert_eq!(
            step_line(&[(0.0, 0.5), (2.0, 1.0)], View::Cdf, true),
            vec![(2.0, 0.5), (2.0, 1.0)]
        );
        assert!(suggest_log_x(&series()) && !suggest_log_x(&series()[..1]));
        assert_eq!(
            (
                format_tick(0.001),
                format_tick(0.25),
                format_tick(40.0),
                format_tick(1200.0)
            ),
            ("0.001".into(), "0.25".into(), "40".into(), "1200".into())
        );
    }
}
