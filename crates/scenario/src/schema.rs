//! The scenario schema: walks the document tree, checks every field (names, units,
//! ranges, cross-field rules) and builds the simulator's [`SimConfig`].
//!
//! Every table refuses unknown keys (serde's `deny_unknown_fields`, done by hand so that
//! the error can list the allowed keys and name the line).

use crate::doc::{line_of, Node, Span, Val};
use crate::ScenarioError;
use cclab_cc::registry::{info_of, spec_of};
use cclab_cc::tcp_limits::{INITCWND, MSS, RTO_MIN_MS};
use cclab_cc::{LossRecovery, ParamError, ParamKind};
use cclab_sim::{
    Buffer, CodelConfig, CrossConfig, CrossKind, DelayedAck, FlowConfig, LinkConfig, LinkRate,
    LossModel, ParamChange, PieConfig, Qdisc, RedConfig, SimConfig, TcpConfig, Trace, TCP_PARAMS,
};
use cclab_units::{parse_bytes, parse_duration, parse_rate, Duration, Rate, Time};
use std::path::Path;
use std::sync::Arc;

/// More flows than this are refused before anything is allocated: each simulated flow
/// costs on the order of a kilobyte, so a million is already a gigabyte.
pub const MAX_FLOWS: u64 = 1_000_000;
/// Most UDP cross-traffic sources.
pub const MAX_CROSS: u64 = 100_000;
/// Longest simulated time (about 11.5 days).
pub const MAX_DURATION: Duration = Duration::from_secs(1_000_000);
/// Longest base RTT: CUBIC's fixed-point arithmetic is valid up to 100 s (tcp_cubic.c).
pub const MAX_RTT: Duration = Duration::from_secs(100);
/// Slowest and fastest bottleneck.
pub const MIN_RATE: Rate = Rate(1_000);
pub const MAX_RATE: Rate = Rate(1_000_000_000_000);
/// Most rows in flows.csv (flows x samples): about 1 GB of text.
pub const MAX_SERIES_ROWS: u64 = 20_000_000;
/// Size of a full packet on the wire (MSS 1448 + 52 header bytes), used to turn a BDP or
/// byte buffer into packets.
pub const WIRE_PACKET: u64 = 1500;

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// From `name`, or the file's stem.
    pub name: String,
    pub config: SimConfig,
    /// How each flow (after `count` is expanded) runs on the testbed; the simulator ignores it.
    pub transports: Vec<Transport>,
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

    fn bad(&self, node: &Node, field: &str, message: impl Into<String>) -> ScenarioError {
        self.err(&node.span, field, Some(node.show()), message)
    }
}

/// A table being read: refuses unknown keys up front, then hands out typed values.
struct Fields<'a, 'c> {
    ctx: &'c Ctx<'c>,
    path: String,
    node: &'a Node,
    entries: &'a [(String, Span, Node)],
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a, 'c> Fields<'a, 'c> {
    fn new(
        ctx: &'c Ctx<'c>,
        path: &str,
        node: &'a Node,
        allowed: &[&str],
    ) -> Result<Self, ScenarioError> {
        let Val::Table(entries) = &node.val else {
            return Err(ctx.bad(
                node,
                path,
                format!("expected a table, found {}", node.val.kind()),
            ));
        };
        for (k, kspan, _) in entries {
            if !allowed.contains(&k.as_str()) {
                let field = join(path, k);
                let where_ = if path.is_empty() {
                    "at the top level".to_string()
                } else {
                    format!("in {path}")
                };
                return Err(ctx.err(
                    kspan,
                    &field,
                    None,
                    format!(
                        "unknown field \"{k}\" {where_}; allowed fields: {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(Fields { ctx, path: path.to_string(), node, entries })
    }

    fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }

    fn get(&self, key: &str) -> Option<&'a Node> {
        self.entries.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
    }

    fn missing(&self, key: &str, what: &str) -> ScenarioError {
        let where_ =
            if self.path.is_empty() { String::new() } else { format!(" in {}", self.path) };
        let mut e = self.ctx.err(
            &self.node.span,
            &self.field(key),
            None,
            format!("missing required field \"{key}\"{where_}: {what}"),
        );
        if self.path.is_empty() {
            // The whole file is the "table" here: no single line to point at.
            e.line = None;
            e.from_override = false;
        }
        e
    }

    fn string(&self, key: &str) -> Result<Option<(&'a Node, String)>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        Ok(Some((n, as_text(self.ctx, n, &self.field(key))?)))
    }

    /// A quantity written as a string with a unit; a bare number gets a message that
    /// shows the expected form (`rtt = 100` -> "a duration such as \"20ms\" ...").
    fn quantity(
        &self,
        key: &str,
        expected: &str,
    ) -> Result<Option<(&'a Node, String)>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        match as_text(self.ctx, n, &self.field(key)) {
            Ok(s) => Ok(Some((n, s))),
            Err(_) => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected {expected}, written as a quoted string; found {}", n.val.kind()),
            )),
        }
    }

