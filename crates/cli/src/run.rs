//! `cclab run`: load a scenario (or the built-in default), run it with a progress bar,
//! write the results folder and print the summary table.

use crate::progress::Progress;
use crate::results::{self, Clock, Perf, Recorder, Staging};
use cclab_scenario::Scenario;
use cclab_sim::Simulation;
use cclab_units::Time;
use std::path::PathBuf;
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
}

/// Loads the scenario named by the arguments, with `--set` and `--seed` applied.
pub fn load(args: &Args) -> Result<Scenario, String> {
    let mut overrides = args.set.clone();
    if let Some(seed) = args.seed {
        overrides.push(format!("seed={seed}"));
    }
    let loaded = match &args.scenario {
        Some(p) => cclab_scenario::load_file(p, &overrides),
        None => cclab_scenario::load_default(&overrides),
    };
    loaded.map_err(|e| e.to_string())
}

pub fn main(args: Args) -> Result<(), String> {
    let scn = load(&args)?;
    let file = args
        .scenario
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| cclab_scenario::DEFAULT_FILE_NAME.to_string());
    let mut sim = Simulation::new(scn.config.clone()).map_err(|e| format!("{file}: {e}"))?;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&scn.name));
    let staging = Staging::new(&out)?;
    let mut rec = Recorder::new(staging.path(), &scn)?;

    let end = Time(scn.config.duration.as_nanos());
    let total_s = end.as_secs_f64();
    // About a thousand steps: fine enough for a smooth bar, coarse enough to cost nothing.
    let step = (end.as_nanos() / 1000).max(1_000);
    let mut progress = Progress::new(&scn.name);
    let started = Instant::now();
    let mut t = 0u64;
    loop {
        t = t.saturating_add(step).min(end.as_nanos());
        let finished = sim.run_until(Time(t), &mut rec);
        progress.update(sim.now().as_secs_f64(), total_s);
        if finished || t >= end.as_nanos() {
            break;
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    progress.finish(total_s);
    let report = sim.report();
    let perf = Perf {
        clock: Clock::Simulated { events: report.events },
        run_s: report.duration.as_secs_f64(),
        wall_s,
        packets: report.link.delivered_packets,
    };
    results::finish(staging, &mut rec, &scn, &report, &perf)
}
