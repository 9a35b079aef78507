//! `[sweep]`: expansion into points, tied keys, seeds, `--set` on a sweep, and every kind
//! of bad sweep input refused before anything runs with the file, line, key and value.

use cclab_scenario::sweep::Plan;
use cclab_scenario::{load_file_or_sweep, Loaded, ScenarioError};
use cclab_units::Duration;
use std::path::PathBuf;

const BASE: &str = r#"name = "sw"
duration = "2s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
[[flows]]
cc = "cubic"
rtt = "20ms"
[[flows]]
cc = "reno"
rtt = "20ms"
"#;

/// Writes `text` to a fresh file and loads it.
fn load(text: &str, overrides: &[&str]) -> Result<Loaded, ScenarioError> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "cclab-sweep-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scen.toml");
    std::fs::write(&path, text).unwrap();
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let r = load_file_or_sweep(&path, &o);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

fn plan(sweep: &str) -> Plan {
    match load(&format!("{BASE}{sweep}"), &[]) {
        Ok(Loaded::Sweep(p)) => p,
        Ok(Loaded::Single(_)) => panic!("no sweep found"),
        Err(e) => panic!("{e}"),
    }
}

fn error(sweep: &str) -> String {
    match load(&format!("{BASE}{sweep}"), &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted:\n{sweep}"),
    }
}

fn has_all(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "expected {p:?} in: {text}");
    }
}

#[test]
fn a_file_without_sweep_is_one_scenario() {
    assert!(matches!(load(BASE, &[]), Ok(Loaded::Single(_))));
}

#[test]
fn points_are_the_cartesian_product_first_key_slowest_with_seeds_innermost() {
    let p = plan(
        "[sweep]\n\"flows[0].cc\" = [\"cubic\", \"bic\", \"reno\"]\n\"bottleneck.loss\" = [0.0, 0.01]\nseeds = 3\n",
    );
    assert_eq!((p.points(), p.seeds, p.first_seed, p.runs.len()), (6, 3, 1, 18));
    let got: Vec<(usize, u64, String, String)> = p
        .runs
        .iter()
        .map(|r| {
            let v = p.values_of(r);
            (r.point, r.seed, v[0].1.to_string(), v[1].1.to_string())
        })
        .collect();
    assert_eq!(got[0], (0, 1, "cubic".into(), "0".into()));
    assert_eq!(got[2], (0, 3, "cubic".into(), "0".into()));
    assert_eq!(got[3], (1, 1, "cubic".into(), "0.01".into()));
    assert_eq!(got[17], (5, 3, "reno".into(), "0.01".into()));
    // The values reach the simulator's configuration, and so does each seed.
    let r = &p.runs[17];
    assert_eq!(r.scenario.config.flows[0].cc, "reno");
    assert_eq!(r.scenario.config.seed, 3);
    assert!(
        matches!(r.scenario.config.bottleneck.loss, cclab_sim::LossModel::Bernoulli { p } if p == 0.01)
    );
    // Runs are numbered in order, and each has its own fingerprint.
    assert!(p.runs.iter().enumerate().all(|(i, r)| r.index == i));
    let mut prints: Vec<&str> = p.runs.iter().map(|r| r.fingerprint.as_str()).collect();
    prints.sort();
    prints.dedup();
    assert_eq!(prints.len(), 18);
}

#[test]
fn seeds_count_up_from_the_scenario_seed_and_seed_overrides() {
    let Ok(Loaded::Sweep(p)) = load(&format!("seed = 40\n{BASE}[sweep]\nseeds = 2\n"), &[]) else {
        panic!()
    };
    assert_eq!(p.runs.iter().map(|r| r.scenario.config.seed).collect::<Vec<_>>(), [40, 41]);
    let Ok(Loaded::Sweep(p)) = load(&format!("{BASE}[sweep]\nseeds = 2\n"), &["seed=7"]) else {
        panic!()
    };
    assert_eq!(p.runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [7, 8]);
    // Without seeds, every point keeps the scenario's seed.
    let text = format!("seed = 5\n{BASE}[sweep]\n\"flows[0].cc\" = [\"cubic\", \"bic\"]\n");
    let Ok(Loaded::Sweep(p)) = load(&text, &[]) else { panic!() };
    assert!(p.runs.iter().all(|r| r.scenario.config.seed == 5));
}

