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

/// Ten colors that stay apart (matplotlib's "tab10").
pub(crate) const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

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

/// Draws the series into an SVG document and returns it.
pub fn cdf_svg(series: &[Series], spec: &PlotSpec) -> Result<String, PlotError> {
    let lines: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| (s.label.clone(), step_line(&s.points, spec.view, spec.log_x)))
        .collect();
    let xs = lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.0));
    let (mut lo, mut hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
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
    let y_min = lines
        .iter()
        .flat_map(|(_, l)| l.iter().map(|p| p.1))
        .filter(|&y| y > 0.0)
        .fold(1.0f64, f64::min);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (spec.width, spec.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let y_label = match spec.view {
            View::Cdf => "fraction of writes ≤ x (CDF)",
            View::Ccdf => "fraction of writes ≥ x (CCDF)",
        };
        let ctx = Ctx {
            root: &root,
            lines: &lines,
            spec,
            y_label,
        };
        let y_log = (y_min / 2.0)..1.5;
        match (spec.log_x, spec.view) {
            (false, View::Cdf) => ctx.draw(x_range, 0.0..1.02),
            (true, View::Cdf) => ctx.draw(log_axis(x_range), 0.0..1.02),
            (false, View::Ccdf) => ctx.draw(x_range, log_axis(y_log)),
            (true, View::Ccdf) => ctx.draw(log_axis(x_range), log_axis(y_log)),
        }?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// What every axis combination draws.
struct Ctx<'a, 'b> {
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    lines: &'a [(String, Vec<(f64, f64)>)],
    spec: &'a PlotSpec,
    y_label: &'a str,
}

impl Ctx<'_, '_> {
    fn draw<X, Y>(&self, x: X, y: Y) -> Result<(), PlotError>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = framed_chart(
            self.root,
            &self.spec.title,
            &self.spec.x_label,
            self.y_label,
            64,
            x,
            y,
        )?;
        for (i, (label, line)) in self.lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let style = color.stroke_width(2);
            chart
                .draw_series(LineSeries::new(line.iter().copied(), style))
                .map_err(err)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
                });
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
        let position = match self.spec.view {
            View::Cdf => SeriesLabelPosition::LowerRight,
            View::Ccdf => SeriesLabelPosition::UpperRight,
        };
        chart
            .configure_series_labels()
            .position(position)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// A chart on an SVG drawing area with the coordinates `X` and `Y` build.
pub(crate) type Chart<'a, 'b, X, Y> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// The frame every plot shares: caption, margins, described axes with tick labels without
/// float noise, and a light grid. `y_area` is the width left for the y labels.
pub(crate) fn framed_chart<'a, 'b, X, Y>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
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
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
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
    fn empty_series_still_draws() {
        let s = vec![Series {
            label: "none".into(),
            points: vec![],
        }];
        let svg = cdf_svg(&s, &PlotSpec::latency("t", View::Ccdf, true)).unwrap();
        assert!(texts(&svg).iter().any(|x| x == "none"));
    }

    #[test]
    #[ignore = "writes /tmp/thinlab-plot-*.svg for a look"]
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
            std::fs::write(format!("/tmp/thinlab-plot-{name}.svg"), svg).unwrap();
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
