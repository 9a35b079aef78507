//! `cclab compare`: two real results folders side by side. The differences in the table
//! and in compare.json are checked against the two summary.json files themselves, the
//! overlay plots hold both runs, a folder compared with itself differs by zero, and bad
//! input is an error naming the file and what is wrong, never a panic.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Every per-flow metric: compare.json key, summary.json pointer within a flow, decimals.
const FLOW_METRICS: &[(&str, &str, i32)] = &[
    ("goodput_bps", "/goodput_bps", 0),
    ("retransmits", "/retransmits", 0),
    ("drops", "/drops", 0),
    ("rtt_p50_ms", "/rtt_ms/p50", 3),
    ("rtt_p95_ms", "/rtt_ms/p95", 3),
    ("rtt_p99_ms", "/rtt_ms/p99", 3),
];
/// Per-flow metrics read from the series rather than summary.json (compare.json keys).
const SERIES_FLOW_METRICS: &[&str] = &["srtt_p50_ms", "srtt_p95_ms"];
/// Link and fairness metrics: compare.json pointer, summary.json pointer, decimals.
const RUN_METRICS: &[(&str, &str, i32)] = &[
    ("/link/utilization", "/link/utilization", 6),
    ("/link/drops", "/link/drops", 0),
    ("/link/mean_queue_packets", "/link/mean_queue_packets", 3),
    ("/fairness/jain", "/fairness/jain", 6),
];

/// Runs `cclab args` expecting a clean failure (exit 1, one error line, no panic).
fn run_err(cwd: &Path, args: &[&str]) -> String {
    let o = run_in(cwd, args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "cclab {args:?} should fail with 1: {err}");
    assert!(err.starts_with("error: ") && !err.contains("panicked"), "{err}");
    err
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn f(v: &Value, ptr: &str) -> f64 {
    v.pointer(ptr)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{ptr} missing or not a number in {v}"))
}

/// Percentiles (nearest rank) of flow `flow`'s srtt_ms column in a results folder's
/// flows.csv, leaving out the samples before its first RTT (0), computed here from the
/// file itself.
fn srtt_percentiles_of(dir: &Path, flow: usize, qs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = flow_column(dir, flow, "srtt_ms")
        .iter()
        .map(|r| r.parse::<f64>().expect("srtt_ms is a number"))
        .filter(|&r| r > 0.0)
        .collect();
    assert!(v.len() > 10, "flow {flow} has srtt samples in {}", dir.display());
    v.sort_by(f64::total_cmp);
    qs.iter().map(|q| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]).collect()
}

/// Two runs of the same small scenario that differ: B has another seed and CUBIC as
/// flow 0. Returns (A, B) as folder names under `dir`.
fn two_runs(dir: &Path) -> (&'static str, &'static str) {
    let scn = repo().join("scenarios/small/reno-droptail.toml").display().to_string();
    run_ok(dir, &["run", &scn, "--out", "runA"]);
    run_ok(dir, &["run", &scn, "--seed", "7", "--set", "flows[0].cc=cubic", "--out", "runB"]);
    ("runA", "runB")
}

/// `|x - want|` within what rounding to `decimals` allows.
fn close(x: f64, want: f64, decimals: i32, what: &str) {
    let tol = 0.5 * 10f64.powi(-decimals) + 1e-9 * want.abs();
    assert!((x - want).abs() <= tol, "{what}: {x} != {want}");
}

/// The `k`-th (from 0) table row whose label is `label`, split into its cells.
fn row<'a>(table: &'a str, label: &str, k: usize) -> Vec<&'a str> {
    let line = table
        .lines()
        .filter(|l| l.trim_start().starts_with(label))
        .nth(k)
        .unwrap_or_else(|| panic!("row {label} #{k} missing in:\n{table}"));
    line[line.find(label).unwrap() + label.len()..].split_whitespace().collect()
}

