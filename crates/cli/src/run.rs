//! `cclab run`: load a scenario (or the built-in default), run it with a progress bar,
//! write the results folder and print the summary table. A file with a `[sweep]` goes to
//! [`crate::sweep`], which runs every point through [`execute`].

use crate::progress::Progress;
use crate::results::{self, Clock, Perf, Recorder, Staging};
use crate::series::SeriesFormat;
use cclab_scenario::metrics::{run_metrics, sent_bytes, FlowSeries, RunMetrics, Tee};
use cclab_scenario::{Loaded, Scenario};
use cclab_sim::{Report, Simulation};
use cclab_units::Time;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (TOML). Without one, the built-in default scenario runs.
    pub scenario: Option<PathBuf>,
    /// Results folder [default: results/<scenario name>]. Earlier results there are
    /// replaced only when the run succeeds.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of every random stream (overrides the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override a scenario field before validation, e.g. --set bottleneck.rate=20Mbps,
    /// --set flows[0].cc=reno, --set flows[0].params.beta=0.5 (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// Sweeps: runs at once [default: the number of cores].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
    /// Time series (flows, queue): csv, parquet, none, or auto (Parquet above 2,000,000
    /// flow samples).
    #[arg(long, value_enum, default_value_t = SeriesFormat::Auto)]
    pub series: SeriesFormat,
}

/// The `--set` overrides, then `--seed` as one more.
fn overrides(args: &Args) -> Vec<String> {
    let mut overrides = args.set.clone();
    if let Some(seed) = args.seed {
        overrides.push(format!("seed={seed}"));
    }
    overrides
}

/// Loads the scenario named by the arguments, with `--set` and `--seed` applied.
pub fn load(args: &Args) -> Result<Scenario, String> {
    let overrides = overrides(args);
    let loaded = match &args.scenario {
        Some(p) => cclab_scenario::load_file(p, &overrides),
        None => cclab_scenario::load_default(&overrides),
    };
    loaded.map_err(|e| e.to_string())
}

pub fn main(args: Args) -> Result<(), String> {
    let file = args
        .scenario
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| cclab_scenario::DEFAULT_FILE_NAME.to_string());
    let scn = match &args.scenario {
        Some(path) => match cclab_scenario::load_file_or_sweep(path, &overrides(&args)) {
            Ok(Loaded::Single(scn)) => *scn,
            Ok(Loaded::Sweep(plan)) => return crate::sweep::main(&plan, &file, &args),
            Err(e) => return Err(e.to_string()),
        },
        None => load(&args)?,
    };
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&scn.name));
    let done = execute(&scn, &file, &out, &[], true, args.series)?;
    results::print_finished((&scn, &done.report, &done.metrics), &done.perf, &out, done.replaced);
    Ok(())
}

/// A finished run: its report, its wall-clock figures, and whether it replaced earlier
/// results in its folder.
pub struct Finished {
    pub report: Report,
    pub metrics: RunMetrics,
    pub perf: Perf,
    pub replaced: bool,
}

/// Runs `scn` (`file` names it in errors) and writes its results folder `out`: staged
/// beside it and moved into place only when complete, with `extra` (name, text) files
/// added. `show_progress` draws the progress bar.
pub fn execute(
    scn: &Scenario,
    file: &str,
    out: &Path,
    extra: &[(&str, String)],
    show_progress: bool,
    series: SeriesFormat,
) -> Result<Finished, String> {
    let mut sim = Simulation::new(scn.config.clone()).map_err(|e| format!("{file}: {e}"))?;
    let staging = Staging::new(out)?;
    let mut rec = Recorder::new(staging.path(), scn, series)?;
    let mut series = FlowSeries::new(&scn.config, &scn.metrics);

    let end = Time(scn.config.duration.as_nanos());
    let total_s = end.as_secs_f64();
    // About a thousand steps: fine enough for a smooth bar, coarse enough to cost nothing.
    let step = (end.as_nanos() / 1000).max(1_000);
    let mut progress = show_progress.then(|| Progress::new(&scn.name));
    let started = Instant::now();
    let mut t = 0u64;
    loop {
        t = t.saturating_add(step).min(end.as_nanos());
        let finished = sim.run_until(Time(t), &mut Tee(&mut rec, &mut series));
        if let Some(p) = &mut progress {
            p.update(sim.now().as_secs_f64(), total_s);
        }
        if finished || t >= end.as_nanos() {
            break;
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    if let Some(p) = &mut progress {
        p.finish(total_s);
    }
    let report = sim.report();
    let metrics = run_metrics(&scn.config, &scn.metrics, &report, &series, Some(&sent_bytes(&sim)));

    let perf = Perf {
        clock: Clock::Simulated { events: report.events },
        run_s: report.duration.as_secs_f64(),
        wall_s,
        packets: report.link.delivered_packets,
    };
    let replaced = results::finish(staging, &mut rec, (scn, &report, &metrics), &perf, extra)?;
    Ok(Finished { report, metrics, perf, replaced })
}
