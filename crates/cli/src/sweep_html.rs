//! sweep.html: every metric of the sweep table against every swept field, one line per
//! combination of the other fields' values (and per flow, for per-flow metrics), each
//! point the mean over the seeds with its 95% confidence interval. Self-contained SVG,
//! the same bytes for the same table.

use crate::format::{num, xml};
use crate::plot::tick_step;
use crate::sweep_table::Table;
use cclab_scenario::sweep::Plan;
use std::fmt::Write;

/// Lines drawn per chart at most (the CSV has everything).
const MAX_LINES: usize = 12;
/// Okabe and Ito's colour-blind-safe colours (less their yellow, too pale on white), then
/// four of Paul Tol's: one for each of a sweep page's `MAX_LINES` lines. A colour index
/// past the palette wraps and is drawn dashed (the reproduce page numbers its cclab
/// curves after its series, so a figure with more than twelve lines would reach it).
const COLOURS: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255",
    "#44AA99", "#999933", "#AA4499", "#661100",
];

/// Mean and half-width of the 95% confidence interval (Student's t) of `xs`; a single
/// sample has no interval (`None`, which charts draw without whiskers), not a zero one.
pub(crate) fn mean_ci95(xs: &[f64]) -> Option<(f64, Option<f64>)> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some((mean, None));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, Some(t975(n - 1) * (var / n as f64).sqrt())))
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom: exact to three
/// decimals from the usual table up to 30, then the Cornish-Fisher expansion
/// z + (z^3 + z) / (4 df), within 0.001 of the table beyond.
pub(crate) fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        _ => {
            let z = 1.959964;
            z + (z * z * z + z) / (4.0 * df as f64)
        }
    }
}

/// Where a swept value sits on the x axis: its number in a common unit when every value
/// of the field is a number or a quantity of one kind, else its position in the list.
pub(crate) fn x_positions(labels: &[String]) -> (Vec<f64>, Option<&'static str>) {
    type Reader = fn(&str) -> Option<f64>;
    let readers: [(Reader, Option<&'static str>); 4] = [
        (|s| s.parse::<f64>().ok(), None),
        (|s| cclab_units::parse_duration(s).ok().map(|d| d.as_millis_f64()), Some("ms")),
        (|s| cclab_units::parse_rate(s).ok().map(|r| r.0 as f64 / 1e6), Some("Mbit/s")),
        (|s| cclab_units::parse_bytes(s).ok().map(|b| b as f64 / 1e3), Some("KB")),
    ];
    for (read, unit) in readers {
        let xs: Option<Vec<f64>> =
            labels.iter().map(|l| read(l).filter(|x| x.is_finite())).collect();
        if let Some(xs) = xs {
            return (xs, unit);
        }
    }
    ((0..labels.len()).map(|i| i as f64).collect(), None)
}

/// One line of a chart: a name and, per x position, (x, mean, half-width); its palette
/// colour (default: its position) and whether it is dashed.
pub(crate) struct Line {
    pub name: String,
    /// (x, mean, half-width of its 95% interval if it has one).
    pub points: Vec<(f64, f64, Option<f64>)>,
    pub colour: Option<usize>,
    pub dashed: bool,
}

/// The page.
pub fn page(plan: &Plan, table: &Table, failed: &[String]) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cclab sweep: ");
    h.push_str(&xml(&plan.name));
    h.push_str("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:900px}td,th{padding:2px 8px;text-align:left}</style></head><body>\n");
    let _ = writeln!(h, "<h1>Sweep {}</h1>", xml(&plan.name));
    let _ = writeln!(
        h,
        "<p>{} points &times; {} seeds (first seed {}) = {} runs. Each dot is the mean over the seeds; bars are 95% confidence intervals (Student's t; none for a single seed).</p>",
        plan.points(),
        plan.seeds,
        plan.first_seed,
        plan.runs.len()
    );
    h.push_str("<table><tr><th>swept field</th><th>values</th></tr>\n");
    for a in &plan.axes {
        let vals: Vec<String> = a.labels.iter().map(|l| l.join(" / ")).collect();
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", xml(&a.key), xml(&vals.join(", ")));
    }
    h.push_str("</table>\n");
    if !failed.is_empty() {
        let _ = writeln!(
            h,
            "<p><b>{} runs failed</b> and are missing from the plots:</p><ul>",
            failed.len()
        );
        for f in failed {
            let _ = writeln!(h, "<li>{}</li>", xml(f));
        }
        h.push_str("</ul>\n");
    }
    let metrics = plotted_metrics(table);
    for (ai, axis) in plan.axes.iter().enumerate() {
        let _ = writeln!(h, "<h2>Against {}</h2>", xml(&axis.key));
        for &m in &metrics {
            let lines = lines_for(plan, table, ai, m);
            h.push_str("<div>\n");
            h.push_str(&chart(&table.columns[m], &axis.key, &axis.labels, &lines));
            h.push_str("</div>\n");
        }
    }
    if plan.axes.is_empty() {
        h.push_str("<p>No swept fields (seeds only): see sweep.csv.</p>\n");
    }
    h.push_str("</body></html>\n");
    h
}

