//! `cclab run` on a file with `[sweep]`: the results layout, byte-identical tables for
//! the same sweep whatever the parallelism, resumption after SIGKILL with nothing lost
//! and nothing run twice, one failing run among good ones, and bad sweeps refused before
//! anything runs.

mod common;
use common::*;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Eight short runs: 2 algorithms x 2 tied RTT pairs x 2 seeds, with random loss so
/// that the seeds differ.
const SWEEP: &str = r#"name = "sw"
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
loss = 0.001
[[flows]]
cc = "cubic"
rtt = "20ms"
[[flows]]
cc = "reno"
rtt = "20ms"
[sweep]
"flows[0].cc" = ["cubic", "bic"]
"flows[0].rtt, flows[1].rtt" = ["20ms", ["40ms", "80ms"]]
seeds = 2
"#;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The cells of column `name` in a sweep folder's sweep.csv, row by row (empty kept).
fn sweep_column(res: &Path, name: &str) -> Vec<String> {
    let csv = read(&res.join("sweep.csv"));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = header.iter().position(|c| *c == name).unwrap_or_else(|| panic!("no {name}"));
    lines.map(|l| l.split(',').nth(col).expect("a cell").to_string()).collect()
}

#[test]
fn a_sweep_writes_a_results_folder_per_run_and_the_tables() {
    let dir = TempDir::new("sweep-files");
    dir.write("s.toml", SWEEP);
    let out = run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let res = dir.path().join("res");
    for f in ["sweep.json", "sweep.csv", "sweep.parquet", "sweep.html"] {
        assert!(res.join(f).is_file(), "{f} missing");
    }
    for k in 0..8 {
        let p = res.join("points").join(k.to_string());
        for f in ["summary.json", "perf.json", "flows.csv", "report.html", "point.json"] {
            assert!(p.join(f).is_file(), "points/{k}/{f} missing");
        }
    }
    // point.json says which run it is; run 5 is point 2 (bic, 20 ms), seed 2.
    let pj = read(&res.join("points/5/point.json"));
    for part in
        ["\"run\": 5", "\"point\": 2", "\"seed\": 2", "\"value\": \"bic\"", "\"value\": \"20ms\""]
    {
        assert!(pj.contains(part), "{part} in {pj}");
    }
    // So does its report.html, which a reader may open alone.
    let report5 = read(&res.join("points/5/report.html"));
    assert!(report5.contains("<p>Sweep point 2, seed 2: flows[0].cc = bic"), "{report5}");
    let summary5 = read(&res.join("points/5/summary.json"));
    assert!(summary5.contains("\"seed\": 2") && summary5.contains("\"cc\": \"bic\""), "{summary5}");

    // One row per run and flow: the header, then 8 runs x 2 flows.
    let csv = read(&res.join("sweep.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 16, "{csv}");
    assert!(
        lines[0].starts_with("run,point,seed,flows[0].cc,flows[0].rtt,flows[1].rtt,"),
        "{}",
        lines[0]
    );
    for col in
        ["link.utilization", "fairness.jain", "flow.name", "flow.goodput_bps", "flow.rtt_ms.p99"]
    {
        assert!(lines[0].split(',').any(|c| c == col), "column {col} missing: {}", lines[0]);
    }
    assert!(lines[11].starts_with("5,2,2,bic,20ms,20ms,"), "{}", lines[11]);
    // Seeds differ under random loss: the two seeds of point 0 give different rows.
    assert_ne!(
        lines[1].split_once(",0,cubic#0").map(|x| x.1),
        lines[3].split_once(",0,cubic#0").map(|x| x.1)
    );
    // The page plots every metric against both swept keys.
    let html = read(&res.join("sweep.html"));
    assert!(
        html.contains("Against flows[0].cc") && html.contains("Against flows[0].rtt, flows[1].rtt")
    );
    assert!(html.contains("flow.goodput_bps against flows[0].cc"));
    // Group 0 is CUBIC in some runs and BIC in others: a group's chart has a line per
    // group name, never one line mixing the two.
    let groups = &html[html.find("fairness.groups[0].share against flows[0].rtt").unwrap()..];
    let legend = &groups[..groups.find("</svg>").unwrap()];
    assert!(legend.contains("=cubic cubic") && legend.contains("=bic bic"), "{legend}");
    // The terminal summary lists every point.
    assert!(out.contains("point 3  flows[0].cc=bic flows[0].rtt=40ms flows[1].rtt=80ms"), "{out}");
    assert!(out.contains("sweep: 8 runs (8 now, 0 done before, 0 failed)"), "{out}");
}

/// A sweep of cross traffic: its per-direction load is a run-level column of sweep.csv,
/// the same figure as each point's summary.json (the per-source list stays out).
#[test]
fn a_sweep_table_has_the_cross_traffics_load_per_direction() {
    let dir = TempDir::new("sweep-cross");
    dir.write(
        "s.toml",
        r#"duration = "2s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
[[flows]]
cc = "cubic"
rtt = "20ms"
[[cross]]
kind = "cbr"
rate = "1Mbps"
[sweep]
"cross[0].rate" = ["1Mbps", "4Mbps"]
"#,
    );
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let csv = read(&dir.path().join("res/sweep.csv"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).expect(name);
    let per_source =
        |c: &&str| c.starts_with("cross.") || c.starts_with("cross[") && *c != "cross[0].rate";
    assert!(!header.iter().any(per_source), "the swept field is the only cross[...] column: {csv}");
    for (row, line) in csv.lines().skip(1).enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        let summary: serde_json::Value =
            serde_json::from_str(&read(&dir.path().join(format!("res/points/{row}/summary.json"))))
                .unwrap();
        let load = &summary["cross_load"]["forward"];
        for key in ["sources", "offered_bps", "delivered_bps"] {
            let cell = cells[column(&format!("cross_load.forward.{key}"))];
            assert_eq!(cell, load[key].to_string(), "run {row}: {key}");
        }
        // The load over the run is the source's bytes over the run.
        let sent = summary["cross"][0]["sent_bytes"].as_f64().unwrap();
        assert_eq!(load["offered_bps"].as_f64().unwrap(), (sent * 8.0 / 2.0).round());
    }
    let offered = |row: usize| {
        let line = csv.lines().nth(row + 1).unwrap();
        line.split(',').nth(column("cross_load.forward.offered_bps")).unwrap().parse::<f64>()
    };
    assert!((offered(0).unwrap() - 1e6).abs() < 2e4 && (offered(1).unwrap() - 4e6).abs() < 8e4);
}

#[test]
fn the_same_sweep_gives_the_same_bytes_whatever_the_number_of_jobs() {
    let dir = TempDir::new("sweep-determinism");
    dir.write("s.toml", SWEEP);
    run_ok(dir.path(), &["run", "s.toml", "--out", "a", "--jobs", "1"]);
    run_ok(dir.path(), &["run", "s.toml", "--out", "b", "--jobs", "3"]);
    for f in
        ["sweep.csv", "sweep.html", "sweep.json", "points/6/summary.json", "points/6/flows.csv"]
    {
        assert_eq!(read(&dir.path().join("a").join(f)), read(&dir.path().join("b").join(f)), "{f}");
    }
    let pa = std::fs::read(dir.path().join("a/sweep.parquet")).unwrap();
    assert_eq!(pa, std::fs::read(dir.path().join("b/sweep.parquet")).unwrap());
    // Another first seed changes the table.
    run_ok(dir.path(), &["run", "s.toml", "--out", "c", "--seed", "9"]);
    assert_ne!(read(&dir.path().join("a/sweep.csv")), read(&dir.path().join("c/sweep.csv")));
}

/// Runs long enough (about a second of wall time each on this machine) to be killed
/// in the middle of the sweep.
const SLOW_SWEEP: &str = r#"name = "slow"
duration = "30s"
[bottleneck]
rate = "1Gbps"
delay = "10ms"
[[flows]]
cc = "cubic"
rtt = "40ms"
count = 2
[sweep]
"bottleneck.loss" = [0.0, 0.0001, 0.0002, 0.0003, 0.0004, 0.0005, 0.0006, 0.0007]
"#;

fn done_runs(points: &Path) -> Vec<usize> {
    let mut v: Vec<usize> = std::fs::read_dir(points)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                .filter(|k: &usize| points.join(k.to_string()).join("point.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_sweep_killed_midway_resumes_with_nothing_lost_and_nothing_run_twice() {
    let dir = TempDir::new("sweep-resume");
    dir.write("s.toml", SLOW_SWEEP);
    let points = dir.path().join("res/points");
    let mut child = cclab()
        .current_dir(dir.path())
        .args(["run", "s.toml", "--out", "res", "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while done_runs(&points).len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(120), "no run finished in 120 s");
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before it could be killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no clean-up
    child.wait().unwrap();
    let before = done_runs(&points);
    assert!(before.len() >= 2 && before.len() < 8, "killed too late: {before:?}");
    let perf_before: Vec<String> =
        before.iter().map(|k| read(&points.join(format!("{k}/perf.json")))).collect();
    // What a run killed while staged leaves, for a run that is done by now (the PID is
    // beyond Linux's largest, so its writer is gone): the resume removes it too.
    std::fs::create_dir(points.join(format!(".{}.partial-4194305-9", before[0]))).unwrap();

    let out = run_ok(dir.path(), &["run", "s.toml", "--out", "res", "--jobs", "2"]);
    let now = 8 - before.len();
    assert!(
        out.contains(&format!("sweep: 8 runs ({now} now, {} done before, 0 failed)", before.len())),
        "{out}"
    );
    // Nothing run twice: perf.json holds wall-clock figures, so a rerun would change it.
    for (k, perf) in before.iter().zip(&perf_before) {
        assert_eq!(&read(&points.join(format!("{k}/perf.json"))), perf, "run {k} was run again");
    }
    // Nothing lost: every run is there, no staging folder is left, and the table is the
    // one a sweep that was never interrupted writes.
    assert_eq!(done_runs(&points), (0..8).collect::<Vec<_>>());
    let leftovers: Vec<String> = std::fs::read_dir(&points)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "staging folders left: {leftovers:?}");
    run_ok(dir.path(), &["run", "s.toml", "--out", "fresh"]);
    assert_eq!(read(&dir.path().join("res/sweep.csv")), read(&dir.path().join("fresh/sweep.csv")));
    // A third run has nothing left to do.
    let out = run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    assert!(out.contains("sweep: 8 runs (0 now, 8 done before, 0 failed)"), "{out}");
}

#[test]
fn a_changed_sweep_reruns_only_the_runs_whose_scenario_changed() {
    let dir = TempDir::new("sweep-changed");
    dir.write("s.toml", SWEEP);
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    // Same file, shorter runs: every run's scenario differs, so all eight run again.
    let out = run_ok(dir.path(), &["run", "s.toml", "--out", "res", "--set", "duration=2s"]);
    assert!(out.contains("(8 now, 0 done before"), "{out}");
    assert!(read(&dir.path().join("res/points/0/summary.json")).contains("\"duration_s\": 2"));
}

/// The scenario names its trace by path: a trace file changed under the same name makes
/// every run new, or a resumed sweep would give the old trace's results.
#[test]
fn a_trace_changed_under_its_name_is_run_again_and_the_rerun_is_told() {
    let dir = TempDir::new("sweep-trace");
    let trace = |name: &str| std::fs::read(repo().join("scenarios/traces").join(name)).unwrap();
    std::fs::write(dir.path().join("link.trace"), trace("5.65mbps.trace")).unwrap();
    dir.write(
        "t.toml",
        "duration = \"2s\"\n[bottleneck]\ntrace = \"link.trace\"\ndelay = \"10ms\"\n[[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\n[sweep]\nseeds = 2\n",
    );
    let args = ["run", "t.toml", "--out", "res", "--series", "none"];
    let goodput = || read(&dir.path().join("res/sweep.csv"));
    run_ok(dir.path(), &args);
    let before = goodput();
    let o = run_in(dir.path(), &args);
    assert!(stdout(&o).contains("(0 now, 2 done before"), "{}", stdout(&o));
    assert!(!stderr(&o).contains("note:"), "nothing replaced, nothing said: {}", stderr(&o));
    std::fs::write(dir.path().join("link.trace"), trace("0.57mbps-poisson.trace")).unwrap();
    let o = run_in(dir.path(), &args);
    assert!(stdout(&o).contains("(2 now, 0 done before"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("note: earlier runs in res: 2 runs of another scenario (or grid) are run again over theirs"),
        "{}",
        stderr(&o)
    );
    assert_ne!(goodput(), before, "the new trace's results");
}

#[test]
fn a_set_of_a_swept_field_is_warned_about() {
    let dir = TempDir::new("sweep-set-swept");
    dir.write("s.toml", SWEEP);
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res", "--set", "flows[0].cc=vegas"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: --set flows[0].cc: the sweep sets flows[0].cc in every run"),
        "{err}"
    );
    // The warning's hint, followed, changes the swept list (tied keys as written).
    let hint = "--set 'sweep.\"flows[0].rtt, flows[1].rtt\"=[...]'";
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res", "--set", "flows[1].rtt=90ms"]);
    assert!(stderr(&o).contains(hint), "{}", stderr(&o));
    let set = "sweep.\"flows[0].rtt, flows[1].rtt\"=[[\"30ms\", \"90ms\"]]";
    let o = run_in(
        dir.path(),
        &["run", "s.toml", "--out", "res", "--set", set, "--set", "duration=2s"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(stdout(&o).contains("(4 now, 0 done before"), "{}", stdout(&o));
    assert!(read(&dir.path().join("res/sweep.csv")).contains("30ms,90ms"));
}

#[test]
fn a_smaller_sweep_in_the_same_folder_removes_the_runs_it_no_longer_has() {
    let dir = TempDir::new("sweep-shrunk");
    dir.write("s.toml", SWEEP);
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res", "--set", "sweep.seeds=1"]);
    assert!(stdout(&o).contains("sweep: 4 runs"), "{}", stdout(&o));
    // Said, not silent: (seeds 1 and 2 of each point become seed 1 of the new points,
    // so runs 1 to 3 are other runs now)
    let note = "note: earlier runs in res: 4 runs beyond this sweep's last were removed; 3 runs of another scenario (or grid) are run again over theirs";
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    // Runs 4 to 7 of the eight-run sweep would contradict the new sweep.json.
    assert_eq!(done_runs(&dir.path().join("res/points")), [0, 1, 2, 3]);
    assert!(!dir.path().join("res/points/4").exists());
    assert!(read(&dir.path().join("res/sweep.json")).contains("\"runs\": 4"));
}

#[test]
fn runs_written_by_another_build_are_run_again() {
    let dir = TempDir::new("sweep-build");
    dir.write("s.toml", SWEEP);
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let points = dir.path().join("res/points");
    // Each run records the build that wrote it: a hash of the sources.
    let perf = read(&points.join("3/perf.json"));
    let build = perf
        .split("\"build\": \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no build in perf.json: {perf}"));
    assert!(build.len() == 16 && build.chars().all(|c| c.is_ascii_hexdigit()), "{build}");
    // Runs 0 and 5 as an older cclab would have left them: same scenario, other sources.
    for k in [0, 5] {
        let file = points.join(format!("{k}/perf.json"));
        let old = read(&file).replace(build, "0123456789abcdef");
        std::fs::write(&file, old).unwrap();
    }
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res"]);
    assert!(
        stdout(&o).contains("sweep: 8 runs (2 now, 6 done before, 0 failed)"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("2 runs written by another build of cclab are run again"),
        "the rerun says why: {}",
        stderr(&o)
    );
    assert!(read(&points.join("5/perf.json")).contains(build));
}

#[test]
fn one_failing_run_is_reported_and_the_others_finish() {
    let dir = TempDir::new("sweep-failure");
    dir.write("s.toml", SWEEP);
    // Run 2's folder is taken by something that is not a results folder: cclab refuses
    // to replace it, so that run fails when it comes to write its results.
    std::fs::create_dir_all(dir.path().join("res/points/2")).unwrap();
    dir.write("res/sweep.json", "{}\n");
    dir.write("res/points/2/notes.txt", "mine\n");
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("run 2 (point 1, seed 1: flows[0].cc = cubic, flows[0].rtt = 40ms, flows[1].rtt = 80ms) failed:")
            && err.contains("is not a cclab results folder"),
        "{err}"
    );
    assert!(err.contains("error: 1 of 8 runs failed (runs 2;"), "{err}");
    assert!(
        read(&dir.path().join("res/points/2/notes.txt")) == "mine\n",
        "the user's file survives"
    );
    assert_eq!(done_runs(&dir.path().join("res/points")), [0, 1, 3, 4, 5, 6, 7]);
    // The tables hold the seven good runs (14 rows) and the page names the failure.
    assert_eq!(read(&dir.path().join("res/sweep.csv")).lines().count(), 1 + 14);
    assert!(read(&dir.path().join("res/sweep.html")).contains("1 runs failed"));
    // Once the obstacle is gone, a rerun runs only that one.
    std::fs::remove_dir_all(dir.path().join("res/points/2")).unwrap();
    let out = run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    assert!(out.contains("(1 now, 7 done before, 0 failed)"), "{out}");
    assert_eq!(read(&dir.path().join("res/sweep.csv")).lines().count(), 1 + 16);
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let dir = TempDir::new("sweep-bad");
    let bad = SWEEP.replace("[\"cubic\", \"bic\"]", "[\"cubic\", \"cubik\"]");
    dir.write("s.toml", &bad);
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: s.toml:14: flows[0].cc = \"cubik\": unknown algorithm")
            && err.contains("(in the sweep point flows[0].cc = \"cubik\""),
        "{err}"
    );
    assert!(!dir.path().join("res").exists(), "nothing written");
    // A folder that is neither empty nor a sweep's is never written into.
    dir.write("s.toml", SWEEP);
    std::fs::create_dir_all(dir.path().join("res")).unwrap();
    dir.write("res/mine.txt", "x");
    let o = run_in(dir.path(), &["run", "s.toml", "--out", "res"]);
    assert!(stderr(&o).contains("is not a cclab sweep folder"), "{}", stderr(&o));
    let o = run_in(dir.path(), &["run", "s.toml", "--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn sweep_parquet_holds_the_csv_table() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = TempDir::new("sweep-parquet");
    dir.write("s.toml", SWEEP);
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let csv = read(&dir.path().join("res/sweep.csv"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let file = std::fs::File::open(dir.path().join("res/sweep.parquet")).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), 16);
    let schema = meta.file_metadata().schema_descr();
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, header);
    // Cell by cell, every row reads back as the CSV wrote it.
    let rows: Vec<String> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            r.unwrap()
                .get_column_iter()
                .map(|(_, f)| match f {
                    parquet::record::Field::Str(s) => s.clone(),
                    parquet::record::Field::Null => String::new(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let csv_rows: Vec<&str> = csv.lines().skip(1).collect();
    for (p, c) in rows.iter().zip(&csv_rows) {
        let same = p.split(',').zip(c.split(',')).all(|(a, b)| {
            a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
        });
        assert!(same, "parquet row {p}\n    csv row {c}");
    }
    // pyarrow (and so pandas) reads it too, where it is installed.
    let py = std::process::Command::new("python3")
        .args(["-c", "import pyarrow.parquet as pq, sys; t = pq.read_table(sys.argv[1]); print(t.num_rows, t.num_columns)"])
        .arg(dir.path().join("res/sweep.parquet"))
        .output();
    match py {
        Ok(o) if o.status.success() => {
            assert_eq!(stdout(&o).trim(), format!("16 {}", header.len()));
        }
        _ => eprintln!("pyarrow not installed: skipped reading sweep.parquet with pyarrow"),
    }
}

#[test]
fn a_sweep_over_the_test_flows_algorithm_gives_the_bandwidth_stolen_rate() {
    let dir = TempDir::new("sweep-stolen");
    dir.write(
        "s.toml",
        r#"duration = "20s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "0.5bdp"
[[flows]]
cc = "cubic"
rtt = "40ms"
[[flows]]
cc = "cubic"
rtt = "40ms"
count = 2
[metrics]
reference = "cubic"
[sweep]
"flows[0].cc" = ["cubic", "reno", "scalable"]
"#,
    );
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let csv = read(&dir.path().join("res/sweep.csv"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col =
        |name: &str| header.iter().position(|c| *c == name).unwrap_or_else(|| panic!("{name}"));
    let (rate, run, group, goodput) =
        (col("bandwidth_stolen_rate"), col("run"), col("flow.group"), col("flow.goodput_bps"));
    assert!(rate < col("flow.id"), "a run-level column");
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // T: the CUBIC group's mean goodput in each run.
    let mean_cubic = |k: &str| {
        let g: Vec<f64> = rows
            .iter()
            .filter(|r| r[run] == k && r[group] == "cubic")
            .map(|r| r[goodput].parse::<f64>().unwrap())
            .collect();
        g.iter().sum::<f64>() / g.len() as f64
    };
    let t0 = mean_cubic("0");
    for r in &rows {
        let expected = (t0 - mean_cubic(r[run])) / t0;
        let got: f64 = r[rate].parse().unwrap();
        assert!((got - expected).abs() < 1e-6, "run {}: {got} vs {expected}", r[run]);
    }
    assert!(rows.iter().filter(|r| r[run] == "0").all(|r| r[rate] == "0"));
}

/// A metric that some rows lack is plotted all the same, with gaps: a finite transfer's
/// completion time, which the bulk flow beside it has none of, is what a sweep of
/// transfer sizes is for (it used to be left out of sweep.html, as were ratios to a
/// reference flow, which has none of its own).
#[test]
fn sweep_html_plots_a_metric_that_some_rows_lack() {
    let dir = TempDir::new("sweep-gaps");
    dir.write(
        "s.toml",
        r#"duration = "5s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
[[flows]]
cc = "cubic"
rtt = "40ms"
[[flows]]
cc = "reno"
rtt = "40ms"
bytes = "100KB"
[sweep]
"flows[1].bytes" = ["100KB", "1MB"]
"#,
    );
    run_ok(dir.path(), &["run", "s.toml", "--out", "res"]);
    let cells = sweep_column(&dir.path().join("res"), "flow.completion_s");
    let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
    assert!(
        cells.contains(&"") && cells.iter().filter(|c| !c.is_empty()).count() == 2,
        "{cells:?}"
    );
    let html = read(&dir.path().join("res/sweep.html"));
    assert!(html.contains("flow.completion_s against flows[1].bytes"), "not plotted");
    assert!(!html.contains("NaN"), "a missing value is a gap, not a point");
}
