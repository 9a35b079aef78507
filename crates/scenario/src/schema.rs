//! The scenario schema: walks the document tree, reads every field (names, types,
//! units) into the simulator's [`SimConfig`], and has each part checked by the
//! simulator's own rules (`cclab_sim::validate`, the queue disciplines' tables), pointing
//! any refusal at the line that wrote the value. What only a scenario has is checked
//! here: required and unknown keys, `count` (before anything is expanded), buffers in
//! bandwidth-delay products, flows and sources that start before the run ends, changes
//! within it, and the size of the time series it would write.

use crate::doc::{line_of, Node, Span, Val};
use crate::fields::{as_text, Fields};
use crate::numbering::FlowNumbers;
use crate::ScenarioError;
use cclab_cc::registry::{info_of, spec_of};
use cclab_cc::{AlgorithmInfo, LossRecovery, ParamKind, ParamSpec};
use cclab_sim::qdisc::params::{Range, Value};
use cclab_sim::validate::{check_times, BUFFER_BYTES, MAX_BUFFER_PACKETS, MAX_CROSS, MAX_FLOWS};
use cclab_sim::{
    Buffer, CrossConfig, CrossKind, DelayedAck, Direction, FlowConfig, LinkConfig, LinkRate,
    LossModel, ParamChange, Qdisc, SimConfig, TcpConfig, Trace,
};
use cclab_units::{parse_bytes, parse_duration, Duration, Rate, Time};
use std::path::Path;
use std::sync::Arc;

/// The largest seed: TOML integers are signed 64-bit, so seeds are 0 to 2^63 - 1.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// Most rows in flows.csv (flows x samples): about 1 GB of text.
pub const MAX_SERIES_ROWS: u64 = 20_000_000;
/// Size of a full packet on the wire (MSS 1448 + 52 header bytes), used to turn a BDP
/// buffer into packets.
pub const WIRE_PACKET: u64 = 1500;

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// From `name`, or the file's stem.
    pub name: String,
    pub config: SimConfig,
    /// How each flow (after `count` is expanded) runs on the testbed; the simulator ignores it.
    pub transports: Vec<Transport>,
    /// What `[metrics]` asks the summary to measure.
    pub metrics: crate::metrics_spec::MetricsSpec,
    /// The file's numbers of the flows (see [`crate::numbering`]): the index a
    /// `[[changes]]` entry written for run flow `i` gives is `numbers.file_index(i)`.
    pub numbers: FlowNumbers,
    /// In a sweep, which of its runs this is ("point 3, seed 2: flows[0].rtt = 10ms").
    pub point: Option<String>,
    /// The refusal of time series too large to write (more than [`MAX_SERIES_ROWS`]
    /// rows), kept for when they are to be written: a run without them
    /// (`--series none`) may sample that often.
    pub series_too_large: Option<ScenarioError>,
}

impl Scenario {
    /// Whether its time series (flows.csv or flows.parquet) may be written: not more
    /// than [`MAX_SERIES_ROWS`] rows.
    pub fn check_series_size(&self) -> Result<(), ScenarioError> {
        self.series_too_large.clone().map_or(Ok(()), Err)
    }
}

/// Which TCP a flow uses when the scenario runs on the testbed (`cclab testbed run`):
/// scenario field `transport`. The simulator always uses its own model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// The kernel's TCP with the kernel's algorithm of the flow's name (`cubic`, `reno`,
    /// `bbr`, or a loaded `cclab_*` BPF algorithm).
    #[default]
    Kernel,
    /// cclab's own TCP and algorithm (any in the registry, with parameters) over UDP, for
    /// algorithms the kernel does not have.
    Udp,
}

/// What the walker needs to know about the text it reads.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub base_dir: Option<&'a Path>,
    pub default_name: &'a str,
    /// The text of the trace file `bottleneck.trace` names, when the caller has read it
    /// already ([`crate::parse_str_with_trace`]); `base_dir` then plays no part.
    pub trace_text: Option<&'a str>,
}

impl Ctx<'_> {
    pub fn err(
        &self,
        span: &Span,
        field: &str,
        value: Option<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: span.as_ref().map(|s| line_of(self.text, s.start)),
            from_override: span.is_none(),
            field: field.to_string(),
            value,
            message: message.into(),
        }
    }

    pub fn bad(&self, node: &Node, field: &str, message: impl Into<String>) -> ScenarioError {
        self.err(&node.span, field, Some(node.show()), message)
    }
}

const TOP: &[&str] = &[
    "name",
    "duration",
    "seed",
    "sample_interval",
    "bottleneck",
    "flows",
    "cross",
    "changes",
    "metrics",
    "sweep",
];
const BOTTLENECK: &[&str] = &["rate", "trace", "delay", "buffer", "qdisc", "loss", "reverse_rate"];
/// A flow's keys: what it is and when it runs, its TCP settings, then how it is carried.
static FLOW: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let what = ["cc", "name", "rtt", "count", "start", "stop", "bytes", "params"];
    let how = ["transport", "enabled", "arrivals", "direction"];
    what.into_iter().chain(TCP_SETTING_KEYS.iter().copied()).chain(how).collect()
});
/// The keys of a flow that set its TCP and its hosts (timers, ACK policy, recovery,
/// processing times, clock), whatever its algorithm, as `cclab algorithms` lists them.
pub const TCP_SETTING_KEYS: &[&str] = &[
    "rto_min",
    "initcwnd",
    "mss",
    "delayed_ack",
    "handshake",
    "rwnd",
    "recovery",
    "rack",
    "tlp",
    "host_delay",
    "read_delay",
    "hz",
    "tick_phase",
    "psh",
];