    fn duration(
        &self,
        key: &str,
        min: Duration,
        max: Duration,
    ) -> Result<Option<Duration>, ScenarioError> {
        let Some((n, s)) =
            self.quantity(key, "a duration such as \"20ms\" (units: ns, us, ms, s)")?
        else {
            return Ok(None);
        };
        let d = parse_duration(&s)
            .map_err(|e| self.ctx.bad(n, &self.field(key), format!("expected {}", e.expected)))?;
        if d < min || d > max {
            return Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("out of range; allowed: {min} to {max}"),
            ));
        }
        Ok(Some(d))
    }

    fn rate(&self, key: &str) -> Result<Option<Rate>, ScenarioError> {
        let Some((n, s)) =
            self.quantity(key, "a rate such as \"10Mbps\" (units: bps, Kbps, Mbps, Gbps)")?
        else {
            return Ok(None);
        };
        let r = parse_rate(&s)
            .map_err(|e| self.ctx.bad(n, &self.field(key), format!("expected {}", e.expected)))?;
        if r < MIN_RATE || r > MAX_RATE {
            return Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("out of range; allowed: {MIN_RATE} to {MAX_RATE}"),
            ));
        }
        Ok(Some(r))
    }

    fn bytes(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ScenarioError> {
        let Some((n, s)) = self.quantity(key, "a size such as \"10MB\" (units: B, KB, MB, GB)")?
        else {
            return Ok(None);
        };
        let b = parse_bytes(&s)
            .map_err(|e| self.ctx.bad(n, &self.field(key), format!("expected {}", e.expected)))?;
        if b < min || b > max {
            return Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("out of range; allowed: {min} to {max} bytes"),
            ));
        }
        Ok(Some(b))
    }

    fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        let field = self.field(key);
        let v = match &n.val {
            Val::Int(i) => *i,
            Val::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => *f as i64,
            other => {
                return Err(self.ctx.bad(
                    n,
                    &field,
                    format!("expected a whole number in [{min}, {max}], found {}", other.kind()),
                ))
            }
        };
        if v < min || v > max {
            return Err(self.ctx.bad(
                n,
                &field,
                format!("out of range; allowed: a whole number in [{min}, {max}]"),
            ));
        }
        Ok(Some(v))
    }

    /// A number in `[min, max]` (or `(min, max]` when `min_open`).
    fn float(
        &self,
        key: &str,
        min: f64,
        min_open: bool,
        max: f64,
    ) -> Result<Option<f64>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        let field = self.field(key);
        let allowed = format!("a number in {}{min}, {max}]", if min_open { '(' } else { '[' });
        let v = match &n.val {
            Val::Int(i) => *i as f64,
            Val::Float(f) => *f,
            other => {
                return Err(self.ctx.bad(
                    n,
                    &field,
                    format!("expected {allowed}, found {}", other.kind()),
                ))
            }
        };
        let below = if min_open { v <= min } else { v < min };
        if !v.is_finite() || below || v > max {
            return Err(self.ctx.bad(n, &field, format!("out of range; allowed: {allowed}")));
        }
        Ok(Some(v))
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(None) };
        match &n.val {
            Val::Bool(b) => Ok(Some(*b)),
            other => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected true or false, found {}", other.kind()),
            )),
        }
    }

    /// An array of tables (`[[flows]]`), possibly absent.
    fn tables(&self, key: &str) -> Result<&'a [Node], ScenarioError> {
        let Some(n) = self.get(key) else { return Ok(&[]) };
        match &n.val {
            Val::Array(items) => Ok(items),
            other => Err(self.ctx.bad(
                n,
                &self.field(key),
                format!("expected an array of tables ([[{key}]] sections), found {}", other.kind()),
            )),
        }
    }
}

