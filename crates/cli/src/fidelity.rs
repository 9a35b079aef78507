//! `cclab fidelity`: how flows share a bottleneck in the simulator against the real kernel
//! (issue 10). Every scenario of the matrix (`scenarios/fidelity/*.toml`, each saying in
//! its opening comment why it is there) runs in the simulator, by default twenty times
//! with the testbed's hosts modelled ([`Hosts`]), and `--runs` times on real TCP through
//! the emulator (the kernel is not seeded, so real runs differ), each into an ordinary
//! results folder (`cclab run` and `cclab testbed run`'s own writers).
//! [`crate::fidelity_report`] then reads those folders back and writes the comparison.
//!
//! Layout of `--out` (default `results/fidelity`, `results/fidelity-quick` with `--quick`):
//! `<scenario>/sim/`, `<scenario>/real-<k>/`, `<scenario>/scenario.toml` (the text that ran,
//! with its overrides), `cwnd-<scenario>.svg`, `fidelity.json`, `report.html`.
//!
//! `tuner` flows run on the kernel as the eBPF twin `cclab_tuner`, whose parameters are
//! global: this command loads it (unless it is loaded) and afterwards unloads it, also
//! when a run fails; the testbed writes the flows' parameters into its map for each run
//! and puts the earlier values back (`cclab_emu::kernel_algos`).

use crate::fidelity_report::{self, Measured};
use crate::series::SeriesFormat;
use cclab_emu::testbed::{EmulatorTiming, Transport};
use cclab_kernel::{Algo, Kernel};
use cclab_scenario::Scenario;
use cclab_units::Duration;
use std::path::{Path, PathBuf};

/// The `--quick` matrix: short, and the cases the test suite can check.
const QUICK: &[&str] = &["rtt1-cubic-cubic", "cubic-vs-reno", "rtt4-cubic-cubic"];
/// `--quick` runs each scenario this long.
const QUICK_DURATION: &str = "10s";

#[derive(clap::Args)]
pub struct Args {
    /// A few short scenarios (the test suite runs this).
    #[arg(long)]
    pub quick: bool,
    /// Real runs per scenario.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = crate::run::whole_in::<1, 20>)]
    pub runs: u64,
    /// Repeat a real run up to this many times while the emulator's timing says this
    /// machine disturbed it (more than 1% of its packets released later than a packet
    /// time at the bottleneck, or a flow calling connect() more than a packet time after
    /// its start: kernel.json's `emulator`), keeping the least disturbed attempt. 0 keeps
    /// every run as it came, with a warning.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::run::whole_in::<0, 20>)]
    pub redo_disturbed: u64,
    /// Output folder [default: results/fidelity, or results/fidelity-quick].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Folder of the matrix's scenario files [default: scenarios/fidelity].
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
    /// Rerun only the simulator and rebuild the report from the real runs already in
    /// --out (no root needed); refused where a scenario's text changed since.
    #[arg(long)]
    pub sim_only: bool,
    /// Keep the real runs already in --out and add --runs more to each scenario,
    /// numbered and seeded after them (real run k has simulated run k's seed), so that
    /// runs made at different times are judged together; refused where a scenario's text
    /// changed since. Without it, real runs beyond --runs left by an earlier report are
    /// removed.
    #[arg(long, conflicts_with = "sim_only")]
    pub more_runs: bool,
    /// What the simulated hosts do beyond each file's text: `testbed` models the
    /// testbed's hosts as measured on the reference machine (host_delay 30us, read_delay
    /// 47us, psh, 20 runs; docs/fidelity.md, "The testbed's hosts by default"); `files`
    /// runs each file as it is (deterministic, one run). The flags below override single
    /// values of either.
    #[arg(long, value_enum, default_value_t = Hosts::Testbed)]
    pub hosts: Hosts,
    /// Give every simulated flow this host processing time (the `host_delay` flow key,
    /// e.g. 60us; at most 10ms); the kernel's hosts have their own [default: 30us with
    /// --hosts testbed, each file's with --hosts files].
    #[arg(long, value_parser = host_time_arg)]
    pub host_delay: Option<Duration>,
    /// Give every simulated flow's receiving application this time to read a segment
    /// (the `read_delay` flow key, e.g. 47us; at most 10ms): the ACKs Linux leaves to the
    /// read leave that much later [default: 47us with --hosts testbed, each file's with
    /// --hosts files].
    #[arg(long, value_parser = host_time_arg)]
    pub read_delay: Option<Duration>,
    /// Give every simulated flow this jiffies frequency (the `hz` flow key: 100, 250, 300
    /// or 1000), e.g. the testbed kernel's CONFIG_HZ [default: each file's].
    #[arg(long, value_parser = hz_arg)]
    pub hz: Option<u32>,
    /// Run the simulator with this seed instead of each file's (with --host-delay, each
    /// seed is another draw of the hosts' processing times). Real run k takes the seed of
    /// simulated run k, for the emulator's random draws.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::run::seed_value)]
    pub sim_seed: Option<u64>,
    /// Simulated runs per scenario, with consecutive seeds from --sim-seed (or the
    /// file's); the report compares their mean with the real runs'. More than one is
    /// only useful where the run draws random numbers (--host-delay, random loss, RED)
    /// [default: 20 with --hosts testbed, 1 with --hosts files].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::run::whole_in::<1, 20>)]
    pub sim_runs: Option<u64>,
    /// Spread the senders' tick phase (the `tick_phase` flow key) evenly over the
    /// --sim-runs runs: run k of N (from 0) gives every flow k/N of its tick. The
    /// kernel's jiffies are at an arbitrary point of a tick when a real run starts, and
    /// CUBIC's clock counts them; this samples that spread. Needs --sim-runs 2 or more.
    #[arg(long)]
    pub tick_phases: bool,
    /// Give every simulated flow the `psh` flow key: PSH on the last segment of each GSO
    /// packet of two or more, a packet the window cuts short held for an ACK due within
    /// 1 ms, and a receiver that ACKs a PSH segment at once, as the kernel's hosts do
    /// [default: on with --hosts testbed, each file's with --hosts files].
    #[arg(long)]
    pub psh: bool,
}

