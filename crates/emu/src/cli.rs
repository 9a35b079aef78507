//! `cclab emu`: the command-line face of the emulator (the `cclab` binary dispatches here).
//!
//! ```text
//! cclab emu --uplink 20Mbps,delay=20ms,buffer=100pkt --downlink 20Mbps,delay=20ms -- COMMAND [ARGS...]
//! cclab emu --uplink trace=/work/shared/traces/12mbps.trace --downlink 12Mbps --duration 30s
//! cclab emu cleanup [--all]
//! cclab emu bench [--quick] [--agreement cubic]
//! cclab emu udp --cc tahoe --uplink 12Mbps,delay=40ms,buffer=120KB --downlink delay=40ms
//! ```
//!
//! Like mahimahi's mm-link, COMMAND runs in namespace A (address 198.18.0.1) and reaches
//! the far side at 198.18.0.2 (namespace B, named in `CCLAB_EMU_NS_B`); without COMMAND
//! the emulator runs until Ctrl-C or `--duration`. Everything it created is removed when
//! the command ends, on SIGINT/SIGTERM/SIGHUP, and on errors. A run killed outright leaves
//! its namespaces; the next command that creates namespaces removes them
//! ([`netns::reap`]), and so does `cclab emu cleanup`. COMMAND gets SIGTERM if its
//! emulator dies (PR_SET_PDEATHSIG).

use crate::forwarder::{
    signal_exit_status, signal_handlers_until_dropped, signalled, unless_signalled, wake_on_signal,
    Forwarder,
};
use crate::spec::parse_direction;
use crate::stats::DirectionStats;
use crate::{netns, DirectionConfig, EmuError, EmuNet, ADDR_A, ADDR_B};
use cclab_units::json::Json;
use cclab_units::stdout::outln;
use cclab_units::{parse_duration, Duration};
use clap::{Args, Subcommand};
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EmuArgs {
    #[command(subcommand)]
    pub action: Option<EmuAction>,
    #[command(flatten)]
    pub link: LinkArgs,
}

#[derive(Subcommand, Debug)]
pub enum EmuAction {
    /// Remove network namespaces left behind by emulator runs that were killed.
    Cleanup {
        /// Remove every cclab namespace, also those of emulators still running.
        #[arg(long)]
        all: bool,
    },
    /// Measure the emulator: timing accuracy, delay, trace fidelity, throughput, and a real TCP flow.
    Bench(crate::bench::BenchArgs),
    /// Run one of cclab's own algorithms in user space over UDP through the emulated link
    /// (for algorithms the kernel lacks, such as tahoe).
    Udp(UdpArgs),
}

