//! `cclab compare DIR_A DIR_B`: two results folders (from `cclab run` or `cclab testbed
//! run`) side by side. Reads each folder's summary.json and flows.csv, prints every
//! flow's goodput, retransmits, packets dropped, RTT percentiles (summary.json's) and
//! smoothed-RTT percentiles (over the 10 ms samples, which a simulated and a testbed run
//! take alike; see [`FlowSeries::srtt_percentiles`]) and the link's utilisation, drops,
//! mean queue and Jain's index (and, per direction where either run has cross traffic,
//! its sources' load on the link, packets and drops) with B - A and (B - A) / A, and writes
//! compare.json, overlay plots of cwnd and throughput (A solid, B dashed, one colour per
//! flow) and compare.html into the output folder.
//!
//! Flows are matched by id; folders whose flow sets differ are refused with the
//! difference named, since a per-flow comparison of different flow sets means nothing.

use crate::format::{num, text_table, xml, Json};
use crate::plot::{Chart, Series};
use crate::results::{goodput_points, table_flows};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Flows drawn in the overlay plots at most: two lines each, and the legend holds 16.
const MAX_OVERLAY_FLOWS: usize = 8;
/// Under the table: what the two kinds of RTT rows are over.
const RTT_NOTE: &str =
    "RTT: summary.json's percentiles (a simulated run's over every ACK's RTT sample, \
a testbed run's over the kernel's srtt every 10 ms); srtt: both runs' smoothed RTT every 10 ms \
(like with like; for the flows the terminal table lists)";
/// Legend labels longer than this are cut (the note above the plot has the full names).
const MAX_LABEL_NAME: usize = 12;

