//! `cclab run`: load a scenario (or the built-in default), run it with a progress bar,
//! write the results folder and print the summary table. A file with a `[sweep]` goes to
//! [`crate::sweep`], which runs every point through [`execute`].

use crate::progress::Progress;
use crate::results::{self, Clock, Perf, Recorder, Staging};
use crate::series::SeriesFormat;
use cclab_scenario::metrics::{run_metrics, sent_bytes, FlowSeries, RunMetrics, Tee};
use cclab_scenario::{Loaded, Scenario};
use cclab_sim::{LiveClock, PacketEvent, PacketRecord, Report, Simulation};
use cclab_units::Time;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `cclab run`: one scenario's flags, and the sweeps' `--jobs`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run: ScenarioArgs,
    /// Sweeps: runs at once [default: the number of cores].
    #[arg(long, allow_negative_numbers = true, value_parser = whole_in::<1, 1024>)]
    pub jobs: Option<u64>,
}

/// What says which scenario to run and where its results go: the flags `cclab run` and
/// `cclab testbed run` share.
#[derive(clap::Args)]
pub struct ScenarioArgs {
    /// Scenario file (TOML). Without one, the built-in default scenario runs.
    pub scenario: Option<PathBuf>,
    /// Results folder [default: results/<scenario name>, or results/<scenario
    /// name>-testbed for `cclab testbed run`]. Earlier results there are replaced only
    /// when the run succeeds.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of every random stream (overrides the scenario's `seed`; 0 to 2^63 - 1).
    #[arg(long, allow_negative_numbers = true, value_parser = seed_value)]
    pub seed: Option<u64>,
    /// Override a scenario field before validation, e.g. --set bottleneck.rate=20Mbps,
    /// --set flows[0].cc=reno, --set flows[0].params.beta=0.5 (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = field_equals_value)]
    pub set: Vec<String>,
    /// Time series (flows, queue): csv, parquet, none, or auto (Parquet above 2,000,000
    /// flow samples).
    #[arg(long, value_enum, default_value_t = SeriesFormat::Auto)]
    pub series: SeriesFormat,
    /// Write every packet event of the TCP flows and the cross traffic to this CSV file
    /// (the cross traffic's under host B's address, at its bottleneck): arrivals at a
    /// bottleneck with its backlog, drops, departures from its link and deliveries, with
    /// ns timestamps. The same format for `cclab run` (the simulator) and `cclab testbed
    /// run` (the emulator, with its own clock), so that `scripts/packet_log.py` reads both.
    /// Columns: event,direction,time_ns,address,queue_packets,due_ns, then the TCP
    /// header's seq,ack,flags,window,payload_bytes,tsval,tsecr, read from the packets on
    /// the testbed and left empty by the simulator (see the README).
    #[arg(long, value_name = "FILE")]
    pub packet_log: Option<PathBuf>,
}

/// A `--set` without `=`, or with nothing before it, is a command-line error (exit 2),
/// like any malformed flag; the field and value themselves are checked with the scenario.
fn field_equals_value(text: &str) -> Result<String, String> {
    match cclab_scenario::split_override(text) {
        Some((field, _)) if !field.trim().is_empty() => Ok(text.to_string()),
        _ => Err("expected FIELD=VALUE, e.g. bottleneck.rate=20Mbps or flows[0].cc=reno".into()),
    }
}

/// `--seed` (and `fidelity --sim-seed`): a scenario's seed range, 0 to
/// [`cclab_scenario::MAX_SEED`].
pub fn seed_value(text: &str) -> Result<u64, String> {
    whole_in::<0, { cclab_scenario::MAX_SEED }>(text)
}

/// A whole-number flag from LO to HI, refused with that range whatever is wrong with it
/// ("-1", "abc", 2^70), where clap's own parsers name no range. Flags that take it set
/// `allow_negative_numbers`, so that "-1" reaches this check rather than being taken for a
/// flag.
pub fn whole_in<const LO: u64, const HI: u64>(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .ok()
        .filter(|n| (LO..=HI).contains(n))
        .ok_or_else(|| format!("expected a whole number from {LO} to {HI}"))
}

