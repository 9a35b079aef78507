//! The scenario's optional `[metrics]` table: what the summary measures beyond its
//! defaults.
//!
//! ```toml
//! [metrics]
//! window = ["40s", "80s"]   # also report each flow's goodput over this time window
//! reference = "cubic"       # throughput ratios against this group of flows (or a flow index)
//! ```
//!
//! A *group* is the flows of one `[[flows]]` name, or of one algorithm for flows
//! without a name (see [`crate::metrics::group_of`]).

use crate::doc::{Node, Val};
use crate::numbering::FlowNumbers;
use crate::schema::Ctx;
use crate::ScenarioError;
use cclab_sim::FlowConfig;
use cclab_units::{parse_duration, Duration};

/// What `[metrics]` asks for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsSpec {
    /// Goodput over `[start, end)` of the run, per flow.
    pub window: Option<(Duration, Duration)>,
    /// The flows that throughput ratios are taken against.
    pub reference: Option<Reference>,
    /// Each flow's group, in run order ([`crate::metrics::group_of`] of its name and its
    /// number in the file).
    pub groups: Vec<String>,
}

/// A reference for throughput ratios.
#[derive(Clone, Debug, PartialEq)]
pub enum Reference {
    /// A group: a flow name (as written in `[[flows]]`, without `#index`) or an
    /// algorithm name for flows without a name.
    Group(String),
    /// One flow, by index after `count` is expanded.
    Flow(usize),
}

const FIELDS: &[&str] = &["window", "reference"];

/// Reads `[metrics]` (absent: the defaults).
pub(crate) fn read(
    ctx: &Ctx,
    node: Option<&Node>,
    times: (Duration, Duration),
    flows: &[FlowConfig],
    numbers: &FlowNumbers,
) -> Result<MetricsSpec, ScenarioError> {
    let groups: Vec<String> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| crate::metrics::group_of(f, numbers.file_index(i)))
        .collect();
    let Some(node) = node else { return Ok(MetricsSpec { groups, ..MetricsSpec::default() }) };
    let Val::Table(entries) = &node.val else {
        return Err(ctx.err(
            &node.span,
            "metrics",
            Some(node.show()),
            format!(
                "expected a table ([metrics] with {}), found {}",
                FIELDS.join(", "),
                node.val.kind()
            ),
        ));
    };
    let mut spec = MetricsSpec { groups, ..MetricsSpec::default() };
    for (key, kspan, value) in entries {
        match key.as_str() {
            "window" => spec.window = Some(window(ctx, value, times)?),
            "reference" => spec.reference = Some(reference(ctx, value, &spec.groups, numbers)?),
            _ => {
                return Err(ctx.err(
                    kspan,
                    &format!("metrics.{key}"),
                    None,
                    format!(
                        "unknown field \"{key}\" in metrics; allowed fields: {}",
                        FIELDS.join(", ")
                    ),
                ))
            }
        }
    }
    Ok(spec)
}

/// The window's goodput is read from the flows' samples at its edges, so each edge must
/// be a sampling instant (a multiple of `sample_interval`), or the end the run's end,
/// where the final counts are read: an edge between samples would be read at the sample
/// before it, over the window's length, and come out too high or too low.
fn window(
    ctx: &Ctx,
    n: &Node,
    (duration, sample_interval): (Duration, Duration),
) -> Result<(Duration, Duration), ScenarioError> {
    let bad = |m: String| ctx.err(&n.span, "metrics.window", Some(n.show()), m);
    // The example lies inside this run: its second half.
    let half = Duration(duration.as_nanos() / 2);
    let allowed = format!("two times [\"start\", \"end\"] with start < end <= duration = {duration}, e.g. [\"{half}\", \"{duration}\"]");
    let Val::Array(items) = &n.val else { return Err(bad(format!("expected {allowed}"))) };
    let times: Vec<Duration> = items
        .iter()
        .map(|i| match &i.val {
            Val::Str(s) => parse_duration(s).ok(),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or_else(|| bad(format!("expected {allowed}")))?;
    let (start, end) = match times[..] {
        [start, end] if start < end && end <= duration => (start, end),
        _ => return Err(bad(format!("allowed: {allowed}"))),
    };
    let step = sample_interval.as_nanos().max(1);
    let sampled = |t: Duration| t.as_nanos().is_multiple_of(step);
    if let Some(edge) = [start, end].into_iter().find(|&t| !sampled(t) && t != duration) {
        let down = Duration(start.as_nanos() / step * step);
        let up =
            Duration(end.as_nanos().div_ceil(step).saturating_mul(step).min(duration.as_nanos()));
        // Duration shows zero as "0us"; a window from the start reads better as "0s".
        let down = if down.as_nanos() == 0 { "0s".to_string() } else { down.to_string() };
        return Err(bad(format!(
            "{edge} is not a sampling instant (a multiple of sample_interval = {sample_interval}); \
             the window's goodput is read from the samples at its start and end, so both must \
             be sampling instants (or the end the duration), e.g. [\"{down}\", \"{up}\"]"
        )));
    }
    Ok((start, end))
}

fn reference(
    ctx: &Ctx,
    n: &Node,
    flow_groups: &[String],
    numbers: &FlowNumbers,
) -> Result<Reference, ScenarioError> {
    let mut groups: Vec<&str> = Vec::new();
    for g in flow_groups {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
    }
    let allowed = format!(
        "a group of flows ({}) or a flow index 0 to {}",
        groups.join(", "),
        numbers.len().saturating_sub(1)
    );
    let refuse = |why: String| ctx.err(&n.span, "metrics.reference", Some(n.show()), why);
    match &n.val {
        Val::Str(s) if groups.contains(&s.as_str()) => Ok(Reference::Group(s.clone())),
        Val::Int(i) if *i >= 0 && (*i as usize) < numbers.len() => {
            numbers.run_index(*i as usize).map(Reference::Flow).map_err(refuse)
        }
        _ => Err(refuse(format!("allowed: {allowed}"))),
    }
}
