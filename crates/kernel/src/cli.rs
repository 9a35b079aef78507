//! `cclab kernel ...`: the subcommand, as a clap type the main binary embeds
//! (`Kernel(cclab_kernel::cli::Args)`) plus [`run`].

use crate::algo::{parse_value, show_value, Algo};
use crate::error::Error;
use crate::loader::{self, Kernel, Unloaded};
use crate::route::{RouteChange, Routes};
use crate::run_params;
use cclab_cc::tcp_limits::{TcpLimit, INITCWND, RTO_MIN_MS};
use cclab_units::stdout::outln;
use clap::{Args as ClapArgs, Subcommand};

/// Real kernel: cclab's algorithms as eBPF struct_ops, tuned live (root).
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The help of an algorithm argument: cclab's BPF algorithms by both names (a test
/// checks it against [`Algo::ALL`]).
const ALGO_HELP: &str = "cclab_tuner or cclab_cubic_fit (or tuner, cubic-fit)";
const ALGOS_HELP: &str =
    "cclab's BPF algorithms, all by default: cclab_tuner, cclab_cubic_fit (or tuner, cubic-fit)";

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Register algorithms (all by default); they stay registered after this command exits.
    Load {
        #[arg(value_name = "ALGO", help = ALGOS_HELP)]
        algos: Vec<String>,
    },
    /// Show which algorithms are loaded and their current parameters.
    List,
    /// Show the parameters of a loaded algorithm (and CUBIC-FIT's N, alpha, RTTs).
    Get {
        #[arg(help = ALGO_HELP)]
        algo: String,
    },
    /// Change parameters of a loaded algorithm on running flows: `set cclab_tuner beta=0.5`.
    Set {
        #[arg(help = ALGO_HELP)]
        algo: String,
        /// Parameters and their values: numbers, or true/false for switches; `cclab
        /// algorithms tuner` (or cubic-fit) names each parameter and what it allows.
        #[arg(required = true, value_name = "KEY=VALUE")]
        changes: Vec<String>,
    },
    /// Unregister algorithms (all by default) and remove their pins, also after a crash.
    Unload {
        #[arg(value_name = "ALGO", help = ALGOS_HELP)]
        algos: Vec<String>,
    },
    /// Set the system default congestion control (any available one; cclab's by either
    /// name, e.g. tuner or cclab_tuner), remembering the old one.
    Default {
        /// The algorithm to make the default (required unless --restore).
        #[arg(required_unless_present = "restore")]
        algo: Option<String>,
        /// Put back the default saved by the last `default ALGO`.
        #[arg(long, conflicts_with = "algo")]
        restore: bool,
    },
    /// Show or set rto_min and initcwnd on routes (default: all routes of the main table).
    Route {
        /// Minimum retransmission timeout, e.g. 200ms.
        #[arg(long)]
        rto_min: Option<String>,
        /// Initial congestion window in packets.
        #[arg(long)]
        initcwnd: Option<u64>,
        /// Only this destination (as `ip route` prints it, e.g. default or 10.0.0.0/8).
        #[arg(long)]
        dst: Option<String>,
        #[arg(long, default_value = "main")]
        table: String,
        /// Run inside this network namespace (ip -n).
        #[arg(long)]
        netns: Option<String>,
        /// Put back the values saved before the first change.
        #[arg(long, conflicts_with_all = ["rto_min", "initcwnd"])]
        restore: bool,
    },
}

fn algos(names: &[String]) -> Result<Vec<Algo>, Error> {
    if names.is_empty() {
        return Ok(Algo::ALL.to_vec());
    }
    // Each once, in the order first given (`load tuner cclab_tuner` loads it once).
    let mut algos: Vec<Algo> = Vec::new();
    for n in names {
        let a = Algo::parse(n)?;
        if !algos.contains(&a) {
            algos.push(a);
        }
    }
    Ok(algos)
}