/// Numeric metric columns whose numbers vary (a constant says nothing in a plot). Rows
/// without one (the reference flow's own throughput ratio, a bulk flow's completion
/// time, a group that one point does not have) leave gaps in their lines
/// ([`lines_for`]).
fn plotted_metrics(table: &Table) -> Vec<usize> {
    (table.key_columns..table.columns.len())
        .filter(|&c| table.columns[c] != "flow.id")
        .filter(|&c| {
            let xs: Vec<f64> = table.numbers(c).into_iter().flatten().collect();
            xs.iter().any(|x| (x - xs[0]).abs() > 1e-12 * xs[0].abs().max(1.0))
        })
        .collect()
}

/// The lines of metric `m` against axis `ai`.
fn lines_for(plan: &Plan, table: &Table, ai: usize, m: usize) -> Vec<Line> {
    let per_flow = m >= table.first_flow_column;
    // A row's line is named by its flow, or for a group's column by the group: groups
    // are numbered in flow order, so where an algorithm is swept, group 0 is one
    // algorithm in some runs and another in others, and one line would mix them.
    let named_by = match table.columns[m].split_once("].") {
        Some((group, _)) if group.starts_with("fairness.groups[") => format!("{group}].name"),
        _ if per_flow => "flow.name".to_string(),
        _ => String::new(),
    };
    let name_col = table.columns.iter().position(|c| *c == named_by);
    // (line name, value index) -> samples, in first-seen order of line names.
    let mut names: Vec<String> = Vec::new();
    // None where a run has no value.
    let mut samples: Vec<Vec<Vec<Option<f64>>>> = Vec::new();
    let mut seen_runs = std::collections::HashSet::new();
    let nvals = plan.axes[ai].labels.len();
    for row in &table.rows {
        let Some(run) = row[0].as_f64().map(|r| r as usize) else { continue };
        if !per_flow && !seen_runs.insert(run) {
            continue; // run-level values repeat on every flow's row
        }
        let y = row[m].as_f64();
        let r = &plan.runs[run];
        let mut parts: Vec<String> = plan
            .axes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != ai)
            .map(|(i, a)| format!("{}={}", a.fields.join("/"), a.labels[r.choice[i]].join("/")))
            .collect();
        if let Some(nc) = name_col {
            if let crate::sweep_table::Cell::Text(n) = &row[nc] {
                parts.push(n.clone());
            }
        }
        let name = if parts.is_empty() { table.columns[m].clone() } else { parts.join(" ") };
        let li = match names.iter().position(|n| *n == name) {
            Some(i) => i,
            None => {
                names.push(name);
                samples.push(vec![Vec::new(); nvals]);
                names.len() - 1
            }
        };
        samples[li][r.choice[ai]].push(y);
    }
    let (xs, _) = x_positions(&first_field_labels(plan, ai));
    names
        .into_iter()
        .zip(samples)
        .map(|(name, per_value)| Line {
            name,
            colour: None,
            dashed: false,
            points: per_value
                .iter()
                .enumerate()
                .filter(|(_, ys)| !ys.is_empty())
                .map(|(v, ys)| (xs[v], point_of(ys)))
                .map(|(x, p)| p.map_or((x, f64::NAN, None), |(m, ci)| (x, m, ci)))
                .collect(),
        })
        .filter(|line| line.points.iter().any(|p| p.1.is_finite()))
        .collect()
}

