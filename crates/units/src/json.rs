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
        self.write(&mut text, indent);
        Json::Rendered { text, indent }
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
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(n),
            Json::Str(s) => escape(out, s),
            Json::Rendered { text, indent: at } => {
                assert_eq!(*at, indent, "a rendered value is written where it was meant for");
                out.push_str(text)
            }
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

impl From<Option<u64>> for Json {
    fn from(x: Option<u64>) -> Json {
        x.map_or(Json::Null, Json::u)
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