fn print_params(k: &Kernel, algo: Algo) -> Result<(), Error> {
    for (name, v) in k.get(algo)? {
        let spec = algo.spec(name)?;
        outln(&format!("  {name} = {}", show_value(spec, v)));
    }
    if algo == Algo::CubicFit {
        let s = k.fit_stats()?;
        if s.updates == 0 {
            outln("  [state] no N update yet (N starts at 1; updates every 500 ms of RTT samples)");
            return Ok(());
        }
        outln(&format!(
            "  [state] N = {:.3}  alpha = {:.4}  rtt_min = {} us  rtt_max = {} us  rtt_avg = {} us  samples = {}  updates = {}  cwnd = {}",
            s.n, s.alpha, s.rtt_min_us, s.rtt_max_us, s.rtt_avg_us, s.samples, s.updates, s.cwnd
        ));
    }
    Ok(())
}

/// Parses `KEY=VALUE` pairs as in scenario files, validating each against its range.
pub fn parse_changes(algo: Algo, changes: &[String]) -> Result<Vec<(String, f64)>, Error> {
    let mut parsed: Vec<(String, f64)> = Vec::new();
    for c in changes {
        let (k, v) = c
            .split_once('=')
            .ok_or_else(|| Error::Param(format!("\"{c}\" is not KEY=VALUE (e.g. beta=0.5)")))?;
        let spec = algo.spec(k.trim())?;
        // One value per parameter: which of two was meant cannot be guessed.
        if parsed.iter().any(|(n, _)| n == spec.name) {
            return Err(Error::Param(format!(
                "{} is given twice (\"{c}\"); give each parameter once",
                spec.name
            )));
        }
        let value = parse_value(spec, algo.name(), v)?;
        algo.check(spec.name, value)?;
        parsed.push((spec.name.to_string(), value));
    }
    Ok(parsed)
}

/// `--rto-min` (rounded up to whole milliseconds, as routes hold it) and `--initcwnd`,
/// checked against the TCP-level limits the rest of cclab uses.
pub fn route_change(rto_min: Option<&str>, initcwnd: Option<u64>) -> Result<RouteChange, Error> {
    let out_of_range = |flag: &str, value: &dyn std::fmt::Display, limit: &TcpLimit| {
        Error::Param(format!("{flag} = {value} is out of range; allowed: {}", limit.allowed()))
    };
    let mut change = RouteChange { initcwnd, ..RouteChange::default() };
    if let Some(t) = rto_min {
        let d =
            cclab_units::parse_duration(t).map_err(|e| Error::Param(format!("--rto-min: {e}")))?;
        let ms = d.as_nanos().div_ceil(1_000_000);
        if !RTO_MIN_MS.contains(ms) {
            return Err(out_of_range("--rto-min", &t, &RTO_MIN_MS));
        }
        change.rto_min_ms = Some(ms);
        change.rto_min_rounded = d.as_nanos() != ms * 1_000_000;
    }
    if let Some(c) = initcwnd.filter(|c| !INITCWND.contains(*c)) {
        return Err(out_of_range("--initcwnd", &c, &INITCWND));
    }
    Ok(change)
}