/// The simulated hosts' model in `cclab fidelity` (`--hosts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Hosts {
    /// The testbed's hosts as measured on the reference machine.
    Testbed,
    /// Each scenario file as it is.
    Files,
}

impl Hosts {
    pub fn name(self) -> &'static str {
        match self {
            Hosts::Testbed => "testbed",
            Hosts::Files => "files",
        }
    }
}

/// `--hosts testbed`: what the testbed's hosts were measured to do on the reference
/// machine (a 2-core Intel Xeon KVM guest, kernel 6.18; docs/fidelity.md, "The testbed's
/// hosts by default"; `scripts/host-times.sh` measures both). The host delay is spread
/// uniformly from zero, so 30 us is twice the median time the kernel's senders took to
/// answer an ACK there (15 to 17 us, from the emulator's packet log); 47 us is the median
/// time from a segment's arrival to an ACK sent after the application's read (kernel
/// events). Neither was chosen by the matrix: the counts hold from 15 to 120 us and from
/// 30 to 60 us.
const TESTBED_HOST_DELAY: Duration = Duration::from_micros(30);
const TESTBED_READ_DELAY: Duration = Duration::from_micros(47);
/// The host delay draws a time per ACK, so one simulated run is one sample of many; the
/// report judges the mean of this many (seeds in a row).
const TESTBED_SIM_RUNS: u64 = 20;

fn hz_arg(s: &str) -> Result<u32, String> {
    use cclab_sim::validate::{LINUX_HZ, LINUX_HZ_ALLOWED};
    match s.parse::<u32>() {
        Ok(hz) if LINUX_HZ.contains(&hz) => Ok(hz),
        _ => Err(format!("{s} is not allowed; allowed: {LINUX_HZ_ALLOWED}")),
    }
}

/// A host's time (`--host-delay`, `--read-delay`): a duration up to
/// [`cclab_sim::validate::MAX_HOST_DELAY`].
fn host_time_arg(s: &str) -> Result<Duration, String> {
    let d = cclab_units::parse_duration(s).map_err(|e| e.to_string())?;
    if d > cclab_sim::validate::MAX_HOST_DELAY {
        return Err(format!(
            "{s} is too long; allowed: {} to {}",
            Duration::ZERO,
            cclab_sim::validate::MAX_HOST_DELAY
        ));
    }
    Ok(d)
}

