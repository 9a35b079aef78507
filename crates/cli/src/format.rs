//! Deterministic text for numbers in CSV and HTML; the JSON writer and [`num`] live in
//! [`cclab_units::json`], shared with the emulator and the kernel crate.

pub use cclab_units::json::{num, Json};

/// A number for CSV: like [`num`] but empty when not finite.
pub fn csv_num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        num(x, decimals)
    } else {
        String::new()
    }
}

/// Integer nanoseconds as exact decimal seconds ("0.01", "12.5", "3").
pub fn secs(ns: u64) -> String {
    let whole = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    if frac == 0 {
        whole.to_string()
    } else {
        let f = format!("{frac:09}");
        format!("{whole}.{}", f.trim_end_matches('0'))
    }
}

/// Integer nanoseconds as milliseconds with microsecond precision ("100.25").
pub fn millis(ns: u64) -> String {
    let us = ns / 1_000;
    let (ms, rest) = (us / 1000, us % 1000);
    if rest == 0 {
        ms.to_string()
    } else {
        let f = format!("{rest:03}");
        format!("{ms}.{}", f.trim_end_matches('0'))
    }
}

/// A terminal table: columns padded to their widest cell, the first `left` columns
/// left-aligned and the rest (numbers) right-aligned, a rule under the header row.
pub fn text_table(rows: &[Vec<String>], left: usize) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (v, w))| if c < left { format!("{v:<w$}") } else { format!("{v:>w$}") })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule = widths.iter().sum::<usize>() + 2 * columns.saturating_sub(1);
            out.push_str(&"-".repeat(rule));
            out.push('\n');
        }
    }
    out
}

/// Printing that ignores a closed pipe (`cclab algorithms | head` must not panic).
pub use cclab_units::stdout::{out, outln};

/// Escapes text for XML and HTML.
pub fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_the_same_way_every_time() {
        assert_eq!(csv_num(f64::INFINITY, 3), "");
        assert_eq!(secs(10_000_000), "0.01");
        assert_eq!(secs(3_000_000_000), "3");
        assert_eq!(millis(100_250_000), "100.25");
        assert_eq!(millis(7), "0");
    }
}
