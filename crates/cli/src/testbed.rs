//! `cclab testbed run`: a scenario on real TCP through the emulator (cclab-emu's testbed),
//! written into the same results folder as `cclab run`, so the two can be compared.

use crate::progress::Progress;
use crate::results::{self, Clock, Perf, Recorder, Staging};
use cclab_emu::testbed::Transport;
use cclab_scenario::metrics::{run_metrics, FlowSeries, Tee};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(clap::Subcommand)]
pub enum Action {
    /// Run a scenario on real TCP through the emulator (needs root); same results as `cclab run`.
    Run(RunArgs),
}

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub run: crate::run::Args,
    /// Run every flow on this transport, overriding each flow's `transport` field: kernel
    /// (the kernel's TCP and algorithm) or udp (cclab's own TCP and algorithm over UDP, for
    /// algorithms the kernel lacks).
    #[arg(long)]
    pub transport: Option<String>,
}

pub fn main(args: Args) -> Result<(), String> {
    let Action::Run(a) = args.action;
    let transport = match a.transport.as_deref() {
        None => None,
        Some("kernel") => Some(Transport::Kernel),
        Some("udp") => Some(Transport::Udp),
        Some(other) => return Err(format!("--transport: \"{other}\" is not one of: kernel, udp")),
    };
    let scn = crate::run::load(&a.run)?;
    let out = a
        .run
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("{}-testbed", scn.name)));
    let staging = Staging::new(&out)?;
    let mut rec = Recorder::new(staging.path(), &scn, crate::series::SeriesFormat::Auto)?;
    let mut series = FlowSeries::new(&scn.config, &scn.metrics);
    let total_s = scn.config.duration.as_secs_f64();
    let mut progress = Progress::new(&scn.name);
    let transports = match transport {
        Some(t) => vec![t; scn.config.flows.len()],
        None => scn.transports.clone(),
    };
    cclab_emu::netns::reap();
    let started = Instant::now();
    let mut both = Tee(&mut rec, &mut series);
    let report = cclab_emu::testbed::run_with(&scn.config, &transports, &mut both, &mut |t| {
        progress.update(t.as_secs_f64(), total_s)
    })
    .map_err(|e| e.to_string())?;
    // Namespace and emulator setup and teardown included: the command's real cost.
    let wall_s = started.elapsed().as_secs_f64();
    progress.finish(total_s);
    // Real TCP's bytes sent are not counted here, so no send rate.
    let metrics = run_metrics(&scn.config, &scn.metrics, &report, &series, None);
    let perf = Perf {
        clock: Clock::RealTime,
        run_s: report.duration.as_secs_f64(),
        wall_s,
        packets: report.link.delivered_packets,
    };
    let run = (&scn, &report, &metrics);
    let replaced = results::finish(staging, &mut rec, run, &perf, &[])?;
    results::print_finished(run, &perf, &out, replaced);
    Ok(())
}
