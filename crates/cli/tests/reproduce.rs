//! `cclab reproduce --quick` over every seed with expected values: the structure of
//! reproduce.json and reproduce.html, and the verdicts of the items that do not hinge on
//! run length (quick runs are short, so only those are pinned).

mod common;
use common::*;

/// Items whose verdict holds with the quick runs as with the full ones, each with the
/// reason it is stable.
const STABLE: &[(&str, &str)] = &[
    // (Not Fig. 5 at 82 ms: with the background both ways, its 20 s quick run on one
    // seed goes either way; the full run's two seeds give 6.3 ± 8.2.)
    // The eight TCP flows' goodput fills 0.82 of the link (full run, 0.82 ± 0.04; the UDP
    // background has the rest), well short of the paper's 95%.
    ("001-fig6/the eight TCP flows' utilisation", "differs"),
    // CUBIC-FIT out-takes plain CUBIC at 1% loss by 10% or more at every delay.
    ("000-fig2-share/CUBIC-FIT / CUBIC/50ms", "agrees"),
    ("000-fig2-share/CUBIC-FIT / CUBIC/200ms", "agrees"),
    // The paper's Reno gets an eighth of CUBIC's share at 200 ms; cclab's far more.
    ("000-table1/Reno/200ms", "differs"),
    // In packets per second (the notebook counts 80 bytes per ACK): Tahoe alone on the
    // low-BDP trace about the notebook's 130 (full run 130.6, quick 119.5); CUBIC alone on
    // the high-BDP one about twice the notebook's 189 (406, quick 349).
    ("002-low-throughput/Tahoe alone", "agrees"),
    ("002-high-throughput/CUBIC alone", "differs"),
    // Base RTT plus a full 30 kB queue bounds the RTT near the notebook's.
    ("002-low-rtt/Tahoe alone", "agrees"),
    ("003-utilisation/CUBIC", "agrees"),
    // TCPTuner with beta = 0.25 backs off far more than CUBIC.
    ("004-inter/Fig. 5: beta = 0.25 gives CUBIC more", "agrees"),
    // With beta = 1 neither flow backs off, so the newcomer never gets in.
    ("004-fig6/new flow's goodput", "differs"),
    // A 1 MB transfer at beta = 1 takes well under half the time of beta = 0.2 at 1% loss.
    ("004-fig7-trend/beta 1.0", "agrees"),
    // Two CUBIC flows with the same RTT share evenly long before 200 s.
    ("001-fig4/fair share after 200 s", "agrees"),
    // (Not Fig. 9a's "CUBIC above TCP-SACK" at 16 ms: one 60 s seed goes either way. The
    // 162 ms flow's share of the 16 ms one, CUBIC against Reno, seeds 1-3: 0.157 / 0.196,
    // 0.117 / 0.174, 0.073 / 0.021 with RACK; without it 0.157 / 0.033, 0.116 / 0.174,
    // 0.073 / 0.028.)
    // cclab's TCP-SACK is far from the inverse of the RTT ratio (1/10) there: 0.196, 0.174
    // and 0.021 of the short flow's goodput in seeds 1-3.
    ("001-fig9a/TCP-SACK: the inverse of the RTT ratio/16ms", "differs"),
    // BIC-TCP's 162 ms flow is nearly starved next to a 16 ms one.
    ("001-fig9a/BIC-TCP below CUBIC/16ms", "agrees"),
    ("001-fig9b/HSTCP fills the link/16ms", "agrees"),
    // Four CUBIC flows keep a 400 Mbit/s, 160 ms link busy from their first seconds.
    ("001-fig10a/CUBIC fills the link/160ms", "agrees"),
    ("001-fig10b/TCP-SACK fills the link/10Mbps", "agrees"),
    // At 400 Mbit/s and 10 ms BIC-TCP is far past its TCP mode (14 packets).
    ("001-fig10b-trend/BIC-TCP", "agrees"),
    // A lower beta means a deeper sawtooth, so a smaller mean window, as the approximation.
    ("004-fig4/alpha 1, beta 0.5", "agrees"),
];