#[derive(clap::Args)]
pub struct Args {
    /// First results folder (A), written by `cclab run` or `cclab testbed run`.
    #[arg(value_name = "DIR_A")]
    pub a: PathBuf,
    /// Second results folder (B); differences are B - A.
    #[arg(value_name = "DIR_B")]
    pub b: PathBuf,
    /// Output folder [default: results/compare-<name A>-vs-<name B>].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One flow of a summary.json.
pub(crate) struct FlowSummary {
    pub id: u64,
    pub name: String,
    pub cc: String,
    pub goodput_bps: f64,
    pub retransmits: f64,
    /// The flow's segments lost at the bottleneck; unknown (NaN) in folders written
    /// before summary.json had it.
    pub drops: f64,
    pub rtt_p50_ms: f64,
    pub rtt_p95_ms: f64,
    pub rtt_p99_ms: f64,
    /// Percentiles of the smoothed RTT over the run's 10 ms samples (see
    /// [`FlowSeries::srtt_percentiles`]); NaN until filled from the series, and for the
    /// flows the terminal table leaves out (`table_flows`).
    pub srtt_p50_ms: f64,
    pub srtt_p95_ms: f64,
}

/// What `compare` (and `cclab fidelity`) needs of one results folder.
pub(crate) struct Run {
    /// The folder's own name, used for labels and the default output folder.
    pub name: String,
    pub dir: PathBuf,
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    pub utilization: f64,
    pub drops: f64,
    pub mean_queue_packets: f64,
    pub jain: f64,
    pub flows: Vec<FlowSummary>,
    /// Per direction, as [`DIRECTIONS`] orders them.
    pub cross: [CrossTotals; 2],
}

/// A run's cross-traffic sources of one direction together, from summary.json's `cross`
/// (which runs without cross traffic leave out: all zero then). Rates are bytes over the
/// whole run, the load on the link: the sources' own rates, each over its active time,
/// would add sources that sent at different times as if they sent together.
#[derive(Default)]
pub(crate) struct CrossTotals {
    pub sources: usize,
    pub offered_bps: f64,
    pub throughput_bps: f64,
    pub delivered_packets: f64,
    /// Unknown (NaN) where any source's drops were not measured (a testbed run's).
    pub drops: f64,
}

/// The two directions cross traffic can take, in the order the comparison lists them.
const DIRECTIONS: [&str; 2] = ["forward", "reverse"];

/// One compared quantity: its JSON key, its label in the table, the decimals of the JSON
/// value, and how the table shows it (scale and decimals).
struct Metric {
    key: &'static str,
    label: &'static str,
    json_decimals: usize,
    table_scale: f64,
    table_decimals: usize,
}

/// Reads one compared value of a flow, or of a whole run.
type FlowValue = fn(&FlowSummary) -> f64;
type RunValue = fn(&Run) -> f64;
/// Turns one run's series of one flow into chart points.
type Extract<'a> = dyn Fn(&FlowSeries, usize) -> Vec<(f64, f64)> + 'a;

const FLOW_METRICS: &[(Metric, FlowValue)] = &[
    (
        Metric {
            key: "goodput_bps",
            label: "goodput Mbit/s",
            json_decimals: 0,
            table_scale: 1e-6,
            table_decimals: 3,
        },
        |f| f.goodput_bps,
    ),
    (
        Metric {
            key: "retransmits",
            label: "retransmits",
            json_decimals: 0,
            table_scale: 1.0,
            table_decimals: 0,
        },
        |f| f.retransmits,
    ),
    (
        Metric {
            key: "drops",
            label: "packets dropped",
            json_decimals: 0,
            table_scale: 1.0,
            table_decimals: 0,
        },
        |f| f.drops,
    ),
    (
        Metric {
            key: "rtt_p50_ms",
            label: "RTT p50 ms",
            json_decimals: 3,
            table_scale: 1.0,
            table_decimals: 3,
        },
        |f| f.rtt_p50_ms,
    ),
    (
        Metric {
            key: "rtt_p95_ms",
            label: "RTT p95 ms",
            json_decimals: 3,
            table_scale: 1.0,
            table_decimals: 3,
        },
        |f| f.rtt_p95_ms,
    ),
    (
        Metric {
            key: "rtt_p99_ms",
            label: "RTT p99 ms",
            json_decimals: 3,
            table_scale: 1.0,
            table_decimals: 3,
        },
        |f| f.rtt_p99_ms,
    ),
    (
        Metric {
            key: "srtt_p50_ms",
            label: "srtt p50 ms",
            json_decimals: 3,
            table_scale: 1.0,
            table_decimals: 3,
        },
        |f| f.srtt_p50_ms,
    ),
    (
        Metric {
            key: "srtt_p95_ms",
            label: "srtt p95 ms",
            json_decimals: 3,
            table_scale: 1.0,
            table_decimals: 3,
        },
        |f| f.srtt_p95_ms,
    ),
];

const LINK_METRICS: &[(Metric, RunValue)] = &[
    (
        Metric {
            key: "utilization",
            label: "utilisation %",
            json_decimals: 6,
            table_scale: 100.0,
            table_decimals: 2,
        },
        |r| r.utilization,
    ),
    (
        Metric {
            key: "drops",
            label: "drops",
            json_decimals: 0,
            table_scale: 1.0,
            table_decimals: 0,
        },
        |r| r.drops,
    ),
    (
        Metric {
            key: "mean_queue_packets",
            label: "mean queue pkts",
            json_decimals: 3,
            table_scale: 1.0,
            table_decimals: 3,
        },
        |r| r.mean_queue_packets,
    ),
    (
        Metric {
            key: "jain",
            label: "Jain's index",
            json_decimals: 6,
            table_scale: 1.0,
            table_decimals: 6,
        },
        |r| r.jain,
    ),
];

/// Reads one compared value of a direction's cross traffic.
type CrossValue = fn(&CrossTotals) -> f64;

/// The cross traffic's rows, per direction where either run has sources.
const CROSS_METRICS: &[(Metric, CrossValue)] = &[
    (
        Metric {
            key: "sources",
            label: "sources",
            json_decimals: 0,
            table_scale: 1.0,
            table_decimals: 0,
        },
        |c| c.sources as f64,
    ),
    (
        Metric {
            key: "offered_bps",
            label: "offered Mbit/s",
            json_decimals: 0,
            table_scale: 1e-6,
            table_decimals: 3,
        },
        |c| c.offered_bps,
    ),
    (
        Metric {
            key: "throughput_bps",
            label: "delivered Mbit/s",
            json_decimals: 0,
            table_scale: 1e-6,
            table_decimals: 3,
        },
        |c| c.throughput_bps,
    ),
    (
        Metric {
            key: "delivered_packets",
            label: "delivered pkts",
            json_decimals: 0,
            table_scale: 1.0,
            table_decimals: 0,
        },
        |c| c.delivered_packets,
    ),
    (
        Metric {
            key: "drops",
            label: "drops",
            json_decimals: 0,
            table_scale: 1.0,
            table_decimals: 0,
        },
        |c| c.drops,
    ),
];

/// The directions (index into [`DIRECTIONS`]) in which either run has cross traffic.
fn cross_directions(a: &Run, b: &Run) -> Vec<usize> {
    (0..DIRECTIONS.len()).filter(|&d| a.cross[d].sources > 0 || b.cross[d].sources > 0).collect()
}

/// `(b - a) / a`; zero when both are zero, `None` when only `a` is (or either is unknown).
fn relative(a: f64, b: f64) -> Option<f64> {
    if !a.is_finite() || !b.is_finite() {
        None
    } else if a == 0.0 {
        (b == 0.0).then_some(0.0)
    } else {
        Some((b - a) / a)
    }
}

/// The JSON of one compared value: `{"a", "b", "diff", "rel"}`, each rounded to the
/// metric's decimals (rel to 6), so the output is the same bytes every time.
fn pair_json(m: &Metric, a: f64, b: f64) -> Json {
    Json::Obj(vec![
        ("a", Json::f(a, m.json_decimals)),
        ("b", Json::f(b, m.json_decimals)),
        ("diff", Json::f(b - a, m.json_decimals)),
        ("rel", relative(a, b).map_or(Json::Null, |r| Json::f(r, 6))),
    ])
}

/// One table row: label, A, B, B - A, change in percent.
fn pair_row(m: &Metric, a: f64, b: f64) -> Vec<String> {
    let show = |x: f64| {
        if x.is_finite() {
            format!("{:.*}", m.table_decimals, x * m.table_scale)
        } else {
            "-".to_string()
        }
    };
    let diff = b - a;
    let diff_text = if diff.is_finite() {
        let t = format!("{:+.*}", m.table_decimals, diff * m.table_scale);
        // A difference that rounds to zero is shown as +0, never -0.
        if t.bytes().all(|c| matches!(c, b'+' | b'-' | b'0' | b'.')) {
            t.replacen('-', "+", 1)
        } else {
            t
        }
    } else {
        "-".to_string()
    };
    let rel = match relative(a, b) {
        Some(r) => format!("{:+.2}%", r * 100.0),
        None => "n/a".to_string(),
    };
    vec![format!("  {}", m.label), show(a), show(b), diff_text, rel]
}

/// The folder's name for labels: its last component, after resolving `.` and `..`.
fn folder_name(dir: &Path) -> String {
    let resolved = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    resolved
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .unwrap_or_else(|| dir.display().to_string())
}

/// Reads the summary.json of a results folder; every error names the file and the field.
pub(crate) fn load_summary(dir: &Path) -> Result<Run, String> {
    if !dir.exists() {
        return Err(format!("{}: no such results folder", dir.display()));
    }
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a folder (expected a results folder written by cclab run)",
            dir.display()
        ));
    }
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        // A sweep's folder holds one results folder per run.
        std::io::ErrorKind::NotFound if dir.join("sweep.json").is_file() => format!(
            "{} is a sweep's folder; compare two of its runs, e.g. {}",
            dir.display(),
            dir.join("points").join("0").display()
        ),
        std::io::ErrorKind::NotFound => format!(
            "{}: missing (is {} a results folder written by cclab run?)",
            path.display(),
            dir.display()
        ),
        _ => format!("{}: cannot read: {e}", path.display()),
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not valid JSON: {e}", path.display()))?;
    let p = path.display();
    // `key` is a path into the JSON ("link.drops"); `label` names it in errors
    // ("flows[2].rtt_ms.p50").
    let field = |v: &Value, key: &str, label: &str| -> Result<Value, String> {
        v.pointer(&format!("/{}", key.replace('.', "/")))
            .cloned()
            .ok_or_else(|| format!("{p}: field {label} is missing"))
    };
    // Numbers may be null where the run had nothing to measure (e.g. RTT of a flow that
    // never sent); those compare as unknown.
    let number = |v: &Value, key: &str, label: &str| -> Result<f64, String> {
        match field(v, key, label)? {
            Value::Null => Ok(f64::NAN),
            x => x.as_f64().ok_or_else(|| format!("{p}: field {label} is {x}, expected a number")),
        }
    };
    let whole = |v: &Value, key: &str, label: &str| -> Result<u64, String> {
        let x = field(v, key, label)?;
        x.as_u64().ok_or_else(|| format!("{p}: field {label} is {x}, expected a whole number"))
    };
    let text_of = |v: &Value, key: &str, label: &str| -> Result<String, String> {
        let x = field(v, key, label)?;
        x.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{p}: field {label} is {x}, expected a string"))
    };
    let flows_v = field(&v, "flows", "flows")?;
    let flows_v = flows_v
        .as_array()
        .ok_or_else(|| format!("{p}: field flows is {flows_v}, expected a list"))?;
    let mut flows = Vec::with_capacity(flows_v.len());
    for (i, f) in flows_v.iter().enumerate() {
        let at = |key: &str| format!("flows[{i}].{key}");
        let num_at = |key: &str| number(f, key, &at(key));
        flows.push(FlowSummary {
            id: whole(f, "id", &at("id"))?,
            name: text_of(f, "name", &at("name"))?,
            cc: text_of(f, "cc", &at("cc"))?,
            goodput_bps: num_at("goodput_bps")?,
            retransmits: num_at("retransmits")?,
            drops: if f.get("drops").is_some() { num_at("drops")? } else { f64::NAN },
            rtt_p50_ms: num_at("rtt_ms.p50")?,
            rtt_p95_ms: num_at("rtt_ms.p95")?,
            rtt_p99_ms: num_at("rtt_ms.p99")?,
            srtt_p50_ms: f64::NAN,
            srtt_p95_ms: f64::NAN,
        });
    }
    let duration_s = number(&v, "duration_s", "duration_s")?;
    let mut cross: [CrossTotals; 2] = Default::default();
    if let Some(sources) = v.get("cross") {
        let sources = sources
            .as_array()
            .ok_or_else(|| format!("{p}: field cross is {sources}, expected a list"))?;
        for (i, c) in sources.iter().enumerate() {
            let at = |key: &str| format!("cross[{i}].{key}");
            if !c.is_object() {
                return Err(format!("{p}: field cross[{i}] is {c}, expected an object"));
            }
            let direction = text_of(c, "direction", &at("direction"))?;
            let d = DIRECTIONS.iter().position(|&n| n == direction).ok_or_else(|| {
                format!(
                    "{p}: field {} is \"{direction}\", expected forward or reverse",
                    at("direction")
                )
            })?;
            // Folders written before summary.json had a source's bytes: its rates unknown.
            let bytes = |key: &str| match c.get(key) {
                None => Ok(f64::NAN),
                Some(_) => whole(c, key, &at(key)).map(|b| b as f64 * 8.0 / duration_s),
            };
            let totals = &mut cross[d];
            totals.sources += 1;
            totals.offered_bps += bytes("sent_bytes")?;
            totals.throughput_bps += bytes("delivered_bytes")?;
            totals.delivered_packets +=
                whole(c, "delivered_packets", &at("delivered_packets"))? as f64;
            totals.drops += match field(c, "drops", &at("drops"))? {
                Value::Null => f64::NAN,
                _ => whole(c, "drops", &at("drops"))? as f64,
            };
        }
    }
    let mut ids: Vec<u64> = flows.iter().map(|f| f.id).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("{p}: flow id {} appears twice in flows", w[0]));
    }
    Ok(Run {
        name: folder_name(dir),
        dir: dir.to_path_buf(),
        scenario: text_of(&v, "scenario", "scenario")?,
        seed: whole(&v, "seed", "seed")?,
        duration_s,
        utilization: number(&v, "link.utilization", "link.utilization")?,
        drops: number(&v, "link.drops", "link.drops")?,
        mean_queue_packets: number(&v, "link.mean_queue_packets", "link.mean_queue_packets")?,
        jain: number(&v, "fairness.jain", "fairness.jain")?,
        flows,
        cross,
    })
}