pub fn run(args: Args) -> Result<(), Error> {
    let k = Kernel::default();
    match args.cmd {
        Cmd::Load { algos: names } => {
            let algos = algos(&names)?;
            let reaped = k.reap_half_made()?;
            if !reaped.is_empty() {
                let dirs: Vec<String> = reaped.iter().map(|d| d.display().to_string()).collect();
                cclab_units::errln!(
                    "cclab kernel: removed half-made loads of commands that died (no link pinned): {}",
                    dirs.join(", ")
                );
            }
            // Loading what is loaded changes nothing and says so: `load` is safe to
            // repeat in a script.
            for a in algos {
                match k.load(a) {
                    Ok(()) => {
                        outln(&format!("loaded {} (pinned at {})", a.name(), k.dir(a).display()))
                    }
                    Err(Error::AlreadyLoaded { algo, pin }) => outln(&format!(
                        "{algo} was already loaded (pinned at {pin}); left as it is"
                    )),
                    Err(e) => return Err(e),
                }
            }
        }
        Cmd::List => {
            let avail = loader::available()?;
            outln(&format!("available: {}", avail.join(" ")));
            outln(&format!("default: {}", loader::current_default()?));
            let hidden = k.pins_hidden();
            for a in Algo::ALL {
                let s = k.status(a);
                let state = match (s.pinned, s.registered, &hidden) {
                    (true, true, _) => "loaded".to_string(),
                    (true, false, _) => "pinned but NOT registered (stale; run unload)".to_string(),
                    (false, true, Some(why)) => {
                        format!("registered; cclab's pins cannot be seen: {why}")
                    }
                    (false, true, None) => {
                        "registered by something else (not cclab's pins)".to_string()
                    }
                    (false, false, _) => "not loaded".to_string(),
                };
                outln(&format!("{}: {state}", a.name()));
                if s.pinned {
                    say_put_back(a, run_params::tidy_after_a_dead_run(&k, a)?)?;
                    print_params(&k, a)?;
                }
            }
        }
        Cmd::Get { algo } => {
            let a = Algo::parse(&algo)?;
            // Read first, so that an algorithm not loaded prints only the error.
            k.get(a)?;
            say_put_back(a, run_params::tidy_after_a_dead_run(&k, a)?)?;
            outln(&format!("{}:", a.name()));
            print_params(&k, a)?;
        }
        Cmd::Set { algo, changes } => {
            let a = Algo::parse(&algo)?;
            let parsed = parse_changes(a, &changes)?;
            let (put_back, stored) = run_params::set_between_runs(&k, a, &parsed)?;
            say_put_back(a, put_back)?;
            for (name, v) in stored {
                let shown = show_value(a.spec(name)?, v);
                // The kernel keeps fractions in fixed point (beta in 1/1024): say so when
                // the value asked for fell between two steps.
                let asked = parsed.iter().find(|(n, _)| n == name).map(|(_, x)| *x);
                let rounded = match asked {
                    Some(x) if x != v => {
                        format!(" (asked {x}: the kernel keeps it in fixed point)")
                    }
                    _ => String::new(),
                };
                outln(&format!("{}: {name} = {shown}{rounded}", a.name()));
            }
        }
        Cmd::Unload { algos: names } => {
            for a in algos(&names)? {
                match run_params::unload_between_runs(&k, a)? {
                    Unloaded::Done { default_now } => {
                        if let Some(d) = default_now {
                            let why = if d.was_saved {
                                "the default before `cclab kernel default`"
                            } else {
                                "none was saved by `cclab kernel default`, so cclab falls back to the first of cubic and reno that net.ipv4.tcp_allowed_congestion_control holds"
                            };
                            outln(&format!(
                                "{} was this network namespace's default; the default is now {} ({why}){}",
                                a.name(),
                                d.name,
                                allowed_said(d.allowed)
                            ));
                        }
                        // The kernel frees the algorithm once the last socket using it is
                        // gone: bpftool lists it until then, and those sockets keep the
                        // values they had, out of reach of `set`.
                        match crate::socket::sockets_running(a.name()) {
                            Some(n @ 1..) => outln(&format!(
                                "unloaded {}; {n} connection(s) of this network namespace still run it, with its values as they were, until they close (new ones cannot choose it)",
                                a.name()
                            )),
                            // The count is of this namespace's sockets only: say what any
                            // elsewhere (an emulator's hosts) are left with.
                            _ => outln(&format!(
                                "unloaded {}; connections of other network namespaces that run it keep it, with its values as they were, out of reach of `set`, until they close",
                                a.name()
                            )),
                        }
                    }
                    Unloaded::NotLoaded => outln(&format!("{} was not loaded", a.name())),
                }
            }
        }
        Cmd::Default { algo, restore } => {
            if restore {
                let (old, allowed) = k.restore_default()?;
                outln(&format!("default restored to {old}{}", allowed_said(allowed)));
            } else {
                // cclab's own algorithms by either name, as `load` and `set` take them;
                // any other name is the kernel's (cubic, bbr, ...).
                let given = algo.unwrap_or_default();
                let name = Algo::parse(&given).map_or(given, |a| a.name().to_string());
                let (old, widened) = k.set_default(&name)?;
                if old == name {
                    outln(&format!("{name} is the default already: nothing changed"));
                    return Ok(());
                }
                outln(&format!("default: {old} -> {name} (undo: cclab kernel default --restore)"));
                if widened {
                    outln(&format!("note: the kernel allows every default to all users: net.ipv4.tcp_allowed_congestion_control now lists {name}, until --restore or its unload takes it off"));
                }
            }
        }
        Cmd::Route { rto_min, initcwnd, dst, table, netns, restore } => {
            let r = Routes { table, dst, netns, ..Routes::default() };
            if restore {
                for d in r.restore()? {
                    outln(&format!("restored {d}"));
                }
            } else if rto_min.is_some() || initcwnd.is_some() {
                let change = route_change(rto_min.as_deref(), initcwnd)?;
                if let (Some(t), Some(ms), true) =
                    (&rto_min, change.rto_min_ms, change.rto_min_rounded)
                {
                    outln(&format!("note: --rto-min {t} is set as {ms}ms: routes take whole milliseconds, rounded up"));
                }
                let (changed, skipped) = r.set(change)?;
                for c in &changed {
                    outln(&format!("changed {}", c.dst));
                }
                if !changed.is_empty() {
                    outln("(undo: the same command with --restore instead of the new values)");
                }
                let none_changed = changed.is_empty() && !skipped.is_empty();
                for (d, why) in skipped {
                    outln(&format!("skipped {d}: {why}"));
                }
                say_ipv6_left(&r, true);
                if none_changed {
                    return Err(Error::Param(
                        "no route changed: each route matched was skipped, for the reasons above"
                            .into(),
                    ));
                }
            } else {
                for ri in r.list()? {
                    let show = |v: Option<u64>, unit: &str| {
                        v.map(|x| format!("{x}{unit}")).unwrap_or_else(|| "-".into())
                    };
                    outln(&format!(
                        "{}{}{}  rto_min {}  initcwnd {}{}",
                        ri.dst,
                        ri.gateway.as_deref().map(|g| format!(" via {g}")).unwrap_or_default(),
                        ri.dev.as_deref().map(|d| format!(" dev {d}")).unwrap_or_default(),
                        show(ri.rto_min_ms, "ms"),
                        show(ri.initcwnd, ""),
                        ri.unsupported
                            .as_deref()
                            .map(|w| format!("  (cannot change: {w})"))
                            .unwrap_or_default()
                    ));
                }
                say_ipv6_left(&r, false);
            }
        }
    }
    Ok(())
}