/// The `--set` overrides, then `--seed` as one more.
fn overrides(args: &ScenarioArgs) -> Vec<String> {
    let mut overrides = args.set.clone();
    if let Some(seed) = args.seed {
        overrides.push(format!("seed={seed}"));
    }
    overrides
}

/// Says on stderr which `--set` fields the sweep sets itself: each run takes the sweep's
/// value of a swept field, so such an override has no effect (README, "Sweeps").
fn warn_overridden_axes(plan: &cclab_scenario::sweep::Plan, set: &[String]) {
    for (field, axis) in plan.overridden_axes(set) {
        cclab_units::errln!(
            "warning: --set {field}: the sweep sets {field} in every run; the override has no effect (to change the swept values: --set '{}=[...]')",
            axis.set_path
        );
    }
}

/// Loads the scenario named by the arguments, with `--set` and `--seed` applied.
pub fn load(args: &ScenarioArgs) -> Result<Scenario, String> {
    let overrides = overrides(args);
    let loaded = match &args.scenario {
        Some(p) => cclab_scenario::load_file(p, &overrides),
        None => cclab_scenario::load_default(&overrides),
    };
    loaded.map_err(|e| e.to_string())
}

pub fn main(all: Args) -> Result<(), String> {
    let args = &all.run;
    let file = args
        .scenario
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| cclab_scenario::DEFAULT_FILE_NAME.to_string());
    let scn = match &args.scenario {
        Some(path) => match cclab_scenario::load_file_or_sweep(path, &overrides(args)) {
            Ok(Loaded::Single(scn)) => *scn,
            Ok(Loaded::Sweep(_)) if args.packet_log.is_some() => {
                return Err(format!(
                    "--packet-log: {file} is a sweep of many runs; a packet log is written for \
                     one scenario (run its scenario without the sweep with --set 'sweep={{}}', \
                     and choose the point with --set, e.g. --set flows[0].cc=bic)"
                ))
            }
            Ok(Loaded::Sweep(plan)) => {
                warn_overridden_axes(&plan, &args.set);
                return crate::sweep::main(&plan, &file, &all);
            }
            Err(e) => return Err(e.to_string()),
        },
        None => load(args)?,
    };
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&scn.name));
    let log = args.packet_log.as_deref();
    let done = execute(&scn, &file, (&out, args.series, log), &[], true)?;
    let shown = (out.as_path(), args.series);
    results::print_finished((&scn, &done.report, &done.metrics), &done.perf, shown, done.replaced);
    Ok(())
}

/// Refuses time series too large to write ([`Scenario::check_series_size`]) before
/// anything is built or written; nothing is refused when none are written (`series`
/// none). The web lab and the Python package, which always write them, refuse such a
/// scenario when they read it.
pub fn check_series_size(scn: &Scenario, series: SeriesFormat) -> Result<(), String> {
    if series == SeriesFormat::None {
        return Ok(());
    }
    scn.check_series_size().map_err(|e| format!("{e}, or write no time series (--series none)"))
}

/// A finished run: its report, its wall-clock figures, and whether it replaced earlier
/// results in its folder.
pub struct Finished {
    pub report: Report,
    pub metrics: RunMetrics,
    pub perf: Perf,
    pub replaced: bool,
}

/// Runs `scn` (`file` names it in errors) and writes its results folder `out`, with its
/// time series in format `series`: staged beside it and moved into place only when
/// complete, with `extra` (name, text) files added. Where `packet_log` names a file, the
/// run's packet events go there (see [`PacketLog`]). `show_progress` draws
/// the progress bar.
pub fn execute(
    scn: &Scenario,
    file: &str,
    (out, series, packet_log): (&Path, SeriesFormat, Option<&Path>),
    extra: &[(&str, String)],
    show_progress: bool,
) -> Result<Finished, String> {
    let mut progress = show_progress.then(|| Progress::simulated(&scn.name));
    let total_s = scn.config.duration.as_secs_f64();
    // The results folder is checked (and staged) before the log is opened, so that a
    // refused --out leaves an earlier log as it was; a log that cannot be opened then
    // drops the staging folder, and nothing is written.
    if let Some(path) = packet_log {
        crate::out_folder::check_outside(path, "--packet-log", out)?;
    }
    let mut run = Running::start(scn, file, (out, series))?;
    let flows = scn.config.flows.len();
    if let Some(log) = packet_log.map(|path| PacketLog::create(path, flows)).transpose()? {
        run.write_packets(log);
    }
    let finished = run_to_end(run, scn, extra, &mut |now_s| {
        if let Some(p) = &mut progress {
            p.update(now_s, total_s);
        }
        Ok(())
    })?;
    if let Some(p) = &mut progress {
        p.finish(total_s);
    }
    Ok(finished)
}