#[derive(Args, Debug)]
pub struct UdpArgs {
    /// Algorithm (see `cclab algorithms`).
    #[arg(long, default_value = "reno")]
    pub cc: String,
    /// Algorithm parameter, repeatable: a number, or true/false for a switch (`cclab
    /// algorithms ALGO` lists each algorithm's parameters and what they allow).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// The data direction (A to B), as for `cclab emu --uplink`.
    #[arg(long, default_value = "")]
    pub uplink: String,
    /// The ACK direction (B to A).
    #[arg(long, default_value = "")]
    pub downlink: String,
    /// How long to send.
    #[arg(long, default_value = "10s")]
    pub duration: String,
    /// A finite transfer (e.g. "10MB") instead of bulk.
    #[arg(long)]
    pub bytes: Option<String>,
    /// Write the sender's samples (every 10 ms) as CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
pub struct LinkArgs {
    /// Side A to side B: e.g. "20Mbps,delay=20ms,buffer=100pkt,loss=0.01" or
    /// "trace=FILE,delay=20ms,buffer=120KB,qdisc=red,red_max_p=0.2". Keys: rate, trace,
    /// delay, buffer (NNNpkt or bytes), qdisc (the simulator's queue disciplines that drop
    /// on arrival; a wrong name lists them) with its parameters as QDISC_PARAM (the
    /// scenario file's names), loss. Empty: no rate limit, no delay.
    #[arg(long, default_value = "")]
    pub uplink: String,
    /// Side B to side A, same form as --uplink.
    #[arg(long, default_value = "")]
    pub downlink: String,
    /// Write per-direction logs (uplink.csv, downlink.csv: queue length, drops,
    /// deliveries every --sample) and summary.json here.
    #[arg(long)]
    pub log_dir: Option<PathBuf>,
    /// Stop after this long (e.g. "30s"); default: when COMMAND ends, or on Ctrl-C.
    #[arg(long)]
    pub duration: Option<String>,
    /// Interval of the CSV log rows.
    #[arg(long, default_value = "10ms")]
    pub sample: String,
    /// Run the forwarding loop as an ordinary thread instead of SCHED_FIFO (on a busy
    /// machine, ordinary scheduling delays departures by milliseconds), and without
    /// keeping its processor awake with an idle-priority spinner.
    #[arg(long)]
    pub no_realtime: bool,
    /// Seed of the loss and RED random streams.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Command to run in namespace A (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// Runs `cclab emu ...`; returns the process exit code (the wrapped command's status, or
/// 0). Errors are one printable line.
pub fn run(args: &EmuArgs) -> Result<i32, EmuError> {
    match &args.action {
        Some(EmuAction::Cleanup { all }) => {
            netns::preflight()?;
            let removed = netns::cleanup(*all);
            for n in &removed.namespaces {
                outln(&format!("removed namespace {n}"));
            }
            for (pid, command) in &removed.processes {
                outln(&format!("killed process {pid} ({command}) that was still inside"));
            }
            if removed.line().is_none() {
                outln("no stale cclab namespaces");
            }
            if !removed.failed.is_empty() {
                return Err(EmuError::Setup(format!(
                    "could not remove {}",
                    removed.failed.join(", ")
                )));
            }
            Ok(0)
        }
        Some(EmuAction::Bench(b)) => crate::bench::run(b).map(|_| 0),
        Some(EmuAction::Udp(u)) => run_udp(u).map(|_| 0),
        None => run_link(&args.link),
    }
}

/// [`run`] for the `cclab` binary: prints an error as one line and maps the result to
/// the process exit status: the wrapped command's; 128 + the signal's number when a
/// signal stopped the run (`emu bench` and `emu udp` end through an error then), as the
/// other commands give;
/// 1 for any other error, as the other commands give once their flags are read.
pub fn main(args: &EmuArgs) -> std::process::ExitCode {
    match run(args) {
        Ok(code) => std::process::ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            cclab_units::errln!("error: {e}");
            std::process::ExitCode::from(crate::forwarder::signal_exit_status().unwrap_or(1))
        }
    }
}

/// `cclab emu`'s directions, duration and sampling interval, checked before anything
/// is created.
struct LinkPlan {
    up: DirectionConfig,
    down: DirectionConfig,
    duration: Option<Duration>,
    sample: Duration,
}

fn plan_link(args: &LinkArgs) -> Result<LinkPlan, EmuError> {
    if let Some(dir) = &args.log_dir {
        check_log_dir(dir)?;
    }
    let up = parse_direction("--uplink", &args.uplink)?;
    let down = parse_direction("--downlink", &args.downlink)?;
    let duration = match &args.duration {
        Some(d) => {
            Some(parse_duration(d).map_err(|e| EmuError::Config(format!("--duration: {e}")))?)
        }
        None => None,
    };
    if duration == Some(Duration::ZERO) {
        return Err(EmuError::Config(format!(
            "--duration: \"{}\" is zero; allowed: a positive duration such as 30s (or none: until Ctrl-C or the command ends)",
            args.duration.as_deref().unwrap_or_default()
        )));
    }
    let sample =
        parse_duration(&args.sample).map_err(|e| EmuError::Config(format!("--sample: {e}")))?;
    if sample < Duration::from_millis(1) {
        return Err(EmuError::Config(format!(
            "--sample: \"{}\" is below the smallest allowed, 1ms",
            args.sample
        )));
    }
    Ok(LinkPlan { up, down, duration, sample })
}

/// `--log-dir` may be new, empty, or an earlier run's logs (it has uplink.csv), whose
/// files are replaced; any other folder is refused, so that a results folder's
/// summary.json, say, is not overwritten by the emulator's.
fn check_log_dir(dir: &std::path::Path) -> Result<(), EmuError> {
    let refuse = |why: &str| {
        EmuError::Config(format!("--log-dir: {} {why}; choose another folder", dir.display()))
    };
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if !dir.is_dir() => Err(refuse("exists and is not a folder")),
        Err(e) => Err(refuse(&format!("cannot be read ({e})"))),
        Ok(mut entries) => match entries.next().is_none() || dir.join("uplink.csv").is_file() {
            true => Ok(()),
            false => Err(refuse(
                "holds files and is not an earlier `cclab emu` log (no uplink.csv), whose files it would replace",
            )),
        },
    }
}