/// What the simulator's side runs with beyond each file's text (see [`Args`]).
#[derive(Clone, Copy)]
pub struct SimSide {
    /// The model the values below came from (`--hosts`), before any single flag.
    pub hosts: Hosts,
    pub host_delay: Option<Duration>,
    pub read_delay: Option<Duration>,
    pub hz: Option<u32>,
    pub seed: Option<u64>,
    pub runs: u64,
    /// Spread the flows' tick phase over the runs (`--tick-phases`).
    pub tick_phases: bool,
    /// Turn on every flow's `psh` (`--psh`).
    pub psh: bool,
}

impl SimSide {
    /// `--hosts`' values, each replaced by its own flag where one was given.
    fn of(args: &Args) -> SimSide {
        let testbed = args.hosts == Hosts::Testbed;
        let preset = |value: Duration| testbed.then_some(value);
        SimSide {
            hosts: args.hosts,
            host_delay: args.host_delay.or(preset(TESTBED_HOST_DELAY)),
            read_delay: args.read_delay.or(preset(TESTBED_READ_DELAY)),
            hz: args.hz,
            seed: args.sim_seed,
            runs: args.sim_runs.unwrap_or(if testbed { TESTBED_SIM_RUNS } else { 1 }),
            tick_phases: args.tick_phases,
            psh: args.psh || testbed,
        }
    }

    /// The scenario of simulated run `k` (from 0): `scn` with this side's overrides and
    /// the k-th seed from the first.
    fn apply(&self, scn: &Scenario, k: u64) -> Scenario {
        let mut scn = scn.clone();
        for f in &mut scn.config.flows {
            if let Some(d) = self.host_delay {
                f.tcp.host_delay = d;
            }
            if let Some(d) = self.read_delay {
                f.tcp.read_delay = d;
            }
            if let Some(hz) = self.hz {
                f.tcp.hz = hz;
            }
            f.tcp.psh |= self.psh;
            if self.tick_phases {
                f.tcp.tick_phase = Duration::from_micros(f.tcp.tick().as_micros() * k / self.runs);
            }
        }
        scn.config.seed = self.seed_of(&scn, k);
        scn
    }

    /// The seed of simulated run `k` (from 0), which real run `k + 1` shares: the
    /// emulator draws its random losses, RED's and PIE's drops and cross traffic from the
    /// same streams as the simulator (`cclab_sim::rng::stream`), so with one seed the
    /// real runs would all lose the same packets, the n-th at the bottleneck in every
    /// run, and their mean would be of one draw where the simulated runs' is of twenty.
    fn seed_of(&self, scn: &Scenario, k: u64) -> u64 {
        self.seed.unwrap_or(scn.config.seed).wrapping_add(k)
    }

    /// The scenario of real run `k` (from 1): the file's, with simulated run `k`'s seed.
    fn real(&self, scn: &Scenario, k: u64) -> Scenario {
        let mut scn = scn.clone();
        scn.config.seed = self.seed_of(&scn, k - 1);
        scn
    }
}

/// The folder of simulated run `k` (from 0) of a scenario: `sim`, then `sim-2`, `sim-3`...
pub fn sim_folder(folder: &Path, k: u64) -> PathBuf {
    match k {
        0 => folder.join("sim"),
        _ => folder.join(format!("sim-{}", k + 1)),
    }
}

/// One scenario of the matrix: its file, what ran, and why it is in the matrix.
pub struct Case {
    pub stem: String,
    pub file: PathBuf,
    pub scn: Scenario,
    /// The file's opening comment.
    pub why: String,
    /// The file's text and the overrides applied to it (kept beside the real runs).
    pub text: String,
}

