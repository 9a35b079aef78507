//! The results folder of a run, simulated (`cclab run`) or on the testbed (`cclab testbed
//! run`): what is recorded while the run goes on ([`Recorder`], an [`Observer`]) and the
//! files written at the end by [`finish`] (summary.json, perf.json, the time series
//! flows.csv and queue.csv or their Parquet form ([`crate::series`]), four SVG plots,
//! report.html), plus the terminal table. Everything except perf.json is
//! a function of the scenario and seed only (for simulated runs).
//!
//! Files are written into a staging folder beside the destination and renamed into
//! place at the end ([`Staging`]), so a failed run never leaves half-written results and
//! never touches earlier ones.

use crate::flow_writer::FlowWriter;
use crate::format::{num, push_secs, push_u64, secs, text_table, xml, Json};
use crate::plot::{Chart, Series};
use crate::series::{Kind, SeriesFile, SeriesFormat, Value};
use cclab_cc::{Algorithm, CongestionControl, ALGORITHMS};
use cclab_scenario::metrics::{byte_shares, RunMetrics};
use cclab_scenario::Scenario;
use cclab_sim::{
    CrossReport, Direction, FlowSample, FlowSamples, LinkReport, Observer, QueueSample, Report,
    SimConfig,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Flows listed in the terminal table at most (summary.json has all of them).
const MAX_TABLE_FLOWS: usize = 20;

/// How many of `n` flows a terminal table lists: all of them, unless cutting the list
/// would leave out more than a few.
pub(crate) fn table_flows(n: usize) -> usize {
    if n > MAX_TABLE_FLOWS + 4 {
        MAX_TABLE_FLOWS
    } else {
        n
    }
}
/// Flows drawn in the plots at most (the CSV has all of them).
pub const MAX_PLOT_FLOWS: usize = 16;
/// Samples kept per flow for the plots at most; longer runs keep every k-th sample.
const MAX_PLOT_SAMPLES: u64 = 4000;

/// A results folder being written: a hidden sibling of the destination, removed on drop
/// unless [`commit`](Staging::commit) moved it into place.
pub struct Staging {
    tmp: PathBuf,
    dest: PathBuf,
    committed: bool,
    /// Removes `tmp` if the command is interrupted ([`cclab_units::interrupt`]).
    staged: Option<cclab_units::interrupt::Staged>,
}

/// Every name a results folder may hold: what [`finish`] and the recorder write, in
/// either series format, and the extra files of sweep points (point.json) and testbed
/// runs (kernel.json). A run replaces its folder whole, so a folder holding anything
/// else (the scenario file, notes, a folder of plots) is refused rather than deleted.
const RESULT_FILES: &[&str] = &[
    "summary.json",
    "perf.json",
    "point.json",
    "kernel.json",
    "flows.csv",
    "flows.parquet",
    "queue.csv",
    "queue.parquet",
    "reverse_queue.csv",
    "reverse_queue.parquet",
    "cwnd.svg",
    "goodput.svg",
    "queue.svg",
    "rtt.svg",
    "report.html",
];

/// Refuses a results folder to be replaced that holds something a run did not write.
fn check_only_results(dest: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dest) else { return Ok(()) };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !RESULT_FILES.contains(&name.as_ref()) && !cclab_units::whole_file::is_temporary(&name) {
            return Err(format!(
                "{} holds {name}, which is not a file cclab writes there; a run replaces the \
                 whole folder, so move {name} out or choose another folder",
                dest.display()
            ));
        }
    }
    Ok(())
}

impl Staging {
    /// Refuses a destination that exists and is not a cclab results folder (so that
    /// `--out ~` cannot replace a home directory), or that holds anything a run did not
    /// write, then creates the staging folder.
    pub fn new(dest: &Path) -> Result<Staging, String> {
        if dest.as_os_str().is_empty() {
            return Err("the results folder is an empty path; name a folder such as results/mine"
                .to_string());
        }
        // `r1/.` is `r1` (renaming `r1/.` itself fails with "resource busy").
        let dest = &cclab_units::whole_file::through_link(&dest.components().collect::<PathBuf>())
            .map_err(|e| format!("{e}; choose another folder"))?;
        crate::out_folder::check(dest, "results", "summary.json")?;
        check_only_results(dest)?;
        let name = dest.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            format!("{} has no name of its own; choose another folder", dest.display())
        })?;
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        crate::out_folder::create_parent(&parent)?;
        recover_killed_runs(&parent, name);
        // The counter keeps two results of the same name written at once by one process
        // (the lab server saving two runs) out of each other's staging folders.
        static STAGED: AtomicU64 = AtomicU64::new(0);
        let n = STAGED.fetch_add(1, Ordering::Relaxed);
        let tmp = parent.join(format!(".{name}.partial-{}-{n}", std::process::id()));
        if tmp.exists() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        // Named after the folder asked for: the staging folder beside it is ours to know.
        let (staged, ()) =
            cclab_units::interrupt::create_staged(&tmp, || std::fs::create_dir(&tmp)).map_err(
                |e| {
                    format!(
                        "cannot write {}: cannot create its staging folder in {}: {e}",
                        dest.display(),
                        parent.display()
                    )
                },
            )?;
        Ok(Staging { tmp, dest: dest.to_path_buf(), committed: false, staged: Some(staged) })
    }

    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Moves the finished folder into place, replacing earlier results of the same name.
    pub fn commit(mut self) -> Result<bool, String> {
        let old = self.tmp.with_file_name(format!(
            "{}.old",
            self.tmp.file_name().and_then(|n| n.to_str()).unwrap_or("results")
        ));
        let (tmp, dest) = (&self.tmp, &self.dest);
        let moved = match self.staged.take() {
            Some(staged) => staged.settle(|| move_into_place(tmp, dest, &old)),
            None => move_into_place(tmp, dest, &old),
        };
        let replaced = moved?;
        self.committed = true;
        Ok(replaced)
    }
}

