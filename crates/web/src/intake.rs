//! A scenario from a request: TOML text, or JSON (a document of the same shape, turned
//! into TOML first), read with `cclab_scenario` exactly as `cclab run` reads a file, so a
//! bad one gets the CLI's message. Before that, `bottleneck.trace` must be the bare name
//! of a ready or uploaded trace ([`crate::catalog`]); after it, the live-run limits apply.

use crate::catalog::Traces;
use crate::error::{ApiError, ApiResult};
use crate::limits::Limits;
use cclab_scenario::doc::{self, Node, Val};
use cclab_scenario::{Scenario, ScenarioError};
use cclab_sim::Simulation;
use serde_json::Value;

/// How errors name a scenario that came without a file name.
pub const DEFAULT_FILE: &str = "scenario.toml";

/// A scenario read from a request, checked and ready to run.
pub struct Checked {
    pub scenario: Scenario,
    /// The text as it will be saved (TOML; JSON input is converted).
    pub toml: String,
    /// The name errors use for it (`scenario.toml`, or the client's `file`).
    pub file: String,
    /// The trace it names, if any, as it was read for the check (written beside a saved
    /// scenario).
    pub trace: Option<KeptTrace>,
}

/// A run's trace, kept from its check on: deleting or replacing the upload later changes
/// neither the run nor what saving it writes.
pub struct KeptTrace {
    /// The bare name the scenario gives it.
    pub name: String,
    pub text: String,
}

/// Parses scenario text whose trace, if it names one, is `trace`.
pub fn parse(text: &str, file: &str, trace: Option<&KeptTrace>) -> Result<Scenario, ScenarioError> {
    let stem = file.strip_suffix(".toml").unwrap_or(file);
    match trace {
        Some(t) => cclab_scenario::parse_str_with_trace(text, file, &t.text, stem),
        None => cclab_scenario::parse_str(text, file, None, stem, &[]),
    }
}

/// The file name errors use: the client's, if it is a plain file name.
pub fn file_label(file: Option<&str>) -> ApiResult<String> {
    match file {
        None => Ok(DEFAULT_FILE.to_string()),
        // Ending in .toml, as `cclab run` takes the scenario's name from the file's stem
        // (a save replays it so), and as no file a run writes does: the scenario is
        // copied beside its results.
        Some(f) if crate::catalog::valid_trace_name(f) && f.len() > 5 && f.ends_with(".toml") => {
            Ok(f.to_string())
        }
        Some(f) => Err(ApiError::field(
            "file",
            format!("\"{f}\": a plain file name ending in .toml, such as exp.toml (letters, digits, '.', '_', '-')"),
        )),
    }
}

/// JSON scenario document to TOML text (the same shape: tables, arrays, strings with units).
pub fn json_to_toml(doc: &Value) -> ApiResult<String> {
    if !doc.is_object() {
        return Err(ApiError::field(
            "scenario",
            "expected a JSON object shaped like a scenario file",
        ));
    }
    let clean = drop_nulls(doc, "")?;
    toml::to_string(&clean)
        .map_err(|e| ApiError::field("scenario", format!("cannot be written as TOML: {e}")))
}

/// TOML has no null: a null field means "not set" and is left out; a null in a list
/// has no such meaning and is refused, naming where it is (`path`, as errors name it).
fn drop_nulls(v: &Value, path: &str) -> ApiResult<Value> {
    let field = |child: String| if path.is_empty() { child } else { format!("{path}.{child}") };
    Ok(match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| Ok((k.clone(), drop_nulls(v, &field(k.clone()))?)))
                .collect::<ApiResult<_>>()?,
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    let at = format!("{path}[{i}]");
                    if x.is_null() {
                        return Err(ApiError::field(&at, "null in a list: a scenario has no null (leave a field out for its default; a list holds values)"));
                    }
                    drop_nulls(x, &at)
                })
                .collect::<ApiResult<_>>()?,
        ),
        other => other.clone(),
    })
}