/// [`execute`] with `after_step(simulated seconds)` called between steps instead of the
/// progress bar; an error from it stops the run (the Python package checks for Ctrl-C
/// there) and no results folder is written. The results go to `out` with its time
/// series in the given format.
pub fn execute_with(
    scn: &Scenario,
    file: &str,
    out: (&Path, SeriesFormat),
    extra: &[(&str, String)],
    after_step: &mut dyn FnMut(f64) -> Result<(), String>,
) -> Result<Finished, String> {
    run_to_end(Running::start(scn, file, out)?, scn, extra, after_step)
}

/// Steps `run` (of `scn`) to its end, calling `after_step` between steps (see
/// [`execute_with`]), and writes its results.
fn run_to_end(
    mut run: Running,
    scn: &Scenario,
    extra: &[(&str, String)],
    after_step: &mut dyn FnMut(f64) -> Result<(), String>,
) -> Result<Finished, String> {
    let end = run.end().as_nanos();
    // About a thousand steps: fine enough for a smooth bar, coarse enough to cost nothing.
    let step = (end / 1000).max(1_000);
    let mut t = 0u64;
    loop {
        t = t.saturating_add(step).min(end);
        let finished = run.run_until(Time(t));
        after_step(run.sim().now().as_secs_f64())?;
        if finished || t >= end {
            break;
        }
    }
    run.finish(scn, extra)
}

/// A run in progress: the simulation, its results folder being staged and what the
/// metrics need. [`execute_with`] steps it to the end; the Python package's
/// `Simulation` steps it in pieces and changes parameters between them. The scenario
/// stays the caller's ([`Running::finish`] is given it again): with the simulation's own
/// copy, a million flows' configurations are held twice, not three times.
pub struct Running {
    sim: Simulation,
    end: Time,
    staging: Staging,
    rec: Recorder,
    series: FlowSeries,
    /// Wall time spent in [`Running::run_until`] (perf.json).
    wall: Duration,
    /// Where the packet events go, if anywhere.
    packet_log: Option<PacketLog>,
}

impl Running {
    /// Builds the simulation and opens the staging folder of `out`, whose time series
    /// are written in `series` format.
    pub fn start(
        scn: &Scenario,
        file: &str,
        (out, series): (&Path, SeriesFormat),
    ) -> Result<Running, String> {
        check_series_size(scn, series)?;
        let sim = Simulation::new(scn.config.clone()).map_err(|e| format!("{file}: {e}"))?;
        let staging = Staging::new(out)?;
        let rec = Recorder::new(staging.path(), scn, series)?;
        let series = FlowSeries::new(&scn.config, &scn.metrics);
        Ok(Running {
            end: Time(scn.config.duration.as_nanos()),
            sim,
            staging,
            rec,
            series,
            wall: Duration::ZERO,
            packet_log: None,
        })
    }

    /// Writes every packet event from now on to `log`.
    fn write_packets(&mut self, log: PacketLog) {
        self.sim.record_packets();
        self.packet_log = Some(log);
    }

    /// The end of the run (its duration).
    pub fn end(&self) -> Time {
        self.end
    }

    pub fn sim(&self) -> &Simulation {
        &self.sim
    }

    /// Runs every event up to `t` (see [`Simulation::run_until`]); true when finished.
    pub fn run_until(&mut self, t: Time) -> bool {
        let started = Instant::now();
        let finished = self.sim.run_until(t, &mut Tee(&mut self.rec, &mut self.series));
        self.wall += started.elapsed();
        if let Some(log) = &mut self.packet_log {
            log.write(self.sim.drain_packet_records());
        }
        finished
    }

