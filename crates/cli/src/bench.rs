//! `cclab bench`: the standard scenarios of issue 2 item 7, each run in a child process
//! (`cclab bench --one NAME`, a re-exec of this binary) so that the peak memory reported
//! is that scenario's alone.
//!
//! (a) one flow, 100 Mbit/s, 50 ms RTT, 1 BDP, 60 s; (b) 100 flows, 1 Gbit/s, 20 ms,
//! 1 BDP, 30 s; (c) 10,000 flows, 10 Gbit/s, 20 ms, 1 BDP, 10 s. All Reno, DropTail.
//! `--quick` runs each for a tenth of the time.

use cclab_sim::{NoObserver, SimConfig, Simulation};
use std::process::Command;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Run each scenario for a tenth of its simulated time.
    #[arg(long)]
    pub quick: bool,
    /// Run only this scenario, in this process, and print one machine-readable line
    /// (used by `cclab bench` itself for each child).
    #[arg(long, value_name = "NAME")]
    pub one: Option<String>,
}

/// (name, what it is, scenario TOML with `{duration}` to fill in, full duration in s).
const STANDARD: &[(&str, &str, &str, u64)] = &[
    ("a-1flow", "1 flow, 100 Mbit/s, 50 ms, 1 BDP", "[bottleneck]\nrate = \"100Mbps\"\ndelay = \"10ms\"\nbuffer = \"1bdp\"\n[[flows]]\ncc = \"reno\"\nrtt = \"50ms\"\n", 60),
    ("b-100flows", "100 flows, 1 Gbit/s, 20 ms, 1 BDP", "[bottleneck]\nrate = \"1Gbps\"\ndelay = \"5ms\"\nbuffer = \"1bdp\"\n[[flows]]\ncc = \"reno\"\nrtt = \"20ms\"\ncount = 100\n", 30),
    ("c-10kflows", "10,000 flows, 10 Gbit/s, 20 ms, 1 BDP", "[bottleneck]\nrate = \"10Gbps\"\ndelay = \"5ms\"\nbuffer = \"1bdp\"\n[[flows]]\ncc = \"reno\"\nrtt = \"20ms\"\ncount = 10000\n", 10),
];

fn config(name: &str, quick: bool) -> Result<SimConfig, String> {
    let (_, _, body, secs) = STANDARD.iter().find(|s| s.0 == name).ok_or_else(|| {
        let names: Vec<&str> = STANDARD.iter().map(|s| s.0).collect();
        format!("no benchmark scenario \"{name}\"; known: {}", names.join(", "))
    })?;
    let secs = if quick { (*secs as f64 / 10.0).max(1.0) } else { *secs as f64 };
    // Sampling once a second: the benchmark measures the packet path, not the recorder.
    let text = format!("duration = \"{secs}s\"\nsample_interval = \"1s\"\n{body}");
    cclab_scenario::parse_str(&text, name, None, name, &[]).map(|s| s.config).map_err(|e| e.to_string())
}

/// Peak resident memory of this process in kB (Linux `VmHWM`), if known.
fn peak_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Figures {
    simulated_s: f64,
    wall_s: f64,
    packets: u64,
    events: u64,
    peak_kb: Option<u64>,
}

fn run_one(name: &str, quick: bool) -> Result<Figures, String> {
    let cfg = config(name, quick)?;
    let mut sim = Simulation::new(cfg).map_err(|e| format!("{name}: {e}"))?;
    let started = Instant::now();
    let report = sim.run(&mut NoObserver);
    let wall_s = started.elapsed().as_secs_f64();
    Ok(Figures { simulated_s: report.duration.as_secs_f64(), wall_s, packets: report.link.delivered_packets, events: report.events, peak_kb: peak_kb() })
}

pub fn main(args: Args) -> Result<(), String> {
    if let Some(name) = &args.one {
        let f = run_one(name, args.quick)?;
        // One line for the parent: name simulated_s wall_s packets events peak_kb.
        println!("{name} {} {} {} {} {}", f.simulated_s, f.wall_s, f.packets, f.events, f.peak_kb.map_or("-".to_string(), |k| k.to_string()));
        return Ok(());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the cclab binary to re-run: {e}"))?;
    println!("{:<11} {:<36} {:>9} {:>8} {:>12} {:>12} {:>12} {:>8}", "scenario", "", "sim s", "wall s", "packets", "pkts/wall-s", "events/s", "peak MB");
    for (name, what, _, _) in STANDARD {
        let mut cmd = Command::new(&exe);
        cmd.args(["bench", "--one", name]);
        if args.quick {
            cmd.arg("--quick");
        }
        let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!("benchmark {name} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = text.split_whitespace().collect();
        let parse = |i: usize| fields.get(i).and_then(|s| s.parse::<f64>().ok());
        let (Some(sim_s), Some(wall_s), Some(packets), Some(events)) = (parse(1), parse(2), parse(3), parse(4)) else {
            return Err(format!("benchmark {name} printed an unexpected line: {}", text.trim()));
        };
        let per = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
        let peak = parse(5).map_or("n/a".to_string(), |kb| format!("{:.1}", kb / 1024.0));
        println!("{name:<11} {what:<36} {sim_s:>9.1} {wall_s:>8.2} {packets:>12} {:>12.0} {:>12.0} {peak:>8}", per(packets), per(events));
    }
    Ok(())
}