/// Moves results folder `from` to `dest`, replacing a folder already there: that one is
/// moved to `aside` first, put back if the move fails, and removed once it succeeded, so
/// nothing already written is lost. Whether it replaced one.
pub fn move_into_place(from: &Path, dest: &Path, aside: &Path) -> Result<bool, String> {
    let replaced = dest.exists();
    if replaced {
        std::fs::rename(dest, aside)
            .map_err(|e| format!("cannot move earlier results {} aside: {e}", dest.display()))?;
    }
    if let Err(e) = std::fs::rename(from, dest) {
        if replaced {
            let _ = std::fs::rename(aside, dest);
        }
        return Err(format!("cannot move results into {}: {e}", dest.display()));
    }
    if replaced {
        let _ = std::fs::remove_dir_all(aside);
    }
    Ok(replaced)
}

/// Tidies up after runs of the same destination that were killed outright (no `Drop`):
/// their staging folders `.NAME.partial-PID-N` are removed once process PID is gone, and
/// earlier results that a killed run had moved aside (`.NAME.partial-PID-N.old`) go back
/// into place if nothing replaced them, so a kill never loses what was already written.
fn recover_killed_runs(parent: &Path, name: &str) {
    recover_killed_stagings(parent, Some(name));
}

/// [`recover_killed_runs`] for the staging of every results folder in `parent` (or only
/// of `only`): a sweep tidies its `points/` so, since a resumed sweep stages again only
/// the runs it has still to do, and a run killed while staged may since have been done.
pub fn recover_killed_stagings(parent: &Path, only: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some((name, rest)) = file.to_str().and_then(staging_parts) else { continue };
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let (tag, moved_aside) = match rest.strip_suffix(".old") {
            Some(tag) => (tag, true),
            None => (rest, false),
        };
        let pid = tag.split('-').next().unwrap_or_default();
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if !cclab_units::whole_file::writer_is_gone(pid) {
            continue; // ours, or a run still going
        }
        let dest = parent.join(name);
        if moved_aside && !dest.exists() {
            let _ = std::fs::rename(entry.path(), dest);
        } else {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `.NAME.partial-REST` as (NAME, REST); REST starts with the writer's PID.
fn staging_parts(file: &str) -> Option<(&str, &str)> {
    let (name, rest) = file.strip_prefix('.')?.rsplit_once(".partial-")?;
    Some((name, rest))
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// Turns one flow's kept samples into (time, value) points for a chart.
type Extract<'a> = dyn Fn(&[PlotPoint]) -> Vec<(f64, f64)> + 'a;

/// One flow's samples kept for the plots.
#[derive(Clone, Copy)]
struct PlotPoint {
    t: f64,
    cwnd: f64,
    srtt_ms: f64,
    delivered: u64,
}

/// Records the time series while the simulation runs.
pub struct Recorder {
    /// flows.csv or flows.parquet, written on a thread of its own (none with `--series
    /// none`).
    flows: Option<FlowWriter>,
    queue: QueueSeries,
    /// The reverse bottleneck's queue, in runs that model it.
    reverse_queue: Option<QueueSeries>,
    /// A Parquet row of the queue being built (reused).
    values: Vec<Value>,
    error: Option<String>,
    stride: u64,
    flow_seen: Vec<u64>,
    plot: Vec<Vec<PlotPoint>>,
    /// A single sample's columns (reused; see [`Recorder::flow_sample`]).
    one: FlowSamples,
}

/// One bottleneck queue's time series: its file, and the points kept for the plot.
struct QueueSeries {
    file: SeriesFile,
    seen: u64,
    plot: Vec<(f64, f64)>,
}

impl QueueSeries {
    fn create(
        dir: &Path,
        name: &str,
        format: SeriesFormat,
        cols: &[(String, Kind)],
    ) -> Result<QueueSeries, String> {
        Ok(QueueSeries {
            file: SeriesFile::create(dir, name, format, cols)?,
            seen: 0,
            plot: Vec::new(),
        })
    }

    /// One sample: a row of its file (`values` is scratch space for a Parquet row) and,
    /// every `stride` samples, a plot point.
    fn sample(&mut self, s: &QueueSample, values: &mut Vec<Value>, stride: u64) -> Written {
        let written = if self.file.wants_values() {
            values.clear();
            values.extend([
                Value::Double(s.time.as_secs_f64()),
                Value::Int(s.packets as i64),
                Value::Int(s.bytes as i64),
                Value::Int(s.drops as i64),
            ]);
            self.file.values_row(values)
        } else {
            self.file.text_row(|out| {
                push_secs(out, s.time.as_nanos());
                for v in [s.packets, s.bytes, s.drops] {
                    out.push(b',');
                    push_u64(out, v);
                }
            })
        };
        if self.seen.is_multiple_of(stride) {
            self.plot.push((s.time.as_secs_f64(), s.packets as f64));
        }
        self.seen += 1;
        written
    }
}

/// Whether a row was written (or the error that stopped it).
type Written = Result<(), String>;

/// The `cc_*` column names for a scenario: the union over the algorithms it uses, in the
/// order of the algorithm table and then each algorithm's own reporting order.
pub fn cc_columns(scn: &Scenario) -> Vec<&'static str> {
    let mut cols: Vec<&'static str> = Vec::new();
    for info in ALGORITHMS {
        if scn.config.flows.iter().any(|f| f.cc == info.name) {
            if let Ok(a) = Algorithm::new(info.name) {
                a.inspect(&mut |name, _| {
                    if !cols.contains(&name) {
                        cols.push(name)
                    }
                });
            }
        }
    }
    cols
}

fn column_name(name: &str) -> String {
    if name.starts_with("cc_") {
        name.to_string()
    } else {
        format!("cc_{name}")
    }
}

impl Recorder {
    /// Starts the series files in `dir` in `format` (`auto` decided by the run's size).
    pub fn new(dir: &Path, scn: &Scenario, format: SeriesFormat) -> Result<Recorder, String> {
        let cfg = &scn.config;
        let samples = cfg.duration.as_nanos() / cfg.sample_interval.as_nanos().max(1);
        let format = format.resolve(cfg.max_flow_samples());
        let cc_columns = cc_columns(scn);
        let mut flow_cols: Vec<(String, Kind)> = [
            ("time_s", Kind::Double),
            ("flow", Kind::Int),
            ("cwnd_pkts", Kind::Int),
            ("ssthresh_pkts", Kind::Int),
            ("srtt_ms", Kind::Double),
            ("inflight_pkts", Kind::Int),
            ("delivered_bytes", Kind::Int),
        ]
        .iter()
        .map(|(n, k)| (n.to_string(), *k))
        .collect();
        flow_cols.extend(cc_columns.iter().map(|c| (column_name(c), Kind::OptionalDouble)));
        let queue_cols: Vec<(String, Kind)> = [
            ("time_s", Kind::Double),
            ("packets", Kind::Int),
            ("bytes", Kind::Int),
            ("drops", Kind::Int),
        ]
        .iter()
        .map(|(n, k)| (n.to_string(), *k))
        .collect();
        let flows = match SeriesFile::create(dir, "flows", format, &flow_cols)? {
            SeriesFile::None => None,
            file => Some(FlowWriter::start(file, cc_columns, cfg.flows.len())?),
        };
        let queue = QueueSeries::create(dir, "queue", format, &queue_cols)?;
        let reverse_queue = if cfg.has_reverse_link() {
            Some(QueueSeries::create(dir, "reverse_queue", format, &queue_cols)?)
        } else {
            None
        };
        let nplot = cfg.flows.len().min(MAX_PLOT_FLOWS);
        let stride = samples.div_ceil(MAX_PLOT_SAMPLES).max(1);
        // Room for every kept point (and the one at time zero) from the start.
        let kept = usize::try_from(samples / stride + 2).unwrap_or(0);
        Ok(Recorder {
            flows,
            queue,
            reverse_queue,
            values: Vec::with_capacity(queue_cols.len()),
            error: None,
            stride,
            flow_seen: vec![0; nplot],
            plot: (0..nplot).map(|_| Vec::with_capacity(kept)).collect(),
            one: FlowSamples::default(),
        })
    }

    /// Closes the series files; reports the first write error, if any happened.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flows.as_mut().map_or(Ok(()), FlowWriter::finish)?;
        self.queue.file.finish()?;
        self.reverse_queue.as_mut().map_or(Ok(()), |q| q.file.finish())
    }

    /// Flushes the CSV series so far, for reading while the run goes on (Parquet files
    /// cannot be read before they are closed).
    pub fn flush_csv(&mut self) -> Result<(), String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.flows.as_mut().map_or(Ok(()), FlowWriter::flush)?;
        self.queue.file.flush_csv()?;
        self.reverse_queue.as_mut().map_or(Ok(()), |q| q.file.flush_csv())
    }

    /// Whether flows.csv or flows.parquet is written (not with `--series none`).
    fn writes_flows(&self) -> bool {
        self.flows.is_some()
    }

    /// Keeps the first write error, which [`Recorder::finish`] reports.
    fn note(&mut self, written: Written) {
        if let Err(e) = written {
            self.error.get_or_insert(e);
        }
    }

    /// Keeps every `stride`-th sample of the first flows for the plots. The rows come in
    /// flow order, so the first row past the plotted flows ends the work.
    fn plot_points(&mut self, b: &FlowSamples) {
        let t = b.time.as_secs_f64();
        for row in 0..b.len() {
            let flow = b.flow[row];
            let Some(seen) = self.flow_seen.get_mut(flow) else { break };
            if seen.is_multiple_of(self.stride) {
                self.plot[flow].push(PlotPoint {
                    t,
                    cwnd: b.cwnd_pkts[row] as f64,
                    srtt_ms: b.srtt[row].as_millis_f64(),
                    delivered: b.delivered_bytes[row],
                });
            }
            *seen += 1;
        }
    }
}

