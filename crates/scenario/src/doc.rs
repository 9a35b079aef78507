//! The scenario document as a small tree that remembers where each key and value was
//! written, so that every later error can name the line. `--set FIELD=VALUE` overrides
//! edit this tree before validation; values that came from the command line carry no
//! span and their errors say "--set" instead of a line.

use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// Where a key or value came from: a byte range of the file, or a command-line override.
pub type Span = Option<Range<usize>>;

/// One value of the document.
#[derive(Clone, Debug)]
pub struct Node {
    pub val: Val,
    pub span: Span,
    /// The text as typed on the command line, for overrides (`--set name=123` is then
    /// usable where a string is expected).
    pub raw: Option<String>,
}

#[derive(Clone, Debug)]
pub enum Val {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array(Vec<Node>),
    /// Entries in document order: key, the key's span, the value.
    Table(Vec<(String, Span, Node)>),
    /// A TOML value cclab never uses (a date-time, an integer beyond 64 bits), as written,
    /// with its kind as the error messages name it.
    Other(String, &'static str),
}

impl Val {
    /// The kind of value, as the error messages name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Str(_) => "a string",
            Val::Int(_) => "an integer",
            Val::Float(_) => "a number",
            Val::Bool(_) => "a boolean",
            Val::Array(_) => "an array",
            Val::Table(_) => "a table",
            Val::Other(_, kind) => kind,
        }
    }
}

impl Node {
    pub fn table() -> Node {
        Node { val: Val::Table(Vec::new()), span: None, raw: None }
    }

    /// The value as it would be written in TOML (short form, for error messages).
    pub fn show(&self) -> String {
        if let Some(r) = &self.raw {
            return r.clone();
        }
        match &self.val {
            Val::Str(s) => format!("{s:?}"),
            Val::Int(i) => i.to_string(),
            Val::Float(f) => f.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Array(a) => {
                format!("[{}]", a.iter().map(Node::show).collect::<Vec<_>>().join(", "))
            }
            Val::Table(t) => {
                let parts: Vec<String> =
                    t.iter().map(|(k, _, v)| format!("{k} = {}", v.show())).collect();
                format!("{{ {} }}", parts.join(", "))
            }
            Val::Other(s, _) => s.clone(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.val {
            Val::Table(t) => t.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v),
            _ => None,
        }
    }
}

/// Parses TOML text into a [`Node`]; the error is the parser's message and span.
pub fn parse(text: &str) -> Result<Node, (String, Span)> {
    match DeTable::parse(text) {
        Ok(t) => {
            let span = t.span();
            Ok(Node { val: Val::Table(table_entries(t.get_ref())), span: Some(span), raw: None })
        }
        Err(e) => Err((e.message().trim().to_string(), e.span())),
    }
}

fn table_entries(t: &DeTable<'_>) -> Vec<(String, Span, Node)> {
    t.iter()
        .map(|(k, v)| (k.get_ref().to_string(), Some(k.span()), convert(v.get_ref(), v.span())))
        .collect()
}

/// What a number's text that could not be read is, as error messages name it.
fn unread_number(text: &str) -> &'static str {
    let digits = text.trim_start_matches(['+', '-']);
    if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        "an integer beyond 64 bits"
    } else {
        "an unquoted word"
    }
}

fn convert(v: &DeValue<'_>, span: Range<usize>) -> Node {
    let val = match v {
        DeValue::String(s) => Val::Str(s.to_string()),
        // The parser hands over a number's text as written: TOML's digit separators
        // (1_000) are dropped before it is read; what is left unread is either too big
        // for 64 bits or not a number at all (an unquoted 2_000ms).
        DeValue::Integer(i) => match i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()) {
            Ok(n) => Val::Int(n),
            Err(_) => Val::Other(i.to_string(), unread_number(i.as_str())),
        },
        DeValue::Float(f) => match f.as_str().replace('_', "").parse::<f64>() {
            Ok(x) => Val::Float(x),
            Err(_) => Val::Other(f.to_string(), unread_number(f.as_str())),
        },
        DeValue::Boolean(b) => Val::Bool(*b),
        DeValue::Datetime(d) => Val::Other(d.to_string(), "a date-time"),
        DeValue::Array(a) => Val::Array(a.iter().map(|x| convert(x.get_ref(), x.span())).collect()),
        DeValue::Table(t) => Val::Table(table_entries(t)),
    };
    Node { val, span: Some(span), raw: None }
}

/// 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1
}