    /// A live change of a flow's parameter now, after every event up to now (the rule
    /// of [`LiveClock::apply`]); returns the instant, in ns, at which a `[[changes]]`
    /// entry of a re-run applies it the same way.
    pub fn set_param(
        &mut self,
        clock: &LiveClock,
        flow: usize,
        name: &str,
        value: f64,
    ) -> Result<u64, String> {
        let obs = &mut Tee(&mut self.rec, &mut self.series);
        clock.apply(&mut self.sim, obs, flow, name, value).map_err(|e| e.to_string())
    }

    /// flows.csv and queue.csv as written so far (flushed), in the staging folder.
    pub fn series_files(&mut self) -> Result<(PathBuf, PathBuf), String> {
        self.rec.flush_csv()?;
        let dir = self.staging.path();
        Ok((dir.join("flows.csv"), dir.join("queue.csv")))
    }

    /// Writes the rest of the results folder (summary.json, perf.json, plots, report,
    /// `extra`) and moves it into place; `scn` is the scenario the run was started with.
    pub fn finish(mut self, scn: &Scenario, extra: &[(&str, String)]) -> Result<Finished, String> {
        let report = self.sim.report();
        let sent = sent_bytes(&self.sim);
        // The flows' state is not needed from here on: the results are written without it.
        drop(self.sim);
        let metrics = run_metrics(&scn.config, &scn.metrics, &report, &self.series, Some(&sent));
        let perf = Perf {
            clock: Clock::Simulated { events: report.events },
            run_s: report.duration.as_secs_f64(),
            wall_s: self.wall.as_secs_f64(),
            packets: report.link.delivered_packets,
        };
        let replaced =
            results::finish(self.staging, &mut self.rec, (scn, &report, &metrics), &perf, extra)?;
        // The log moves into place right after the results (not before their plots and
        // report are written), so an interrupt leaves the two of one run, or of the run
        // before, save for the moment between two renames.
        if let Some(log) = self.packet_log.take() {
            log.finish()?;
        }
        Ok(Finished { report, metrics, perf, replaced })
    }
}

/// The simulator's packet events ([`cclab_sim::PacketRecord`]) written in the testbed's
/// packet-log format (`cclab_emu::packet_log`), so that one script reads both: the
/// forward direction is `up` and the reverse `down`; each flow is named by the address
/// its receiver has in the testbed (`cclab_emu::testbed::flow_addr`: 198.18.1.1 plus the
/// flow's index, continued past the testbed's 64 flows), and cross traffic by the one
/// the testbed's log gives it either way, host B's (`cclab_emu::ADDR_B`: the forward
/// sources' sink and the reverse sources' own); and a due time is the event's own time
/// (the simulator is never late).
struct PacketLog {
    log: cclab_emu::packet_log::PacketLog,
    /// The run's number of flows: records of this id and above are cross traffic's.
    flows: u32,
}

impl PacketLog {
    fn create(path: &Path, flows: usize) -> Result<PacketLog, String> {
        let log = cclab_emu::packet_log::PacketLog::create(path).map_err(|e| e.to_string())?;
        Ok(PacketLog { log, flows: flows as u32 })
    }

    fn write(&mut self, records: impl Iterator<Item = PacketRecord>) {
        use cclab_emu::packet_log::Event;
        let first = u32::from(cclab_emu::testbed::flow_addr(0));
        let cross = u32::from(cclab_emu::ADDR_B);
        for r in records {
            let event = match r.event {
                PacketEvent::Arrive { queue } => Event::Arrive { queue, tcp: None },
                PacketEvent::Drop { queue } => Event::Drop { queue, tcp: None },
                PacketEvent::Depart => Event::Depart { due: r.time },
                PacketEvent::Release => Event::Release { due: r.time },
            };
            let address = if r.flow < self.flows { first + r.flow } else { cross };
            self.log.event(event, r.direction as usize, r.time, address);
        }
    }

    fn finish(self) -> Result<(), String> {
        self.log.finish().map_err(|e| e.to_string())
    }
}
