//! `cclab run FILE` on a file with a `[sweep]`: every run of the plan in parallel, one
//! progress bar, then the sweep's table and plots.
//!
//! Layout of the results folder `DIR`:
//! - `sweep.json`: what the sweep is (its axes, seeds and run count); marks the folder as
//!   a sweep's, so a rerun may reuse it and nothing else is ever written into.
//! - `points/<k>/`: run `k`'s normal results folder (as `cclab run` writes it), plus
//!   `point.json` with the run's swept values, seed and fingerprint.
//! - `sweep.csv`, `sweep.parquet`: one row per run and flow ([`crate::sweep_table`]).
//! - `sweep.html`: every metric against every swept field ([`crate::sweep_html`]).
//!
//! A run is done when `points/<k>/point.json` holds its fingerprint and its perf.json
//! this build's [`BUILD`]: the fingerprint covers the scenario text, the build the code,
//! so a rerun after cclab changed runs everything again rather than keep results of
//! another model. Run folders are staged and moved into place complete
//! ([`crate::results::Staging`]), so a run killed half-way leaves nothing that looks
//! done, and a rerun of the same command with the same build runs only what is missing. A run that fails is reported and the others go on; the command then
//! exits non-zero naming every failed run.

use crate::format::Json;
use crate::results::BUILD;
use crate::run::{self, Args};
use crate::series::SeriesFormat;
use crate::{parquet_file, sweep_html, sweep_table};
use cclab_scenario::sweep::{Plan, Run};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Points printed in the terminal summary at most (the CSV has all of them).
const MAX_PRINTED_POINTS: usize = 40;

pub fn main(plan: &Plan, file: &str, args: &Args) -> Result<(), String> {
    let out = args.run.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&plan.name));
    let done = run(plan, file, &out, args.jobs.map(|j| j as usize), args.run.series)?;
    crate::format::out(&summary(plan, &done.table));
    crate::format::outln(&format!(
        "sweep: {} runs ({} now, {} done before, {} failed); results: {}",
        plan.runs.len(),
        done.ran - done.failures.len(),
        done.skipped_before,
        done.failures.len(),
        out.display()
    ));
    done.result()
}

/// What a sweep left: its table (runs that succeeded), how many runs it started now,
/// and the failed runs with their messages.
pub struct Done {
    pub table: sweep_table::Table,
    pub ran: usize,
    pub skipped_before: usize,
    pub failures: Vec<(usize, String)>,
}

impl Done {
    /// Ok, or the error naming every failed run.
    pub fn result(&self) -> Result<(), String> {
        if self.failures.is_empty() {
            return Ok(());
        }
        let which: Vec<String> = self.failures.iter().map(|(k, _)| k.to_string()).collect();
        Err(format!(
            "{} of {} runs failed (runs {}; each is reported above); rerun the same command to retry them",
            self.failures.len(),
            self.ran + self.skipped_before,
            which.join(", ")
        ))
    }
}

/// Runs what is not done yet of `plan` into `out` (`jobs` at once, default the number
/// of cores) and writes the sweep's tables and page.
pub fn run(
    plan: &Plan,
    file: &str,
    out: &Path,
    jobs: Option<usize>,
    series: SeriesFormat,
) -> Result<Done, String> {
    check_series_sizes(plan, series)?;
    if let Some(note) = prepare_folder(out, plan)?.note(out) {
        cclab_units::errln!("{note}");
    }
    let points = out.join("points");
    let todo: Vec<usize> =
        plan.runs.iter().filter(|r| !is_done(&points, r)).map(|r| r.index).collect();
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, todo.len().max(1));
    let skipped = plan.runs.len() - todo.len();
    let failures = run_all(plan, file, &points, &todo, (jobs, series), skipped);
    let failed: Vec<String> = failures.iter().map(|(_, m)| m.clone()).collect();
    let table = write_tables(plan, out, &failed)?;
    Ok(Done { table, ran: todo.len(), failures, skipped_before: skipped })
}

/// Refuses a sweep, before any of it runs, one of whose runs would write more time
/// series than fit ([`crate::run::check_series_size`]).
fn check_series_sizes(plan: &Plan, series: SeriesFormat) -> Result<(), String> {
    for r in &plan.runs {
        crate::run::check_series_size(&r.scenario, series)
            .map_err(|e| format!("run {} ({}): {e}", r.index, describe(r)))?;
    }
    Ok(())
}

