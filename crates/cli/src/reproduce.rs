//! `cclab reproduce [ID...] [--quick] [--testbed] [--out DIR]`: runs the seeds' experiments (the
//! sweeps in `scenarios/seeds/`) and sets cclab's numbers beside the papers' (the
//! `*.expected.toml` files there, [`crate::reproduce_spec`]), with a verdict per item.
//!
//! Writes `DIR/<scenario>/` (each sweep's folder, resumable like any sweep),
//! `DIR/reproduce.json`, `DIR/reproduce.html` and prints a summary table. `--quick`
//! applies each expected file's `[quick]` overrides (shorter runs, fewer seeds) for the
//! test suite; its verdicts are not the full run's. `--testbed` (root) runs each point the
//! testbed can run once more on real kernel TCP ([`crate::reproduce_testbed`]) and adds
//! its value and verdict beside cclab's.

use crate::format::{num, xml, Json};
use crate::reproduce_spec::{self, Agg, Bound, Expected, Figure, Paper, Rule, Series, ValueSpec};
use crate::reproduce_testbed::{self as testbed, Outcome};
use crate::sweep_html::{chart, mean_ci95, x_positions, Line};
use crate::sweep_table::{Cell, Table};
use cclab_scenario::sweep::{Plan, Run};
use cclab_scenario::Loaded;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Seed documents to reproduce (000 to 004); default: every seed with
    /// expected values.
    pub ids: Vec<String>,
    /// Short runs and fewer seeds, as each seed's expected file's [quick] table sets them
    /// (one seed per point, three for 004-scp; for tests); the verdicts are not the full run's.
    #[arg(long)]
    pub quick: bool,
    /// Also run each point the testbed can run once on real kernel TCP through the
    /// emulator (needs root and /dev/net/tun; tuner and cubic-fit flows need cclab's BPF
    /// algorithms loaded) and add its value and verdict beside cclab's.
    #[arg(long)]
    pub testbed: bool,
    /// Output folder [default: results/reproduce, or results/reproduce-quick].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Runs at once [default: the number of cores].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::run::whole_in::<1, 1024>)]
    pub jobs: Option<u64>,
    /// Folder of the seeds' scenarios and expected values [default: scenarios/seeds of
    /// this repository].
    #[arg(long)]
    pub seeds: Option<PathBuf>,
}

/// One comparison: a paper value (or claim) and cclab's.
struct Item {
    id: String,
    /// Position of its series in the figure.
    series: usize,
    seed: String,
    source: String,
    page: String,
    setup: String,
    scenario: String,
    /// The sweep point's selection (field, value), the x value included.
    select: Vec<(String, String)>,
    x: Option<String>,
    /// What cclab's value is ([`ValueSpec::text_over`]): its sweep.csv column, and so
    /// its unit.
    quantity: String,
    paper: Option<f64>,
    /// Whether `paper` was worked out from the paper rather than printed in it
    /// (`Figure::paper_derived` says how).
    paper_derived: bool,
    paper_text: Option<String>,
    cclab: Option<f64>,
    ci95: Option<f64>,
    runs: usize,
    /// Selected runs that gave no value for this item (a metric with nothing to measure
    /// in that run); they are left out of the mean and of `runs`. For a ratio, those of
    /// the numerator's side.
    runs_without_value: usize,
    /// How many runs agree, are roughly in line and differ, each run's own value judged
    /// by the item's rule (against the mean of another condition where the claim has
    /// one); none for a single run, or for a ratio whose two sides are not the same runs
    /// or where a run's own ratio is not a number.
    run_verdicts: Option<[usize; 3]>,
    verdict: &'static str,
    /// The best and the worst verdict of any value in cclab's 95% interval (none without
    /// one): where they differ, the runs do not settle the verdict.
    ci95_verdicts: Option<(&'static str, &'static str)>,
    rule: String,
    why: Option<String>,
    testbed: Option<f64>,
    testbed_verdict: Option<&'static str>,
    testbed_skipped: Option<String>,
}

/// Everything the simulated sweeps gave: per scenario, its plan and table or its error.
type Sweeps = BTreeMap<String, Result<(Plan, Table), String>>;

pub fn main(args: Args) -> Result<(), String> {
    if args.testbed {
        testbed::require_root()?;
    }
    let dir = seeds_dir(args.seeds.as_deref())?;
    let expected = reproduce_spec::load_all(&dir, &args.ids)?;
    // The folder is looked for in several places (see `repo_folder`): say which was used.
    cclab_units::errln!(
        "cclab reproduce: the seeds' scenarios and expected values from {}",
        dir.display()
    );
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(if args.quick { "reproduce-quick" } else { "reproduce" })
    });
    check_out(&out)?;
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let started = std::time::Instant::now();
    let mut sweeps: Sweeps = BTreeMap::new();
    for e in &expected {
        for f in &e.figures {
            if !sweeps.contains_key(&f.scenario) {
                let done = run_sweep(&dir, &out, e, &f.scenario, args.quick, args.jobs);
                sweeps.insert(f.scenario.clone(), done);
            }
        }
    }
    let on_testbed = if args.testbed {
        // The emulator's own handlers stop the forwarder and remove the namespaces.
        cclab_units::interrupt::hand_back_signals();
        Some(run_testbed(&sweeps, &out)?)
    } else {
        None
    };
    let mut items = Vec::new();
    let mut html = String::new();
    for e in &expected {
        html.push_str(&format!("<h2>Seed {}: {}</h2>\n", xml(&e.seed), xml(&e.title)));
        for f in &e.figures {
            let mut fig_items = match &sweeps[&f.scenario] {
                Ok((plan, table)) => {
                    let mut items = figure_items(e, f, plan, table)?;
                    if args.quick {
                        // The expected files explain the full runs' numbers, which the
                        // short runs' need not match.
                        for why in items.iter_mut().filter_map(|i| i.why.as_mut()) {
                            *why = format!("About the full run (this one is --quick): {why}");
                        }
                    }
                    items
                }
                Err(msg) => not_run(e, f, msg),
            };
            if let Some(tb) = &on_testbed {
                add_testbed(e, f, &sweeps, tb, &mut fig_items);
            }
            if let Ok((plan, table)) = &sweeps[&f.scenario] {
                html.push_str(&figure_html(f, &fig_items, plan, table, &out, args.testbed));
            }
            items.extend(fig_items);
        }
    }
    let wall = started.elapsed().as_secs_f64();
    write_report(&out, &html, &items, (args.quick, args.testbed), wall)?;
    if let Some(note) = others_left(&out, &sweeps) {
        cclab_units::errln!("{note}");
    }
    let mut failed: Vec<String> =
        sweeps.iter().filter_map(|(k, v)| v.as_ref().err().map(|e| format!("{k}: {e}"))).collect();
    for (k, o) in on_testbed.iter().flatten() {
        failed.extend(o.failed.iter().map(|m| format!("{k}: {m}")));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("some experiments did not run: {}", failed.join("; ")))
    }
}