impl Observer for Recorder {
    /// One sample on its own (the testbed's): a one-row [`FlowSamples`].
    fn flow_sample(&mut self, s: &FlowSample) {
        let mut one = std::mem::take(&mut self.one);
        one.start(s.time);
        one.push(s, |report| s.cc.iter().for_each(|(name, v)| report(name, *v)));
        self.flow_samples(&one);
        self.one = one;
    }

    fn flow_samples(&mut self, b: &FlowSamples) {
        if let Some(flows) = &mut self.flows {
            flows.rows(b);
        }
        self.plot_points(b);
    }

    fn wants_cc_values(&self) -> bool {
        self.writes_flows()
    }

    fn queue_sample(&mut self, s: &QueueSample) {
        let written = self.queue.sample(s, &mut self.values, self.stride);
        self.note(written);
    }

    fn reverse_queue_sample(&mut self, s: &QueueSample) {
        if let Some(q) = &mut self.reverse_queue {
            let written = q.sample(s, &mut self.values, self.stride);
            self.note(written);
        }
    }
}

/// A number, or null when absent.
fn opt(x: Option<f64>, decimals: usize) -> Json {
    Json::f(x.unwrap_or(f64::NAN), decimals)
}

/// summary.json: a function of the scenario and seed only (no wall-clock figures).
pub fn summary_json(scn: &Scenario, r: &Report, m: &RunMetrics) -> Json {
    let cfg = &scn.config;
    let flows = r
        .flows
        .iter()
        .map(|f| {
            let fc = &cfg.flows[f.flow];
            let fm = &m.flows[f.flow];
            let mut o = vec![
                ("id", Json::u(f.flow as u64)),
                ("name", Json::s(&fc.name)),
                ("cc", Json::s(&fc.cc)),
                ("goodput_bps", Json::f(f.goodput_bps, 0)),
                ("delivered_bytes", Json::u(f.delivered_bytes)),
                ("retransmits", Json::u(f.retransmits)),
                ("timeouts", Json::u(f.timeouts)),
                ("probes", f.probes.into()),
                ("drops", Json::u(f.drops)),
                (
                    "rtt_ms",
                    Json::Obj(vec![
                        ("mean", Json::f(f.rtt.mean_ms, 3)),
                        ("p50", Json::f(f.rtt.p50_ms, 3)),
                        ("p95", Json::f(f.rtt.p95_ms, 3)),
                        ("p99", Json::f(f.rtt.p99_ms, 3)),
                    ]),
                ),
                ("group", Json::s(&fm.group)),
                ("send_rate_bps", opt(fm.send_rate_bps, 0)),
                ("mean_cwnd_pkts", opt(fm.mean_cwnd_pkts, 3)),
                ("completion_s", opt(fm.completion_s, 6)),
                ("window_goodput_bps", opt(fm.window_goodput_bps, 0)),
                ("throughput_ratio", opt(fm.throughput_ratio, 6)),
            ];
            if r.reverse_link.is_some() {
                o.push(("direction", Json::s(fc.direction.name())));
            }
            // An item of the top object's "flows" array: four spaces deep.
            Json::Obj(o).rendered(4)
        })
        .collect();
    let groups = m
        .groups
        .iter()
        .map(|g| {
            Json::Obj(vec![
                ("name", Json::s(&g.name)),
                ("flows", Json::u(g.flows as u64)),
                ("goodput_bps", Json::f(g.goodput_bps, 0)),
                ("share", Json::f(g.share, 6)),
                ("throughput_ratio", opt(g.throughput_ratio, 6)),
            ])
        })
        .collect();
    let mut top = vec![
        ("scenario", Json::s(&scn.name)),
        ("seed", Json::u(cfg.seed)),
        ("duration_s", Json::Num(secs(cfg.duration.as_nanos()))),
        ("link", link_json(&r.link)),
    ];
    // Only runs with reverse traffic have these keys, so other summaries are unchanged.
    if let Some(rev) = &r.reverse_link {
        top.push(("reverse_link", link_json(rev)));
    }
    top.push(("flows", Json::Arr(flows)));
    // Only runs with cross traffic have this key, so other summaries are unchanged.
    if !r.cross.is_empty() {
        top.push(("cross", Json::Arr(cross_json(cfg, r))));
        top.push(("cross_load", cross_load_json(cfg, r)));
    }
    top.extend([(
        "fairness",
        Json::Obj(vec![
            ("jain", Json::f(m.jain, 6)),
            ("min_max_ratio", opt(m.min_max_ratio, 6)),
            ("synchronisation", opt(m.synchronisation, 6)),
            ("reference", m.reference.as_deref().map_or(Json::Null, Json::s)),
            ("groups", Json::Arr(groups)),
        ]),
    )]);
    Json::Obj(top)
}

