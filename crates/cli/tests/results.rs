//! The results folder: every file is there with the documented columns and keys, runs
//! are byte-for-byte reproducible, overrides reach the results, and a failing run never
//! damages earlier results.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn small(name: &str) -> String {
    repo().join("scenarios/small").join(name).display().to_string()
}

/// Positions of `keys` in `text` must be increasing (the documented key order).
fn in_order(text: &str, keys: &[&str]) {
    let mut last = 0;
    for k in keys {
        let pat = format!("\"{k}\":");
        let at = text[last..]
            .find(&pat)
            .unwrap_or_else(|| panic!("key {k} missing or out of order in:\n{text}"));
        last += at + pat.len();
    }
}

#[test]
fn a_run_writes_every_result_file_with_the_documented_fields() {
    let dir = TempDir::new("files");
    let out = run_ok(dir.path(), &["run", &small("reno-droptail.toml"), "--out", "res"]);
    let res = dir.path().join("res");
    for f in RESULT_FILES {
        assert!(res.join(f).is_file(), "{f} missing");
    }
    // The terminal table and the perf line.
    assert!(
        out.contains("goodput Mbit/s") && out.contains("RTT p50 ms") && out.contains("share"),
        "{out}"
    );
    assert!(
        out.contains("Jain's fairness index")
            && out.contains("events/s")
            && out.contains("packets/s"),
        "{out}"
    );
    assert!(out.contains("reno#0") && out.contains("reno#1"), "{out}");

    let summary = read(&res.join("summary.json"));
    in_order(
        &summary,
        &[
            "scenario",
            "seed",
            "duration_s",
            "link",
            "rate_bps",
            "utilization",
            "delivered_packets",
            "drops",
            "mean_queue_packets",
            "flows",
        ],
    );
    in_order(
        &summary,
        &[
            "flows",
            "id",
            "name",
            "cc",
            "goodput_bps",
            "delivered_bytes",
            "retransmits",
            "timeouts",
            "probes",
            "rtt_ms",
            "mean",
            "p50",
            "p95",
            "p99",
            "group",
            "send_rate_bps",
            "mean_cwnd_pkts",
            "completion_s",
            "window_goodput_bps",
            "throughput_ratio",
            "fairness",
            "jain",
            "min_max_ratio",
            "synchronisation",
            "reference",
            "groups",
            "name",
            "flows",
            "goodput_bps",
            "share",
            "throughput_ratio",
        ],
    );
    assert!(
        summary.contains("\"scenario\": \"reno-droptail\"")
            && summary.contains("\"duration_s\": 5,")
            && summary.contains("\"rate_bps\": 10000000,"),
        "{summary}"
    );
    // Two flows and one group ("reno").
    assert_eq!(summary.matches("\"goodput_bps\"").count(), 3, "{summary}");
    assert!(out.contains("send Mbit/s") && out.contains("mean cwnd"), "{out}");
    assert!(
        out.contains("fairness: min/max ratio") && out.contains("loss synchronisation"),
        "{out}"
    );
    let perf = read(&res.join("perf.json"));
    in_order(
        &perf,
        &[
            "simulated_s",
            "wall_s",
            "events",
            "events_per_s",
            "bottleneck_packets",
            "packets_per_s",
            "build",
        ],
    );

    let flows = read(&res.join("flows.csv"));
    let mut header =
        "time_s,flow,cwnd_pkts,ssthresh_pkts,srtt_ms,inflight_pkts,delivered_bytes".to_string();
    let reno = cclab_cc::Algorithm::new("reno").unwrap();
    cclab_cc::CongestionControl::inspect(&reno, &mut |name, _| {
        header.push_str(&format!(",cc_{}", name.trim_start_matches("cc_")))
    });
    assert_eq!(flows.lines().next(), Some(header.as_str()));
    // Two flows sampled every 10 ms for 5 s: about 500 rows each.
    let rows = flows.lines().count() - 1;
    assert!((900..=1004).contains(&rows), "{rows} rows");
    let last = flows.lines().rfind(|l| l.split(',').nth(1) == Some("0")).unwrap();
    let delivered: u64 = last.split(',').nth(6).unwrap().parse().unwrap();
    assert!(delivered > 1_000_000, "flow 0 delivered {delivered} bytes in 5 s at 10 Mbit/s");
    let queue = read(&res.join("queue.csv"));
    assert_eq!(queue.lines().next(), Some("time_s,packets,bytes,drops"));
    assert!(queue.lines().count() > 400);

    for svg in ["cwnd.svg", "goodput.svg", "queue.svg", "rtt.svg"] {
        let s = read(&res.join(svg));
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{svg}");
        assert!(s.contains("time (s)"), "{svg} has a labelled time axis");
        let lines = s.matches("<polyline").count();
        assert_eq!(lines, if svg == "queue.svg" { 1 } else { 2 }, "{svg}: one line per flow");
        assert!(s.contains("points=\"") && !s.contains("points=\"\""), "{svg} has data");
    }
    let html = read(&res.join("report.html"));
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(html.contains("<table>") && html.contains("reno#1"));
    // The terminal's columns: the report's table is built from the same rows.
    for head in ["send Mbit/s", "mean cwnd", "share"] {
        assert!(html.contains(&format!("<th>{head}</th>")), "{head}");
    }
    // And its fairness line.
    assert!(html.contains("<p>fairness: min/max ratio "), "{html}");
}