/// Writes reproduce.json and reproduce.html and prints the summary.
fn write_report(
    out: &Path,
    html: &str,
    items: &[Item],
    (quick, testbed): (bool, bool),
    wall: f64,
) -> Result<(), String> {
    crate::sweep::write_atomic(
        &out.join("reproduce.json"),
        report_json(items, quick, testbed).render().as_bytes(),
    )?;
    crate::sweep::write_atomic(
        &out.join("reproduce.html"),
        page(html, items, quick, testbed).as_bytes(),
    )?;
    crate::format::out(&summary_table(items, testbed));
    crate::format::outln(&format!(
        "reproduce{}: {} ({} more have runs that all gave one value); {} s wall; {}",
        if quick { " --quick (short runs, not the full verdicts)" } else { "" },
        tally_text(items),
        runs_alike(items),
        num(wall, 1),
        out.join("reproduce.html").display()
    ));
    if testbed {
        let tb = |v: &str| items.iter().filter(|i| i.testbed_verdict == Some(v)).count();
        crate::format::outln(&format!(
            "testbed: {} agree, {} roughly, {} differ, {} not run on the testbed",
            tb("agrees"),
            tb("roughly"),
            tb("differs"),
            items.iter().filter(|i| i.testbed.is_none()).count()
        ));
    }
    Ok(())
}

/// Runs the testbed's share of every sweep that ran in the simulator.
fn run_testbed(sweeps: &Sweeps, out: &Path) -> Result<BTreeMap<String, Outcome>, String> {
    let ran: Vec<(&String, &Plan)> =
        sweeps.iter().filter_map(|(k, v)| v.as_ref().ok().map(|(p, _)| (k, p))).collect();
    let jobs: Vec<testbed::Job<'_>> = ran
        .iter()
        .map(|(scenario, plan)| {
            let stem = stem_of(scenario);
            testbed::Job { dir: testbed::folder(out, &stem), stem, plan }
        })
        .collect();
    let outcomes = testbed::run_all(&jobs)?;
    Ok(ran.into_iter().map(|(k, _)| k.clone()).zip(outcomes).collect())
}

/// Whether `run` is at a sweep point with every (field, value) of `select`.
pub(crate) fn selects(plan: &Plan, run: &Run, select: &[(String, String)]) -> bool {
    let values = plan.values_of(run);
    select.iter().all(|(k, v)| values.iter().any(|(f, l)| f == k && l == v))
}

/// A note naming the sweep folders in `out` that this reproduction did not run (seeds
/// not asked for this time): they stay, but reproduce.json and reproduce.html cover
/// only what was asked.
fn others_left(out: &Path, sweeps: &Sweeps) -> Option<String> {
    let ran: Vec<String> = sweeps.keys().map(|s| stem_of(s)).collect();
    let mut others: Vec<String> = std::fs::read_dir(out)
        .ok()?
        .flatten()
        .filter(|e| e.path().join("sweep.json").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|name| !ran.contains(name))
        .collect();
    others.sort();
    (!others.is_empty()).then(|| {
        format!(
            "note: {} also holds the sweeps of an earlier reproduction ({}); reproduce.json and reproduce.html cover only the seeds asked for this time",
            out.display(),
            others.join(", ")
        )
    })
}

/// A scenario file's stem: its sweep's folder name.
fn stem_of(scenario: &str) -> String {
    Path::new(scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("sweep").to_string()
}

/// Sets each item's testbed value and verdict (the same rule on the testbed's runs), or
/// why it has none.
fn add_testbed(
    e: &Expected,
    f: &Figure,
    sweeps: &Sweeps,
    testbed: &BTreeMap<String, Outcome>,
    items: &mut [Item],
) {
    let (Ok((plan, _)), Some(o)) = (&sweeps[&f.scenario], testbed.get(&f.scenario)) else {
        for i in items {
            i.testbed_skipped = Some("the simulated sweep did not run".to_string());
        }
        return;
    };
    match figure_items(e, f, plan, &o.table) {
        Ok(tb) => {
            for (i, t) in items.iter_mut().zip(tb) {
                match t.cclab {
                    Some(v) => {
                        i.testbed = Some(v);
                        i.testbed_verdict = Some(t.verdict);
                    }
                    None => i.testbed_skipped = Some(testbed::reason(plan, o, &i.select)),
                }
            }
        }
        Err(msg) => {
            for i in items {
                let why = if o.missing.is_empty() {
                    msg.clone()
                } else {
                    testbed::reason(plan, o, &i.select)
                };
                i.testbed_skipped = Some(why);
            }
        }
    }
}

/// The seeds' folder: `--seeds`, else `scenarios/seeds` (see [`repo_folder`]).
fn seeds_dir(given: Option<&Path>) -> Result<PathBuf, String> {
    repo_folder(given, "scenarios/seeds", "--seeds")
}

/// A folder of the repository: `given` (the option `flag`), else `rel` here, else beside
/// the binary's repository (target/<profile>/cclab), else where this source was built.
pub(crate) fn repo_folder(given: Option<&Path>, rel: &str, flag: &str) -> Result<PathBuf, String> {
    if let Some(d) = given {
        return Ok(d.to_path_buf());
    }
    let mut candidates = vec![PathBuf::from(rel)];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(repo) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
            candidates.push(repo.join(rel));
        }
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel));
    candidates
        .into_iter()
        .find(|c| c.is_dir())
        .map(|c| c.canonicalize().unwrap_or(c))
        .ok_or_else(|| format!("cannot find {rel}; run from the repository or give {flag} DIR"))
}

/// Refuses an `--out` that is not a reproduction's folder ([`crate::out_folder`]). One
/// that a reproduction stopped in before writing its report holds only its sweeps'
/// folders, and may be written again.
fn check_out(out: &Path) -> Result<(), String> {
    if holds_only_sweeps(out) {
        return Ok(());
    }
    crate::out_folder::check(out, "reproduce", "reproduce.json")
}

/// Whether `dir` is a folder of one or more folders, each a sweep's (with `sweep.json`).
fn holds_only_sweeps(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    let mut any = false;
    for entry in entries {
        let Ok(entry) = entry else { return false };
        if !entry.path().join("sweep.json").is_file() {
            return false;
        }
        any = true;
    }
    any
}

