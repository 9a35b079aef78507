//! The table of a sweep: one row per run and flow, made from each run's `summary.json`
//! (so runs done by an earlier, interrupted invocation count the same as new ones), and
//! written as `sweep.csv` and `sweep.parquet`.
//!
//! Columns: `run`, `point`, `seed`, one per swept field, then every run-level summary
//! value flattened with dotted names (`link.utilization`, `fairness.jain`, ...), then
//! every per-flow value prefixed `flow.` (`flow.id`, `flow.goodput_bps`,
//! `flow.rtt_ms.p99`, ...). Numbers keep the exact text of summary.json, so the same
//! sweep gives the same bytes.

use cclab_scenario::sweep::{Plan, Run};
use std::path::Path;

/// One cell: a number as summary.json wrote it, a string, or nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Num(String),
    Text(String),
    Empty,
}

impl Cell {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Num(s) => s.parse().ok(),
            _ => None,
        }
    }
}

/// The whole table: column names and rows of cells (a missing key is [`Cell::Empty`]).
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// How many leading columns identify the run (run, point, seed, swept fields).
    pub key_columns: usize,
    /// Index of the first per-flow column.
    pub first_flow_column: usize,
}

/// Reads the summary.json of every run in `done` (run indices) from `points_dir`.
pub fn build(plan: &Plan, points_dir: &Path, done: &[usize]) -> Result<Table, String> {
    let swept: Vec<String> = plan.axes.iter().flat_map(|a| a.fields.clone()).collect();
    let mut run_cols: Vec<String> = Vec::new();
    let mut flow_cols: Vec<String> = Vec::new();
    let mut parsed = Vec::new();
    for &k in done {
        let path = points_dir.join(k.to_string()).join("summary.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let json = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let (run_vals, flows) = split_summary(&json);
        for (c, _) in &run_vals {
            if !run_cols.contains(c) {
                run_cols.push(c.clone());
            }
        }
        for f in &flows {
            for (c, _) in f {
                if !flow_cols.contains(c) {
                    flow_cols.push(c.clone());
                }
            }
        }
        parsed.push((&plan.runs[k], run_vals, flows));
    }
    let mut columns: Vec<String> = ["run", "point", "seed"].map(String::from).to_vec();
    columns.extend(swept);
    let key_columns = columns.len();
    columns.extend(run_cols.iter().cloned());
    let first_flow_column = columns.len();
    columns.extend(flow_cols.iter().cloned());
    let mut rows = Vec::new();
    for (run, run_vals, flows) in parsed {
        let key = key_cells(plan, run);
        let run_cells: Vec<Cell> = run_cols.iter().map(|c| lookup(&run_vals, c)).collect();
        for f in &flows {
            let mut row = key.clone();
            row.extend(run_cells.iter().cloned());
            row.extend(flow_cols.iter().map(|c| lookup(f, c)));
            rows.push(row);
        }
    }
    let mut table = Table { columns, rows, key_columns, first_flow_column };
    add_stolen_rate(plan, &mut table);
    Ok(table)
}

/// Adds the run-level column `bandwidth_stolen_rate` when the sweep can give it: a key
/// `flows[i].cc` one of whose values is the `[metrics] reference` group. For each run,
/// the baseline is the run with that key at the reference algorithm and every other
/// swept value and the seed the same; with T0 the reference group's mean goodput in the
/// baseline and T' the same in this run, the rate is (T0 - T') / T0 (CUBIC-FIT's
/// definition, seed `000_…`; 0 in the baseline itself).
fn add_stolen_rate(plan: &Plan, table: &mut Table) {
    use cclab_scenario::metrics_spec::Reference;
    let Some(Reference::Group(group)) =
        plan.runs.first().and_then(|r| r.scenario.metrics.reference.clone())
    else {
        return;
    };
    let is_cc_key = |f: &str| f.starts_with("flows[") && f.ends_with("].cc");
    let found = plan.axes.iter().enumerate().find_map(|(i, a)| {
        let v = a.labels.iter().position(|l| l[0] == group)?;
        (a.fields.len() == 1 && is_cc_key(&a.fields[0])).then_some((i, v))
    });
    let (Some((axis, base_value)), Some(g_col), Some(gp_col)) = (
        found,
        table.columns.iter().position(|c| c == "flow.group"),
        table.columns.iter().position(|c| c == "flow.goodput_bps"),
    ) else {
        return;
    };
    // The reference group's mean goodput in each run present.
    let mut sums: std::collections::BTreeMap<usize, (f64, usize)> = Default::default();
    for row in &table.rows {
        if row[g_col] == Cell::Text(group.clone()) {
            if let (Some(run), Some(g)) = (row[0].as_f64(), row[gp_col].as_f64()) {
                let e = sums.entry(run as usize).or_default();
                *e = (e.0 + g, e.1 + 1);
            }
        }
    }
    let mean_of = |k: usize| sums.get(&k).map(|(s, n)| s / *n as f64);
    let rate_of = |run: &Run| -> Cell {
        let mut choice = run.choice.clone();
        choice[axis] = base_value;
        let base = plan.runs.iter().find(|b| b.choice == choice && b.seed == run.seed);
        match (base.and_then(|b| mean_of(b.index)), mean_of(run.index)) {
            (Some(t0), Some(t)) => cclab_scenario::metrics::bandwidth_stolen_rate(t0, t)
                .map_or(Cell::Empty, |x| Cell::Num(crate::format::num(x, 6))),
            _ => Cell::Empty,
        }
    };
    let at = table.first_flow_column;
    for row in &mut table.rows {
        let cell = row[0].as_f64().map_or(Cell::Empty, |k| rate_of(&plan.runs[k as usize]));
        row.insert(at, cell);
    }
    table.columns.insert(at, "bandwidth_stolen_rate".to_string());
    table.first_flow_column += 1;
}

fn key_cells(plan: &Plan, run: &Run) -> Vec<Cell> {
    let mut row = vec![
        Cell::Num(run.index.to_string()),
        Cell::Num(run.point.to_string()),
        Cell::Num(run.seed.to_string()),
    ];
    row.extend(plan.values_of(run).into_iter().map(|(_, v)| Cell::Text(v.to_string())));
    row
}

fn lookup(values: &[(String, Cell)], column: &str) -> Cell {
    values.iter().find(|(c, _)| c == column).map(|(_, v)| v.clone()).unwrap_or(Cell::Empty)
}

type Flat = Vec<(String, Cell)>;

/// Run-level values (everything but `scenario`, `seed` and `flows`) and each flow's values.
fn split_summary(json: &JVal) -> (Flat, Vec<Flat>) {
    let mut run = Vec::new();
    let mut flows = Vec::new();
    if let JVal::Obj(items) = json {
        for (k, v) in items {
            match (k.as_str(), v) {
                ("scenario" | "seed", _) => {}
                // Per source, eight figures each (up to 100 sources): they stay in each
                // point's summary.json, where `cross[i]` is the i-th source after `count`
                // is expanded, not the scenario's i-th `[[cross]]` table a sweep can set.
                // Their totals per direction, `cross_load`, are run-level columns.
                ("cross", _) => {}
                ("flows", JVal::Arr(list)) => {
                    for f in list {
                        let mut cells = Vec::new();
                        flatten(f, "flow", &mut cells);
                        flows.push(cells);
                    }
                }
                _ => flatten(v, k, &mut run),
            }
        }
    }
    (run, flows)
}

fn flatten(v: &JVal, name: &str, out: &mut Flat) {
    match v {
        JVal::Obj(items) => {
            for (k, x) in items {
                flatten(x, &format!("{name}.{k}"), out);
            }
        }
        JVal::Arr(items) => {
            for (i, x) in items.iter().enumerate() {
                flatten(x, &format!("{name}[{i}]"), out);
            }
        }
        JVal::Num(s) => out.push((name.to_string(), Cell::Num(s.clone()))),
        JVal::Str(s) => out.push((name.to_string(), Cell::Text(s.clone()))),
        JVal::Bool(b) => out.push((name.to_string(), Cell::Text(b.to_string()))),
        JVal::Null => out.push((name.to_string(), Cell::Empty)),
    }
}

impl Table {
    /// sweep.csv: a header and one line per row; text is quoted when it holds a comma,
    /// a quote or a line break.
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>, out: &mut String| {
            out.push_str(&cells.join(","));
            out.push('\n');
        };
        line(self.columns.iter().map(|c| csv_field(c)).collect(), &mut out);
        for row in &self.rows {
            let cells = row
                .iter()
                .map(|c| match c {
                    Cell::Num(s) => s.clone(),
                    Cell::Text(s) => csv_field(s),
                    Cell::Empty => String::new(),
                })
                .collect();
            line(cells, &mut out);
        }
        out
    }

    /// The values of column `c` as numbers (None where not a number).
    pub fn numbers(&self, c: usize) -> Vec<Option<f64>> {
        self.rows.iter().map(|r| r[c].as_f64()).collect()
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A JSON value that keeps object order and each number's text.
#[derive(Debug, PartialEq)]
pub enum JVal {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<JVal>),
    Obj(Vec<(String, JVal)>),
}

/// Parses JSON text (RFC 8259) into a [`JVal`].
pub fn parse(text: &str) -> Result<JVal, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text after the JSON value at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("not valid JSON: {what} at byte {}", self.i))
    }

    fn value(&mut self, depth: usize) -> Result<JVal, String> {
        if depth > 64 {
            return self.fail("nesting too deep");
        }
        self.ws();
        match self.s.get(self.i) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(JVal::Str),
            Some(b't') => self.word("true", JVal::Bool(true)),
            Some(b'f') => self.word("false", JVal::Bool(false)),
            Some(b'n') => self.word("null", JVal::Null),
            Some(c) if *c == b'-' || c.is_ascii_digit() => Ok(self.number()),
            _ => self.fail("expected a value"),
        }
    }

    fn word(&mut self, w: &str, v: JVal) -> Result<JVal, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            self.fail("expected true, false or null")
        }
    }

    fn number(&mut self) -> JVal {
        let start = self.i;
        while self.i < self.s.len() && b"+-.eE0123456789".contains(&self.s[self.i]) {
            self.i += 1;
        }
        JVal::Num(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let Some(&c) = self.s.get(self.i) else { return self.fail("unterminated string") };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else { return self.fail("bad escape") };
                    self.i += 1;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'r' => out.push('\r'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).unwrap_or_default();
                            let code = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            self.i += 4;
                            out.push(code.and_then(char::from_u32).unwrap_or('\u{fffd}'));
                        }
                        other => out.push(other as char),
                    }
                }
                _ => {
                    // Copy a run of plain bytes at once (keeps multi-byte UTF-8 intact).
                    let start = self.i - 1;
                    while self.i < self.s.len() && !b"\"\\".contains(&self.s[self.i]) {
                        self.i += 1;
                    }
                    out.push_str(&String::from_utf8_lossy(&self.s[start..self.i]));
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<JVal, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(JVal::Arr(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(JVal::Arr(items));
                }
                _ => return self.fail("expected , or ]"),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<JVal, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(JVal::Obj(items));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return self.fail("expected a key");
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return self.fail("expected :");
            }
            self.i += 1;
            items.push((k, self.value(depth + 1)?));
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(JVal::Obj(items));
                }
                _ => return self.fail("expected , or }"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_order_and_number_text() {
        let v = parse(r#"{"b": 1.50, "a": [true, null, "x\"y\u00e9"], "c": {}}"#).unwrap();
        assert_eq!(
            v,
            JVal::Obj(vec![
                ("b".into(), JVal::Num("1.50".into())),
                (
                    "a".into(),
                    JVal::Arr(vec![JVal::Bool(true), JVal::Null, JVal::Str("x\"yé".into())])
                ),
                ("c".into(), JVal::Obj(vec![])),
            ])
        );
        for bad in ["{", "[1,]", "{\"a\" 1}", "\"abc", "1 2", "nul"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn summaries_split_into_run_and_flow_values() {
        let v = parse(
            r#"{"scenario": "s", "seed": 3, "link": {"utilization": 0.9},
               "flows": [{"id": 0, "rtt_ms": {"p50": 10}}, {"id": 1, "rtt_ms": {"p50": 12}}],
               "fairness": {"jain": 0.99}}"#,
        )
        .unwrap();
        let (run, flows) = split_summary(&v);
        let names: Vec<&str> = run.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, ["link.utilization", "fairness.jain"]);
        assert_eq!(flows.len(), 2);
        assert_eq!(flows[1][1], ("flow.rtt_ms.p50".to_string(), Cell::Num("12".into())));
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
