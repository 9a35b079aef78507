//! `cclab run --packet-log FILE`: the simulator's packet events, in the format of the
//! testbed's log (`cclab testbed run --packet-log`, tested in `testbed.rs`), so that
//! `scripts/packet_log.py` reads both.

mod common;
use common::*;
use std::collections::HashMap;
use std::path::Path;

/// The testbed test's scenario: a CUBIC and a Reno flow of unlike RTTs on a 20-packet
/// DropTail buffer, which overflows.
const TWO_FLOWS: &str = "duration = \"4s\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
    buffer = \"20pkt\"\n[[flows]]\ncc = \"cubic\"\nrtt = \"20ms\"\n[[flows]]\ncc = \"reno\"\n\
    rtt = \"40ms\"\n";

/// Lines of the log by (event, direction, address), after checking each line's form:
/// thirteen fields (the TCP header's seven empty), times in order, a backlog only on arrivals and drops and a due time,
/// equal to the event's own, only on departures and releases. Also the largest backlog.
fn read_log(path: &Path) -> (HashMap<(String, String, String), u64>, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("event,direction,time_ns,address,queue_packets,due_ns,seq,ack,flags,window,payload_bytes,tsval,tsecr")
    );
    let (mut count, mut last, mut most) = (HashMap::new(), 0u64, 0u64);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 13, "{line}");
        assert!(f[6..].iter().all(|c| c.is_empty()), "no TCP header in the simulator's: {line}");
        let t: u64 = f[2].parse().unwrap();
        assert!(t >= last, "time goes back: {line}");
        last = t;
        if matches!(f[0], "arrive" | "drop") {
            most = most.max(f[4].parse().unwrap());
            assert!(f[5].is_empty(), "{line}");
        } else {
            assert!(f[4].is_empty(), "{line}");
            assert_eq!(f[5], f[2], "the simulator is never late: {line}");
        }
        *count.entry((f[0].into(), f[1].into(), f[3].into())).or_default() += 1;
    }
    (count, most)
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Every packet event of both flows is there, consistent with the run's own counts to
/// the packet (the simulator stops at the run's end, so nothing is left out); recording
/// changes nothing in the results; the same seed writes the same log; and the script
/// reads it as it reads the testbed's.
#[test]
fn a_simulated_run_logs_every_packet_event_as_the_testbed_does() {
    let dir = TempDir::new("sim-log");
    dir.write("two.toml", TWO_FLOWS);
    let log = dir.path().join("packets.csv");
    let args = ["run", "two.toml", "--out", "sim", "--packet-log", log.to_str().unwrap()];
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (count, most) = read_log(&log);
    let n = |e: &str, d: &str, a: &str| count.get(&(e.into(), d.into(), a.into())).copied();
    let n = |e: &str, d: &str, a: &str| n(e, d, a).unwrap_or(0);
    let s = summary(&dir.path().join("sim"));
    let (mut departed, mut dropped) = (0, 0);
    for (i, addr) in ["198.18.1.1", "198.18.1.2"].into_iter().enumerate() {
        for d in ["up", "down"] {
            assert!(n("arrive", d, addr) > 100, "{addr} {d}: {count:?}");
        }
        let (arrived, departs) = (n("arrive", "up", addr), n("depart", "up", addr));
        assert!(arrived >= departs && arrived - departs <= 21, "{addr}: {count:?}");
        assert!(departs >= n("release", "up", addr), "{addr}: {count:?}");
        assert_eq!(n("drop", "up", addr), s["flows"][i]["drops"].as_u64().unwrap(), "{addr}");
        assert_eq!(n("drop", "down", addr), 0, "no bottleneck on the way back");
        assert!(n("release", "down", addr) <= n("arrive", "down", addr), "{count:?}");
        departed += departs;
        dropped += n("drop", "up", addr);
    }
    assert_eq!(departed, s["link"]["delivered_packets"].as_u64().unwrap());
    assert_eq!(dropped, s["link"]["drops"].as_u64().unwrap());
    assert!(dropped > 0, "a 20-packet buffer overflows");
    assert!((20..=21).contains(&most), "the backlog reaches the buffer and the link: {most}");

    // The same run without the log: every result file the same.
    let o = run_in(dir.path(), &["run", "two.toml", "--out", "plain"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for entry in std::fs::read_dir(dir.path().join("sim")).unwrap() {
        let name = entry.unwrap().file_name();
        if name != "perf.json" {
            let read = |d: &str| std::fs::read(dir.path().join(d).join(&name)).unwrap();
            assert!(read("sim") == read("plain"), "{name:?} differs with the log on");
        }
    }
    // The same seed, the same log.
    let again = dir.path().join("again.csv");
    let args = ["run", "two.toml", "--out", "sim2", "--packet-log", again.to_str().unwrap()];
    assert!(run_in(dir.path(), &args).status.success());
    assert!(std::fs::read(&log).unwrap() == std::fs::read(&again).unwrap());

    assert_the_script_reads_the_packet_log(&log);
}

/// ACKs that queue at a reverse bottleneck (behind reverse traffic) are logged there,
/// arrivals, departures and all, in the "down" direction.
#[test]
fn acks_at_a_reverse_bottleneck_are_logged_there() {
    let dir = TempDir::new("sim-log-rev");
    dir.write(
        "rev.toml",
        "duration = \"2s\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"5ms\"\nbuffer = \"20pkt\"\n\
         [[flows]]\ncc = \"cubic\"\nrtt = \"20ms\"\n\
         [[flows]]\ncc = \"cubic\"\nrtt = \"20ms\"\ndirection = \"reverse\"\n",
    );
    let log = dir.path().join("packets.csv");
    let o = run_in(dir.path(), &["run", "rev.toml", "--packet-log", log.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (count, _) = read_log(&log);
    let n = |e: &str, d: &str, a: &str| count.get(&(e.into(), d.into(), a.into())).copied();
    let n = |e: &str, d: &str, a: &str| n(e, d, a).unwrap_or(0);
    // Each flow's data one way and its ACKs the other, both through a bottleneck.
    for (addr, data, acks) in [("198.18.1.1", "up", "down"), ("198.18.1.2", "down", "up")] {
        for d in [data, acks] {
            assert!(n("depart", d, addr) > 100, "{addr} {d}: {count:?}");
            assert!(n("arrive", d, addr) >= n("depart", d, addr), "{addr} {d}: {count:?}");
        }
    }
}

/// Cross traffic is logged at its bottleneck under host B's address, as the testbed's log
/// has it, each way: its arrivals and drops are what its sources sent (DropTail: a drop
/// is a refused arrival), its drops and departures what summary.json counts; the flows'
/// records are as before.
#[test]
fn cross_traffic_is_logged_at_its_bottleneck_under_host_bs_address() {
    let dir = TempDir::new("sim-log-cross");
    let cross = "[[cross]]\nkind = \"poisson\"\nrate = \"3Mbps\"\ncount = 2\n\
                 [[cross]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ndirection = \"reverse\"\n";
    dir.write("cross.toml", &format!("{TWO_FLOWS}{cross}"));
    let log = dir.path().join("packets.csv");
    let o = run_in(
        dir.path(),
        &["run", "cross.toml", "--out", "sim", "--packet-log", log.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (count, _) = read_log(&log);
    let n = |e: &str, d: &str, a: &str| count.get(&(e.into(), d.into(), a.into())).copied();
    let n = |e: &str, d: &str, a: &str| n(e, d, a).unwrap_or(0);
    let s = summary(&dir.path().join("sim"));
    let sources = s["cross"].as_array().unwrap();
    let total = |direction: &str, key: &str| -> u64 {
        let of = sources.iter().filter(|c| c["direction"] == direction);
        of.map(|c| c[key].as_u64().unwrap()).sum()
    };
    for d in ["up", "down"] {
        let direction = if d == "up" { "forward" } else { "reverse" };
        let (arrived, dropped) = (n("arrive", d, "198.18.0.2"), n("drop", d, "198.18.0.2"));
        assert_eq!(arrived + dropped, total(direction, "sent_packets"), "{d}: {count:?}");
        assert_eq!(dropped, total(direction, "drops"), "{d}");
        assert_eq!(n("depart", d, "198.18.0.2"), total(direction, "delivered_packets"), "{d}");
        assert_eq!(
            n("release", d, "198.18.0.2"),
            0,
            "the simulator's cross traffic ends at its bottleneck"
        );
    }
    assert!(total("forward", "drops") > 0, "the buffer overflows with the sources' packets in it");
    // The flows' own records add up to the link's counts less the cross traffic's.
    let flows_dropped: u64 = ["198.18.1.1", "198.18.1.2"].iter().map(|a| n("drop", "up", a)).sum();
    assert_eq!(flows_dropped + total("forward", "drops"), s["link"]["drops"].as_u64().unwrap());
    assert_the_script_reads_the_packet_log(&log);
    // The script names the cross traffic as such, with its counts and no ACK latencies.
    let script = repo().join("scripts/packet_log.py");
    let o = std::process::Command::new("python3").arg(&script).arg(&log).output().unwrap();
    let report = String::from_utf8(o.stdout).unwrap();
    let line = format!(
        "198.18.0.2 (cross traffic): arrived/dropped/departed/released up {}/{}/{}/0",
        n("arrive", "up", "198.18.0.2"),
        n("drop", "up", "198.18.0.2"),
        n("depart", "up", "198.18.0.2")
    );
    assert!(report.contains(&line), "{line}\n{report}");
    assert_eq!(report.matches("receiver's ACK latency").count(), 2, "{report}");
}

/// A log that cannot be written stops the run before it starts, naming the flag and the
/// path, with no results folder; a sweep (many runs) is refused a log.
#[test]
fn a_packet_log_it_cannot_write_or_a_sweep_is_refused_before_the_run() {
    let dir = TempDir::new("sim-log-bad");
    dir.write("two.toml", TWO_FLOWS);
    let missing = dir.path().join("no-such-dir/packets.csv");
    let args = ["run", "two.toml", "--out", "out", "--packet-log", missing.to_str().unwrap()];
    let o = run_in(dir.path(), &args);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("--packet-log") && err.contains("no-such-dir"), "{err}");
    assert!(!dir.path().join("out").exists(), "nothing written on failure");

    dir.write(
        "sweep.toml",
        &format!("{TWO_FLOWS}[sweep]\n\"flows[0].rtt\" = [\"20ms\", \"30ms\"]\n"),
    );
    let o = run_in(dir.path(), &["run", "sweep.toml", "--packet-log", "p.csv"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("--packet-log") && err.contains("sweep"), "{err}");
    assert!(!dir.path().join("p.csv").exists());
}

/// A log never overwrites a file that is not a packet log, never lies inside the results
/// folder the run replaces, and a refused --out leaves an earlier log as it was.
#[test]
fn a_packet_log_never_replaces_a_users_file_or_lies_inside_the_results() {
    let dir = TempDir::new("sim-log-guard");
    dir.write("two.toml", TWO_FLOWS);
    dir.write("keep.csv", "mine\n");
    let o = run_in(dir.path(), &["run", "two.toml", "--out", "out", "--packet-log", "keep.csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("keep.csv: exists and is not a packet log"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(dir.path().join("keep.csv")).unwrap(), "mine\n");
    assert!(!dir.path().join("out").exists(), "nothing written");

    let o = run_in(dir.path(), &["run", "two.toml", "--out", "out", "--packet-log", "out/p.csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("lies inside --out out"), "{}", stderr(&o));

    let ok = run_in(dir.path(), &["run", "two.toml", "--out", "out", "--packet-log", "p.csv"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let log = std::fs::read_to_string(dir.path().join("p.csv")).unwrap();
    dir.write("taken", "a file where --out wants a folder");
    let o = run_in(dir.path(), &["run", "two.toml", "--out", "taken", "--packet-log", "p.csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(dir.path().join("p.csv")).unwrap(), log, "log kept");
}