/// Runs one scenario's sweep into `out/<stem>/` and returns its plan and table.
fn run_sweep(
    dir: &Path,
    out: &Path,
    e: &Expected,
    scenario: &str,
    quick: bool,
    jobs: Option<u64>,
) -> Result<(Plan, Table), String> {
    let path = dir.join(scenario);
    let overrides: Vec<String> = if quick {
        e.quick.iter().find(|(s, _)| s == scenario).map(|(_, o)| o.clone()).unwrap_or_default()
    } else {
        Vec::new()
    };
    let plan =
        match cclab_scenario::load_file_or_sweep(&path, &overrides).map_err(|e| e.to_string())? {
            Loaded::Sweep(p) => p,
            Loaded::Single(_) => {
                return Err(format!("{}: a reproduction scenario needs a [sweep]", path.display()))
            }
        };
    let done = crate::sweep::run(
        &plan,
        &path.display().to_string(),
        &out.join(stem_of(scenario)),
        jobs.map(|j| j as usize),
        crate::series::SeriesFormat::Auto,
    )?;
    done.result()?;
    Ok((plan, done.table))
}

fn not_run(e: &Expected, f: &Figure, msg: &str) -> Vec<Item> {
    vec![Item {
        id: f.id.clone(),
        series: 0,
        seed: e.seed.clone(),
        source: f.source.clone(),
        page: f.page.clone(),
        setup: f.setup.clone(),
        scenario: f.scenario.clone(),
        select: Vec::new(),
        x: None,
        quantity: String::new(),
        paper: None,
        paper_derived: false,
        paper_text: None,
        cclab: None,
        ci95: None,
        runs: 0,
        runs_without_value: 0,
        run_verdicts: None,
        verdict: "not run",
        ci95_verdicts: None,
        rule: String::new(),
        why: Some(msg.to_string()),
        testbed: None,
        testbed_verdict: None,
        testbed_skipped: None,
    }]
}

/// The x values of a figure: the swept field's labels, in sweep order.
fn x_values(f: &Figure, plan: &Plan) -> Result<Vec<Option<String>>, String> {
    let Some(x) = &f.x else { return Ok(vec![None]) };
    for a in &plan.axes {
        if let Some(i) = a.fields.iter().position(|fl| fl == x) {
            return Ok(a.labels.iter().map(|l| Some(l[i].clone())).collect());
        }
    }
    Err(format!("figure {}: x = {x:?} is not a swept field of {}", f.id, f.scenario))
}

fn figure_items(e: &Expected, f: &Figure, plan: &Plan, table: &Table) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    for (si, s) in f.series.iter().enumerate() {
        for x in x_values(f, plan)? {
            if let (Some(at), Some(x)) = (&s.at, &x) {
                if !at.contains(x) {
                    continue; // the paper makes this series' claim elsewhere on the axis
                }
            }
            let paper = match (&s.paper, &x) {
                (Paper::Value(v), _) => Some(*v),
                (Paper::ByX(list), Some(x)) => match list.iter().find(|(k, _)| k == x) {
                    Some((_, v)) => Some(*v),
                    None => continue, // the paper has no value here
                },
                (Paper::ByX(_), None) => None,
                (Paper::Claim(_), _) => None,
            };
            let mut select = s.select.clone();
            if let (Some(field), Some(x)) = (&f.x, &x) {
                select.push((field.clone(), x.clone()));
            }
            let samples = samples(f, plan, table, &select, &s.value)?;
            let selected = plan.runs.iter().filter(|r| selects(plan, r, &select)).count();
            let (stat, run_values) = match &s.divide_by {
                None => (mean_ci95(&samples), samples.clone()),
                Some(by) => match ratio_of_means(f, plan, table, &select, by, &s.value)? {
                    Some(r) => (Some((r.ratio, r.ci95)), r.per_run),
                    None => (None, Vec::new()),
                },
            };
            // A value that is not a number is no value.
            let stat = stat.filter(|(mean, _)| mean.is_finite());
            let judged = match stat {
                Some(st) => Some((st, judge(f, plan, table, s, &select, paper)?)),
                None => None,
            };
            let (verdict, rule, ci95_verdicts, run_verdicts) = match judged {
                None => ("not run", "no finite value from the runs".to_string(), None, None),
                Some((_, Judged::NotRun(why))) => ("not run", why, None, None),
                Some(((mean, ci), Judged::Criterion(test, rule))) => {
                    // Runs that all gave one value (and an exact bound) have no spread
                    // to settle anything: no span, rather than a zero-width one.
                    let spread = ci.is_some_and(|ci| ci > 0.0) || test.bound_ci() > 0.0;
                    let span = ci.filter(|_| spread).map(|ci| test.span(mean - ci, mean + ci));
                    let per_run = (run_values.len() >= 2)
                        .then(|| count_ranks(run_values.iter().map(|&v| test.verdict(v))));
                    (test.verdict(mean), rule, span, per_run)
                }
            };
            let mut id = f.id.clone();
            for part in [Some(&s.name).filter(|n| !n.is_empty()), x.as_ref()].into_iter().flatten()
            {
                id.push('/');
                id.push_str(part);
            }
            items.push(Item {
                id,
                series: si,
                seed: e.seed.clone(),
                source: f.source.clone(),
                page: f.page.clone(),
                setup: f.setup.clone(),
                scenario: f.scenario.clone(),
                select,
                quantity: s.value.text_over(s.divide_by.as_ref()),
                testbed: None,
                testbed_verdict: None,
                testbed_skipped: None,
                x,
                paper,
                paper_derived: paper.is_some() && f.paper_derived.is_some(),
                paper_text: match &s.paper {
                    Paper::Claim(t) => Some(t.clone()),
                    _ => None,
                },
                cclab: stat.map(|s| s.0),
                ci95: stat.and_then(|s| s.1),
                runs: samples.len(),
                runs_without_value: selected - samples.len(),
                run_verdicts,
                verdict,
                ci95_verdicts,
                rule,
                why: s
                    .why
                    .clone()
                    .filter(|_| verdict != "agrees" || ci95_verdicts.is_some_and(|(b, w)| b != w)),
            });
        }
    }
    Ok(items)
}

/// One value per selected run (each seed of the matching points).
fn samples(
    f: &Figure,
    plan: &Plan,
    table: &Table,
    select: &[(String, String)],
    spec: &ValueSpec,
) -> Result<Vec<f64>, String> {
    Ok(samples_by_run(f, plan, table, select, spec)?.into_iter().map(|(_, v)| v).collect())
}

