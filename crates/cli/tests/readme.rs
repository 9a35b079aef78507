//! The README's scenario examples run as written: the annotated scenario of "Scenario
//! files", that scenario with the `[metrics]` example added, and the `[sweep]` example of
//! "Sweeps" on the built-in default scenario (one seed per point). A reader copies these
//! first, so an example the checks refuse is a bug.

mod common;
use common::*;

/// The body of the `n`-th (from 1) ```toml block after the heading `heading`.
fn toml_block(readme: &str, heading: &str, n: usize) -> String {
    let from = readme.find(heading).unwrap_or_else(|| panic!("no heading {heading:?}"));
    let mut rest = &readme[from..];
    for _ in 0..n {
        let start = rest.find("```toml\n").expect("a toml block") + "```toml\n".len();
        rest = &rest[start..];
    }
    rest[..rest.find("```").expect("the block's end")].to_string()
}

fn runs(dir: &TempDir, text: &str, extra: &[&str]) {
    dir.write("example.toml", text);
    let _ = std::fs::remove_dir_all(dir.path().join("out"));
    let mut args = vec!["run", "example.toml", "--out", "out"];
    args.extend_from_slice(extra);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "the README's example is refused:\n{}", stderr(&o));
}

#[test]
fn the_readmes_scenario_examples_run_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let scenario = toml_block(&readme, "## Scenario files", 1);
    let metrics = toml_block(&readme, "## Scenario files", 2);
    assert!(scenario.contains("[[flows]]") && metrics.starts_with("[metrics]"));
    let dir = TempDir::new("readme");
    runs(&dir, &scenario, &[]);
    runs(&dir, &format!("{scenario}\n{metrics}"), &[]);
    let summary = std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap();
    assert!(summary.contains("window_goodput_bps"), "the [metrics] window is measured");

    let sweep = toml_block(&readme, "### Sweeps", 1);
    assert!(sweep.starts_with("[sweep]"));
    let default = std::fs::read_to_string(repo().join("scenarios/default.toml")).unwrap();
    runs(&dir, &format!("{default}\n{sweep}"), &["--set", "sweep.seeds=1"]);
    assert!(dir.path().join("out/sweep.csv").is_file());
}