/// The cross-traffic sources in summary.json: what each sent and what crossed its
/// bottleneck, as counts and as bit/s over its active time, as a flow's goodput is
/// (bytes on the wire, as a source's configured rate counts them).
fn cross_json(cfg: &SimConfig, r: &Report) -> Vec<Json> {
    r.cross
        .iter()
        .map(|c| {
            let source = &cfg.cross[c.source];
            let (offered, delivered) = c.rates_bps(source, r.duration);
            Json::Obj(vec![
                ("id", Json::u(c.source as u64)),
                ("kind", Json::s(source.kind.name())),
                ("direction", Json::s(source.direction.name())),
                ("active_s", Json::Num(secs(source.active_time(r.duration).as_nanos()))),
                ("sent_packets", Json::u(c.sent_packets)),
                ("sent_bytes", Json::u(c.sent_bytes)),
                ("delivered_packets", Json::u(c.delivered_packets)),
                ("delivered_bytes", Json::u(c.delivered_bytes)),
                ("drops", c.drops.into()),
                ("offered_bps", Json::f(offered, 0)),
                ("throughput_bps", Json::f(delivered, 0)),
            ])
            .rendered(4)
        })
        .collect()
}

/// The cross traffic's load on each link it crosses (`Report::cross_load_bps`: the
/// sources' bytes over the whole run, the rule of the terminal's and the report's lines),
/// per direction with sources. Run-level, so a sweep's tables carry it, where the
/// per-source `cross` list stays out.
fn cross_load_json(cfg: &SimConfig, r: &Report) -> Json {
    let directions = [Direction::Forward, Direction::Reverse].into_iter().filter_map(|dir| {
        let sources = r.cross.iter().filter(|c| cfg.cross[c.source].direction == dir).count();
        (sources > 0).then(|| {
            let (offered, delivered) = r.cross_load_bps(&cfg.cross, dir);
            let load = Json::Obj(vec![
                ("sources", Json::u(sources as u64)),
                ("offered_bps", Json::f(offered, 0)),
                ("delivered_bps", Json::f(delivered, 0)),
            ]);
            (dir.name(), load)
        })
    });
    Json::Obj(directions.collect())
}

/// One bottleneck's totals in summary.json.
fn link_json(l: &LinkReport) -> Json {
    Json::Obj(vec![
        ("rate_bps", Json::f(l.capacity_bps, 0)),
        ("utilization", Json::f(l.utilization, 6)),
        ("delivered_packets", Json::u(l.delivered_packets)),
        ("drops", Json::u(l.queue_drops + l.random_losses)),
        ("queue_drops", Json::u(l.queue_drops)),
        ("random_losses", Json::u(l.random_losses)),
        ("mean_queue_packets", Json::f(l.mean_queue_packets, 3)),
    ])
}