/// [`samples`], each with the index of the run it came from.
fn samples_by_run(
    f: &Figure,
    plan: &Plan,
    table: &Table,
    select: &[(String, String)],
    spec: &ValueSpec,
) -> Result<Vec<(usize, f64)>, String> {
    check_select(f, plan, select)?;
    let col = table.columns.iter().position(|c| *c == spec.column).ok_or_else(|| {
        format!("figure {}: no column {:?} in {}'s sweep.csv", f.id, spec.column, f.scenario)
    })?;
    check_flow_names(f, table, spec)?;
    let runs = plan.runs.iter().filter(|r| selects(plan, r, select));
    let name_col = table.columns.iter().position(|c| c == "flow.name");
    let group_col = table.columns.iter().position(|c| c == "flow.group");
    let mut out = Vec::new();
    for run in runs {
        let rows: Vec<&Vec<Cell>> =
            table.rows.iter().filter(|r| r[0].as_f64() == Some(run.index as f64)).collect();
        let Some(first) = rows.first() else { continue };
        let v = if col < table.first_flow_column {
            first[col].as_f64()
        } else {
            let matches = |r: &&&Vec<Cell>, c: Option<usize>, want: &Option<String>| match (c, want)
            {
                (_, None) => true,
                (Some(c), Some(w)) => r[c] == Cell::Text(w.clone()),
                (None, Some(_)) => false,
            };
            let xs: Vec<f64> = rows
                .iter()
                .filter(|r| matches(r, name_col, &spec.flow) && matches(r, group_col, &spec.group))
                .filter_map(|r| r[col].as_f64())
                .collect();
            aggregate(&xs, spec.agg)
        };
        if let Some(v) = v {
            out.push((run.index, v * spec.scale));
        }
    }
    Ok(out)
}

/// Refuses a `where` whose field the sweep does not vary or whose value it never takes:
/// such a selection matches no run, and the item would read "not run" for a typo.
fn check_select(f: &Figure, plan: &Plan, select: &[(String, String)]) -> Result<(), String> {
    for (field, value) in select {
        let Some(axis) = plan.axes.iter().find(|a| a.fields.contains(field)) else {
            return Err(format!(
                "figure {}: where names {field:?}, not a swept field of {}",
                f.id, f.scenario
            ));
        };
        let at = axis.fields.iter().position(|x| x == field).unwrap_or(0);
        let mut values: Vec<&str> = Vec::new();
        for label in axis.labels.iter().map(|l| l[at].as_str()) {
            if !values.contains(&label) {
                values.push(label); // tied fields repeat a value
            }
        }
        if !values.contains(&value.as_str()) {
            return Err(format!(
                "figure {}: where {field} = {value:?}, a value {} does not sweep; it has: {}",
                f.id,
                f.scenario,
                values.join(", ")
            ));
        }
    }
    Ok(())
}

/// Refuses a `flow` or `group` that no row of the sweep's table names, for the same
/// reason as [`check_select`].
fn check_flow_names(f: &Figure, table: &Table, spec: &ValueSpec) -> Result<(), String> {
    for (key, column, want) in
        [("flow", "flow.name", &spec.flow), ("group", "flow.group", &spec.group)]
    {
        let (Some(want), Some(c)) = (want, table.columns.iter().position(|x| x == column)) else {
            continue;
        };
        let mut names: Vec<&str> = table
            .rows
            .iter()
            .filter_map(|r| match &r[c] {
                Cell::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        if !names.contains(&want.as_str()) {
            names.sort_unstable();
            names.dedup();
            return Err(format!(
                "figure {}: {key} = {want:?} names no flow of {}'s runs; they have: {}",
                f.id,
                f.scenario,
                names.join(", ")
            ));
        }
    }
    Ok(())
}

/// A ratio of two means: its value, its 95% half-width, and each run's own ratio where
/// both sides come from the same runs (empty otherwise, or where a run's own is not a
/// number).
struct Ratio {
    ratio: f64,
    ci95: Option<f64>,
    per_run: Vec<f64>,
}

/// The mean of `samples` over the mean of the `by` runs, with a 95% interval when both
/// sides have one. Where the two come from the same runs (two flows of one run, say),
/// the interval is the ratio estimator's, from each run's residual n - r d, which keeps
/// their covariance; otherwise the two means' half-widths combine to first order (the
/// delta method: dr^2 = (dn / d)^2 + (n dd / d^2)^2) as independent.
fn ratio_of_means(
    f: &Figure,
    plan: &Plan,
    table: &Table,
    select: &[(String, String)],
    by: &Bound,
    spec: &ValueSpec,
) -> Result<Option<Ratio>, String> {
    let Bound::Other { select: other, value, .. } = by else { return Ok(None) };
    let top = samples_by_run(f, plan, table, select, spec)?;
    let bottom = samples_by_run(f, plan, table, &overlay(select, other), value)?;
    let values = |s: &[(usize, f64)]| s.iter().map(|p| p.1).collect::<Vec<f64>>();
    let (Some((n, n_ci)), Some((d, d_ci))) =
        (mean_ci95(&values(&top)), mean_ci95(&values(&bottom)))
    else {
        return Ok(None);
    };
    if d == 0.0 || !d.is_finite() {
        return Ok(None);
    }
    let r = n / d;
    let same_runs = top.len() == bottom.len() && top.iter().zip(&bottom).all(|(a, b)| a.0 == b.0);
    let ci = match (n_ci, d_ci) {
        (Some(_), Some(_)) if same_runs => {
            let residuals: Vec<f64> = top.iter().zip(&bottom).map(|(a, b)| a.1 - r * b.1).collect();
            mean_ci95(&residuals).and_then(|(_, ci)| ci).map(|ci| ci / d.abs())
        }
        (Some(dn), Some(dd)) => Some(((dn / d).powi(2) + (n * dd / (d * d)).powi(2)).sqrt()),
        _ => None,
    };
    let per_run: Vec<f64> = if same_runs {
        top.iter().zip(&bottom).map(|(a, b)| a.1 / b.1).collect()
    } else {
        Vec::new()
    };
    let per_run = if per_run.iter().all(|v| v.is_finite()) { per_run } else { Vec::new() };
    Ok(Some(Ratio { ratio: r, ci95: ci, per_run }))
}

/// `base` with the fields of `over` replaced or added.
fn overlay(base: &[(String, String)], over: &[(String, String)]) -> Vec<(String, String)> {
    let mut sel: Vec<(String, String)> =
        base.iter().filter(|(k, _)| !over.iter().any(|(o, _)| o == k)).cloned().collect();
    sel.extend(over.iter().cloned());
    sel
}

fn aggregate(xs: &[f64], agg: Agg) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(match agg {
        Agg::Mean => xs.iter().sum::<f64>() / xs.len() as f64,
        Agg::Sum => xs.iter().sum(),
        Agg::Min => xs.iter().copied().fold(f64::INFINITY, f64::min),
        Agg::Max => xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Agg::Jain => cclab_scenario::metrics::jain(xs),
        Agg::MinMax => {
            let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
            if max <= 0.0 {
                return None;
            }
            min / max
        }
    })
}

/// The verdicts, best first.
const VERDICTS: [&str; 3] = ["agrees", "roughly", "differs"];

fn rank(verdict: &str) -> usize {
    VERDICTS.iter().position(|v| *v == verdict).unwrap_or(VERDICTS.len())
}

/// How a value of cclab's is judged.
enum Criterion {
    /// By its distance from the paper's value, |cclab - paper| / `per`: within `agree` it
    /// agrees, within `roughly` roughly (`per` is 1 for an absolute rule, |paper| for a
    /// relative one).
    Near { paper: f64, per: f64, agree: f64, roughly: f64 },
    /// By a claim: it agrees if `op` holds against `bound`, roughly if against the bound
    /// moved by `margin` (a fraction of it). A bound that is another condition's mean has
    /// that mean's 95% half-width, `bound_ci`.
    Claim { op: reproduce_spec::Op, bound: f64, bound_ci: Option<f64>, margin: f64 },
}

impl Criterion {
    /// The half-width of the bound's own interval (0 for an exact bound).
    fn bound_ci(&self) -> f64 {
        match *self {
            Criterion::Claim { bound_ci, .. } => bound_ci.unwrap_or(0.0),
            Criterion::Near { .. } => 0.0,
        }
    }

    fn verdict(&self, c: f64) -> &'static str {
        match *self {
            Criterion::Near { paper, per, agree, roughly } => {
                let d = (c - paper).abs() / per;
                VERDICTS[if d <= agree {
                    0
                } else if d <= roughly {
                    1
                } else {
                    2
                }]
            }
            Criterion::Claim { op, bound, margin, .. } => claim_verdict(op, c, bound, margin),
        }
    }

    /// The best and the worst verdict of any value from `lo` to `hi` (and, for a claim
    /// against another condition, of any bound in that one's interval). A claim's verdict
    /// moves one way with each of the two, so the corners decide; a distance is largest
    /// at an end and smallest at the paper's value when the interval holds it.
    fn span(&self, lo: f64, hi: f64) -> (&'static str, &'static str) {
        let verdicts: Vec<&'static str> = match *self {
            Criterion::Near { paper, .. } if lo <= paper && paper <= hi => {
                vec![self.verdict(paper), self.verdict(lo), self.verdict(hi)]
            }
            Criterion::Near { .. } => vec![self.verdict(lo), self.verdict(hi)],
            Criterion::Claim { op, bound, bound_ci, margin } => {
                let b = bound_ci.unwrap_or(0.0);
                [lo, hi]
                    .into_iter()
                    .flat_map(|c| [bound - b, bound + b].map(|b| claim_verdict(op, c, b, margin)))
                    .collect()
            }
        };
        let best = verdicts.iter().copied().min_by_key(|v| rank(v)).unwrap_or("differs");
        let worst = verdicts.iter().copied().max_by_key(|v| rank(v)).unwrap_or("differs");
        (best, worst)
    }
}