/// A string value; for `--set` overrides, also a number or boolean as typed.
fn as_text(ctx: &Ctx, n: &Node, field: &str) -> Result<String, ScenarioError> {
    match (&n.val, &n.raw) {
        (Val::Str(s), _) => Ok(s.clone()),
        (Val::Int(_) | Val::Float(_) | Val::Bool(_), Some(raw)) => Ok(raw.clone()),
        (other, _) => Err(ctx.bad(n, field, format!("expected a string, found {}", other.kind()))),
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
    "sweep",
];
const BOTTLENECK: &[&str] = &["rate", "trace", "delay", "buffer", "qdisc", "loss"];
const FLOW: &[&str] = &[
    "cc",
    "name",
    "rtt",
    "count",
    "start",
    "stop",
    "bytes",
    "params",
    "rto_min",
    "initcwnd",
    "mss",
    "delayed_ack",
    "rwnd",
    "recovery",
    "transport",
];
const CROSS: &[&str] =
    &["kind", "rate", "count", "start", "stop", "packet_size", "mean_on", "mean_off"];
const CHANGE: &[&str] = &["at", "flow", "set"];

/// Builds the scenario from a parsed document.
pub(crate) fn build(ctx: &Ctx, root: &Node) -> Result<Scenario, ScenarioError> {
    let top = Fields::new(ctx, "", root, TOP)?;
    if let Some(n) = top.get("sweep") {
        return Err(ctx.bad(
            n,
            "sweep",
            "sweeps are not supported yet; run each point as its own scenario (or with --set)",
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
        .duration("duration", Duration::from_millis(1), MAX_DURATION)?
        .ok_or_else(|| top.missing("duration", "how long to simulate, e.g. \"60s\""))?;
    let seed = top.int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let sample_interval = top
        .duration("sample_interval", Duration::from_micros(100), MAX_DURATION)?
        .unwrap_or(Duration::from_millis(10));

    let flow_tables = top.tables("flows")?;
    if flow_tables.is_empty() {
        return Err(top.missing("flows", "at least one [[flows]] section with cc and rtt"));
    }
    let bn_node = top.get("bottleneck").ok_or_else(|| {
        top.missing("bottleneck", "a [bottleneck] section with rate (or trace) and delay")
    })?;

    // Flows first (the BDP buffer needs the largest RTT), checked against the delay after.
    let mut flows = Vec::new();
    let mut flow_rtt_spans = Vec::new();
    let mut entry_of = Vec::new();
    let mut transports = Vec::new();
    let mut total: u64 = 0;
    for (i, t) in flow_tables.iter().enumerate() {
        let path = format!("flows[{i}]");
        let (entry, count, rtt_span, transport) = flow_entry(ctx, &path, t, duration)?;
        total += count;
        if total > MAX_FLOWS {
            let f = Fields::new(ctx, &path, t, FLOW)?;
            let n = f.get("count").unwrap_or(t);
            return Err(ctx.bad(n, &format!("{path}.count"), format!("the scenario would have {total} flows or more; at most {MAX_FLOWS} flows fit in memory")));
        }
        for _ in 0..count {
            let id = flows.len();
            let mut f = entry.clone();
            f.name = if count == 1 && !f.name.is_empty() {
                f.name.clone()
            } else {
                format!("{}#{id}", if f.name.is_empty() { &f.cc } else { &f.name })
            };
            flows.push(f);
            flow_rtt_spans.push((path.clone(), rtt_span.clone()));
            entry_of.push(i);
            transports.push(transport);
        }
    }
    let max_rtt = flows.iter().map(|f| f.rtt).max().unwrap_or(Duration::ZERO);

    let bottleneck = link(ctx, bn_node, max_rtt)?;
    for (f, (path, span)) in flows.iter().zip(&flow_rtt_spans) {
        let floor = bottleneck.delay.saturating_mul(2);
        if f.rtt < floor {
            return Err(ctx.err(
                span,
                &format!("{path}.rtt"),
                Some(format!("\"{}\"", f.rtt)),
                format!("a flow's base RTT includes the bottleneck delay both ways, so it must be at least 2 x bottleneck.delay = {floor}"),
            ));
        }
    }

    let samples = duration.as_nanos() / sample_interval.as_nanos().max(1);
    let rows = samples.saturating_mul(flows.len() as u64);
    if rows > MAX_SERIES_ROWS {
        let n = top.get("sample_interval");
        let mut e = ctx.err(
            &n.map_or(Some(0..0), |n| n.span.clone()),
            "sample_interval",
            Some(format!("\"{sample_interval}\"")),
            format!("{} flows sampled every {sample_interval} for {duration} would write {rows} rows (limit {MAX_SERIES_ROWS}); use a longer sample_interval", flows.len()),
        );
        if n.is_none() {
            e.line = None; // the default applies; no line wrote it
        }
        return Err(e);
    }

    let mut cross = Vec::new();
    let mut total_cross = 0u64;
    for (i, t) in top.tables("cross")?.iter().enumerate() {
        let path = format!("cross[{i}]");
        let (c, count) = cross_entry(ctx, &path, t, duration)?;
        total_cross += count;
        if total_cross > MAX_CROSS {
            let n = t.get("count").unwrap_or(t);
            return Err(ctx.bad(
                n,
                &format!("{path}.count"),
                format!("at most {MAX_CROSS} cross-traffic sources in all"),
            ));
        }
        cross.extend(std::iter::repeat_n(c, count as usize));
    }

    let mut changes = Vec::new();
    for (i, t) in top.tables("changes")?.iter().enumerate() {
        changes.push(change_entry(ctx, &format!("changes[{i}]"), t, duration, &flows)?);
    }
    // Applied in time order; equal times keep file order (stable sort).
    changes.sort_by_key(|c: &ParamChange| c.at);

    let config = SimConfig { duration, seed, bottleneck, flows, cross, sample_interval, changes };
    // The simulator's own check, as a safety net: everything it refuses should have been
    // refused above with a line number, but if the two ever disagree the user still
    // gets the file and the scenario's field rather than an error at run time.
    cclab_sim::validate(&config).map_err(|e| ScenarioError {
        file: ctx.file.to_string(),
        line: None,
        from_override: false,
        field: scenario_field(&e.field, &entry_of),
        value: None,
        message: e.message.clone(),
    })?;
    Ok(Scenario { name, config, transports })
}

/// Maps the simulator's `flows[i].x` (after `count` is expanded) to the scenario's
/// `flows[entry].x`.
fn scenario_field(field: &str, entry_of: &[usize]) -> String {
    let parsed = field
        .strip_prefix("flows[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(i, tail)| Some((i.parse::<usize>().ok()?, tail)));
    match parsed {
        Some((i, tail)) if i < entry_of.len() => format!("flows[{}]{tail} (flow {i})", entry_of[i]),
        _ => field.to_string(),
    }
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

fn flow_entry(
    ctx: &Ctx,
    path: &str,
    t: &Node,
    duration: Duration,
) -> Result<(FlowConfig, u64, Span, Transport), ScenarioError> {
    let f = Fields::new(ctx, path, t, FLOW)?;
    let (cc_node, cc) = f
        .string("cc")?
        .ok_or_else(|| f.missing("cc", "the algorithm name (see `cclab algorithms`)"))?;
    let info = info_of(&cc).map_err(|e| ctx.bad(cc_node, &f.field("cc"), e.to_string()))?;
    let rtt = f
        .duration("rtt", Duration::from_micros(1), MAX_RTT)?
        .ok_or_else(|| f.missing("rtt", "the flow's base round-trip time, e.g. \"100ms\""))?;
    let rtt_span = f.get("rtt").and_then(|n| n.span.clone());
    let count = f.int("count", 1, i64::MAX)?.unwrap_or(1) as u64;
    if count > MAX_FLOWS {
        let n = f.get("count").expect("count was read");
        return Err(ctx.bad(
            n,
            &f.field("count"),
            format!(
                "{count} flows cannot fit in memory; allowed: at most {MAX_FLOWS} flows in all"
            ),
        ));
    }
    let start = f.duration("start", Duration::ZERO, MAX_DURATION)?.unwrap_or(Duration::ZERO);
    if start >= duration {
        let n = f.get("start").expect("start was read");
        return Err(ctx.bad(
            n,
            &f.field("start"),
            format!(
                "the flow would start after the run ends; allowed: before duration = {duration}"
            ),
        ));
    }
    let stop = f.duration("stop", Duration::ZERO, MAX_DURATION)?;
    if let Some(stop) = stop {
        if stop <= start {
            let n = f.get("stop").expect("stop was read");
            return Err(ctx.bad(
                n,
                &f.field("stop"),
                format!("must be later than start = {start}"),
            ));
        }
    }
    let bytes = f.bytes("bytes", 1, 1_000_000_000_000_000)?;

    let mut params = Vec::new();
    if let Some(pn) = f.get("params") {
        let Val::Table(entries) = &pn.val else {
            return Err(ctx.bad(
                pn,
                &f.field("params"),
                format!("expected a table such as {{ beta = 0.7 }}, found {}", pn.val.kind()),
            ));
        };
        for (k, kspan, v) in entries {
            let field = format!("{path}.params.{k}");
            let spec = spec_of(info, k).map_err(|e| ctx.err(kspan, &field, None, e.to_string()))?;
            let value = param_value(ctx, v, &field, spec.kind, &spec.allowed())?;
            spec.check(info.name, value).map_err(|e| ctx.bad(v, &field, param_message(&e)))?;
            params.push((spec.name.to_string(), value));
        }
    }

    let mut tcp = TcpConfig::default();
    let (rto_lo, rto_hi) = cclab_sim::rto_min_range();
    if let Some(d) = f.duration("rto_min", rto_lo, rto_hi)? {
        tcp.rto_min = d;
    }
    if let Some(n) = f.int("initcwnd", INITCWND.min as i64, INITCWND.max as i64)? {
        tcp.init_cwnd = n as u32;
    }
    if let Some(n) = f.int("mss", MSS.min as i64, MSS.max as i64)? {
        tcp.mss = n as u32;
    }
    if let Some(b) = f.bool("delayed_ack")? {
        tcp.delayed_ack = DelayedAck { enabled: b, ..DelayedAck::default() };
    }
    tcp.rwnd = f.bytes("rwnd", tcp.mss as u64, 1 << 40)?;
    if let Some((n, r)) = f.string("recovery")? {
        tcp.recovery = Some(match r.as_str() {
            "sack" => LossRecovery::Sack,
            "newreno" => LossRecovery::NewReno,
            "tahoe" => LossRecovery::Tahoe,
            _ => {
                return Err(ctx.bad(
                    n,
                    &f.field("recovery"),
                    "allowed: \"sack\", \"newreno\" or \"tahoe\"",
                ))
            }
        });
    }
    let name = f.string("name")?.map(|(_, s)| s).unwrap_or_default();
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
    };
    Ok((flow, count, rtt_span, transport))
}

/// A parameter value: numbers as they are, booleans as 1/0 for switches.
fn param_value(
    ctx: &Ctx,
    v: &Node,
    field: &str,
    kind: ParamKind,
    allowed: &str,
) -> Result<f64, ScenarioError> {
    match (&v.val, kind) {
        (Val::Bool(b), ParamKind::Bool) => Ok(if *b { 1.0 } else { 0.0 }),
        (Val::Int(i), _) => Ok(*i as f64),
        (Val::Float(x), _) => Ok(*x),
        (other, _) => Err(ctx.bad(v, field, format!("expected {allowed}, found {}", other.kind()))),
    }
}

/// `ParamError` names the algorithm and parameter; the field path already says which.
fn param_message(e: &ParamError) -> String {
    match e {
        ParamError::OutOfRange { algorithm, allowed, .. } => {
            format!("out of range for {algorithm}; allowed: {allowed}")
        }
        other => other.to_string(),
    }
}

fn link(ctx: &Ctx, node: &Node, max_rtt: Duration) -> Result<LinkConfig, ScenarioError> {
    let f = Fields::new(ctx, "bottleneck", node, BOTTLENECK)?;
    let rate = match (f.get("rate"), f.string("trace")?) {
        (Some(_), Some((tn, _))) => {
            return Err(ctx.bad(tn, "bottleneck.trace", "give either rate or trace, not both"))
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
        .duration("delay", Duration::ZERO, MAX_RTT)?
        .ok_or_else(|| f.missing("delay", "the one-way propagation delay, e.g. \"20ms\""))?;
    let mean_rate = match &rate {
        LinkRate::Constant(r) => *r,
        LinkRate::Trace(t) => t.mean_rate(),
    };
    let buffer = match f.get("buffer") {
        None => bdp_buffer(mean_rate, max_rtt, 1.0),
        Some(n) => buffer(ctx, n, mean_rate, max_rtt)?,
    };
    let qdisc = match f.get("qdisc") {
        None => Qdisc::DropTail,
        Some(n) => qdisc(ctx, n)?,
    };
    let loss = match f.get("loss") {
        None => LossModel::None,
        Some(n) => loss(ctx, n)?,
    };
    Ok(LinkConfig { rate, delay, buffer, qdisc, loss })
}

fn load_trace(ctx: &Ctx, n: &Node, path: &str) -> Result<Trace, ScenarioError> {
    let full = match ctx.base_dir {
        Some(dir) if Path::new(path).is_relative() => dir.join(path),
        _ => Path::new(path).to_path_buf(),
    };
    let text = std::fs::read_to_string(&full).map_err(|e| {
        ctx.bad(
            n,
            "bottleneck.trace",
            format!(
                "cannot read trace file {} ({e}); the path is relative to the scenario file",
                full.display()
            ),
        )
    })?;
    Trace::parse(&text).map_err(|e| {
        ctx.bad(n, "bottleneck.trace", format!("{} is not a mahimahi trace: {e}", full.display()))
    })
}

/// A buffer of `k` bandwidth-delay products, in full-sized packets (at least one).
fn bdp_buffer(rate: Rate, rtt: Duration, k: f64) -> Buffer {
    let bytes = rate.bytes_in(rtt) as f64 * k;
    Buffer::Packets(((bytes / WIRE_PACKET as f64).ceil() as u64).max(1))
}

fn buffer(ctx: &Ctx, n: &Node, rate: Rate, max_rtt: Duration) -> Result<Buffer, ScenarioError> {
    const ALLOWED: &str = "allowed: \"<x>bdp\" (x in (0, 1000], rate x largest flow RTT), \"<n>pkt\" (n in [1, 100000000]), or a size \"<n>B\", \"<n>KB\", \"<n>MB\" (at least 1500B)";
    let field = "bottleneck.buffer";
    let s = match &n.val {
        Val::Int(p) if (1..=100_000_000).contains(p) => return Ok(Buffer::Packets(*p as u64)),
        _ => as_text(ctx, n, field).map_err(|_| ctx.bad(n, field, ALLOWED))?,
    };
    let t = s.trim();
    if let Some(x) = t.strip_suffix("bdp") {
        return match x.trim().parse::<f64>() {
            Ok(k) if k > 0.0 && k <= 1000.0 => Ok(bdp_buffer(rate, max_rtt, k)),
            _ => Err(ctx.bad(n, field, ALLOWED)),
        };
    }
    if let Some(x) = t.strip_suffix("pkts").or_else(|| t.strip_suffix("pkt")) {
        return match x.trim().parse::<u64>() {
            Ok(p) if (1..=100_000_000).contains(&p) => Ok(Buffer::Packets(p)),
            _ => Err(ctx.bad(n, field, ALLOWED)),
        };
    }
    match parse_bytes(t) {
        Ok(b) if (WIRE_PACKET..=1_000_000_000_000).contains(&b) => Ok(Buffer::Bytes(b)),
        _ => Err(ctx.bad(n, field, ALLOWED)),
    }
}

const QDISCS: &str = "\"droptail\", \"red\", \"codel\", \"pie\" or \"fq_codel\" (or a table { kind = \"red\", ... })";

/// Queue disciplines with their defaults.
///
/// RED's defaults are ns-2's (`queue/red.cc`, as the seeds' RED study `003_…` used them):
/// min_th 5 and max_th 15 packets, max_p 0.1 (ns-2 `linterm_` 10), weight 0.002, gentle.
/// They are fixed rather than derived from the buffer so that a scenario means the same
/// thing whatever its buffer; set them explicitly for large BDPs.
fn qdisc(ctx: &Ctx, n: &Node) -> Result<Qdisc, ScenarioError> {
    let field = "bottleneck.qdisc";
    let (kind, f) = match &n.val {
        Val::Table(_) => {
            let f = Fields::new(
                ctx,
                field,
                n,
                &[
                    "kind", "min_th", "max_th", "max_p", "weight", "gentle", "target", "interval",
                    "tupdate", "alpha", "beta",
                ],
            )?;
            let (_, k) = f.string("kind")?.ok_or_else(|| f.missing("kind", QDISCS))?;
            (k, Some(f))
        }
        _ => (as_text(ctx, n, field)?, None),
    };
    let only = |allowed: &[&str]| -> Result<(), ScenarioError> {
        if let Some(f) = &f {
            for (k, kspan, _) in f.entries {
                if k != "kind" && !allowed.contains(&k.as_str()) {
                    let what = if allowed.is_empty() {
                        "no parameters".to_string()
                    } else {
                        format!("parameters {}", allowed.join(", "))
                    };
                    return Err(ctx.err(
                        kspan,
                        &format!("{field}.{k}"),
                        None,
                        format!("qdisc \"{kind}\" has {what}"),
                    ));
                }
            }
        }
        Ok(())
    };
    let dur = |key: &str, default: Duration| -> Result<Duration, ScenarioError> {
        Ok(match &f {
            Some(f) => f
                .duration(key, Duration::from_micros(1), Duration::from_secs(100))?
                .unwrap_or(default),
            None => default,
        })
    };
    let num = |key: &str,
               default: f64,
               min: f64,
               min_open: bool,
               max: f64|
     -> Result<f64, ScenarioError> {
        Ok(match &f {
            Some(f) => f.float(key, min, min_open, max)?.unwrap_or(default),
            None => default,
        })
    };
    match kind.as_str() {
        "droptail" => {
            only(&[])?;
            Ok(Qdisc::DropTail)
        }
        "red" => {
            only(&["min_th", "max_th", "max_p", "weight", "gentle"])?;
            let min_th = num("min_th", 5.0, 0.0, false, 1e9)?;
            let max_th = num("max_th", 15.0, 0.0, true, 1e9)?;
            if max_th <= min_th {
                let at = f.as_ref().and_then(|f| f.get("max_th").or(f.get("min_th"))).unwrap_or(n);
                return Err(ctx.err(
                    &at.span,
                    &format!("{field}.max_th"),
                    Some(max_th.to_string()),
                    format!("must be greater than min_th = {min_th}"),
                ));
            }
            let max_p = num("max_p", 0.1, 0.0, true, 1.0)?;
            let weight = num("weight", 0.002, 0.0, true, 1.0)?;
            let gentle = match &f {
                Some(f) => f.bool("gentle")?.unwrap_or(true),
                None => true,
            };
            Ok(Qdisc::Red(RedConfig { min_th, max_th, max_p, weight, gentle }))
        }
        "codel" | "fq_codel" => {
            only(&["target", "interval"])?;
            // RFC 8289 section 4.2 defaults.
            let c = CodelConfig {
                target: dur("target", Duration::from_millis(5))?,
                interval: dur("interval", Duration::from_millis(100))?,
            };
            Ok(if kind == "codel" { Qdisc::Codel(c) } else { Qdisc::FqCodel(c) })
        }
        "pie" => {
            only(&["target", "tupdate", "alpha", "beta"])?;
            // RFC 8033 section 5.1 defaults.
            Ok(Qdisc::Pie(PieConfig {
                target: dur("target", Duration::from_millis(15))?,
                tupdate: dur("tupdate", Duration::from_millis(15))?,
                alpha: num("alpha", 0.125, 0.0, false, 100.0)?,
                beta: num("beta", 1.25, 0.0, false, 100.0)?,
            }))
        }
        _ => {
            let at = f.as_ref().and_then(|f| f.get("kind")).unwrap_or(n);
            let field = if f.is_some() { format!("{field}.kind") } else { field.to_string() };
            Err(ctx.bad(at, &field, format!("unknown queue discipline; allowed: {QDISCS}")))
        }
    }
}

fn loss(ctx: &Ctx, n: &Node) -> Result<LossModel, ScenarioError> {
    let field = "bottleneck.loss";
    const ALLOWED: &str = "a probability in [0, 1) or a table { kind = \"bernoulli\", p = ... } / { kind = \"gilbert\", p_good_to_bad, p_bad_to_good, loss_good, loss_bad }";
    match &n.val {
        Val::Int(_) | Val::Float(_) => {
            let p = match n.val {
                Val::Int(i) => i as f64,
                Val::Float(x) => x,
                _ => unreachable!(),
            };
            if !(0.0..1.0).contains(&p) {
                return Err(ctx.bad(n, field, format!("out of range; allowed: {ALLOWED}")));
            }
            Ok(if p == 0.0 { LossModel::None } else { LossModel::Bernoulli { p } })
        }
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
            match kind.as_str() {
                "bernoulli" => {
                    let p = f
                        .float("p", 0.0, false, 0.999_999)?
                        .ok_or_else(|| f.missing("p", "the loss probability"))?;
                    Ok(if p == 0.0 { LossModel::None } else { LossModel::Bernoulli { p } })
                }
                "gilbert" => Ok(LossModel::GilbertElliott {
                    p_good_to_bad: f.float("p_good_to_bad", 0.0, false, 1.0)?.ok_or_else(|| {
                        f.missing(
                            "p_good_to_bad",
                            "probability per packet of entering the bad state",
                        )
                    })?,
                    p_bad_to_good: f.float("p_bad_to_good", 0.0, true, 1.0)?.ok_or_else(|| {
                        f.missing(
                            "p_bad_to_good",
                            "probability per packet of leaving the bad state",
                        )
                    })?,
                    loss_good: f.float("loss_good", 0.0, false, 1.0)?.unwrap_or(0.0),
                    loss_bad: f.float("loss_bad", 0.0, false, 1.0)?.unwrap_or(1.0),
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

fn cross_entry(
    ctx: &Ctx,
    path: &str,
    t: &Node,
    duration: Duration,
) -> Result<(CrossConfig, u64), ScenarioError> {
    let f = Fields::new(ctx, path, t, CROSS)?;
    let (kn, kind_s) = f
        .string("kind")?
        .ok_or_else(|| f.missing("kind", "\"cbr\", \"poisson\" or \"exponential\""))?;
    let on = f.duration("mean_on", Duration::from_micros(1), MAX_DURATION)?;
    let off = f.duration("mean_off", Duration::from_micros(1), MAX_DURATION)?;
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
    let start = f.duration("start", Duration::ZERO, MAX_DURATION)?.unwrap_or(Duration::ZERO);
    if start >= duration {
        return Err(ctx.bad(
            f.get("start").expect("read"),
            &f.field("start"),
            format!(
                "the source would start after the run ends; allowed: before duration = {duration}"
            ),
        ));
    }
    let stop = f.duration("stop", Duration::ZERO, MAX_DURATION)?;
    if let Some(s) = stop {
        if s <= start {
            return Err(ctx.bad(
                f.get("stop").expect("read"),
                &f.field("stop"),
                format!("must be later than start = {start}"),
            ));
        }
    }
    let packet_bytes = f.bytes("packet_size", 28, 9000)?.unwrap_or(WIRE_PACKET) as u32;
    Ok((
        CrossConfig {
            kind,
            rate,
            packet_bytes,
            start: Time(start.as_nanos()),
            stop: stop.map(|s| Time(s.as_nanos())),
        },
        count,
    ))
}

/// `[[changes]]`: checked now against the flow's algorithm, so a typo fails before the run.
fn change_entry(
    ctx: &Ctx,
    path: &str,
    t: &Node,
    duration: Duration,
    flows: &[FlowConfig],
) -> Result<ParamChange, ScenarioError> {
    let f = Fields::new(ctx, path, t, CHANGE)?;
    let at = f
        .duration("at", Duration::ZERO, MAX_DURATION)?
        .ok_or_else(|| f.missing("at", "when to apply the change, e.g. \"30s\""))?;
    if at > duration {
        return Err(ctx.bad(
            f.get("at").expect("read"),
            &f.field("at"),
            format!("after the end of the run; allowed: 0s to duration = {duration}"),
        ));
    }
    let last = flows.len() as i64 - 1;
    let flow = f.int("flow", 0, last)?.ok_or_else(|| {
        f.missing(
            "flow",
            &format!("the flow index, 0 to {last} (flows are numbered after count is expanded)"),
        )
    })? as usize;
    let cc = &flows[flow].cc;
    let info = info_of(cc).expect("validated with the flow");
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
    let mut set = Vec::new();
    for (k, kspan, v) in entries {
        let field = format!("{path}.set.{k}");
        let who = format!("flow {flow} ({cc})");
        let value = match k.as_str() {
            // TCP-level parameters: rto_min in milliseconds, initcwnd in segments.
            "rto_min" => {
                let ms = match (&v.val, &v.raw) {
                    (Val::Str(s), _) => parse_duration(s)
                        .map_err(|e| ctx.bad(v, &field, format!("expected {}", e.expected)))?
                        .as_millis_f64(),
                    (Val::Int(i), _) => *i as f64,
                    (Val::Float(x), _) => *x,
                    (other, _) => {
                        return Err(ctx.bad(
                            v,
                            &field,
                            format!("expected a duration such as \"50ms\", found {}", other.kind()),
                        ))
                    }
                };
                // Live changes take whole milliseconds.
                let (lo, hi) = cclab_sim::rto_min_range();
                if !(RTO_MIN_MS.min as f64..=RTO_MIN_MS.max as f64).contains(&ms)
                    || ms.fract() != 0.0
                {
                    return Err(ctx.bad(v, &field, format!("out of range for {who}; allowed: a whole number of milliseconds from {lo} to {hi}")));
                }
                ms
            }
            "initcwnd" => match &v.val {
                Val::Int(i) if u64::try_from(*i).is_ok_and(|n| INITCWND.contains(n)) => *i as f64,
                _ => {
                    return Err(ctx.bad(
                        v,
                        &field,
                        format!(
                            "out of range for {who}; allowed: a whole number in [{}, {}] ({})",
                            INITCWND.min, INITCWND.max, INITCWND.unit
                        ),
                    ))
                }
            },
            _ => {
                let spec = spec_of(info, k).map_err(|e| {
                    let known: Vec<&str> = info
                        .params
                        .iter()
                        .map(|p| p.name)
                        .chain(TCP_PARAMS.iter().copied())
                        .collect();
                    let _ = e;
                    ctx.err(
                        kspan,
                        &field,
                        None,
                        format!("{who} has no parameter \"{k}\"; it accepts: {}", known.join(", ")),
                    )
                })?;
                let value = param_value(ctx, v, &field, spec.kind, &spec.allowed())?;
                spec.check(info.name, value).map_err(|_| {
                    ctx.bad(
                        v,
                        &field,
                        format!("out of range for {who}; allowed: {}", spec.allowed()),
                    )
                })?
            }
        };
        set.push((k.clone(), value));
    }
    Ok(ParamChange { at: Time(at.as_nanos()), flow, set })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_cc::ParamSpec;

    fn ctx() -> Ctx<'static> {
        Ctx { file: "t.toml", text: "", base_dir: None, default_name: "t" }
    }

    fn node(val: Val) -> Node {
        Node { val, span: None, raw: None }
    }

    /// TOML booleans become 1/0 for switches (and only for switches); numbers pass
    /// through to `ParamSpec::check`, which then refuses 2 for a switch.
    #[test]
    fn switches_take_toml_booleans() {
        let spec = ParamSpec::switch("hystart", true, "HyStart on or off");
        let c = ctx();
        assert_eq!(
            param_value(&c, &node(Val::Bool(true)), "p", spec.kind, &spec.allowed()).unwrap(),
            1.0
        );
        assert_eq!(
            param_value(&c, &node(Val::Bool(false)), "p", spec.kind, &spec.allowed()).unwrap(),
            0.0
        );
        let two = param_value(&c, &node(Val::Int(2)), "p", spec.kind, &spec.allowed()).unwrap();
        assert!(spec.check("x", two).is_err());
        let float = ParamSpec::float("beta", 0.7, 0.0, 1.0, "", "decrease factor");
        let e = param_value(
            &c,
            &node(Val::Bool(true)),
            "flows[0].params.beta",
            float.kind,
            &float.allowed(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("expected a number in [0, 1], found a boolean"), "{e}");
        let e = param_value(
            &c,
            &node(Val::Str("0.5".into())),
            "flows[0].params.beta",
            float.kind,
            &float.allowed(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("found a string"), "{e}");
    }

    #[test]
    fn bdp_buffers_round_up_to_whole_packets() {
        // 10 Mbit/s x 100 ms = 125,000 B = 83.3 packets -> 84.
        assert_eq!(
            bdp_buffer(Rate::from_mbps(10), Duration::from_millis(100), 1.0),
            Buffer::Packets(84)
        );
        assert_eq!(
            bdp_buffer(Rate::from_mbps(10), Duration::from_millis(100), 0.001),
            Buffer::Packets(1)
        );
    }

    #[test]
    fn simulator_fields_map_back_to_scenario_entries() {
        assert_eq!(scenario_field("flows[3].tcp.mss", &[0, 0, 0, 1]), "flows[1].tcp.mss (flow 3)");
        assert_eq!(scenario_field("bottleneck.buffer", &[0]), "bottleneck.buffer");
        assert_eq!(scenario_field("flows[9].rtt", &[0]), "flows[9].rtt");
    }

    #[test]
    fn names_must_be_safe() {
        assert!(check_name("cubic-vs-reno_2.v1").is_ok());
        for bad in ["", ".hidden", "a/b", "..", "a b", &"x".repeat(101)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
