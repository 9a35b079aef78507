//! `cclab serve`: the web lab (crates/web), with this binary's own results writer lent to
//! it, so a run saved from the page is the folder `cclab run` writes for its scenario and
//! a comparison is what `cclab compare` writes.

use crate::run::whole_in;
use cclab_scenario::metrics::RunMetrics;
use cclab_scenario::Scenario;
use cclab_sim::Report;
use cclab_web::{Config, Limits, ResultFiles};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 7878, allow_negative_numbers = true, value_parser = port_value)]
    pub port: u16,
    /// Address to listen on. Anything but a loopback address exposes the lab to the
    /// network; to use it from another machine, forward the port over SSH instead.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Open the page in the default browser (xdg-open).
    #[arg(long)]
    pub open: bool,
    /// The server's results folder: saved runs, comparisons, uploaded traces.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Ready scenarios [default: the repository's scenarios/ folder, found from here or
    /// from the binary].
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
    /// Stop a run nobody has watched for this many seconds (unless it is to be saved):
    /// 1 to 86400 (a day).
    #[arg(long, default_value_t = 15, allow_negative_numbers = true, value_parser = whole_in::<1, 86_400>)]
    pub idle_stop: u64,
    /// Runs going at once: 1 to 32 (the runs the lab keeps in memory).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_parser = whole_in::<1, MAX_RUNS>)]
    pub max_runs: u64,
    /// Most the results folder may hold, in MB (10^6 bytes): saved runs, comparisons and
    /// uploaded traces. A save, comparison or upload that would pass it is refused (507)
    /// until saved runs or traces are deleted.
    #[arg(long, default_value_t = Limits::DISK_MB, allow_negative_numbers = true, value_parser = whole_in::<1, 100_000_000>)]
    pub max_disk_mb: u64,
}

/// `--port`: 0 to 65535.
fn port_value(text: &str) -> Result<u16, String> {
    whole_in::<0, 65_535>(text).map(|p| p as u16)
}

/// `--max-runs` at most: the runs the lab keeps in memory, so that a new run never has to
/// evict one still going.
const MAX_RUNS: u64 = cclab_web::limits::Limits::KEPT_RUNS as u64;

/// The results writer of this binary.
struct CliResults;

impl ResultFiles for CliResults {
    fn summary_json(&self, scn: &Scenario, report: &Report, metrics: &RunMetrics) -> String {
        crate::results::summary_json(scn, report, metrics).render()
    }
    fn cc_columns(&self, scn: &Scenario) -> Vec<&'static str> {
        crate::results::cc_columns(scn)
    }
    /// As `cclab run`, without its table on the server's terminal.
    fn run(&self, scenario: &Path, out: &Path) -> Result<(), String> {
        let scn = cclab_scenario::load_file(scenario, &[]).map_err(|e| e.to_string())?;
        let file = scenario.display().to_string();
        let series = crate::series::SeriesFormat::Auto;
        crate::run::execute(&scn, &file, (out, series, None), &[], false).map(|_| ())
    }
    /// As `cclab compare`, without its table on the server's terminal.
    fn compare(&self, a: &Path, b: &Path, out: &Path) -> Result<(), String> {
        let args = crate::compare::Args {
            a: a.to_path_buf(),
            b: b.to_path_buf(),
            out: Some(out.to_path_buf()),
        };
        crate::compare::write(&args).map(|_| ())
    }
    fn tidy(&self, dir: &Path) {
        crate::results::recover_killed_stagings(dir, None);
    }
}

/// `shared/traces` beside the repository whose `scenarios` folder is used (found wherever
/// that is, also where the binary was built), else beside the working folder or the binary.
fn shared_traces(scenarios: Option<&std::path::Path>) -> Option<PathBuf> {
    let repo = scenarios.and_then(|s| std::fs::canonicalize(s).ok());
    let mut beside_repo = repo.iter().flat_map(|s| s.ancestors()).map(|a| a.join("shared/traces"));
    beside_repo.find(|d| d.is_dir()).or_else(|| cclab_web::catalog::find_beside("shared/traces"))
}

pub fn main(args: Args) -> Result<(), String> {
    if !args.bind.is_loopback() {
        // --port 0 takes a free port, printed once the server listens.
        let port = if args.port == 0 { "PORT".to_string() } else { args.port.to_string() };
        cclab_units::errln!("warning: --bind {} makes the lab reachable from the network (anyone who can reach this address can run simulations); prefer SSH port forwarding: ssh -L {port}:127.0.0.1:{port} HOST", args.bind);
    }
    if let Some(dir) = args.scenarios.as_ref().filter(|d| !d.is_dir()) {
        let what = if dir.exists() { "not a folder" } else { "does not exist" };
        return Err(format!("--scenarios {}: {what} (the ready scenarios' folder, e.g. scenarios/ of the repository)", dir.display()));
    }
    // Here, above here or beside the binary, else where this source was built (as
    // `cclab reproduce` finds the seeds).
    let scenarios = args.scenarios.clone().or_else(|| {
        cclab_web::catalog::find_beside("scenarios")
            .or_else(|| crate::reproduce::repo_folder(None, "scenarios", "--scenarios").ok())
    });
    if scenarios.is_none() {
        cclab_units::errln!("note: no scenarios/ folder here, above here, beside the binary or where it was built, so the page's list of ready scenarios is empty (give --scenarios DIR, e.g. the repository's scenarios/)");
    }
    let mut trace_dirs: Vec<PathBuf> = scenarios.iter().map(|s| s.join("traces")).collect();
    trace_dirs.extend(shared_traces(scenarios.as_deref()));
    trace_dirs.retain(|d| d.is_dir());
    let limits = Limits {
        idle_stop: std::time::Duration::from_secs(args.idle_stop),
        max_active_runs: args.max_runs as usize,
        max_disk_bytes: args.max_disk_mb * 1_000_000,
        ..Limits::default()
    };
    let config = Config {
        bind: args.bind,
        port: args.port,
        results: args.results.clone(),
        scenarios,
        trace_dirs,
        token: cclab_web::server::new_token(),
        limits,
        results_writer: Arc::new(CliResults),
    };
    let open = args.open;
    cclab_web::serve(config, |url| {
        crate::format::outln(&format!("cclab lab: {url}"));
        crate::format::outln(
            "(the token in the URL is needed for kernel actions; Ctrl-C stops the server)",
        );
        if open {
            let _ = std::process::Command::new("xdg-open").arg(url).spawn();
        }
    })
}