/// One step of a field path: `flows[1].params.beta` is Key(flows), Index(1), Key(params),
/// Key(beta).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Parses a field path as written after `--set`. A part may be quoted, in double or
/// single quotes (no escapes), as TOML quotes a key holding dots or brackets:
/// `sweep."flows[0].cc"` is the `[sweep]` key `"flows[0].cc"`.
pub fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let bad = |why: &str| {
        format!("\"{path}\" is not a field path ({why}); write it like bottleneck.rate, flows[0].cc or flows[0].params.beta")
    };
    let mut steps = Vec::new();
    let mut rest = path;
    loop {
        let name;
        (name, rest) = match rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
            Some(q) => {
                let quoted = &rest[1..];
                let close = quoted.find(q).ok_or_else(|| bad("unclosed quote"))?;
                (&quoted[..close], &quoted[close + 1..])
            }
            None => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                let name = &rest[..end];
                if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    return Err(bad(
                        "each part needs a name of letters, digits, _ or -, or quotes",
                    ));
                }
                (name, &rest[end..])
            }
        };
        if name.is_empty() {
            return Err(bad("each part needs a name of letters, digits, _ or -, or quotes"));
        }
        steps.push(Step::Key(name.to_string()));
        while let Some(inside) = rest.strip_prefix('[') {
            let close = inside.find(']').ok_or_else(|| bad("unclosed ["))?;
            let idx: usize =
                inside[..close].parse().map_err(|_| bad("an index must be a whole number"))?;
            steps.push(Step::Index(idx));
            rest = &inside[close + 1..];
        }
        match rest.strip_prefix('.') {
            Some(next) => rest = next,
            None if rest.is_empty() => return Ok(steps),
            None => return Err(bad("unexpected text after ] or a quoted name")),
        }
    }
}

/// Reads the VALUE of `--set FIELD=VALUE`: a TOML value if it parses as one (`0.5`,
/// `true`, `"x"`, `{ kind = "red" }`), otherwise the text itself as a string, so that
/// `--set bottleneck.rate=20Mbps` needs no quotes. Text that opens a table, a list or a
/// quoted string is TOML or an error: taken as a word, `{kind="red"` (its brace left
/// open) was refused as an unknown queue discipline.
pub fn parse_override_value(text: &str) -> Result<Node, String> {
    let wrapped = format!("v = {text}");
    let val = match parse(&wrapped) {
        Ok(Node { val: Val::Table(mut t), .. }) if t.len() == 1 => t.remove(0).2.val,
        Err((e, _)) if text.starts_with(['{', '[', '"', '\'']) => {
            return Err(format!("not a whole TOML value ({e}); a table, a list or a quoted string is written whole, e.g. {{ kind = \"red\" }}"));
        }
        _ => Val::Str(text.to_string()),
    };
    Ok(Node { val: strip_spans(val), span: None, raw: Some(text.to_string()) })
}

fn strip_spans(v: Val) -> Val {
    match v {
        Val::Array(a) => Val::Array(
            a.into_iter()
                .map(|n| Node { val: strip_spans(n.val), span: None, raw: None })
                .collect(),
        ),
        Val::Table(t) => Val::Table(
            t.into_iter()
                .map(|(k, _, n)| (k, None, Node { val: strip_spans(n.val), span: None, raw: None }))
                .collect(),
        ),
        other => other,
    }
}