/// The simulator's names of flow fields whose scenario keys differ.
const FLOW_KEYS: &[(&str, &str)] = &[
    ("tcp.mss", "mss"),
    ("tcp.init_cwnd", "initcwnd"),
    ("tcp.rto_min", "rto_min"),
    ("tcp.rwnd", "rwnd"),
    ("tcp.delayed_ack", "delayed_ack"),
    ("tcp.handshake", "handshake"),
    ("tcp.host_delay", "host_delay"),
    ("tcp.read_delay", "read_delay"),
    ("tcp.hz", "hz"),
    ("tcp.tick_phase", "tick_phase"),
    ("tcp.psh", "psh"),
];
const CROSS: &[&str] =
    &["kind", "rate", "count", "start", "stop", "packet_size", "mean_on", "mean_off", "direction"];
const CROSS_KEYS: &[(&str, &str)] = &[("packet_bytes", "packet_size")];
const CHANGE: &[&str] = &["at", "flow", "set"];

/// One `[[flows]]` entry, read but not yet checked against the bottleneck or expanded.
struct FlowEntry<'a> {
    flow: FlowConfig,
    /// How many flows the entry numbers (`count`, or its transfers), running or not.
    count: u64,
    /// False for `enabled = false`: the entry's flows keep their numbers but do not run.
    enabled: bool,
    /// Web-like traffic (`arrivals`): each transfer's start and size, `count` of them.
    transfers: Option<Vec<(Time, u64)>>,
    transport: Transport,
    node: &'a Node,
}

/// Builds the scenario from a parsed document.
pub(crate) fn build(ctx: &Ctx, root: &Node) -> Result<Scenario, ScenarioError> {
    let top = Fields::new(ctx, "", root, TOP)?;
    if let Some(n) = top.get("sweep") {
        return Err(ctx.bad(
            n,
            "sweep",
            "a [sweep] runs with `cclab run FILE`; this command takes one scenario (remove [sweep] from the file, or --set 'sweep={}' to run the scenario without it, choosing the swept fields' values with --set)",
        ));
    }

    let name = match top.string("name")? {
        Some((n, s)) => {
            check_name(&s).map_err(|m| ctx.bad(n, "name", m))?;
            s
        }
        None => ctx.default_name.to_string(),
    };
    let duration = top
        .duration("duration")?
        .ok_or_else(|| top.missing("duration", "how long to simulate, e.g. \"60s\""))?;
    let seed = top.int("seed", 0, MAX_SEED as i64)?.unwrap_or(1) as u64;
    // Default 10 ms, or the whole run when it is shorter.
    let sample_interval =
        top.duration("sample_interval")?.unwrap_or(Duration::from_millis(10).min(duration));
    check_times(duration, sample_interval).map_err(|e| top.locate(e, &[]))?;

    let bn_node = top.get("bottleneck").ok_or_else(|| {
        top.missing("bottleneck", "a [bottleneck] section with rate (or trace) and delay")
    })?;
    // Flows first (the BDP buffer needs the largest RTT, so their RTTs are checked first:
    // one out of range would otherwise be reported as the buffer it makes too large),
    // checked on the bottleneck after.
    let entries = flow_entries(&top, duration, seed)?;
    for (i, entry) in entries.iter().enumerate() {
        let f = Fields::new(ctx, &format!("flows[{i}]"), entry.node, &FLOW)?;
        entry.flow.check_rtt().map_err(|e| f.locate(e, FLOW_KEYS))?;
    }
    // Disabled entries (count 0) do not size the buffer: the run is as if they were absent.
    let active = || entries.iter().filter(|e| e.enabled);
    let max_rtt = active().map(|e| e.flow.rtt).max().unwrap_or(Duration::ZERO);
    // A BDP buffer counts packets of the largest flow's full size (1500 bytes with the
    // default MSS), so that it holds one BDP in bytes whatever the MSS.
    let wire = active()
        .map(|e| u64::from(e.flow.tcp.mss + e.flow.tcp.header_bytes))
        .max()
        .unwrap_or(WIRE_PACKET);
    let bn = Fields::new(ctx, "bottleneck", bn_node, BOTTLENECK)?;
    let bottleneck = link(&bn, Bdp { rtt: max_rtt, wire })?;
    // A buffer written as a multiple of the BDP is refused in packets, which the user
    // never wrote: a refusal about it says what the multiple came to.
    let bdp_said = bdp_buffer_said(&bn, &bottleneck.buffer, max_rtt, wire);
    let with_bdp_said = |mut e: cclab_sim::SimError| {
        if e.field.ends_with("buffer") || e.message.contains("bottleneck.buffer") {
            e.message += bdp_said.as_deref().unwrap_or_default();
        }
        e
    };
    bottleneck.check().map_err(|mut e| {
        if e.field == "buffer" && bn.get("buffer").is_none() {
            e.message += &format!(" (no buffer is given, so it is the default 1bdp: the rate x the largest flow RTT, {max_rtt}; give bottleneck.buffer)");
        }
        bn.locate(with_bdp_said(e), &[])
    })?;
    for (i, entry) in entries.iter().enumerate() {
        let f = Fields::new(ctx, &format!("flows[{i}]"), entry.node, &FLOW)?;
        entry.flow.check(&bottleneck).map_err(|e| f.locate(e, FLOW_KEYS))?;
    }
    let numbers = FlowNumbers::new(entries.iter().map(|e| (e.count as usize, e.enabled)));
    let (flows, transports) = expand(entries, &numbers);
    let series_too_large = check_series_size(&top, duration, sample_interval, &flows).err();
    let cross = cross_sources(&top, duration, &bottleneck)?;
    let mut changes = Vec::new();
    for (i, t) in top.tables("changes")?.iter().enumerate() {
        let path = format!("changes[{i}]");
        changes.push(change_entry(ctx, &path, t, duration, &flows, &numbers)?);
    }
    // Applied in time order; equal times keep file order (stable sort).
    changes.sort_by_key(|c: &ParamChange| c.at);

    let metrics = crate::metrics_spec::read(
        ctx,
        top.get("metrics"),
        (duration, sample_interval),
        &flows,
        &numbers,
    )?;
    let config = SimConfig { duration, seed, bottleneck, flows, cross, sample_interval, changes };
    cclab_sim::validate::check_buffer_packets(&config)
        .map_err(|e| top.locate(with_bdp_said(e), &[]))?;
    Ok(Scenario { name, config, transports, metrics, numbers, point: None, series_too_large })
}

