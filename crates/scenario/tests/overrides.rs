//! `--set FIELD=VALUE` overrides and the conversion to SimConfig, checked on the config
//! the scenario crate hands to the simulator.

use cclab_scenario::{load_default, load_file, load_file_or_sweep, parse_str, Loaded};
use cclab_sim::{Buffer, CrossKind, LinkRate, LossModel, Qdisc, TcpConfig};
use cclab_units::{Duration, Rate, Time};
use std::path::Path;

fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn set(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn overrides_change_the_fields_they_name() {
    let s = load_default(&set(&[
        "bottleneck.rate=20Mbps",
        "flows[0].cc=tahoe",
        "duration=10s",
        "flows[1].rtt=80ms",
        "seed=42",
    ]))
    .unwrap();
    let c = &s.config;
    assert!(matches!(c.bottleneck.rate, LinkRate::Constant(r) if r == Rate::from_mbps(20)));
    assert_eq!(c.flows[0].cc, "tahoe");
    assert_eq!(c.duration, Duration::from_secs(10));
    assert_eq!(c.flows[1].rtt, Duration::from_millis(80));
    assert_eq!(c.seed, 42);
    // The default buffer is 1 BDP of the *overridden* rate and the largest RTT:
    // 20 Mbit/s x 100 ms = 250,000 B = 167 packets of 1500 B (rounded up).
    assert_eq!(c.bottleneck.buffer, Buffer::Packets(167));
}

/// The command line refuses these before they come here; other callers (an expected
/// file's `[quick]` overrides) get the same refusal from the scenario crate.
#[test]
fn an_override_must_name_a_field_before_its_equals_sign() {
    for bad in ["=5", " =5", "rate"] {
        let e = load_default(&set(&[bad])).err().unwrap_or_else(|| panic!("{bad:?} taken"));
        let e = e.to_string();
        assert!(
            e.contains("names no field before '='") || e.contains("expects FIELD=VALUE"),
            "{e}"
        );
    }
}

#[test]
fn overrides_can_add_tables_and_later_ones_win() {
    let s = load_default(&set(&[
        "bottleneck.qdisc={ kind = \"red\", max_p = 0.2 }",
        "bottleneck.loss=0.01",
        "flows[0].initcwnd=3",
        "flows[0].initcwnd=4",
    ]))
    .unwrap();
    let c = &s.config;
    match &c.bottleneck.qdisc {
        Qdisc::Red(r) => assert_eq!(
            (r.min_th, r.max_th, r.max_p, r.weight, r.gentle),
            (5.0, 15.0, 0.2, 0.002, true)
        ),
        q => panic!("expected RED, got {q:?}"),
    }
    assert_eq!(c.bottleneck.loss, LossModel::Bernoulli { p: 0.01 });
    assert_eq!(c.flows[0].tcp.init_cwnd, 4);
    let s = load_default(&set(&["name=renamed"])).unwrap();
    assert_eq!(s.name, "renamed");
    // A number where a string is expected is taken as typed on the command line.
    let s = load_default(&set(&["name=123"])).unwrap();
    assert_eq!(s.name, "123");
}

#[test]
fn the_issue_example_parses_as_written() {
    let path = repo().join("scenarios/cubic-vs-reno.toml");
    let s = load_file(&path, &[]).unwrap();
    let c = &s.config;
    assert_eq!((c.flows[0].cc.as_str(), c.flows[1].cc.as_str()), ("cubic", "reno"));
    assert_eq!(
        (s.name.as_str(), c.seed, c.duration),
        ("cubic-vs-reno", 1, Duration::from_secs(60))
    );
    assert_eq!(c.flows[0].stop, Some(Time(60_000_000_000)));
    assert_eq!(c.flows[1].stop, None);
    assert_eq!(c.cross.len(), 5);
    assert!(c
        .cross
        .iter()
        .all(|x| x.rate == Rate::from_mbps(1) && matches!(x.kind, CrossKind::Exponential { .. })));
    // 10 Mbit/s x 100 ms = 125,000 B = 84 packets.
    assert_eq!(c.bottleneck.buffer, Buffer::Packets(84));
    assert_eq!(c.bottleneck.loss, LossModel::None);
}

#[test]
fn count_expands_into_numbered_flows() {
    let text = "duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"10ms\"\ncount = 3\n[[flows]]\nname = \"bulk\"\ncc = \"tahoe\"\nrtt = \"20ms\"\nbytes = \"1MB\"\nstart = \"0.5s\"\n";
    let s = parse_str(text, "t.toml", None, "t", &[]).unwrap();
    let names: Vec<&str> = s.config.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["reno#0", "reno#1", "reno#2", "bulk"]);
    assert_eq!(s.name, "t");
    assert_eq!(s.config.flows[3].bytes, Some(1_000_000));
    assert_eq!(s.config.flows[3].start, Time(500_000_000));
    assert_eq!(s.config.sample_interval, Duration::from_millis(10));
}

