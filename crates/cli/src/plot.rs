//! Line charts as SVG, written by hand: no plotting dependency, and the same data always
//! gives the same bytes (coordinates rounded to 0.1 px, a fixed palette, no timestamps).

use crate::format::{num, push_fixed, text, xml};
use std::fmt::Write;

const W: f64 = 820.0;
const H: f64 = 380.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 50.0;
/// About the text of one drawn point ("123.4,56.7 "), to size buffers up front.
const BYTES_PER_POINT: usize = 12;
/// Colour-blind-safe palette (Okabe & Ito), then repeated with dashes.
const COLOURS: &[&str] =
    &["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];

pub struct Series {
    pub name: String,
    /// (x, y) in the chart's units.
    pub points: Vec<(f64, f64)>,
}

pub struct Chart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// Fixed x range (e.g. 0 to the run's duration).
    pub x_max: f64,
    pub series: Vec<Series>,
    /// A note under the title (e.g. "first 16 of 100 flows").
    pub note: Option<String>,
}

/// Tick step for a range of `span`: 1, 2 or 5 times a power of ten, about 5 ticks.
pub(crate) fn tick_step(span: f64) -> f64 {
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let m = if r <= 1.0 {
        1.0
    } else if r <= 2.0 {
        2.0
    } else if r <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    num(v, decimals)
}

impl Chart<'_> {
    /// Series `i` gets colour `i` of the palette; past the palette's end the colours
    /// repeat dashed.
    pub fn render(&self) -> String {
        self.render_styled(&|i| (i % COLOURS.len(), (i / COLOURS.len()) % 2 == 1))
    }

    /// Like [`render`](Chart::render) with each series' (palette index, dashed) chosen by
    /// `style`, e.g. `cclab compare` draws a flow in one colour, solid for run A and
    /// dashed for run B.
    pub fn render_styled(&self, style: &dyn Fn(usize) -> (usize, bool)) -> String {
        let (area, y_step) = Area::fit(self.x_max, &self.series);
        let drawn: usize = self.series.iter().map(|s| s.points.len().min(MAX_DRAWN)).sum();
        let mut s = String::with_capacity(4096 + drawn * BYTES_PER_POINT);
        self.write_frame(&mut s, &area, y_step);
        for (i, ser) in self.series.iter().enumerate() {
            write_series(&mut s, &area, i, ser, style(i));
        }
        s.push_str("</svg>\n");
        s
    }

    /// The picture around the data: title, note, grid with tick labels, axes' labels.
    fn write_frame(&self, s: &mut String, area: &Area, y_step: f64) {
        let (pw, ph) = (PLOT_W, PLOT_H);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="20" font-size="15" font-weight="bold">{}</text>"#,
            xml(self.title)
        );
        if let Some(note) = &self.note {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="20" text-anchor="end" fill="#555">{}</text>"##,
                W - RIGHT,
                xml(note)
            );
        }
        let mut y = 0.0;
        while y <= area.y_max + y_step * 1e-9 {
            let py = area.sy(y);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                py + 4.0,
                tick_label(y, y_step)
            );
            y += y_step;
        }
        let x_step = tick_step(area.x_max);
        let mut x = 0.0;
        while x <= area.x_max + x_step * 1e-9 {
            let px = area.sx(x);
            let _ = writeln!(
                s,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 16.0,
                tick_label(x, x_step)
            );
            x += x_step;
        }
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{pw:.1}" height="{ph:.1}" fill="none" stroke="#333"/>"##
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 10.0,
            xml(self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + ph / 2.0,
            xml(self.y_label)
        );
    }
}

/// Width and height of the plotting area inside the margins.
const PLOT_W: f64 = W - LEFT - RIGHT;
const PLOT_H: f64 = H - TOP - BOTTOM;

/// The data's ranges, mapped onto the plotting area.
struct Area {
    x_max: f64,
    y_max: f64,
}