/// Every `[[flows]]` entry, read; more flows in all than fit in memory are refused
/// before any is expanded.
fn flow_entries<'a>(
    top: &Fields<'a, '_>,
    duration: Duration,
    seed: u64,
) -> Result<Vec<FlowEntry<'a>>, ScenarioError> {
    let ctx = top.ctx;
    let tables = top.tables("flows")?;
    if tables.is_empty() {
        let what = "at least one [[flows]] section with cc and rtt";
        return Err(match top.get("flows") {
            Some(n) => ctx.bad(n, "flows", format!("the list is empty; allowed: {what}")),
            None => top.missing("flows", what),
        });
    }
    let mut entries = Vec::new();
    let mut total: u64 = 0;
    for (i, t) in tables.iter().enumerate() {
        let path = format!("flows[{i}]");
        let mut entry = flow_entry(ctx, &path, t, duration)?;
        let f = Fields::new(ctx, &path, t, &FLOW)?;
        if f.get("arrivals").is_some() {
            // Drawing stops past the flows that still fit, so a huge rate is refused
            // before it takes the memory.
            let room = (MAX_FLOWS as u64).saturating_sub(total);
            let transfers =
                crate::arrivals::read(&f, &entry.flow, (duration, room), seed, i as u64)?;
            entry.count = transfers.len() as u64;
            entry.transfers = Some(transfers);
        }
        // `enabled = false` keeps the entry (checked all the same) out of the run, so one
        // file serves "alone" and "paired" runs (--set flows[1].enabled=false).
        entry.enabled = f.bool("enabled")?.unwrap_or(true);
        if entry.enabled {
            total += entry.count;
        }
        if total > MAX_FLOWS as u64 {
            let key = if f.get("arrivals").is_some() { "arrivals" } else { "count" };
            let n = t.get(key).unwrap_or(t);
            return Err(ctx.bad(n, &format!("{path}.{key}"), format!("the scenario would have {total} flows or more; at most {MAX_FLOWS} flows fit in memory")));
        }
        entries.push(entry);
    }
    if total == 0 {
        let mut e = top.missing("flows", "");
        e.message = "every [[flows]] entry has enabled = false; at least one flow must run".into();
        return Err(e);
    }
    Ok(entries)
}

/// The time series must fit on disk: each flow sampled every `sample_interval` while it
/// runs (the refusal is kept in the scenario, see [`Scenario::check_series_size`]).
fn check_series_size(
    top: &Fields,
    duration: Duration,
    sample_interval: Duration,
    flows: &[FlowConfig],
) -> Result<(), ScenarioError> {
    let rows = cclab_sim::config::max_flow_samples(flows, duration, sample_interval);
    if rows <= MAX_SERIES_ROWS {
        return Ok(());
    }
    let n = top.get("sample_interval");
    let mut e = top.ctx.err(
        &n.map_or(Some(0..0), |n| n.span.clone()),
        "sample_interval",
        Some(format!("\"{sample_interval}\"")),
        format!("{} flows sampled every {sample_interval} while they run (up to {duration}) would write up to {rows} rows (limit {MAX_SERIES_ROWS}); use a longer sample_interval", flows.len()),
    );
    if n.is_none() {
        e.line = None; // the default applies; no line wrote it
    }
    Err(e)
}

/// Every `[[cross]]` source, `count` expanded.
fn cross_sources(
    top: &Fields,
    duration: Duration,
    bottleneck: &LinkConfig,
) -> Result<Vec<CrossConfig>, ScenarioError> {
    let mut cross = Vec::new();
    let mut total = 0u64;
    for (i, t) in top.tables("cross")?.iter().enumerate() {
        let path = format!("cross[{i}]");
        let (c, count) = cross_entry(top.ctx, &path, t, duration, bottleneck)?;
        total += count;
        if total > MAX_CROSS as u64 {
            let n = t.get("count").unwrap_or(t);
            return Err(top.ctx.bad(
                n,
                &format!("{path}.count"),
                format!("at most {MAX_CROSS} cross-traffic sources in all"),
            ));
        }
        cross.extend(std::iter::repeat_n(c, count as usize));
    }
    Ok(cross)
}

