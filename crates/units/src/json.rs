//! The one JSON writer of cclab (results, comparisons, the emulator's summary, the
//! kernel's saved routes), and the deterministic number text it is built on.
//!
//! Result files must be byte-identical for the same scenario and seed, so every float is
//! written with a stated number of decimals (trailing zeros trimmed) instead of Rust's
//! shortest round-trip form, and objects keep the order the code builds them in.

/// `x` with at most `decimals` decimals, trailing zeros and a trailing point removed;
/// non-finite values become `null` (JSON); CSV writers turn that into an empty cell.
pub fn num(x: f64, decimals: usize) -> String {
    let mut s = Vec::new();
    crate::decimal::push_num(&mut s, x, decimals);
    crate::decimal::text(s)
}

use std::fmt::Write;

/// A JSON value whose objects keep insertion order.
pub enum Json {
    Null,
    Bool(bool),
    /// Already formatted (see [`num`]).
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
    /// A value already written at `indent` ([`Json::rendered`]).
    Rendered {
        text: String,
        indent: usize,
    },
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

    /// This value written now, for a place `indent` spaces deep: the items of a long
    /// array (a summary's 100,000 flows) are each kept as one string rather than as a
    /// tree of some twenty small allocations, which took more memory than the
    /// simulation.
    pub fn rendered(self, indent: usize) -> Json {
        let mut text = String::new();
        let _ = self.write(&mut text, indent); // a String takes every write
        Json::Rendered { text, indent }
    }

    /// Pretty-printed with two-space indentation and a final newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, 0);
        out.push('\n');
        out
    }

    /// What [`Json::render`] gives, written to `to` as it is made rather than held
    /// whole: a summary of 100,000 flows is tens of megabytes of text.
    pub fn write_to(&self, to: impl std::io::Write) -> std::io::Result<()> {
        let mut out = IoText { to: std::io::BufWriter::with_capacity(1 << 16, to), error: None };
        let written = self.write(&mut out, 0).and_then(|_| out.write_str("\n"));
        match (written, out.error) {
            (_, Some(e)) => Err(e),
            (Err(_), None) => Err(std::io::Error::other("a JSON value could not be written")),
            (Ok(()), None) => out.to.into_inner().map(|_| ()).map_err(|e| e.into_error()),
        }
    }

    fn write(&self, out: &mut impl Write, indent: usize) -> std::fmt::Result {
        match self {
            Json::Null => out.write_str("null"),
            Json::Bool(b) => out.write_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.write_str(n),
            Json::Str(s) => escape(out, s),
            Json::Rendered { text, indent: at } => {
                assert_eq!(*at, indent, "a rendered value is written where it was meant for");
                out.write_str(text)
            }
            Json::Arr(items) if items.is_empty() => out.write_str("[]"),
            Json::Obj(items) if items.is_empty() => out.write_str("{}"),
            Json::Arr(items) => {
                out.write_str("[\n")?;
                for (i, v) in items.iter().enumerate() {
                    pad(out, indent + 2)?;
                    v.write(out, indent + 2)?;
                    out.write_str(if i + 1 < items.len() { ",\n" } else { "\n" })?;
                }
                pad(out, indent)?;
                out.write_char(']')
            }
            Json::Obj(items) => {
                out.write_str("{\n")?;
                for (i, (k, v)) in items.iter().enumerate() {
                    pad(out, indent + 2)?;
                    escape(out, k)?;
                    out.write_str(": ")?;
                    v.write(out, indent + 2)?;
                    out.write_str(if i + 1 < items.len() { ",\n" } else { "\n" })?;
                }
                pad(out, indent)?;
                out.write_char('}')
            }
        }
    }
}

/// A byte stream taken as text, keeping the first error it gave (`fmt::Error` says none).
struct IoText<W: std::io::Write> {
    to: std::io::BufWriter<W>,
    error: Option<std::io::Error>,
}

impl<W: std::io::Write> Write for IoText<W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        use std::io::Write as _;
        self.to.write_all(s.as_bytes()).map_err(|e| {
            self.error.get_or_insert(e);
            std::fmt::Error
        })
    }
}

/// `n` spaces.
fn pad(out: &mut impl Write, n: usize) -> std::fmt::Result {
    const SPACES: &str = "                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        out.write_str(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

impl From<Option<u64>> for Json {
    fn from(x: Option<u64>) -> Json {
        x.map_or(Json::Null, Json::u)
    }
}

/// `s` as a JSON string: the runs between characters that need escaping are written
/// whole.
fn escape(out: &mut impl Write, s: &str) -> std::fmt::Result {
    out.write_char('"')?;
    let mut from = 0;
    for (i, c) in s.char_indices() {
        let escaped = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.write_str(&s[from..i])?;
        if escaped.is_empty() {
            write!(out, "\\u{:04x}", c as u32)?;
        } else {
            out.write_str(escaped)?;
        }
        from = i + c.len_utf8();
    }
    out.write_str(&s[from..])?;
    out.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_rendered_ahead_is_written_as_it_would_have_been() {
        let item = || Json::Obj(vec![("a", Json::u(1)), ("b", Json::Arr(vec![Json::s("x")]))]);
        let doc = |items: Vec<Json>| Json::Obj(vec![("items", Json::Arr(items))]).render();
        assert_eq!(doc(vec![item(), item()]), doc(vec![item().rendered(4), item().rendered(4)]));
        let misplaced = std::panic::catch_unwind(|| doc(vec![item().rendered(2)]));
        assert!(misplaced.is_err(), "written at another depth than it was rendered for");
    }

    #[test]
    fn written_to_a_stream_it_is_the_rendered_text_and_errors_are_told() {
        let doc = Json::Obj(vec![
            ("name", Json::s("a \"quoted\"\tname\u{1}é\\")),
            ("flows", Json::Arr(vec![Json::Obj(vec![("id", Json::u(0))]).rendered(4)])),
            ("deep", Json::Arr(vec![Json::Arr(vec![Json::Null, Json::Bool(true)])])),
            ("empty", Json::Obj(vec![])),
        ]);
        let mut bytes = Vec::new();
        doc.write_to(&mut bytes).unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), doc.render());
        assert!(doc.render().contains(r#""a \"quoted\"\tname\u0001é\\""#), "{}", doc.render());
        struct Full;
        impl std::io::Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::from_raw_os_error(28))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let e = doc.write_to(Full).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "the disk's own error: {e}");
    }

    #[test]
    fn numbers_are_written_the_same_way_every_time() {
        assert_eq!(num(0.951234567, 6), "0.951235");
        assert_eq!(num(2.0, 6), "2");
        assert_eq!(num(-0.0000001, 3), "0");
        assert_eq!(num(f64::NAN, 3), "null");
    }

    #[test]
    fn json_keeps_order_and_escapes() {
        let j = Json::Obj(vec![
            ("b", Json::u(1)),
            ("a", Json::Arr(vec![Json::s("x\"y"), Json::s("z")])),
            ("e", Json::Obj(vec![])),
            ("n", Json::from(None)),
        ]);
        assert_eq!(
            j.render(),
            "{\n  \"b\": 1,\n  \"a\": [\n    \"x\\\"y\",\n    \"z\"\n  ],\n  \"e\": {},\n  \"n\": null\n}\n"
        );
    }
}
