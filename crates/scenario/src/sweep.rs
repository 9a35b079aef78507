//! Parameter sweeps: a `[sweep]` table turns one scenario file into many runs.
//!
//! ```toml
//! [sweep]
//! "flows[0].rtt" = ["10ms", "50ms", "100ms"]          # one axis: a field and its values
//! "flows[0].cc" = ["cubic-fit", "cubic", "reno"]       # another axis
//! "flows[0].rtt, flows[1].rtt" = [["10ms", "20ms"], "50ms"]   # tied fields (below)
//! seeds = 5                 # each point runs with seed, seed+1, ..., seed+4
//! ```
//!
//! Each key is a field path exactly as `--set` takes it, and its value is the list of
//! values that field takes. A key may name several fields separated by commas: they are
//! *tied* and move together, so each entry of the list is either a tuple with one value
//! per field (`["10ms", "20ms"]`) or a single value given to all of them (`"50ms"`).
//! Dotted keys written without quotes (`bottleneck.loss = [0, 0.01]`, or a
//! `[sweep.bottleneck]` sub-table) mean the same path.
//!
//! The points are the cartesian product of the axes in file order, the first axis
//! varying slowest; each point runs `seeds` times. Every point is built and validated
//! here, before anything runs: an error names the file and the line of the swept key
//! or value, the field, the value and what is allowed, and says which point it was.
//!
//! `--set` overrides apply to the document first (so `--set sweep.seeds=1` works); the
//! swept values then overwrite the fields they name.

use crate::doc::{self, Node, Span, Step, Val};
use crate::schema::{self, Ctx};
use crate::{Scenario, ScenarioError};
use cclab_sim::config::LinkRate;

/// Most runs (points x seeds) a sweep may have.
pub const MAX_RUNS: u64 = 100_000;
/// Most repetitions of one point.
pub const MAX_SEEDS: i64 = 10_000;

/// A sweep, expanded and validated.
#[derive(Debug)]
pub struct Plan {
    /// The scenario's name (the base file's `name` or stem).
    pub name: String,
    pub axes: Vec<Axis>,
    /// Repetitions of each point, with seeds `first_seed`, `first_seed + 1`, ...
    pub seeds: u64,
    pub first_seed: u64,
    /// Every run in order: point 0 with each seed, then point 1, ...
    pub runs: Vec<Run>,
}

/// One key of `[sweep]`: the fields it sets (several when tied) and the values.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The key's fields, comma-separated (`flows[0].rtt` or `flows[0].rtt, flows[1].rtt`).
    pub key: String,
    /// How `--set` reaches the key (`sweep."flows[0].cc"`, `sweep.bottleneck.loss`).
    pub set_path: String,
    /// The field paths, one per tied field.
    pub fields: Vec<String>,
    /// `labels[v][f]`: value `v` of field `f` as text (strings without quotes).
    pub labels: Vec<Vec<String>>,
    paths: Vec<Vec<Step>>,
    values: Vec<Vec<Node>>,
}

/// One simulation of the sweep: a point and one of its seeds.
#[derive(Clone, Debug)]
pub struct Run {
    /// Position in [`Plan::runs`]; names the run's results folder.
    pub index: usize,
    /// Which combination of values (0-based, same for every seed of a point).
    pub point: usize,
    pub seed: u64,
    /// The value index chosen on each axis.
    pub choice: Vec<usize>,
    pub scenario: Scenario,
    /// A digest of the run's whole scenario document (after overrides and swept values),
    /// stored beside its results so that a rerun recognises results of the same run.
    pub fingerprint: String,
}