fn flows_count(n: usize) -> String {
    format!("{n} flow{}", if n == 1 { "" } else { "s" })
}

/// Pairs the flows of A and B by id (in A's order); an error says which folder has
/// which flows when the sets differ.
fn match_flows<'a>(
    a: &'a Run,
    b: &'a Run,
) -> Result<Vec<(&'a FlowSummary, &'a FlowSummary)>, String> {
    if a.flows.len() != b.flows.len() {
        return Err(format!(
            "the flow sets differ: {} has {}, {} has {}; compare needs the same flows (matched by id)",
            a.dir.display(),
            flows_count(a.flows.len()),
            b.dir.display(),
            flows_count(b.flows.len())
        ));
    }
    a.flows
        .iter()
        .map(|fa| match b.flows.iter().find(|fb| fb.id == fa.id) {
            Some(fb) => Ok((fa, fb)),
            None => Err(format!(
                "the flow sets differ: flow id {} is in {} but not in {}",
                fa.id,
                a.dir.display(),
                b.dir.display()
            )),
        })
        .collect()
}

/// Per-flow (time s, cwnd packets), (time s, ssthresh packets), (time s, delivered
/// bytes) and (time s, smoothed RTT ms) from the series, for the flows whose id is below
/// `max_id`, indexed by id.
pub(crate) struct FlowSeries {
    pub cwnd: Vec<Vec<(f64, f64)>>,
    pub ssthresh: Vec<Vec<(f64, f64)>>,
    pub delivered: Vec<Vec<(f64, u64)>>,
    pub srtt_ms: Vec<Vec<(f64, f64)>>,
}

