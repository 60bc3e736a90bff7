//! Where the parts of a plot go: one panel or a grid of small multiples, and the legend in its
//! own column to the right, outside every panel, sized to its labels (long labels are
//! shortened with "…"). Pure geometry, so that it can be tested.

/// A rectangle in pixels: left, top, width, height.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

impl Rect {
    /// Whether the two rectangles share any pixel.
    pub fn intersects(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// The figure's size and its parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: u32,
    pub height: u32,
    /// One per panel, row by row.
    pub panels: Vec<Rect>,
    pub legend: Rect,
    /// Height of one legend entry.
    pub legend_row: u32,
}

/// Height of the figure's title band.
pub const TITLE_BAND: u32 = 40;
/// Most characters of a legend label.
pub const LABEL_CHARS: usize = 48;
const LEGEND_ROW: u32 = 20;
/// A legend entry: the line sample, a gap, then the label at about 7.5 px per character.
const SAMPLE_W: u32 = 40;

/// `label` shortened to [`LABEL_CHARS`] characters.
pub fn short_label(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(LABEL_CHARS - 1).collect();
        s.push('…');
        s
    }
}

/// Columns of a grid of `n` panels: about square, at most four.
pub fn columns(n: usize) -> usize {
    ((n as f64).sqrt().ceil() as usize).clamp(1, 4)
}

/// The layout of `panels` panels (`single`: the size of a one-panel plot) with a legend of
/// `labels`.
pub fn layout(panels: usize, labels: &[String], single: (u32, u32)) -> Layout {
    let longest = labels
        .iter()
        .map(|l| short_label(l).chars().count())
        .max()
        .unwrap_or(0) as u32;
    let legend_w = (SAMPLE_W + longest * 15 / 2 + 24).clamp(140, 420);
    let (panel_w, panel_h) = if panels <= 1 {
        (single.0, single.1 - TITLE_BAND)
    } else {
        (440, 320)
    };
    let cols = columns(panels.max(1)) as u32;
    let rows = (panels.max(1) as u32).div_ceil(cols);
    let legend_h = 24 + LEGEND_ROW * labels.len() as u32;
    let grid_h = rows * panel_h;
    let height = TITLE_BAND + grid_h.max(legend_h);
    let grid_w = cols * panel_w;
    let panels = (0..panels.max(1) as u32)
        .map(|i| Rect {
            x: (i % cols) * panel_w,
            y: TITLE_BAND + (i / cols) * panel_h,
            w: panel_w,
            h: panel_h,
        })
        .collect();
    Layout {
        width: grid_w + legend_w,
        height,
        panels,
        legend: Rect {
            x: grid_w,
            y: TITLE_BAND,
            w: legend_w,
            h: height - TITLE_BAND,
        },
        legend_row: LEGEND_ROW,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_never_covers_a_panel() {
        let labels: Vec<String> = (0..24)
            .map(|i| format!("flow.0.tcp.mechanisms=[rdb, tlp], network.loss.rate=0.0{i}"))
            .collect();
        for panels in [1, 2, 3, 4, 6, 9, 12, 16, 30] {
            let l = layout(panels, &labels, (900, 560));
            assert_eq!(l.panels.len(), panels);
            for p in &l.panels {
                assert!(
                    !p.intersects(&l.legend),
                    "{panels} panels: {p:?} vs {:?}",
                    l.legend
                );
                assert!(p.x + p.w <= l.width && p.y + p.h <= l.height);
            }
            for (i, a) in l.panels.iter().enumerate() {
                for b in &l.panels[i + 1..] {
                    assert!(!a.intersects(b));
                }
            }
            // every legend entry fits in the legend's column
            assert!(24 + l.legend_row * 24 <= l.legend.h);
            assert!(l.legend.x + l.legend.w == l.width);
        }
    }

    #[test]
    fn long_labels_are_shortened_and_grids_are_about_square() {
        let long = "x".repeat(100);
        assert_eq!(short_label(&long).chars().count(), LABEL_CHARS);
        assert!(short_label(&long).ends_with('…'));
        assert_eq!(short_label("rdb"), "rdb");
        assert_eq!(
            (columns(1), columns(4), columns(6), columns(9), columns(30)),
            (1, 2, 3, 3, 4)
        );
    }
}
