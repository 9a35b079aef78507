//! `cclab testbed run`: a scenario on real TCP through the emulator (cclab-emu's testbed),
//! written into the same results folder as `cclab run`, so the two can be compared.

use crate::format::Json;
use crate::progress::Progress;
use crate::results::{self, Clock, Perf, Recorder, Staging};
use crate::run::Finished;
use crate::series::SeriesFormat;
use cclab_emu::forwarder::{signal_handlers_until_dropped, signalled};
use cclab_emu::testbed::{EmulatorTiming, KernelFacts, Steering, Transport};
use cclab_scenario::metrics::{run_metrics, FlowSeries, Tee};
use cclab_scenario::Scenario;
use cclab_units::{Duration, Time};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
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
    pub run: crate::run::ScenarioArgs,
    /// Run every flow on this transport, overriding each flow's `transport` field: kernel
    /// (the kernel's TCP and algorithm) or udp (cclab's own TCP and algorithm over UDP, for
    /// algorithms the kernel lacks).
    #[arg(long)]
    pub transport: Option<String>,
    /// Let the emulator's processor go idle during the run instead of keeping it busy with
    /// an idle-priority spinner (on a virtual machine a halted processor wakes late, and
    /// the emulator with it: docs/fidelity.md, "Keeping the emulator's processor awake");
    /// to measure what the spinner changes.
    #[arg(long)]
    pub let_cpus_idle: bool,
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
    let transports = match transport {
        Some(t) => vec![t; scn.config.flows.len()],
        None => scn.transports.clone(),
    };
    cclab_emu::keep_awake::set_enabled(!a.let_cpus_idle);
    let files = (out.as_path(), a.run.series, a.run.packet_log.as_deref());
    let (done, emulator) = execute(&scn, &transports, files, true)?;
    warn_if_disturbed(&emulator);
    crate::format::outln(&emulator_line(&emulator));
    let shown = (out.as_path(), a.run.series);
    results::print_finished((&scn, &done.report, &done.metrics), &done.perf, shown, done.replaced);
    Ok(())
}

/// "emulator: packets released 1 us late at the median (99th percentile 44 us); it woke
/// 21 us after its timer at the median (56 us) in 10377 sleeps; it kept processor
/// 1 awake; the host took 0.93 s of processor 0, 0.02 s of processor 1": what the
/// emulator added to the run's timing as a rule, and what the machine's host took
/// from it, beside [`warn_if_disturbed`]'s packets beyond a packet time.
pub fn emulator_line(e: &EmulatorTiming) -> String {
    format!(
        "emulator: packets released {:.0} us late at the median (99th percentile {:.0} us); it woke {:.0} us after its timer at the median ({:.0} us) in {} sleeps; {}; {}",
        micros(e.late_p50),
        micros(e.late_p99),
        micros(e.wake_p50),
        micros(e.wake_p99),
        e.wakes,
        match e.cpu_kept_awake {
            Some(cpu) => format!("it kept processor {cpu} awake"),
            None => "no processor kept awake".to_string(),
        },
        steal_text(&e.steal)
    )
}

/// "the host took 0.93 s of processor 0, 0.02 s of processor 1" (steal time, per
/// processor: [`cclab_emu::steal`]), "the host took no processor time" or, where it
/// could not be read, "the host's steal time unknown".
fn steal_text(steal: &[Duration]) -> String {
    if steal.is_empty() {
        return "the host's steal time unknown".to_string();
    }
    if steal.iter().all(|&d| d == Duration::ZERO) {
        return "the host took no processor time".to_string();
    }
    let per_cpu: Vec<String> = steal
        .iter()
        .enumerate()
        .map(|(cpu, d)| format!("{:.2} s of processor {cpu}", d.as_secs_f64()))
        .collect();
    format!("the host took {}", per_cpu.join(", "))
}