impl Plan {
    /// Every swept field with its value in `run`, in axis order.
    pub fn values_of<'a>(&'a self, run: &Run) -> Vec<(&'a str, &'a str)> {
        let mut out = Vec::new();
        for (axis, &v) in self.axes.iter().zip(&run.choice) {
            for (f, field) in axis.fields.iter().enumerate() {
                out.push((field.as_str(), axis.labels[v][f].as_str()));
            }
        }
        out
    }

    /// The axes that set the fields of these overrides (`FIELD=VALUE`, as `--set` takes
    /// them), with each such field: every run takes the sweep's value of a swept field,
    /// so an override of one has no effect (README, "Sweeps").
    pub fn overridden_axes<'a>(&'a self, overrides: &'a [String]) -> Vec<(&'a str, &'a Axis)> {
        overrides
            .iter()
            .filter_map(|o| {
                let field = crate::split_override(o).map_or(o.as_str(), |(f, _)| f).trim();
                let axis = self.axes.iter().find(|a| a.fields.iter().any(|f| f == field))?;
                Some((field, axis))
            })
            .collect()
    }

    /// Number of distinct points (runs / seeds).
    pub fn points(&self) -> usize {
        self.runs.len() / self.seeds.max(1) as usize
    }
}

/// Removes the `[sweep]` table from the document, if there is one.
pub(crate) fn take(root: &mut Node) -> Option<(Span, Node)> {
    let Val::Table(entries) = &mut root.val else { return None };
    let i = entries.iter().position(|(k, _, _)| k == "sweep")?;
    let (_, span, node) = entries.remove(i);
    Some((span, node))
}

/// `--set 'sweep={}'` (an empty table that no line of the file wrote) removes the
/// sweep: the file's scenario runs once, wherever one scenario is taken. An empty
/// `[sweep]` in the file itself is refused by [`plan`] instead.
pub(crate) fn drop_if_set_empty(root: &mut Node) {
    let Val::Table(entries) = &mut root.val else { return };
    let set_empty = |n: &Node| n.span.is_none() && matches!(&n.val, Val::Table(t) if t.is_empty());
    entries.retain(|(k, _, n)| !(k == "sweep" && set_empty(n)));
}

/// Expands the sweep over the document `root` (which no longer holds it).
pub(crate) fn plan(
    ctx: &Ctx,
    root: Node,
    (key_span, table): (Span, Node),
) -> Result<Plan, ScenarioError> {
    let Val::Table(_) = &table.val else {
        return Err(ctx.err(
            &table.span,
            "sweep",
            Some(table.show()),
            format!("expected a table of FIELD = [values], found {}", table.val.kind()),
        ));
    };
    let mut entries = Vec::new();
    flatten(&table, ("", "sweep"), &key_span, &mut entries);
    if entries.is_empty() {
        // Most likely a sweep half written; running the scenario once would hide that.
        return Err(ctx.err(
            &key_span,
            "sweep",
            Some("{}".into()),
            "the table is empty; give each field to vary a list (\"flows[0].cc\" = [\"cubic\", \"reno\"]) and/or seeds = N, or remove [sweep] to run the scenario once",
        ));
    }
    let mut seeds: Option<(u64, Span)> = None;
    let mut axes = Vec::new();
    for (key, set_path, kspan, node) in &entries {
        if key == "seeds" {
            seeds = Some((seeds_value(ctx, node)?, node.span.clone()));
            continue;
        }
        axes.push(axis(ctx, (key, set_path), kspan, node)?);
    }
    check_overlaps(ctx, &axes, &entries)?;
    let seeds_n = seeds.as_ref().map_or(1, |s| s.0);
    let first_seed = first_seed(ctx, &root, seeds.is_some())?;
    let last = first_seed as u128 + seeds_n as u128 - 1;
    if last > i64::MAX as u128 {
        let span = seeds.as_ref().and_then(|s| s.1.clone());
        return Err(ctx.err(
            &span,
            "sweep.seeds",
            Some(seeds_n.to_string()),
            format!("the last seed would be {last}; seeds must stay at most {}", i64::MAX),
        ));
    }
    let points = axes.iter().try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64));
    let total = points.and_then(|p| p.checked_mul(seeds_n)).filter(|&t| t <= MAX_RUNS);
    let Some(total) = total else {
        return Err(ctx.err(
            &key_span,
            "sweep",
            None,
            format!(
                "the sweep has more than {MAX_RUNS} runs (the product of the list lengths times seeds); split it into smaller sweeps"
            ),
        ));
    };
    let counted = seeds.is_some().then_some((first_seed, seeds_n));
    let runs = expand(ctx, &root, &axes, (total / seeds_n) as usize, counted)?;
    let name =
        runs.first().map_or_else(|| ctx.default_name.to_string(), |r| r.scenario.name.clone());
    Ok(Plan { name, axes, seeds: seeds_n, first_seed, runs })
}