/// A run's fingerprint (which says whether a folder already holds it) is the same
/// whether its seed was given by `seeds`, by the scenario or by default (student review,
/// 2026-12-06: `--set sweep.seeds=1` reran a whole sweep).
#[test]
fn a_fingerprint_does_not_depend_on_how_the_seed_was_given() {
    let prints = |text: &str, overrides: &[&str]| {
        let Ok(Loaded::Sweep(p)) = load(text, overrides) else { panic!("{text}") };
        p.runs.iter().map(|r| (r.seed, r.fingerprint.clone())).collect::<Vec<_>>()
    };
    let axis = "[sweep]\n\"flows[0].cc\" = [\"cubic\", \"bic\"]\n";
    let plain = prints(&format!("{BASE}{axis}"), &[]);
    assert_eq!(plain, prints(&format!("{BASE}{axis}"), &["sweep.seeds=1"]));
    assert_eq!(plain, prints(&format!("{BASE}{axis}seeds = 1\n"), &[]));
    let seed_5 = prints(&format!("seed = 5\n{BASE}{axis}"), &[]);
    assert_eq!(seed_5, prints(&format!("seed = 5\n{BASE}{axis}seeds = 1\n"), &[]));
    assert_eq!(seed_5, prints(&format!("{BASE}{axis}"), &["seed=5"]));
    // Another seed is another run.
    assert!(plain.iter().zip(&seed_5).all(|(a, b)| a.1 != b.1), "{plain:?} {seed_5:?}");
}

#[test]
fn tied_keys_move_their_fields_together() {
    let p = plan(
        "[sweep]\n\"flows[0].rtt, flows[1].rtt\" = [\"40ms\", [\"80ms\", \"160ms\"]]\n\"flows[1].cc\" = [\"reno\", \"cubic\"]\n",
    );
    assert_eq!(p.axes[0].fields, ["flows[0].rtt", "flows[1].rtt"]);
    assert_eq!(p.runs.len(), 4);
    let rtts: Vec<(u64, u64)> = p
        .runs
        .iter()
        .map(|r| {
            let f = &r.scenario.config.flows;
            (f[0].rtt.as_nanos() / 1_000_000, f[1].rtt.as_nanos() / 1_000_000)
        })
        .collect();
    assert_eq!(rtts, [(40, 40), (40, 40), (80, 160), (80, 160)]);
    assert_eq!(
        p.values_of(&p.runs[3]),
        [("flows[0].rtt", "80ms"), ("flows[1].rtt", "160ms"), ("flows[1].cc", "cubic")]
    );
}

#[test]
fn dotted_keys_without_quotes_and_sub_tables_name_the_same_fields() {
    let p = plan("[sweep]\nbottleneck.rate = [\"10Mbps\", \"20Mbps\"]\n");
    assert_eq!(p.axes[0].fields, ["bottleneck.rate"]);
    let p = plan("[sweep.bottleneck]\ndelay = [\"5ms\", \"8ms\"]\n");
    assert_eq!(p.axes[0].fields, ["bottleneck.delay"]);
    assert_eq!(p.runs[1].scenario.config.bottleneck.delay, Duration::from_millis(8));
}

#[test]
fn whole_tables_can_be_swept_values() {
    let p =
        plan("[sweep]\n\"bottleneck.qdisc\" = [\"droptail\", { kind = \"red\", max_p = 0.2 }]\n");
    assert!(matches!(p.runs[1].scenario.config.bottleneck.qdisc, cclab_sim::Qdisc::Red(_)));
    assert_eq!(p.axes[0].labels[1][0], "{ kind = \"red\", max_p = 0.2 }");
}

#[test]
fn set_overrides_apply_before_the_sweep_and_can_change_it() {
    let text = format!("{BASE}[sweep]\n\"flows[0].cc\" = [\"cubic\", \"bic\"]\nseeds = 4\n");
    let Ok(Loaded::Sweep(p)) = load(&text, &["sweep.seeds=1", "duration=1s"]) else { panic!() };
    assert_eq!(p.runs.len(), 2);
    assert!(p.runs.iter().all(|r| r.scenario.config.duration == Duration::from_secs(1)));
    // A swept field wins over --set of the same field.
    let Ok(Loaded::Sweep(p)) = load(&text, &["flows[0].cc=reno"]) else { panic!() };
    assert_eq!(p.runs[0].scenario.config.flows[0].cc, "cubic");
    // A swept list is changed by its key, quoted as the file quotes it.
    let set = ["sweep.\"flows[0].cc\"=[\"htcp\", \"reno\", \"bic\"]", "sweep.seeds=1"];
    let Ok(Loaded::Sweep(p)) = load(&text, &set) else { panic!() };
    let ccs: Vec<&str> = p.runs.iter().map(|r| r.scenario.config.flows[0].cc.as_str()).collect();
    assert_eq!(ccs, ["htcp", "reno", "bic"]);
    // An empty sweep from the command line removes it: the file's scenario, once.
    let Ok(Loaded::Single(s)) = load(&text, &["sweep={}"]) else { panic!("not one scenario") };
    assert_eq!(s.config.flows[0].cc, "cubic");
}