/// Writes `value` at `path` in `root`, creating missing tables on the way. Errors say
/// which part of the path could not be followed. Keys it creates carry `key_span` (the
/// line of a `[sweep]` key; `None` for `--set`), so that an error about them can name it.
pub fn set_path(root: &mut Node, path: &[Step], value: Node, key_span: Span) -> Result<(), String> {
    let mut here = root;
    let mut walked = String::new();
    for (i, step) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        match step {
            Step::Key(k) => {
                let at = if walked.is_empty() { k.clone() } else { format!("{walked}.{k}") };
                let kind = here.val.kind();
                let Val::Table(t) = &mut here.val else {
                    return Err(format!(
                        "{walked} is {kind}, not a table, so it has no field \"{k}\""
                    ));
                };
                let pos = match t.iter().position(|(key, _, _)| key == k) {
                    Some(p) => p,
                    // Tables are created on the way, entries of arrays are not.
                    None if matches!(path.get(i + 1), Some(Step::Index(_))) => {
                        return Err(format!(
                            "the file has no [[{at}]] entries; only entries a file has can be \
                             changed (add a [[{at}]] table to the file for a new one)"
                        ));
                    }
                    None => {
                        let table = Node { span: key_span.clone(), ..Node::table() };
                        t.push((k.clone(), key_span.clone(), table));
                        t.len() - 1
                    }
                };
                if last {
                    t[pos].2 = value;
                    return Ok(());
                }
                here = &mut t[pos].2;
                walked = at;
            }
            Step::Index(n) => {
                let kind = here.val.kind();
                let Val::Array(a) = &mut here.val else {
                    return Err(format!(
                        "{walked} is {kind}, not an array, so it has no entry [{n}]"
                    ));
                };
                let len = a.len();
                let Some(item) = a.get_mut(*n) else {
                    let has = match len {
                        0 => "no entries".to_string(),
                        1 => "1 entry (index 0)".to_string(),
                        _ => format!("{len} entries (indices 0 to {})", len - 1),
                    };
                    return Err(format!("{walked} has {has}, so [{n}] does not exist"));
                };
                if last {
                    *item = value;
                    return Ok(());
                }
                here = item;
                walked = format!("{walked}[{n}]");
            }
        }
    }
    Err("an empty field path".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_into_steps() {
        assert_eq!(
            parse_path("flows[1].params.beta").unwrap(),
            vec![
                Step::Key("flows".into()),
                Step::Index(1),
                Step::Key("params".into()),
                Step::Key("beta".into())
            ]
        );
        assert_eq!(
            parse_path("sweep.\"flows[0].cc, flows[1].cc\"").unwrap(),
            vec![Step::Key("sweep".into()), Step::Key("flows[0].cc, flows[1].cc".into())]
        );
        assert_eq!(
            parse_path("sweep.'a=b'").unwrap(),
            vec![Step::Key("sweep".into()), Step::Key("a=b".into())]
        );
        assert_eq!(
            parse_path("\"flows\"[2]").unwrap(),
            vec![Step::Key("flows".into()), Step::Index(2)]
        );
        for bad in [
            "",
            "a..b",
            "flows[x]",
            "flows[1",
            "a b",
            "flows[0]x",
            "a.",
            "sweep.\"x",
            "\"\"",
            "\"a\"b",
        ] {
            assert!(parse_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_with_separators_read_and_unreadable_ones_are_named_for_what_they_are() {
        let root = parse("a = 1_000\nb = 2_500.5\nc = 18446744073709551615\n").unwrap();
        assert!(matches!(root.get("a").unwrap().val, Val::Int(1000)));
        assert!(matches!(root.get("b").unwrap().val, Val::Float(x) if x == 2500.5));
        assert_eq!(root.get("c").unwrap().val.kind(), "an integer beyond 64 bits");
        assert_eq!(parse_override_value("2_000ms").unwrap().val.kind(), "an unquoted word");
        assert_eq!(parse_override_value("1979-05-27").unwrap().val.kind(), "a date-time");
    }

    #[test]
    fn an_entry_of_an_array_the_file_lacks_is_refused_as_such() {
        let mut root = parse("[[flows]]\ncc = \"reno\"\n").unwrap();
        let path = parse_path("cross[0].rate").unwrap();
        let e =
            set_path(&mut root, &path, parse_override_value("1Mbps").unwrap(), None).unwrap_err();
        assert!(e.starts_with("the file has no [[cross]] entries"), "{e}");
        assert!(root.get("cross").is_none(), "nothing was added");
    }

    #[test]
    fn override_values_are_toml_or_plain_text() {
        assert!(matches!(parse_override_value("0.5").unwrap().val, Val::Float(x) if x == 0.5));
        assert!(matches!(parse_override_value("true").unwrap().val, Val::Bool(true)));
        assert!(
            matches!(parse_override_value("20Mbps").unwrap().val, Val::Str(ref s) if s == "20Mbps")
        );
        assert!(
            matches!(parse_override_value("\"red\"").unwrap().val, Val::Str(ref s) if s == "red")
        );
    }

    #[test]
    fn set_path_creates_tables_and_refuses_missing_indices() {
        let mut root = parse("[[flows]]\ncc = \"reno\"\n").unwrap();
        set_path(
            &mut root,
            &parse_path("flows[0].params.beta").unwrap(),
            parse_override_value("0.5").unwrap(),
            None,
        )
        .unwrap();
        assert_eq!(
            root.get("flows").unwrap().show(),
            "[{ cc = \"reno\", params = { beta = 0.5 } }]"
        );
        let e = set_path(
            &mut root,
            &parse_path("flows[3].cc").unwrap(),
            parse_override_value("x").unwrap(),
            None,
        )
        .unwrap_err();
        assert!(e.contains("flows has 1 entry (index 0), so [3] does not exist"), "{e}");
        let mut empty = parse("cross = []\n").unwrap();
        let at = parse_path("cross[0].rate").unwrap();
        let e = set_path(&mut empty, &at, parse_override_value("1Mbps").unwrap(), None);
        assert!(e.unwrap_err().contains("cross has no entries, so [0] does not exist"));
        let e = set_path(
            &mut root,
            &parse_path("flows[0].cc.x").unwrap(),
            parse_override_value("x").unwrap(),
            None,
        )
        .unwrap_err();
        assert!(e.contains("not a table"), "{e}");
    }

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