fn run_link(args: &LinkArgs) -> Result<i32, EmuError> {
    // Everything the user wrote is checked before anything is created.
    let plan = plan_link(args)?;
    netns::preflight()?;
    netns::reap();

    // From here on a signal ends the run through the normal path (Drop guards).
    let restore = signal_handlers_until_dropped();
    let (net, tun_a, tun_b) = EmuNet::create()?;
    let mut fwd = Forwarder::new(
        tun_a,
        tun_b,
        &plan.up,
        &plan.down,
        args.seed,
        plan.sample,
        args.log_dir.as_deref(),
    )?;
    fwd.set_realtime(!args.no_realtime);
    wake_on_signal(&fwd);
    if let Some(status) = signal_exit_status() {
        return Ok(status as i32); // interrupted during setup; the guards remove what exists
    }

    let child = match args.command.split_first() {
        Some((prog, rest)) => Some(spawn_in_namespace(&net, prog, rest)?),
        None => {
            cclab_units::errln!(
                "cclab emu: {} ({ADDR_A}) <-> {} ({ADDR_B}); run programs with `ip netns exec NAME ...`; Ctrl-C stops",
                net.a.name(),
                net.b.name()
            );
            None
        }
    };
    let raw_pidfd = child.as_ref().map(|(_, fd)| std::os::fd::AsRawFd::as_raw_fd(fd));
    let result = fwd.run(plan.duration, raw_pidfd);

    let duration_over = result.is_ok() && plan.duration.is_some();
    let mut code = child.map_or(0, |(c, _)| end_command(c, duration_over));
    if let Some(status) = signal_exit_status() {
        // Interrupted: the shell's status for the signal that came, whatever the
        // command's own ending (the SIGTERM we sent it gives 143 even after a Ctrl-C).
        cclab_units::errln!(
            "cclab emu: interrupted by a signal; the link's namespaces are removed"
        );
        code = status as i32;
    }
    if let Some(why) = fwd.realtime_refused() {
        cclab_units::errln!("cclab emu: warning: SCHED_FIFO refused ({why}); ran as an ordinary thread, timing may suffer");
    }
    print_summary(&fwd, &mut std::io::stderr());
    if let Some(dir) = &args.log_dir {
        let p = dir.join("summary.json");
        std::fs::write(&p, summary_json(&fwd) + "\n")
            .map_err(|e| EmuError::Io(format!("cannot write {}: {e}", p.display())))?;
    }
    drop(fwd);
    drop(net);
    drop(restore);
    result.map(|_| code)
}

