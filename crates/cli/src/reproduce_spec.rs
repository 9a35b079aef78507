//! The papers' reported values, as data: `scenarios/seeds/<id>.expected.toml`.
//!
//! ```toml
//! seed = "000"
//! title = "CUBIC-FIT (Wang et al., IEEE Commun. Lett. 2013)"
//! [quick]                                   # --quick: overrides per scenario file
//! "000-fairness.toml" = ["duration=20s", "sweep.seeds=1"]
//!
//! [[figure]]
//! id = "000-table1"
//! source = "Table I"                        # the paper's table or figure
//! page = "p. 3, Sec. IV"
//! setup = "what the paper states"
//! scenario = "000-fairness.toml"            # a sweep in the same folder
//! where = { "bottleneck.loss" = "0" }       # runs used: swept field = value
//! x = "flows[0].rtt"                        # optional: one item per value of this field
//! value = "fairness.jain"                   # a sweep.csv column ...
//! group = "cubic"                           # ... per-flow columns: of this group (or flow = name)
//! agg = "mean"                              # over those flows: mean, sum, min, max, jain or
//!                                           # min_max (smallest over largest)
//! scale = 1.0                               # multiplies the value (units)
//! rule = { kind = "absolute", agree = 0.02, roughly = 0.05 }
//! why = "why cclab differs, when it does"
//! plots = ["goodput.svg"]                   # result plots embedded for each series
//! [[figure.series]]
//! name = "CUBIC-FIT"
//! where = { "flows[0].cc" = "cubic-fit" }   # added to the figure's
//! paper = { "10ms" = 0.999, "50ms" = 0.999 }   # or one number without x
//! ```
//!
//! A claim the paper makes without a number is a series with `claim = ">="` (or `>`,
//! `<=`, `<`), `bound = 0.8` or `than = { where = {...}, value = ..., factor = 1 }` (the
//! same value under other conditions), `margin` (relative slack for "roughly") and
//! `paper_text`; `at = ["42ms", ...]` limits a series to those values of the figure's `x`
//! (a claim the paper makes for part of the axis only). A figure with `x` may list
//! `curves = [{ name = "CUBIC", where = { "flows[0].cc" = "cubic" } }, ...]`: its chart
//! then draws cclab's figure-level `value` for each curve at every x (the paper's lines),
//! whatever its claims compare. `x_axis = "RTT ratio"` with `x_at = { "82ms" = 1.98, ... }`
//! draws the chart against the paper's axis where it is a function of the swept field. A ratio the paper reports between two conditions is a series with
//! `divide_by = { where = {...}, flow = ... }`. A figure whose `paper` numbers the paper
//! does not print but that are worked out from what it says (a formula it describes, a
//! curve it draws without values), or converts from other units, says how in
//! `paper_derived = "..."`; its items are
//! shown and counted as derived, apart from the paper's own numbers. Figure-level fields are defaults that a
//! series may override.

use cclab_scenario::doc::{self, Node, Val};
use std::path::{Path, PathBuf};

/// One seed's expected values.
pub struct Expected {
    pub seed: String,
    pub title: String,
    /// Per scenario file, the `--set` overrides of `--quick`.
    pub quick: Vec<(String, Vec<String>)>,
    pub figures: Vec<Figure>,
}

pub struct Figure {
    pub id: String,
    pub source: String,
    pub page: String,
    pub setup: String,
    /// How the `paper` values were worked out, when the paper does not print them.
    pub paper_derived: Option<String>,
    pub scenario: String,
    pub x: Option<String>,
    pub y_label: String,
    pub plots: Vec<String>,
    pub series: Vec<Series>,
    /// The chart's cclab lines when they are not the series (see the module doc).
    pub curves: Vec<Curve>,
    pub x_axis: Option<PaperAxis>,
}

/// The paper's x axis: its name and the position of each swept x value on it.
pub struct PaperAxis {
    pub name: String,
    pub at: Vec<(String, f64)>,
}

