//! `cclab serve`: the web lab. One process serves a single page and the HTTP + WebSocket
//! API the page uses (documented in the README, usable from scripts): edit and run
//! scenarios, watch a running simulation live at a chosen speed, tune a running flow
//! (TCPTuner's controls and every parameter of its algorithm), save the run as a normal
//! results folder and compare saved runs, and drive the real kernel when root.
//!
//! # Shape (DESIGN.md, "Lab UI")
//! Each run's [`cclab_sim::Simulation`] lives on its own thread, which owns it
//! ([`live`]); the web side sends it commands over a channel (pause, resume, speed,
//! stop, set a parameter) and receives decimated samples ([`decimate`]): the thread folds
//! every sample into at most about a thousand buckets per run, so the history the server
//! keeps and the browser draws stays the same size however long the run. The simulator
//! stays single-threaded and sans-IO.
//!
//! # What lives here
//! - [`server`]: the routes, the request guard (Host, Origin, token) and the assets;
//! - [`intake`]: a scenario from a request body (TOML or JSON) through the same parser and
//!   error messages as `cclab run`, with traces limited to the ready folders ([`catalog`])
//!   and the live-run [`limits`];
//! - [`live`] and [`decimate`]: the run threads; [`runs`]: the table of runs;
//! - [`replay`]: the scenario text a saved run writes, with the live changes as
//!   `[[changes]]` that reproduce it exactly; [`store`]: the server's results folder;
//! - [`kernel`]: the real-kernel panel (cclab's BPF algorithms); [`testbed`]: runs on real
//!   TCP through the emulator, streamed like simulated ones;
//! - `assets/`: the page (HTML, CSS, JavaScript modules, canvas charts written here),
//!   built into the binary with `include_str!`: no CDN, no npm, nothing fetched at run time.
//!
//! Not here: result files (the `cclab` binary writes them, handed in as [`ResultFiles`],
//! so `save` writes exactly what `cclab run` writes), the simulator, scenario rules.
//!
//! # Why axum and tokio
//! axum (tokio-rs) is a maintained HTTP framework with WebSocket support on hyper and
//! tungstenite; with `default-features = false` and HTTP/1 only it is a small slice of the
//! tokio stack. The async side only moves bytes; simulations run on plain threads.

pub mod api;
pub mod body_deadline;
pub mod catalog;
pub mod connections;
pub mod decimate;
pub mod error;
pub mod intake;
pub mod kernel;
pub mod limits;
pub mod live;
pub mod replay;
pub mod runs;
pub mod server;
pub mod store;
pub mod testbed;

use cclab_scenario::Scenario;
use cclab_sim::Report;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cclab_scenario::metrics::RunMetrics;
pub use limits::Limits;
pub use server::serve;

/// What the `cclab` binary lends the server, so that saved runs are the very files
/// `cclab run` and `cclab compare` write (one results writer, not two).
pub trait ResultFiles: Send + Sync + 'static {
    /// The text of `summary.json` for a run's report and metrics.
    fn summary_json(&self, scn: &Scenario, report: &Report, metrics: &RunMetrics) -> String;
    /// The algorithms' variables recorded per flow (the `cc_*` columns of flows.csv).
    fn cc_columns(&self, scn: &Scenario) -> Vec<&'static str>;
    /// `cclab run SCENARIO --out OUT`.
    fn run(&self, scenario: &Path, out: &Path) -> Result<(), String>;
    /// `cclab compare A B --out OUT`.
    fn compare(&self, a: &Path, b: &Path, out: &Path) -> Result<(), String>;
    /// Removes what runs killed while they wrote into `dir` left behind (the writer's
    /// staging folders), as `cclab run` does for its own destination.
    fn tidy(&self, dir: &Path);
}

/// How the server is set up.
#[derive(Clone)]
pub struct Config {
    pub bind: IpAddr,
    /// 0 picks a free port (tests).
    pub port: u16,
    /// The server's own results folder: saved runs, comparisons and uploaded traces live
    /// here and nothing outside it is written.
    pub results: PathBuf,
    /// Ready scenarios (`scenarios/` of the repository), if found.
    pub scenarios: Option<PathBuf>,
    /// Ready trace folders, searched in order (`scenarios/traces`, `shared/traces`).
    pub trace_dirs: Vec<PathBuf>,
    /// The secret kernel actions need (printed in the URL at start).
    pub token: String,
    pub limits: Limits,
    pub results_writer: Arc<dyn ResultFiles>,
}