/// The flows after `count` is expanded, named `<name>#<index>` (or as written, for a
/// single flow with a name), with each one's transport.
/// The running entries' flows, `count` expanded; a flow without a name of its own is
/// called after its algorithm and its number in the file.
fn expand(entries: Vec<FlowEntry>, numbers: &FlowNumbers) -> (Vec<FlowConfig>, Vec<Transport>) {
    let mut flows: Vec<FlowConfig> = Vec::new();
    let mut transports = Vec::new();
    for entry in entries.into_iter().filter(|e| e.enabled) {
        for k in 0..entry.count as usize {
            let id = numbers.file_index(flows.len());
            let mut f = entry.flow.clone();
            if let Some(&(start, bytes)) = entry.transfers.as_ref().and_then(|t| t.get(k)) {
                // A transfer runs to its end; `stop` only closed the window of arrivals.
                (f.start, f.bytes, f.stop) = (start, Some(bytes), None);
            }
            if entry.count != 1 || f.name.is_empty() {
                f.name = format!("{}#{id}", if f.name.is_empty() { &f.cc } else { &f.name });
            }
            flows.push(f);
            transports.push(entry.transport);
        }
    }
    (flows, transports)
}

/// Result directories are named after the scenario, so the name must be a safe file name.
fn check_name(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= 100
        && !s.starts_with('.')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(())
    } else {
        Err("allowed: 1 to 100 letters, digits, '.', '_' or '-', not starting with '.' (it names the results folder)".to_string())
    }
}

/// A flow's name goes into the terminal's tables, the CSV files and the plots' legends:
/// any text but control characters (a newline or an escape sequence would break the
/// table or the terminal), and short enough for a legend.
fn check_flow_name(s: &str) -> Result<(), String> {
    if s.chars().count() <= 100 && !s.chars().any(char::is_control) {
        return Ok(());
    }
    Err("allowed: up to 100 characters, none of them a control character (a newline, a tab, an escape)".to_string())
}

fn flow_entry<'a>(
    ctx: &Ctx,
    path: &str,
    t: &'a Node,
    duration: Duration,
) -> Result<FlowEntry<'a>, ScenarioError> {
    let f = Fields::new(ctx, path, t, &FLOW)?;
    let (cc_node, cc) = f
        .string("cc")?
        .ok_or_else(|| f.missing("cc", "the algorithm name (see `cclab algorithms`)"))?;
    let info = info_of(&cc).map_err(|e| ctx.bad(cc_node, &f.field("cc"), e.to_string()))?;
    let rtt = f
        .duration("rtt")?
        .ok_or_else(|| f.missing("rtt", "the flow's base round-trip time, e.g. \"100ms\""))?;
    let count = f.int("count", 1, MAX_FLOWS as i64)?.unwrap_or(1) as u64;
    let start = f.duration("start")?.unwrap_or(Duration::ZERO);
    if start >= duration {
        let n = f.get("start").expect("start was read");
        return Err(ctx.bad(
            n,
            &f.field("start"),
            format!(
                "the flow would not start before the run ends; allowed: before duration = {duration}"
            ),
        ));
    }
    let stop = f.duration("stop")?;
    let bytes = f.bytes("bytes")?;

    let params = algorithm_params(&f, info)?;
    let tcp = tcp_settings(&f)?;
    let name = match f.string("name")? {
        Some((n, s)) => {
            check_flow_name(&s).map_err(|m| ctx.bad(n, &f.field("name"), m))?;
            s
        }
        None => String::new(),
    };
    let transport = match f.string("transport")? {
        None => Transport::default(),
        Some((_, t)) if t == "kernel" => Transport::Kernel,
        Some((_, t)) if t == "udp" => Transport::Udp,
        Some((n, _)) => {
            return Err(ctx.bad(n, &f.field("transport"), "allowed: \"kernel\" or \"udp\""))
        }
    };

    let flow = FlowConfig {
        name,
        cc: info.name.to_string(),
        params,
        rtt,
        start: Time(start.as_nanos()),
        stop: stop.map(|s| Time(s.as_nanos())),
        bytes,
        tcp,
        direction: direction(&f)?,
    };
    Ok(FlowEntry { flow, count, enabled: true, transfers: None, transport, node: t })
}

/// `params = { ... }`: the algorithm's parameters by its own names.
fn algorithm_params(
    f: &Fields,
    info: &'static AlgorithmInfo,
) -> Result<Vec<(String, f64)>, ScenarioError> {
    let Some(pn) = f.get("params") else { return Ok(Vec::new()) };
    let Val::Table(entries) = &pn.val else {
        return Err(f.ctx.bad(
            pn,
            &f.field("params"),
            format!("expected a table such as {{ beta = 0.7 }}, found {}", pn.val.kind()),
        ));
    };
    let mut params = Vec::new();
    for (k, _, v) in entries {
        let field = format!("{}.params.{k}", f.path);
        params.push((k.clone(), param_value(f.ctx, v, &field, spec_of(info, k).ok())?));
    }
    Ok(params)
}

/// A flow's TCP settings: Linux's defaults, with what the entry sets.
fn tcp_settings(f: &Fields) -> Result<TcpConfig, ScenarioError> {
    let mut tcp = TcpConfig::default();
    if let Some(d) = f.duration("rto_min")? {
        tcp.rto_min = d;
    }
    if let Some(n) = f.whole_u32("initcwnd")? {
        tcp.init_cwnd = n;
    }
    if let Some(n) = f.whole_u32("mss")? {
        tcp.mss = n;
    }
    if let Some(b) = f.bool("delayed_ack")? {
        tcp.delayed_ack = DelayedAck { enabled: b, ..DelayedAck::default() };
    }
    if let Some(b) = f.bool("handshake")? {
        tcp.handshake = b;
    }
    if let Some(b) = f.bool("rack")? {
        tcp.rack = b;
    }
    if let Some(b) = f.bool("tlp")? {
        tcp.tlp = b;
    }
    tcp.rwnd = f.bytes("rwnd")?;
    if let Some(d) = f.duration("host_delay")? {
        tcp.host_delay = d;
    }
    if let Some(d) = f.duration("read_delay")? {
        tcp.read_delay = d;
    }
    if let Some(n) = f.whole_u32("hz")? {
        tcp.hz = n;
    }
    if let Some(d) = f.duration("tick_phase")? {
        tcp.tick_phase = d;
    }
    if let Some(b) = f.bool("psh")? {
        tcp.psh = b;
    }
    if let Some((n, r)) = f.string("recovery")? {
        tcp.recovery = Some(match r.as_str() {
            "sack" => LossRecovery::Sack,
            "newreno" => LossRecovery::NewReno,
            "tahoe" => LossRecovery::Tahoe,
            _ => {
                return Err(f.ctx.bad(
                    n,
                    &f.field("recovery"),
                    "allowed: \"sack\", \"newreno\" or \"tahoe\"",
                ))
            }
        });
    }
    Ok(tcp)
}

