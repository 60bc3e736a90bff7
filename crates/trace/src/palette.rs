//! Line colours that do not repeat: matplotlib's "tab10" for up to ten lines, else hues spread
//! evenly around the colour wheel, alternating two lightnesses so that neighbouring hues stay
//! apart. A plot colours lines by their legend entry, so a mechanism set keeps its colour in
//! every panel of a faceted plot.

use plotters::style::RGBColor;

/// Ten colors that stay apart (matplotlib's "tab10").
const TAB10: [RGBColor; 10] = [
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

/// `n` distinct colours.
pub fn palette(n: usize) -> Vec<RGBColor> {
    if n <= TAB10.len() {
        return TAB10[..n].to_vec();
    }
    (0..n)
        .map(|i| {
            let hue = i as f64 * 360.0 / n as f64;
            let lightness = if i % 2 == 0 { 0.40 } else { 0.58 };
            hsl(hue, 0.70, lightness)
        })
        .collect()
}

/// HSL (hue in degrees, saturation and lightness in [0, 1]) to RGB.
fn hsl(h: f64, s: f64, l: f64) -> RGBColor {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = (h / 60.0) % 6.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_a_large_sweep_gets_its_own_colour() {
        for n in [1, 5, 10, 11, 24, 64] {
            let p = palette(n);
            assert_eq!(p.len(), n);
            let mut seen: Vec<(u8, u8, u8)> = p.iter().map(|c| (c.0, c.1, c.2)).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n, "{n} colours, some repeated");
        }
        // not too light to see on white
        assert!(palette(24).iter().all(|c| c.0.min(c.1).min(c.2) < 200));
        assert_eq!(hsl(0.0, 1.0, 0.5), RGBColor(255, 0, 0));
        assert_eq!(hsl(240.0, 1.0, 0.5), RGBColor(0, 0, 255));
    }
}