/// Reads every run done in `out` and writes sweep.csv, sweep.parquet and sweep.html
/// (which lists the `failed` runs' messages); returns the table.
pub fn write_tables(
    plan: &Plan,
    out: &Path,
    failed: &[String],
) -> Result<sweep_table::Table, String> {
    let points = out.join("points");
    let done: Vec<usize> =
        plan.runs.iter().filter(|r| is_done(&points, r)).map(|r| r.index).collect();
    let table = sweep_table::build(plan, &points, &done)?;
    write_atomic(&out.join("sweep.csv"), table.csv().as_bytes())?;
    write_atomic(&out.join("sweep.parquet"), &parquet_file::write(&table)?)?;
    write_atomic(&out.join("sweep.html"), sweep_html::page(plan, &table, failed).as_bytes())?;
    Ok(table)
}

/// Creates `out` or checks that it is a sweep's folder, then writes `sweep.json` and
/// removes the points of an earlier, larger sweep in the same folder (`points/<k>` with
/// k beyond this plan's runs, holding a point.json), which this one's sweep.json would
/// contradict. Returns what it found of earlier runs that this sweep does not keep.
pub fn prepare_folder(out: &Path, plan: &Plan) -> Result<Earlier, String> {
    crate::out_folder::check(out, "sweep", "sweep.json")?;
    let points = out.join("points");
    std::fs::create_dir_all(&points)
        .map_err(|e| format!("cannot create {}: {e}", points.display()))?;
    crate::results::recover_killed_stagings(&points, None);
    let mut earlier = Earlier::default();
    for run in &plan.runs {
        match state(&points, run) {
            State::OtherScenario => earlier.other_scenario += 1,
            State::OtherBuild => earlier.other_build += 1,
            State::Done | State::Missing => {}
        }
    }
    write_atomic(&out.join("sweep.json"), plan_json(plan).render().as_bytes())?;
    for entry in std::fs::read_dir(&points).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let beyond = name
            .to_str()
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|k| k >= plan.runs.len());
        if beyond && entry.path().join("point.json").is_file() {
            std::fs::remove_dir_all(entry.path())
                .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
            earlier.removed += 1;
        }
    }
    Ok(earlier)
}

/// Earlier runs in a sweep's folder that the sweep does not keep: a rerun with another
/// scenario, grid or build replaces them without asking (a sweep folder is the sweep's),
/// and says so.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Earlier {
    /// Runs beyond this sweep's last, removed.
    pub removed: usize,
    /// Runs of the same number whose scenario differs, to be run again.
    pub other_scenario: usize,
    /// Runs of this very scenario written by another build, to be run again.
    pub other_build: usize,
}

impl Earlier {
    /// One line for stderr, or nothing when no earlier run goes.
    pub fn note(&self, out: &Path) -> Option<String> {
        let mut parts = Vec::new();
        if self.removed > 0 {
            parts.push(format!("{} runs beyond this sweep's last were removed", self.removed));
        }
        if self.other_scenario > 0 {
            parts.push(format!(
                "{} runs of another scenario (or grid) are run again over theirs",
                self.other_scenario
            ));
        }
        if self.other_build > 0 {
            parts.push(format!(
                "{} runs written by another build of cclab are run again (a run's results depend on the model's code)",
                self.other_build
            ));
        }
        (!parts.is_empty())
            .then(|| format!("note: earlier runs in {}: {}", out.display(), parts.join("; ")))
    }
}