/// The dot of one x position: the mean of its runs' values with its interval, only when
/// every run there has one (a mean over the seeds that finished a transfer would be
/// biased low); otherwise none, and the line has a gap there.
fn point_of(ys: &[Option<f64>]) -> Option<(f64, Option<f64>)> {
    let values: Option<Vec<f64>> = ys.iter().copied().collect();
    mean_ci95(&values?)
}

fn first_field_labels(plan: &Plan, ai: usize) -> Vec<String> {
    plan.axes[ai].labels.iter().map(|l| l[0].clone()).collect()
}

const W: f64 = 820.0;
/// Height of the plot area and what surrounds it; the legend goes below, one line each.
const PLOT_H: f64 = 270.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 50.0;
const LEGEND_LINE: f64 = 17.0;

/// One chart: means joined by lines, with confidence bars. `labels[v][0]` names the
/// v-th x position (quantities go on a numeric axis).
pub(crate) fn chart(metric: &str, axis: &str, labels: &[Vec<String>], lines: &[Line]) -> String {
    let first: Vec<String> = labels.iter().map(|l| l[0].clone()).collect();
    let (xs, unit) = x_positions(&first);
    let categorical = unit.is_none() && first.iter().any(|l| l.parse::<f64>().is_err());
    let (x_lo, x_hi) = span(xs.iter().copied());
    let pad = if x_hi > x_lo { (x_hi - x_lo) * 0.05 } else { 0.5 };
    let (x_lo, x_hi) = (x_lo - pad, x_hi + pad);
    let shown = &lines[..lines.len().min(MAX_LINES)];
    let ys = shown.iter().flat_map(|l| {
        l.points.iter().flat_map(|&(_, m, ci)| [m - ci.unwrap_or(0.0), m + ci.unwrap_or(0.0)])
    });
    let (mut y_lo, mut y_hi) = span(ys.chain([0.0]));
    if y_hi <= y_lo {
        y_hi = y_lo + 1.0;
    }
    let y_step = tick_step(y_hi - y_lo);
    y_lo = (y_lo / y_step).floor() * y_step;
    y_hi = (y_hi / y_step).ceil() * y_step;
    let (pw, ph) = (W - LEFT - RIGHT, PLOT_H);
    let h_total = TOP + PLOT_H + BOTTOM + LEGEND_LINE * shown.len() as f64 + 6.0;
    let sx = |x: f64| LEFT + (x - x_lo) / (x_hi - x_lo) * pw;
    let sy = |y: f64| TOP + ph - (y - y_lo) / (y_hi - y_lo) * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h_total}" viewBox="0 0 {W} {h_total}" font-family="sans-serif" font-size="12"><rect width="{W}" height="{h_total}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{} against {}</text>"#,
        xml(metric),
        xml(axis)
    );
    if lines.len() > MAX_LINES {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="20" text-anchor="end" fill="#555">first {MAX_LINES} of {} lines</text>"##,
            W - RIGHT,
            lines.len()
        );
    }
    let mut y = y_lo;
    while y <= y_hi + y_step * 1e-9 {
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            sy(y) + 4.0,
            tick_text(y, y_step, y_hi.abs().max(y_lo.abs())),
            py = sy(y)
        );
        y += y_step;
    }
    for (i, x) in xs.iter().enumerate() {
        let text = if categorical { labels[i].join("/") } else { first[i].clone() };
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 16.0,
            xml(&text),
            px = sx(*x)
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw:.1}" height="{ph:.1}" fill="none" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
        LEFT + pw / 2.0,
        TOP + ph + 36.0,
        xml(&match unit {
            Some(u) => format!("{axis} ({u})"),
            None => axis.to_string(),
        })
    );
    draw_lines(&mut s, shown, &sx, &sy, TOP + ph + BOTTOM);
    s.push_str("</svg>\n");
    s
}