/// Runs `scn` on real TCP through the emulator and writes its results folder `out`, as
/// [`crate::run::execute`] does for a simulated run, its time series in format `series`.
/// cclab's BPF algorithms must be loaded (`cclab kernel load`); the testbed runs them
/// with the flows' parameters. With `packet_log`, the emulator's packet events go to that
/// file as well.
pub fn execute(
    scn: &Scenario,
    transports: &[Transport],
    (out, series, packet_log): (&Path, SeriesFormat, Option<&Path>),
    show_progress: bool,
) -> Result<(Finished, EmulatorTiming), String> {
    if let Some(path) = packet_log {
        crate::out_folder::check_outside(path, "--packet-log", out)?;
    }
    crate::run::check_series_size(scn, series)?;
    // Ctrl-C (or SIGTERM, SIGHUP) ends the run through its normal path, which removes
    // its namespaces and links (and lets `cclab fidelity` unload what it loaded), instead
    // of killing the process with them still in place; the results folder is not touched.
    // From before the staging folder is made until the results are in place, so that no
    // signal kills the process with the staging left behind.
    let _handlers = signal_handlers_until_dropped();
    let staging = Staging::new(out)?;
    let mut rec = Recorder::new(staging.path(), scn, series)?;
    let mut series = FlowSeries::new(&scn.config, &scn.metrics);
    let total_s = scn.config.duration.as_secs_f64();
    let mut progress = show_progress.then(|| Progress::emulated(&scn.name));
    cclab_emu::netns::reap();
    let started = Instant::now();
    let mut both = Tee(&mut rec, &mut series);
    let steer = &mut |t: Time, _: &mut Steering<'_>| {
        if let Some(p) = &mut progress {
            p.update(t.as_secs_f64(), total_s)
        }
        if signalled() {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    };
    let ran = cclab_emu::testbed::run_logged(&scn.config, transports, &mut both, steer, packet_log);
    if signalled() {
        let log = packet_log.map_or(String::new(), |p| format!(" (and so was {})", p.display()));
        return Err(format!(
            "interrupted by a signal: the run's namespaces were removed and {} was left as it was{log}",
            out.display()
        ));
    }
    let (report, facts) = ran.map_err(|e| e.to_string())?;
    // Namespace and emulator setup and teardown included: the command's real cost.
    let wall_s = started.elapsed().as_secs_f64();
    if let Some(p) = &mut progress {
        p.finish(total_s);
    }
    // Real TCP's bytes sent are not counted here, so no send rate.
    let metrics = run_metrics(&scn.config, &scn.metrics, &report, &series, None);
    let perf = Perf {
        clock: Clock::RealTime,
        run_s: report.duration.as_secs_f64(),
        wall_s,
        packets: report.link.delivered_packets,
    };
    let kernel = kernel_json(&facts).render();
    let run = (scn, &report, &metrics);
    let replaced = results::finish(staging, &mut rec, run, &perf, &[("kernel.json", kernel)])?;
    Ok((Finished { report, metrics, perf, replaced }, facts.emulator))
}

/// Whether a signal ended the latest run of [`execute`] (which then returned an error).
pub fn interrupted() -> bool {
    signalled()
}

/// Tells on stderr when the emulator kept so badly to its schedule, or a flow started so
/// late, that the run is not one of the scenario's network ([`EmulatorTiming::disturbed`]).
pub fn warn_if_disturbed(e: &EmulatorTiming) {
    for warning in disturbance_warnings(e) {
        cclab_units::errln!("warning: {warning}");
    }
}

