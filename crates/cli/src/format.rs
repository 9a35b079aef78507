//! Deterministic text for numbers in CSV and HTML; the JSON writer and [`num`] live in
//! [`cclab_units::json`], shared with the emulator and the kernel crate.

pub use cclab_units::json::{num, Json};

pub use cclab_units::decimal::{push_fixed, push_millis, push_num, push_secs, push_u64, text};

/// Appends a number for CSV: like [`num`] but nothing (an empty cell) when not finite.
pub fn push_csv_num(out: &mut Vec<u8>, x: f64, decimals: usize) {
    if x.is_finite() {
        push_num(out, x, decimals);
    }
}

/// Integer nanoseconds as exact decimal seconds ("0.01", "12.5", "3").
pub fn secs(ns: u64) -> String {
    let mut s = Vec::new();
    push_secs(&mut s, ns);
    text(s)
}

/// A terminal table: columns padded to their widest cell, the first `left` columns
/// left-aligned and the rest (numbers) right-aligned, a rule under the header row.
pub fn text_table(rows: &[Vec<String>], left: usize) -> String {
    layout(rows, left, true)
}

/// Rows as left-aligned columns, without a rule under the first.
pub fn text_columns(rows: &[Vec<String>]) -> String {
    layout(rows, usize::MAX, false)
}

/// Columns as wide as their widest cell, two spaces apart; the first `left` columns
/// left-aligned and the rest right-aligned; a rule under the first row if `rule`.
fn layout(rows: &[Vec<String>], left: usize, rule: bool) -> String {
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
        if i == 0 && rule {
            let width = widths.iter().sum::<usize>() + 2 * columns.saturating_sub(1);
            out.push_str(&"-".repeat(width));
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

/// `n` and the noun, plural unless `n` is 1 ("1 flow", "3 flows").
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_the_same_way_every_time() {
        let mut cell = Vec::new();
        push_csv_num(&mut cell, f64::INFINITY, 3);
        assert_eq!(cell, b"");
        push_csv_num(&mut cell, 0.1234567, 6);
        assert_eq!(cell, b"0.123457");
        assert_eq!(secs(10_000_000), "0.01");
        assert_eq!(secs(3_000_000_000), "3");
        let mut ms = Vec::new();
        push_millis(&mut ms, 100_250_000);
        ms.push(b',');
        push_millis(&mut ms, 7);
        assert_eq!(ms, b"100.25,0");
    }
}