#[test]
fn buffers_in_every_written_form() {
    let with = |b: &str| {
        let text = format!("duration = \"1s\"\n[bottleneck]\nrate = \"12Mbps\"\ndelay = \"1ms\"\nbuffer = {b}\n[[flows]]\ncc = \"reno\"\nrtt = \"100ms\"\n");
        parse_str(&text, "t.toml", None, "t", &[]).unwrap().config.bottleneck.buffer
    };
    assert_eq!(with("\"1bdp\""), Buffer::Packets(100)); // 12 Mbit/s x 100 ms = 150 KB
    assert_eq!(with("\"0.5bdp\""), Buffer::Packets(50));
    assert_eq!(with("\"25pkt\""), Buffer::Packets(25));
    assert_eq!(with("40"), Buffer::Packets(40));
    assert_eq!(with("\"64KB\""), Buffer::Bytes(64_000));
    assert_eq!(with("\"1MB\""), Buffer::Bytes(1_000_000));
}

#[test]
fn changes_are_sorted_by_time_and_converted() {
    let text = "duration = \"10s\"\n[bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"10ms\"\n\
                [[changes]]\nat = \"5s\"\nflow = 0\nset = { rto_min = \"50ms\" }\n[[changes]]\nat = \"2s\"\nflow = 0\nset = { initcwnd = 4 }\n";
    let c = parse_str(text, "t.toml", None, "t", &[]).unwrap().config;
    assert_eq!(c.changes.len(), 2);
    assert_eq!(
        (c.changes[0].at, c.changes[0].set.clone()),
        (Time(2_000_000_000), vec![("initcwnd".to_string(), 4.0)])
    );
    assert_eq!(c.changes[1].set, vec![("rto_min".to_string(), 50.0)]);
}

/// Every shipped scenario, and every point of every shipped sweep, validates. (The
/// papers' values, `*.expected.toml`, are read by crates/cli/tests/reproduce.rs.)
#[test]
fn every_shipped_scenario_validates() {
    let (mut n, mut sweeps) = (0, 0);
    for dir in ["scenarios", "scenarios/small", "scenarios/seeds"] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".toml") && !name.ends_with(".expected.toml") {
                match load_file_or_sweep(&p, &[]).unwrap_or_else(|e| panic!("{e}")) {
                    Loaded::Single(_) => n += 1,
                    Loaded::Sweep(_) => sweeps += 1,
                }
            }
        }
    }
    assert!(n >= 12 && sweeps >= 9, "found {n} scenarios and {sweeps} sweeps");
}

/// Every parameter of every algorithm accepts its default, in `params` and in
/// `[[changes]]` (vacuous until an algorithm with parameters is on main; CUBIC brings them).
#[test]
fn every_parameter_default_is_accepted_in_params_and_changes() {
    let mut n = 0;
    for info in cclab_cc::ALGORITHMS {
        for p in info.params {
            let v = if p.kind == cclab_cc::ParamKind::Bool {
                (p.default != 0.0).to_string()
            } else {
                format!("{:?}", p.default)
            };
            let text = format!(
                "duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\ncc = \"{}\"\nrtt = \"10ms\"\nparams = {{ {} = {v} }}\n[[changes]]\nat = \"0.5s\"\nflow = 0\nset = {{ {} = {v} }}\n",
                info.name, p.name, p.name
            );
            let c =
                parse_str(&text, "t.toml", None, "t", &[]).unwrap_or_else(|e| panic!("{e}")).config;
            assert_eq!(c.flows[0].params, vec![(p.name.to_string(), p.default)]);
            assert_eq!(c.changes[0].set, vec![(p.name.to_string(), p.default)]);
            n += 1;
        }
    }
    eprintln!("{n} parameters accepted at their defaults");
}