/// TOML text to a JSON document of the same shape, for the page's form (None when the
/// text is not TOML; the scenario check reports why).
pub fn toml_to_json(text: &str) -> Option<Value> {
    let table: toml::Table = text.parse().ok()?;
    serde_json::to_value(table).ok()
}

/// Reads, checks and limits a scenario given as TOML text.
pub fn check(text: &str, file: &str, traces: &Traces, limits: &Limits) -> ApiResult<Checked> {
    // A text that does not parse is left to the scenario parser, which says why.
    let root = doc::parse(text).ok();
    if let Some(root) = &root {
        refuse_sweep(root, text, file)?;
    }
    let trace = match &root {
        Some(root) => trace_of(root, text, file, traces)?,
        None => None,
    };
    let scenario = parse(text, file, trace.as_ref()).map_err(|e| ApiError::scenario(&e))?;
    // The simulator's own checks, worded as `cclab run` words them.
    if let Err(e) = cclab_sim::validate(&scenario.config) {
        return Err(ApiError::sim(&e, Some(file)));
    }
    // The lab's limits before the time series' size, which follows from them: a million
    // flows are refused as more than a live run takes, not as too many rows.
    limits.check(&scenario, file)?;
    // A saved run writes its time series: refused now, not when it is saved.
    scenario.check_series_size().map_err(|e| ApiError::scenario(&e))?;
    Ok(Checked { scenario, toml: text.to_string(), file: file.to_string(), trace })
}

/// Builds the simulation of a checked scenario.
pub fn simulation(c: &Checked) -> ApiResult<Simulation> {
    Simulation::new(c.scenario.config.clone()).map_err(|e| ApiError::sim(&e, Some(&c.file)))
}

/// The lab runs one scenario; the scenario parser's own refusal of a `[sweep]` speaks of
/// the command line, so the lab says it in its own terms.
fn refuse_sweep(root: &Node, text: &str, file: &str) -> ApiResult<()> {
    let Some(node) = root.get("sweep") else { return Ok(()) };
    Err(ApiError::scenario(&ScenarioError {
        file: file.to_string(),
        line: node.span.as_ref().map(|s| doc::line_of(text, s.start)),
        from_override: false,
        field: "sweep".to_string(),
        value: None,
        message: "the lab runs one scenario at a time; a [sweep] runs from the command line (`cclab run FILE`) or the Python package. To run one of its points here, remove [sweep] and set the swept fields to that point's values".to_string(),
    }))
}

/// The trace a scenario names, read, refusing anything but a known bare name.
fn trace_of(root: &Node, text: &str, file: &str, traces: &Traces) -> ApiResult<Option<KeptTrace>> {
    let Some(node) = root.get("bottleneck").and_then(|b| b.get("trace")) else { return Ok(None) };
    let Val::Str(name) = &node.val else { return Ok(None) };
    let refuse = |message: String| {
        ApiError::scenario(&ScenarioError {
            file: file.to_string(),
            line: node.span.as_ref().map(|s| doc::line_of(text, s.start)),
            from_override: false,
            field: "bottleneck.trace".to_string(),
            value: Some(node.show()),
            message,
        })
    };
    if let Some(path) = traces.find(name) {
        match std::fs::read_to_string(path) {
            Ok(text) => return Ok(Some(KeptTrace { name: name.clone(), text })),
            // Deleted since it was found: as unknown as it now is.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // The server's own path is left out of the message.
            Err(e) => return Err(refuse(format!("cannot read this trace: {e}"))),
        }
    }
    let names = traces.names();
    let known = if names.is_empty() { "none".to_string() } else { names.join(", ") };
    Err(refuse(if name.contains('/') {
        format!("over HTTP a trace is named by its file name, from the ready trace folders or uploaded through the page (never a path); known traces: {known}")
    } else {
        format!("no such trace; known traces (the ready trace folders and those uploaded through the page): {known}")
    }))
}