/// A claim's verdict for the value `c` against the bound `b`: it agrees if `op` holds, and
/// roughly if it holds against the bound moved by `margin` (a fraction of it) in the
/// claim's favour.
fn claim_verdict(op: reproduce_spec::Op, c: f64, b: f64, margin: f64) -> &'static str {
    let relaxed = relaxed_bound(op, b, margin);
    if op.holds(c, b) {
        "agrees"
    } else if op.holds(c, relaxed) || (c - relaxed).abs() < 1e-12 {
        "roughly"
    } else {
        "differs"
    }
}

/// The bound `b` moved by `margin` (a fraction of it) in the claim's favour: where a
/// claim holds "roughly".
fn relaxed_bound(op: reproduce_spec::Op, b: f64, margin: f64) -> f64 {
    match op {
        reproduce_spec::Op::Ge | reproduce_spec::Op::Gt => b - margin * b.abs(),
        _ => b + margin * b.abs(),
    }
}

/// An item's test and its rule as a sentence, or why it cannot be judged.
enum Judged {
    Criterion(Criterion, String),
    NotRun(String),
}

fn judge(
    f: &Figure,
    plan: &Plan,
    table: &Table,
    s: &Series,
    select: &[(String, String)],
    paper: Option<f64>,
) -> Result<Judged, String> {
    Ok(match (&s.rule, paper) {
        (Rule::Absolute { agree, roughly }, Some(p)) => Judged::Criterion(
            Criterion::Near { paper: p, per: 1.0, agree: *agree, roughly: *roughly },
            format!("agrees if |cclab - paper| <= {agree}, roughly if <= {roughly}"),
        ),
        (Rule::Relative { agree, roughly }, Some(p)) => Judged::Criterion(
            Criterion::Near { paper: p, per: p.abs().max(1e-12), agree: *agree, roughly: *roughly },
            format!(
                "agrees if cclab is within {}% of the paper, roughly if within {}%",
                num(agree * 100.0, 1),
                num(roughly * 100.0, 1)
            ),
        ),
        (Rule::Claim { op, bound, margin }, _) => {
            judge_claim(f, plan, table, select, *op, bound, *margin)?
        }
        (_, None) => Judged::NotRun("the paper gives no value here".to_string()),
    })
}

/// A claim's test: does cclab's value stand in relation `op` to the bound (a number, or
/// the same value under other conditions)?
fn judge_claim(
    f: &Figure,
    plan: &Plan,
    table: &Table,
    select: &[(String, String)],
    op: reproduce_spec::Op,
    bound: &Bound,
    margin: f64,
) -> Result<Judged, String> {
    let (b, bound_ci, what) = match bound {
        Bound::Number(b) => (*b, None, num(*b, 6)),
        Bound::Other { select: other, value, factor } => {
            let sel = overlay(select, other);
            let Some((m, ci)) =
                mean_ci95(&samples(f, plan, table, &sel, value)?).filter(|(m, _)| m.is_finite())
            else {
                return Ok(Judged::NotRun(
                    "no run gave a finite value to compare against".to_string(),
                ));
            };
            let desc: Vec<String> = other.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            let times =
                if *factor == 1.0 { String::new() } else { format!("{} x ", num(*factor, 3)) };
            let ci = ci.map(|ci| ci * factor.abs());
            let interval = ci.map_or(String::new(), |ci| format!(" ± {}", num(ci, 6)));
            (
                m * factor,
                ci,
                format!(
                    "{times}{} with {} (= {}{interval})",
                    value.column,
                    desc.join(", "),
                    num(m * factor, 6)
                ),
            )
        }
    };
    Ok(Judged::Criterion(
        Criterion::Claim { op, bound: b, bound_ci, margin },
        if margin == 0.0 {
            // claim_verdict calls a tie with a strict bound "roughly".
            let tie = match op {
                reproduce_spec::Op::Gt | reproduce_spec::Op::Lt => ", roughly if equal to it",
                _ => "",
            };
            format!("agrees if cclab {} {what}{tie}, else differs", op.text())
        } else {
            format!(
                "agrees if cclab {} {what}, roughly if {} {} (the bound moved by {}% of it)",
                op.text(),
                op.text(),
                num(relaxed_bound(op, b, margin), 6),
                num(margin * 100.0, 1)
            )
        },
    ))
}