#[test]
fn same_scenario_and_seed_give_the_same_bytes() {
    let dir = TempDir::new("det");
    for scn in ["tahoe-red-loss.toml", "finite-changes.toml"] {
        run_ok(dir.path(), &["run", &small(scn), "--out", "one"]);
        run_ok(dir.path(), &["run", &small(scn), "--out", "two"]);
        // Everything but perf.json depends only on the scenario and seed.
        for f in RESULT_FILES.iter().filter(|f| **f != "perf.json") {
            let (a, b) = (
                std::fs::read(dir.path().join("one").join(f)).unwrap(),
                std::fs::read(dir.path().join("two").join(f)).unwrap(),
            );
            assert!(a == b, "{scn}: {f} differs between two runs with the same seed");
        }
    }
}

#[test]
fn a_different_seed_changes_a_random_run() {
    let dir = TempDir::new("seed");
    let scn = small("tahoe-red-loss.toml");
    run_ok(dir.path(), &["run", &scn, "--out", "s3"]);
    run_ok(dir.path(), &["run", &scn, "--seed", "4", "--out", "s4"]);
    let (a, b) = (read(&dir.path().join("s3/flows.csv")), read(&dir.path().join("s4/flows.csv")));
    assert_ne!(a, b, "random loss with another seed must give another run");
    assert!(read(&dir.path().join("s4/summary.json")).contains("\"seed\": 4,"));
}

#[test]
fn overrides_reach_the_results() {
    let dir = TempDir::new("set");
    run_ok(
        dir.path(),
        &[
            "run",
            &small("reno-droptail.toml"),
            "--out",
            "r",
            "--set",
            "duration=1s",
            "--set",
            "flows[1].cc=tahoe",
            "--set",
            "name=renamed",
            "--seed",
            "9",
        ],
    );
    let s = read(&dir.path().join("r/summary.json"));
    for want in
        ["\"scenario\": \"renamed\"", "\"seed\": 9,", "\"duration_s\": 1,", "\"cc\": \"tahoe\""]
    {
        assert!(s.contains(want), "{want} not in {s}");
    }
}

/// A flow that never had an RTT sample (it starts 50 ms before the end, with a 100 ms
/// RTT) has no RTT: null in summary.json, "-" in the table and the report, not 0 ms.
#[test]
fn a_flow_without_an_rtt_sample_has_no_rtt_figures() {
    let dir = TempDir::new("no-rtt");
    let table = run_ok(
        dir.path(),
        &["run", "--set", "duration=2s", "--set", "flows[1].start=1.95s", "--out", "r"],
    );
    let s: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("r/summary.json"))).unwrap();
    let rtt = |i: usize| s["flows"][i]["rtt_ms"].clone();
    assert!(rtt(0)["p50"].as_f64().is_some_and(|x| x > 100.0), "flow 0: {}", rtt(0));
    for key in ["mean", "p50", "p95", "p99"] {
        assert!(rtt(1)[key].is_null(), "flow 1's rtt_ms.{key}: {}", rtt(1));
    }
    let row = table.lines().find(|l| l.starts_with("1 ")).expect("flow 1's row");
    assert!(row.contains("      -       -       -"), "{row}");
    let report = read(&dir.path().join("r/report.html"));
    assert!(report.contains("<td>-</td><td>-</td><td>-</td><td>"), "{report}");
}

