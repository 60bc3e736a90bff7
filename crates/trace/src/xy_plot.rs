//! SVG line charts of one quantity against another (a metric against loss rate, RTT, write
//! interval, loss position …), one line per series with a marker at every point; either axis
//! may be logarithmic. The reproduction reports draw their figures with this.

use crate::palette::palette;
use crate::plot::{err, framed_chart, log_axis, PlotError};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// One line: legend label and `(x, y)` points in drawing order; non-finite points (and
/// non-positive ones on a log axis) are left out.
#[derive(Clone, Debug, PartialEq)]
pub struct XySeries {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Titles, axes and size of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct XySpec {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    /// Include y = 0 in a linear y axis.
    pub y_from_zero: bool,
    pub width: u32,
    pub height: u32,
}

impl XySpec {
    pub fn new(title: impl Into<String>, x: impl Into<String>, y: impl Into<String>) -> Self {
        XySpec {
            title: title.into(),
            x_label: x.into(),
            y_label: y.into(),
            log_x: false,
            log_y: false,
            y_from_zero: true,
            width: 900,
            height: 540,
        }
    }
}

fn usable(p: (f64, f64), spec: &XySpec) -> bool {
    p.0.is_finite() && p.1.is_finite() && (!spec.log_x || p.0 > 0.0) && (!spec.log_y || p.1 > 0.0)
}

fn range(vals: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if lo > hi {
        (lo, hi) = (1.0, 10.0);
    }
    if log {
        (lo / 1.3)..(hi * 1.3)
    } else {
        if from_zero {
            lo = lo.min(0.0);
        }
        let pad = ((hi - lo) * 0.05).max(if hi == 0.0 { 1.0 } else { hi.abs() * 0.05 });
        (if from_zero && lo >= 0.0 {
            0.0
        } else {
            lo - pad
        })..(hi + pad)
    }
}

/// Draws the chart and returns the SVG document.
pub fn xy_svg(series: &[XySeries], spec: &XySpec) -> Result<String, PlotError> {
    let lines: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let pts = s
                .points
                .iter()
                .copied()
                .filter(|&p| usable(p, spec))
                .collect();
            (s.label.clone(), pts)
        })
        .collect();
    let xs = lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.0));
    let ys = lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.1));
    let xr = range(xs, spec.log_x, false);
    let yr = range(ys, spec.log_y, spec.y_from_zero);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (spec.width, spec.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let d = Drawer {
            root: &root,
            lines: &lines,
            spec,
        };
        match (spec.log_x, spec.log_y) {
            (false, false) => d.draw(xr, yr),
            (true, false) => d.draw(log_axis(xr), yr),
            (false, true) => d.draw(xr, log_axis(yr)),
            (true, true) => d.draw(log_axis(xr), log_axis(yr)),
        }?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

struct Drawer<'a, 'b> {
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    lines: &'a [(String, Vec<(f64, f64)>)],
    spec: &'a XySpec,
}

impl Drawer<'_, '_> {
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
            22,
            &self.spec.x_label,
            &self.spec.y_label,
            70,
            x,
            y,
        )?;
        let colors = palette(self.lines.len());
        for ((label, line), &color) in self.lines.iter().zip(&colors) {
            chart
                .draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2)))
                .map_err(err)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
                });
            chart
                .draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_series_and_skips_unusable_points() {
        let s = vec![
            XySeries {
                label: "tcp".into(),
                points: vec![(0.5, 10.0), (1.0, 20.0), (2.0, f64::NAN), (5.0, 90.0)],
            },
            XySeries {
                label: "rdb".into(),
                points: vec![(0.5, 0.0), (1.0, 1.0), (5.0, 3.0)],
            },
        ];
        let mut spec = XySpec::new("retransmissions", "loss (%)", "retransmissions");
        let svg = xy_svg(&s, &spec).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("tcp") && svg.contains("rdb"));
        assert_eq!(
            svg.matches("<circle").count(),
            6,
            "the NaN point is left out"
        );
        spec.log_y = true; // y = 0 cannot be drawn on a log axis
        let svg = xy_svg(&s, &spec).unwrap();
        assert_eq!(svg.matches("<circle").count(), 5);
    }

    #[test]
    fn empty_input_still_gives_a_labelled_frame() {
        let svg = xy_svg(&[], &XySpec::new("title", "xlabel", "ylabel")).unwrap();
        for text in ["title", "xlabel", "ylabel"] {
            assert!(
                svg.contains(&format!(">\n{text}\n</text>")),
                "{text} missing: {svg}"
            );
        }
    }
}