/// [`warn_if_disturbed`]'s warnings, without their "warning: ".
fn disturbance_warnings(e: &EmulatorTiming) -> Vec<String> {
    let mut warnings = Vec::new();
    if e.too_fast() {
        warnings.push(format!(
            "the emulator released half of the packets more than {} late (a packet time at the bottleneck's rate): it cannot keep to so fast a link, so the run is not a faithful run of the scenario's network; a slower bottleneck (tens to hundreds of Mbit/s) can be emulated",
            short_time(e.late_limit),
        ));
    } else if e.late_beyond_share() {
        warnings.push(format!(
            "the emulator released {} of {} packets ({:.1}%) more than {} (a packet time at the bottleneck) late, at worst {:.1} ms: something on this machine (other work, or a virtual machine's host taking its CPUs) disturbed the run, so it is not a faithful run of the scenario's network",
            e.late,
            e.deliveries,
            e.late_share() * 100.0,
            short_time(e.late_limit),
            e.max_late.as_secs_f64() * 1e3,
        ));
    }
    // Against a packet time that short, any start is late; the warning above says why.
    if e.started_late() && !e.too_fast() {
        warnings.push(format!(
            "a flow called connect() {:.0} us after its start, more than {} (a packet time at the bottleneck): something on this machine held its sender up, so the run is not a faithful run of the scenario's network (kernel.json's flows' connect_us)",
            micros(e.start_late),
            short_time(e.late_limit),
        ));
    }
    warnings
}

/// kernel.json: the kernel's own HyStart counters over the run's kernel CUBIC flows, and
/// per flow (null for user-space ones) the algorithm its socket ran, when it called
/// `connect()` (µs after the run's start), and the milliseconds
/// it had data in flight and was held back by the receiver's window or its send buffer.
fn kernel_json(k: &KernelFacts) -> Json {
    let c = &k.hystart;
    let ms = |us: u64| Json::u(us / 1000);
    let flows = k.flows.iter().map(|f| match f {
        None => Json::Null,
        Some(f) => Json::Obj(vec![
            ("cc", Json::s(&f.cc)),
            ("connect_us", Json::u(f.connect_us)),
            ("busy_ms", ms(f.busy_us)),
            ("rwnd_limited_ms", ms(f.rwnd_limited_us)),
            ("sndbuf_limited_ms", ms(f.sndbuf_limited_us)),
        ]),
    });
    Json::Obj(vec![
        (
            "hystart",
            Json::Obj(vec![
                ("train_detect", Json::u(c.train_detect)),
                ("train_cwnd_sum", Json::u(c.train_cwnd)),
                ("delay_detect", Json::u(c.delay_detect)),
                ("delay_cwnd_sum", Json::u(c.delay_cwnd)),
            ]),
        ),
        ("flows", Json::Arr(flows.collect())),
        ("emulator", emulator_json(&k.emulator)),
    ])
}

/// kernel.json's `emulator`: how many of the run's packets the emulator released later
/// than one packet time at the bottleneck, and whether that made the run disturbed; how
/// late it released them as a rule (median, 99th percentile), how late it woke from
/// its sleeps, and how much time the machine's host took from each processor, in ms
/// (`steal_ms`, indexed by processor), and when: `steal_growth` lists `[t, ms, ms, ...]`
/// (the run's time in s, then each processor's steal since the run began) at each
/// sampling instant where it had grown ([`EmulatorTiming`]).
fn emulator_json(e: &EmulatorTiming) -> Json {
    Json::Obj(vec![
        ("deliveries", Json::u(e.deliveries)),
        ("late_limit_us", Json::f(micros(e.late_limit), 1)),
        ("late", Json::u(e.late)),
        ("late_pct", Json::f(e.late_share() * 100.0, 3)),
        ("max_late_us", Json::f(micros(e.max_late), 1)),
        ("start_late_us", Json::f(micros(e.start_late), 1)),
        ("disturbed", Json::Bool(e.disturbed())),
        ("late_p50_us", Json::f(micros(e.late_p50), 1)),
        ("late_p99_us", Json::f(micros(e.late_p99), 1)),
        ("wakes", Json::u(e.wakes)),
        ("wake_p50_us", Json::f(micros(e.wake_p50), 1)),
        ("wake_p99_us", Json::f(micros(e.wake_p99), 1)),
        ("cpu_kept_awake", e.cpu_kept_awake.map_or(Json::Null, |c| Json::u(c as u64))),
        ("steal_ms", Json::Arr(e.steal.iter().map(|&d| millis(d)).collect())),
        (
            "steal_growth",
            Json::Arr(
                e.steal_growth
                    .iter()
                    .map(|(t, per_cpu)| {
                        let at = Json::f(t.as_secs_f64(), 3);
                        Json::Arr(
                            std::iter::once(at).chain(per_cpu.iter().map(|&d| millis(d))).collect(),
                        )
                    })
                    .collect(),
            ),
        ),
    ])
}