/// A y tick: with k, M or G when the axis reaches ten thousand (goodput in bit/s).
fn tick_text(y: f64, step: f64, largest: f64) -> String {
    let (scale, suffix) = match largest {
        l if l >= 1e9 => (1e9, "G"),
        l if l >= 1e6 => (1e6, "M"),
        l if l >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let step = step / scale;
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    format!("{}{suffix}", num(y / scale, decimals))
}

/// The lines with their dots and confidence bars, and the legend from `legend_y` down.
fn draw_lines(
    s: &mut String,
    shown: &[Line],
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
    legend_y: f64,
) {
    for (i, line) in shown.iter().enumerate() {
        let c = line.colour.unwrap_or(i);
        let colour = COLOURS[c % COLOURS.len()];
        let dashed = line.dashed || (c / COLOURS.len()) % 2 == 1;
        let dash = if dashed { r#" stroke-dasharray="6,3""# } else { "" };
        // A point without a value (NaN) breaks the line.
        for run in line.points.split(|p| !p.1.is_finite()).filter(|run| !run.is_empty()) {
            let pts: Vec<String> =
                run.iter().map(|p| format!("{:.1},{:.1}", sx(p.0), sy(p.1))).collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="1.4"{dash} points="{}"/>"#,
                pts.join(" ")
            );
        }
        for &(x, m, ci) in line.points.iter().filter(|p| p.1.is_finite()) {
            let px = sx(x);
            let _ = write!(s, r#"<circle cx="{px:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#, sy(m));
            if let Some(ci) = ci {
                let (top, bot) = (sy(m + ci), sy(m - ci));
                let _ = write!(
                    s,
                    r#"<path d="M{px:.1},{top:.1}V{bot:.1}M{:.1},{top:.1}h8M{:.1},{bot:.1}h8" stroke="{colour}"/>"#,
                    px - 4.0,
                    px - 4.0
                );
            }
            s.push('\n');
        }
        let ly = legend_y + 4.0 + i as f64 * LEGEND_LINE;
        let lx = LEFT;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly:.1}" x2="{}" y2="{ly:.1}" stroke="{colour}" stroke-width="2"{dash}/><text x="{}" y="{:.1}">{}</text>"#,
            lx + 20.0,
            lx + 26.0,
            ly + 4.0,
            xml(&line.name)
        );
    }
}

fn span(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    xs.filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_intervals_use_students_t() {
        assert_eq!(mean_ci95(&[]), None);
        assert_eq!(mean_ci95(&[3.0]), Some((3.0, None)));
        // Two samples 1 and 3: s = sqrt(2), se = 1, t(1) = 12.706.
        let (m, ci) = mean_ci95(&[1.0, 3.0]).unwrap();
        assert!((m - 2.0).abs() < 1e-12 && (ci.unwrap() - 12.706).abs() < 1e-9);
        // Beyond the table the expansion stays close: t(60) = 2.000, t(120) = 1.980.
        assert!((t975(60) - 2.000).abs() < 0.002);
        assert!((t975(120) - 1.980).abs() < 0.001);
    }

    #[test]
    fn only_points_with_an_interval_get_whiskers() {
        let line = Line {
            name: "goodput".into(),
            points: vec![(10.0, 2.0, Some(0.5)), (20.0, 3.0, None)],
            colour: None,
            dashed: false,
        };
        let labels = vec![vec!["10".to_string()], vec!["20".to_string()]];
        let svg = chart("goodput", "x", &labels, &[line]);
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
        // One whisker: the vertical bar and its two caps.
        assert_eq!(svg.matches("h8M").count(), 1, "{svg}");
    }

    #[test]
    fn quantities_share_a_numeric_axis() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(x_positions(&l(&["10ms", "1s"])), (vec![10.0, 1000.0], Some("ms")));
        assert_eq!(x_positions(&l(&["0", "0.01"])), (vec![0.0, 0.01], None));
        assert_eq!(x_positions(&l(&["cubic", "reno"])), (vec![0.0, 1.0], None));
        assert_eq!(x_positions(&l(&["10Mbps", "1Gbps"])).1, Some("Mbit/s"));
        assert_eq!(tick_text(2_500_000.0, 500_000.0, 8e6), "2.5M");
        assert_eq!(tick_text(0.25, 0.05, 1.0), "0.25");
    }
}
