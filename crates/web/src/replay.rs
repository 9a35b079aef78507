//! The scenario a saved run writes: the text the client sent, with every live change
//! appended as a `[[changes]]` entry at the instant where a re-run applies it exactly as
//! the live run did (see [`crate::live`]), so `cclab run` on the saved file gives the same
//! summary.json bytes.

use crate::catalog::param_kind;
use crate::error::{ApiError, ApiResult};
use crate::intake::Checked;
use crate::live::LiveChange;
use cclab_cc::ParamKind;
use cclab_scenario::Scenario;

/// A duration in the largest unit that keeps it exact ("30s", "1500ms", "5000000001ns").
pub fn exact_duration(ns: u64) -> String {
    for (unit, size) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.is_multiple_of(size) {
            return format!("{}{unit}", ns / size);
        }
    }
    format!("{ns}ns")
}

/// A parameter value as a scenario file writes it: booleans as true/false, whole numbers
/// as integers, `rto_min` as a duration, other numbers in Rust's shortest form that reads
/// back to the same f64.
fn value_text(kind: Option<ParamKind>, name: &str, v: f64) -> String {
    match (kind, name) {
        (_, "rto_min") => format!("\"{}ms\"", v as u64),
        (Some(ParamKind::Bool), _) => (v != 0.0).to_string(),
        (Some(ParamKind::Int), _) => format!("{}", v as i64),
        _ => format!("{v:?}"),
    }
}

/// The `[[changes]]` entries for the live changes, as TOML text.
fn changes_text(c: &Checked, changes: &[LiveChange]) -> String {
    let mut out = String::from(
        "\n# Changes made live in cclab serve. Each applies one nanosecond after the instant it\n\
         # was made at, after every event of that instant, so this file replays the run exactly.\n",
    );
    for ch in changes {
        out.push_str(&change_entry(&c.scenario, ch));
    }
    out
}

/// One live change of a run of `scenario` as a `[[changes]]` entry, its flow by its
/// number in the file (also used by the Python package's `Simulation.replay_scenario`).
pub fn change_entry(scenario: &Scenario, ch: &LiveChange) -> String {
    let cc = &scenario.config.flows[ch.flow].cc;
    let value = value_text(param_kind(cc, &ch.name), &ch.name, ch.value.number());
    format!(
        "[[changes]]\nat = \"{}\"\nflow = {}\nset = {{ {} = {value} }}\n",
        exact_duration(ch.at_ns),
        scenario.numbers.file_index(ch.flow),
        ch.name
    )
}

/// The scenario text of a run with its live changes, checked to read back with every
/// change in place.
pub fn scenario_with_changes(c: &Checked, changes: &[LiveChange]) -> ApiResult<String> {
    if changes.is_empty() {
        return Ok(c.toml.clone());
    }
    let added = changes_text(c, changes);
    let mut text = c.toml.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&added);
    if toml::from_str::<toml::Table>(&text).is_err() {
        // The client's file already has `changes` in another form (an inline array), to
        // which tables cannot be appended: write the document anew with them added.
        text = merged(&c.toml, &added)?;
    }
    let read = crate::intake::parse(&text, &c.file, c.trace.as_ref())
        .map_err(|e| ApiError::internal(format!("the saved scenario does not read back: {e}")))?;
    let expected = c.scenario.config.changes.len() + changes.len();
    if read.config.changes.len() != expected {
        return Err(ApiError::internal(format!(
            "the saved scenario reads back with {} changes instead of {expected}",
            read.config.changes.len()
        )));
    }
    Ok(text)
}

/// The document `doc` with the `[[changes]]` entries of `added` appended to its own
/// `changes`, written anew (values kept, comments and layout not).
fn merged(doc: &str, added: &str) -> ApiResult<String> {
    let bad = |e: &dyn std::fmt::Display| ApiError::internal(format!("saving the changes: {e}"));
    let mut doc: toml::Table = toml::from_str(doc).map_err(|e| bad(&e))?;
    let added: toml::Table = toml::from_str(added).map_err(|e| bad(&e))?;
    let new = added.get("changes").and_then(|v| v.as_array()).cloned().unwrap_or_default();
    match doc.entry("changes").or_insert_with(|| toml::Value::Array(vec![])) {
        toml::Value::Array(a) => a.extend(new),
        other => return Err(bad(&format!("`changes` is {}, not a list", other.type_str()))),
    }
    toml::to_string(&doc).map_err(|e| bad(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ShownValue;

    #[test]
    fn durations_stay_exact() {
        assert_eq!(exact_duration(30_000_000_000), "30s");
        assert_eq!(exact_duration(1_500_000_000), "1500ms");
        assert_eq!(exact_duration(5_000_000_001), "5000000001ns");
        assert_eq!(exact_duration(0), "0s");
    }

    #[test]
    fn values_read_back_as_written() {
        assert_eq!(value_text(Some(ParamKind::Float), "beta", 0.3), "0.3");
        assert_eq!(value_text(Some(ParamKind::Float), "alpha", 1.0), "1.0");
        assert_eq!(value_text(Some(ParamKind::Bool), "fast_convergence", 0.0), "false");
        assert_eq!(value_text(Some(ParamKind::Int), "initcwnd", 4.0), "4");
        assert_eq!(value_text(Some(ParamKind::Int), "rto_min", 50.0), "\"50ms\"");
    }

    /// A client's file with its own `changes` as an inline array once made saving fail
    /// with a 500: tables cannot be appended to it.
    #[test]
    fn live_changes_join_a_scenarios_inline_changes() {
        let text = "duration = \"10s\"\nchanges = [{ at = \"2s\", flow = 0, set = { beta = 0.5 } }]\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n[[flows]]\ncc = \"tuner\"\nrtt = \"20ms\"\n";
        let scenario = cclab_scenario::parse_str(text, "s.toml", None, "s", &[]).unwrap();
        assert_eq!(scenario.config.changes.len(), 1);
        let checked = Checked { scenario, toml: text.into(), file: "s.toml".into(), trace: None };
        let live = LiveChange {
            at_ns: 4_000_000_001,
            flow: 0,
            name: "beta".into(),
            value: ShownValue::Number(0.3),
        };
        let saved = scenario_with_changes(&checked, &[live]).unwrap();
        let read = cclab_scenario::parse_str(&saved, "s.toml", None, "s", &[]).unwrap();
        assert_eq!(read.config.changes.len(), 2, "{saved}");
        assert_eq!(read.config.duration, checked.scenario.config.duration);
    }

    /// With an entry switched off, a live change of the run's flow 0 is written with the
    /// flow's number in the file, and reads back onto the same flow.
    #[test]
    fn a_change_is_saved_under_the_flows_number_in_the_file() {
        let text = "duration = \"10s\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"20ms\"\nenabled = false\n[[flows]]\ncc = \"tuner\"\nrtt = \"20ms\"\n";
        let scenario = cclab_scenario::parse_str(text, "s.toml", None, "s", &[]).unwrap();
        let checked = Checked { scenario, toml: text.into(), file: "s.toml".into(), trace: None };
        let live = LiveChange {
            at_ns: 1_000_000_001,
            flow: 0,
            name: "beta".into(),
            value: ShownValue::Number(0.3),
        };
        let saved = scenario_with_changes(&checked, &[live]).unwrap();
        assert!(saved.contains("flow = 1\n"), "{saved}");
        let read = cclab_scenario::parse_str(&saved, "s.toml", None, "s", &[]).unwrap();
        assert_eq!(
            (read.config.changes[0].flow, read.config.changes[0].set.clone()),
            (0, vec![("beta".to_string(), 0.3)])
        );
    }
}