pub fn main(args: Args) -> Result<(), String> {
    let side = SimSide::of(&args);
    if args.tick_phases && side.runs < 2 {
        return Err(format!(
            "--tick-phases spreads the tick phase over the simulated runs, and --sim-runs is {}; allowed: --sim-runs 2 to 20 with it",
            side.runs
        ));
    }
    let dir = crate::reproduce::repo_folder(
        args.scenarios.as_deref(),
        "scenarios/fidelity",
        "--scenarios",
    )?;
    let cases = load_cases(&dir, args.quick)?;
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(if args.quick { "fidelity-quick" } else { "fidelity" })
    });
    // The flag (at most one: clap refuses both) that keeps the real runs in `out`.
    let reuse = if args.sim_only {
        Some("--sim-only")
    } else if args.more_runs {
        Some("--more-runs")
    } else {
        None
    };
    // What the real runs need is checked before the folder is made: a refused run leaves
    // nothing behind.
    if !args.sim_only {
        real_runs_possible(&cases)?;
    }
    prepare_out(&out, reuse)?;
    // The real runs kept must be of the texts that run now: checked for every scenario
    // before anything in `out` is touched.
    if let Some(flag) = reuse {
        for case in &cases {
            check_unchanged(case, &out.join(&case.stem), flag)?;
        }
    }
    let mut measured = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        cclab_units::errln!("[{}/{}] {}", n + 1, cases.len(), case.stem);
        let folder = out.join(&case.stem);
        run_sim(case, &folder, side)?;
        if !args.sim_only {
            let first = if args.more_runs {
                real_runs_in(&folder) + 1
            } else {
                remove_real_runs_after(&folder, args.runs)?;
                1
            };
            let runs = first..=first + args.runs - 1;
            run_real(case, &folder, side, runs, args.redo_disturbed)?;
        }
        measured.push(Measured::read(case, &folder)?);
    }
    let text = fidelity_report::write(&out, &measured, args.quick, side)?;
    crate::format::out(&text);
    crate::format::outln(&format!("report: {}", out.join("report.html").display()));
    Ok(())
}

/// The matrix's scenario files in name order (only [`QUICK`]'s, shortened, with `quick`).
fn load_cases(dir: &Path, quick: bool) -> Result<Vec<Case>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    if quick {
        for q in QUICK {
            if !files.iter().any(|f| stem(f).as_deref() == Some(q)) {
                return Err(format!("{}: the quick matrix needs {q}.toml", dir.display()));
            }
        }
        files.retain(|f| stem(f).is_some_and(|s| QUICK.contains(&s.as_str())));
    }
    if files.is_empty() {
        return Err(format!("{}: no scenario files (*.toml)", dir.display()));
    }
    let overrides: Vec<String> =
        if quick { vec![format!("duration=\"{QUICK_DURATION}\"")] } else { Vec::new() };
    files.iter().map(|f| load_case(f, &overrides)).collect()
}

fn load_case(file: &Path, overrides: &[String]) -> Result<Case, String> {
    let source = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let scn = cclab_scenario::load_file(file, overrides).map_err(|e| e.to_string())?;
    let why = source
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim())
        .collect::<Vec<_>>()
        .join(" ");
    let mut text = source.clone();
    for o in overrides {
        text.push_str(&format!("# --set {o}\n"));
    }
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Case { stem, file: file.to_path_buf(), scn, why, text })
}

/// Creates `out`; refuses a folder that is neither empty nor an earlier report's.
/// `reuse`, the flag that keeps its real runs (`--sim-only`, `--more-runs`), needs an
/// earlier report's folder.
fn prepare_out(out: &Path, reuse: Option<&str>) -> Result<(), String> {
    let ours = out.join("fidelity.json").is_file();
    if let (Some(flag), false) = (reuse, ours) {
        return Err(format!(
            "{flag}: {} holds no earlier report (fidelity.json); run without {flag} first",
            out.display()
        ));
    }
    crate::out_folder::check(out, "fidelity", "fidelity.json")?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))
}