/// A parameter value: numbers as they are, booleans as 1/0 for switches (and for a
/// parameter the algorithm does not have, which the simulator then refuses by name).
/// Ranges are the algorithm's own, checked by the simulator.
fn param_value(
    ctx: &Ctx,
    v: &Node,
    field: &str,
    spec: Option<&ParamSpec>,
) -> Result<f64, ScenarioError> {
    let switch = spec.is_none_or(|s| s.kind == ParamKind::Bool);
    match &v.val {
        Val::Bool(b) if switch => Ok(if *b { 1.0 } else { 0.0 }),
        Val::Int(i) => Ok(*i as f64),
        Val::Float(x) => Ok(*x),
        other => {
            let allowed = spec.map_or_else(|| "a number".to_string(), |s| s.allowed());
            Err(ctx.bad(v, field, format!("expected {allowed}, found {}", other.kind())))
        }
    }
}

/// What a buffer written as `"<x>bdp"` came to, as a clause for a refusal about it.
fn bdp_buffer_said(bn: &Fields, buffer: &Buffer, max_rtt: Duration, wire: u64) -> Option<String> {
    let (_, text) = bn.string("buffer").ok().flatten()?;
    let Buffer::Packets(n) = buffer else { return None };
    text.trim().ends_with("bdp").then(|| {
        format!(" (bottleneck.buffer = \"{text}\" is {n} packets here: the rate x the largest flow RTT, {max_rtt}, in packets of {wire} bytes)")
    })
}

/// What a `"<x>bdp"` buffer is measured against: the largest flow RTT, in packets of the
/// largest flow's wire size.
#[derive(Clone, Copy)]
struct Bdp {
    rtt: Duration,
    wire: u64,
}

/// The `[bottleneck]` table, read; the simulator checks it.
fn link(f: &Fields, bdp: Bdp) -> Result<LinkConfig, ScenarioError> {
    let ctx = f.ctx;
    let rate = match (f.get("rate"), f.string("trace")?) {
        (Some(_), Some((tn, _))) => {
            return Err(ctx.bad(tn, "bottleneck.trace", "give either rate or trace, not both (from the command line, a trace takes the whole table: --set 'bottleneck={ trace = \"FILE\", delay = \"20ms\" }')"))
        }
        (None, None) => {
            return Err(
                f.missing("rate", "the link rate, e.g. \"10Mbps\" (or trace = \"file.trace\")")
            )
        }
        (Some(_), None) => LinkRate::Constant(f.rate("rate")?.expect("rate present")),
        (None, Some((tn, path))) => LinkRate::Trace(Arc::new(load_trace(ctx, tn, &path)?)),
    };
    let delay = f
        .duration("delay")?
        .ok_or_else(|| f.missing("delay", "the one-way propagation delay, e.g. \"20ms\""))?;
    let mean_rate = match &rate {
        LinkRate::Constant(r) => *r,
        LinkRate::Trace(t) => t.mean_rate(),
    };
    let buffer = match f.get("buffer") {
        None => bdp_buffer(mean_rate, bdp, 1.0),
        Some(n) => buffer(ctx, n, mean_rate, bdp)?,
    };
    let qdisc = match f.get("qdisc") {
        None => Qdisc::DropTail,
        Some(n) => qdisc(ctx, n)?,
    };
    let loss = match f.get("loss") {
        None => LossModel::None,
        Some(n) => loss(ctx, n)?,
    };
    let reverse_rate = f.rate("reverse_rate")?;
    Ok(LinkConfig { rate, delay, buffer, qdisc, loss, reverse_rate })
}

/// `direction` of a flow or a source: which bottleneck its data crosses (default
/// forward).
fn direction(f: &Fields) -> Result<Direction, ScenarioError> {
    let Some(n) = f.get("direction") else { return Ok(Direction::Forward) };
    let field = f.field("direction");
    let name = as_text(f.ctx, n, &field).ok();
    name.and_then(|s| Direction::named(&s)).ok_or_else(|| {
        let names: Vec<String> = Direction::NAMES.iter().map(|d| format!("\"{d}\"")).collect();
        f.ctx.bad(n, &field, format!("allowed: {}", names.join(" or ")))
    })
}

fn load_trace(ctx: &Ctx, n: &Node, path: &str) -> Result<Trace, ScenarioError> {
    if let Some(text) = ctx.trace_text {
        return Trace::parse(text).map_err(|e| {
            ctx.bad(n, "bottleneck.trace", format!("{path} is not a mahimahi trace: {e}"))
        });
    }
    let full = match ctx.base_dir {
        Some(dir) if Path::new(path).is_relative() => dir.join(path),
        _ => Path::new(path).to_path_buf(),
    };
    let text = std::fs::read_to_string(&full).map_err(|e| {
        let relative_to = match ctx.base_dir {
            _ if Path::new(path).is_absolute() => String::new(),
            Some(_) => "; the path is relative to the scenario file".to_string(),
            None => "; the path is relative to the current folder".to_string(),
        };
        ctx.bad(
            n,
            "bottleneck.trace",
            format!("cannot read trace file {} ({e}){relative_to}", full.display()),
        )
    })?;
    Trace::parse(&text).map_err(|e| {
        ctx.bad(n, "bottleneck.trace", format!("{} is not a mahimahi trace: {e}", full.display()))
    })
}