fn opt_num(x: Option<f64>, d: usize) -> Json {
    Json::f(x.unwrap_or(f64::NAN), d)
}

/// A selection as `field = value, ...`.
fn where_text(select: &[(String, String)]) -> String {
    select.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
}

fn opt_str(x: &Option<String>) -> Json {
    x.as_deref().map_or(Json::Null, Json::s)
}

/// reproduce.json: the same bytes for the same seeds' files and build (the wall time is
/// only printed).
fn report_json(items: &[Item], quick: bool, testbed: bool) -> Json {
    let count = |v: &str| Json::u(items.iter().filter(|i| i.verdict == v).count() as u64);
    let list = items
        .iter()
        .map(|i| {
            let mut fields = vec![
                ("id", Json::s(&i.id)),
                ("seed", Json::s(&i.seed)),
                ("figure", Json::s(&i.source)),
                ("page", Json::s(&i.page)),
                ("setup", Json::s(&i.setup)),
                ("scenario", Json::s(&i.scenario)),
                ("where", Json::s(&where_text(&i.select))),
                ("x", opt_str(&i.x)),
                ("quantity", Json::s(&i.quantity)),
                ("paper", opt_num(i.paper, 6)),
                ("paper_derived", Json::Bool(i.paper_derived)),
                ("paper_claim", opt_str(&i.paper_text)),
                ("cclab", opt_num(i.cclab, 6)),
                ("ci95", opt_num(i.ci95, 6)),
                ("runs", Json::u(i.runs as u64)),
                ("runs_without_value", Json::u(i.runs_without_value as u64)),
                ("run_verdicts", i.run_verdicts.map_or(Json::Null, counts_json)),
                ("verdict", Json::s(i.verdict)),
                (
                    "ci95_verdicts",
                    i.ci95_verdicts.map_or(Json::Null, |(best, worst)| {
                        Json::Arr(vec![Json::s(best), Json::s(worst)])
                    }),
                ),
                ("rule", Json::s(&i.rule)),
                ("why", opt_str(&i.why)),
            ];
            if testbed {
                fields.push(("testbed", opt_num(i.testbed, 6)));
                fields.push(("testbed_verdict", opt_str(&i.testbed_verdict.map(str::to_string))));
                fields.push(("testbed_skipped", opt_str(&i.testbed_skipped)));
            }
            Json::Obj(fields)
        })
        .collect();
    let mut top = vec![("quick", Json::Bool(quick))];
    if testbed {
        top.push(("testbed", Json::Bool(true)));
    }
    top.extend([
        (
            "summary",
            Json::Obj(vec![
                ("agrees", count("agrees")),
                ("roughly", count("roughly")),
                ("differs", count("differs")),
                ("not_run", count("not run")),
                ("settled", Json::u(settled_unsettled(items).0 as u64)),
                ("unsettled", Json::u(settled_unsettled(items).1 as u64)),
                ("runs_alike", Json::u(runs_alike(items) as u64)),
                ("numbers", counts_json(verdict_counts(of_kind(items, Kind::Number)))),
                ("derived", counts_json(verdict_counts(of_kind(items, Kind::Derived)))),
                ("claims", counts_json(verdict_counts(of_kind(items, Kind::Claim)))),
            ]),
        ),
        ("items", Json::Arr(list)),
    ]);
    Json::Obj(top)
}

/// What an item compares cclab's value with.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A number the paper prints.
    Number,
    /// A number worked out from what the paper says (`Figure::paper_derived`).
    Derived,
    /// A claim the paper makes in words.
    Claim,
}

fn kind(i: &Item) -> Kind {
    match (&i.paper_text, i.paper_derived) {
        (Some(_), _) => Kind::Claim,
        (None, true) => Kind::Derived,
        (None, false) => Kind::Number,
    }
}

fn of_kind(items: &[Item], k: Kind) -> impl Iterator<Item = &Item> {
    items.iter().filter(move |i| kind(i) == k)
}

/// The paper's value as the tables show it: a number (marked when derived), or a claim.
fn paper_cell(i: &Item, claim_chars: usize) -> String {
    match (i.paper, &i.paper_text) {
        (Some(p), _) if i.paper_derived => format!("{} (derived)", num(p, 4)),
        (Some(p), _) => num(p, 4),
        (None, Some(t)) => format!("claim: {}", short(t, claim_chars)),
        _ => "-".into(),
    }
}

/// "a / r / d" (agree, roughly, differ) of `items`.
fn verdict_counts<'a>(items: impl Iterator<Item = &'a Item>) -> [usize; 3] {
    count_ranks(items.map(|i| i.verdict))
}

/// How many of `verdicts` agree, are roughly in line and differ ("not run" is none).
fn count_ranks<'a>(verdicts: impl Iterator<Item = &'a str>) -> [usize; 3] {
    let mut n = [0; 3];
    for v in verdicts {
        if let Some(k) = n.get_mut(rank(v)) {
            *k += 1;
        }
    }
    n
}

/// Of the items with an interval, how many keep their verdict across it (settled) and
/// how many do not.
fn settled_unsettled(items: &[Item]) -> (usize, usize) {
    let spans = items.iter().filter_map(|i| i.ci95_verdicts);
    let settled = spans.clone().filter(|(best, worst)| best == worst).count();
    (settled, spans.count() - settled)
}

/// "N items: a agree, r roughly, d differ (by kind), n not run; s of the t with an
/// interval keep their verdict across it", as the terminal and the page both say it.
fn tally_text(items: &[Item]) -> String {
    let count = |v: &str| items.iter().filter(|i| i.verdict == v).count();
    let (settled, unsettled) = settled_unsettled(items);
    format!(
        "{} items: {} agree, {} roughly, {} differ ({}), {} not run; {settled} of the {} with an interval keep their verdict across it",
        items.len(),
        count("agrees"),
        count("roughly"),
        count("differs"),
        kinds_text(items),
        count("not run"),
        settled + unsettled,
    )
}

/// How many items have several runs that all gave one value (no spread to judge).
fn runs_alike(items: &[Item]) -> usize {
    items.iter().filter(|i| i.ci95 == Some(0.0) && i.ci95_verdicts.is_none()).count()
}