fn plan_json(plan: &Plan) -> Json {
    let axes = plan
        .axes
        .iter()
        .map(|a| {
            Json::Obj(vec![
                ("fields", Json::Arr(a.fields.iter().map(|f| Json::s(f)).collect())),
                (
                    "values",
                    Json::Arr(
                        a.labels
                            .iter()
                            .map(|l| Json::Arr(l.iter().map(|v| Json::s(v)).collect()))
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    Json::Obj(vec![
        ("scenario", Json::s(&plan.name)),
        ("axes", Json::Arr(axes)),
        ("seeds", Json::u(plan.seeds)),
        ("first_seed", Json::u(plan.first_seed)),
        ("points", Json::u(plan.points() as u64)),
        ("runs", Json::u(plan.runs.len() as u64)),
    ])
}

/// point.json: which run this folder holds.
pub(crate) fn point_json(plan: &Plan, run: &Run) -> String {
    let values = plan
        .values_of(run)
        .into_iter()
        .map(|(f, v)| Json::Obj(vec![("field", Json::s(f)), ("value", Json::s(v))]))
        .collect();
    Json::Obj(vec![
        ("run", Json::u(run.index as u64)),
        ("point", Json::u(run.point as u64)),
        ("seed", Json::u(run.seed)),
        ("fingerprint", Json::s(&run.fingerprint)),
        ("values", Json::Arr(values)),
    ])
    .render()
}

/// Whether run `run`'s folder is in place, complete, of this very run and written by
/// this build.
pub fn is_done(points: &Path, run: &Run) -> bool {
    state(points, run) == State::Done
}

/// What `points/<k>` holds for run `run` (number k).
#[derive(Debug, PartialEq, Eq)]
enum State {
    /// Nothing whole: no folder, or one without its point.json or summary.json.
    Missing,
    Done,
    /// A whole run of another scenario (its point.json's fingerprint differs).
    OtherScenario,
    /// A whole run of this scenario that another build wrote (perf.json's build).
    OtherBuild,
}

fn state(points: &Path, run: &Run) -> State {
    let dir = points.join(run.index.to_string());
    let read = |file: &str| std::fs::read_to_string(dir.join(file));
    let holds =
        |text: &str, key: &str, value: &str| text.contains(&format!("\"{key}\": \"{value}\""));
    let (Ok(point), true) = (read("point.json"), dir.join("summary.json").is_file()) else {
        return State::Missing;
    };
    if !holds(&point, "fingerprint", &run.fingerprint) {
        State::OtherScenario
    } else if !read("perf.json").is_ok_and(|perf| holds(&perf, "build", BUILD)) {
        State::OtherBuild
    } else {
        State::Done
    }
}

/// Writes a file whole or not at all ([`cclab_units::whole_file`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    cclab_units::whole_file::write(path, bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `todo` on `jobs` threads; returns the failed runs with their messages.
fn run_all(
    plan: &Plan,
    file: &str,
    points: &Path,
    todo: &[usize],
    (jobs, series): (usize, SeriesFormat),
    skipped: usize,
) -> Vec<(usize, String)> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Result<(), String>)>();
    let mut failures = Vec::new();
    let mut bar = Bar::new(&plan.name, todo.len(), skipped);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&k) = todo.get(i) else { break };
                let _ = tx.send((k, run_one(plan, file, points, &plan.runs[k], series)));
            });
        }
        drop(tx);
        let mut tick = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok((k, Ok(()))) => bar.finished(k, None),
                Ok((k, Err(e))) => {
                    let msg = format!("run {k} ({}) failed: {e}", describe(&plan.runs[k]));
                    bar.finished(k, Some(&msg));
                    failures.push((k, msg));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if tick.elapsed() >= Duration::from_millis(100) {
                bar.draw();
                tick = Instant::now();
            }
        }
    });
    bar.finish();
    failures.sort();
    failures
}

/// One run into `points/<k>/`; a panic is caught and reported as that run's failure.
pub fn run_one(
    plan: &Plan,
    file: &str,
    points: &Path,
    run: &Run,
    series: SeriesFormat,
) -> Result<(), String> {
    let out = points.join(run.index.to_string());
    let extra = [("point.json", point_json(plan, run))];
    caught_panic(|| {
        run::execute(&run.scenario, file, (&out, series, None), &extra, false).map(|_| ())
    })
    .and_then(|done| done)
}

/// Runs `f`, turning a panic inside it into an error message that says it is a bug (the
/// sweep runner and the Python package, which must not die with a run or show Python a
/// `PanicException`). What `f` had changed may be left half done, so a caller drops it.
pub fn caught_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        format!("the simulator panicked ({what}); this is a bug in cclab")
    })
}

/// "point 3, seed 2: flows[0].rtt = 10ms, bottleneck.loss = 0.01"
pub fn describe(run: &Run) -> String {
    run.scenario.point.clone().unwrap_or_default()
}

/// The one progress line of a sweep on stderr: runs done, failures, time left. Redrawn
/// on a terminal; otherwise failures are printed as they happen and one line at the end.
struct Bar {
    label: String,
    total: usize,
    skipped: usize,
    done: usize,
    failed: usize,
    started: Instant,
    tty: bool,
}

impl Bar {
    fn new(label: &str, total: usize, skipped: usize) -> Bar {
        Bar {
            label: label.to_string(),
            total,
            skipped,
            done: 0,
            failed: 0,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
        }
    }

    fn finished(&mut self, _run: usize, failure: Option<&str>) {
        self.done += 1;
        if let Some(msg) = failure {
            self.failed += 1;
            let mut err = std::io::stderr().lock();
            let clear = if self.tty { "\r\x1b[K" } else { "" };
            let _ = writeln!(err, "{clear}{msg}");
        }
        self.draw();
    }