/// How a run kept time.
pub enum Clock {
    /// The simulator's virtual clock, advanced by `events` events.
    Simulated { events: u64 },
    /// Real time through the emulator (the testbed): no event queue.
    RealTime,
}

/// The identity of this build's sources (a hash of every crate a run goes through, from
/// build.rs), written into perf.json: a sweep reuses a finished run only if the same
/// sources wrote it.
pub const BUILD: &str = env!("CCLAB_SOURCE_HASH");

/// Wall-clock figures of one run (perf.json and the terminal).
pub struct Perf {
    pub clock: Clock,
    /// Scenario time the run covered, seconds (simulated, or emulated in real time).
    pub run_s: f64,
    /// Wall-clock time the run took, seconds.
    pub wall_s: f64,
    /// Packets the bottleneck delivered.
    pub packets: u64,
}

impl Perf {
    /// Per wall-clock second.
    fn per_s(&self, x: u64) -> f64 {
        if self.wall_s > 0.0 {
            x as f64 / self.wall_s
        } else {
            0.0
        }
    }

    pub fn json(&self) -> Json {
        let mut keys = match self.clock {
            Clock::Simulated { .. } => vec![("simulated_s", Json::f(self.run_s, 9))],
            Clock::RealTime => vec![("emulated_s", Json::f(self.run_s, 9))],
        };
        keys.push(("wall_s", Json::f(self.wall_s, 6)));
        if let Clock::Simulated { events } = self.clock {
            keys.push(("events", Json::u(events)));
            keys.push(("events_per_s", Json::f(self.per_s(events), 0)));
        }
        keys.push(("bottleneck_packets", Json::u(self.packets)));
        keys.push(("packets_per_s", Json::f(self.per_s(self.packets), 0)));
        keys.push(("build", Json::s(BUILD)));
        Json::Obj(keys)
    }

    pub fn line(&self) -> String {
        let (run_s, wall_s, packets) = (num(self.run_s, 3), self.wall_s, self.packets);
        match self.clock {
            Clock::Simulated { events } => format!(
                "simulated {run_s} s in {wall_s:.3} s wall (the simulation alone): {events} events ({:.2} M events/s), {packets} bottleneck packets ({:.2} M packets/s)",
                self.per_s(events) / 1e6,
                self.per_s(packets) / 1e6
            ),
            Clock::RealTime => format!(
                "emulated {run_s} s in {wall_s:.3} s wall: {packets} bottleneck packets ({:.0} packets/s)",
                self.per_s(packets)
            ),
        }
    }
}

/// The end of every run, simulated or on the testbed: flushes the time series, writes
/// summary.json, perf.json, the plots, report.html and the `extra` (name, text) files
/// beside them, then moves the folder into place. Returns whether that replaced earlier
/// results there.
pub fn finish(
    staging: Staging,
    rec: &mut Recorder,
    run: (&Scenario, &Report, &RunMetrics),
    perf: &Perf,
    extra: &[(&str, String)],
) -> Result<bool, String> {
    let (scn, report, metrics) = run;
    rec.finish()?;
    let dir = staging.path();
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    // Written as it is made: a summary of 100,000 flows is tens of megabytes.
    let summary = dir.join("summary.json");
    std::fs::File::create(&summary)
        .and_then(|file| summary_json(scn, report, metrics).write_to(file))
        .map_err(|e| format!("cannot write {}: {e}", summary.display()))?;
    write("perf.json", &perf.json().render())?;
    let plots = rec.plots(scn);
    for (name, svg) in &plots {
        write(name, svg)?;
    }
    write("report.html", &report_html(scn, report, metrics, &plots))?;
    for (name, text) in extra {
        write(name, text)?;
    }
    staging.commit()
}

/// What a run prints when it is done: the table, the perf line and where the results are.
pub fn print_finished(
    run: (&Scenario, &Report, &RunMetrics),
    perf: &Perf,
    (dest, asked): (&Path, SeriesFormat),
    replaced: bool,
) {
    let (scn, report, metrics) = run;
    crate::format::out(&table(scn, report, metrics));
    crate::format::outln(&perf.line());
    crate::format::outln(&format!(
        "results: {}{}",
        dest.display(),
        if replaced { " (replaced the earlier results there)" } else { "" }
    ));
    // `--series auto` (the default, `asked`) chose Parquet for a long run: say so where
    // the user looks for flows.csv.
    if asked == SeriesFormat::Auto
        && asked.resolve(scn.config.max_flow_samples()) == SeriesFormat::Parquet
    {
        crate::format::outln(&format!(
            "the time series are in flows.parquet and queue.parquet: more than {} rows (--series csv writes CSV)",
            crate::series::AUTO_PARQUET_ROWS
        ));
    }
}

/// The per-flow table's rows, header first, as the terminal and report.html show them,
/// and a line for the flows left out of a long table (the full list is in
/// summary.json). The window goodput, completion time and throughput ratio columns
/// appear when the run has them.
fn flow_rows(scn: &Scenario, r: &Report, m: &RunMetrics) -> (Vec<Vec<String>>, Option<String>) {
    // Shares count delivered bytes, as the groups' do: goodputs of flows active for
    // different spans (web-like arrivals) do not add up to anything.
    let shares = byte_shares(r);
    let extras = extra_columns(m);
    let mut header: Vec<String> = [
        "flow",
        "name",
        "cc",
        "goodput Mbit/s",
        "send Mbit/s",
        "mean cwnd",
        "retrans",
        "RTT p50 ms",
        "p95 ms",
        "p99 ms",
        "share",
    ]
    .map(String::from)
    .to_vec();
    header.extend(extras.iter().map(|(name, _)| name.to_string()));
    let mut rows = vec![header];
    let shown = table_flows(r.flows.len());
    for (f, &share) in r.flows[..shown].iter().zip(&shares) {
        let mut row = flow_row(scn, f, &m.flows[f.flow], share);
        row.extend(extras.iter().map(|(_, value)| value(&m.flows[f.flow])));
        rows.push(row);
    }
    let rest = (shown < r.flows.len()).then(|| {
        let rest = &r.flows[shown..];
        let rest_bytes = rest.iter().map(|f| f.delivered_bytes).sum::<u64>() as f64;
        let rest_share: f64 = shares[shown..].iter().sum();
        // Flows that moved nothing (a handshake whose SYNs a full queue kept dropping, a
        // start near the end) would otherwise show only in summary.json.
        let idle = rest.iter().filter(|f| f.delivered_bytes == 0).count();
        let idle = match idle {
            0 => String::new(),
            n => format!("; {n} of them delivered nothing"),
        };
        format!(
            "... and {} more flows ({:.3} MB delivered in all, {:.1}% of the flows' bytes{idle}); every flow is in summary.json",
            rest.len(),
            rest_bytes / 1e6,
            rest_share * 100.0
        )
    });
    (rows, rest)
}