/// "point 3, seed 2: flows[0].rtt = 10ms, bottleneck.loss = 0.01"
fn point_text(point: usize, seed: u64, axes: &[Axis], choice: &[usize]) -> String {
    let mut values = Vec::new();
    for (axis, &v) in axes.iter().zip(choice) {
        for (f, field) in axis.fields.iter().enumerate() {
            values.push(format!("{field} = {}", axis.labels[v][f]));
        }
    }
    let mut s = format!("point {point}, seed {seed}");
    if !values.is_empty() {
        s.push_str(": ");
        s.push_str(&values.join(", "));
    }
    s
}

/// Builds and validates every run: each of `points` combinations, with `seeds` (first,
/// count) when the sweep counts seeds, else with the scenario's own seed.
fn expand(
    ctx: &Ctx,
    root: &Node,
    axes: &[Axis],
    points: usize,
    seeds: Option<(u64, u64)>,
) -> Result<Vec<Run>, ScenarioError> {
    let mut runs = Vec::new();
    for point in 0..points {
        let choice = choice_of(point, axes);
        let point_doc = apply(ctx, root, axes, &choice)?;
        let seed_list: Vec<Option<u64>> = match seeds {
            Some((first, n)) => (first..first + n).map(Some).collect(),
            None => vec![None],
        };
        for seed in seed_list {
            let mut doc = point_doc.clone();
            if let Some(seed) = seed {
                set_seed(&mut doc, seed);
            }
            let mut scenario = schema::build(ctx, &doc).map_err(|e| in_point(e, axes, &choice))?;
            scenario.point = Some(point_text(point, scenario.config.seed, axes, &choice));
            runs.push(Run {
                index: runs.len(),
                point,
                seed: scenario.config.seed,
                choice: choice.clone(),
                fingerprint: fingerprint(&doc, &scenario),
                scenario,
            });
        }
    }
    Ok(runs)
}

/// Writes `seed = N` into a run's document, in place of any seed it has.
fn set_seed(doc: &mut Node, seed: u64) {
    let n = Node { val: Val::Int(seed as i64), span: None, raw: None };
    doc::set_path(doc, &[Step::Key("seed".into())], n, None).expect("the root is a table");
}

/// Collects `[sweep]`'s keys: (key, its `--set` path, span, value); a table value is a
/// dotted key written without quotes (`bottleneck.loss = [...]` is the key
/// `bottleneck.loss`, reached by `--set sweep.bottleneck.loss=...`, while the quoted
/// `"bottleneck.loss" = [...]` is reached by `--set 'sweep."bottleneck.loss"=...'`).
fn flatten(node: &Node, (prefix, path): (&str, &str), span: &Span, out: &mut Vec<Entry>) {
    if let Val::Table(entries) = &node.val {
        for (k, kspan, v) in entries {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            let path = format!("{path}.{}", quoted_if_needed(k));
            if matches!(v.val, Val::Table(_)) {
                flatten(v, (&key, &path), kspan, out);
            } else {
                out.push((key, path, kspan.clone().or(span.clone()), v.clone()));
            }
        }
    }
}

/// One `[sweep]` key: (key, its `--set` path, span, value).
type Entry = (String, String, Span, Node);

/// A TOML key as a part of a `--set` path: bare if it can be, quoted otherwise.
fn quoted_if_needed(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_string()
    } else if key.contains('"') {
        format!("'{key}'")
    } else {
        format!("\"{key}\"")
    }
}

fn seeds_value(ctx: &Ctx, n: &Node) -> Result<u64, ScenarioError> {
    match n.val {
        Val::Int(i) if (1..=MAX_SEEDS).contains(&i) => Ok(i as u64),
        _ => Err(ctx.err(
            &n.span,
            "sweep.seeds",
            Some(n.show()),
            format!("allowed: a whole number of repetitions per point, 1 to {MAX_SEEDS}"),
        )),
    }
}