/// One line of a figure's chart: the figure's value over the runs matching `select`.
pub struct Curve {
    pub name: String,
    pub select: Vec<(String, String)>,
    pub value: ValueSpec,
}

pub struct Series {
    pub name: String,
    pub select: Vec<(String, String)>,
    pub value: ValueSpec,
    /// `divide_by = { where = ..., flow = ... }`: cclab's value is the mean of this
    /// series' runs over the mean of those (a ratio the paper reports).
    pub divide_by: Option<Bound>,
    pub paper: Paper,
    pub rule: Rule,
    pub why: Option<String>,
    /// `at = [...]`: the values of the figure's `x` this series is judged at (all when
    /// `None`).
    pub at: Option<Vec<String>>,
}

/// Which number a set of runs gives.
#[derive(Clone)]
pub struct ValueSpec {
    pub column: String,
    pub flow: Option<String>,
    pub group: Option<String>,
    pub agg: Agg,
    pub scale: f64,
}

impl ValueSpec {
    /// What the value is, in sweep.csv's words, which carry its unit: "flow.goodput_bps
    /// of cubic#0 x 0.125" (bytes per second), "min/max of flow.goodput_bps".
    pub fn text(&self) -> String {
        let mut t = match self.agg {
            Agg::Mean => self.column.clone(),
            Agg::Sum => format!("sum of {}", self.column),
            Agg::Min => format!("min of {}", self.column),
            Agg::Max => format!("max of {}", self.column),
            Agg::Jain => format!("Jain's index of {}", self.column),
            Agg::MinMax => format!("min/max of {}", self.column),
        };
        for who in [&self.flow, &self.group].into_iter().flatten() {
            t.push_str(&format!(" of {who}"));
        }
        if self.scale != 1.0 {
            t.push_str(&format!(" x {}", self.scale));
        }
        t
    }

    /// [`ValueSpec::text`] of this value, divided by `by`'s where the series is a ratio.
    pub fn text_over(&self, by: Option<&Bound>) -> String {
        match by {
            Some(Bound::Other { value, .. }) => format!("{} / {}", self.text(), value.text()),
            _ => self.text(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Agg {
    Mean,
    Sum,
    Min,
    Max,
    Jain,
    /// The smallest over the largest (a throughput ratio between flows, at most 1).
    MinMax,
}

/// What the paper reports.
pub enum Paper {
    /// One number.
    Value(f64),
    /// A number per value of the figure's `x`.
    ByX(Vec<(String, f64)>),
    /// A statement without a number, checked by the series' claim rule.
    Claim(String),
}

#[derive(Clone)]
pub enum Rule {
    Absolute { agree: f64, roughly: f64 },
    Relative { agree: f64, roughly: f64 },
    Claim { op: Op, bound: Bound, margin: f64 },
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Op {
    Ge,
    Gt,
    Le,
    Lt,
}

#[derive(Clone)]
pub enum Bound {
    Number(f64),
    /// The same kind of value for other runs, times `factor`.
    Other {
        select: Vec<(String, String)>,
        value: ValueSpec,
        factor: f64,
    },
}

impl Op {
    pub fn text(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Lt => "<",
        }
    }

    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Ge => a >= b,
            Op::Gt => a > b,
            Op::Le => a <= b,
            Op::Lt => a < b,
        }
    }
}

/// Reads every `*.expected.toml` in `dir` whose seed is in `ids` (all when empty).
pub fn load_all(dir: &Path, ids: &[String]) -> Result<Vec<Expected>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".expected.toml")))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "--seeds {}: the folder holds no <id>.expected.toml, so there is nothing to reproduce (the seeds' folder is scenarios/seeds)",
            dir.display()
        ));
    }
    let mut out = Vec::new();
    let mut known = Vec::new();
    for f in files {
        let e = load(&f)?;
        known.push(e.seed.clone());
        if ids.is_empty() || ids.contains(&e.seed) {
            out.push(e);
        }
    }
    for id in ids {
        if !out.iter().any(|e| &e.seed == id) {
            known.sort();
            known.dedup();
            return Err(format!(
                "no expected values for seed {id:?} in {} (files <id>.expected.toml with seed = \"{id}\"); allowed: {}",
                dir.display(),
                if known.is_empty() { "none, the folder has no such file".to_string() } else { known.join(", ") }
            ));
        }
    }
    Ok(out)
}