/// Said after Jain's index where it leaves the reverse flows out.
fn forward_only_note(m: &RunMetrics) -> &'static str {
    if m.forward_only {
        " (of the forward flows: the reverse ones cross another link)"
    } else {
        ""
    }
}

/// Jain's index as `four_decimals` writes it, or to two significant figures below
/// 0.001, where four decimals would show 0 (its floor, 1/n, is 0.000001 with a million
/// flows).
fn jain_text(j: f64, four_decimals: fn(f64) -> String) -> String {
    if j == 0.0 || j >= 0.001 {
        four_decimals(j)
    } else {
        format!("{j:.1e}")
    }
}

/// The per-flow table and the link line, as printed on the terminal.
pub fn table(scn: &Scenario, r: &Report, m: &RunMetrics) -> String {
    let (rows, rest) = flow_rows(scn, r, m);
    let mut out = text_table(&rows, 3);
    if let Some(rest) = rest {
        out.push_str(&rest);
        out.push('\n');
    }
    out.push_str(&format!(
        "link: {:.3} Mbit/s, utilisation {:.1}%, {} packets delivered, drops {} (queue {}, random {}), mean queue {:.1} packets; Jain's fairness index {}{}\n",
        r.link.capacity_bps / 1e6,
        r.link.utilization * 100.0,
        r.link.delivered_packets,
        r.link.queue_drops + r.link.random_losses,
        r.link.queue_drops,
        r.link.random_losses,
        r.link.mean_queue_packets,
        jain_text(m.jain, |j| format!("{j:.4}")),
        forward_only_note(m)
    ));
    if let Some(rev) = &r.reverse_link {
        out.push_str(&format!(
            "reverse link: {:.3} Mbit/s, utilisation {:.1}%, {} packets delivered, drops {}, mean queue {:.1} packets\n",
            rev.capacity_bps / 1e6,
            rev.utilization * 100.0,
            rev.delivered_packets,
            rev.queue_drops,
            rev.mean_queue_packets
        ));
    }
    out.push_str(&cross_lines(&scn.config, r));
    out.push_str(&metrics_line(m));
    out
}

/// The cross traffic, one line per direction it crosses: its sources together
/// (summary.json has each), their bytes over the whole run as the load on its link.
fn cross_lines(cfg: &SimConfig, r: &Report) -> String {
    let mut out = String::new();
    for dir in [Direction::Forward, Direction::Reverse] {
        let of_dir: Vec<&CrossReport> =
            r.cross.iter().filter(|c| cfg.cross[c.source].direction == dir).collect();
        if of_dir.is_empty() {
            continue;
        }
        let sum = |of: fn(&CrossReport) -> u64| of_dir.iter().map(|c| of(c)).sum::<u64>();
        let (offered, delivered) = r.cross_load_bps(&cfg.cross, dir);
        let drops = match of_dir.iter().map(|c| c.drops).sum::<Option<u64>>() {
            Some(d) => d.to_string(),
            None => "not measured".to_string(),
        };
        let n = of_dir.len();
        let which =
            if r.reverse_link.is_some() { format!(" ({})", dir.name()) } else { String::new() };
        out.push_str(&format!(
            "cross traffic{which}: {n} source{}, over the whole run {:.3} Mbit/s offered, {:.3} Mbit/s delivered, {} of {} packets delivered, drops {drops}\n",
            if n == 1 { "" } else { "s" },
            offered / 1e6,
            delivered / 1e6,
            sum(|c| c.delivered_packets),
            sum(|c| c.sent_packets),
        ));
    }
    out
}

