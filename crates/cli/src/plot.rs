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
/// Points drawn per line at most; longer series are thinned by a fixed stride.
const MAX_POINTS: usize = 2000;
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
        let x_max = if self.x_max > 0.0 { self.x_max } else { 1.0 };
        let y_data = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(0.0f64, f64::max);
        let y_step = tick_step(if y_data > 0.0 { y_data * 1.05 } else { 1.0 });
        let y_max = ((if y_data > 0.0 { y_data * 1.05 } else { 1.0 }) / y_step).ceil() * y_step;
        let area = Area { x_max, y_max };
        let drawn: usize = self.series.iter().map(|s| s.points.len().min(MAX_POINTS + 1)).sum();
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
    fn sx(&self, x: f64) -> f64 {
        LEFT + x / self.x_max * PLOT_W
    }
    fn sy(&self, y: f64) -> f64 {
        TOP + PLOT_H - (y / self.y_max).clamp(0.0, 1.0) * PLOT_H
    }
}

/// Series `i` as a polyline (at most [`MAX_POINTS`] points) and its legend entry, in
/// palette colour `c`, dashed or not.
fn write_series(s: &mut String, area: &Area, i: usize, ser: &Series, (c, dashed): (usize, bool)) {
    let colour = COLOURS[c % COLOURS.len()];
    let dash = if dashed { r#" stroke-dasharray="6,3""# } else { "" };
    // Every `stride`-th point and the last, stepped to (no division per point).
    let n = ser.points.len();
    let stride = n.div_ceil(MAX_POINTS).max(1);
    let last = (n > 0 && !(n - 1).is_multiple_of(stride)).then(|| n - 1);
    let mut pts = Vec::with_capacity((n / stride + 2) * BYTES_PER_POINT);
    for j in (0..n).step_by(stride).chain(last) {
        let (px, py) = ser.points[j];
        if px.is_finite() && py.is_finite() {
            push_fixed(&mut pts, area.sx(px), 1);
            pts.push(b',');
            push_fixed(&mut pts, area.sy(py), 1);
            pts.push(b' ');
        }
    }
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

    /// Long lines are drawn with every stride-th point and the last, whatever the length.
    #[test]
    fn long_lines_keep_every_stride_th_point_and_the_last() {
        for n in [1usize, 2, 2000, 2001, 4001, 4002, 4003, 6001] {
            let points: Vec<(f64, f64)> = (0..n).map(|j| (j as f64, (j % 7) as f64)).collect();
            let chart = Chart {
                title: "t",
                x_label: "x",
                y_label: "y",
                x_max: n as f64,
                series: vec![Series { name: "s".into(), points }],
                note: None,
            };
            let svg = chart.render();
            let drawn = svg.split(" points=\"").nth(1).unwrap().split('"').next().unwrap();
            let xs: Vec<&str> = drawn.split(' ').map(|p| p.split(',').next().unwrap()).collect();
            let stride = n.div_ceil(MAX_POINTS);
            let area = Area { x_max: n as f64, y_max: 1.0 };
            let expected: Vec<String> = (0..n)
                .filter(|j| j % stride == 0 || j + 1 == n)
                .map(|j| format!("{:.1}", area.sx(j as f64)))
                .collect();
            assert_eq!(xs, expected, "{n} points");
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