/// Checks a table row shows A, B and B - A as the summaries give them.
fn row_shows(table: &str, label: &str, k: usize, a: f64, b: f64, decimals: usize) {
    let cells = row(table, label, k);
    assert_eq!(cells.len(), 4, "{label} #{k}: {cells:?}");
    assert_eq!(cells[0], format!("{a:.decimals$}"), "{label} #{k} A");
    assert_eq!(cells[1], format!("{b:.decimals$}"), "{label} #{k} B");
    let diff: f64 = cells[2].parse().unwrap_or_else(|_| panic!("{label} #{k} diff {}", cells[2]));
    close(diff, b - a, decimals as i32, &format!("{label} #{k} B - A"));
    assert!(
        cells[2].starts_with('+') || cells[2].starts_with('-'),
        "signed difference: {}",
        cells[2]
    );
}

#[test]
fn differences_are_b_minus_a_in_the_table_and_in_compare_json() {
    let dir = TempDir::new("compare");
    let (a, b) = two_runs(dir.path());
    let out = run_ok(dir.path(), &["compare", a, b, "--out", "cmp"]);
    let sa = json(&dir.path().join(a).join("summary.json"));
    let sb = json(&dir.path().join(b).join("summary.json"));
    let cmp = json(&dir.path().join("cmp/compare.json"));

    assert_eq!(cmp.pointer("/a/name").and_then(Value::as_str), Some("runA"));
    assert_eq!(cmp.pointer("/b/name").and_then(Value::as_str), Some("runB"));
    assert_eq!(cmp.pointer("/b/seed").and_then(Value::as_u64), Some(7));
    let flows = cmp["flows"].as_array().expect("flows list");
    let n = sa["flows"].as_array().unwrap().len();
    assert_eq!(flows.len(), n);
    assert_eq!(flows[0]["cc_a"], "reno");
    assert_eq!(flows[0]["cc_b"], "cubic");
    let mut some_nonzero = false;
    for (i, fl) in flows.iter().enumerate() {
        assert_eq!(fl["id"].as_u64(), Some(i as u64));
        for &(key, ptr, dec) in FLOW_METRICS {
            let va = f(&sa, &format!("/flows/{i}{ptr}"));
            let vb = f(&sb, &format!("/flows/{i}{ptr}"));
            let what = format!("flow {i} {key}");
            close(f(fl, &format!("/{key}/a")), va, dec, &what);
            close(f(fl, &format!("/{key}/b")), vb, dec, &what);
            close(f(fl, &format!("/{key}/diff")), vb - va, dec, &what);
            if va != 0.0 {
                close(f(fl, &format!("/{key}/rel")), (vb - va) / va, 6, &what);
            }
            some_nonzero |= vb != va;
        }
        // The table: flow i's rows, in Mbit/s for goodput.
        row_shows(
            &out,
            "goodput Mbit/s",
            i,
            f(&sa, &format!("/flows/{i}/goodput_bps")) / 1e6,
            f(&sb, &format!("/flows/{i}/goodput_bps")) / 1e6,
            3,
        );
        row_shows(
            &out,
            "retransmits",
            i,
            f(&sa, &format!("/flows/{i}/retransmits")),
            f(&sb, &format!("/flows/{i}/retransmits")),
            0,
        );
        row_shows(
            &out,
            "packets dropped",
            i,
            f(&sa, &format!("/flows/{i}/drops")),
            f(&sb, &format!("/flows/{i}/drops")),
            0,
        );
        row_shows(
            &out,
            "RTT p99 ms",
            i,
            f(&sa, &format!("/flows/{i}/rtt_ms/p99")),
            f(&sb, &format!("/flows/{i}/rtt_ms/p99")),
            3,
        );
        // The smoothed RTT's percentiles come from each folder's own series.
        let pa = srtt_percentiles_of(&dir.path().join(a), i, &[0.5, 0.95]);
        let pb = srtt_percentiles_of(&dir.path().join(b), i, &[0.5, 0.95]);
        for (k, &key) in SERIES_FLOW_METRICS.iter().enumerate() {
            let what = format!("flow {i} {key}");
            close(f(fl, &format!("/{key}/a")), pa[k], 3, &what);
            close(f(fl, &format!("/{key}/b")), pb[k], 3, &what);
            close(f(fl, &format!("/{key}/diff")), pb[k] - pa[k], 3, &what);
        }
        row_shows(&out, "srtt p50 ms", i, pa[0], pb[0], 3);
        row_shows(&out, "srtt p95 ms", i, pa[1], pb[1], 3);
    }
    assert!(out.contains("srtt: both runs' smoothed RTT every 10 ms"), "{out}");
    assert!(some_nonzero, "the two runs should differ somewhere");
    for &(cptr, sptr, dec) in RUN_METRICS {
        let (va, vb) = (f(&sa, sptr), f(&sb, sptr));
        close(f(&cmp, &format!("{cptr}/a")), va, dec, cptr);
        close(f(&cmp, &format!("{cptr}/b")), vb, dec, cptr);
        close(f(&cmp, &format!("{cptr}/diff")), vb - va, dec, cptr);
    }
    row_shows(
        &out,
        "utilisation %",
        0,
        f(&sa, "/link/utilization") * 100.0,
        f(&sb, "/link/utilization") * 100.0,
        2,
    );
    row_shows(&out, "drops", 0, f(&sa, "/link/drops"), f(&sb, "/link/drops"), 0);
    row_shows(
        &out,
        "mean queue pkts",
        0,
        f(&sa, "/link/mean_queue_packets"),
        f(&sb, "/link/mean_queue_packets"),
        3,
    );
    row_shows(&out, "Jain's index", 0, f(&sa, "/fairness/jain"), f(&sb, "/fairness/jain"), 6);
    assert!(
        out.contains("A: runA")
            && out.contains("B: runB")
            && out.contains("reno#0 (reno)")
            && out.contains("cubic#0 (cubic)"),
        "{out}"
    );

    // Overlay plots: per flow one solid line (A) and one dashed line (B) with data.
    for svg in ["cwnd.svg", "throughput.svg"] {
        let text = read(&dir.path().join("cmp").join(svg));
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("<polyline")).collect();
        assert_eq!(lines.len(), 2 * n, "{svg}");
        assert_eq!(
            lines.iter().filter(|l| l.contains("stroke-dasharray")).count(),
            n,
            "{svg}: B dashed"
        );
        assert!(lines.iter().all(|l| l.matches(',').count() > 20), "{svg}: every line has points");
        // Flow k of A and of B share a colour.
        for k in 0..n {
            let colour = |l: &str| {
                l.split("stroke=\"").nth(1).and_then(|s| s.split('"').next()).map(str::to_string)
            };
            assert_eq!(colour(lines[2 * k]), colour(lines[2 * k + 1]), "{svg} flow {k}");
            assert!(!lines[2 * k].contains("dasharray") && lines[2 * k + 1].contains("dasharray"));
        }
        assert!(
            text.contains("runA: reno#0")
                && text.contains("runB: cubic#0")
                && text.contains("solid: runA, dashed: runB"),
            "{svg}"
        );
    }
    let html = read(&dir.path().join("cmp/compare.html"));
    assert_eq!(html.matches("<svg").count(), 2);
    assert!(html.contains("runA vs runB"));

    // Deterministic: the same comparison again gives the same bytes.
    run_ok(dir.path(), &["compare", a, b, "--out", "cmp2"]);
    for file in ["compare.json", "cwnd.svg", "throughput.svg", "compare.html"] {
        assert_eq!(
            read(&dir.path().join("cmp").join(file)),
            read(&dir.path().join("cmp2").join(file)),
            "{file}"
        );
    }
}

