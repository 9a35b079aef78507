//! What the page can choose from: the algorithms with their parameter descriptions, the
//! ready scenarios of the repository, and the traces a scenario sent over HTTP may name.
//!
//! A scenario that arrives over HTTP names its trace by file name only, looked up here in
//! the ready trace folders and then among traces uploaded through the page; it never
//! names a path. (A trace that fails to parse has its first line quoted in the error, so
//! an arbitrary path would let any web client read any file the server can.)

use cclab_cc::tcp_limits::{INITCWND, RTO_MIN_MS};
use cclab_cc::{ParamKind, ParamSpec, ALGORITHMS};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The TCP-level parameters a running flow accepts besides its algorithm's
/// (`cclab_sim::TCP_PARAMS`), with their ranges from the one table of them
/// (`cclab_cc::tcp_limits`) and Linux's defaults (tests keep both in step with the
/// simulator).
pub const TCP_PARAM_SPECS: [ParamSpec; 2] = [
    ParamSpec::int(
        RTO_MIN_MS.name,
        200,
        RTO_MIN_MS.min,
        RTO_MIN_MS.max,
        RTO_MIN_MS.unit,
        "minimum retransmission timeout (ip route rto_min)",
    ),
    ParamSpec::int(
        INITCWND.name,
        10,
        INITCWND.min,
        INITCWND.max,
        INITCWND.unit,
        "initial congestion window, used at start and after idle (ip route initcwnd)",
    ),
];

fn kind_name(k: ParamKind) -> &'static str {
    match k {
        ParamKind::Float => "float",
        ParamKind::Int => "int",
        ParamKind::Bool => "bool",
    }
}

pub fn param_json(p: &ParamSpec) -> Value {
    json!({
        "name": p.name,
        "kind": kind_name(p.kind),
        "default": p.default,
        "min": p.min,
        "min_exclusive": p.min_exclusive,
        "max": p.max,
        "unit": p.unit,
        "allowed": p.allowed(),
        "doc": p.doc,
    })
}

/// `GET /api/algorithms`: every algorithm as `cclab algorithms` lists it, plus the TCP
/// parameters every flow takes.
pub fn algorithms_json() -> Value {
    let algorithms: Vec<Value> = ALGORITHMS
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "summary": a.summary,
                "source": a.source,
                "params": a.params.iter().map(param_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "algorithms": algorithms,
        "tcp_params": TCP_PARAM_SPECS.iter().map(param_json).collect::<Vec<_>>(),
    })
}

/// The kind of a live-changeable parameter of algorithm `cc` (None when unknown).
pub fn param_kind(cc: &str, name: &str) -> Option<ParamKind> {
    if let Some(p) = TCP_PARAM_SPECS.iter().find(|p| p.name == name) {
        return Some(p.kind);
    }
    let info = ALGORITHMS.iter().find(|a| a.name == cc)?;
    info.params.iter().find(|p| p.name == name).map(|p| p.kind)
}

/// Refuses true/false for a parameter of `cc` that is a number, not a switch (a scenario
/// file refuses it too). Unknown names pass, for the simulator to refuse by name.
pub fn refuse_switch_value(cc: &str, name: &str, on: bool) -> Result<(), String> {
    match param_kind(cc, name) {
        Some(ParamKind::Bool) | None => Ok(()),
        Some(_) => {
            Err(format!("{on}: {name} is a number, not a switch; true/false only for a switch"))
        }
    }
}

/// A parameter's value as the API shows it: a switch as true or false, any other as its
/// number. (Inside, every value is an f64 and a switch is 0 or 1, as `ParamSpec` has it.)
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ShownValue {
    Switch(bool),
    Number(f64),
}

impl ShownValue {
    /// `value` of parameter `name` of a flow running `cc`.
    pub fn of(cc: &str, name: &str, value: f64) -> ShownValue {
        match param_kind(cc, name) {
            Some(ParamKind::Bool) => ShownValue::Switch(value != 0.0),
            _ => ShownValue::Number(value),
        }
    }

    pub fn number(self) -> f64 {
        match self {
            ShownValue::Switch(on) => on as u8 as f64,
            ShownValue::Number(v) => v,
        }
    }
}

/// `folder` found in the working folder, the binary's folder, or any folder above
/// them (the repository's `scenarios`, or `shared/traces` beside the repository), the
/// way `cclab emu bench` finds its default trace.
pub fn find_beside(folder: &str) -> Option<PathBuf> {
    let mut bases: Vec<PathBuf> = vec![];
    if let Ok(cwd) = std::env::current_dir() {
        bases.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Ok(exe) = std::env::current_exe() {
        bases.extend(exe.ancestors().map(Path::to_path_buf));
    }
    bases.iter().map(|b| b.join(folder)).find(|p| p.is_dir())
}

/// Largest ready scenario file listed.
const MAX_READY_BYTES: u64 = 64 << 10;
/// Sub-folders of `scenarios/` whose files are listed, with `""` for the folder itself.
const READY_GROUPS: [&str; 4] = ["", "seeds", "fidelity", "small"];

/// One ready scenario: `id` is its path under `scenarios/` (`seeds/004-tuner-vs-cubic.toml`).
pub struct Ready {
    pub id: String,
    pub group: &'static str,
    pub description: String,
    pub toml: String,
}

/// Whether a scenario file has a `[sweep]` table.
fn is_sweep(text: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("sweep"))
}