impl FlowSeries {
    /// Percentiles (nearest rank) of a flow's smoothed RTT over its samples, leaving out
    /// those before its first RTT measurement (0); NaN without any. A simulated run and a
    /// testbed run sample srtt on the same grid (the testbed from `TCP_INFO`, the
    /// simulator from its sender), so these compare like with like. summary.json's RTT
    /// percentiles do not: the testbed's are over these samples, the simulator's over
    /// every ACK's RTT, which weighs each period by its ACKs rather than its time. On a
    /// trace link that is most of the gap (one CUBIC flow on Verizon-LTE-short.down:
    /// per-ACK p50 239 ms against srtt samples' 296, the kernel's 299).
    pub fn srtt_percentiles<const N: usize>(&self, flow: usize, qs: [f64; N]) -> [f64; N] {
        let Some(samples) = self.srtt_ms.get(flow) else { return [f64::NAN; N] };
        let mut v: Vec<f64> = samples.iter().map(|&(_, r)| r).filter(|&r| r > 0.0).collect();
        v.sort_by(f64::total_cmp);
        qs.map(|q| match v.len() {
            0 => f64::NAN,
            n => v[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
        })
    }
}

/// The series from flows.csv, or from flows.parquet where the run wrote Parquet.
pub(crate) fn load_flows(dir: &Path, max_id: usize) -> Result<FlowSeries, String> {
    let parquet = dir.join("flows.parquet");
    if !dir.join("flows.csv").exists() && parquet.exists() {
        return load_flows_parquet(&parquet, max_id);
    }
    load_flows_csv(dir, max_id)
}

fn load_flows_parquet(path: &Path, max_id: usize) -> Result<FlowSeries, String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let bad = |e: &dyn std::fmt::Display| format!("{}: cannot read: {e}", path.display());
    let file = std::fs::File::open(path).map_err(|e| bad(&e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| bad(&e))?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let col = |name: &str| {
        schema
            .columns()
            .iter()
            .position(|c| c.name() == name)
            .ok_or_else(|| format!("{}: no column {name}", path.display()))
    };
    let (ct, cf, cc, cs, cd, cr) = (
        col("time_s")?,
        col("flow")?,
        col("cwnd_pkts")?,
        col("ssthresh_pkts")?,
        col("delivered_bytes")?,
        col("srtt_ms")?,
    );
    let mut out = FlowSeries {
        cwnd: vec![Vec::new(); max_id],
        ssthresh: vec![Vec::new(); max_id],
        delivered: vec![Vec::new(); max_id],
        srtt_ms: vec![Vec::new(); max_id],
    };
    for row in reader.get_row_iter(None).map_err(|e| bad(&e))? {
        let row = row.map_err(|e| bad(&e))?;
        use parquet::record::RowAccessor;
        let flow = row.get_long(cf).map_err(|e| bad(&e))? as usize;
        if flow >= max_id {
            continue;
        }
        let t = row.get_double(ct).map_err(|e| bad(&e))?;
        let cwnd = row.get_long(cc).map_err(|e| bad(&e))? as f64;
        let ssthresh = row.get_long(cs).map_err(|e| bad(&e))? as f64;
        let delivered = row.get_long(cd).map_err(|e| bad(&e))? as u64;
        let srtt = row.get_double(cr).map_err(|e| bad(&e))?;
        out.cwnd[flow].push((t, cwnd));
        out.ssthresh[flow].push((t, ssthresh));
        out.delivered[flow].push((t, delivered));
        out.srtt_ms[flow].push((t, srtt));
    }
    Ok(out)
}

fn load_flows_csv(dir: &Path, max_id: usize) -> Result<FlowSeries, String> {
    let path = dir.join("flows.csv");
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("{}: missing, and no flows.parquet either (needed for the plots; the run was written with --series none?)", path.display())
        }
        _ => format!("{}: cannot read: {e}", path.display()),
    })?;
    let mut lines = text.lines();
    let header = lines
        .next()
        .ok_or_else(|| format!("{}: empty (expected a header line)", path.display()))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .ok_or_else(|| format!("{}: the header has no column {name}", path.display()))
    };
    let (ct, cf, cc, cd) =
        (col("time_s")?, col("flow")?, col("cwnd_pkts")?, col("delivered_bytes")?);
    let (cs, cr) = (col("ssthresh_pkts")?, col("srtt_ms")?);
    let mut out = FlowSeries {
        cwnd: vec![Vec::new(); max_id],
        ssthresh: vec![Vec::new(); max_id],
        delivered: vec![Vec::new(); max_id],
        srtt_ms: vec![Vec::new(); max_id],
    };
    for (n, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').collect();
        let bad = |c: usize, what: &str| {
            format!(
                "{} line {}: column {} is {:?}, expected {what}",
                path.display(),
                n + 2,
                cols[c],
                cells.get(c).copied().unwrap_or("")
            )
        };
        let cell = |c: usize| cells.get(c).map(|s| s.trim()).unwrap_or("");
        let flow: usize = cell(cf).parse().map_err(|_| bad(cf, "a flow id"))?;
        if flow >= max_id {
            continue;
        }
        let t: f64 = cell(ct)
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite())
            .ok_or_else(|| bad(ct, "a time in seconds"))?;
        let packets = |c: usize| -> Result<f64, String> {
            cell(c)
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| bad(c, "a number of packets"))
        };
        let cwnd = packets(cc)?;
        out.ssthresh[flow].push((t, packets(cs)?));
        let delivered: u64 = cell(cd).parse().map_err(|_| bad(cd, "a whole number of bytes"))?;
        let srtt: f64 = cell(cr)
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| bad(cr, "a time in milliseconds"))?;
        out.cwnd[flow].push((t, cwnd));
        out.delivered[flow].push((t, delivered));
        out.srtt_ms[flow].push((t, srtt));
    }
    Ok(out)
}