/// The keys of each table of an expected file (see [`Reader::only`]).
mod keys {
    pub const ROOT: &[&str] = &["seed", "title", "quick", "figure"];
    /// What a value is read from ([`super::Reader::value`]).
    pub const VALUE: &[&str] = &["value", "agg", "scale", "flow", "group", "where"];
    /// The paper's value and the rule that judges cclab's against it.
    pub const JUDGED: &[&str] =
        &["rule", "claim", "bound", "than", "margin", "paper", "paper_text", "why", "divide_by"];
    pub const FIGURE: &[&str] = &[
        "id",
        "source",
        "page",
        "setup",
        "paper_derived",
        "scenario",
        "x",
        "y_label",
        "plots",
        "series",
        "curves",
        "x_axis",
        "x_at",
    ];
    pub const SERIES: &[&str] = &["name", "at"];
    pub const RULE: &[&str] = &["kind", "agree", "roughly"];
    pub const THAN: &[&str] = &["factor"];
    pub const CURVE: &[&str] = &["name", "where"];
}

/// A reader of one expected file: errors name the file, the line and the key.
struct Reader<'a> {
    file: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn err(&self, n: &Node, what: &str) -> String {
        let line = n.span.as_ref().map(|s| doc::line_of(self.text, s.start));
        match line {
            Some(l) => format!("{}:{l}: {what}", self.file),
            None => format!("{}: {what}", self.file),
        }
    }

    /// Refuses a key of table `t` (a `what`) that is not `allowed`: a misspelt key
    /// (`margni`) would otherwise be ignored and its default taken, changing verdicts
    /// without a word.
    fn only(&self, t: &Node, what: &str, allowed: &[&[&str]]) -> Result<(), String> {
        let Val::Table(entries) = &t.val else { return Ok(()) };
        let known = |k: &str| allowed.iter().any(|keys| keys.contains(&k));
        match entries.iter().find(|(k, _, _)| !known(k)) {
            None => Ok(()),
            Some((k, _, v)) => Err(self.err(
                v,
                &format!("{what} has no key {k:?}; allowed: {}", allowed.concat().join(", ")),
            )),
        }
    }

    fn str(&self, t: &Node, key: &str) -> Result<Option<String>, String> {
        match t.get(key) {
            None => Ok(None),
            Some(Node { val: Val::Str(s), .. }) => Ok(Some(s.clone())),
            Some(n) => Err(self.err(n, &format!("{key} must be a string, found {}", n.val.kind()))),
        }
    }

    fn need_str(&self, t: &Node, key: &str) -> Result<String, String> {
        self.str(t, key)?.ok_or_else(|| self.err(t, &format!("missing {key}")))
    }

    fn num(&self, n: &Node, what: &str) -> Result<f64, String> {
        match n.val {
            Val::Int(i) => Ok(i as f64),
            Val::Float(x) if x.is_finite() => Ok(x),
            Val::Float(x) => Err(self.err(n, &format!("{what} = {x}; allowed: a finite number"))),
            _ => Err(self.err(n, &format!("{what} must be a number, found {}", n.val.kind()))),
        }
    }

    /// A number above zero (a scale) or at least zero (a tolerance).
    fn positive(&self, n: &Node, what: &str, zero_allowed: bool) -> Result<f64, String> {
        let x = self.num(n, what)?;
        if x > 0.0 || (zero_allowed && x == 0.0) {
            return Ok(x);
        }
        let allowed = if zero_allowed { "a number of 0 or more" } else { "a number above 0" };
        Err(self.err(n, &format!("{what} = {x}; allowed: {allowed}")))
    }

    /// `where = { field = value }`: values as the sweep labels them (strings as written,
    /// numbers in TOML form).
    fn select(&self, t: &Node) -> Result<Vec<(String, String)>, String> {
        match t.get("where") {
            None => Ok(Vec::new()),
            Some(Node { val: Val::Table(entries), .. }) => Ok(entries
                .iter()
                .map(|(k, _, v)| {
                    let label = match &v.val {
                        Val::Str(s) => s.clone(),
                        _ => v.show(),
                    };
                    (k.clone(), label)
                })
                .collect()),
            Some(n) => Err(self.err(n, "where must be a table of field = value")),
        }
    }

    fn value(&self, t: &Node, base: Option<&ValueSpec>) -> Result<ValueSpec, String> {
        let column = match (self.str(t, "value")?, base) {
            (Some(c), _) => c,
            (None, Some(b)) => b.column.clone(),
            (None, None) => return Err(self.err(t, "missing value (a sweep.csv column)")),
        };
        let agg = match self.str(t, "agg")?.as_deref() {
            None => base.map_or(Agg::Mean, |b| b.agg),
            Some("mean") => Agg::Mean,
            Some("sum") => Agg::Sum,
            Some("min") => Agg::Min,
            Some("max") => Agg::Max,
            Some("jain") => Agg::Jain,
            Some("min_max") => Agg::MinMax,
            Some(other) => {
                return Err(self.err(
                    t,
                    &format!("agg = {other:?}; allowed: mean, sum, min, max, jain, min_max"),
                ))
            }
        };
        let scale = match t.get("scale") {
            Some(n) => self.positive(n, "scale", false)?,
            None => base.map_or(1.0, |b| b.scale),
        };
        Ok(ValueSpec {
            column,
            flow: self.str(t, "flow")?.or_else(|| base.and_then(|b| b.flow.clone())),
            group: self.str(t, "group")?.or_else(|| base.and_then(|b| b.group.clone())),
            agg,
            scale,
        })
    }

    fn rule(
        &self,
        t: &Node,
        base: Option<&Rule>,
        spec: &ValueSpec,
    ) -> Result<Option<Rule>, String> {
        if let Some(op) = self.str(t, "claim")? {
            let op = match op.as_str() {
                ">=" => Op::Ge,
                ">" => Op::Gt,
                "<=" => Op::Le,
                "<" => Op::Lt,
                _ => return Err(self.err(t, &format!("claim = {op:?}; allowed: >=, >, <=, <"))),
            };
            let bound = match (t.get("bound"), t.get("than")) {
                (Some(b), None) => Bound::Number(self.num(b, "bound")?),
                (None, Some(than)) => {
                    self.only(than, "than", &[keys::VALUE, keys::THAN])?;
                    let factor = than
                        .get("factor")
                        .map(|f| self.positive(f, "factor", false))
                        .transpose()?;
                    Bound::Other {
                        select: self.select(than)?,
                        value: self.value(than, Some(spec))?,
                        factor: factor.unwrap_or(1.0),
                    }
                }
                _ => {
                    return Err(
                        self.err(t, "a claim needs bound = number or than = { where = ... }")
                    )
                }
            };
            let margin = t
                .get("margin")
                .map(|m| self.positive(m, "margin", true))
                .transpose()?
                .unwrap_or(0.1);
            return Ok(Some(Rule::Claim { op, bound, margin }));
        }
        let Some(r) = t.get("rule") else { return Ok(base.cloned()) };
        self.only(r, "rule", &[keys::RULE])?;
        let kind = self.need_str(r, "kind")?;
        let get = |k: &str| {
            r.get(k)
                .ok_or_else(|| self.err(r, &format!("rule needs {k}")))
                .and_then(|n| self.positive(n, k, true))
        };
        let (agree, roughly) = (get("agree")?, get("roughly")?);
        if agree > roughly {
            let msg = format!("rule agree = {agree} is wider than roughly = {roughly}; allowed: agree at most roughly (\"roughly\" is the wider band)");
            return Err(self.err(r, &msg));
        }
        match kind.as_str() {
            "absolute" => Ok(Some(Rule::Absolute { agree, roughly })),
            "relative" => Ok(Some(Rule::Relative { agree, roughly })),
            _ => Err(self.err(r, &format!("rule kind = {kind:?}; allowed: absolute, relative"))),
        }
    }

    /// `at = ["42ms", ...]`: x values as the sweep labels them; only with the figure's `x`.
    fn at(&self, s: &Node, f: &Node) -> Result<Option<Vec<String>>, String> {
        let Some(n) = s.get("at") else { return Ok(None) };
        if f.get("x").is_none() {
            return Err(self.err(n, "at limits a series to values of x; the figure has no x"));
        }
        let Val::Array(items) = &n.val else {
            return Err(self.err(n, "at must be a list of x values such as [\"42ms\", \"82ms\"]"));
        };
        let label = |i: &Node| match &i.val {
            Val::Str(s) => s.clone(),
            _ => i.show(),
        };
        Ok(Some(items.iter().map(label).collect()))
    }

    /// `curves = [{ name, where }, ...]`, each drawn with the figure's `value` from the
    /// runs that match the figure's `where` (`base_select`) and its own.
    fn curves(
        &self,
        f: &Node,
        base_select: &[(String, String)],
        value: Option<&ValueSpec>,
    ) -> Result<Vec<Curve>, String> {
        let Some(n) = f.get("curves") else { return Ok(Vec::new()) };
        let Val::Array(items) = &n.val else {
            return Err(self.err(n, "curves must be a list of { name = ..., where = {...} }"));
        };
        let (Some(value), Some(_)) = (value, f.get("x")) else {
            return Err(self.err(n, "curves need the figure's x and value"));
        };
        items
            .iter()
            .map(|c| {
                self.only(c, "a curve", &[keys::CURVE])?;
                let mut select = base_select.to_vec();
                select.extend(self.select(c)?);
                Ok(Curve { name: self.need_str(c, "name")?, select, value: value.clone() })
            })
            .collect()
    }

    /// `x_axis = "name"` with `x_at = { x value = position }`: the paper's x axis.
    fn x_axis(&self, f: &Node) -> Result<Option<PaperAxis>, String> {
        match (self.str(f, "x_axis")?, f.get("x_at")) {
            (None, None) => Ok(None),
            (Some(name), Some(Node { val: Val::Table(entries), .. })) => {
                let at = entries.iter().map(|(k, _, v)| Ok((k.clone(), self.num(v, "x_at")?)));
                Ok(Some(PaperAxis { name, at: at.collect::<Result<_, String>>()? }))
            }
            _ => {
                Err(self.err(f, "x_axis = \"name\" and x_at = { x value = position } go together"))
            }
        }
    }

    fn paper(&self, t: &Node) -> Result<Option<Paper>, String> {
        if let Some(text) = self.str(t, "paper_text")? {
            if t.get("claim").is_some() {
                return Ok(Some(Paper::Claim(text)));
            }
        }
        match t.get("paper") {
            None => Ok(None),
            Some(Node { val: Val::Table(entries), .. }) => Ok(Some(Paper::ByX(
                entries
                    .iter()
                    .map(|(k, _, v)| Ok((k.clone(), self.num(v, "paper")?)))
                    .collect::<Result<_, String>>()?,
            ))),
            Some(n) => Ok(Some(Paper::Value(self.num(n, "paper")?))),
        }
    }
}