#[test]
fn bad_keys_name_the_line_the_key_and_what_is_allowed() {
    // BASE has 11 lines; [sweep] is line 12 and its first key line 13.
    let e = error("[sweep]\n\"flows[x].rtt\" = [\"10ms\"]\n");
    has_all(&e, &["scen.toml:13:", "flows[x].rtt", "not a field path", "flows[0].cc"]);
    let e = error("[sweep]\n\"flows[5].rtt\" = [\"10ms\"]\n");
    has_all(&e, &["scen.toml:13:", "flows[5].rtt", "flows has 2 entries"]);
    let e = error("[sweep]\n\"flows[0].rttt\" = [\"10ms\"]\n");
    has_all(&e, &["scen.toml:13:", "flows[0].rttt", "unknown field \"rttt\"", "allowed fields"]);
    let e = error("[sweep]\n\"seed\" = [1, 2]\n");
    has_all(&e, &["scen.toml:13:", "seeds = N"]);
    let e = error(
        "[sweep]\n\"flows[0].rtt\" = [\"10ms\"]\n\"flows[0].rtt, flows[1].rtt\" = [\"20ms\"]\n",
    );
    has_all(&e, &["scen.toml:14:", "also set by sweep.\"flows[0].rtt\"", "tie them"]);
    let e = error("[sweep]\n\"flows[0]\" = [{ cc = \"reno\", rtt = \"20ms\" }]\n\"flows[0].cc\" = [\"bic\"]\n");
    has_all(&e, &["scen.toml:14:", "also set by"]);
}

#[test]
fn bad_values_name_the_line_the_field_the_value_and_the_point() {
    let e = error("[sweep]\n\"flows[0].rtt\" = [\"20ms\", \"4ms\"]\n");
    has_all(
        &e,
        &[
            "scen.toml:13:",
            "flows[0].rtt = \"4ms\"",
            "at least 2 x bottleneck.delay",
            "sweep point flows[0].rtt = \"4ms\"",
        ],
    );
    let e = error("[sweep]\n\"flows[0].cc\" = [\n  \"cubic\",\n  \"cubik\",\n]\n");
    has_all(
        &e,
        &["scen.toml:15:", "flows[0].cc = \"cubik\"", "unknown algorithm", "known algorithms"],
    );
    let e = error("[sweep]\n\"bottleneck.loss\" = [0.0, 1.5]\n");
    has_all(&e, &["scen.toml:13:", "bottleneck.loss = 1.5", "allowed"]);
    let e = error("[sweep]\n\"flows[0].rtt\" = \"20ms\"\n");
    has_all(
        &e,
        &["scen.toml:13:", "sweep.\"flows[0].rtt\" = \"20ms\"", "expected a list of the values"],
    );
    let e = error("[sweep]\n");
    has_all(&e, &["scen.toml:12:", "sweep = {}", "the table is empty", "remove [sweep]"]);
    let e = error("[sweep]\n\"flows[0].rtt\" = []\n");
    has_all(&e, &["scen.toml:13:", "an empty list gives no points"]);
    let e = error("[sweep]\n\"flows[0].cc\" = [\n  \"cubic\",\n  \"reno\",\n  \"cubic\",\n]\n");
    has_all(&e, &["scen.toml:16:", "sweep.\"flows[0].cc\" = \"cubic\": listed twice", "seeds = N"]);
    let e = error("[sweep]\n\"flows[0].rtt, flows[1].rtt\" = [[\"20ms\", \"30ms\", \"40ms\"]]\n");
    has_all(&e, &["scen.toml:13:", "2 tied fields take a tuple of 2 values", "this list has 3"]);
    for bad in ["0", "-1", "2.5", "\"3\"", "100000"] {
        let e = error(&format!("[sweep]\nseeds = {bad}\n"));
        has_all(&e, &["scen.toml:13:", "sweep.seeds", "1 to 10000"]);
    }
    let e = error("[sweep]\n\"flows[0].cc\" = [\"cubic\"]\nseeds = 2\n\"bottleneck.loss\" = [0.0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009]\n\"flows[1].rtt\" = [\"20ms\", \"21ms\", \"22ms\", \"23ms\", \"24ms\", \"25ms\", \"26ms\", \"27ms\", \"28ms\", \"29ms\"]\n\"flows[0].rtt\" = [\"20ms\", \"21ms\", \"22ms\", \"23ms\", \"24ms\", \"25ms\", \"26ms\", \"27ms\", \"28ms\", \"29ms\"]\n\"duration\" = [\"1s\", \"2s\", \"3s\", \"4s\", \"5s\", \"6s\", \"7s\", \"8s\", \"9s\", \"10s\"]\n\"flows[1].cc\" = [\"reno\", \"bic\", \"cubic\", \"vegas\", \"htcp\", \"illinois\"]\n");
    has_all(&e, &["sweep", "more than 100000 runs"]);
}

#[test]
fn a_bad_seed_with_seeds_names_the_seed() {
    let e = match load(&format!("seed = \"x\"\n{BASE}[sweep]\nseeds = 2\n"), &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted"),
    };
    has_all(&e, &["scen.toml:1:", "seed = \"x\"", "sweep seeds count up from it"]);
}