/// Cuts a folder name for a legend label.
fn short(name: &str) -> String {
    if name.chars().count() <= MAX_LABEL_NAME {
        name.to_string()
    } else {
        format!("{}…", name.chars().take(MAX_LABEL_NAME - 1).collect::<String>())
    }
}

/// The two overlay plots: (file name, SVG).
fn overlay_plots(
    (a, sa): (&Run, &FlowSeries),
    (b, sb): (&Run, &FlowSeries),
    pairs: &[(&FlowSummary, &FlowSummary)],
) -> Vec<(&'static str, String)> {
    let shown: Vec<_> = pairs.iter().take(MAX_OVERLAY_FLOWS).collect();
    let x_max = a.duration_s.max(b.duration_s);
    let x_max = if x_max.is_finite() && x_max > 0.0 { x_max } else { 1.0 };
    let window = x_max / 100.0;
    let mut note = format!("solid: {}, dashed: {}", a.name, b.name);
    if pairs.len() > shown.len() {
        note.push_str(&format!(" (first {} of {} flows)", shown.len(), pairs.len()));
    }
    // Series 2k is flow k of A, 2k+1 the same flow of B: same colour, B dashed.
    let style = |i: usize| (i / 2, i % 2 == 1);
    let series = |f: &Extract<'_>| -> Vec<Series> {
        shown
            .iter()
            .flat_map(|(fa, fb)| {
                [
                    Series {
                        name: format!("{}: {}", short(&a.name), fa.name),
                        points: f(sa, fa.id as usize),
                    },
                    Series {
                        name: format!("{}: {}", short(&b.name), fb.name),
                        points: f(sb, fb.id as usize),
                    },
                ]
            })
            .collect()
    };
    let cwnd = series(&|s, id| s.cwnd[id].clone());
    let goodput = series(&|s, id| goodput_points(&s.delivered[id], window));
    let chart = |title, y_label, series| {
        Chart { title, x_label: "time (s)", y_label, x_max, series, note: Some(note.clone()) }
            .render_styled(&style)
    };
    let [cwnd_svg, throughput_svg] = OVERLAY_PLOTS;
    vec![
        (cwnd_svg, chart("Congestion window", "cwnd (packets)", cwnd)),
        (throughput_svg, chart("Throughput (goodput)", "goodput (Mbit/s)", goodput)),
    ]
}