#[test]
fn a_flow_can_be_left_out_from_the_command_line() {
    let s = load_default(&set(&["flows[0].enabled=false"])).unwrap();
    assert_eq!(s.config.flows.len(), 1);
    assert_eq!(s.config.flows[0].cc, load_default(&[]).unwrap().config.flows[1].cc);
    // A left-out entry is still checked, and one flow at least must run.
    let e = load_default(&set(&["flows[0].enabled=false", "flows[0].cc=cubik"])).unwrap_err();
    assert!(e.to_string().contains("flows[0].cc"), "{e}");
    let e = load_default(&set(&["flows[0].enabled=false", "flows[1].enabled=false"]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("every [[flows]] entry has enabled = false"), "{e}");
    let e = load_default(&set(&["flows[0].enabled=maybe"])).unwrap_err().to_string();
    assert!(e.contains("flows[0].enabled") && e.contains("expected true or false"), "{e}");
}

/// Switching an entry off keeps every flow's number: a change or a reference by index
/// stays on the flow it named, and one naming a flow that does not run is refused.
#[test]
fn a_flow_left_out_keeps_the_others_numbers() {
    let text = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
[[flows]]
cc = "reno"
rtt = "40ms"
count = 2
[[flows]]
cc = "cubic"
rtt = "40ms"
[[changes]]
at = "5s"
flow = 2
set = { beta = 0.5 }
[metrics]
reference = 2
"#;
    let off = |list: &[&str]| parse_str(text, "t.toml", None, "t", &set(list));
    let s = off(&["flows[0].enabled=false"]).unwrap();
    assert_eq!(s.config.flows.len(), 1);
    assert_eq!((s.config.changes[0].flow, s.config.flows[0].cc.as_str()), (0, "cubic"));
    assert_eq!(s.config.flows[0].name, "cubic#2", "named by its number in the file");
    assert_eq!(s.metrics.reference, Some(cclab_scenario::metrics_spec::Reference::Flow(0)));
    assert_eq!((s.numbers.file_index(0), s.numbers.len()), (2, 3));
    // Groups are still the entries' names (or algorithms), not one per flow.
    let s = off(&["flows[0].enabled=false", "flows[1].count=2", "metrics.reference=\"cubic\""])
        .unwrap();
    assert_eq!(s.metrics.groups, ["cubic", "cubic"]);
    assert_eq!(
        s.metrics.reference,
        Some(cclab_scenario::metrics_spec::Reference::Group("cubic".into()))
    );
    // All running: the file's numbers are the run's.
    let s = off(&[]).unwrap();
    assert_eq!((s.config.changes[0].flow, s.config.flows[2].name.as_str()), (2, "cubic#2"));
    // A change or a reference naming a flow that does not run.
    let e = off(&["flows[1].enabled=false"]).unwrap_err().to_string();
    assert!(
        e.contains("changes[0].flow = 2") && e.contains("flows[1], which has enabled = false"),
        "{e}"
    );
    let e = off(&["flows[0].enabled=false", "changes[0].flow=1"]).unwrap_err().to_string();
    assert!(e.contains("changes[0].flow = 1") && e.contains("flows[0]"), "{e}");
    let e = off(&["flows[0].enabled=false", "metrics.reference=0"]).unwrap_err().to_string();
    assert!(e.contains("metrics.reference = 0") && e.contains("enabled = false"), "{e}");
    let e = off(&["flows[0].enabled=false", "changes[0].set.beta=2"]).unwrap_err().to_string();
    assert!(e.contains("out of range for flow 2 (cubic)"), "named by its number in the file: {e}");
    let e = off(&["flows[0].enabled=false", "changes[0].flow=3"]).unwrap_err().to_string();
    assert!(e.contains("changes[0].flow = 3") && e.contains("[0, 2] (there are 3 flows)"), "{e}");
}

/// A switch of each flow's TCP, on by default: `off` turns it off for one flow only,
/// leaving `expected`, and `bad` (not a boolean) is refused naming the field.
fn check_flow_switch(off: &str, expected: [bool; 2], bad: &str, read: fn(&TcpConfig) -> bool) {
    let s = load_default(&set(&[off])).unwrap();
    let on: Vec<bool> = s.config.flows.iter().map(|f| read(&f.tcp)).collect();
    assert_eq!(on, expected, "{off}");
    let e = load_default(&set(&[bad])).unwrap_err().to_string();
    let field = bad.split('=').next().unwrap();
    assert!(e.contains(field) && e.contains("expected true or false"), "{e}");
}

#[test]
fn the_handshake_is_on_unless_a_flow_turns_it_off() {
    let (off, bad) = ("flows[1].handshake=false", "flows[0].handshake=1");
    check_flow_switch(off, [true, false], bad, |t| t.handshake);
}

#[test]
fn rack_is_on_unless_a_flow_turns_it_off() {
    let (off, bad) = ("flows[0].rack=false", "flows[1].rack=\"dupthresh\"");
    check_flow_switch(off, [false, true], bad, |t| t.rack);
}

#[test]
fn tlp_is_on_unless_a_flow_turns_it_off() {
    let (off, bad) = ("flows[1].tlp=false", "flows[0].tlp=\"off\"");
    check_flow_switch(off, [true, false], bad, |t| t.tlp);
}

/// A trace the caller has read is parsed from its text: no file of that name is looked
/// for, and a bad text is refused under the trace's name, not a path.
#[test]
fn a_trace_given_as_text_is_parsed_from_the_text() {
    let text = "duration = \"1s\"\n[bottleneck]\ntrace = \"nowhere.trace\"\ndelay = \"5ms\"\n[[flows]]\ncc = \"cubic\"\nrtt = \"20ms\"\n";
    let s = cclab_scenario::parse_str_with_trace(text, "t.toml", "1\n1\n3\n", "t").unwrap();
    let LinkRate::Trace(t) = &s.config.bottleneck.rate else { panic!("a trace link") };
    assert_eq!(t.opportunities_ms, [1, 1, 3]);
    let e = cclab_scenario::parse_str_with_trace(text, "t.toml", "root:x\n", "t").unwrap_err();
    assert_eq!(e.field, "bottleneck.trace");
    assert!(e.to_string().contains("nowhere.trace is not a mahimahi trace"), "{e}");
    // Without the text, the file is looked for, and is not there.
    let e = parse_str(text, "t.toml", None, "t", &[]).unwrap_err();
    assert!(e.to_string().contains("cannot read trace file"), "{e}");
}