/// A buffer of `k` bandwidth-delay products, in full-sized packets (at least one).
fn bdp_buffer(rate: Rate, bdp: Bdp, k: f64) -> Buffer {
    let bytes = rate.bytes_in(bdp.rtt) as f64 * k;
    Buffer::Packets(((bytes / bdp.wire as f64).ceil() as u64).max(1))
}

/// A buffer in one of its written forms; the simulator checks the size.
fn buffer(ctx: &Ctx, n: &Node, rate: Rate, bdp: Bdp) -> Result<Buffer, ScenarioError> {
    let allowed = format!("allowed: \"<x>bdp\" (x in (0, 1000], rate x largest flow RTT, in packets of the flows' largest packet size), \"<n>pkt\" (n in [1, {MAX_BUFFER_PACKETS}]), or a size \"<n>B\", \"<n>KB\", \"<n>MB\" (at least {}B)", BUFFER_BYTES.0);
    let field = "bottleneck.buffer";
    let s = match &n.val {
        Val::Int(p) if *p >= 0 => return Ok(Buffer::Packets(*p as u64)),
        _ => as_text(ctx, n, field).map_err(|_| ctx.bad(n, field, &allowed))?,
    };
    let t = s.trim();
    if let Some(x) = t.strip_suffix("bdp") {
        // A scenario's own unit: how many bandwidth-delay products.
        return match x.trim().parse::<f64>() {
            Ok(k) if k > 0.0 && k <= 1000.0 => Ok(bdp_buffer(rate, bdp, k)),
            _ => Err(ctx.bad(n, field, allowed)),
        };
    }
    if let Some(x) = t.strip_suffix("pkts").or_else(|| t.strip_suffix("pkt")) {
        return x
            .trim()
            .parse::<u64>()
            .map(Buffer::Packets)
            .map_err(|_| ctx.bad(n, field, allowed));
    }
    parse_bytes(t).map(Buffer::Bytes).map_err(|e| {
        // A size that is refused as written (a fraction of a byte) says why; anything
        // else gets the forms.
        let why = if e.is_in_form() { format!("expected {}", e.expected) } else { allowed };
        ctx.bad(n, field, why)
    })
}

