//! `cclab bench`: the standard scenarios of issue 2 item 7 (defined once, in
//! `cclab_sim::bench`), each run in a child process (`cclab bench --one NAME`, a re-exec
//! of this binary) so that the peak memory reported is that scenario's alone.
//! `--quick` runs each for a tenth of its simulated time; `--large` adds the
//! 100,000-flow scaling case. The last column is the peak memory beyond what the process
//! held before building the case, per flow.

use cclab_sim::bench::{self, BenchCase};
use cclab_units::Duration;
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// Run each scenario for a tenth of its simulated time (at least 1 s).
    #[arg(long)]
    pub quick: bool,
    /// Run only this scenario (a, b, c or d), in this process, and print one
    /// machine-readable line (used by `cclab bench` itself for each child).
    #[arg(long, value_name = "NAME", value_parser = ["a", "b", "c", "d"])]
    pub one: Option<String>,
    /// Also run the 100,000-flow scaling case (d), which takes tens of seconds.
    #[arg(long)]
    pub large: bool,
}

/// The cases `cclab bench` runs, and those `--one` accepts.
fn all_cases(large: bool) -> Vec<BenchCase> {
    let mut cases = bench::standard();
    if large {
        cases.extend(bench::large());
    }
    cases
}

fn case(name: &str, quick: bool) -> Result<BenchCase, String> {
    // The large set is built only when asked for: its 100,000 flow configurations took
    // about a quarter of `--one a`'s process CPU time (perf) before the case even ran.
    let mut cases = all_cases(false);
    if !cases.iter().any(|c| c.name == name) {
        cases = all_cases(true);
    }
    let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    // Taken out, not cloned: a copy of the 100,000 flow configurations would sit in the
    // baseline heap.
    let mut c = cases
        .into_iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("no benchmark scenario \"{name}\"; known: {}", names.join(", ")))?;
    if quick {
        let d = c.config.duration.as_nanos() / 10;
        c.config.duration = Duration(d.max(Duration::from_secs(1).as_nanos()));
    }
    Ok(c)
}

pub fn main(args: Args) -> Result<(), String> {
    if let Some(name) = &args.one {
        let case = case(name, args.quick)?;
        let base = bench::rss_bytes();
        let r = bench::run(case);
        let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| v.to_string());
        // One line for the parent: name simulated_s wall_s cpu_s packets events peak_kb
        // utilization base_kb.
        crate::format::outln(&format!(
            "{name} {} {} {} {} {} {} {} {}",
            r.simulated_s,
            r.wall_s,
            opt(r.cpu_s),
            r.bottleneck_packets,
            r.events,
            opt(bench::peak_rss_bytes().map(|b| (b / 1024) as f64)),
            r.utilization,
            opt(base.map(|b| (b / 1024) as f64)),
        ));
        return Ok(());
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the cclab binary to re-run: {e}"))?;
    let cases = all_cases(args.large);
    let w = cases.iter().map(|c| c.description.len()).max().unwrap_or(20);
    if args.quick {
        crate::format::outln(
            "--quick: each case runs a tenth of the simulated time it names (sim s)",
        );
    }
    crate::format::outln(&format!(
        "{:<2} {:<w$} {:>6} {:>7} {:>7} {:>11} {:>12} {:>12} {:>8} {:>6} {:>8}",
        "",
        "scenario",
        "sim s",
        "wall s",
        "cpu s",
        "packets",
        "pkts/wall-s",
        "events/wall-s",
        "peak MB",
        "util",
        "kB/flow"
    ));
    for c in cases {
        let mut cmd = Command::new(&exe);
        cmd.args(["bench", "--one", c.name]);
        if args.quick {
            cmd.arg("--quick");
        }
        let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!(
                "benchmark {} failed: {}",
                c.name,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<&str> = text.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok());
        let (Some(sim_s), Some(wall_s), Some(packets), Some(events)) =
            (num(1), num(2), num(4), num(5))
        else {
            return Err(format!(
                "benchmark {} printed an unexpected line: {}",
                c.name,
                text.trim()
            ));
        };
        let per = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
        let cpu = num(3).map_or("n/a".to_string(), |v| format!("{v:.2}"));
        let peak = num(6).map_or("n/a".to_string(), |kb| format!("{:.1}", kb / 1024.0));
        let util = num(7).map_or("n/a".to_string(), |u| format!("{:.3}", u));
        let flows = c.config.flows.len() as f64;
        // Peak memory beyond what the process held before building the case, per flow
        // (packets in flight included).
        let per_flow = match (num(6), num(8)) {
            (Some(peak), Some(base)) => format!("{:.2}", (peak - base).max(0.0) / flows),
            _ => "n/a".to_string(),
        };
        crate::format::outln(&format!("{:<2} {:<w$} {sim_s:>6.1} {wall_s:>7.2} {cpu:>7} {packets:>11} {:>12.0} {:>12.0} {peak:>8} {util:>6} {per_flow:>8}", c.name, c.description, per(packets), per(events)));
    }
    Ok(())
}