/// The files of the overlay plots, which a comparison has when both runs have series.
const OVERLAY_PLOTS: [&str; 2] = ["cwnd.svg", "throughput.svg"];

fn run_json(r: &Run) -> Json {
    Json::Obj(vec![
        ("name", Json::s(&r.name)),
        ("path", Json::s(&r.dir.display().to_string())),
        ("scenario", Json::s(&r.scenario)),
        ("seed", Json::u(r.seed)),
        ("duration_s", Json::f(r.duration_s, 9)),
    ])
}

/// compare.json: keys in a fixed order, every float with stated decimals.
fn compare_json(a: &Run, b: &Run, pairs: &[(&FlowSummary, &FlowSummary)]) -> Json {
    let flows = pairs
        .iter()
        .map(|(fa, fb)| {
            let mut items = vec![
                ("id", Json::u(fa.id)),
                ("name_a", Json::s(&fa.name)),
                ("name_b", Json::s(&fb.name)),
                ("cc_a", Json::s(&fa.cc)),
                ("cc_b", Json::s(&fb.cc)),
            ];
            items.extend(
                FLOW_METRICS.iter().map(|(m, get)| (m.key, pair_json(m, get(fa), get(fb)))),
            );
            Json::Obj(items)
        })
        .collect();
    let link = LINK_METRICS
        .iter()
        .filter(|(m, _)| m.key != "jain")
        .map(|(m, get)| (m.key, pair_json(m, get(a), get(b))))
        .collect();
    let fairness = LINK_METRICS
        .iter()
        .filter(|(m, _)| m.key == "jain")
        .map(|(m, get)| (m.key, pair_json(m, get(a), get(b))))
        .collect();
    let mut top = vec![
        ("a", run_json(a)),
        ("b", run_json(b)),
        ("flows", Json::Arr(flows)),
        ("link", Json::Obj(link)),
        ("fairness", Json::Obj(fairness)),
    ];
    let directions = cross_directions(a, b);
    if !directions.is_empty() {
        let of_direction = |d: usize| {
            let pairs = CROSS_METRICS.iter();
            Json::Obj(
                pairs
                    .map(|(m, get)| (m.key, pair_json(m, get(&a.cross[d]), get(&b.cross[d]))))
                    .collect(),
            )
        };
        let cross = directions.into_iter().map(|d| (DIRECTIONS[d], of_direction(d)));
        top.push(("cross", Json::Obj(cross.collect())));
    }
    Json::Obj(top)
}