/// Where either run has cross traffic, the comparison has its sources per direction:
/// their load on the link (summary.json's bytes over the run), delivered packets and
/// drops, as B - A. A source that sent in the other direction or for part of the run
/// counts where and as long as it sent. A source whose drops were not measured (a
/// testbed run's `null`) makes its direction's drops unknown rather than a smaller sum;
/// runs without cross traffic have no such part; a malformed entry is an error naming it.
#[test]
fn cross_traffic_is_compared_per_direction_where_either_run_has_it() {
    let dir = TempDir::new("compare-cross");
    let scn = repo().join("scenarios/small/tahoe-red-loss.toml").display().to_string();
    run_ok(dir.path(), &["run", &scn, "--out", "runA"]);
    // B: the source at 3 Mbit/s for half the run, and a reverse one.
    let duration = json(&dir.path().join("runA/summary.json"))["duration_s"].as_f64().unwrap();
    let cross = format!(
        "cross=[{{kind=\"cbr\", rate=\"3Mbps\", stop=\"{}s\"}}, {{kind=\"cbr\", rate=\"1Mbps\", direction=\"reverse\"}}]",
        duration / 2.0
    );
    run_ok(dir.path(), &["run", &scn, "--set", &cross, "--out", "runB"]);
    let out = run_ok(dir.path(), &["compare", "runA", "runB", "--out", "cmp"]);
    let cmp = json(&dir.path().join("cmp/compare.json"));
    // The sum over `run`'s sources of `direction` of `get`.
    let sum = |run: &str, direction: &str, get: &dyn Fn(&Value) -> f64| -> f64 {
        let s = json(&dir.path().join(run).join("summary.json"));
        let sources = s["cross"].as_array().expect("a cross list");
        // + 0.0: an empty sum of floats is -0.0.
        sources.iter().filter(|c| c["direction"] == direction).map(get).sum::<f64>() + 0.0
    };
    let load = |key: &'static str| move |c: &Value| f(c, &format!("/{key}")) * 8.0 / duration;
    for direction in ["forward", "reverse"] {
        let section = out.find(&format!("cross traffic ({direction})")).expect(direction);
        let rows = &out[section..];
        for (key, get, label, scale) in [
            (
                "throughput_bps",
                &load("delivered_bytes") as &dyn Fn(&Value) -> f64,
                "delivered Mbit/s",
                1e-6,
            ),
            ("offered_bps", &load("sent_bytes"), "offered Mbit/s", 1e-6),
            ("delivered_packets", &|c: &Value| f(c, "/delivered_packets"), "delivered pkts", 1.0),
            ("drops", &|c: &Value| f(c, "/drops"), "drops", 1.0),
        ] {
            let (a, b) = (sum("runA", direction, get), sum("runB", direction, get));
            let at = |x: &str| format!("/cross/{direction}/{key}/{x}");
            close(f(&cmp, &at("a")), a, 0, key);
            close(f(&cmp, &at("b")), b, 0, key);
            close(f(&cmp, &at("diff")), b - a, 0, key);
            row_shows(rows, label, 0, a * scale, b * scale, if scale == 1.0 { 0 } else { 3 });
        }
    }
    // Half the run at 3 Mbit/s is a load of 1.5 Mbit/s, not 3; A has no reverse source.
    let offered = f(&cmp, "/cross/forward/offered_bps/b");
    assert!((offered - 1.5e6).abs() < 0.05e6, "{offered}");
    assert_eq!(f(&cmp, "/cross/reverse/sources/a"), 0.0);
    assert_eq!(f(&cmp, "/cross/reverse/sources/b"), 1.0);
    let html = read(&dir.path().join("cmp/compare.html"));
    assert!(
        html.contains("<td>cross traffic (reverse)</td>")
            && html.contains("<td>delivered pkts</td>")
    );

    // A source's drops unknown: that direction's sum is unknown, shown as "-" and null.
    let b_summary = dir.path().join("runB/summary.json");
    let original = read(&b_summary);
    let mut s: Value = serde_json::from_str(&original).unwrap();
    s["cross"][0]["drops"] = Value::Null;
    std::fs::write(&b_summary, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let out = run_ok(dir.path(), &["compare", "runA", "runB", "--out", "cmp"]);
    let cmp = json(&dir.path().join("cmp/compare.json"));
    let drops = &cmp["cross"]["forward"]["drops"];
    assert!(drops["b"].is_null() && drops["rel"].is_null(), "{drops}");
    let forward = &out[out.find("cross traffic (forward)").unwrap()..];
    assert_eq!(row(forward, "drops", 0)[1..], ["-", "-", "n/a"], "{out}");

    // Malformed entries: errors that name the entry and what was expected.
    for (entry, wanted) in [
        (Value::from(5), "field cross[0] is 5, expected an object"),
        (
            serde_json::json!({"direction": "up"}),
            "field cross[0].direction is \"up\", expected forward or reverse",
        ),
    ] {
        let mut bad = s.clone();
        bad["cross"][0] = entry;
        std::fs::write(&b_summary, serde_json::to_string_pretty(&bad).unwrap()).unwrap();
        let err = run_err(dir.path(), &["compare", "runA", "runB", "--out", "cmp"]);
        assert!(err.contains(wanted) && err.contains("summary.json"), "{err}");
    }
    for (key, value) in [("drops", Value::from(-3.5)), ("delivered_bytes", Value::Null)] {
        let mut bad = s.clone();
        bad["cross"][0][key] = value;
        std::fs::write(&b_summary, serde_json::to_string_pretty(&bad).unwrap()).unwrap();
        let err = run_err(dir.path(), &["compare", "runA", "runB", "--out", "cmp"]);
        assert!(
            err.contains(&format!("field cross[0].{key} is"))
                && err.contains("expected a whole number"),
            "{err}"
        );
    }
    std::fs::write(&b_summary, original).unwrap();

    // Neither run has cross traffic: no cross part.
    let (a, b) = two_runs(dir.path());
    let out = run_ok(dir.path(), &["compare", a, b, "--out", "plain"]);
    assert!(json(&dir.path().join("plain/compare.json")).get("cross").is_none());
    assert!(!out.contains("cross traffic"), "{out}");
}

#[test]
fn a_folder_compared_with_itself_differs_by_zero() {
    let dir = TempDir::new("compare-self");
    let (a, _) = two_runs(dir.path());
    // No --out: the default folder under results/.
    let out = run_ok(dir.path(), &["compare", a, a]);
    let cmp = json(&dir.path().join("results/compare-runA-vs-runA/compare.json"));
    let mut checked = 0;
    for fl in cmp["flows"].as_array().unwrap() {
        let keys = FLOW_METRICS.iter().map(|m| m.0).chain(SERIES_FLOW_METRICS.iter().copied());
        for key in keys {
            assert_eq!(f(fl, &format!("/{key}/diff")), 0.0, "{key}");
            assert_eq!(f(fl, &format!("/{key}/rel")), 0.0, "{key}");
            assert_eq!(f(fl, &format!("/{key}/a")), f(fl, &format!("/{key}/b")), "{key}");
            checked += 1;
        }
    }
    for &(ptr, _, _) in RUN_METRICS {
        assert_eq!(f(&cmp, &format!("{ptr}/diff")), 0.0, "{ptr}");
        checked += 1;
    }
    assert_eq!(checked, 2 * (FLOW_METRICS.len() + SERIES_FLOW_METRICS.len()) + RUN_METRICS.len());
    // Every metric row of the table says no change.
    let rows: Vec<&str> =
        out.lines().filter(|l| l.starts_with("  ") && !l.contains("A: runA")).collect();
    assert_eq!(rows.len(), checked, "{out}");
    for r in rows {
        let cells: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(cells.last(), Some(&"+0.00%"), "{r}");
        let diff = cells[cells.len() - 2];
        assert!(diff.starts_with('+') && diff[1..].parse::<f64>() == Ok(0.0), "{r}");
    }
}

#[test]
fn bad_folders_are_errors_that_name_the_path_and_the_problem() {
    let dir = TempDir::new("compare-bad");
    let (a, b) = two_runs(dir.path());
    let d = dir.path();

    let err = run_err(d, &["compare", a, "nowhere"]);
    assert!(err.contains("nowhere") && err.contains("no such results folder"), "{err}");

    std::fs::create_dir(d.join("empty")).unwrap();
    let err = run_err(d, &["compare", "empty", b]);
    assert!(err.contains("empty/summary.json") && err.contains("missing"), "{err}");
    // A sweep's folder points at its runs.
    std::fs::create_dir(d.join("swept")).unwrap();
    std::fs::write(d.join("swept/sweep.json"), "{}").unwrap();
    let err = run_err(d, &["compare", a, "swept"]);
    assert!(
        err.contains("swept is a sweep's folder; compare two of its runs, e.g. swept/points/0"),
        "{err}"
    );
    // Runs of different lengths are compared with a note that says so.
    let scn = repo().join("scenarios/small/reno-droptail.toml").display().to_string();
    run_ok(d, &["run", &scn, "--set", "duration=1s", "--out", "short"]);
    let out = run_ok(d, &["compare", a, "short", "--out", "cmp-short"]);
    assert!(out.contains("note: the runs lasted differently long (A "), "{out}");
    assert!(!run_ok(d, &["compare", a, b, "--out", "cmp-ab"]).contains("lasted differently"));

    // A copy of A whose summary.json is edited (flows.csv stays).
    let copy = |name: &str, summary: &str| {
        std::fs::create_dir(d.join(name)).unwrap();
        std::fs::copy(d.join(a).join("flows.csv"), d.join(name).join("flows.csv")).unwrap();
        std::fs::write(d.join(name).join("summary.json"), summary).unwrap();
    };
    copy("broken", "{\"scenario\": \"x\", ");
    let err = run_err(d, &["compare", a, "broken"]);
    assert!(err.contains("broken/summary.json") && err.contains("not valid JSON"), "{err}");

    let mut s = json(&d.join(a).join("summary.json"));
    s["link"].as_object_mut().unwrap().remove("utilization");
    copy("no-util", &s.to_string());
    let err = run_err(d, &["compare", "no-util", b]);
    assert!(
        err.contains("no-util/summary.json") && err.contains("field link.utilization is missing"),
        "{err}"
    );

    let mut s = json(&d.join(a).join("summary.json"));
    s["flows"][1]["retransmits"] = Value::from("many");
    copy("bad-type", &s.to_string());
    let err = run_err(d, &["compare", a, "bad-type"]);
    assert!(
        err.contains("bad-type/summary.json")
            && err.contains("field flows[1].retransmits is \"many\", expected a number"),
        "{err}"
    );

    let mut s = json(&d.join(a).join("summary.json"));
    s["flows"][1]["id"] = Value::from(5);
    copy("other-ids", &s.to_string());
    let err = run_err(d, &["compare", a, "other-ids"]);
    assert!(err.contains("flow id 1 is in runA but not in other-ids"), "{err}");

    // A flow set of another size: a one-flow scenario.
    let toml = dir.write("one.toml", "duration = \"1s\"\nseed = 1\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"20ms\"\nbuffer = \"1bdp\"\n[[flows]]\ncc = \"reno\"\nrtt = \"100ms\"\n");
    run_ok(d, &["run", toml.to_str().unwrap(), "--out", "one"]);
    let err = run_err(d, &["compare", a, "one"]);
    assert!(
        err.contains("flow sets differ")
            && err.contains("runA has 2 flows")
            && err.contains("one has 1 flow;"),
        "{err}"
    );

    // A run without series (as `--series none` writes it) is compared by its summary,
    // with a note: no plots, and no srtt percentiles on its side.
    std::fs::create_dir(d.join("no-csv")).unwrap();
    std::fs::copy(d.join(a).join("summary.json"), d.join("no-csv/summary.json")).unwrap();
    let out = run_ok(d, &["compare", "no-csv", b, "--out", "cmp-no-csv"]);
    assert!(out.contains("note: A has no time series") && out.contains("no plots"), "{out}");
    let (without, with) =
        (json(&d.join("cmp-no-csv/compare.json")), json(&d.join("cmp-ab/compare.json")));
    assert_eq!(without["link"], with["link"], "the summaries are compared as before");
    assert_eq!(without["flows"][0]["goodput_bps"], with["flows"][0]["goodput_bps"]);
    let srtt = &without["flows"][0]["srtt_p50_ms"];
    assert!(srtt["a"].is_null() && srtt["b"].is_number(), "{srtt}");
    let files = std::fs::read_dir(d.join("cmp-no-csv")).unwrap();
    assert!(files.flatten().all(|f| !f.file_name().to_string_lossy().ends_with(".svg")));
    assert!(read(&d.join("cmp-no-csv/compare.html")).contains("A has no time series"));
    // Into the folder of a comparison with plots (cmp-ab), it replaces that comparison
    // whole and says so: no plot of the earlier runs is left beside it.
    let svgs = |dir: &str| {
        let files = std::fs::read_dir(d.join(dir)).unwrap().flatten();
        files.filter(|f| f.file_name().to_string_lossy().ends_with(".svg")).count()
    };
    assert!(svgs("cmp-ab") > 0);
    // A file of the user's there stays, whatever its name.
    std::fs::write(d.join("cmp-ab/figure-for-paper.svg"), "<svg/>").unwrap();
    std::fs::write(d.join("cmp-ab/notes.json"), "{}").unwrap();
    let out = run_ok(d, &["compare", "no-csv", b, "--out", "cmp-ab"]);
    assert!(out.contains("comparison: cmp-ab (replaced the earlier comparison there)"), "{out}");
    assert_eq!(svgs("cmp-ab"), 1, "only the user's figure is left");
    assert_eq!(read(&d.join("cmp-ab/figure-for-paper.svg")), "<svg/>");
    assert_eq!(read(&d.join("cmp-ab/notes.json")), "{}");
    assert_eq!(json(&d.join("cmp-ab/compare.json")), without);

    // A malformed line in flows.csv names the line and column.
    std::fs::create_dir(d.join("bad-csv")).unwrap();
    std::fs::copy(d.join(a).join("summary.json"), d.join("bad-csv/summary.json")).unwrap();
    let csv = read(&d.join(a).join("flows.csv"));
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    lines[3] = lines[3].replacen(',', ",x", 1);
    std::fs::write(d.join("bad-csv/flows.csv"), lines.join("\n")).unwrap();
    let err = run_err(d, &["compare", "bad-csv", b]);
    assert!(err.contains("bad-csv/flows.csv line 4: column flow is \"x"), "{err}");

    // --out never writes into a folder that is not an earlier comparison.
    let err = run_err(d, &["compare", a, b, "--out", a]);
    assert!(
        err.contains("runA is a cclab results folder (it has summary.json), not a compare folder"),
        "{err}"
    );
    assert!(!d.join(a).join("compare.json").exists());
}

#[test]
fn many_flows_are_all_in_compare_json_and_the_table_is_cut() {
    let dir = TempDir::new("compare-many");
    let d = dir.path();
    let toml = dir.write("many.toml", "duration = \"1s\"\nseed = 1\n[bottleneck]\nrate = \"50Mbps\"\ndelay = \"10ms\"\nbuffer = \"1bdp\"\n[[flows]]\ncc = \"reno\"\nrtt = \"40ms\"\ncount = 30\n");
    let toml = toml.to_str().unwrap();
    run_ok(d, &["run", toml, "--out", "a"]);
    run_ok(d, &["run", toml, "--set", "flows[0].cc=cubic", "--out", "b"]);
    let out = run_ok(d, &["compare", "a", "b", "--out", "cmp"]);
    let cmp = json(&d.join("cmp/compare.json"));
    assert_eq!(cmp["flows"].as_array().unwrap().len(), 30);
    assert_eq!(cmp["flows"][29]["id"].as_u64(), Some(29));
    assert_eq!(out.lines().filter(|l| l.starts_with("flow ")).count(), 20, "{out}");
    assert!(
        out.contains("(the first 20 of 30 flows are shown; every flow is in compare.json)"),
        "{out}"
    );
    // The smoothed RTT's percentiles are read from the series of the flows the table
    // lists only (the others' would cost a read of every flow's series).
    let srtt = |id: usize| cmp["flows"][id]["srtt_p50_ms"]["a"].clone();
    let want = srtt_percentiles_of(&d.join("a"), 19, &[0.5])[0];
    close(srtt(19).as_f64().expect("flow 19's srtt p50"), want, 3, "flow 19 srtt p50");
    assert!(srtt(20).is_null() && srtt(29).is_null(), "{} {}", srtt(20), srtt(29));
    let svg = read(&d.join("cmp/cwnd.svg"));
    assert_eq!(svg.matches("<polyline").count(), 16);
    assert!(svg.contains("(first 8 of 30 flows)"));
    // An earlier comparison in --out is replaced.
    run_ok(d, &["compare", "b", "a", "--out", "cmp"]);
    let again = json(&d.join("cmp/compare.json"));
    assert_eq!(again.pointer("/a/name").and_then(Value::as_str), Some("b"));
}
