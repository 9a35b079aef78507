//! `cclab algorithms`: every built-in algorithm with its parameters (defaults, ranges,
//! units) and source, from `cclab_cc::ALGORITHMS`.

use cclab_cc::{ParamKind, ALGORITHMS};
use cclab_sim::TCP_PARAMS;

#[derive(clap::Args)]
pub struct Args {
    /// Show only this algorithm.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(ALGORITHMS.iter().map(|a| a.name)))]
    pub name: Option<String>,
}

fn value(kind: ParamKind, v: f64) -> String {
    match kind {
        ParamKind::Bool => (v != 0.0).to_string(),
        _ => v.to_string(),
    }
}

pub fn main(args: Args) -> Result<(), String> {
    if let Some(n) = &args.name {
        cclab_cc::registry::info_of(n).map_err(|e| e.to_string())?;
    }
    let mut out = String::new();
    for a in ALGORITHMS.iter().filter(|a| args.name.as_deref().is_none_or(|n| n == a.name)) {
        out.push_str(&format!("{}\n  {}\n  source: {}\n", a.name, a.summary, a.source));
        if a.params.is_empty() {
            out.push_str("  parameters: none\n");
        } else {
            out.push_str("  parameters:\n");
            for p in a.params {
                let unit = if p.unit.is_empty() { String::new() } else { format!(" {}", p.unit) };
                out.push_str(&format!(
                    "    {:<22} default {}{unit}; allowed: {}\n      {}\n",
                    p.name,
                    value(p.kind, p.default),
                    p.allowed(),
                    p.doc
                ));
            }
        }
        out.push('\n');
    }
    let keys = cclab_scenario::TCP_SETTING_KEYS;
    let (last, rest) = keys.split_last().expect("TCP settings");
    out.push_str(&format!(
        "Every flow also takes the TCP-level settings {} and {last} (README, \"Scenario files\");\n{} can also be changed on a running flow with [[changes]].\n",
        rest.join(", "),
        TCP_PARAMS.join(" and ")
    ));
    crate::format::out(&out);
    Ok(())
}