/// The side-by-side rows: a header, then per flow a title row and its metrics (the first
/// `max_flows`), then the link and fairness.
fn rows(
    a: &Run,
    b: &Run,
    pairs: &[(&FlowSummary, &FlowSummary)],
    max_flows: usize,
) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        String::new(),
        format!("A: {}", a.name),
        format!("B: {}", b.name),
        "B - A".to_string(),
        "change".to_string(),
    ]];
    for (fa, fb) in pairs.iter().take(max_flows) {
        rows.push(vec![
            format!("flow {}", fa.id),
            format!("{} ({})", fa.name, fa.cc),
            format!("{} ({})", fb.name, fb.cc),
            String::new(),
            String::new(),
        ]);
        rows.extend(FLOW_METRICS.iter().map(|(m, get)| pair_row(m, get(fa), get(fb))));
    }
    let title =
        |t: &str| vec![t.to_string(), String::new(), String::new(), String::new(), String::new()];
    rows.push(title("link"));
    rows.extend(LINK_METRICS.iter().map(|(m, get)| pair_row(m, get(a), get(b))));
    for d in cross_directions(a, b) {
        rows.push(title(&format!("cross traffic ({})", DIRECTIONS[d])));
        let (ca, cb) = (&a.cross[d], &b.cross[d]);
        rows.extend(CROSS_METRICS.iter().map(|(m, get)| pair_row(m, get(ca), get(cb))));
    }
    rows
}

/// The terminal table: the label column left-aligned, numbers right-aligned.
/// Like `cclab run`'s table, long flow lists are cut (compare.json has every flow).
fn table(a: &Run, b: &Run, pairs: &[(&FlowSummary, &FlowSummary)]) -> String {
    let shown = table_flows(pairs.len());
    let rows = rows(a, b, pairs, shown);
    let mut out = format!(
        "A = {} (scenario {}, seed {})\nB = {} (scenario {}, seed {})\n\n",
        a.dir.display(),
        a.scenario,
        a.seed,
        b.dir.display(),
        b.scenario,
        b.seed
    );
    out.push_str(&text_table(&rows, 1));
    out.push_str(RTT_NOTE);
    out.push('\n');
    if shown < pairs.len() {
        out.push_str(&format!(
            "(the first {shown} of {} flows are shown; every flow is in compare.json)\n",
            pairs.len()
        ));
    }
    out
}