/// The first seed of each point: the scenario's `seed` (after `--seed`), default 1.
fn first_seed(ctx: &Ctx, root: &Node, counted: bool) -> Result<u64, ScenarioError> {
    match root.get("seed") {
        None => Ok(1),
        Some(Node { val: Val::Int(i), .. }) if *i >= 0 => Ok(*i as u64),
        // Without `seeds`, the scenario's own check reports a bad seed with its line.
        Some(_) if !counted => Ok(0),
        Some(n) => Err(ctx.err(
            &n.span,
            "seed",
            Some(n.show()),
            "expected a whole number of at least 0 (sweep seeds count up from it)",
        )),
    }
}

fn axis(
    ctx: &Ctx,
    (key, set_path): (&str, &str),
    kspan: &Span,
    node: &Node,
) -> Result<Axis, ScenarioError> {
    let field = format!("sweep.\"{key}\"");
    let bad_key = |message: String| ctx.err(kspan, &field, None, message);
    let fields: Vec<String> = key.split(',').map(|f| f.trim().to_string()).collect();
    let mut paths = Vec::new();
    for f in &fields {
        let path = doc::parse_path(f).map_err(bad_key)?;
        match path.first() {
            Some(Step::Key(k)) if k == "seed" => {
                return Err(bad_key(
                    "the seed is not swept by value; write seeds = N in [sweep] (and --seed for the first)".into(),
                ))
            }
            Some(Step::Key(k)) if k == "sweep" => {
                return Err(bad_key("a sweep cannot sweep itself".into()))
            }
            _ => {}
        }
        paths.push(path);
    }
    let list = match &node.val {
        Val::Array(items) if !items.is_empty() => items,
        Val::Array(_) => {
            return Err(ctx.err(
                &node.span,
                &field,
                Some(node.show()),
                "an empty list gives no points; give at least one value",
            ))
        }
        other => {
            return Err(ctx.err(
                &node.span,
                &field,
                Some(node.show()),
                format!(
                    "expected a list of the values {} takes, e.g. [\"10ms\", \"50ms\"]; found {}",
                    fields.join(" and "),
                    other.kind()
                ),
            ))
        }
    };
    let mut values = Vec::new();
    for item in list {
        values.push(tuple(ctx, &field, &fields, item)?);
    }
    let labels: Vec<Vec<String>> = values.iter().map(|vs| vs.iter().map(label).collect()).collect();
    // A value listed twice would run the same points twice and show them as one in the
    // tables; more runs of a point are `seeds = N`.
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            return Err(ctx.err(
                &list[i].span,
                &field,
                Some(list[i].show()),
                "listed twice; each value of a sweep is one point (more runs of a point: seeds = N in [sweep])",
            ));
        }
    }
    Ok(Axis {
        key: fields.join(", "),
        set_path: set_path.to_string(),
        fields,
        labels,
        paths,
        values,
    })
}

/// One entry of a tied key's list: a tuple with one value per field, or one value for all.
fn tuple(
    ctx: &Ctx,
    field: &str,
    fields: &[String],
    item: &Node,
) -> Result<Vec<Node>, ScenarioError> {
    let n = fields.len();
    match &item.val {
        Val::Array(parts) if n > 1 && parts.len() == n => Ok(parts.clone()),
        Val::Array(parts) if n > 1 => Err(ctx.err(
            &item.span,
            field,
            Some(item.show()),
            format!(
                "{n} tied fields take a tuple of {n} values (one per field) or a single value for all of them; this list has {}",
                parts.len()
            ),
        )),
        _ => Ok(vec![item.clone(); n]),
    }
}

/// A value as a table cell: strings without quotes, anything else as TOML.
fn label(n: &Node) -> String {
    match &n.val {
        Val::Str(s) => s.clone(),
        _ => n.show(),
    }
}

