//! scripts/kernel-acks.sh on a short testbed run (root, TUN and tracefs; skips with a
//! printed reason elsewhere): it traces the kernel's senders, says how each ACK was
//! answered, and leaves the tracing state as it found it. What it prints shows the rule
//! the simulator's `psh` models (Linux 6.18's `tcp_tso_should_defer`): a segment the
//! window lets out alone waits only when the ACK of the oldest outstanding segment is due
//! within about a millisecond, and some do wait.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

const TRACEFS: &str = "/sys/kernel/tracing";

fn tracefs_mounted() -> bool {
    Path::new(TRACEFS).join("events").exists()
}

/// One flow's rows of the last table: (ms ahead the ACK was due, held back, sent alone).
fn due_rows(flow: &str) -> Vec<(f64, u64, u64)> {
    let table = flow.split("oldest segment's ACK due in (ms)").nth(1).unwrap_or("");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (ahead, counts) = line.trim().split_once(':')?;
            let ahead: f64 = ahead.trim_start_matches(['<', '>', '=']).parse().ok()?;
            let (held, sent) = counts.split_once('/')?;
            Some((ahead, held.trim().parse().ok()?, sent.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn the_kernel_holds_a_lone_segment_back_only_for_an_ack_due_within_a_millisecond() {
    if let Some(why) = testbed_unavailable() {
        eprintln!("SKIPPED: scripts/kernel-acks.sh needs root and TUN: {why}");
        return;
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !filesystems.contains("tracefs") || !Path::new(TRACEFS).is_dir() {
        eprintln!("SKIPPED: scripts/kernel-acks.sh needs tracefs, which this kernel lacks");
        return;
    }
    let mounted_before = tracefs_mounted();
    let dir = TempDir::new("kernel-acks");
    let text = std::fs::read_to_string(repo().join("scenarios/fidelity/cubic-vs-reno.toml"))
        .unwrap()
        .replace("duration = \"30s\"", "duration = \"8s\"");
    let scenario = dir.write("pair.toml", &text);
    let out = dir.path().join("out");
    let run = Command::new("bash")
        .arg(repo().join("scripts/kernel-acks.sh"))
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .env("CCLAB_BIN", env!("CARGO_BIN_EXE_cclab"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(tracefs_mounted(), mounted_before, "tracefs left as it was found");
    if mounted_before {
        let enabled = std::fs::read_to_string(format!("{TRACEFS}/events/tcp/tcp_probe/enable"));
        assert_eq!(enabled.unwrap().trim(), "0", "tcp_probe left off");
    }
    assert!(run.status.success(), "kernel-acks.sh failed:\n{}", stderr(&run));
    assert!(out.join("run/summary.json").exists() && out.join("trace.txt").exists());
    let text = std::fs::read_to_string(out.join("acks.txt")).unwrap();
    let flows: Vec<&str> = text.split("flow from port ").skip(1).collect();
    assert_eq!(flows.len(), 2, "a section per flow:\n{text}");
    let mut held_in_all = 0;
    for flow in &flows {
        let counted = flow.split(':').nth(1).and_then(|t| t.split_whitespace().next());
        let counted: u64 = counted.and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!(counted > 500, "ACKs counted:\n{flow}");
        let rows = due_rows(flow);
        let (late_held, late_sent) =
            rows.iter().filter(|r| r.0 >= 1.5).fold((0, 0), |(h, s), r| (h + r.1, s + r.2));
        assert_eq!(late_held, 0, "held back though the next ACK was 1.5 ms or more away:\n{flow}");
        assert!(late_sent > 0, "sent alone with the next ACK far ahead:\n{flow}");
        held_in_all += rows.iter().filter(|r| r.0 <= 0.75).map(|r| r.1).sum::<u64>();
    }
    assert!(held_in_all > 0, "some lone segments wait for an ACK due within 1 ms:\n{text}");
}