/// Starts `prog rest...` in the namespace of side A, with the link's addresses in its
/// environment; returns it with a pidfd, so the forwarder's loop ends when it exits.
fn spawn_in_namespace(
    net: &EmuNet,
    prog: &str,
    rest: &[String],
) -> Result<(std::process::Child, std::os::fd::OwnedFd), EmuError> {
    let ns_fd = net.a.fd();
    let parent = std::process::id() as libc::pid_t;
    let mut cmd = std::process::Command::new(prog);
    cmd.args(rest)
        .env("CCLAB_EMU_LOCAL", ADDR_A.to_string())
        .env("CCLAB_EMU_REMOTE", ADDR_B.to_string())
        .env("CCLAB_EMU_NS_A", net.a.name())
        .env("CCLAB_EMU_NS_B", net.b.name());
    // SAFETY: between fork and exec only async-signal-safe syscalls run.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(ns_fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // If this emulator dies outright (SIGKILL), the command gets SIGTERM rather
            // than running on in a namespace whose link is gone; and if it died before
            // this line, the command does not start.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 || libc::getppid() != parent
            {
                return Err(std::io::Error::other("the emulator ended during start-up"));
            }
            Ok(())
        });
    }
    let c = cmd.spawn().map_err(|e| EmuError::Setup(format!("cannot run {prog}: {e}")))?;
    // SAFETY: pidfd_open on our own child; the result is checked.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, c.id() as libc::c_int, 0) } as i32;
    if fd < 0 {
        return Err(EmuError::Setup(format!("pidfd_open: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: fd was just returned by pidfd_open.
    let pidfd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    Ok((c, pidfd))
}

/// Ends the command if it still runs (the link stopped by a signal, its duration or an
/// error: SIGTERM, then SIGKILL after 2 s) and returns its exit code as a shell gives it.
fn end_command(mut c: std::process::Child, duration_over: bool) -> i32 {
    if c.try_wait().ok().flatten().is_none() {
        // The link ended first: the command's status will be that of the SIGTERM sent
        // here, which is said rather than left as a bare 143.
        if duration_over && !signalled() {
            cclab_units::errln!("cclab emu: --duration is over; stopping the command (SIGTERM), whose status is returned");
        }
        // SAFETY: signalling our own child.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while c.try_wait().ok().flatten().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = c.kill();
    }
    c.wait().map_or(0, |st| st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0)))
}

pub fn run_udp(args: &UdpArgs) -> Result<(), EmuError> {
    let up = parse_direction("--uplink", &args.uplink)?;
    let down = parse_direction("--downlink", &args.downlink)?;
    let duration =
        parse_duration(&args.duration).map_err(|e| EmuError::Config(format!("--duration: {e}")))?;
    if duration == Duration::ZERO {
        return Err(EmuError::Config(format!(
            "--duration: \"{}\" is zero; allowed: a positive duration such as 10s",
            args.duration
        )));
    }
    let bytes = match &args.bytes {
        Some(b) => Some(
            cclab_units::parse_bytes(b).map_err(|e| EmuError::Config(format!("--bytes: {e}")))?,
        ),
        None => None,
    };
    if bytes == Some(0) {
        return Err(EmuError::Config(format!(
            "--bytes: \"{}\" is zero; allowed: at least 1B (omit --bytes for a bulk flow)",
            args.bytes.as_deref().unwrap_or_default()
        )));
    }
    // Checked before anything is created.
    let params = udp_params(&args.cc, &args.params)?;
    let mut csv = args.csv.as_deref().map(StagedCsv::create).transpose()?;
    netns::preflight()?;
    netns::reap();
    let flow = crate::udp::UdpFlow {
        cc: args.cc.clone(),
        params,
        tcp: cclab_sim::TcpConfig::default(),
        bytes,
        duration,
        sample_interval: Duration::from_millis(10),
    };
    // A signal stops the flow and the link through their normal ends (the namespaces go
    // with the harness), instead of killing the process with them in place.
    let _restore = signal_handlers_until_dropped();
    let h = crate::harness::Harness::start_with(&up, &down, 1, true)?;
    let ran = crate::udp::run_flow(&h, &flow).and_then(|r| Ok((r, h.finish()?)));
    // Interrupted, the samples taken so far are still worth keeping.
    if signalled() {
        if let (Ok((r, _)), Some(c)) = (&ran, csv.take()) {
            let dest = c.dest.clone();
            match c.finish(r) {
                Ok(()) => cclab_units::errln!(
                    "wrote the {} samples taken before the signal to {}",
                    r.samples.len(),
                    dest.display()
                ),
                Err(e) => cclab_units::errln!("warning: {e}"),
            }
        }
    }
    let (r, fwd) = unless_signalled(ran)?;
    outln(&format!(
        "cclab emu udp: {} over {}: delivered {} B, goodput {:.3} Mbit/s, {} retransmits, {} timeouts{}",
        args.cc,
        args.duration,
        r.delivered_bytes,
        r.goodput_bps / 1e6,
        r.retransmits,
        r.timeouts,
        r.completed_at.map(|t| format!(", completed at {:.3} s", t.as_secs_f64())).unwrap_or_default()
    ));
    print_summary(&fwd, &mut std::io::stdout());
    if let Some(c) = csv {
        c.finish(&r)?;
    }
    Ok(())
}

/// `--csv`'s file, written aside (`.NAME.part`) and renamed into place when complete.
/// The part is made before the run, so that a path that cannot be written is refused at
/// once rather than after the run; it is removed if the run never writes it.
struct StagedCsv {
    part: std::path::PathBuf,
    dest: std::path::PathBuf,
}

impl StagedCsv {
    fn create(dest: &std::path::Path) -> Result<StagedCsv, EmuError> {
        let refuse = |why: String| EmuError::Config(format!("--csv: {} {why}", dest.display()));
        if dest.is_dir() {
            return Err(refuse("is a folder; allowed: a file's path".into()));
        }
        let name = dest.file_name().ok_or_else(|| refuse("names no file".into()))?;
        let part = dest.with_file_name(format!(".{}.part", name.to_string_lossy()));
        std::fs::File::create(&part).map_err(|e| refuse(format!("cannot be written: {e}")))?;
        Ok(StagedCsv { part, dest: dest.to_path_buf() })
    }

    fn finish(self, r: &crate::udp::UdpRun) -> Result<(), EmuError> {
        write_samples_csv(&self.part, r)?;
        std::fs::rename(&self.part, &self.dest)
            .map_err(|e| EmuError::Io(format!("cannot write {}: {e}", self.dest.display())))
    }
}

impl Drop for StagedCsv {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.part); // gone already once renamed
    }
}