/// The verdicts an item's 95% interval spans, when it spans more than one ("agrees to
/// differs"), else nothing.
fn unsettled_text(i: &Item) -> Option<String> {
    i.ci95_verdicts.filter(|(b, w)| b != w).map(|(b, w)| format!("{b} to {w}"))
}

fn counts_json([a, r, d]: [usize; 3]) -> Json {
    Json::Obj(vec![
        ("agrees", Json::u(a as u64)),
        ("roughly", Json::u(r as u64)),
        ("differs", Json::u(d as u64)),
    ])
}

/// "numbers a / r / d, [derived a / r / d,] claims a / r / d": the verdicts of each kind
/// of item apart.
fn kinds_text(items: &[Item]) -> String {
    let counts = |k| {
        let [a, r, d] = verdict_counts(of_kind(items, k));
        format!("{a} / {r} / {d}")
    };
    let derived = match of_kind(items, Kind::Derived).next() {
        Some(_) => format!(", numbers derived from it {}", counts(Kind::Derived)),
        None => String::new(),
    };
    format!(
        "agree / roughly / differ: the paper's numbers {}{derived}, its claims {}",
        counts(Kind::Number),
        counts(Kind::Claim)
    )
}

/// The terminal table: item, paper, cclab, verdict, the verdicts its interval spans if
/// more than one (and with `testbed`, its value and verdict, or why it has none).
fn summary_table(items: &[Item], testbed: bool) -> String {
    let mut head =
        vec!["item", "paper", "cclab", "verdict", "within the 95% CI", "runs a/r/d", "quantity"];
    if testbed {
        head.extend(["testbed", "testbed verdict"]);
    }
    let mut rows = vec![head.into_iter().map(String::from).collect::<Vec<_>>()];
    for i in items {
        let paper = paper_cell(i, 40);
        let cclab = value_text(i);
        let within = match i.ci95_verdicts {
            None => "-".to_string(),
            Some(_) => unsettled_text(i).unwrap_or_default(),
        };
        let mut row = vec![i.id.clone(), paper, cclab, i.verdict.to_string(), within, runs_text(i)];
        row.push(i.quantity.clone());
        if testbed {
            row.extend(testbed_cells(i));
        }
        rows.push(row);
    }
    crate::format::text_columns(&rows)
}

/// cclab's value with its 95% half-width ("0.9859 ± 0.00002", to two significant
/// figures where four decimals would show 0), "(runs alike)" where the runs gave the same
/// value, and nothing more for a single run.
fn value_text(i: &Item) -> String {
    match (i.cclab, i.ci95) {
        (Some(c), Some(0.0)) => format!("{} ({} runs alike)", num(c, 4), i.runs),
        (Some(c), Some(ci)) => {
            let decimals = if ci >= 1e-4 { 4 } else { (1.0 - ci.log10().floor()) as usize };
            format!("{} ± {}", num(c, 4), num(ci, decimals.min(12)))
        }
        (Some(c), None) => num(c, 4),
        _ => "-".into(),
    }
}

/// How many runs agree, are roughly in line and differ on their own ("3/0/1"), and how
/// many gave no value ("+1 without a value"); "-" where there are no per-run verdicts
/// (see `Item::run_verdicts`).
fn runs_text(i: &Item) -> String {
    let mut t = i.run_verdicts.map_or("-".to_string(), |[a, r, d]| format!("{a}/{r}/{d}"));
    if i.runs_without_value > 0 {
        t.push_str(&format!(" +{} without a value", i.runs_without_value));
    }
    t
}

/// An item's testbed value and verdict, or "-" and why it has none (shortened; the JSON
/// has it whole).
fn testbed_cells(i: &Item) -> [String; 2] {
    match (i.testbed, i.testbed_verdict) {
        (Some(v), Some(verdict)) => [num(v, 4), verdict.to_string()],
        _ => {
            let why = i.testbed_skipped.as_deref().unwrap_or("");
            ["-".into(), format!("skipped: {}", short(why, 60))]
        }
    }
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// One figure: its setup, a chart in the paper's shape (paper dashed, cclab solid with
/// 95% intervals) when it has an x axis, the embedded result plots, and its items.
fn figure_html(
    f: &Figure,
    items: &[Item],
    plan: &Plan,
    table: &Table,
    out: &Path,
    testbed: bool,
) -> String {
    let mut h = format!(
        "<h3>{} ({}, {})</h3>\n<p>{}</p>\n",
        xml(&f.source),
        xml(&f.id),
        xml(&f.page),
        xml(&f.setup)
    );
    if let Some(how) = &f.paper_derived {
        h.push_str(&format!("<p>The paper's values here are derived: {}</p>\n", xml(how)));
    }
    if let (Some(x), Ok(xs)) = (&f.x, x_values(f, plan)) {
        let labels: Vec<String> = xs.into_iter().flatten().collect();
        h.push_str(&figure_chart(f, items, plan, table, x, &labels));
    }
    for s in &f.series {
        for plot in &f.plots {
            let run = plan.runs.iter().find(|r| selects(plan, r, &s.select));
            let stem = stem_of(&f.scenario);
            if let Some(run) = run {
                let path = out.join(stem).join("points").join(run.index.to_string()).join(plot);
                if let Ok(svg) = std::fs::read_to_string(&path) {
                    h.push_str(&format!(
                        "<p>{}: {} (run {})</p>\n{svg}",
                        xml(&s.name),
                        xml(plot),
                        run.index
                    ));
                }
            }
        }
    }
    h.push_str(&items_table(items, testbed));
    h
}

/// The figure's items as an HTML table (with `testbed`, two more columns).
fn items_table(items: &[Item], testbed: bool) -> String {
    let tb_head = if testbed { "<th>testbed</th><th>testbed verdict</th>" } else { "" };
    let mut h = format!("<table><tr><th>item</th><th>paper</th><th>cclab (95% CI)</th><th>verdict</th><th>within the CI</th><th>runs agree / roughly / differ</th>{tb_head}<th>rule</th><th>why (where it differs or its interval leaves it open)</th></tr>\n");
    for i in items {
        let paper = paper_cell(i, usize::MAX);
        let cclab = value_text(i);
        let tb = if testbed {
            let [v, verdict] = testbed_cells(i);
            let class = i.testbed_verdict.unwrap_or("skipped");
            format!("<td>{}</td><td class=\"{class}\">{}</td>", xml(&v), xml(&verdict))
        } else {
            String::new()
        };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td>{tb}<td>{}</td><td>{}</td></tr>\n",
            xml(&i.id),
            xml(&paper),
            xml(&cclab),
            i.verdict.replace(' ', "-"),
            i.verdict,
            unsettled_text(i).unwrap_or_default(),
            xml(&runs_text(i)),
            xml(&i.rule),
            xml(i.why.as_deref().unwrap_or(""))
        ));
    }
    h.push_str("</table>\n");
    h
}