/// `x` if it is a number; NaN stands for a figure without data (a flow's RTT before its
/// first sample).
fn known(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// The fixed cells of one flow's line in the terminal table; `share` is its part of the
/// flows' delivered bytes.
fn flow_row(
    scn: &Scenario,
    f: &cclab_sim::FlowReport,
    fm: &cclab_scenario::metrics::FlowMetrics,
    share: f64,
) -> Vec<String> {
    let fc = &scn.config.flows[f.flow];
    let share = share * 100.0;
    let cell = |x: Option<f64>, scale: f64, d: usize| {
        x.map_or("-".to_string(), |x| format!("{:.d$}", x / scale))
    };
    vec![
        f.flow.to_string(),
        fc.name.clone(),
        fc.cc.clone(),
        format!("{:.3}", f.goodput_bps / 1e6),
        cell(fm.send_rate_bps, 1e6, 3),
        cell(fm.mean_cwnd_pkts, 1.0, 1),
        f.retransmits.to_string(),
        cell(known(f.rtt.p50_ms), 1.0, 1),
        cell(known(f.rtt.p95_ms), 1.0, 1),
        cell(known(f.rtt.p99_ms), 1.0, 1),
        format!("{share:.2}%"),
    ]
}

/// A table column that only some runs have: its header and how to fill a cell.
type Extra = (&'static str, fn(&cclab_scenario::metrics::FlowMetrics) -> String);

fn extra_columns(m: &RunMetrics) -> Vec<Extra> {
    let mut cols: Vec<Extra> = Vec::new();
    if m.flows.iter().any(|f| f.window_goodput_bps.is_some()) {
        cols.push(("window Mbit/s", |f| {
            f.window_goodput_bps.map_or("-".into(), |x| format!("{:.3}", x / 1e6))
        }));
    }
    if m.flows.iter().any(|f| f.completion_s.is_some()) {
        cols.push(("FCT s", |f| f.completion_s.map_or("-".into(), |x| format!("{x:.3}"))));
    }
    if m.reference.is_some() {
        cols.push(("ratio", |f| f.throughput_ratio.map_or("-".into(), |x| format!("{x:.3}"))));
    }
    cols
}

/// "fairness: min/max 0.912, loss synchronisation 0.43; groups: cubic 2 flows 71.9% (ratio 1.000), ..."
fn metrics_line(m: &RunMetrics) -> String {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.3}"));
    let mut line = format!(
        "fairness: min/max ratio {}, loss synchronisation {}",
        opt(m.min_max_ratio),
        opt(m.synchronisation)
    );
    if m.groups.len() > 1 {
        let groups: Vec<String> = m
            .groups
            .iter()
            .map(|g| {
                let ratio = g.throughput_ratio.map_or(String::new(), |x| format!(", ratio {x:.3}"));
                let flows = if g.flows == 1 { "flow" } else { "flows" };
                format!("{} ({} {flows}) {:.1}%{ratio}", g.name, g.flows, g.share * 100.0)
            })
            .collect();
        line.push_str(&format!("; groups: {}", groups.join(", ")));
    }
    if let Some(r) = &m.reference {
        line.push_str(&format!("; ratios against {r}"));
    }
    line.push('\n');
    line
}

impl Recorder {
    /// The four plots: (file name, SVG).
    pub fn plots(&self, scn: &Scenario) -> Vec<(&'static str, String)> {
        let cfg = &scn.config;
        let x_max = cfg.duration.as_secs_f64();
        let n = cfg.flows.len();
        let note = (n > MAX_PLOT_FLOWS).then(|| format!("first {MAX_PLOT_FLOWS} of {n} flows"));
        let name = |i: usize| cfg.flows[i].name.clone();
        let series = |f: &Extract<'_>| -> Vec<Series> {
            self.plot
                .iter()
                .enumerate()
                .map(|(i, pts)| Series { name: name(i), points: f(pts) })
                .collect()
        };
        let chart = |title, y_label, series, note: Option<String>| {
            Chart { title, x_label: "time (s)", y_label, x_max, series, note }.render()
        };
        // Each chart's points are gathered just before it is drawn and dropped after, so
        // the next reuses their memory.
        let cwnd = chart(
            "Congestion window",
            "cwnd (packets)",
            series(&|p| p.iter().map(|q| (q.t, q.cwnd)).collect()),
            note.clone(),
        );
        // Goodput from delivered-byte deltas over a window of about 1% of the run (at
        // least one kept sample), so the line shows trends rather than sampling noise.
        let window = (x_max / 100.0).max(cfg.sample_interval.as_secs_f64());
        let goodput = chart(
            "Goodput",
            "goodput (Mbit/s)",
            series(&|p| {
                goodput_points(&p.iter().map(|q| (q.t, q.delivered)).collect::<Vec<_>>(), window)
            }),
            note.clone(),
        );
        let mut queue =
            vec![Series { name: "bottleneck".to_string(), points: self.queue.plot.clone() }];
        if let Some(rev) = &self.reverse_queue {
            queue.push(Series { name: "reverse bottleneck".to_string(), points: rev.plot.clone() });
        }
        let queue = chart("Bottleneck queue", "queue (packets)", queue, None);
        let rtt = chart(
            "Smoothed RTT",
            "srtt (ms)",
            series(&|p| p.iter().filter(|q| q.srtt_ms > 0.0).map(|q| (q.t, q.srtt_ms)).collect()),
            note,
        );
        vec![("cwnd.svg", cwnd), ("goodput.svg", goodput), ("queue.svg", queue), ("rtt.svg", rtt)]
    }
}

/// Goodput in Mbit/s over time from one flow's (time s, delivered bytes) samples:
/// delivered-byte deltas over a sliding `window` seconds (at least one sample), so the
/// line shows trends rather than sampling noise. Shared by the run plots and
/// `cclab compare`.
pub fn goodput_points(p: &[(f64, u64)], window: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for i in 0..p.len() {
        while j < i && p[i].0 - p[j].0 > window + 1e-12 {
            j += 1;
        }
        let k = if j == i && i > 0 { i - 1 } else { j };
        if k < i {
            let dt = p[i].0 - p[k].0;
            out.push((p[i].0, p[i].1.saturating_sub(p[k].1) as f64 * 8.0 / dt / 1e6));
        }
    }
    out
}

/// Rows as an HTML table, the first row its header.
fn html_table(rows: &[Vec<String>]) -> String {
    let cells = |row: &[String], tag: &str| -> String {
        row.iter().map(|c| format!("<{tag}>{}</{tag}>", xml(c))).collect()
    };
    let mut t = format!("<table><tr>{}</tr>\n", cells(&rows[0], "th"));
    for row in &rows[1..] {
        t.push_str(&format!("<tr>{}</tr>\n", cells(row, "td")));
    }
    t.push_str("</table>\n");
    t
}

