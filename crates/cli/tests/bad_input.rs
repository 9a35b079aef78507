//! Every bad-input case of issue 2 item 5 (and the schema's own), through the binary:
//! one line on stderr naming the file, the line, the field, the bad value and what is
//! allowed, and a non-zero exit status. Never a panic.

mod common;
use common::*;

/// Runs `cclab run FILE [extra]` on `text` and returns the single error line.
fn error_of(text: &str, extra: &[&str]) -> String {
    let dir = TempDir::new("bad");
    dir.write("scen.toml", text);
    let mut args = vec!["run", "scen.toml", "--out", "out"];
    args.extend_from_slice(extra);
    let o = run_in(dir.path(), &args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "expected failure for:\n{text}\nstderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with("error: scen.toml"), "names the file: {err}");
    assert!(!dir.path().join("out").exists(), "nothing written on a validation error");
    err
}

fn has_all(err: &str, parts: &[&str]) {
    for p in parts {
        assert!(err.contains(p), "missing {p:?} in: {err}");
    }
}

/// BASE with line `n` (1-based) replaced.
fn edit(n: usize, line: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[n - 1] = line;
    lines.join("\n") + "\n"
}

#[test]
fn the_base_scenario_is_valid() {
    let dir = TempDir::new("base");
    dir.write("scen.toml", BASE);
    let o = run_in(dir.path(), &["run", "scen.toml", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn unknown_algorithm() {
    let e = error_of(&edit(11, "cc = \"cubik\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:11:",
            "flows[1].cc",
            "\"cubik\"",
            "unknown algorithm",
            "known algorithms: reno",
            "tahoe",
        ],
    );
}

#[test]
fn unknown_fields_list_the_allowed_ones() {
    let e =
        error_of(&(BASE.to_string().replacen("seed = 1", "seed = 1\ncolour = \"red\"", 1)), &[]);
    has_all(
        &e,
        &[
            "scen.toml:3:",
            "colour",
            "unknown field",
            "at the top level",
            "allowed fields: name, duration, seed",
        ],
    );
    let e = error_of(&edit(9, "rtt = \"100ms\"\nwindow = 5"), &[]);
    has_all(
        &e,
        &[
            "scen.toml:10:",
            "flows[0].window",
            "unknown field \"window\" in flows[0]",
            "allowed fields: cc, name, rtt",
        ],
    );
    let e = error_of(&edit(6, "buffr = \"1bdp\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:6:",
            "bottleneck.buffr",
            "allowed fields: rate, trace, delay, buffer, qdisc, loss",
        ],
    );
}

#[test]
fn bad_units() {
    let e = error_of(&edit(4, "rate = \"10MBps\""), &[]);
    has_all(
        &e,
        &["scen.toml:4:", "bottleneck.rate", "\"10MBps\"", "units: bps, Kbps or kbps, Mbps, Gbps"],
    );
    let e = error_of(&edit(1, "duration = \"2 minutes\""), &[]);
    has_all(&e, &["scen.toml:1:", "duration", "\"2 minutes\"", "units: ns, us, ms, s"]);
    let e = error_of(&edit(9, "rtt = 100"), &[]);
    has_all(&e, &["scen.toml:9:", "flows[0].rtt = 100:", "expected a duration such as \"20ms\" (units: ns, us, ms, s), written as a quoted string; found an integer"]);
    let e = error_of(&edit(6, "buffer = \"1bdpp\""), &[]);
    has_all(&e, &["scen.toml:6:", "bottleneck.buffer", "\"1bdpp\"", "<x>bdp", "<n>pkt", "<n>KB"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nbytes = \"10Mb\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].bytes", "\"10Mb\"", "units: B, KB or kB, MB, GB"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nbytes = \"1000.5B\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].bytes = \"1000.5B\"", "a whole number of bytes"]);
}

#[test]
fn negative_values() {
    let e = error_of(&edit(9, "rtt = \"-5ms\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:9:",
            "flows[0].rtt",
            "\"-5ms\"",
            "expected a duration, which is never negative",
        ],
    );
    let e = error_of(&edit(9, "rtt = \"100ms\"\ncount = -3"), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].count", "-3", "whole number in [1,"]);
    let e = error_of(&edit(6, "buffer = \"1bdp\"\nloss = -0.1"), &[]);
    has_all(&e, &["scen.toml:7:", "bottleneck.loss", "-0.1", "a probability in [0, 1)"]);
    let e = error_of(&edit(2, "seed = -1"), &[]);
    has_all(&e, &["scen.toml:2:", "seed", "-1", "whole number in [0,"]);
    // On the command line, a negative value after an option (clap took it for an option
    // of its own: "unexpected argument '-5' found"), and after `=`.
    let o = cclab()
        .args(["emu", "--uplink", "-5Mbps", "--downlink", "5Mbps", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    has_all(&stderr(&o), &["error: --uplink -5Mbps: a value that begins with '-' is taken for an option, and no quantity here is negative", "(see cclab emu --help)"]);
    let o = cclab()
        .args(["emu", "--uplink=-5Mbps", "--downlink", "5Mbps", "--", "true"])
        .output()
        .unwrap();
    has_all(&stderr(&o), &["-5Mbps", "never negative"]);
}

#[test]
fn absurd_values_are_refused_before_anything_is_allocated() {
    // A flow count that cannot fit in memory: refused, not attempted (this returns at
    // once; building a trillion flows would not).
    let started = std::time::Instant::now();
    let e = error_of(&edit(9, "rtt = \"100ms\"\ncount = 1000000000000"), &[]);
    has_all(
        &e,
        &[
            "scen.toml:10:",
            "flows[0].count",
            "1000000000000",
            "allowed: a whole number in [1, 1000000]",
        ],
    );
    let e = error_of(&edit(9, "rtt = \"100ms\"\ncount = 0"), &[]);
    has_all(&e, &["flows[0].count = 0", "allowed: a whole number in [1, 1000000]"]);
    assert!(started.elapsed().as_secs() < 10);
    // The limit is on the total over all [[flows]] entries.
    let e = error_of(
        &(edit(9, "rtt = \"100ms\"\ncount = 600000").replacen(
            "rtt = \"60ms\"",
            "rtt = \"60ms\"\ncount = 600000",
            1,
        )),
        &[],
    );
    has_all(&e, &["scen.toml:14:", "flows[1].count", "at most 1000000 flows"]);
    let e = error_of(&edit(4, "rate = \"100000Gbps\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:4:",
            "bottleneck.rate",
            "\"100000Gbps\"",
            "out of range; allowed: 1Kbps to 1000Gbps",
        ],
    );
    let e = error_of(&edit(1, "duration = \"99999999s\""), &[]);
    has_all(&e, &["scen.toml:1:", "duration", "out of range; allowed: 1ms to 1000000s"]);
    let e = error_of(&edit(9, "rtt = \"1000s\""), &[]);
    has_all(&e, &["scen.toml:9:", "flows[0].rtt", "\"1000s\"", "allowed: 1us to 100s"]);
    // A queue that large would take more memory than the machine has before it filled.
    let e = error_of(&edit(6, "buffer = \"100000000pkt\""), &[]);
    has_all(&e, &["bottleneck.buffer = \"100000000pkt\"", "allowed: 1 to 10000000 packets"]);
    let e = error_of(&edit(6, "buffer = \"100GB\""), &[]);
    has_all(&e, &["bottleneck.buffer", "allowed: 1500 to 15000000000 bytes"]);
    let e = error_of(&edit(6, "buffer = \"0pkt\""), &[]);
    has_all(
        &e,
        &["scen.toml:6:", "bottleneck.buffer = \"0pkt\"", "allowed: 1 to 10000000 packets"],
    );
    // Time series that would not fit on disk: 100,001 flows sampled every 10 ms for 2 s
    // (201 instants each, 0 s to 2 s).
    let e = error_of(&edit(9, "rtt = \"100ms\"\ncount = 100000"), &[]);
    has_all(
        &e,
        &[
            "scen.toml: sample_interval = \"10ms\"",
            "100001 flows",
            "would write up to 20100201 rows",
            "limit 20000000",
            "use a longer sample_interval, or write no time series (--series none)",
        ],
    );
    // Without time series the same sampling runs (its samples feed the summary and the
    // plots): 1,000 flows every 1 ms for 21 s is 21,001,000 rows.
    let dir = TempDir::new("no-series");
    let lots = "duration = \"21s\"\nsample_interval = \"1ms\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"20ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"100ms\"\ncount = 1000\n";
    dir.write("lots.toml", lots);
    let o = run_in(dir.path(), &["run", "lots.toml", "--out", "out"]);
    assert!(stderr(&o).contains("would write up to 21001000 rows"), "{}", stderr(&o));
    assert!(!dir.path().join("out").exists(), "refused before anything is written");
    let o = run_in(dir.path(), &["run", "lots.toml", "--out", "out", "--series", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("out/summary.json").is_file());
    // A sweep is refused before any of its runs starts.
    dir.write("sweep.toml", &format!("{lots}[sweep]\n\"flows[0].cc\" = [\"reno\", \"cubic\"]\n"));
    let o = run_in(dir.path(), &["run", "sweep.toml", "--out", "sw"]);
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "error: run 0 (point 0, seed 1: flows[0].cc = reno): sweep.toml:2: sample_interval"
        ),
        "{err}"
    );
    assert!(!dir.path().join("sw").exists());
}

#[test]
fn tcp_settings_follow_the_simulators_limits() {
    let e = error_of(&edit(9, "rtt = \"100ms\"\nmss = 50"), &[]);
    has_all(
        &e,
        &["scen.toml:10:", "flows[0].mss = 50", "allowed: a whole number from 88 to 9000 bytes"],
    );
    let e = error_of(&edit(9, "rtt = \"100ms\"\nmss = 1448.5"), &[]);
    has_all(
        &e,
        &["flows[0].mss = 1448.5", "expected a whole number, found a number with a fraction"],
    );
    let e = error_of(&edit(9, "rtt = \"100ms\"\nmss = \"1448B\""), &[]);
    has_all(&e, &["flows[0].mss = \"1448B\"", "expected a whole number, found a string"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\ninitcwnd = -3"), &[]);
    has_all(
        &e,
        &["scen.toml:10:", "flows[0].initcwnd = -3", "a whole number from 1 to 1000 segments"],
    );
    // An RTT out of range is named as such, not as the default BDP buffer it would make.
    let e = error_of(&edit(9, "rtt = \"1000000s\""), &[]);
    has_all(&e, &["scen.toml:9:", "flows[0].rtt = \"1000000s\"", "allowed: 1us to 100s"]);
    let no_buffer = BASE.replace("buffer = \"1bdp\"\n", "").replace("\"100ms\"", "\"99s\"");
    let e = error_of(&no_buffer, &["--set", "bottleneck.rate=1000Gbps"]);
    has_all(&e, &["bottleneck.buffer = 8250000000 packets", "the default 1bdp", "99s"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nrto_min = \"90s\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].rto_min = \"90s\"", "allowed: 1ms to 60s"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nstop = \"0s\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].stop = \"0s\"", "later than start = 0us"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nhost_delay = \"11ms\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].host_delay = \"11ms\"", "allowed: 0us to 10ms"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nread_delay = \"11ms\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].read_delay = \"11ms\"", "allowed: 0us to 10ms"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nhz = 200"), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].hz = 200", "allowed: 100, 250, 300 or 1000"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nhz = -250"), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].hz = -250", "allowed: 100, 250, 300 or 1000"]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\nhz = 250\ntick_phase = \"4ms\""), &[]);
    has_all(
        &e,
        &["scen.toml:11:", "flows[0].tick_phase = \"4ms\"", "under one tick (4ms at hz = 250)"],
    );
    let e = error_of(&edit(9, "rtt = \"100ms\""), &["--set", "flows[0].tick_phase=1ms"]);
    has_all(&e, &["flows[0].tick_phase = 1ms", "under one tick (1ms at hz = 1000)"]);
}

#[test]
fn rtt_below_twice_the_bottleneck_delay() {
    let e = error_of(&edit(12, "rtt = \"39ms\""), &[]);
    has_all(
        &e,
        &["scen.toml:12:", "flows[1].rtt", "\"39ms\"", "at least 2 x bottleneck.delay = 40ms"],
    );
}

#[test]
fn missing_trace_file_is_named_relative_to_the_scenario() {
    let dir = TempDir::new("trace");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    dir.write("sub/scen.toml", &edit(4, "trace = \"links/nothere.trace\""));
    let o = run_in(dir.path(), &["run", "sub/scen.toml", "--out", "out"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1));
    has_all(
        &e,
        &[
            "sub/scen.toml:4:",
            "bottleneck.trace",
            "\"links/nothere.trace\"",
            "sub/links/nothere.trace",
            "relative to the scenario file",
        ],
    );
    // An absolute path is read as written, and the error says nothing of relative paths.
    let absent = dir.path().join("absent.trace");
    dir.write("abs.toml", &edit(4, &format!("trace = {:?}", absent.display().to_string())));
    let e = stderr(&run_in(dir.path(), &["run", "abs.toml", "--out", "out"]));
    has_all(&e, &["abs.toml:4:", "cannot read trace file"]);
    assert!(!e.contains("relative"), "{e}");
    // And a trace that exists next to the scenario is found from any working directory.
    std::fs::create_dir(dir.path().join("sub/links")).unwrap();
    dir.write("sub/links/nothere.trace", "1\n");
    let o = run_in(dir.path(), &["run", "sub/scen.toml", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = error_of(&edit(4, "rate = \"1Mbps\"\ntrace = \"x.trace\""), &[]);
    has_all(&e, &["scen.toml:5:", "bottleneck.trace", "either rate or trace, not both"]);
}

#[test]
fn toml_syntax_errors_name_the_line() {
    let e = error_of(&edit(3, "[bottleneck"), &[]);
    has_all(&e, &["scen.toml:3:", "TOML syntax error"]);
    let e = error_of(&edit(8, "cc = \"reno"), &[]);
    has_all(&e, &["scen.toml:8: TOML syntax error", "(the line reads: cc = \"reno)"]);
    let e = error_of(&edit(8, "cc = \"reno\"\ncc = \"tahoe\""), &[]);
    has_all(
        &e,
        &["scen.toml:9: TOML syntax error", "duplicate key", "(the line reads: cc = \"tahoe\")"],
    );
    let e = error_of(&edit(9, "rtt = 100ms"), &[]);
    has_all(
        &e,
        &["scen.toml:9: TOML syntax error", "must be quoted", "(the line reads: rtt = 100ms)"],
    );
}

#[test]
fn missing_required_fields() {
    let e = error_of(&BASE.replacen("duration = \"2s\"\n", "", 1), &[]);
    has_all(&e, &["error: scen.toml: duration: missing required field \"duration\""]);
    let e = error_of(&BASE.replacen("delay = \"20ms\"\n", "", 1), &[]);
    has_all(
        &e,
        &["scen.toml:3:", "bottleneck.delay", "missing required field \"delay\" in bottleneck"],
    );
    let e = error_of(&BASE.replacen("rtt = \"100ms\"\n", "", 1), &[]);
    has_all(&e, &["scen.toml:7:", "flows[0].rtt", "missing required field \"rtt\""]);
    let e = error_of("duration = \"2s\"\n[bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n", &[]);
    has_all(&e, &["flows", "at least one [[flows]] section"]);
    // A top-level key written below a header belongs to that table: the line it is on is
    // named, and the header (a user's test, 2026-12-07: "missing" with no line at all).
    let e = error_of(
        &BASE.replacen("duration = \"2s\"\n", "", 1).replacen(
            "buffer",
            "duration = \"2s\"\nbuffer",
            1,
        ),
        &[],
    );
    has_all(
        &e,
        &[
            "scen.toml:5: duration: missing required field",
            "written inside [bottleneck] here",
            "above every header",
        ],
    );
    let e = error_of(
        &BASE.replacen("duration = \"2s\"\n", "", 1).replacen(
            "rtt = \"60ms\"\n",
            "rtt = \"60ms\"\nduration = \"2s\"\n",
            1,
        ),
        &[],
    );
    has_all(&e, &["scen.toml:12: duration", "written inside [[flows]] here"]);
    // One level down from a table: back up into that table, not to the top.
    let e = error_of(&BASE.replacen("rtt = \"60ms\"\n", "params = { rtt = \"60ms\" }\n", 1), &[]);
    has_all(
        &e,
        &[
            "scen.toml:12: flows[1].rtt: missing required field",
            "written inside [flows.params] here",
            "move it up into [[flows]] (flows[1])",
        ],
    );
}

#[test]
fn algorithm_parameters_are_checked_against_their_specs() {
    let e = error_of(&edit(8, "cc = \"reno\"\nparams = { beta = 0.5 }"), &[]);
    has_all(&e, &["scen.toml:9:", "flows[0].params.beta", "\"reno\" has no parameter \"beta\""]);
    let e = error_of(&edit(8, "cc = \"reno\"\nparams = 3"), &[]);
    has_all(&e, &["scen.toml:9:", "flows[0].params", "expected a table"]);
    // Range checks for every parameter of every algorithm that has any (CUBIC and the
    // others once they land): just above the maximum is refused with the allowed range.
    let mut checked = 0;
    for info in cclab_cc::ALGORITHMS {
        for p in info.params {
            let value = if p.kind == cclab_cc::ParamKind::Bool {
                "2".to_string()
            } else {
                format!("{}", p.max + 1.0)
            };
            let e = error_of(
                &edit(8, &format!("cc = \"{}\"\nparams = {{ {} = {value} }}", info.name, p.name)),
                &[],
            );
            has_all(
                &e,
                &[
                    "scen.toml:9:",
                    &format!("flows[0].params.{}", p.name),
                    &value,
                    "allowed:",
                    &p.allowed(),
                ],
            );
            checked += 1;
        }
    }
    eprintln!("checked out-of-range values for {checked} algorithm parameters");
}

#[test]
fn parameter_changes_are_validated_before_the_run() {
    let with = |change: &str| format!("{BASE}[[changes]]\n{change}\n");
    let e = error_of(&with("at = \"1s\"\nflow = 0\nset = { beta = 0.5 }"), &[]);
    has_all(
        &e,
        &[
            "scen.toml:16:",
            "changes[0].set.beta",
            "flow 0 (reno) has no parameter \"beta\"",
            "it accepts: rto_min, initcwnd",
        ],
    );
    let e = error_of(&with("at = \"1s\"\nflow = 1\nset = { initcwnd = 0 }"), &[]);
    has_all(
        &e,
        &[
            "scen.toml:16:",
            "changes[0].set.initcwnd",
            "= 0",
            "flow 1 (tahoe)",
            "allowed: a whole number from 1 to 1000 segments",
        ],
    );
    let e = error_of(&with("at = \"1s\"\nflow = 0\nset = { rto_min = \"0.1ms\" }"), &[]);
    has_all(&e, &["changes[0].set.rto_min", "\"0.1ms\"", "out of range; allowed: 1ms to 60s"]);
    let e = error_of(&with("at = \"1s\"\nflow = 0\nset = { rto_min = \"2.5ms\" }"), &[]);
    has_all(
        &e,
        &[
            "changes[0].set.rto_min",
            "2.5",
            "not a whole number of milliseconds; allowed: 1ms to 60s in whole milliseconds",
        ],
    );
    // A duration, as a flow's own rto_min is: a bare number has no unit.
    let e = error_of(&with("at = \"1s\"\nflow = 0\nset = { rto_min = 50 }"), &[]);
    has_all(
        &e,
        &["changes[0].set.rto_min", "50", "expected a duration such as \"50ms\"", "no unit"],
    );
    let e = error_of(&with("at = \"1s\"\nflow = 2\nset = { initcwnd = 5 }"), &[]);
    has_all(&e, &["scen.toml:15:", "changes[0].flow", "= 2", "whole number in [0, 1]"]);
    let e = error_of(&with("at = \"3s\"\nflow = 0\nset = { initcwnd = 5 }"), &[]);
    has_all(&e, &["scen.toml:14:", "changes[0].at", "\"3s\"", "after the end of the run"]);
    let e = error_of(&with("at = \"1s\"\nflow = 0\nset = {}"), &[]);
    has_all(&e, &["changes[0].set", "nothing to change"]);
    let e = error_of(&with("at = \"1s\"\nflow = 0\nset = { initcwnd = 5 }\nwhen = 1"), &[]);
    has_all(&e, &["changes[0].when", "allowed fields: at, flow, set"]);
}

#[test]
fn queue_loss_and_cross_traffic_options() {
    let e = error_of(&edit(6, "qdisc = \"fifo\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:6:",
            "bottleneck.qdisc",
            "\"fifo\"",
            "unknown queue discipline; allowed: \"droptail\", \"red\", \"codel\", \"pie\"",
            "\"fq_codel\"",
        ],
    );
    let e = error_of(&edit(6, "qdisc = { kind = \"red\", min_th = 20, max_th = 10 }"), &[]);
    has_all(&e, &["scen.toml:6:", "bottleneck.qdisc.max_th", "10", "greater than min_th = 20"]);
    let e = error_of(&edit(6, "qdisc = { kind = \"codel\", max_p = 0.1 }"), &[]);
    has_all(
        &e,
        &[
            "bottleneck.qdisc.max_p",
            "unknown parameter; qdisc \"codel\" has parameters target, interval",
        ],
    );
    // RED whose min_th the average queue cannot pass would silently be DropTail: ns-2's
    // default min_th of 5 packets in a 6-packet buffer (an arriving packet finds at most
    // 5 queued), and 3 in 6000 bytes (four 1500-byte packets); a 2-packet buffer never
    // holds the two packets RED needs to drop early.
    let red = "qdisc = \"red\"\nbuffer = \"6pkt\"";
    let e = error_of(&edit(6, red), &[]);
    has_all(&e, &["bottleneck.qdisc", "never drop early", "min_th = 5 packets", "= 6 packets"]);
    let red = "qdisc = { kind = \"red\", min_th = 3, max_th = 9 }\nbuffer = \"6000B\"";
    let e = error_of(&edit(6, red), &[]);
    has_all(&e, &["bottleneck.qdisc.min_th = 3", "6000 bytes, at most 4 packets", "below 3"]);
    let red = "qdisc = { kind = \"red\", min_th = 0, max_th = 9 }\nbuffer = \"2pkt\"";
    has_all(&error_of(&edit(6, red), &[]), &["at least 3 packets"]);
    let e = error_of(&edit(6, "qdisc = { kind = \"red\", max_p = 1.5 }"), &[]);
    has_all(&e, &["bottleneck.qdisc.max_p", "1.5", "(0, 1]"]);
    let e = error_of(&edit(6, "qdisc = { kind = \"pie\", alpha = 101 }"), &[]);
    has_all(&e, &["scen.toml:6:", "bottleneck.qdisc.alpha = 101", "a number in [0, 100]"]);
    let e = error_of(&edit(6, "qdisc = { kind = \"codel\", target = \"0ms\" }"), &[]);
    has_all(&e, &["bottleneck.qdisc.target = \"0ms\"", "allowed: 1us to 100s"]);
    let e = error_of(&edit(6, "loss = { kind = \"gilbert\", p_good_to_bad = 0.01 }"), &[]);
    has_all(&e, &["bottleneck.loss.p_bad_to_good", "missing required field"]);
    let e = error_of(&edit(6, "loss = { kind = \"bursty\" }"), &[]);
    has_all(&e, &["bottleneck.loss.kind", "\"bursty\"", "\"bernoulli\" or \"gilbert\""]);
    let cross = |body: &str| format!("{BASE}[[cross]]\n{body}\n");
    let e = error_of(&cross("kind = \"pareto\"\nrate = \"1Mbps\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:14:",
            "cross[0].kind",
            "\"pareto\"",
            "\"cbr\", \"poisson\" or \"exponential\"",
        ],
    );
    let e = error_of(&cross("kind = \"cbr\"\nrate = \"1Mbps\"\nmean_on = \"1s\""), &[]);
    has_all(&e, &["cross[0].mean_on", "only for kind = \"exponential\""]);
    let e = error_of(&cross("kind = \"cbr\""), &[]);
    has_all(&e, &["cross[0].rate", "missing required field"]);
    let e = error_of(&cross("kind = \"cbr\"\nrate = \"1Mbps\"\npacket_size = \"10000B\""), &[]);
    has_all(
        &e,
        &["scen.toml:16:", "cross[0].packet_size = \"10000B\"", "allowed: 28 to 9000 bytes"],
    );
    // Each source within the limit, together far beyond it: each packet is an event, so
    // the run would take hours per simulated second.
    let e = error_of(&cross("kind = \"cbr\"\nrate = \"1000Gbps\"\ncount = 3"), &[]);
    has_all(
        &e,
        &[
            "cross = 3000Gbps in all from the forward sources",
            "allowed: their rates add up to at most 1000Gbps in each direction",
        ],
    );
    // A buffer in bytes holds as many of the run's smallest packets as fit: 28-byte UDP
    // packets make 100 MB half a billion of them, past what memory holds.
    let e = error_of(
        &edit(6, "buffer = \"15000MB\"").replacen(
            "[[flows]]",
            "[[cross]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npacket_size = \"28B\"\n[[flows]]",
            1,
        ),
        &[],
    );
    has_all(
        &e,
        &[
            "scen.toml:6: bottleneck.buffer = \"15000MB\"",
            "holds up to 535714285 packets of 28 bytes",
            "at most 280000000 bytes here",
        ],
    );
    // A trace whose mean is beyond the fastest link (every line one 1500-byte packet).
    let dir = TempDir::new("dense-trace");
    dir.write("dense.trace", &"1\n".repeat(100_000));
    dir.write("scen.toml", &edit(4, "trace = \"dense.trace\""));
    let o = run_in(dir.path(), &["run", "scen.toml", "--out", "out"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    has_all(
        &err,
        &[
            "bottleneck.trace",
            "its mean rate, 1200Gbps, is out of range; allowed: at most 1000Gbps",
        ],
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn reverse_traffic_options() {
    let cross = |body: &str| format!("{BASE}[[cross]]\nkind = \"cbr\"\nrate = \"1Mbps\"\n{body}\n");
    let e = error_of(&cross("direction = \"backward\""), &[]);
    has_all(
        &e,
        &[
            "scen.toml:16:",
            "cross[0].direction = \"backward\"",
            "allowed: \"forward\" or \"reverse\"",
        ],
    );
    let e = error_of(&cross("direction = 1"), &[]);
    has_all(&e, &["cross[0].direction = 1", "allowed: \"forward\" or \"reverse\""]);
    let e = error_of(&edit(9, "rtt = \"100ms\"\ndirection = \"up\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].direction = \"up\"", "\"forward\" or \"reverse\""]);
    let e = error_of(BASE, &["--set", "flows[1].direction=sideways"]);
    has_all(&e, &["flows[1].direction", "sideways", "\"forward\" or \"reverse\""]);
    let e = error_of(&edit(6, "reverse_rate = \"1bps\""), &[]);
    has_all(
        &e,
        &["scen.toml:6:", "bottleneck.reverse_rate = \"1bps\"", "allowed: 1Kbps to 1000Gbps"],
    );
    let e = error_of(&edit(6, "reverse_rate = 5"), &[]);
    has_all(&e, &["scen.toml:6:", "bottleneck.reverse_rate", "a rate such as"]);
}

#[test]
fn names_must_be_safe_folder_names() {
    let e = error_of(&format!("name = \"../../etc\"\n{BASE}"), &[]);
    has_all(&e, &["scen.toml:1:", "name", "\"../../etc\"", "letters, digits"]);
    // A flow's name may be any text but control characters, which would break the
    // terminal's table (an escape sequence could clear the screen).
    let e = error_of(&edit(9, "rtt = \"100ms\"\nname = \"a\\u001b[2Jb\""), &[]);
    has_all(&e, &["scen.toml:10:", "flows[0].name", "none of them a control character"]);
    let dir = TempDir::new("flow-name");
    dir.write("scen.toml", &edit(9, "rtt = \"100ms\"\nname = \"débit à 40 ms\""));
    run_ok(dir.path(), &["run", "scen.toml", "--out", "out"]);
}

#[test]
fn sweep_keys_must_be_fields() {
    // More bad sweep input is in crates/scenario/tests/sweep.rs.
    let e = error_of(&format!("sweep = {{ rtt = [\"10ms\"] }}\n{BASE}"), &[]);
    has_all(&e, &["scen.toml:1:", "rtt", "unknown field \"rtt\" at the top level"]);
}

#[test]
fn bad_overrides_name_the_field() {
    let e = error_of(BASE, &["--set", "flows[0].cc=cubik"]);
    has_all(&e, &["scen.toml (--set)", "flows[0].cc", "cubik", "known algorithms"]);
    let e = error_of(BASE, &["--set", "flows[7].cc=reno"]);
    has_all(&e, &["flows[7].cc", "flows has 2 entries"]);
    // Without "=" it is a malformed flag: a command-line error (exit 2), nothing run.
    let dir = TempDir::new("bad-set");
    dir.write("scen.toml", BASE);
    let o = run_in(dir.path(), &["run", "scen.toml", "--out", "out", "--set", "bottleneck.rate"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    has_all(&stderr(&o), &["'bottleneck.rate'", "--set <FIELD=VALUE>", "expected FIELD=VALUE"]);
    assert!(!dir.path().join("out").exists());
    // An "=" inside a quoted key is the key's, not the split (as the scenario reads it).
    let o = run_in(dir.path(), &["run", "scen.toml", "--out", "out", "--set", "sweep.\"a=b\""]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    has_all(&stderr(&o), &["expected FIELD=VALUE"]);
    let e = error_of(BASE, &["--set", "flows[x].cc=reno"]);
    has_all(&e, &["flows[x].cc", "is not a field path"]);
    // Nothing before the "=" is malformed too.
    let o = run_in(dir.path(), &["run", "scen.toml", "--out", "out", "--set", "=5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    has_all(&stderr(&o), &["'=5'", "expected FIELD=VALUE"]);
    let e = error_of(BASE, &["--set", "flows=[]"]);
    has_all(&e, &["flows = []: the list is empty", "at least one [[flows]]"]);
    // Text that opens a table must close it: taken for a word, it was refused as an
    // unknown queue discipline.
    let e = error_of(BASE, &["--set", "bottleneck.qdisc={kind=\"red\",max_p=0.2"]);
    has_all(&e, &["bottleneck.qdisc", "not a whole TOML value (unclosed inline table"]);
    let e = error_of(BASE, &["--set", "bottleneck.rate=fast"]);
    has_all(&e, &["bottleneck.rate = fast", "units: bps"]);
    let e = error_of(BASE, &["--set", "flows[0].rtt=10ms"]);
    has_all(&e, &["flows[0].rtt", "at least 2 x bottleneck.delay"]);
}

/// A whole-number flag out of range, negative or not a number at all says its range
/// (clap took "-1" for an unknown flag, and said "invalid digit" of "abc").
#[test]
fn whole_number_flags_name_their_range() {
    let dir = TempDir::new("bad-flags");
    for (args, want) in [
        (
            &["run", "--jobs", "-1"][..],
            "'-1' for '--jobs <JOBS>': expected a whole number from 1 to 1024",
        ),
        (&["run", "--jobs", "99999999999999999999"], "expected a whole number from 1 to 1024"),
        (
            &["reproduce", "--jobs", "0"],
            "'0' for '--jobs <JOBS>': expected a whole number from 1 to 1024",
        ),
        (
            &["serve", "--port", "-1"],
            "'-1' for '--port <PORT>': expected a whole number from 0 to 65535",
        ),
        (&["serve", "--port", "abc"], "expected a whole number from 0 to 65535"),
        (
            &["serve", "--max-runs", "-1"],
            "'--max-runs <MAX_RUNS>': expected a whole number from 1 to",
        ),
        (&["serve", "--idle-stop", "1e9"], "expected a whole number from 1 to 86400"),
        (
            &["serve", "--max-disk-mb", "0"],
            "'0' for '--max-disk-mb <MAX_DISK_MB>': expected a whole number from 1 to 100000000",
        ),
        (&["fidelity", "--runs", "21"], "'--runs <RUNS>': expected a whole number from 1 to 20"),
    ] {
        let o = run_in(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        has_all(&stderr(&o), &[want]);
    }
}

#[test]
fn unreadable_files() {
    let dir = TempDir::new("unreadable");
    let o = run_in(dir.path(), &["run", "nothere.toml"]);
    assert_eq!(o.status.code(), Some(1));
    has_all(&stderr(&o), &["nothere.toml", "cannot read the scenario file"]);
    std::fs::write(dir.path().join("bin.toml"), [0x64, 0xff, 0xfe, 0x0a]).unwrap();
    let o = run_in(dir.path(), &["run", "bin.toml"]);
    has_all(&stderr(&o), &["bin.toml", "not UTF-8"]);
    let o = run_in(dir.path(), &["run", "."]);
    has_all(&stderr(&o), &["is not a file"]);
}

#[test]
fn bad_flags_give_one_line_and_a_non_zero_exit() {
    let dir = TempDir::new("flags");
    for args in
        [&["run", "--bogus"][..], &["run", "--seed", "abc"], &["frobnicate"], &["bench", "--one"]]
            .into_iter()
            .chain([
                &["run", "--seed", "-3"][..],
                &["run", "--seed", "9223372036854775808"],
                &["fidelity", "--host-delay", "11ms"][..],
                &["fidelity", "--read-delay", "11ms"],
                &["fidelity", "--sim-runs", "0"],
                &["fidelity", "--hosts", "lab"],
            ])
    {
        let o = run_in(dir.path(), args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        // The help of the command given, where it is one.
        let help = match args[0] {
            "frobnicate" => "(see cclab --help)".to_string(),
            command => format!("(see cclab {command} --help)"),
        };
        assert!(e.starts_with("error: ") && e.contains(&help), "{e}");
    }
    // A value outside a fixed set is a bad command line too, and the line says what is
    // allowed; a missing argument is named.
    for flag in [&["run", "--seed"][..], &["fidelity", "--sim-seed"]] {
        let o = run_in(dir.path(), &[flag, &["-3"]].concat());
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("expected a whole number from 0 to 9223372036854775807"));
    }
    let o = run_in(dir.path(), &["bench", "--one", "nonesuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("allowed: a, b, c, d"), "{}", stderr(&o));
    let o = run_in(dir.path(), &["algorithms", "cubik"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'cubik'") && stderr(&o).contains("allowed: reno,"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("did you mean 'cubic'?"), "{}", stderr(&o));
    let o = run_in(dir.path(), &["compare", "a"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not provided: <DIR_B>"), "{}", stderr(&o));
    let o = run_in(dir.path(), &["run", "--out"]);
    assert!(!stderr(&o).contains("allowed:"), "{}", stderr(&o));
    // A testbed run is one scenario: no sweeps, so no `--jobs` (its help listed one).
    let o = run_in(dir.path(), &["testbed", "run", "--jobs", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unexpected argument '--jobs'"), "{}", stderr(&o));
}

#[test]
fn unknown_transport() {
    let e = error_of(&edit(12, "rtt = \"60ms\"\ntransport = \"quic\""), &[]);
    has_all(
        &e,
        &["scen.toml:13:", "flows[1].transport", "\"quic\"", "allowed: \"kernel\" or \"udp\""],
    );
}

/// A buffer in bytes smaller than one packet would drop every packet and the run would
/// "succeed" with nothing delivered: refused, naming the packet's own field.
#[test]
fn a_packet_larger_than_a_byte_buffer() {
    let e = error_of(
        &edit(6, "buffer = \"1500B\"").replacen("rtt = \"60ms\"", "rtt = \"60ms\"\nmss = 9000", 1),
        &[],
    );
    has_all(
        &e,
        &[
            "scen.toml:13:",
            "flows[1].mss = 9000",
            "9052 bytes",
            "buffer = 1500 bytes",
            "at most 1448",
        ],
    );
    let cross = "[[cross]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npacket_size = \"1600B\"\n";
    let e = error_of(&(edit(6, "buffer = \"1500B\"") + cross), &[]);
    has_all(&e, &["scen.toml:16:", "cross[0].packet_size = \"1600B\"", "at most 1500 bytes"]);
    // One packet that fits is allowed.
    let dir = TempDir::new("fits");
    dir.write("scen.toml", &edit(6, "buffer = \"1500B\""));
    assert!(run_in(dir.path(), &["run", "scen.toml", "--out", "out"]).status.success());
}

/// Sampling less often than once a run would leave one sample, at time zero.
#[test]
fn a_sample_interval_longer_than_the_run() {
    let e = error_of(&edit(2, "seed = 1\nsample_interval = \"3s\""), &[]);
    has_all(&e, &["scen.toml:3:", "sample_interval = \"3s\"", "allowed: 100us to duration = 2s"]);
    // The same range below it (it said "100us to 1000000s" there).
    let e = error_of(&edit(2, "seed = 1\nsample_interval = \"10us\""), &[]);
    has_all(&e, &["sample_interval = \"10us\"", "allowed: 100us to duration = 2s"]);
    // Unset, it is 10 ms, or the whole run when that is shorter.
    let dir = TempDir::new("short-run");
    dir.write("scen.toml", &edit(1, "duration = \"5ms\""));
    run_ok(dir.path(), &["run", "scen.toml", "--out", "out"]);
}

/// `cclab udp --csv` to a path that cannot be written is refused before anything runs
/// (it was found only after the whole run), without root, and leaves nothing behind.
#[test]
fn a_udp_csv_that_cannot_be_written_is_refused_first() {
    let dir = TempDir::new("udp-csv");
    let udp = ["udp", "--cc", "reno", "--uplink", "10Mbps", "--duration", "1s", "--csv"];
    let o = run_in(dir.path(), &[&udp[..], &["no-such-folder/x.csv"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    has_all(&stderr(&o), &["--csv: no-such-folder/x.csv cannot be written"]);
    let o = run_in(dir.path(), &[&udp[..], &["."]].concat());
    has_all(&stderr(&o), &["--csv: . is a folder"]);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}

/// A buffer written as a multiple of the BDP is refused in packets, which the user never
/// wrote: the refusal says what the multiple came to (a user's test, 2026-12-07).
#[test]
fn a_bdp_buffer_refused_says_what_it_came_to() {
    let e = error_of(&BASE.replace("10Mbps", "1000Gbps").replace("100ms", "200ms"), &[]);
    has_all(&e, &["scen.toml:6: bottleneck.buffer = \"1bdp\": out of range", "(bottleneck.buffer = \"1bdp\" is 16666667 packets here: the rate x the largest flow RTT, 200ms"]);
    let red = BASE.replace("buffer = \"1bdp\"", "buffer = \"0.01bdp\"\nqdisc = \"red\"");
    let e = error_of(&red, &[]);
    has_all(
        &e,
        &["RED would never drop early", "(bottleneck.buffer = \"0.01bdp\" is 1 packets here"],
    );
}