impl Area {
    /// The area for `series` over x from 0 to `x_max`, with y from 0 to a round number
    /// above the highest point; and the y grid's step.
    fn fit(x_max: f64, series: &[Series]) -> (Area, f64) {
        let x_max = if x_max > 0.0 { x_max } else { 1.0 };
        let y_data = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(0.0f64, f64::max);
        let y_step = tick_step(if y_data > 0.0 { y_data * 1.05 } else { 1.0 });
        let y_max = ((if y_data > 0.0 { y_data * 1.05 } else { 1.0 }) / y_step).ceil() * y_step;
        (Area { x_max, y_max }, y_step)
    }

    fn sx(&self, x: f64) -> f64 {
        LEFT + x / self.x_max * PLOT_W
    }
    fn sy(&self, y: f64) -> f64 {
        TOP + PLOT_H - (y / self.y_max).clamp(0.0, 1.0) * PLOT_H
    }
}

/// Pixel columns in the plotting area: a line's points are thinned to two per column.
const COLUMNS: usize = PLOT_W as usize;
/// Points drawn per line at most, for points in the chart's x range (see
/// [`column_extremes`]; the right edge, x = `x_max`, is a column of its own).
const MAX_DRAWN: usize = 2 * COLUMNS + 2;

/// Calls `draw` with the points of a line worth drawing, in order, given in pixels: of
/// each run of consecutive points that fall in one pixel column, the lowest and the
/// highest (once when they are one point). One column cannot show more than the span
/// between them, so the line looks the same as through every point, however long it
/// is, and a long run's chart is no larger than a short one's. (This is the min/max
/// decimation of plotting libraries; the columns are whole pixels of the plotting area.)
fn column_extremes(points: impl Iterator<Item = (f64, f64)>, mut draw: impl FnMut(f64, f64)) {
    // The current column's number and its lowest and highest point, with their order.
    let mut column: Option<i64> = None;
    let mut low = (0usize, 0.0, 0.0);
    let mut high = low;
    let mut flush = |low: (usize, f64, f64), high: (usize, f64, f64)| {
        let (first, second) = if low.0 <= high.0 { (low, high) } else { (high, low) };
        draw(first.1, first.2);
        if second.0 != first.0 {
            draw(second.1, second.2);
        }
    };
    for (k, (px, py)) in points.enumerate() {
        // A truncating cast for `floor`, which is a library call on x86-64: the same for
        // points right of the area's left edge, and time is never negative.
        let here = (px - LEFT) as i64;
        if column != Some(here) {
            if column.is_some() {
                flush(low, high);
            }
            column = Some(here);
            (low, high) = ((k, px, py), (k, px, py));
        } else if py < low.2 {
            low = (k, px, py);
        } else if py > high.2 {
            high = (k, px, py);
        }
    }
    if column.is_some() {
        flush(low, high);
    }
}