fn html(
    a: &Run,
    b: &Run,
    pairs: &[(&FlowSummary, &FlowSummary)],
    plots: &[(&'static str, String)],
    notes: &[String],
) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cclab compare: ");
    h.push_str(&xml(&format!("{} vs {}", a.name, b.name)));
    h.push_str("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:900px}table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ccc;text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>\n");
    h.push_str(&format!("<h1>{} vs {}</h1>\n", xml(&a.name), xml(&b.name)));
    for (tag, r) in [("A", a), ("B", b)] {
        h.push_str(&format!(
            "<p>{tag} = {} (scenario {}, seed {}, {} s)</p>\n",
            xml(&r.dir.display().to_string()),
            xml(&r.scenario),
            r.seed,
            num(r.duration_s, 9)
        ));
    }
    h.push_str("<table>\n");
    for (i, row) in rows(a, b, pairs, pairs.len()).iter().enumerate() {
        let cell = if i == 0 { "th" } else { "td" };
        h.push_str("<tr>");
        for v in row {
            h.push_str(&format!("<{cell}>{}</{cell}>", xml(v.trim())));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h.push_str(&format!("<p>{}</p>\n", xml(RTT_NOTE)));
    for note in notes {
        h.push_str(&format!("<p>{}</p>\n", xml(note)));
    }
    for (_, svg) in plots {
        h.push_str("<div>\n");
        h.push_str(svg);
        h.push_str("</div>\n");
    }
    h.push_str("</body></html>\n");
    h
}

/// Creates the output folder; refuses one that exists, is not empty and was not written
/// by an earlier `cclab compare` (so `--out ~` cannot scribble over a home directory).
/// Returns whether it holds an earlier comparison.
fn prepare_out(out: &Path) -> Result<bool, String> {
    crate::out_folder::check(out, "compare", "compare.json")?;
    let replaced = out.join("compare.json").is_file();
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    Ok(replaced)
}

/// Removes the overlay plots an earlier comparison in `out` wrote and this one, which
/// wrote `written`, did not (its runs have no time series), so that the folder holds one
/// comparison. Only [`OVERLAY_PLOTS`]' names: any other file there is the user's. Done
/// last, once this comparison's own files are written.
fn remove_stale(out: &Path, written: &[&str]) -> Result<(), String> {
    for name in OVERLAY_PLOTS.iter().filter(|n| !written.contains(n)) {
        let path = out.join(name);
        if path.is_file() {
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Sets each flow's srtt percentiles from the series, for the flows it holds.
fn fill_srtt(run: &mut Run, series: &FlowSeries) {
    for f in &mut run.flows {
        [f.srtt_p50_ms, f.srtt_p95_ms] = series.srtt_percentiles(f.id as usize, [0.50, 0.95]);
    }
}

pub fn main(args: Args) -> Result<(), String> {
    let (table, out, replaced) = write(&args)?;
    crate::format::out(&table);
    let note = if replaced { " (replaced the earlier comparison there)" } else { "" };
    crate::format::outln(&format!("comparison: {}{note}", out.display()));
    Ok(())
}

/// A note when a run has no time series (written with `--series none`): the comparison
/// then has no plots and no RTT percentiles.
fn without_series(a: &Run, b: &Run) -> Option<String> {
    let missing: Vec<&str> = [("A", a), ("B", b)]
        .into_iter()
        .filter(|(_, r)| !has_series(r))
        .map(|(tag, _)| tag)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "note: {} (flows.csv or flows.parquet; written with --series none?), so the comparison has no plots, and no srtt percentiles for that run",
            match missing.as_slice() {
                [one] => format!("{one} has no time series"),
                _ => "neither run has a time series".to_string(),
            }
        )
    })
}

fn has_series(r: &Run) -> bool {
    r.dir.join("flows.csv").exists() || r.dir.join("flows.parquet").exists()
}

/// A note when the two runs lasted differently long: their means and totals then cover
/// different spans.
fn durations_differ(a: &Run, b: &Run) -> Option<String> {
    (a.duration_s != b.duration_s).then(|| {
        format!(
            "note: the runs lasted differently long (A {} s, B {} s), so their means and totals cover different spans",
            a.duration_s, b.duration_s
        )
    })
}

/// Writes the comparison's folder; returns the terminal's table, the folder and whether
/// it replaced an earlier comparison there.
pub fn write(args: &Args) -> Result<(String, PathBuf, bool), String> {
    let mut a = load_summary(&args.a)?;
    let mut b = load_summary(&args.b)?;
    match_flows(&a, &b)?;
    // The series of the flows the table shows (the plots draw the first few of them):
    // reading every flow's would hold gigabytes for a run of 10,000 flows.
    let max_id = a.flows.iter().take(table_flows(a.flows.len())).map(|f| f.id as usize + 1).max();
    // A run written with `--series none` has no series: the summaries are still compared.
    let without_series = without_series(&a, &b);
    let series = |r: &Run| match has_series(r) {
        true => load_flows(&r.dir, max_id.unwrap_or(0)).map(Some),
        false => Ok(None),
    };
    let (sa, sb) = (series(&a)?, series(&b)?);
    for (run, s) in [(&mut a, &sa), (&mut b, &sb)] {
        if let Some(s) = s {
            fill_srtt(run, s);
        }
    }
    let pairs = match_flows(&a, &b)?;
    let plots = match (&sa, &sb) {
        (Some(sa), Some(sb)) => overlay_plots((&a, sa), (&b, sb), &pairs),
        _ => Vec::new(),
    };
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(format!("compare-{}-vs-{}", a.name, b.name))
    });
    let replaced = prepare_out(&out)?;
    let write =
        |name: &str, text: &str| crate::sweep::write_atomic(&out.join(name), text.as_bytes());
    write("compare.json", &compare_json(&a, &b, &pairs).render())?;
    for (name, svg) in &plots {
        write(name, svg)?;
    }
    let notes: Vec<String> =
        [durations_differ(&a, &b), without_series].into_iter().flatten().collect();
    write("compare.html", &html(&a, &b, &pairs, &plots, &notes))?;
    if replaced {
        let written: Vec<&str> = plots.iter().map(|(name, _)| *name).collect();
        remove_stale(&out, &written)?;
    }
    let mut text = table(&a, &b, &pairs);
    for note in &notes {
        text += &format!("{note}\n");
    }
    Ok((text, out, replaced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_difference_handles_zero() {
        assert_eq!(relative(2.0, 3.0), Some(0.5));
        assert_eq!(relative(0.0, 0.0), Some(0.0));
        assert_eq!(relative(0.0, 1.0), None);
        assert_eq!(relative(f64::NAN, 1.0), None);
    }

    #[test]
    fn long_folder_names_are_cut_for_the_legend() {
        assert_eq!(short("runA"), "runA");
        assert_eq!(short("a-very-long-folder-name"), "a-very-long…");
    }
}