/// The ready scenarios, sorted by id. Their `trace = "../traces/x.trace"` lines are
/// rewritten to the bare file name, the form HTTP accepts.
pub fn ready_scenarios(dir: &Path) -> Vec<Ready> {
    let mut out = Vec::new();
    for group in READY_GROUPS {
        let Ok(entries) = std::fs::read_dir(dir.join(group)) else { continue };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .filter(|p| {
                std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_READY_BYTES)
            })
            .collect();
        files.sort();
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
            // A sweep is many runs (`cclab run` or `cclab reproduce` run it) and an
            // `.expected.toml` holds a paper's values, not a scenario: neither is one run
            // the lab can start.
            if file.ends_with(".expected.toml") || is_sweep(&text) {
                continue;
            }
            let id = if group.is_empty() { file.to_string() } else { format!("{group}/{file}") };
            out.push(Ready {
                id,
                group,
                description: leading_comment(&text),
                toml: bare_traces(&text),
            });
        }
    }
    out
}

/// The comment lines a scenario file opens with, joined (its description).
fn leading_comment(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| l.trim_start().starts_with('#'))
        .map(|l| l.trim_start().trim_start_matches('#').trim())
        .collect();
    lines.join(" ")
}

/// Rewrites `trace = "dir/x.trace"` lines to `trace = "x.trace"`.
fn bare_traces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let rewritten = t.strip_prefix("trace").and_then(|rest| {
            let value = rest.trim_start().strip_prefix('=')?.trim();
            let path = value.strip_prefix('"')?.split('"').next()?;
            let name = Path::new(path).file_name()?.to_str()?;
            let tail = &value[path.len() + 2..];
            let indent = &line[..line.len() - t.len()];
            let nl = if line.ends_with('\n') { "\n" } else { "" };
            Some(format!("{indent}trace = \"{name}\"{}{nl}", tail.trim_end_matches('\n')))
        });
        out.push_str(rewritten.as_deref().unwrap_or(line));
    }
    out
}

/// Where traces come from, in lookup order: the ready folders, then the uploads.
#[derive(Clone)]
pub struct Traces {
    pub ready: Vec<PathBuf>,
    pub uploads: PathBuf,
}

/// A trace file name as HTTP accepts it: a bare name of letters, digits, '.', '_', '-',
/// not a Markdown file (the trace folders' notes: never listed, found nor uploaded).
pub fn valid_trace_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && !name.ends_with(".md")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

impl Traces {
    fn folders(&self) -> impl Iterator<Item = (&Path, &'static str)> {
        self.ready
            .iter()
            .map(|p| (p.as_path(), "ready"))
            .chain(std::iter::once((self.uploads.as_path(), "uploaded")))
    }

    /// The file of trace `name`, if `name` is a bare name found in one of the folders.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        if !valid_trace_name(name) {
            return None;
        }
        self.folders().map(|(d, _)| d.join(name)).find(|p| p.is_file())
    }

    /// Every trace by name (the first folder holding a name wins), sorted.
    pub fn list(&self) -> Vec<(String, &'static str, u64)> {
        let mut out: Vec<(String, &'static str, u64)> = Vec::new();
        for (dir, origin) in self.folders() {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for e in entries.flatten() {
                let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
                let Ok(meta) = e.metadata() else { continue };
                if valid_trace_name(&name)
                    && meta.is_file()
                    && !out.iter().any(|(n, _, _)| *n == name)
                {
                    out.push((name, origin, meta.len()));
                }
            }
        }
        out.sort();
        out
    }

    pub fn names(&self) -> Vec<String> {
        self.list().into_iter().map(|(n, _, _)| n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_become_bare_names() {
        let t = "[bottleneck]\ntrace = \"../traces/5.65mbps.trace\"  # the link\ndelay = \"1ms\"\n";
        assert_eq!(
            bare_traces(t),
            "[bottleneck]\ntrace = \"5.65mbps.trace\"  # the link\ndelay = \"1ms\"\n"
        );
        assert_eq!(bare_traces("rate = \"1Mbps\""), "rate = \"1Mbps\"");
    }

    /// The TCP parameters described here take exactly the values the simulator takes.
    #[test]
    fn tcp_parameter_ranges_match_the_simulator() {
        let text = "duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"10ms\"\n";
        let scn = cclab_scenario::parse_str(text, "t.toml", None, "t", &[]).unwrap();
        let mut sim = cclab_sim::Simulation::new(scn.config).unwrap();
        assert_eq!(TCP_PARAM_SPECS.map(|p| p.name), cclab_sim::TCP_PARAMS);
        let tcp = cclab_sim::TcpConfig::default();
        assert_eq!(TCP_PARAM_SPECS[0].default, tcp.rto_min.as_millis_f64());
        assert_eq!(TCP_PARAM_SPECS[1].default, f64::from(tcp.init_cwnd));
        for p in TCP_PARAM_SPECS {
            for ok in [p.min, p.max, p.default] {
                assert!(sim.set_param(0, p.name, ok).is_ok(), "{} = {ok}", p.name);
            }
            for bad in [p.min - 1.0, p.max + 1.0, p.min + 0.5] {
                assert!(sim.set_param(0, p.name, bad).is_err(), "{} = {bad}", p.name);
            }
        }
    }

    #[test]
    fn trace_names_are_bare() {
        assert!(valid_trace_name("12mbps.trace"));
        for bad in ["", "../x", "/etc/passwd", ".hidden", "a/b", "a b", "notes.md"] {
            assert!(!valid_trace_name(bad), "{bad}");
        }
    }
}