/// Two keys may not set the same field (or one inside the other).
fn check_overlaps(ctx: &Ctx, axes: &[Axis], entries: &[Entry]) -> Result<(), ScenarioError> {
    let all: Vec<(usize, &str, &[Step])> = axes
        .iter()
        .enumerate()
        .flat_map(|(i, a)| {
            a.fields.iter().zip(&a.paths).map(move |(f, p)| (i, f.as_str(), p.as_slice()))
        })
        .collect();
    for (j, &(_, fb, pb)) in all.iter().enumerate() {
        for &(ia, fa, pa) in &all[..j] {
            if pb.starts_with(pa) || pa.starts_with(pb) {
                let later = entries.iter().filter(|e| e.0 != "seeds").nth(all[j].0);
                let span = later.and_then(|e| e.2.clone());
                return Err(ctx.err(
                    &span,
                    &axes[all[j].0].set_path,
                    None,
                    format!(
                        "{fb} is also set by {} ({fa}); each field may be swept by one key only (tie them in one key to move them together)",
                        axes[ia].set_path
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The value index on each axis for point `p` (first axis slowest).
fn choice_of(mut p: usize, axes: &[Axis]) -> Vec<usize> {
    let mut choice = vec![0; axes.len()];
    for (i, a) in axes.iter().enumerate().rev() {
        choice[i] = p % a.values.len();
        p /= a.values.len();
    }
    choice
}

/// The document of one point: the base with each swept field set to its value.
fn apply(ctx: &Ctx, root: &Node, axes: &[Axis], choice: &[usize]) -> Result<Node, ScenarioError> {
    let mut doc = root.clone();
    for (a, &v) in axes.iter().zip(choice) {
        for ((path, field), value) in a.paths.iter().zip(&a.fields).zip(&a.values[v]) {
            doc::set_path(&mut doc, path, value.clone(), value.span.clone()).map_err(|m| {
                ctx.err(
                    &value.span,
                    field,
                    Some(value.show()),
                    format!("cannot sweep this field: {m}"),
                )
            })?;
        }
    }
    Ok(doc)
}

/// Adds which point failed to a validation error.
fn in_point(mut e: ScenarioError, axes: &[Axis], choice: &[usize]) -> ScenarioError {
    if axes.is_empty() {
        return e;
    }
    let parts: Vec<String> = axes
        .iter()
        .zip(choice)
        .map(|(a, &v)| {
            let shown: Vec<String> = a.values[v].iter().map(Node::show).collect();
            format!("{} = {}", a.key, shown.join(", "))
        })
        .collect();
    e.message = format!("{} (in the sweep point {})", e.message, parts.join("; "));
    e
}

/// A run's fingerprint: FNV-1a (64 bits) of its scenario text (but its seed), its seed
/// and the trace its link plays, if any. The text names a trace by its path, so a trace file changed under the
/// same name must change the fingerprint too, or a resumed sweep would keep the results
/// of the old trace.
fn fingerprint(doc: &Node, scenario: &Scenario) -> String {
    // The seed the run has, not where it was written (the file, `--set seed=`, `seeds`,
    // or nowhere, for the default): `--set sweep.seeds=1` reruns nothing.
    let mut without_seed = doc.clone();
    if let Val::Table(entries) = &mut without_seed.val {
        entries.retain(|(key, _, _)| key != "seed");
    }
    let mut h = Fnv1a::default();
    h.add(without_seed.show().as_bytes());
    h.add(&scenario.config.seed.to_le_bytes());
    if let LinkRate::Trace(t) = &scenario.config.bottleneck.rate {
        for ms in t.opportunities_ms.iter().chain([&t.period_ms]) {
            h.add(&ms.to_le_bytes());
        }
    }
    format!("{:016x}", h.0)
}

/// The 64-bit FNV-1a hash (Fowler, Noll and Vo), fed in pieces: a stable digest (no std
/// hasher's random keys).
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_vary_the_last_axis_fastest() {
        let ax = |n: usize| Axis {
            key: String::new(),
            set_path: String::new(),
            fields: vec![],
            labels: vec![],
            paths: vec![],
            values: vec![vec![]; n],
        };
        let axes = [ax(2), ax(3)];
        let all: Vec<Vec<usize>> = (0..6).map(|p| choice_of(p, &axes)).collect();
        assert_eq!(all, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    }

    #[test]
    fn fingerprints_are_fnv1a() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test vector).
        let fnv = |text: &str| {
            let mut h = Fnv1a::default();
            h.add(text.as_bytes());
            format!("{:016x}", h.0)
        };
        assert_eq!(fnv("a"), "af63dc4c8601ec8c");
        assert_eq!(fnv(""), "cbf29ce484222325");
    }
}