/// Past the table's 20 flows, the line that sums up the rest counts the flows that
/// delivered nothing, which would otherwise show only in summary.json.
#[test]
fn the_flows_past_the_table_that_delivered_nothing_are_counted() {
    let dir = TempDir::new("idle-flows");
    let table = run_ok(
        dir.path(),
        &[
            "run",
            "--set",
            "duration=2s",
            "--set",
            "flows[0].count=20",
            "--set",
            "flows[1].count=6",
            "--set",
            "flows[1].start=1.95s",
            "--out",
            "r",
        ],
    );
    let s: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("r/summary.json"))).unwrap();
    let flows = s["flows"].as_array().unwrap();
    let idle = flows[20..].iter().filter(|f| f["delivered_bytes"] == 0).count();
    assert_eq!(idle, 6, "the late flows' handshakes take 100 ms: {flows:?}");
    assert!(
        table.contains("... and 6 more flows (0.000 MB delivered in all, 0.0% of the flows' bytes; 6 of them delivered nothing)"),
        "{table}"
    );
}

/// A flow's `hz` reaches its algorithm's clock: CUBIC's epoch starts (`cc_epoch_start`,
/// jiffies over the flow's HZ) fall on whole 4 ms jiffies at 250, and not all of them do
/// at the default 1000; and the run is another one.
#[test]
fn a_flows_hz_is_the_jiffies_its_cubic_counts() {
    let dir = TempDir::new("hz");
    let scn = small("cubic-codel-changes.toml");
    let epochs = |out: &str, set: &[&str]| -> Vec<f64> {
        let mut args = vec!["run", &scn, "--out", out];
        args.extend(set);
        run_ok(dir.path(), &args);
        let mut v: Vec<f64> = flow_column(&dir.path().join(out), 0, "cc_epoch_start")
            .iter()
            .filter(|e| !e.is_empty())
            .map(|e| e.parse::<f64>().unwrap())
            .filter(|&e| e > 0.0)
            .collect();
        v.dedup();
        v
    };
    let on_jiffy = |e: f64, hz: f64| ((e * hz) - (e * hz).round()).abs() < 1e-6;
    let at_250 = epochs("hz250", &["--set", "flows[0].hz=250"]);
    let at_1000 = epochs("hz1000", &[]);
    assert!(at_250.len() >= 3 && at_1000.len() >= 3, "{at_250:?} {at_1000:?}");
    assert!(at_250.iter().all(|&e| on_jiffy(e, 250.0)), "{at_250:?}");
    assert!(at_1000.iter().any(|&e| !on_jiffy(e, 250.0)), "{at_1000:?}");
    assert_ne!(
        read(&dir.path().join("hz250/summary.json")),
        read(&dir.path().join("hz1000/summary.json"))
    );
}

/// A flow's `tick_phase` reaches the run: two flows at RTT ratio 8 share the link
/// otherwise with half a tick more (the drops fall elsewhere), and a phase of zero is the
/// default, byte for byte. Where the ticks then fall is `TcpState::jiffies_at`'s test.
#[test]
fn a_flows_tick_phase_moves_the_run_and_zero_is_the_default() {
    let dir = TempDir::new("tick-phase");
    let scn = repo().join("scenarios/fidelity/rtt8-cubic-cubic.toml");
    let scn = scn.to_str().unwrap();
    let summary = |out: &str, phase: Option<&str>| -> String {
        let sets: Vec<String> = match phase {
            Some(p) => (0..2).map(|i| format!("flows[{i}].tick_phase={p}")).collect(),
            None => vec![],
        };
        let mut args = vec!["run", scn, "--set", "duration=10s", "--out", out];
        for s in &sets {
            args.extend(["--set", s]);
        }
        run_ok(dir.path(), &args);
        read(&dir.path().join(out).join("summary.json"))
    };
    let default = summary("default", None);
    assert_eq!(summary("zero", Some("0us")), default);
    let half = summary("half", Some("500us"));
    let goodput = |text: &str, flow: usize| -> f64 {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["flows"][flow]["goodput_bps"].as_f64().unwrap()
    };
    let moved = (goodput(&half, 1) - goodput(&default, 1)).abs() / goodput(&default, 1);
    assert!(moved > 0.02, "the 80 ms flow's goodput moved by {moved:.3}");
}

