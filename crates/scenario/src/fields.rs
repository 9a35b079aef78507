//! Reading one table of the scenario document. Unknown keys are refused up front
//! (serde's `deny_unknown_fields`, done by hand so that the error can list the allowed
//! keys and name the line); values are read by type and unit; and the simulator's
//! verdict on what was read is pointed back at the line that wrote it
//! ([`Fields::locate`]). Ranges are the simulator's (`cclab_sim::validate`), not
//! repeated here.

use crate::doc::{Node, Span, Val};
use crate::schema::Ctx;
use crate::ScenarioError;
use cclab_sim::SimError;
use cclab_units::{
    parse_bytes, parse_duration, parse_rate, Duration, Rate, DURATION_FORM, RATE_FORM, SIZE_FORM,
};

/// A table being read: refuses unknown keys up front, then hands out typed values.
pub(crate) struct Fields<'a, 'c> {
    pub ctx: &'c Ctx<'c>,
    pub path: String,
    pub node: &'a Node,
    pub entries: &'a [(String, Span, Node)],
}

/// A field's path as a TOML header names it: without the entry numbers
/// (`flows[0].params` is under the header `[flows.params]`).
fn toml_path(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut in_index = false;
    for c in field.chars() {
        match c {
            '[' => in_index = true,
            ']' => in_index = false,
            _ if !in_index => out.push(c),
            _ => {}
        }
    }
    out
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a, 'c> Fields<'a, 'c> {
    pub fn new(
        ctx: &'c Ctx<'c>,
        path: &str,
        node: &'a Node,
        allowed: &[&str],
    ) -> Result<Self, ScenarioError> {
        let Val::Table(entries) = &node.val else {
            return Err(ctx.bad(
                node,
                path,
                format!("expected a table, found {}", node.val.kind()),
            ));
        };
        for (k, kspan, _) in entries {
            if !allowed.contains(&k.as_str()) {
                let field = join(path, k);
                let where_ = if path.is_empty() {
                    "at the top level".to_string()
                } else {
                    format!("in {path}")
                };
                return Err(ctx.err(
                    kspan,
                    &field,
                    None,
                    format!(
                        "unknown field \"{k}\" {where_}; allowed fields: {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(Fields { ctx, path: path.to_string(), node, entries })
    }

    pub fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Node> {
        self.entries.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
    }

    pub fn missing(&self, key: &str, what: &str) -> ScenarioError {
        let where_ =
            if self.path.is_empty() { String::new() } else { format!(" in {}", self.path) };
        let message = format!("missing required field \"{key}\"{where_}: {what}");
        if let Some((header, span)) = self.written_below(key) {
            // The usual slip: a top-level key written after a [table] header belongs to
            // that table, where it is unknown; the line it is on is the one to point at.
            return self.ctx.err(
                span,
                &self.field(key),
                None,
                format!(
                    "{message}; \"{key}\" is written inside {header} here, and a key after a header (or inside {{ }}) belongs to that table: move it {}",
                    self.move_up_to()
                ),
            );
        }
        let mut e = self.ctx.err(&self.node.span, &self.field(key), None, message);
        if self.path.is_empty() {
            // The whole file is the "table" here: no single line to point at.
            e.line = None;
            e.from_override = false;
        }
        e
    }

    /// Where a key written too low belongs, in words: this table's own place.
    fn move_up_to(&self) -> String {
        if self.path.is_empty() {
            return "to the top, above every header".to_string();
        }
        let own = toml_path(&self.path);
        let header =
            if self.path.ends_with(']') { format!("[[{own}]]") } else { format!("[{own}]") };
        let entry = if own == self.path { String::new() } else { format!(" ({})", self.path) };
        format!("up into {header}{entry}, above the header it is under")
    }

    /// Where `key` is written in a table one level down, if it is: that table's header
    /// as TOML writes it (`[bottleneck.qdisc]`, `[[flows]]`, `[flows.params]`), and the
    /// key's span.
    fn written_below(&self, key: &str) -> Option<(String, &'a Span)> {
        let in_table = |node: &'a Node| match &node.val {
            Val::Table(entries) => entries.iter().find(|(k, ..)| k == key).map(|(_, span, _)| span),
            _ => None,
        };
        self.entries.iter().find_map(|(name, _, node)| {
            let name = toml_path(&self.field(name));
            match &node.val {
                Val::Table(_) => in_table(node).map(|span| (format!("[{name}]"), span)),
                Val::Array(items) => {
                    items.iter().find_map(in_table).map(|span| (format!("[[{name}]]"), span))
                }
                _ => None,
            }
        })
    }

    pub fn string(&self, key: &str) -> Result<Option<(&'a Node, String)>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        Ok(Some((n, as_text(self.ctx, n, &self.field(key))?)))
    }

    /// A quantity written as a string with a unit; a bare number gets a message that
    /// shows the expected form (`rtt = 100` -> "a duration such as \"20ms\" ...").
    fn quantity(
        &self,
        key: &str,
        expected: &str,
    ) -> Result<Option<(&'a Node, String)>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        match as_text(self.ctx, n, &self.field(key)) {
            Ok(s) => Ok(Some((n, s))),
            Err(_) => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected {expected}, written as a quoted string; found {}", n.val.kind()),
            )),
        }
    }

    pub fn duration(&self, key: &str) -> Result<Option<Duration>, ScenarioError> {
        let Some((n, s)) = self.quantity(key, DURATION_FORM)? else { return Ok(None) };
        let d = parse_duration(&s)
            .map_err(|e| self.ctx.bad(n, &self.field(key), format!("expected {}", e.expected)))?;
        Ok(Some(d))
    }

    pub fn rate(&self, key: &str) -> Result<Option<Rate>, ScenarioError> {
        let Some((n, s)) = self.quantity(key, RATE_FORM)? else { return Ok(None) };
        let r = parse_rate(&s)
            .map_err(|e| self.ctx.bad(n, &self.field(key), format!("expected {}", e.expected)))?;
        Ok(Some(r))
    }

    pub fn bytes(&self, key: &str) -> Result<Option<u64>, ScenarioError> {
        let Some((n, s)) = self.quantity(key, SIZE_FORM)? else { return Ok(None) };
        let b = parse_bytes(&s)
            .map_err(|e| self.ctx.bad(n, &self.field(key), format!("expected {}", e.expected)))?;
        Ok(Some(b))
    }

    /// A whole number in `[min, max]`, for what only the scenario decides (a seed, a
    /// `count`).
    pub fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        let allowed = format!("a whole number in [{min}, {max}]");
        let v = self.whole(n, key, &allowed)?;
        if v < min || v > max {
            return Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("out of range; allowed: {allowed}"),
            ));
        }
        Ok(Some(v))
    }

    /// A whole number for a simulator field of type `u32`, saturated into it; the
    /// simulator's check then names the range (and the value as written), so a value
    /// that is not a whole number at all is told only that.
    pub fn whole_u32(&self, key: &str) -> Result<Option<u32>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        let v = self.whole(n, key, "a whole number")?;
        Ok(Some(v.clamp(0, u32::MAX as i64) as u32))
    }

    /// `n` as a whole number (2.0 counts as 2), or an error saying `expected`.
    fn whole(&self, n: &Node, key: &str, expected: &str) -> Result<i64, ScenarioError> {
        match &n.val {
            Val::Int(i) => Ok(*i),
            Val::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => Ok(*f as i64),
            other => {
                let found = match other {
                    Val::Float(f) if f.is_finite() && f.fract() != 0.0 => {
                        "a number with a fraction"
                    }
                    Val::Float(f) if f.is_finite() => "a number too large to be counted exactly",
                    _ => other.kind(),
                };
                Err(self.ctx.bad(
                    n,
                    &self.field(key),
                    format!("expected {expected}, found {found}"),
                ))
            }
        }
    }

    /// Any number (integer or not); `expected` says what is allowed, for a value that is
    /// not a number at all.
    pub fn number(&self, key: &str, expected: &str) -> Result<Option<f64>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        match &n.val {
            Val::Int(i) => Ok(Some(*i as f64)),
            Val::Float(f) => Ok(Some(*f)),
            other => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected {expected}, found {}", other.kind()),
            )),
        }
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        match &n.val {
            Val::Bool(b) => Ok(Some(*b)),
            other => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected true or false, found {}", other.kind()),
            )),
        }
    }

    /// An array of tables (`[[flows]]`), possibly absent.
    pub fn tables(&self, key: &str) -> Result<&'a [Node], ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(&[]) };
        match &n.val {
            Val::Array(items) => Ok(items),
            other => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected an array of tables ([[{key}]] sections), found {}", other.kind()),
            )),
        }
    }

    /// The simulator's error about what this table was read into, pointed at the line
    /// that wrote the value: the error's field (relative to the table, in the
    /// simulator's names; `renames` maps those that differ, e.g. `tcp.mss` to `mss`) is
    /// looked up in the table and its subtables. A value the file did not write (a
    /// default) is reported at its table, with the simulator's value; a plain value
    /// standing for a table (`loss = 0.01`) is reported as written.
    pub fn locate(&self, e: SimError, renames: &[(&str, &str)]) -> ScenarioError {
        let mut field = e.field.clone();
        let renamed = renames.iter().find(|(from, _)| {
            field == *from || field.strip_prefix(from).is_some_and(|r| r.starts_with('.'))
        });
        if let Some((from, to)) = renamed {
            field = format!("{to}{}", &field[from.len()..]);
        }
        let (mut node, mut path) = (self.node, self.path.clone());
        let keys: Vec<&str> = field.split('.').collect();
        for (i, key) in keys.iter().enumerate() {
            match (node.get(key), &node.val) {
                (Some(n), _) => {
                    node = n;
                    path = join(&path, key);
                }
                (None, Val::Table(_)) => {
                    let value = (!e.value.is_empty()).then_some(e.value);
                    let mut err = self.ctx.err(
                        &node.span,
                        &join(&path, &keys[i..].join(".")),
                        value,
                        e.message,
                    );
                    if path.is_empty() {
                        // A default at the top level: no line wrote it.
                        err.line = None;
                        err.from_override = false;
                    }
                    return err;
                }
                (None, _) => break,
            }
        }
        self.ctx.err(&node.span, &path, Some(node.show()), e.message)
    }
}

/// A string value; for `--set` overrides, also a number or boolean as typed.
pub(crate) fn as_text(ctx: &Ctx, n: &Node, field: &str) -> Result<String, ScenarioError> {
    match (&n.val, &n.raw) {
        (Val::Str(s), _) => Ok(s.clone()),
        (Val::Int(_) | Val::Float(_) | Val::Bool(_), Some(raw)) => Ok(raw.clone()),
        (other, _) => Err(ctx.bad(n, field, format!("expected a string, found {}", other.kind()))),
    }
}