/// The queue disciplines as an error lists them: `"droptail", "red" or "pie"`.
fn qdisc_names() -> String {
    let names: Vec<String> = Qdisc::names().map(|n| format!("\"{n}\"")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// A queue discipline: its name (`qdisc = "red"`), or a table with its `kind` and
/// parameters, read by the discipline's own table (`cclab_sim::qdisc`), which also holds
/// the defaults and the rules.
fn qdisc(ctx: &Ctx, n: &Node) -> Result<Qdisc, ScenarioError> {
    let field = "bottleneck.qdisc";
    let allowed = format!("{} (or a table {{ kind = \"red\", ... }})", qdisc_names());
    let kind_node = match &n.val {
        Val::Table(_) => n.get("kind").ok_or_else(|| {
            let message = format!("missing required field \"kind\" in {field}: {allowed}");
            ctx.err(&n.span, &format!("{field}.kind"), None, message)
        })?,
        _ => n,
    };
    let kind = as_text(ctx, kind_node, field)?;
    let mut q = Qdisc::named(&kind).ok_or_else(|| {
        let at =
            if std::ptr::eq(kind_node, n) { field.to_string() } else { format!("{field}.kind") };
        ctx.bad(kind_node, &at, format!("unknown queue discipline; allowed: {allowed}"))
    })?;
    let Val::Table(entries) = &n.val else { return Ok(q) };
    for (k, kspan, _) in entries.iter().filter(|(k, _, _)| k != "kind") {
        if q.param(k).is_none() {
            return Err(ctx.err(kspan, &format!("{field}.{k}"), None, q.unknown_param()));
        }
    }
    let names: Vec<&str> =
        std::iter::once("kind").chain(q.params().iter().map(|p| p.name)).collect();
    let f = Fields::new(ctx, field, n, &names)?;
    for p in q.params() {
        let expected = p.range.allowed();
        let value = match p.range {
            Range::Number { .. } => f.number(p.name, &expected)?.map(Value::Number),
            Range::Time { .. } => f.duration(p.name)?.map(Value::Time),
            Range::Switch => f.bool(p.name)?.map(Value::Switch),
        };
        if let (Some(v), Some(node)) = (value, f.get(p.name)) {
            q.set(p.name, v).map_err(|m| ctx.bad(node, &f.field(p.name), m))?;
        }
    }
    q.check().map_err(|e| f.locate(e, &[]))?;
    Ok(q)
}

/// Random loss: a bare probability (Bernoulli) or a table; the simulator checks the
/// probabilities.
fn loss(ctx: &Ctx, n: &Node) -> Result<LossModel, ScenarioError> {
    let field = "bottleneck.loss";
    const ALLOWED: &str = "a probability in [0, 1) or a table { kind = \"bernoulli\", p = ... } / { kind = \"gilbert\", p_good_to_bad, p_bad_to_good, loss_good, loss_bad }";
    let bernoulli = |p: f64| if p == 0.0 { LossModel::None } else { LossModel::Bernoulli { p } };
    match &n.val {
        Val::Int(i) => Ok(bernoulli(*i as f64)),
        Val::Float(p) => Ok(bernoulli(*p)),
        Val::Table(_) => {
            let f = Fields::new(
                ctx,
                field,
                n,
                &["kind", "p", "p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad"],
            )?;
            let (kn, kind) = f
                .string("kind")?
                .ok_or_else(|| f.missing("kind", "\"bernoulli\" or \"gilbert\""))?;
            let p = |key: &str| f.number(key, "a probability");
            match kind.as_str() {
                "bernoulli" => {
                    Ok(bernoulli(p("p")?.ok_or_else(|| f.missing("p", "the loss probability"))?))
                }
                "gilbert" => Ok(LossModel::GilbertElliott {
                    p_good_to_bad: p("p_good_to_bad")?.ok_or_else(|| {
                        f.missing(
                            "p_good_to_bad",
                            "probability per packet of entering the bad state",
                        )
                    })?,
                    p_bad_to_good: p("p_bad_to_good")?.ok_or_else(|| {
                        f.missing(
                            "p_bad_to_good",
                            "probability per packet of leaving the bad state",
                        )
                    })?,
                    loss_good: p("loss_good")?.unwrap_or(0.0),
                    loss_bad: p("loss_bad")?.unwrap_or(1.0),
                }),
                _ => Err(ctx.bad(
                    kn,
                    &format!("{field}.kind"),
                    "allowed: \"bernoulli\" or \"gilbert\"",
                )),
            }
        }
        _ => Err(ctx.bad(n, field, format!("expected {ALLOWED}"))),
    }
}

/// One `[[cross]]` entry and its `count`, checked.
fn cross_entry(
    ctx: &Ctx,
    path: &str,
    t: &Node,
    duration: Duration,
    bottleneck: &LinkConfig,
) -> Result<(CrossConfig, u64), ScenarioError> {
    let f = Fields::new(ctx, path, t, CROSS)?;
    let (kn, kind_s) = f
        .string("kind")?
        .ok_or_else(|| f.missing("kind", "\"cbr\", \"poisson\" or \"exponential\""))?;
    let on = f.duration("mean_on")?;
    let off = f.duration("mean_off")?;
    let kind = match kind_s.as_str() {
        "cbr" | "poisson" => {
            if let Some(k) = ["mean_on", "mean_off"].into_iter().find(|k| f.get(k).is_some()) {
                return Err(ctx.bad(
                    f.get(k).expect("present"),
                    &f.field(k),
                    format!("only for kind = \"exponential\", not \"{kind_s}\""),
                ));
            }
            if kind_s == "cbr" {
                CrossKind::Cbr
            } else {
                CrossKind::Poisson
            }
        }
        // ns-2's Application/Traffic/Exponential defaults: 0.5 s on, 0.5 s off.
        "exponential" => CrossKind::Exponential {
            mean_on: on.unwrap_or(Duration::from_millis(500)),
            mean_off: off.unwrap_or(Duration::from_millis(500)),
        },
        _ => {
            return Err(ctx.bad(
                kn,
                &f.field("kind"),
                "allowed: \"cbr\", \"poisson\" or \"exponential\"",
            ))
        }
    };
    let rate = f
        .rate("rate")?
        .ok_or_else(|| f.missing("rate", "the mean rate of each source, e.g. \"1Mbps\""))?;
    let count = f.int("count", 1, MAX_CROSS as i64)?.unwrap_or(1) as u64;
    let start = f.duration("start")?.unwrap_or(Duration::ZERO);
    if start >= duration {
        return Err(ctx.bad(
            f.get("start").expect("read"),
            &f.field("start"),
            format!(
                "the source would not start before the run ends; allowed: before duration = {duration}"
            ),
        ));
    }
    let stop = f.duration("stop")?;
    let packet_bytes = f.bytes("packet_size")?.unwrap_or(WIRE_PACKET);
    let c = CrossConfig {
        kind,
        rate,
        packet_bytes: packet_bytes.min(u32::MAX as u64) as u32,
        start: Time(start.as_nanos()),
        stop: stop.map(|s| Time(s.as_nanos())),
        direction: direction(&f)?,
    };
    c.check(bottleneck).map_err(|e| f.locate(e, CROSS_KEYS))?;
    Ok((c, count))
}

/// `[[changes]]`: checked now against the flow's algorithm, so a typo fails before the run.
fn change_entry(
    ctx: &Ctx,
    path: &str,
    t: &Node,
    duration: Duration,
    flows: &[FlowConfig],
    numbers: &FlowNumbers,
) -> Result<ParamChange, ScenarioError> {
    let f = Fields::new(ctx, path, t, CHANGE)?;
    let at = f
        .duration("at")?
        .ok_or_else(|| f.missing("at", "when to apply the change, e.g. \"30s\""))?;
    if at > duration {
        return Err(ctx.bad(
            f.get("at").expect("read"),
            &f.field("at"),
            format!("after the end of the run; allowed: 0s to duration = {duration}"),
        ));
    }
    let last = numbers.len() as i64 - 1;
    let number = f.int("flow", i64::MIN, i64::MAX)?.ok_or_else(|| {
        f.missing(
            "flow",
            &format!("the flow index, 0 to {last} (flows are numbered after count is expanded)"),
        )
    })?;
    // A negative number is out of range as one too large is, in the same words.
    let flow = usize::try_from(number)
        .map_err(|_| format!("out of range; allowed: {}", numbers.allowed()))
        .and_then(|n| numbers.run_index(n))
        .map_err(|why| ctx.bad(f.get("flow").expect("read"), &f.field("flow"), why))?;
    let number = number as usize;
    let mut change = ParamChange { at: Time(at.as_nanos()), flow, set: Vec::new() };
    change.check_as(flows, number).map_err(|e| f.locate(e, &[]))?;
    let info = info_of(&flows[flow].cc).expect("checked with the flow");
    let sn = f
        .get("set")
        .ok_or_else(|| f.missing("set", "the parameters to change, e.g. set = { beta = 0.5 }"))?;
    let Val::Table(entries) = &sn.val else {
        return Err(ctx.bad(
            sn,
            &f.field("set"),
            format!("expected a table such as {{ beta = 0.5 }}, found {}", sn.val.kind()),
        ));
    };
    if entries.is_empty() {
        return Err(ctx.bad(sn, &f.field("set"), "nothing to change; name at least one parameter"));
    }
    for (k, _, v) in entries {
        let field = format!("{path}.set.{k}");
        let value = match k.as_str() {
            // TCP-level parameters: rto_min a duration, as a flow's own `rto_min` is (the
            // live API and Python take its milliseconds as a number), initcwnd in segments.
            "rto_min" => match &v.val {
                Val::Str(s) => {
                    let d = parse_duration(s)
                        .map_err(|e| ctx.bad(v, &field, format!("expected {}", e.expected)))?;
                    // Its range in the file's terms, durations, as a flow's own rto_min
                    // says it (the live API's "whole number of ms" would read oddly here).
                    let (lo, hi) = cclab_sim::validate::RTO_MIN;
                    if d < lo || d > hi {
                        return Err(ctx.bad(
                            v,
                            &field,
                            format!("out of range; allowed: {lo} to {hi}"),
                        ));
                    }
                    // A change applies as the live one does, in whole milliseconds (as
                    // `ip route ... rto_min` sets it), where a flow's own may be finer.
                    if d.as_nanos() % 1_000_000 != 0 {
                        return Err(ctx.bad(
                            v,
                            &field,
                            format!("not a whole number of milliseconds; allowed: {lo} to {hi} in whole milliseconds (a change sets rto_min as ip route does)"),
                        ));
                    }
                    d.as_millis_f64()
                }
                other => {
                    let unit = if matches!(other, Val::Int(_) | Val::Float(_)) {
                        " (a bare number has no unit)"
                    } else {
                        ""
                    };
                    return Err(ctx.bad(
                        v,
                        &field,
                        format!(
                            "expected a duration such as \"50ms\", found {}{unit}",
                            other.kind()
                        ),
                    ));
                }
            },
            "initcwnd" => match &v.val {
                Val::Int(i) => *i as f64,
                Val::Float(x) => *x,
                other => {
                    return Err(ctx.bad(
                        v,
                        &field,
                        format!("expected a whole number of segments, found {}", other.kind()),
                    ))
                }
            },
            _ => param_value(ctx, v, &field, spec_of(info, k).ok())?,
        };
        change.set.push((k.clone(), value));
    }
    change.check_as(flows, number).map_err(|e| f.locate(e, &[]))?;
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx<'static> {
        Ctx { file: "t.toml", text: "", base_dir: None, default_name: "t", trace_text: None }
    }

    fn node(val: Val) -> Node {
        Node { val, span: None, raw: None }
    }

    /// TOML booleans become 1/0 for switches (and only for switches); numbers pass
    /// through to the simulator's check, which then refuses 2 for a switch.
    #[test]
    fn switches_take_toml_booleans() {
        let spec = ParamSpec::switch("hystart", true, "HyStart on or off");
        let c = ctx();
        assert_eq!(param_value(&c, &node(Val::Bool(true)), "p", Some(&spec)).unwrap(), 1.0);
        assert_eq!(param_value(&c, &node(Val::Bool(false)), "p", Some(&spec)).unwrap(), 0.0);
        let two = param_value(&c, &node(Val::Int(2)), "p", Some(&spec)).unwrap();
        assert!(spec.check("x", two).is_err());
        let float = ParamSpec::float("beta", 0.7, 0.0, 1.0, "", "decrease factor");
        let e = param_value(&c, &node(Val::Bool(true)), "flows[0].params.beta", Some(&float))
            .unwrap_err();
        assert!(e.to_string().contains("expected a number in [0, 1], found a boolean"), "{e}");
        let e =
            param_value(&c, &node(Val::Str("0.5".into())), "flows[0].params.beta", Some(&float))
                .unwrap_err();
        assert!(e.to_string().contains("found a string"), "{e}");
    }

    #[test]
    fn bdp_buffers_round_up_to_whole_packets() {
        // 10 Mbit/s x 100 ms = 125,000 B = 83.3 packets -> 84.
        let bdp = Bdp { rtt: Duration::from_millis(100), wire: WIRE_PACKET };
        assert_eq!(bdp_buffer(Rate::from_mbps(10), bdp, 1.0), Buffer::Packets(84));
        assert_eq!(bdp_buffer(Rate::from_mbps(10), bdp, 0.001), Buffer::Packets(1));
        // Jumbo frames: the same bytes in 9,052-byte packets, 13.8 -> 14.
        let jumbo = Bdp { wire: 9000 + 52, ..bdp };
        assert_eq!(bdp_buffer(Rate::from_mbps(10), jumbo, 1.0), Buffer::Packets(14));
    }

    #[test]
    fn names_must_be_safe() {
        assert!(check_name("cubic-vs-reno_2.v1").is_ok());
        for bad in ["", ".hidden", "a/b", "..", "a b", &"x".repeat(101)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