/// `--param NAME=VALUE`s for the algorithm `cc`: parameters it has, each with a value of
/// its kind (a number, or `true`/`false` for a switch) in its range. Errors name the
/// parameter, the value and what is allowed.
fn udp_params(cc: &str, given: &[String]) -> Result<Vec<(String, f64)>, EmuError> {
    let algo = crate::udp::algorithm(cc, &[])?;
    let mut params = Vec::new();
    for p in given {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| EmuError::Config(format!("--param: \"{p}\" is not NAME=VALUE")))?;
        let spec = algo.spec(k.trim()).map_err(|e| EmuError::Config(format!("--param: {e}")))?;
        let value = spec.parse_text(v).ok_or_else(|| {
            EmuError::Config(format!(
                "--param {}: \"{}\" is not valid; allowed: {}",
                spec.name,
                v.trim(),
                spec.allowed()
            ))
        })?;
        params.push((spec.name.to_string(), value));
    }
    // The ranges.
    crate::udp::algorithm(cc, &params)?;
    Ok(params)
}

/// The flow's samples as CSV (`--csv`): the simulator's flows.csv columns, then the
/// retransmit count and the algorithm's own variables.
fn write_samples_csv(p: &std::path::Path, r: &crate::udp::UdpRun) -> Result<(), EmuError> {
    let mut text = String::from(
        "time_s,flow,cwnd_pkts,ssthresh_pkts,srtt_ms,inflight_pkts,delivered_bytes,retransmits",
    );
    if let Some(first) = r.samples.first() {
        for (k, _) in &first.cc {
            text += &format!(",cc_{k}");
        }
    }
    text.push('\n');
    for s in &r.samples {
        text += &format!(
            "{:.3},{},{},{},{:.3},{},{},{}",
            s.time.as_secs_f64(),
            s.flow,
            s.cwnd_pkts,
            s.ssthresh_pkts,
            s.srtt.as_millis_f64(),
            s.inflight_pkts,
            s.delivered_bytes,
            s.retransmits
        );
        for (_, v) in &s.cc {
            text += &format!(",{v}");
        }
        text.push('\n');
    }
    std::fs::write(p, text)
        .map_err(|e| EmuError::Io(format!("cannot write {}: {e}", p.display())))?;
    Ok(())
}