/// A steal figure in whole milliseconds (`/proc/stat` counts 10 ms ticks).
fn millis(d: Duration) -> Json {
    Json::f(d.as_secs_f64() * 1e3, 0)
}

/// A duration in microseconds, as the emulator's figures are given.
fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A packet time as the warnings write it: ns below 1 us, one decimal below 10 us (a
/// 10 Gbit/s link's 1200 ns would otherwise read "1 us"), whole us above.
fn short_time(d: Duration) -> String {
    let ns = d.as_nanos();
    // Rounded to tenths of a microsecond first, so 9960 ns is "10 us", not "10.0 us".
    let tenths = (ns + 50) / 100;
    match ns {
        ns if ns < 1_000 => format!("{ns} ns"),
        _ if tenths < 100 => format!("{}.{} us", tenths / 10, tenths % 10),
        _ => format!("{} us", (ns + 500) / 1000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emulator_line_gives_the_hosts_steal_per_processor_or_says_there_was_none() {
        let line = |steal_ms: &[u64]| {
            let steal = steal_ms.iter().map(|&ms| Duration::from_millis(ms)).collect();
            emulator_line(&EmulatorTiming { steal, ..EmulatorTiming::default() })
        };
        assert!(line(&[930, 20])
            .ends_with("the host took 0.93 s of processor 0, 0.02 s of processor 1"));
        assert!(line(&[0, 0]).ends_with("the host took no processor time"));
        assert!(line(&[]).ends_with("the host's steal time unknown"));
    }

    #[test]
    fn a_link_too_fast_to_emulate_is_told_from_a_disturbed_run() {
        let us = Duration::from_micros;
        let ns = Duration::from_nanos;
        // 1% of packets late beyond a packet time (1200 us at 10 Mbit/s) is fine; 2% is not.
        let slow = EmulatorTiming { deliveries: 100, late_limit: us(1200), ..Default::default() };
        assert!(disturbance_warnings(&EmulatorTiming { late: 1, ..slow.clone() }).is_empty());
        let w = disturbance_warnings(&EmulatorTiming { late: 2, ..slow.clone() });
        assert!(
            w.len() == 1 && w[0].contains("2 of 100 packets (2.0%) more than 1200 us"),
            "{w:?}"
        );
        // At 500 Gbit/s (24 ns a packet) the median packet is late: the link is too fast
        // for the emulator, which is said once, in ns, not "0 us" and a disturbed machine.
        let fast = EmulatorTiming {
            deliveries: 100,
            late: 100,
            late_limit: ns(24),
            late_p50: us(3),
            start_late: us(40),
            ..Default::default()
        };
        let w = disturbance_warnings(&fast);
        assert!(w.len() == 1 && w[0].contains("more than 24 ns late"), "{w:?}");
        assert!(w[0].contains("cannot keep to so fast a link"), "{w:?}");
    }

    #[test]
    fn a_packet_time_keeps_its_first_figures() {
        let ns = Duration::from_nanos;
        assert_eq!(short_time(ns(24)), "24 ns");
        assert_eq!(short_time(ns(999)), "999 ns");
        assert_eq!(short_time(ns(1_200)), "1.2 us", "10 Gbit/s is not \"1 us\"");
        assert_eq!(short_time(ns(9_940)), "9.9 us");
        assert_eq!(short_time(ns(9_960)), "10 us");
        assert_eq!(short_time(ns(10_400)), "10 us");
        assert_eq!(short_time(ns(1_200_000)), "1200 us");
    }
}
