//! Scenario files for cclab.
//!
//! A scenario is a TOML file (schema in the README and in [`schema`]) describing a
//! bottleneck, the flows through it, optional UDP cross traffic and scheduled parameter
//! changes. [`load_file`] and [`parse_str`] read one, apply `--set FIELD=VALUE`
//! overrides to the document, validate everything before a run starts and return the
//! simulator's [`cclab_sim::SimConfig`]. Any problem is one [`ScenarioError`] naming the
//! file, the line, the field path, the bad value and what is allowed; nothing here panics
//! on user input (a mutation fuzz test checks that).
//!
//! [`metrics`] holds the fairness and summary statistics result files use.
//!
//! Not here: running simulations (crates/sim), writing result files (crates/cli).

mod arrivals;
pub mod doc;
mod error;
mod fields;
pub mod metrics;
pub mod metrics_spec;
pub mod numbering;
pub mod schema;
pub mod sweep;

pub use cclab_sim::MAX_FLOWS;
pub use error::ScenarioError;
pub use schema::{Scenario, Transport, MAX_SEED, TCP_SETTING_KEYS};

use std::path::{Path, PathBuf};

/// Largest scenario file read (a scenario is a few hundred bytes; this stops a mistaken
/// path to a multi-gigabyte file from being read into memory).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// The built-in default scenario (`cclab run` without a file). To change what the
/// default compares, edit `scenarios/default.toml`.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");
/// How errors in the built-in scenario name their file.
pub const DEFAULT_FILE_NAME: &str = "<built-in default scenario>";

/// Reads and validates a scenario file; `overrides` are `FIELD=VALUE` strings applied in
/// order before validation. Relative trace paths are resolved against the file's folder.
/// A file with a `[sweep]` table is refused here (see [`load_file_or_sweep`]).
pub fn load_file(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let src = read_source(path)?;
    parse_str(&src.text, &src.file, src.dir.as_deref(), &src.stem, overrides)
}

/// Like [`load_file`], but a file with a `[sweep]` table gives the sweep's plan: every
/// point, validated, before anything runs.
pub fn load_file_or_sweep(path: &Path, overrides: &[String]) -> Result<Loaded, ScenarioError> {
    let src = read_source(path)?;
    parse_str_or_sweep(&src.text, &src.file, src.dir.as_deref(), &src.stem, overrides)
}

/// [`parse_str`] for text that may hold a `[sweep]` (see [`load_file_or_sweep`]).
pub fn parse_str_or_sweep(
    text: &str,
    file: &str,
    base_dir: Option<&Path>,
    default_name: &str,
    overrides: &[String],
) -> Result<Loaded, ScenarioError> {
    let ctx = schema::Ctx { file, text, base_dir, default_name, trace_text: None };
    let mut root = parse_doc(&ctx, overrides)?;
    match sweep::take(&mut root) {
        Some(table) => sweep::plan(&ctx, root, table).map(Loaded::Sweep),
        None => schema::build(&ctx, &root).map(|s| Loaded::Single(Box::new(s))),
    }
}

/// What a scenario file holds: one scenario, or a sweep over many.
#[derive(Debug)]
pub enum Loaded {
    Single(Box<Scenario>),
    Sweep(sweep::Plan),
}

/// A scenario file's text with what errors and relative paths need.
pub struct Source {
    /// The path as the user named it (errors name the file so).
    pub file: String,
    pub text: String,
    /// Where relative trace paths are resolved.
    pub dir: Option<PathBuf>,
    /// The name when the file has none: the file's stem, made safe for a folder name.
    pub stem: String,
}

