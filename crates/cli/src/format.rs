//! Deterministic text for numbers, and a tiny JSON writer with a fixed key order.
//!
//! Result files must be byte-identical for the same scenario and seed, so every float is
//! written with a stated number of decimals (trailing zeros trimmed) instead of Rust's
//! shortest round-trip form, and objects keep the order the code builds them in.

/// `x` with at most `decimals` decimals, trailing zeros and a trailing point removed;
/// non-finite values become `null` (JSON) – callers writing CSV use [`csv_num`].
pub fn num(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return "null".to_string();
    }
    let s = format!("{x:.decimals$}");
    let s =
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

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

/// A JSON value whose objects keep insertion order.
pub enum Json {
    /// Already formatted (see [`num`]).
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    pub fn f(x: f64, decimals: usize) -> Json {
        Json::Num(num(x, decimals))
    }
    pub fn u(x: u64) -> Json {
        Json::Num(x.to_string())
    }
    pub fn s(x: &str) -> Json {
        Json::Str(x.to_string())
    }

    /// Pretty-printed with two-space indentation and a final newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, indent: usize) {
        let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
        match self {
            Json::Num(n) => out.push_str(n),
            Json::Str(s) => escape(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Obj(items) if items.is_empty() => out.push_str("{}"),
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    pad(out, indent + 2);
                    v.write(out, indent + 2);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, indent);
                out.push(']');
            }
            Json::Obj(items) => {
                out.push_str("{\n");
                for (i, (k, v)) in items.iter().enumerate() {
                    pad(out, indent + 2);
                    escape(out, k);
                    out.push_str(": ");
                    v.write(out, indent + 2);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, indent);
                out.push('}');
            }
        }
    }
}

fn escape(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes to stdout, ignoring a closed pipe (`cclab algorithms | head` must not panic).
pub fn out(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
}

/// [`out`] with a newline.
pub fn outln(text: &str) {
    out(&format!("{text}\n"));
}

/// Escapes text for XML and HTML.
pub fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_the_same_way_every_time() {
        assert_eq!(num(0.951234567, 6), "0.951235");
        assert_eq!(num(2.0, 6), "2");
        assert_eq!(num(-0.0000001, 3), "0");
        assert_eq!(num(f64::NAN, 3), "null");
        assert_eq!(csv_num(f64::INFINITY, 3), "");
        assert_eq!(secs(10_000_000), "0.01");
        assert_eq!(secs(3_000_000_000), "3");
        assert_eq!(millis(100_250_000), "100.25");
        assert_eq!(millis(7), "0");
    }

    #[test]
    fn json_keeps_order_and_escapes() {
        let j = Json::Obj(vec![
            ("b", Json::u(1)),
            ("a", Json::Arr(vec![Json::s("x\"y"), Json::s("z")])),
            ("e", Json::Obj(vec![])),
        ]);
        assert_eq!(
            j.render(),
            "{\n  \"b\": 1,\n  \"a\": [\n    \"x\\\"y\",\n    \"z\"\n  ],\n  \"e\": {}\n}\n"
        );
    }
}