/// Real runs need root, TUN, and (for `tuner` flows) the BPF programs.
fn real_runs_possible(cases: &[Case]) -> Result<(), String> {
    if !cclab_kernel::loader::is_root() {
        return Err("cclab fidelity runs real TCP between network namespaces: it needs root (--sim-only rebuilds the report from earlier real runs)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err("cclab fidelity needs /dev/net/tun for the emulator".into());
    }
    let twins = cases.iter().any(|c| c.scn.config.flows.iter().any(|f| twin_of(&f.cc).is_some()));
    if let (true, Some(why)) = (twins, cclab_kernel::bpf_unavailable()) {
        return Err(format!("the matrix has tuner flows, which run on the kernel as cclab_tuner, but the BPF programs were not built: {why}"));
    }
    Ok(())
}

/// The eBPF twin a cclab algorithm runs as on the kernel, if it has one.
fn twin_of(cc: &str) -> Option<Algo> {
    Algo::parse(cc).ok()
}

/// The simulated runs of one scenario, after removing any an earlier report had beyond
/// them (so that the report reads exactly these).
fn run_sim(case: &Case, folder: &Path, side: SimSide) -> Result<(), String> {
    for k in side.runs.. {
        let stale = sim_folder(folder, k);
        if !stale.is_dir() {
            break;
        }
        std::fs::remove_dir_all(&stale)
            .map_err(|e| format!("cannot remove {}: {e}", stale.display()))?;
    }
    let file = case.file.display().to_string();
    for k in 0..side.runs {
        let scn = side.apply(&case.scn, k);
        crate::run::execute(
            &scn,
            &file,
            (&sim_folder(folder, k), SeriesFormat::Auto, None),
            &[],
            false,
        )?;
    }
    Ok(())
}

/// How many real runs `folder` holds (`real-1` to `real-<n>`, as the report reads them).
pub fn real_runs_in(folder: &Path) -> u64 {
    (1..).take_while(|k| real_folder(folder, *k).is_dir()).count() as u64
}

/// Real run `k`'s results folder in a scenario's `folder`.
pub fn real_folder(folder: &Path, k: u64) -> PathBuf {
    folder.join(format!("real-{k}"))
}

/// Removes the real runs an earlier report left beyond `runs`, so that the report reads
/// only the runs of this command (and never those of another text of the scenario).
fn remove_real_runs_after(folder: &Path, runs: u64) -> Result<(), String> {
    for k in runs + 1..=real_runs_in(folder) {
        let stale = real_folder(folder, k);
        std::fs::remove_dir_all(&stale)
            .map_err(|e| format!("cannot remove {}: {e}", stale.display()))?;
    }
    Ok(())
}

/// The real runs `runs` of one scenario, after which its text is kept beside them. A
/// disturbed run (too many packets late, or a flow late to start:
/// [`EmulatorTiming::disturbed`]) is repeated up to `redo` times, with its seed; the least
/// disturbed attempt is kept.
fn run_real(
    case: &Case,
    folder: &Path,
    side: SimSide,
    runs: std::ops::RangeInclusive<u64>,
    redo: u64,
) -> Result<(), String> {
    let cfg = &case.scn.config;
    // The testbed runs each twin with the flows' parameters and puts the map back after.
    let mut twins: Vec<Algo> = cfg.flows.iter().filter_map(|f| twin_of(&f.cc)).collect();
    twins.dedup();
    let _loaded = twins.into_iter().map(TwinGuard::load).collect::<Result<Vec<_>, _>>()?;
    let transports = vec![Transport::Kernel; cfg.flows.len()];
    let last = *runs.end();
    for k in runs {
        let scn = side.real(&case.scn, k);
        cclab_units::errln!(
            "  real run {k}/{last} ({} s, seed {})",
            cfg.duration.as_secs_f64(),
            scn.config.seed
        );
        let out = real_folder(folder, k);
        let attempt = folder.join(format!("real-{k}-attempt"));
        let aside = folder.join(format!("real-{k}-aside"));
        let mut kept = real_run(case, &scn, &transports, &out, k)?;
        // Each attempt's own disturbance is told as it ends, the kept one's at the end
        // (a later attempt can be worse than the one kept).
        let (mut latest, mut kept_attempt) = (kept.clone(), 1);
        for redone in 1..=redo {
            if !kept.disturbed() {
                break;
            }
            cclab_units::errln!(
                "  real run {k}, attempt {redone}: {}, redone ({redone} of at most {redo})",
                latest.disturbance()
            );
            latest = real_run(case, &scn, &transports, &attempt, k)?;
            if latest.less_disturbed_than(&kept) {
                crate::results::move_into_place(&attempt, &out, &aside)?;
                (kept, kept_attempt) = (latest.clone(), redone + 1);
            }
        }
        if redo > 0 && kept.disturbed() {
            cclab_units::errln!(
                "  real run {k}, attempt {}: {}; kept attempt {kept_attempt} ({})",
                redo + 1,
                latest.disturbance(),
                kept.disturbance()
            );
        }
        let _ = std::fs::remove_dir_all(&attempt);
        crate::testbed::warn_if_disturbed(&kept);
    }
    let keep = folder.join("scenario.toml");
    std::fs::write(&keep, &case.text).map_err(|e| format!("cannot write {}: {e}", keep.display()))
}

/// Real run `k` of `case`, as `scn`, into `out`; how late its emulator was.
fn real_run(
    case: &Case,
    scn: &Scenario,
    transports: &[Transport],
    out: &Path,
    k: u64,
) -> Result<EmulatorTiming, String> {
    let (_, emulator) =
        crate::testbed::execute(scn, transports, (out, SeriesFormat::Auto, None), false)
            .map_err(|e| format!("{}: real run {k}: {e}", case.stem))?;
    Ok(emulator)
}

/// `--sim-only` and `--more-runs` (`flag`): the real runs beside the report must be of
/// this very text.
fn check_unchanged(case: &Case, folder: &Path, flag: &str) -> Result<(), String> {
    let keep = folder.join("scenario.toml");
    match std::fs::read_to_string(&keep) {
        Ok(t) if t == case.text => Ok(()),
        Ok(_) => Err(format!(
            "{flag}: {} changed since its real runs ({}); rerun without {flag}",
            case.file.display(),
            keep.display()
        )),
        Err(_) => {
            Err(format!("{flag}: {} has no real runs ({} missing)", case.stem, keep.display()))
        }
    }
}

/// An eBPF twin loaded for the matrix if it was not; dropping it unloads what it loaded.
struct TwinGuard {
    algo: Algo,
    loaded_here: bool,
}

impl TwinGuard {
    fn load(algo: Algo) -> Result<TwinGuard, String> {
        let k = Kernel::default();
        let loaded_here = !k.is_loaded(algo);
        if loaded_here {
            k.load(algo).map_err(|e| e.to_string())?;
        }
        Ok(TwinGuard { algo, loaded_here })
    }
}

impl Drop for TwinGuard {
    fn drop(&mut self) {
        if self.loaded_here {
            let _ = Kernel::default().unload(self.algo);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(seed: Option<u64>) -> SimSide {
        SimSide {
            hosts: Hosts::Testbed,
            host_delay: Some(TESTBED_HOST_DELAY),
            read_delay: Some(TESTBED_READ_DELAY),
            hz: None,
            seed,
            runs: TESTBED_SIM_RUNS,
            tick_phases: false,
            psh: true,
        }
    }

    fn scenario() -> Scenario {
        let text = "seed = 7\nduration = \"2s\"\n[bottleneck]\nrate = \"20Mbps\"\ndelay = \"10ms\"\nloss = 0.002\n[[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\n";
        cclab_scenario::parse_str(text, "t.toml", None, "t", &[]).unwrap()
    }

    #[test]
    fn real_run_k_draws_with_simulated_run_ks_seed() {
        let scn = scenario();
        for seed in [None, Some(100)] {
            let side = side(seed);
            let real: Vec<u64> = (1..=3).map(|k| side.real(&scn, k).config.seed).collect();
            let sim: Vec<u64> = (0..3).map(|k| side.apply(&scn, k).config.seed).collect();
            assert_eq!(real, sim, "--sim-seed {seed:?}");
            let first = seed.unwrap_or(7);
            assert_eq!(real, vec![first, first + 1, first + 2], "--sim-seed {seed:?}");
        }
    }

    #[test]
    fn a_real_run_takes_only_the_seed_of_the_simulated_side() {
        let scn = scenario();
        let real = side(None).real(&scn, 2);
        let mut expected = scn.clone();
        expected.config.seed = 8;
        // Not the simulated hosts' settings: they model what the real hosts do anyway.
        assert_eq!(format!("{:?}", real.config), format!("{:?}", expected.config));
    }
}