#[test]
fn the_default_scenario_runs_without_a_file_into_results_name() {
    let dir = TempDir::new("default");
    let out = run_ok(dir.path(), &["run", "--set", "duration=2s"]);
    let s = read(&dir.path().join("results/default/summary.json"));
    assert!(s.contains("\"cc\": \"cubic\"") && s.contains("\"cc\": \"reno\""), "{s}");
    assert!(out.contains("results: results/default"), "{out}");
    // CUBIC's internal variables are columns of flows.csv, empty for the Reno flow.
    let csv = read(&dir.path().join("results/default/flows.csv"));
    assert!(csv.lines().next().unwrap().contains(",cc_w_max,"), "{}", csv.lines().next().unwrap());
    let reno_row = csv.lines().find(|l| l.split(',').nth(1) == Some("1")).unwrap();
    assert!(reno_row.ends_with(",,"), "{reno_row}");
}

#[test]
fn a_failed_run_leaves_earlier_results_intact() {
    let dir = TempDir::new("intact");
    let scn = small("reno-droptail.toml");
    run_ok(dir.path(), &["run", &scn, "--out", "keep"]);
    let before: Vec<Vec<u8>> = RESULT_FILES
        .iter()
        .map(|f| std::fs::read(dir.path().join("keep").join(f)).unwrap())
        .collect();
    // Fails validation after the output folder was chosen.
    let o = run_in(dir.path(), &["run", &scn, "--out", "keep", "--set", "flows[0].cc=cubik"]);
    assert_eq!(o.status.code(), Some(1));
    let after: Vec<Vec<u8>> = RESULT_FILES
        .iter()
        .map(|f| std::fs::read(dir.path().join("keep").join(f)).unwrap())
        .collect();
    assert!(before == after, "earlier results changed by a failed run");
    // A successful re-run replaces them, says so, and leaves no staging folders behind.
    let out = run_ok(dir.path(), &["run", &scn, "--out", "keep", "--set", "duration=1s"]);
    assert!(out.contains("replaced the earlier results"), "{out}");
    assert!(read(&dir.path().join("keep/summary.json")).contains("\"duration_s\": 1,"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["keep".to_string()], "leftovers: {names:?}");
}

/// A run killed outright (SIGKILL: no cleanup) leaves its staging folder, and possibly the
/// earlier results moved aside; the next run of that destination tidies both up.
#[test]
fn leftovers_of_a_killed_run_are_tidied_and_moved_aside_results_come_back() {
    let dir = TempDir::new("killed");
    let scn = small("reno-droptail.toml");
    run_ok(dir.path(), &["run", &scn, "--out", "keep"]);
    let earlier = read(&dir.path().join("keep/summary.json"));
    // What a run with pid 4194304 (above any Linux pid_max, so never alive) killed between
    // its two renames leaves: its staging folder, and "keep" moved aside.
    std::fs::create_dir(dir.path().join(".keep.partial-4194304-0")).unwrap();
    std::fs::rename(dir.path().join("keep"), dir.path().join(".keep.partial-4194304-0.old"))
        .unwrap();
    // A run that fails validation writes nothing, but the earlier results are back.
    let o = run_in(dir.path(), &["run", &scn, "--out", "keep", "--set", "flows[0].cc=cubik"]);
    assert_eq!(o.status.code(), Some(1));
    run_ok(dir.path(), &["run", &scn, "--out", "other"]);
    let o = run_in(dir.path(), &["run", &scn, "--out", "keep", "--set", "bottleneck.rate=-1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!dir.path().join("keep").exists(), "validation errors touch nothing");
    // The next real run of "keep" restores the moved-aside results first, then replaces them.
    let out = run_ok(dir.path(), &["run", &scn, "--out", "keep", "--set", "duration=1s"]);
    assert!(
        out.contains("replaced the earlier results"),
        "the earlier results were restored first: {out}"
    );
    assert_ne!(read(&dir.path().join("keep/summary.json")), earlier);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["keep".to_string(), "other".to_string()], "leftovers: {names:?}");
}

/// Ctrl-C (or SIGTERM) in the middle of a run, a sweep and a reproduction: what was being
/// written (the staging folder, the staged packet log) is removed at once, the earlier
/// results and log are as they were, and the status is the shell's for the signal.
#[test]
fn an_interrupted_run_sweep_or_reproduction_removes_what_it_was_writing() {
    let dir = TempDir::new("interrupted");
    let scn = small("reno-droptail.toml");
    run_ok(dir.path(), &["run", &scn, "--out", "keep", "--packet-log", "packets.csv"]);
    let earlier =
        (read(&dir.path().join("keep/summary.json")), read(&dir.path().join("packets.csv")));
    // Long enough (seconds: 75 million packets) that the signal finds it running.
    let long = dir.write(
        "long.toml",
        "duration = \"900s\"\n[bottleneck]\nrate = \"1Gbps\"\ndelay = \"10ms\"\n[[flows]]\ncc = \"cubic\"\nrtt = \"50ms\"\ncount = 20\n",
    );
    let sweep = dir.write(
        "sweep.toml",
        &format!("{}[sweep]\n\"flows[0].cc\" = [\"cubic\", \"reno\"]\n", read(&long)),
    );
    // Signals the command once a staging entry whose name holds `staging` is in
    // `parent`, then checks its status and that `parent` holds nothing hidden.
    let interrupt = |args: &[&str], signal: i32, (parent, staging): (&str, &str)| {
        let mut child = cclab().current_dir(dir.path()).args(args).spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let parent = dir.path().join(parent);
        let found = || {
            std::fs::read_dir(&parent).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().contains(staging)))
            })
        };
        while !found() {
            assert!(std::time::Instant::now() < deadline, "no staging {staging} appeared");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Writing by now, not starting.
        std::thread::sleep(std::time::Duration::from_millis(200));
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + signal), "{args:?}");
        let left = hidden_entries(&parent);
        assert!(left.is_empty(), "{args:?} left {left:?}");
    };
    let long = long.to_str().unwrap();
    interrupt(
        &["run", long, "--out", "keep", "--packet-log", "packets.csv"],
        libc::SIGINT,
        (".", ".keep.partial-"),
    );
    interrupt(
        &["run", long, "--out", "keep", "--packet-log", "packets.csv"],
        libc::SIGTERM,
        (".", ".packets.csv.partial-"),
    );
    assert_eq!(
        (read(&dir.path().join("keep/summary.json")), read(&dir.path().join("packets.csv"))),
        earlier,
        "the earlier results and log are as they were"
    );
    interrupt(
        &["run", sweep.to_str().unwrap(), "--out", "sw", "--jobs", "2"],
        libc::SIGINT,
        ("sw/points", ".partial-"),
    );
    // A reproduction is a set of sweeps (seed 003's full runs: 40 of 100 s each, 4.5 s
    // in all on a CI machine). Any run's staging, not run 0's: each lasts about 0.2 s,
    // which a poller starved by the other tests of this file once missed (CI, 2026-12-07).
    interrupt(
        &["reproduce", "003", "--out", "rp", "--jobs", "2"],
        libc::SIGINT,
        ("rp/003-fairness-sweep/points", ".partial-"),
    );
    for folder in ["", "sw", "rp", "rp/003-fairness-sweep"] {
        let left = hidden_entries(&dir.path().join(folder));
        assert!(left.is_empty(), "left in {folder:?}: {left:?}");
    }
}