/// Notes the table's IPv6 routes, which `route` neither lists nor changes: left as they
/// are by a change, not shown by a listing (nothing said when one destination was asked
/// for).
fn say_ipv6_left(r: &Routes, changing: bool) {
    if r.dst.is_some() {
        return;
    }
    if let Ok(n @ 1..) = r.ipv6_routes() {
        let what = if changing { "left as they are" } else { "not shown" };
        outln(&format!("note: the {n} IPv6 route(s) of table {} are {what}: cclab kernel route handles IPv4 routes only", r.table));
    }
}

/// Says which values a run killed before its end had saved to restore, once they are
/// put back.
fn say_put_back(a: Algo, put_back: Option<run_params::Params>) -> Result<(), Error> {
    let Some(left) = put_back else { return Ok(()) };
    let shown: Vec<String> = left
        .iter()
        .map(|(n, v)| Ok(format!("{n} = {}", show_value(a.spec(n)?, *v))))
        .collect::<Result<_, Error>>()?;
    outln(&format!(
        "{}: first put back the values a run killed before its end had saved to restore ({})",
        a.name(),
        shown.join(", ")
    ));
    Ok(())
}

/// What a restore of the default did to the allowed list, if anything, as a clause.
fn allowed_said(allowed: Option<String>) -> String {
    allowed.map_or(String::new(), |said| format!("; {said}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_parse_as_in_scenario_files_and_errors_say_what_is_allowed() {
        let got = parse_changes(
            Algo::Tuner,
            &["beta=0.5".into(), "fast_convergence=false".into(), "alpha=1.5".into()],
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                ("beta".to_string(), 0.5),
                ("fast_convergence".to_string(), 0.0),
                ("alpha".to_string(), 1.5)
            ]
        );
        let e = parse_changes(Algo::Tuner, &["beta".into()]).unwrap_err().to_string();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = parse_changes(Algo::Tuner, &["beta=abc".into()]).unwrap_err().to_string();
        assert!(e.contains("\"beta\"") && e.contains("abc") && e.contains("(0, 1]"), "{e}");
        let e = parse_changes(Algo::Tuner, &["alpha=3".into()]).unwrap_err().to_string();
        assert!(e.contains("\"alpha\"") && e.contains("(0, 2]"), "{e}");
        let e = parse_changes(Algo::CubicFit, &["beta=0.5".into()]).unwrap_err().to_string();
        assert!(e.contains("cclab_cubic_fit has no parameter \"beta\""), "{e}");
        let twice = ["beta=0.7".into(), "beta=0.5".into()];
        let e = parse_changes(Algo::Tuner, &twice).unwrap_err().to_string();
        assert!(e.contains("beta is given twice (\"beta=0.5\")"), "{e}");
        let e = Algo::parse("bbr2").unwrap_err().to_string();
        assert!(e.contains("cclab_tuner") && e.contains("cclab_cubic_fit"), "{e}");
        // The kernel's own algorithms are named as such, not as unknown.
        let e = Algo::parse("cubic").unwrap_err().to_string();
        assert!(e.starts_with("\"cubic\" is not one of cclab's BPF algorithms"), "{e}");
        assert!(
            e.contains("the kernel's built-in algorithms, such as cubic, are not cclab's"),
            "{e}"
        );
    }

    #[test]
    fn algorithms_are_taken_once_each_in_the_order_given_and_the_help_names_them_all() {
        let names = |v: &[&str]| algos(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(names(&["tuner", "cclab_tuner"]).unwrap(), [Algo::Tuner]);
        assert_eq!(
            names(&["cubic-fit", "tuner", "cclab_cubic_fit"]).unwrap(),
            [Algo::CubicFit, Algo::Tuner]
        );
        assert_eq!(names(&[]).unwrap(), Algo::ALL);
        assert!(names(&["tuner", "vegas"]).is_err());
        for a in Algo::ALL {
            for help in [ALGO_HELP, ALGOS_HELP] {
                assert!(
                    help.contains(a.name()) && help.contains(a.reference()),
                    "{help} lacks {a:?}"
                );
            }
        }
    }

    /// The same limits as scenario files: rto_min 1 ms to 60 s, initcwnd 1 to 1000.
    #[test]
    fn route_changes_take_the_tcp_limits() {
        let c = route_change(Some("200us"), Some(1000)).unwrap();
        assert_eq!((c.rto_min_ms, c.initcwnd), (Some(1), Some(1000)), "rounded up to 1 ms");
        assert!(c.rto_min_rounded);
        let c = route_change(Some("60s"), None).unwrap();
        assert_eq!((c.rto_min_ms, c.rto_min_rounded), (Some(60_000), false));
        let e = route_change(Some("61s"), None).unwrap_err().to_string();
        assert!(e.contains("--rto-min = 61s") && e.contains("1 to 60000 ms"), "{e}");
        let e = route_change(None, Some(1001)).unwrap_err().to_string();
        assert!(e.contains("--initcwnd = 1001") && e.contains("1 to 1000 segments"), "{e}");
        assert!(route_change(None, Some(0)).is_err());
        assert!(route_change(Some("0s"), None).is_err());
    }
}