fn load(path: &Path) -> Result<Expected, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file = path.display().to_string();
    let root = doc::parse(&text).map_err(|(m, _)| format!("{file}: TOML syntax error: {m}"))?;
    let r = Reader { file: &file, text: &text };
    r.only(&root, "the file", &[keys::ROOT])?;
    let mut quick = Vec::new();
    if let Some(Node { val: Val::Table(entries), .. }) = root.get("quick") {
        for (k, _, v) in entries {
            let Val::Array(items) = &v.val else {
                return Err(r.err(v, "quick values must be lists of FIELD=VALUE"));
            };
            let sets = items.iter().map(|i| match &i.val {
                Val::Str(s) => Ok(s.clone()),
                _ => Err(r.err(i, "each quick override is a string FIELD=VALUE")),
            });
            quick.push((k.clone(), sets.collect::<Result<_, _>>()?));
        }
    }
    let mut figures = Vec::new();
    if let Some(Node { val: Val::Array(list), .. }) = root.get("figure") {
        for f in list {
            figures.push(figure(&r, f)?);
        }
    }
    Ok(Expected {
        seed: r.need_str(&root, "seed")?,
        title: r.need_str(&root, "title")?,
        quick,
        figures,
    })
}

fn figure(r: &Reader, f: &Node) -> Result<Figure, String> {
    r.only(f, "a [[figure]]", &[keys::FIGURE, keys::VALUE, keys::JUDGED])?;
    let base_select = r.select(f)?;
    // The figure's value, which its series take unless they name their own; an error in
    // it (a bad agg or scale) is the figure's, not a missing value in every series.
    let base_value = f.get("value").map(|_| r.value(f, None)).transpose()?;
    // Without a value of its own the figure's agg, scale, flow or group would apply to
    // nothing, silently.
    if let (None, Some(n)) =
        (&base_value, ["agg", "scale", "flow", "group"].iter().find_map(|k| f.get(k)))
    {
        return Err(r.err(n, "a figure's agg, scale, flow and group shape its value; give the figure a value too, or move them into its series"));
    }
    let base_rule = r.rule(
        f,
        None,
        base_value.as_ref().unwrap_or(&ValueSpec {
            column: String::new(),
            flow: None,
            group: None,
            agg: Agg::Mean,
            scale: 1.0,
        }),
    )?;
    let mut series = Vec::new();
    let list = match f.get("series") {
        Some(Node { val: Val::Array(l), .. }) => l.clone(),
        _ => vec![Node::table()],
    };
    for s in &list {
        r.only(s, "a [[figure.series]]", &[keys::SERIES, keys::VALUE, keys::JUDGED])?;
        let value = r.value(s, base_value.as_ref())?;
        let rule = r
            .rule(s, base_rule.as_ref(), &value)?
            .ok_or_else(|| r.err(s, "no rule (rule = {...} or claim = ...)"))?;
        let paper =
            match (r.paper(s)?, r.paper(f)?) {
                (Some(p), _) | (None, Some(p)) => p,
                (None, None) => match r.str(s, "paper_text")?.or(r.str(f, "paper_text")?) {
                    Some(t) if matches!(rule, Rule::Claim { .. }) => Paper::Claim(t),
                    _ => return Err(r.err(
                        s,
                        "no paper value (paper = number, a table by x, or paper_text with a claim)",
                    )),
                },
            };
        let mut select = base_select.clone();
        select.extend(r.select(s)?);
        let divide_by = match s.get("divide_by").or(f.get("divide_by")) {
            Some(d) => {
                r.only(d, "divide_by", &[keys::VALUE])?;
                let value = r.value(d, Some(&value))?;
                Some(Bound::Other { select: r.select(d)?, value, factor: 1.0 })
            }
            None => None,
        };
        series.push(Series {
            name: r.str(s, "name")?.unwrap_or_default(),
            select,
            value,
            divide_by,
            paper,
            rule,
            why: r.str(s, "why")?.or(r.str(f, "why")?),
            at: r.at(s, f)?,
        });
    }
    let plots = match f.get("plots") {
        Some(Node { val: Val::Array(items), .. }) => items
            .iter()
            .map(|i| match &i.val {
                Val::Str(s) => Ok(s.clone()),
                _ => Err(r.err(i, "plots are file names such as \"goodput.svg\"")),
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let curves = r.curves(f, &base_select, base_value.as_ref())?;
    let x_axis = r.x_axis(f)?;
    Ok(Figure {
        id: r.need_str(f, "id")?,
        source: r.need_str(f, "source")?,
        page: r.need_str(f, "page")?,
        setup: r.need_str(f, "setup")?,
        paper_derived: r.str(f, "paper_derived")?,
        scenario: r.need_str(f, "scenario")?,
        x: r.str(f, "x")?,
        y_label: r.str(f, "y_label")?.unwrap_or_default(),
        plots,
        series,
        curves,
        x_axis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_keep_the_figures_where() {
        let text = r#"
seed = "900"
title = "test"
[[figure]]
id = "900-a"
source = "Fig. 1"
page = "p. 1"
setup = "s"
scenario = "900.toml"
where = { "flows[0].rtt" = "10ms" }
x = "bottleneck.rate"
value = "flow.goodput_bps"
curves = [{ name = "CUBIC", where = { "flows[0].cc" = "cubic" } }]
[[figure.series]]
claim = ">="
bound = 0.8
paper_text = "claim"
"#;
        let path = std::env::temp_dir().join(format!("cclab-spec-{}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let e = load(&path);
        std::fs::remove_file(&path).unwrap();
        let f = &e.unwrap().figures[0];
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let want = vec![pair("flows[0].rtt", "10ms"), pair("flows[0].cc", "cubic")];
        assert_eq!(f.curves[0].select, want);
        assert_eq!(f.series[0].select, want[..1]);
    }

    /// A misspelt key would leave its default in force (a claim's margin of 0.1 for the
    /// 0.25 meant), changing verdicts without a word: each table's keys are checked.
    #[test]
    fn a_misspelt_key_is_refused_where_it_is() {
        let good = r#"seed = "901"
title = "test"
[[figure]]
id = "901-a"
source = "Fig. 1"
page = "p. 1"
setup = "s"
scenario = "901.toml"
value = "link.utilization"
[[figure.series]]
claim = ">="
bound = 0.8
margin = 0.25
paper_text = "claim"
[[figure.series]]
paper = 0.9
rule = { kind = "relative", agree = 0.1, roughly = 0.2 }
"#;
        let path =
            std::env::temp_dir().join(format!("cclab-spec-keys-{}.toml", std::process::id()));
        let load_text = |text: &str| {
            std::fs::write(&path, text).unwrap();
            load(&path)
        };
        assert!(load_text(good).is_ok(), "{:?}", load_text(good).err());
        for (from, to, line, what) in [
            ("margin = 0.25", "margni = 0.25", 13, "a [[figure.series]] has no key \"margni\""),
            ("roughly = 0.2", "rougly = 0.2", 17, "rule has no key \"rougly\""),
            ("setup = \"s\"", "setpu = \"s\"", 7, "a [[figure]] has no key \"setpu\""),
            ("title = \"test\"", "titel = \"test\"", 2, "the file has no key \"titel\""),
        ] {
            let Err(err) = load_text(&good.replace(from, to)) else { panic!("{to} taken") };
            assert!(err.contains(&format!(":{line}: {what}; allowed: ")), "{err}");
        }
        // Values that would judge nothing sensibly: a paper value that is no number, a
        // tolerance narrower for "roughly" than for "agrees", a negative scale or margin.
        for (from, to, want) in [
            ("paper = 0.9", "paper = nan", ":16: paper = NaN; allowed: a finite number"),
            (
                "agree = 0.1, roughly = 0.2",
                "agree = 0.9, roughly = 0.2",
                ":17: rule agree = 0.9 is wider than roughly = 0.2",
            ),
            ("agree = 0.1", "agree = -0.1", ":17: agree = -0.1; allowed: a number of 0 or more"),
            ("margin = 0.25", "margin = -1", ":13: margin = -1; allowed: a number of 0 or more"),
            (
                "value = \"link.utilization\"",
                "value = \"link.utilization\"\nscale = -1",
                ":10: scale = -1; allowed: a number above 0",
            ),
            (
                "value = \"link.utilization\"",
                "agg = \"max\"",
                ":9: a figure's agg, scale, flow and group shape its value",
            ),
        ] {
            let Err(err) = load_text(&good.replace(from, to)) else { panic!("{to} taken") };
            assert!(err.contains(want), "{to}: {err}");
        }
        let _ = std::fs::remove_file(&path);
    }
}