/// The names in `folder` that start with a dot (staging folders, temporaries), sorted.
fn hidden_entries(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[test]
fn a_folder_that_is_not_a_results_folder_is_never_replaced() {
    let dir = TempDir::new("precious");
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    dir.write("mine/notes.txt", "important");
    let o = run_in(dir.path(), &["run", &small("reno-droptail.toml"), "--out", "mine"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a cclab results folder"), "{}", stderr(&o));
    assert_eq!(read(&dir.path().join("mine/notes.txt")), "important");
    dir.write("afile", "x");
    let o = run_in(dir.path(), &["run", &small("reno-droptail.toml"), "--out", "afile"]);
    assert!(stderr(&o).contains("is not a folder"), "{}", stderr(&o));
}

#[test]
fn a_results_folder_holding_a_users_file_is_not_replaced() {
    let dir = TempDir::new("results-with-mine");
    let scenario = small("reno-droptail.toml");
    let o = run_in(dir.path(), &["run", &scenario, "--out", "res"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The scenario kept beside its results, as users do: a rerun must not delete it.
    std::fs::copy(&scenario, dir.path().join("res/exp.toml")).unwrap();
    let o = run_in(dir.path(), &["run", "res/exp.toml", "--out", "res"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("res holds exp.toml, which is not a file cclab writes there"), "{err}");
    assert!(
        dir.path().join("res/exp.toml").is_file() && dir.path().join("res/summary.json").is_file()
    );
    // Without it the folder is ours again and is replaced.
    std::fs::rename(dir.path().join("res/exp.toml"), dir.path().join("exp.toml")).unwrap();
    let o = run_in(dir.path(), &["run", "exp.toml", "--out", "res"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A user's test, 2026-12-07: a read-only results folder was replaced all the same, and
/// the earlier copy, which could not be removed, stayed hidden beside it. A folder this
/// user cannot write in is kept: root's, rerun by another user (here `nobody`, when the
/// test runs as root, which may write anywhere), or one made read-only.
#[test]
fn a_results_folder_this_user_cannot_write_in_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("results-not-writable");
    let scenario = small("reno-droptail.toml");
    let o = run_in(dir.path(), &["run", &scenario, "--out", "res"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let res = dir.path().join("res");
    let before = read(&res.join("summary.json"));
    // SAFETY: geteuid only reads this process's user id.
    let root = unsafe { libc::geteuid() } == 0;
    let mut again = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", env!("CARGO_BIN_EXE_cclab")]);
        c
    } else {
        std::fs::set_permissions(&res, std::fs::Permissions::from_mode(0o555)).unwrap();
        cclab()
    };
    let o = again
        .current_dir(dir.path())
        .args(["run", &scenario, "--set", "seed=9", "--out", "res"])
        .output()
        .unwrap();
    std::fs::set_permissions(&res, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("res holds earlier results that this user cannot write in"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(&res.join("summary.json")), before);
    let beside: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(beside, ["res"], "nothing left beside the folder");
}

#[test]
fn short_runs_without_a_terminal_print_no_progress() {
    let dir = TempDir::new("quiet");
    let o = run_in(dir.path(), &["run", &small("reno-droptail.toml"), "--out", "r"]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "", "no progress output for a short run with stderr not a terminal");
}

#[test]
fn algorithms_lists_every_algorithm_with_its_parameters() {
    let dir = TempDir::new("algos");
    let out = run_ok(dir.path(), &["algorithms"]);
    for a in cclab_cc::ALGORITHMS {
        assert!(out.contains(&format!("{}\n  {}", a.name, a.summary)), "{} missing", a.name);
        assert!(out.contains(a.source));
        for p in a.params {
            assert!(
                out.contains(p.name) && out.contains(&p.allowed()) && out.contains(p.doc),
                "{}.{}",
                a.name,
                p.name
            );
        }
    }
    assert!(out.contains("rto_min") && out.contains("initcwnd"));
    let one = run_ok(dir.path(), &["algorithms", "tahoe"]);
    assert!(one.starts_with("tahoe\n") && !one.contains("newreno"));
    let o = run_in(dir.path(), &["algorithms", "cubik"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid value 'cubik'"), "{}", stderr(&o));
}

#[test]
fn bench_one_reports_its_figures() {
    let dir = TempDir::new("bench");
    let out = run_ok(dir.path(), &["bench", "--one", "a", "--quick"]);
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(f.len(), 9, "{out}");
    assert_eq!(f[0], "a");
    assert_eq!(f[1].parse::<f64>().unwrap(), 6.0, "a tenth of 60 s");
    // 100 Mbit/s for 6 s is at most 50,000 full packets; a working sender gets near it.
    let packets: u64 = f[4].parse().unwrap();
    assert!((40_000..=50_001).contains(&packets), "{packets} packets");
    assert!(f[5].parse::<u64>().unwrap() > packets, "events");
    assert!(f[6].parse::<f64>().unwrap() > 0.0, "peak memory in kB");
    let util: f64 = f[7].parse().unwrap();
    assert!(util > 0.8 && util <= 1.0, "utilisation {util}");
    // What the process held before the case was built: some, and no more than the peak.
    let base: f64 = f[8].parse().unwrap();
    assert!(base > 0.0 && base <= f[6].parse::<f64>().unwrap(), "base {base} kB");
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    let dir = TempDir::new("pipe");
    let run = ["run", &small("reno-droptail.toml"), "--out", "r"];
    // `kernel list` prints from the kernel crate (and reads /proc, no root needed).
    for args in [&["algorithms"][..], &run[..], &["kernel", "list"][..]] {
        let mut child = cclab()
            .current_dir(dir.path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away, as with `| head -0`
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// `--series parquet` writes the same samples as the CSV files, typed; `none` writes no
/// series; the summary is the same whatever the series format, and `compare` reads either.
#[test]
fn series_as_parquet_or_none_hold_the_csv_samples_and_change_nothing_else() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let dir = TempDir::new("series");
    let scn = small("reno-droptail.toml");
    run_ok(dir.path(), &["run", &scn, "--out", "csv", "--series", "csv"]);
    run_ok(dir.path(), &["run", &scn, "--out", "pq", "--series", "parquet"]);
    run_ok(dir.path(), &["run", &scn, "--out", "none", "--series", "none"]);
    let p = |d: &str, f: &str| dir.path().join(d).join(f);
    // `auto` (the default) writes Parquet past 2,000,000 rows, and says so.
    let many = dir.write(
        "many.toml",
        "duration = \"21s\"\nsample_interval = \"1ms\"\n[bottleneck]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"40ms\"\ncount = 100\n",
    );
    let out = run_ok(dir.path(), &["run", many.to_str().unwrap(), "--out", "auto"]);
    assert!(p("auto", "flows.parquet").is_file() && !p("auto", "flows.csv").exists());
    assert!(out.contains("the time series are in flows.parquet and queue.parquet: more than 2000000 rows (--series csv writes CSV)"), "{out}");
    assert!(!p("pq", "flows.csv").exists() && !p("none", "flows.csv").exists());
    assert!(!p("none", "flows.parquet").exists() && !p("none", "queue.csv").exists());
    for d in ["pq", "none"] {
        assert_eq!(read(&p("csv", "summary.json")), read(&p(d, "summary.json")), "{d}");
        assert_eq!(read(&p("csv", "cwnd.svg")), read(&p(d, "cwnd.svg")), "{d}: plots");
    }
    let csv = read(&p("csv", "flows.csv"));
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|c| c.parse().unwrap_or(f64::NAN)).collect())
        .collect();
    let reader =
        SerializedFileReader::new(std::fs::File::open(p("pq", "flows.parquet")).unwrap()).unwrap();
    let names: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(names.join(","), csv.lines().next().unwrap(), "the CSV's columns");
    let mut n = 0;
    for (row, want) in reader.get_row_iter(None).unwrap().zip(&rows) {
        let row = row.unwrap();
        assert!((row.get_double(0).unwrap() - want[0]).abs() < 1e-9);
        assert_eq!(row.get_long(1).unwrap() as f64, want[1]);
        assert_eq!(row.get_long(2).unwrap() as f64, want[2], "cwnd");
        assert!((row.get_double(4).unwrap() - want[4]).abs() < 1e-3, "srtt_ms");
        assert_eq!(row.get_long(6).unwrap() as f64, want[6], "delivered");
        n += 1;
    }
    assert_eq!(n, rows.len());
    let out = run_ok(dir.path(), &["compare", "csv", "pq", "--out", "cmp"]);
    assert!(dir.path().join("cmp/cwnd.svg").exists(), "{out}");
    let o = run_in(dir.path(), &["run", &scn, "--series", "xml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("csv") && stderr(&o).contains("parquet"), "{}", stderr(&o));
}

#[test]
fn reverse_traffic_adds_the_reverse_queue_and_link_and_each_flows_direction() {
    let dir = TempDir::new("reverse");
    let text = format!(
        "{BASE}direction = \"reverse\"\n[[cross]]\nkind = \"cbr\"\nrate = \"2Mbps\"\ndirection = \"reverse\"\n"
    );
    dir.write("rev.toml", &text);
    let out = run_ok(dir.path(), &["run", "rev.toml", "--out", "res"]);
    assert!(out.contains("reverse link: 10.000 Mbit/s"), "{out}");
    let res = dir.path().join("res");
    let summary = read(&res.join("summary.json"));
    in_order(&summary, &["link", "reverse_link", "rate_bps", "utilization", "flows"]);
    let fwd = summary.find("\"direction\": \"forward\"").expect("flow 0 is forward");
    let rev = summary.find("\"direction\": \"reverse\"").expect("flow 1 is reverse");
    assert!(fwd < rev, "{summary}");
    let queue = read(&res.join("queue.csv"));
    let reverse = read(&res.join("reverse_queue.csv"));
    assert!(reverse.starts_with("time_s,packets,bytes,drops\n"), "{reverse}");
    assert_eq!(reverse.lines().count(), queue.lines().count());
    // The queue plot shows both bottlenecks.
    assert!(read(&res.join("queue.svg")).contains("reverse bottleneck"));
    // The report has the reverse link and the cross source, with summary.json's counts.
    let report = read(&res.join("report.html"));
    assert!(report.contains("<p>Forward link 10 Mbit/s, utilisation "), "{report}");
    assert!(report.contains("<p>Reverse link 10 Mbit/s, utilisation "), "{report}");
    let s: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let cross = &s["cross"][0];
    assert_eq!(cross["active_s"], s["duration_s"], "{cross}");
    let row = format!(
        "<tr><td>0</td><td>cbr</td><td>reverse</td><td>2.000</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td>",
        s["duration_s"].as_f64().unwrap(),
        cross["sent_packets"],
        cross["delivered_packets"],
        cross["drops"]
    );
    assert!(report.contains("<h2>Cross traffic</h2>") && report.contains(&row), "{row}\n{report}");
    let line = report.lines().find(|l| l.starts_with(&row)).unwrap();
    let last: f64 =
        line.rsplit("<td>").next().unwrap().trim_end_matches("</td></tr>").parse().unwrap();
    let delivered_mbps = cross["throughput_bps"].as_f64().unwrap() / 1e6;
    assert!((last - delivered_mbps).abs() < 0.001, "{line}: summary says {delivered_mbps}");
    // Under the table, the terminal's line of the reverse direction's load.
    let load = out.lines().find(|l| l.starts_with("cross traffic (reverse)")).expect(&out);
    assert!(report.contains(&format!("<p>{load}</p>")), "{load}\n{report}");
    // A run without reverse traffic has none of it.
    run_ok(dir.path(), &["run", &small("reno-droptail.toml"), "--out", "plain"]);
    let plain = dir.path().join("plain");
    assert!(!plain.join("reverse_queue.csv").exists());
    let s = read(&plain.join("summary.json"));
    assert!(!s.contains("reverse_link") && !s.contains("direction"), "{s}");
    let report = read(&plain.join("report.html"));
    assert!(!report.contains("Reverse link") && !report.contains("Cross traffic"), "{report}");
}