const ITEM_KEYS: &[&str] = &[
    "id",
    "seed",
    "figure",
    "page",
    "setup",
    "scenario",
    "where",
    "x",
    "paper",
    "paper_derived",
    "paper_claim",
    "cclab",
    "ci95",
    "runs",
    "runs_without_value",
    "run_verdicts",
    "verdict",
    "rule",
    "why",
];

#[test]
fn reproduce_quick_covers_every_seed_with_the_documented_report() {
    let dir = TempDir::new("reproduce");
    let seeds = repo().join("scenarios/seeds");
    let o = cclab()
        .current_dir(dir.path())
        .args(["reproduce", "--quick", "--out", "rep", "--seeds"])
        .arg(&seeds)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("item") && out.contains("verdict"), "{out}");
    assert!(out.contains("reproduce --quick (short runs, not the full verdicts): "), "{out}");
    assert!(out.contains(" agree, "), "{out}");

    let text = std::fs::read_to_string(dir.path().join("rep/reproduce.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["quick"], serde_json::Value::Bool(true));
    let items = json["items"].as_array().unwrap();
    assert!(items.len() >= 200, "{} items", items.len());
    for item in items {
        let obj = item.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        for k in ITEM_KEYS {
            assert!(keys.contains(k), "{k} missing in {item}");
        }
        let verdict = item["verdict"].as_str().unwrap();
        assert!(["agrees", "roughly", "differs"].contains(&verdict), "{item}");
        assert!(item["cclab"].is_number() && item["runs"].as_u64().unwrap() >= 1, "{item}");
        // An interval needs two runs or more.
        assert_eq!(item["ci95"].is_null(), item["runs"] == 1, "{item}");
        // The verdicts the interval spans: the mean's own lies between the best and the worst.
        // A span needs an interval; a positive one always gets a span.
        if !item["ci95_verdicts"].is_null() {
            assert!(!item["ci95"].is_null(), "{item}");
        }
        if item["ci95"].as_f64().is_some_and(|ci| ci > 0.0) {
            assert!(!item["ci95_verdicts"].is_null(), "{item}");
        }
        if let Some(span) = item["ci95_verdicts"].as_array() {
            let rank = |v: &serde_json::Value| {
                ["agrees", "roughly", "differs"].iter().position(|r| v == r).unwrap()
            };
            let (best, worst, own) = (rank(&span[0]), rank(&span[1]), rank(&item["verdict"]));
            assert!(best <= own && own <= worst, "{item}");
        }
        // Each run judged on its own: one verdict per run, only where there are several.
        if let Some(per_run) = item["run_verdicts"].as_object() {
            let sum: u64 = per_run.values().map(|n| n.as_u64().unwrap()).sum();
            assert_eq!(Some(sum), item["runs"].as_u64(), "{item}");
        }
        if item["runs"] == 1 {
            assert!(item["run_verdicts"].is_null(), "{item}");
        }
        assert!(item["runs_without_value"].is_u64(), "{item}");
        assert!(item["paper"].is_number() || item["paper_claim"].is_string(), "{item}");
        assert!(!item["rule"].as_str().unwrap().is_empty(), "{item}");
        assert!(
            !item["page"].as_str().unwrap().is_empty()
                && !item["setup"].as_str().unwrap().is_empty()
        );
    }
    for seed in ["000", "001", "002", "003", "004"] {
        assert!(items.iter().any(|i| i["seed"] == seed), "seed {seed} missing");
    }
    let count = |v: &str| items.iter().filter(|i| i["verdict"] == v).count() as u64;
    assert_eq!(json["summary"]["agrees"].as_u64(), Some(count("agrees")));
    assert_eq!(json["summary"]["differs"].as_u64(), Some(count("differs")));
    // The paper's numbers, those derived from it and its claims, counted apart, make up
    // the whole; only numbers are derived, those of the figures that say how they were
    // worked out (`paper_derived`): values the paper does not print, or prints in other
    // units.
    for v in ["agrees", "roughly", "differs"] {
        let kinds =
            ["numbers", "derived", "claims"].map(|k| json["summary"][k][v].as_u64().unwrap());
        assert_eq!(kinds.iter().sum::<u64>(), count(v), "{v}");
        let of = |f: &dyn Fn(&serde_json::Value) -> bool| {
            items.iter().filter(|i| i["verdict"] == v && f(i)).count() as u64
        };
        assert_eq!(kinds[1], of(&|i| i["paper_derived"] == true), "{v}");
        assert_eq!(kinds[2], of(&|i| i["paper_claim"].is_string()), "{v}");
    }
    const DERIVED: [&str; 5] =
        ["001-response/", "001-fig9a/", "002-low-throughput/", "002-high-throughput/", "004-fig4/"];
    for i in items {
        let derived = DERIVED.iter().any(|f| i["id"].as_str().unwrap().starts_with(f));
        assert_eq!(i["paper_derived"] == true, derived && i["paper"].is_number(), "{i}");
    }
    let with_interval = items.iter().filter(|i| !i["ci95_verdicts"].is_null()).count() as u64;
    assert!(with_interval > 0, "no item of --quick has an interval");
    let settled = &json["summary"];
    assert_eq!(
        settled["settled"].as_u64().unwrap() + settled["unsettled"].as_u64().unwrap(),
        with_interval
    );
    for (id, verdict) in STABLE {
        let item = items.iter().find(|i| i["id"] == *id).unwrap_or_else(|| panic!("no item {id}"));
        assert_eq!(item["verdict"], *verdict, "{item}");
    }
    // Paper values sit beside cclab's: Table I's first CUBIC-FIT cell is 0.999.
    let cell = items.iter().find(|i| i["id"] == "000-table1/CUBIC-FIT/10ms").unwrap();
    assert_eq!(cell["paper"].as_f64(), Some(0.999));
    assert_eq!(cell["figure"], "Table I");

    let html = std::fs::read_to_string(dir.path().join("rep/reproduce.html")).unwrap();
    assert!(html.contains("Table I") && html.contains("(paper)") && html.contains("(cclab)"));
    assert!(html.matches("<svg").count() >= 10);
    // Figures with curves chart one cclab line per protocol, whatever their claims compare.
    assert!(html.contains("HSTCP (cclab)") && html.contains("TCP-SACK with BIC-TCP (cclab)"));
    // A series with `at` is judged only at those x values.
    let ids: Vec<&str> = items.iter().filter_map(|i| i["id"].as_str()).collect();
    assert!(ids.contains(&"001-fig8a/16 ms: TCP-SACK at least CUBIC/16ms"));
    assert!(!ids.iter().any(|i| i.starts_with("001-fig8a/16 ms: TCP-SACK at least CUBIC/4")));
    // Each experiment's sweep is a normal sweep folder.
    assert!(dir.path().join("rep/000-fairness/sweep.csv").is_file());
}

#[test]
fn reproduce_refuses_an_unknown_seed() {
    let dir = TempDir::new("reproduce-bad");
    let o = cclab()
        .current_dir(dir.path())
        .args(["reproduce", "999", "--quick", "--seeds"])
        .arg(repo().join("scenarios/seeds"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no expected values for seed \"999\""), "{}", stderr(&o));
    assert!(stderr(&o).contains("allowed: 000, 001, 002, 003, 004"), "{}", stderr(&o));
    // A folder of no seeds is refused, and an earlier report in --out is left as it was
    // (it was replaced by one of no items).
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    dir.write("rep/reproduce.json", "earlier");
    let o = cclab()
        .current_dir(dir.path())
        .args(["reproduce", "--quick", "--seeds", "empty", "--out", "rep"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--seeds empty: the folder holds no <id>.expected.toml"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("rep/reproduce.json")).unwrap(), "earlier");
}

/// `cclab reproduce --out rep --seeds .` in `dir`, which holds a seed made for a test.
fn reproduce_in(dir: &std::path::Path) -> std::process::Output {
    cclab().current_dir(dir).args(["reproduce", "--out", "rep", "--seeds", "."]).output().unwrap()
}

/// A tiny seed made for the test: two flows on a short sweep, so the expected values'
/// `agg = "min_max"`, `at` and `curves` can be checked against sweep.csv by hand.
const TINY_SCENARIO: &str = r#"
name = "900-tiny"
duration = "4s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
name = "a"
cc = "reno"
rtt = "20ms"
[[flows]]
name = "b"
cc = "cubic"
rtt = "40ms"
[sweep]
"flows[0].rtt" = ["20ms", "60ms"]
"#;

const TINY_EXPECTED: &str = r#"
seed = "900"
title = "test seed"
[[figure]]
id = "900-ratio"
source = "Fig. 1"
page = "p. 1"
setup = "two flows"
scenario = "900-tiny.toml"
x = "flows[0].rtt"
value = "flow.goodput_bps"
agg = "min_max"
curves = [{ name = "both flows", where = {} }]
[[figure.series]]
name = "only at 60 ms"
at = ["60ms"]
claim = "<="
bound = 1.0
paper_text = "the smaller flow gets at most the larger's goodput"
"#;

#[test]
fn reproduce_series_at_part_of_the_axis_with_min_max_and_curves() {
    let dir = TempDir::new("reproduce-tiny");
    dir.write("900-tiny.toml", TINY_SCENARIO);
    dir.write("900.expected.toml", TINY_EXPECTED);
    let o = reproduce_in(dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("rep/reproduce.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let items = json["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["id"], "900-ratio/only at 60 ms/60ms");
    assert_eq!(items[0]["verdict"], "agrees");
    // What the value is, in sweep.csv's words (and so its unit).
    assert_eq!(items[0]["quantity"], "min/max of flow.goodput_bps");
    // cclab's value is the smaller goodput over the larger in the 60 ms run.
    let csv = std::fs::read_to_string(dir.path().join("rep/900-tiny/sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let goodputs: Vec<f64> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[col("flows[0].rtt")] == "60ms")
        .map(|r| r[col("flow.goodput_bps")].parse().unwrap())
        .collect();
    assert_eq!(goodputs.len(), 2);
    let want = goodputs[0].min(goodputs[1]) / goodputs[0].max(goodputs[1]);
    let got = items[0]["cclab"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-5, "{got} against {want}");
    let html = std::fs::read_to_string(dir.path().join("rep/reproduce.html")).unwrap();
    assert!(html.contains("both flows (cclab)"));
    // Another seed's sweep left in the folder by an earlier reproduction: kept, and said.
    std::fs::create_dir(dir.path().join("rep/001-other")).unwrap();
    dir.write("rep/001-other/sweep.json", "{}\n");
    let o = reproduce_in(dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let said = "note: rep also holds the sweeps of an earlier reproduction (001-other); reproduce.json and reproduce.html cover only the seeds asked for this time";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    assert!(dir.path().join("rep/001-other/sweep.json").is_file());
}

#[test]
fn reproduce_refuses_at_without_x() {
    let dir = TempDir::new("reproduce-at");
    dir.write("900-tiny.toml", TINY_SCENARIO);
    dir.write("900.expected.toml", &TINY_EXPECTED.replace("x = \"flows[0].rtt\"\n", ""));
    let o = reproduce_in(dir.path());
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("900.expected.toml") && err.contains("at limits a series to values of x"),
        "{err}"
    );
}

/// A selection that matches nothing because of a typo is refused, naming what the sweep
/// has, rather than reported as "not run".
#[test]
fn reproduce_refuses_a_where_value_or_flow_the_sweep_does_not_have() {
    let dir = TempDir::new("reproduce-typo");
    dir.write("900-tiny.toml", TINY_SCENARIO);
    for (expected, said) in [
        (
            TINY_EXPECTED.replace("at = [\"60ms\"]", "where = { \"flows[0].rtt\" = \"50ms\" }"),
            "figure 900-ratio: where flows[0].rtt = \"50ms\", a value 900-tiny.toml does not sweep; it has: 20ms, 60ms",
        ),
        (
            TINY_EXPECTED.replace("agg = \"min_max\"", "agg = \"min_max\"\nflow = \"c\""),
            "figure 900-ratio: flow = \"c\" names no flow of 900-tiny.toml's runs; they have: a, b",
        ),
    ] {
        dir.write("900.expected.toml", &expected);
        let o = reproduce_in(dir.path());
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
    }
}

/// One CUBIC flow alone on 10 Mbit/s, at two RTTs, 3 s each.
const TESTBED_SCENARIO: &str = r#"
name = "900-testbed"
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
name = "a"
cc = "cubic"
rtt = "20ms"
[sweep]
"flows[0].rtt" = ["20ms", "40ms"]
"#;

const TESTBED_EXPECTED: &str = r#"
seed = "900"
title = "testbed seed"
[[figure]]
id = "900-util"
source = "Fig. 1"
page = "p. 1"
setup = "one flow"
scenario = "900-testbed.toml"
x = "flows[0].rtt"
value = "link.utilization"
rule = { kind = "absolute", agree = 0.1, roughly = 0.2 }
[[figure.series]]
name = "utilisation"
paper = { "20ms" = 0.9, "40ms" = 0.9 }
[[figure]]
id = "900-goodput"
source = "Fig. 2"
page = "p. 2"
setup = "one flow"
scenario = "900-testbed.toml"
where = { "flows[0].rtt" = "20ms" }
value = "flow.goodput_bps"
rule = { kind = "relative", agree = 0.1, roughly = 0.3 }
[[figure.series]]
name = "goodput"
paper = 9e6
"#;

/// A Tahoe flow: the kernel has no Tahoe, so the testbed's own check refuses it.
const REFUSED_SCENARIO: &str = r#"
name = "901-tahoe"
duration = "1s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
name = "a"
cc = "tahoe"
rtt = "20ms"
[sweep]
"flows[0].rtt" = ["20ms"]
"#;

const REFUSED_EXPECTED: &str = r#"
seed = "901"
title = "refused seed"
[[figure]]
id = "901-util"
source = "Fig. 1"
page = "p. 1"
setup = "one Tahoe flow"
scenario = "901-tahoe.toml"
value = "link.utilization"
rule = { kind = "absolute", agree = 0.1, roughly = 0.2 }
[[figure.series]]
name = "utilisation"
paper = 0.9
"#;

/// `reproduce --testbed --quick` on a hand-made seed: both points of a one-flow sweep run
/// once on kernel CUBIC (3 s each); every item gets a plausible testbed value and a
/// verdict by its rule; the Tahoe item is skipped with the testbed's reason; the runs are
/// a sweep folder that a second call takes as done; no namespace is left.
#[test]
fn reproduce_testbed_adds_real_tcp_values_and_skips_what_it_cannot_run() {
    if let Some(why) = testbed_unavailable() {
        eprintln!("SKIPPED: reproduce --testbed needs root and TUN: {why}");
        return;
    }
    let dir = TempDir::new("reproduce-testbed");
    dir.write("900-testbed.toml", TESTBED_SCENARIO);
    dir.write("900.expected.toml", TESTBED_EXPECTED);
    dir.write("901-tahoe.toml", REFUSED_SCENARIO);
    dir.write("901.expected.toml", REFUSED_EXPECTED);
    let run = || {
        let child = cclab()
            .current_dir(dir.path())
            .args(["reproduce", "--testbed", "--quick", "--out", "rep", "--seeds", "."])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        (pid, child.wait_with_output().unwrap())
    };
    let (pid, o) = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(namespaces_of(pid), Vec::<String>::new(), "namespaces left behind");
    let err = stderr(&o);
    assert!(
        err.contains("testbed: 2 runs to do (0 done before, 1 the testbed cannot run)"),
        "{err}"
    );
    let text = std::fs::read_to_string(dir.path().join("rep/reproduce.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["testbed"], true);
    let items = json["items"].as_array().unwrap();
    let item = |id: &str| items.iter().find(|i| i["id"] == id).unwrap_or_else(|| panic!("{id}"));
    for id in ["900-util/utilisation/20ms", "900-util/utilisation/40ms"] {
        let u = item(id)["testbed"].as_f64().unwrap_or_else(|| panic!("{id}: {text}"));
        assert!(u > 0.3 && u <= 1.0, "{id}: testbed utilisation {u}");
        let want = if (u - 0.9).abs() <= 0.1 {
            "agrees"
        } else if (u - 0.9).abs() <= 0.2 {
            "roughly"
        } else {
            "differs"
        };
        assert_eq!(item(id)["testbed_verdict"], want, "{id}");
        assert!(item(id)["testbed_skipped"].is_null());
    }
    let g = item("900-goodput/goodput")["testbed"].as_f64().unwrap();
    assert!(g > 1e6 && g <= 10e6, "testbed goodput {g} on a 10 Mbit/s link");
    let refused = item("901-util/utilisation");
    assert!(refused["testbed"].is_null() && refused["testbed_verdict"].is_null());
    let why = refused["testbed_skipped"].as_str().unwrap();
    assert!(why.contains("\"tahoe\" is not available in this kernel"), "{why}");
    // The testbed's runs are a sweep folder of their own, the simulated one untouched.
    let csv =
        std::fs::read_to_string(dir.path().join("rep/900-testbed/testbed/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("testbed verdict") && out.contains("skipped: flows[0] (a)"), "{out}");
    let html = std::fs::read_to_string(dir.path().join("rep/reproduce.html")).unwrap();
    assert!(html.contains("<th>testbed</th>"));
    // A second call runs nothing again and gives the same testbed values.
    let (_, again) = run();
    assert!(again.status.success(), "{}", stderr(&again));
    let err = stderr(&again);
    assert!(err.contains("testbed: 0 runs to do (2 done before"), "{err}");
    let text2 = std::fs::read_to_string(dir.path().join("rep/reproduce.json")).unwrap();
    let json2: serde_json::Value = serde_json::from_str(&text2).unwrap();
    for (a, b) in items.iter().zip(json2["items"].as_array().unwrap()) {
        assert_eq!(a["testbed"], b["testbed"]);
    }
}

/// Ctrl-C in either part of `reproduce --testbed`: in the simulated sweeps it removes
/// what they were writing, as a reproduction without `--testbed` does; in the testbed
/// part the emulator's own handlers take it and remove the run's namespaces. Both end
/// with the shell's status for SIGINT and leave nothing hidden in the results folder.
#[test]
fn an_interrupted_reproduce_testbed_cleans_up_in_both_parts() {
    if let Some(why) = testbed_unavailable() {
        eprintln!("SKIPPED: reproduce --testbed needs root and TUN: {why}");
        return;
    }
    let dir = TempDir::new("reproduce-testbed-interrupt");
    dir.write("900-testbed.toml", TESTBED_SCENARIO);
    dir.write("900.expected.toml", TESTBED_EXPECTED);
    // A seed whose simulated sweep runs long enough (minutes) for the signal to find it.
    let long = TESTBED_SCENARIO.replace("900-testbed", "902-long").replace(
        "duration = \"3s\"\n[bottleneck]\nrate = \"10Mbps\"",
        "duration = \"900s\"\n[bottleneck]\nrate = \"1Gbps\"",
    );
    assert!(long.contains("900s"), "{long}");
    dir.write("long/902-long.toml", &long);
    dir.write(
        "long/902.expected.toml",
        &TESTBED_EXPECTED.replace("900", "902").replace("902-testbed", "902-long"),
    );
    let start = |seeds: &str, out: &str| {
        cclab()
            .current_dir(dir.path())
            .args(["reproduce", "--testbed", "--quick", "--out", out, "--seeds", seeds])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let interrupted = |child: std::process::Child, out: &str| {
        let pid = child.id();
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
        assert_eq!(namespaces_of(pid), Vec::<String>::new(), "namespaces left behind");
        let left = hidden_below(&dir.path().join(out));
        assert!(left.is_empty(), "left in {out}: {left:?}");
        stderr(&o)
    };
    let waited = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "waited for {what} in vain");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(200)); // under way by now
    };

    let child = start("long", "sim-part");
    let points = dir.path().join("sim-part/902-long/points");
    waited("a simulated point's staging", &|| !hidden_below(&points).is_empty());
    let err = interrupted(child, "sim-part");
    assert!(err.contains("what it was writing is removed"), "{err}");

    let child = start(".", "testbed-part");
    let pid = child.id();
    waited("the testbed's namespaces", &|| namespaces_of(pid).len() == 2);
    let err = interrupted(child, "testbed-part");
    assert!(err.contains("interrupted by a signal"), "the emulator's handlers took it: {err}");
}

/// Every name under `folder` (at any depth) that starts with a dot: staging left behind.
fn hidden_below(folder: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            found.push(entry.path().display().to_string());
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(hidden_below(&entry.path()));
        }
    }
    found
}

/// Without root, `--testbed` is refused before anything runs, saying what it needs.
#[test]
fn reproduce_testbed_without_root_says_what_it_needs() {
    if is_root() {
        eprintln!("SKIPPED: running as root; the refusal is for other users");
        return;
    }
    let dir = TempDir::new("reproduce-testbed-user");
    dir.write("901-tahoe.toml", REFUSED_SCENARIO);
    dir.write("901.expected.toml", REFUSED_EXPECTED);
    let o = cclab()
        .current_dir(dir.path())
        .args(["reproduce", "--testbed", "--quick", "--out", "rep", "--seeds", "."])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("--testbed") && err.contains("root") && err.contains("/dev/net/tun"),
        "{err}"
    );
    assert!(!dir.path().join("rep").exists());
}

#[test]
fn reproduce_writes_only_into_a_folder_of_its_own() {
    let dir = TempDir::new("reproduce-out");
    dir.write("900-tiny.toml", TINY_SCENARIO);
    dir.write("900.expected.toml", TINY_EXPECTED);
    let reproduce_into = |out: &str| {
        cclab()
            .current_dir(dir.path())
            .args(["reproduce", "--out", out, "--seeds", "."])
            .output()
            .unwrap()
    };
    // A folder of the user's is refused before anything is written into it.
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    dir.write("mine/notes.txt", "keep me");
    let o = reproduce_into("mine");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("mine exists and is not a cclab reproduce folder (no reproduce.json)"),
        "{}",
        stderr(&o)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path().join("mine")).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("mine/notes.txt")).unwrap(), "keep me");
    // A reproduction stopped before its report left only its sweeps' folders: it may be
    // run again into the same place, and then has its report.
    assert!(reproduce_into("rep").status.success());
    std::fs::remove_file(dir.path().join("rep/reproduce.json")).unwrap();
    std::fs::remove_file(dir.path().join("rep/reproduce.html")).unwrap();
    let o = reproduce_into("rep");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("rep/reproduce.json").is_file());
}