    fn draw(&self) {
        if !self.tty {
            return;
        }
        let frac = if self.total > 0 { self.done as f64 / self.total as f64 } else { 1.0 };
        let filled = (frac * 30.0).round() as usize;
        let elapsed = self.started.elapsed().as_secs_f64();
        let left = if self.done > 0 {
            format!("{} left", clock(elapsed / self.done as f64 * (self.total - self.done) as f64))
        } else {
            "time left unknown".to_string()
        };
        let before = if self.skipped > 0 {
            format!(" ({} done before)", self.skipped)
        } else {
            String::new()
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[K{} [{}{}] {}/{} runs{before}, {} failed, {left}",
            self.label,
            "#".repeat(filled),
            " ".repeat(30 - filled),
            self.done,
            self.total,
            self.failed
        );
        let _ = err.flush();
    }

    fn finish(&self) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "{}{}: {} runs in {} wall, {} failed{}",
            if self.tty { "\r\x1b[K" } else { "" },
            self.label,
            self.done,
            clock(self.started.elapsed().as_secs_f64()),
            self.failed,
            if self.skipped > 0 {
                format!(", {} done before", self.skipped)
            } else {
                String::new()
            }
        );
    }
}

/// Seconds as "42s", "3m05s" or "2h07m".
fn clock(s: f64) -> String {
    let s = s.max(0.0);
    if s < 10.0 {
        // Short sweeps: "0s" would read as nothing done.
        return format!("{s:.1}s");
    }
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// The terminal summary: per point, the swept values, each flow's mean goodput over the
/// seeds and the mean Jain index (the line says over how many runs).
fn summary(plan: &Plan, table: &sweep_table::Table) -> String {
    let col = |name: &str| table.columns.iter().position(|c| c == name);
    let (Some(goodput), Some(name), Some(jain)) =
        (col("flow.goodput_bps"), col("flow.name"), col("fairness.jain"))
    else {
        return String::new();
    };
    let mut out = String::new();
    let mut printed = 0;
    for p in 0..plan.points() {
        let rows: Vec<&Vec<sweep_table::Cell>> =
            table.rows.iter().filter(|r| r[1].as_f64() == Some(p as f64)).collect();
        let Some(first) = plan.runs.iter().find(|r| r.point == p) else { continue };
        if rows.is_empty() {
            continue;
        }
        if printed == MAX_PRINTED_POINTS {
            out.push_str("... more points in sweep.csv\n");
            break;
        }
        printed += 1;
        let mut flows: Vec<(String, Vec<f64>)> = Vec::new();
        let mut jains = Vec::new();
        for r in &rows {
            let n = match &r[name] {
                sweep_table::Cell::Text(s) => s.clone(),
                _ => String::new(),
            };
            let g = r[goodput].as_f64().unwrap_or(f64::NAN) / 1e6;
            match flows.iter_mut().find(|f| f.0 == n) {
                Some(f) => f.1.push(g),
                None => flows.push((n, vec![g])),
            }
            if let Some(j) = r[jain].as_f64() {
                jains.push(j);
            }
        }
        let values: Vec<String> =
            plan.values_of(first).into_iter().map(|(f, v)| format!("{f}={v}")).collect();
        let goodputs: Vec<String> = flows
            .iter()
            // Fixed decimals: 9.999888 reads "10.000", not an exact-looking "10".
            .map(|(n, g)| format!("{n} {:.3}", g.iter().sum::<f64>() / g.len() as f64))
            .collect();
        let mean_jain = jains.iter().sum::<f64>() / jains.len().max(1) as f64;
        let runs = flows.first().map_or(0, |f| f.1.len());
        let over = if runs == 1 { String::new() } else { format!(", means of {runs} runs") };
        out.push_str(&format!(
            "point {p}  {}  goodput Mbit/s{over}: {}  Jain {mean_jain:.4}\n",
            values.join(" "),
            goodputs.join(", "),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reads_like_a_clock() {
        assert_eq!(clock(0.04), "0.0s");
        assert_eq!(clock(4.44), "4.4s");
        assert_eq!(clock(14.4), "14s");
        assert_eq!(clock(185.0), "3m05s");
        assert_eq!(clock(7620.0), "2h07m");
    }

    #[test]
    fn a_panic_becomes_a_message_that_names_it_a_bug() {
        assert_eq!(caught_panic(|| 7), Ok(7));
        let text = caught_panic(|| -> u8 { panic!("queue {} underflow", 3) });
        assert_eq!(
            text,
            Err("the simulator panicked (queue 3 underflow); this is a bug in cclab".into())
        );
        let literal = caught_panic(|| -> u8 { panic!("static text") });
        assert!(literal.unwrap_err().contains("(static text)"));
    }
}
