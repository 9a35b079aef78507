//! `cclab reproduce --testbed`: the seeds' sweep points once more on real kernel TCP
//! through the emulator ([`crate::testbed::execute`]), for the points the testbed can run
//! (its own check, [`cclab_emu::testbed::check`]: algorithms the kernel has, flows it
//! accepts). Each scenario's runs go to `DIR/<scenario>/testbed/`, a sweep folder like
//! the simulated one (`points/<k>/`, `sweep.csv`), resumable the same way.

use crate::sweep;
use crate::sweep_table::Table;
use cclab_scenario::sweep::{Plan, Run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Seconds of namespace and emulator setup and teardown per run, for the estimate.
const SETUP_S: f64 = 1.0;

/// Refuses `--testbed` where the testbed cannot run, saying what it needs.
pub fn require_root() -> Result<(), String> {
    cclab_emu::netns::preflight().map_err(|e| {
        format!(
            "--testbed runs real kernel TCP through the emulator: {e}. It needs root and /dev/net/tun, and for tuner or cubic-fit flows cclab's BPF algorithms (`cclab kernel load`); run it as root or leave out --testbed"
        )
    })
}

/// One scenario's testbed runs: their table, and why each needed run that has no result
/// has none (the testbed's check, or its failure).
pub struct Outcome {
    pub table: Table,
    pub missing: BTreeMap<usize, String>,
    /// Runs that failed on the testbed (not those it refused), with their messages.
    pub failed: Vec<String>,
}

/// A scenario's sweep to run on the testbed: its plan and where its runs go.
pub struct Job<'a> {
    pub stem: String,
    pub plan: &'a Plan,
    pub dir: PathBuf,
}

/// The runs the testbed repeats: each point once, with the point's first seed.
fn needed(plan: &Plan) -> Vec<&Run> {
    let mut first: BTreeMap<usize, &Run> = BTreeMap::new();
    for r in &plan.runs {
        first.entry(r.point).or_insert(r);
    }
    first.into_values().collect()
}

/// Why the testbed cannot run `run`, if it cannot.
fn refusal(run: &Run, available: &[String]) -> Option<String> {
    let cfg = &run.scenario.config;
    cclab_emu::testbed::check(cfg, &run.scenario.transports, available).err().map(|e| e.to_string())
}

/// Runs every job's needed runs that are not done yet, after printing an estimate of the
/// real time they take; returns each job's outcome, in the jobs' order.
pub fn run_all(jobs: &[Job<'_>]) -> Result<Vec<Outcome>, String> {
    let available = cclab_emu::testbed::kernel_algorithms();
    let mut todo: Vec<(usize, &Run)> = Vec::new();
    let mut refused: Vec<BTreeMap<usize, String>> = Vec::new();
    let mut done_before = 0;
    for (j, job) in jobs.iter().enumerate() {
        if let Some(note) = sweep::prepare_folder(&job.dir, job.plan)?.note(&job.dir) {
            cclab_units::errln!("{note}");
        }
        let mut no = BTreeMap::new();
        for run in needed(job.plan) {
            if let Some(why) = refusal(run, &available) {
                no.insert(run.index, why);
            } else if sweep::is_done(&job.dir.join("points"), run) {
                done_before += 1;
            } else {
                todo.push((j, run));
            }
        }
        refused.push(no);
    }
    let total_s: f64 =
        todo.iter().map(|(_, r)| r.scenario.config.duration.as_secs_f64() + SETUP_S).sum();
    let refused_count: usize = refused.iter().map(BTreeMap::len).sum();
    cclab_units::errln!(
        "testbed: {} runs to do ({} done before, {} the testbed cannot run), about {} s of real time ({} runs x their durations + {SETUP_S} s setup each)",
        todo.len(),
        done_before,
        refused_count,
        crate::format::num(total_s, 0),
        todo.len()
    );
    let mut failed: Vec<Vec<(usize, String)>> = vec![Vec::new(); jobs.len()];
    let started = Instant::now();
    let mut left_s = total_s;
    for (n, (j, run)) in todo.iter().enumerate() {
        let job = &jobs[*j];
        cclab_units::errln!(
            "testbed: run {}/{}: {} {} (about {} s left)",
            n + 1,
            todo.len(),
            job.stem,
            sweep::describe(run),
            crate::format::num(left_s, 0)
        );
        if let Err(e) = run_one(job, run) {
            if crate::testbed::interrupted() {
                // Ctrl-C stops the command, not just this run; what is done stays done.
                return Err(format!(
                    "testbed run {} of {}: {e}; the runs done so far are kept, and the same command runs only the rest",
                    run.index, job.stem
                ));
            }
            let msg = format!("testbed run {} of {} failed: {e}", run.index, job.stem);
            cclab_units::errln!("{msg}");
            failed[*j].push((run.index, msg));
        }
        left_s -= run.scenario.config.duration.as_secs_f64() + SETUP_S;
    }
    if !todo.is_empty() {
        cclab_units::errln!(
            "testbed: {} runs in {} s",
            todo.len(),
            crate::format::num(started.elapsed().as_secs_f64(), 1)
        );
    }
    jobs.iter().zip(refused).zip(failed).map(|((job, no), bad)| outcome(job, no, bad)).collect()
}

/// One run into `points/<k>/`, then its point.json (which marks it done).
fn run_one(job: &Job<'_>, run: &Run) -> Result<(), String> {
    let out = job.dir.join("points").join(run.index.to_string());
    let (_, emulator) = crate::testbed::execute(
        &run.scenario,
        &run.scenario.transports,
        (&out, crate::series::SeriesFormat::Auto, None),
        true,
    )?;
    crate::testbed::warn_if_disturbed(&emulator);
    sweep::write_atomic(&out.join("point.json"), sweep::point_json(job.plan, run).as_bytes())
}

fn outcome(
    job: &Job<'_>,
    mut missing: BTreeMap<usize, String>,
    failed: Vec<(usize, String)>,
) -> Result<Outcome, String> {
    let messages: Vec<String> = failed.iter().map(|(_, m)| m.clone()).collect();
    let table = sweep::write_tables(job.plan, &job.dir, &messages)?;
    missing.extend(failed);
    Ok(Outcome { table, missing, failed: messages })
}

/// Why an item selecting `select` in `plan` has no testbed value: the reason of the first
/// needed run it selects that has none, else of any run of the scenario.
pub fn reason(plan: &Plan, o: &Outcome, select: &[(String, String)]) -> String {
    let mine =
        o.missing.iter().find(|(k, _)| crate::reproduce::selects(plan, &plan.runs[**k], select));
    mine.or_else(|| o.missing.iter().next())
        .map(|(_, why)| why.clone())
        .unwrap_or_else(|| "no testbed run gave this value".to_string())
}

/// `DIR/<stem>/testbed`.
pub fn folder(out: &Path, stem: &str) -> PathBuf {
    out.join(stem).join("testbed")
}