fn direction_line(name: &str, s: &DirectionStats) -> String {
    let us = |d: Duration| d.as_nanos() as f64 / 1e3;
    format!(
        "{name:<9} {:>10} {:>13} {:>8} {:>8} {:>9.1} {:>9.1} {:>9.1}",
        s.delivered_packets,
        s.delivered_bytes,
        s.queue_drops,
        s.random_losses,
        us(s.lateness.quantile(0.5)),
        us(s.lateness.quantile(0.99)),
        us(s.lateness.max())
    )
}

/// The end-of-run table: deliveries, drops and departure lateness per direction.
pub fn print_summary(fwd: &Forwarder, out: &mut dyn Write) {
    let secs = fwd.elapsed().as_secs_f64();
    let _ = writeln!(out, "cclab emu: ran {secs:.3} s");
    let _ = writeln!(
        out,
        "direction  delivered         bytes    drops   losses  late_p50  late_p99  late_max (us)"
    );
    for (i, name) in ["uplink", "downlink"].iter().enumerate() {
        let _ = writeln!(out, "{}", direction_line(name, &fwd.dirs[i].stats));
    }
}

fn summary_json(fwd: &Forwarder) -> String {
    let us = |x: Duration| Json::f(x.as_nanos() as f64 / 1e3, 1);
    let direction = |d: &DirectionStats| {
        Json::Obj(vec![
            ("arrived_packets", Json::u(d.arrived_packets)),
            ("delivered_packets", Json::u(d.delivered_packets)),
            ("delivered_bytes", Json::u(d.delivered_bytes)),
            ("queue_drops", Json::u(d.queue_drops)),
            ("random_losses", Json::u(d.random_losses)),
            ("write_errors", Json::u(d.write_errors)),
            (
                "lateness_us",
                Json::Obj(vec![
                    ("p50", us(d.lateness.quantile(0.5))),
                    ("p99", us(d.lateness.quantile(0.99))),
                    ("max", us(d.lateness.max())),
                ]),
            ),
        ])
    };
    Json::Obj(vec![
        ("duration_s", Json::f(fwd.elapsed().as_secs_f64(), 6)),
        ("uplink", direction(&fwd.dirs[0].stats)),
        ("downlink", direction(&fwd.dirs[1].stats)),
    ])
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The shape the `cclab` binary gives it: `cclab emu ...` as one subcommand.
    #[derive(Parser, Debug)]
    struct Top {
        #[command(subcommand)]
        cmd: TopCmd,
    }
    #[derive(clap::Subcommand, Debug)]
    enum TopCmd {
        Emu(EmuArgs),
    }

    fn parse(args: &[&str]) -> EmuArgs {
        let TopCmd::Emu(a) = Top::try_parse_from(args).unwrap().cmd;
        a
    }

    #[test]
    fn parses_as_a_subcommand_of_cclab() {
        let a = parse(&[
            "cclab",
            "emu",
            "--uplink",
            "10Mbps,delay=5ms",
            "--duration",
            "2s",
            "--",
            "sh",
            "-c",
            "echo hi",
        ]);
        assert!(a.action.is_none());
        assert_eq!(a.link.uplink, "10Mbps,delay=5ms");
        assert_eq!(a.link.command, vec!["sh", "-c", "echo hi"]);
        assert!(matches!(
            parse(&["cclab", "emu", "cleanup", "--all"]).action,
            Some(EmuAction::Cleanup { all: true })
        ));
        assert!(
            matches!(parse(&["cclab", "emu", "bench", "--quick"]).action, Some(EmuAction::Bench(ref b)) if b.quick)
        );
        assert!(Top::try_parse_from(["cclab", "emu", "--bogus"]).is_err());
    }

    #[test]
    fn bad_options_are_errors_before_anything_is_created() {
        let mut a = parse(&["cclab", "emu", "--duration", "soon"]);
        assert!(run(&a).unwrap_err().to_string().contains("--duration"));
        a.link.duration = Some("0s".into());
        let e = run(&a).unwrap_err().to_string();
        assert!(e.contains("--duration: \"0s\" is zero"), "{e}");
        a.link.duration = None;
        a.link.sample = "10us".into();
        assert!(run(&a).unwrap_err().to_string().contains("--sample"));
        a.link.sample = "10ms".into();
        a.link.downlink = "rate=fast".into();
        assert!(run(&a).unwrap_err().to_string().contains("--downlink: rate"));
    }

    #[test]
    fn udp_refuses_a_zero_duration_or_transfer_before_anything_is_created() {
        let udp = |extra: &[&str]| {
            let mut args = vec!["cclab", "emu", "udp"];
            args.extend_from_slice(extra);
            let Some(EmuAction::Udp(u)) = parse(&args).action else { panic!("not udp") };
            run_udp(&u).unwrap_err().to_string()
        };
        let e = udp(&["--duration", "0s"]);
        assert!(e.contains("--duration") && e.contains("\"0s\"") && e.contains("positive"), "{e}");
        let e = udp(&["--bytes", "0B"]);
        assert!(e.contains("--bytes") && e.contains("\"0B\"") && e.contains("at least 1B"), "{e}");
    }

    #[test]
    fn udp_params_take_switches_as_true_or_false_and_name_what_is_allowed() {
        let params = |cc: &str, given: &[&str]| {
            let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
            udp_params(cc, &given).map_err(|e| e.to_string())
        };
        // The words the errors and `cclab algorithms` give for a switch are taken.
        let p = params("cubic", &["hystart=true", "fast_convergence=FALSE", "beta=0.5"]).unwrap();
        assert_eq!(
            p,
            [("hystart".into(), 1.0), ("fast_convergence".into(), 0.0), ("beta".into(), 0.5)]
        );
        assert_eq!(params("tuner", &["hystart=0"]).unwrap(), [("hystart".into(), 0.0)]);
        let e = params("cubic", &["hystart=maybe"]).unwrap_err();
        assert!(
            e.contains("--param hystart: \"maybe\" is not valid; allowed: true or false"),
            "{e}"
        );
        let e = params("cubic", &["beta=high"]).unwrap_err();
        assert!(e.contains("--param beta: \"high\" is not valid; allowed:"), "{e}");
        let e = params("cubic", &["hystart=2"]).unwrap_err();
        assert!(e.contains("\"hystart\" = 2 is out of range"), "{e}");
        let e = params("cubic", &["gamma=1"]).unwrap_err();
        assert!(e.contains("no parameter \"gamma\""), "{e}");
        let e = params("cubic", &["beta"]).unwrap_err();
        assert!(e.contains("\"beta\" is not NAME=VALUE"), "{e}");
    }
}