/// Series `i` as a polyline (its points thinned by [`column_extremes`]) and its legend
/// entry, in palette colour `c`, dashed or not.
fn write_series(s: &mut String, area: &Area, i: usize, ser: &Series, (c, dashed): (usize, bool)) {
    let colour = COLOURS[c % COLOURS.len()];
    let dash = if dashed { r#" stroke-dasharray="6,3""# } else { "" };
    let mut pts = Vec::with_capacity(ser.points.len().min(MAX_DRAWN) * BYTES_PER_POINT);
    let in_pixels = ser
        .points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (area.sx(x), area.sy(y)));
    column_extremes(in_pixels, |px, py| {
        push_fixed(&mut pts, px, 1);
        pts.push(b',');
        push_fixed(&mut pts, py, 1);
        pts.push(b' ');
    });
    let _ = writeln!(
        s,
        r#"<polyline fill="none" stroke="{colour}" stroke-width="1.3"{dash} points="{}"/>"#,
        text(pts).trim_end()
    );
    let ly = TOP + 10.0 + i as f64 * 18.0;
    if ly < H - BOTTOM {
        let lx = W - RIGHT + 14.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly:.1}" x2="{}" y2="{ly:.1}" stroke="{colour}" stroke-width="2"{dash}/><text x="{}" y="{:.1}">{}</text>"#,
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            xml(&ser.name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(tick_step(10.0), 2.0);
        assert_eq!(tick_step(60.0), 20.0);
        assert_eq!(tick_step(0.3), 0.1);
        assert_eq!(tick_step(0.0), 1.0);
    }

    /// The points of the only polyline in `svg`, as drawn.
    fn drawn_points(svg: &str) -> Vec<(String, String)> {
        let drawn = svg.split(" points=\"").nth(1).unwrap().split('"').next().unwrap();
        drawn
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.to_string(), y.to_string())
            })
            .collect()
    }

    /// A chart of one line, drawn, and the area its points were mapped onto.
    fn one_line(points: Vec<(f64, f64)>, x_max: f64) -> (String, Area) {
        let series = vec![Series { name: "s".into(), points }];
        let area = Area::fit(x_max, &series).0;
        let chart = Chart { title: "t", x_label: "x", y_label: "y", x_max, series, note: None };
        (chart.render(), area)
    }

    /// A line with no more than one point in a pixel column is drawn through every point.
    #[test]
    fn a_short_line_is_drawn_whole() {
        let n = COLUMNS / 2;
        let points: Vec<(f64, f64)> = (0..n).map(|j| (j as f64, (j % 7) as f64)).collect();
        let (svg, area) = one_line(points.clone(), n as f64);
        let want: Vec<(String, String)> = points
            .iter()
            .map(|&(x, y)| (format!("{:.1}", area.sx(x)), format!("{:.1}", area.sy(y))))
            .collect();
        assert_eq!(drawn_points(&svg), want);
    }

    /// A long line keeps, of each pixel column, exactly its lowest and highest point, in
    /// their order: worked out here the slow way, by grouping every point by column.
    #[test]
    fn a_long_line_keeps_each_columns_lowest_and_highest_point() {
        for n in [COLUMNS * 2 + 1, 3001, 60_000] {
            // A sawtooth with noise: columns hold rises, falls and repeated values.
            let points: Vec<(f64, f64)> = (0..n)
                .map(|j| (j as f64 * 0.01, ((j * 7919) % 101) as f64 + (j % 500) as f64))
                .collect();
            let x_max = n as f64 * 0.01;
            let (svg, area) = one_line(points.clone(), x_max);
            let mut want = Vec::new();
            let mut j = 0;
            while j < n {
                let column = (area.sx(points[j].0) - LEFT).floor();
                let mut k = j;
                while k < n && (area.sx(points[k].0) - LEFT).floor() == column {
                    k += 1;
                }
                let run = j..k;
                let sy = |i: usize| area.sy(points[i].1);
                // The first lowest and the first highest on screen (y grows downwards).
                let top = run.clone().fold(j, |b, i| if sy(i) < sy(b) { i } else { b });
                let bottom = run.clone().fold(j, |b, i| if sy(i) > sy(b) { i } else { b });
                let mut kept = vec![top.min(bottom), top.max(bottom)];
                kept.dedup();
                for i in kept {
                    want.push((format!("{:.1}", area.sx(points[i].0)), format!("{:.1}", sy(i))));
                }
                j = k;
            }
            let drawn = drawn_points(&svg);
            assert_eq!(drawn, want, "{n} points");
            assert!(drawn.len() <= MAX_DRAWN, "{n} points: {} drawn", drawn.len());
        }
    }

    #[test]
    fn a_chart_has_one_line_per_series_and_a_legend() {
        let c = Chart {
            title: "cwnd",
            x_label: "time (s)",
            y_label: "cwnd (packets)",
            x_max: 10.0,
            series: vec![
                Series { name: "reno#0".into(), points: vec![(0.0, 1.0), (10.0, 5.0)] },
                Series { name: "a<b".into(), points: vec![(0.0, 2.0)] },
            ],
            note: None,
        };
        let svg = c.render();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("reno#0") && svg.contains("a&lt;b") && svg.contains("time (s)"));
        assert_eq!(svg, c.render());
    }
}