/// The report's cross-traffic table: one row per source (after `count` is expanded),
/// with what summary.json's `cross` has; each source's rates are over its own active
/// time (the lines under the table give the sources' load over the whole run).
fn cross_rows(cfg: &SimConfig, r: &Report) -> Vec<Vec<String>> {
    let head = [
        "source",
        "kind",
        "direction",
        "rate Mbit/s",
        "active s",
        "sent pkts",
        "delivered pkts",
        "drops",
        "offered Mbit/s",
        "delivered Mbit/s",
    ];
    let mut rows = vec![head.iter().map(|h| h.to_string()).collect()];
    for c in &r.cross {
        let source = &cfg.cross[c.source];
        let (offered, delivered) = c.rates_bps(source, r.duration);
        rows.push(vec![
            c.source.to_string(),
            source.kind.name().to_string(),
            source.direction.name().to_string(),
            format!("{:.3}", source.rate.bps() as f64 / 1e6),
            format!("{:.3}", source.active_time(r.duration).as_secs_f64()),
            c.sent_packets.to_string(),
            c.delivered_packets.to_string(),
            c.drops.map_or("-".to_string(), |d| d.to_string()),
            format!("{:.3}", offered / 1e6),
            format!("{:.3}", delivered / 1e6),
        ]);
    }
    rows
}

/// report.html: the summary table and the plots in one self-contained page.
fn report_html(
    scn: &Scenario,
    r: &Report,
    m: &RunMetrics,
    plots: &[(&'static str, String)],
) -> String {
    // Room for the plots and a line per flow up front: the page is written in one go.
    let svg_bytes: usize = plots.iter().map(|(_, svg)| svg.len()).sum();
    let mut h = String::with_capacity(svg_bytes + 4096 + r.flows.len() * 160);
    h.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cclab: ");
    h.push_str(&xml(&scn.name));
    h.push_str("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:900px}table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ccc;text-align:right}td:nth-child(-n+3),th:nth-child(-n+3){text-align:left}</style></head><body>\n");
    h.push_str(&format!(
        "<h1>{}</h1>\n<p>seed {}, {} s simulated, {}, {}</p>\n",
        xml(&scn.name),
        scn.config.seed,
        secs(scn.config.duration.as_nanos()),
        crate::format::counted(scn.config.flows.len(), "flow"),
        crate::format::counted(scn.config.cross.len(), "cross-traffic source")
    ));
    if let Some(point) = &scn.point {
        h.push_str(&format!("<p>Sweep {}</p>\n", xml(point)));
    }
    let (rows, rest) = flow_rows(scn, r, m);
    h.push_str(&html_table(&rows));
    if let Some(rest) = rest {
        h.push_str(&format!("<p>{}</p>\n", xml(&rest)));
    }
    let link = |label: &str, l: &LinkReport| {
        format!(
            "{label} {} Mbit/s, utilisation {}%, {} packets delivered, {} drops, mean queue {} packets",
            num(l.capacity_bps / 1e6, 3),
            num(l.utilization * 100.0, 1),
            l.delivered_packets,
            l.queue_drops + l.random_losses,
            num(l.mean_queue_packets, 1),
        )
    };
    let forward = if r.reverse_link.is_some() { "Forward link" } else { "Link" };
    h.push_str(&format!(
        "<p>{}; Jain's fairness index {}{}.</p>\n",
        link(forward, &r.link),
        jain_text(m.jain, |j| num(j, 4)),
        xml(forward_only_note(m))
    ));
    if let Some(rev) = &r.reverse_link {
        h.push_str(&format!("<p>{}.</p>\n", link("Reverse link", rev)));
    }
    h.push_str(&format!("<p>{}</p>\n", xml(metrics_line(m).trim_end())));
    if !r.cross.is_empty() {
        h.push_str("<h2>Cross traffic</h2>\n");
        h.push_str(&html_table(&cross_rows(&scn.config, r)));
        for line in cross_lines(&scn.config, r).lines() {
            h.push_str(&format!("<p>{}</p>\n", xml(line)));
        }
    }
    for (_, svg) in plots {
        h.push_str("<div>\n");
        h.push_str(svg);
        h.push_str("</div>\n");
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::Staging;

    /// The lab server once saved one run twice at the same moment (the run's thread and
    /// the client's request); both wrote into `.NAME.partial-PID` and one removed the
    /// other's folder. Two stagings of one destination in one process must not share it.
    #[test]
    fn two_stagings_of_one_destination_in_one_process_do_not_share_a_folder() {
        let parent = std::env::temp_dir().join(format!("cclab-staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let dest = parent.join("out");
        let a = Staging::new(&dest).unwrap();
        let b = Staging::new(&dest).unwrap();
        assert_ne!(a.path(), b.path());
        std::fs::write(a.path().join("summary.json"), "a").unwrap();
        std::fs::write(b.path().join("summary.json"), "b").unwrap();
        assert!(!a.commit().unwrap(), "the first commit creates the folder");
        assert!(b.commit().unwrap(), "the second replaces it, whole");
        assert_eq!(std::fs::read_to_string(dest.join("summary.json")).unwrap(), "b");
        let left: Vec<_> = std::fs::read_dir(&parent).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "only the results folder is left");
        std::fs::remove_dir_all(&parent).unwrap();
    }

    /// `--out link`, a symbolic link to a results folder: the folder it names is
    /// replaced and the link stays (it was once replaced by a folder, and the old results
    /// were left where it pointed).
    #[test]
    fn a_link_to_a_results_folder_is_followed_and_kept() {
        let parent =
            std::env::temp_dir().join(format!("cclab-staging-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let (real, link) = (parent.join("real"), parent.join("link"));
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("summary.json"), "old").unwrap();
        std::os::unix::fs::symlink("real", &link).unwrap();
        let staged = Staging::new(&link).unwrap();
        std::fs::write(staged.path().join("summary.json"), "new").unwrap();
        assert!(staged.commit().unwrap(), "the folder the link names is replaced");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(link.join("summary.json")).unwrap(), "new");
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("nowhere", &link).unwrap();
        let e = Staging::new(&link).err().expect("a dangling link is refused");
        assert!(e.contains("is a symbolic link to nowhere, which cannot be followed"), "{e}");
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