/// Reads a scenario file (at most [`MAX_FILE_BYTES`], UTF-8), for [`load_file`] and the
/// Python package, which keeps the text and validates it again after each change.
pub fn read_source(path: &Path) -> Result<Source, ScenarioError> {
    let file = path.display().to_string();
    let fail = |message: String| ScenarioError {
        file: file.clone(),
        line: None,
        from_override: false,
        field: String::new(),
        value: None,
        message,
    };
    let meta =
        std::fs::metadata(path).map_err(|e| fail(format!("cannot read the scenario file: {e}")))?;
    if !meta.is_file() {
        return Err(fail("is not a file; give the path of a .toml scenario".to_string()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(format!(
            "the file is {} bytes; a scenario file may be at most {MAX_FILE_BYTES} bytes",
            meta.len()
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| fail(format!("cannot read the scenario file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        fail(format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
    let stem: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
        .collect();
    let stem = stem.trim_start_matches('.');
    let stem = if stem.is_empty() { "scenario" } else { stem }.to_string();
    let dir = path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            p.to_path_buf()
        }
    });
    Ok(Source { file, text, dir, stem })
}

/// The built-in default scenario, with overrides.
pub fn load_default(overrides: &[String]) -> Result<Scenario, ScenarioError> {
    parse_str(DEFAULT_SCENARIO, DEFAULT_FILE_NAME, None, "default", overrides)
}

/// Parses and validates scenario text. `file` names it in errors, `base_dir` resolves
/// relative trace paths, `default_name` is used when the file has no `name`.
pub fn parse_str(
    text: &str,
    file: &str,
    base_dir: Option<&Path>,
    default_name: &str,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    let ctx = schema::Ctx { file, text, base_dir, default_name, trace_text: None };
    let root = parse_doc(&ctx, overrides)?;
    schema::build(&ctx, &root)
}

/// [`parse_str`] for a scenario whose trace file the caller has read: `trace_text` is
/// the text of the file its `bottleneck.trace` names (ignored if it names none). The web
/// lab reads its runs so: the trace a run keeps is then exactly the one it runs on, and
/// deleting or replacing the file later changes neither the run nor its save.
pub fn parse_str_with_trace(
    text: &str,
    file: &str,
    trace_text: &str,
    default_name: &str,
) -> Result<Scenario, ScenarioError> {
    let ctx =
        schema::Ctx { file, text, base_dir: None, default_name, trace_text: Some(trace_text) };
    let root = parse_doc(&ctx, &[])?;
    schema::build(&ctx, &root)
}

/// The document with the overrides applied, not yet validated.
fn parse_doc(ctx: &schema::Ctx, overrides: &[String]) -> Result<doc::Node, ScenarioError> {
    let mut root = doc::parse(ctx.text).map_err(|(msg, span)| {
        let span = span.or(Some(0..0));
        // The line as written names the key and value the parser could not read.
        let at = span.as_ref().map_or(0, |s| s.start.min(ctx.text.len()));
        let start = ctx.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = ctx.text[start..].lines().next().unwrap_or("").trim();
        let shown = match line.chars().count() {
            0 => String::new(),
            1..=80 => format!(" (the line reads: {line})"),
            _ => format!(" (the line reads: {}...)", line.chars().take(77).collect::<String>()),
        };
        ctx.err(&span, "", None, format!("TOML syntax error: {msg}{shown}"))
    })?;
    for o in overrides {
        apply_override(&mut root, o).map_err(|(field, message)| ScenarioError {
            file: ctx.file.to_string(),
            line: None,
            from_override: true,
            value: split_override(o).filter(|_| field != "--set").map(|(_, v)| v.to_string()),
            field,
            message,
        })?;
    }
    sweep::drop_if_set_empty(&mut root);
    Ok(root)
}

/// `FIELD=VALUE` split at the first `=` outside the quotes of a quoted key
/// (`sweep."a=b"=[1]`).
pub fn split_override(spec: &str) -> Option<(&str, &str)> {
    let mut quote = None;
    for (i, c) in spec.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '=') => return Some((&spec[..i], &spec[i + 1..])),
            _ => {}
        }
    }
    None
}

/// Applies one `FIELD=VALUE` override; the error is (field, message).
fn apply_override(root: &mut doc::Node, spec: &str) -> Result<(), (String, String)> {
    let Some((field, value)) = split_override(spec) else {
        return Err((
            spec.to_string(),
            format!("--set expects FIELD=VALUE (e.g. bottleneck.rate=20Mbps), got \"{spec}\""),
        ));
    };
    let field = field.trim();
    if field.is_empty() {
        return Err((
            "--set".to_string(),
            format!("\"{spec}\" names no field before '='; write FIELD=VALUE (e.g. bottleneck.rate=20Mbps)"),
        ));
    }
    let path = doc::parse_path(field).map_err(|m| (field.to_string(), m))?;
    let value = doc::parse_override_value(value.trim()).map_err(|m| (field.to_string(), m))?;
    doc::set_path(root, &path, value, None).map_err(|m| (field.to_string(), m))
}