/// The figure's chart: per series the paper's values dashed and cclab's solid (or, with
/// `curves`, cclab's value per curve), against the swept `x`.
fn figure_chart(
    f: &Figure,
    items: &[Item],
    plan: &Plan,
    table: &Table,
    x: &str,
    labels: &[String],
) -> String {
    let (pos, axis, shown) = paper_axis(f, x, labels);
    let mut lines = curve_lines(f, plan, table, x, labels, &pos);
    for (si, s) in f.series.iter().enumerate() {
        let at = |label: &str| labels.iter().position(|l| l == label).map(|i| pos[i]);
        let mine: Vec<&Item> = items.iter().filter(|i| i.series == si).collect();
        let cclab: Vec<(f64, f64, Option<f64>)> =
            mine.iter().filter_map(|i| Some((at(i.x.as_deref()?)?, i.cclab?, i.ci95))).collect();
        let paper: Vec<(f64, f64, Option<f64>)> =
            mine.iter().filter_map(|i| Some((at(i.x.as_deref()?)?, i.paper?, None))).collect();
        let name = if s.name.is_empty() { f.source.clone() } else { s.name.clone() };
        if !paper.is_empty() {
            lines.push(Line {
                name: format!("{name} (paper)"),
                points: paper,
                colour: Some(si),
                dashed: true,
            });
        }
        if f.curves.is_empty() {
            lines.push(Line {
                name: format!("{name} (cclab)"),
                points: cclab,
                colour: Some(si),
                dashed: false,
            });
        }
    }
    let label_rows: Vec<Vec<String>> = shown.into_iter().map(|l| vec![l]).collect();
    chart(&f.y_label, &axis, &label_rows, &lines)
}

/// The chart's x positions, axis name and tick labels: the paper's axis (`x_axis`,
/// `x_at`) when it places every swept value, else the swept field itself.
fn paper_axis(f: &Figure, x: &str, labels: &[String]) -> (Vec<f64>, String, Vec<String>) {
    if let Some(axis) = &f.x_axis {
        let placed: Vec<f64> = labels
            .iter()
            .filter_map(|l| axis.at.iter().find(|(k, _)| k == l).map(|(_, v)| *v))
            .collect();
        if placed.len() == labels.len() {
            let ticks = placed.iter().map(|v| num(*v, 3)).collect();
            return (placed, axis.name.clone(), ticks);
        }
    }
    (x_positions(labels).0, x.to_string(), labels.to_vec())
}

/// cclab's line per curve of `f`: the mean and 95% interval over the runs at each x.
fn curve_lines(
    f: &Figure,
    plan: &Plan,
    table: &Table,
    x: &str,
    labels: &[String],
    pos: &[f64],
) -> Vec<Line> {
    let colours = f.series.len();
    let mut lines = Vec::new();
    for (ci, c) in f.curves.iter().enumerate() {
        let mut points = Vec::new();
        for (label, p) in labels.iter().zip(pos) {
            let select = overlay(&c.select, &[(x.to_string(), label.clone())]);
            let stat = samples(f, plan, table, &select, &c.value).ok().and_then(|v| mean_ci95(&v));
            if let Some((mean, ci)) = stat {
                points.push((*p, mean, ci));
            }
        }
        lines.push(Line {
            name: format!("{} (cclab)", c.name),
            points,
            colour: Some(colours + ci),
            dashed: false,
        });
    }
    lines
}

fn page(body: &str, items: &[Item], quick: bool, testbed: bool) -> String {
    let body = if testbed {
        format!("<p>The testbed column: each point run once on real kernel TCP through the emulator, judged by the same rule; skipped where the testbed cannot run the scenario (the reason is given).</p>\n{body}")
    } else {
        body.to_string()
    };
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cclab reproduce</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1000px}}table{{border-collapse:collapse;margin:1em 0}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}}.agrees{{color:#070}}.roughly{{color:#a60}}.differs{{color:#b00}}</style></head><body>\n<h1>cclab reproduce{}</h1>\n<p>{} (where not, the table says which verdicts it spans); {} more have runs that all gave one value. Paper values dashed, cclab's solid with 95% confidence intervals over seeds (none for one run).</p>\n{body}</body></html>\n",
        if quick { " (--quick: short runs, not the full verdicts)" } else { "" },
        tally_text(items),
        runs_alike(items)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEAR: Criterion = Criterion::Near { paper: 1.0, per: 1.0, agree: 0.1, roughly: 0.3 };

    #[test]
    fn a_distance_is_smallest_where_the_interval_holds_the_paper_value() {
        assert_eq!(NEAR.verdict(1.05), "agrees");
        // Both ends differ, but the interval passes through the paper's value.
        assert_eq!(NEAR.span(0.5, 1.5), ("agrees", "differs"));
        // Wholly on one side: the nearer end is the best, the farther the worst.
        assert_eq!(NEAR.span(1.15, 1.5), ("roughly", "differs"));
        assert_eq!(NEAR.span(0.95, 1.05), ("agrees", "agrees"));
    }

    #[test]
    fn a_claim_is_decided_by_the_ends_of_the_interval() {
        let claim = |op, bound_ci| Criterion::Claim { op, bound: 1.0, bound_ci, margin: 0.1 };
        let at_least = claim(reproduce_spec::Op::Ge, None);
        assert_eq!(at_least.span(0.8, 1.2), ("agrees", "differs"));
        assert_eq!(at_least.span(0.95, 0.99), ("roughly", "roughly"));
        assert_eq!(at_least.span(1.0, 2.0), ("agrees", "agrees"));
        let at_most = claim(reproduce_spec::Op::Le, None);
        assert_eq!(at_most.span(0.5, 1.05), ("agrees", "roughly"));
        // Against another condition's mean, its interval counts too: 1.1 to 1.3 is at
        // least an exact 1.0, but not at least every bound from 0.8 to 1.2 (1.1 is within
        // the margin of 1.2).
        assert_eq!(claim(reproduce_spec::Op::Ge, None).span(1.1, 1.3), ("agrees", "agrees"));
        let other = claim(reproduce_spec::Op::Ge, Some(0.2));
        assert_eq!(other.span(1.1, 1.3), ("agrees", "roughly"));
        assert_eq!(other.span(1.2, 1.3), ("agrees", "agrees"));
        // Strict and negative: less than -1.0 (relaxed to -0.9).
        let below = Criterion::Claim {
            op: reproduce_spec::Op::Lt,
            bound: -1.0,
            bound_ci: None,
            margin: 0.1,
        };
        assert_eq!(below.span(-1.2, -0.95), ("agrees", "roughly"));
        assert_eq!(below.span(-0.8, -0.7), ("differs", "differs"));
    }
}
