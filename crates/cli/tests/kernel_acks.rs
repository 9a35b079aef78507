//! The scripts that trace the kernel's TCP during a short testbed run (root, TUN and
//! tracefs; each test skips with a printed reason elsewhere), each leaving the tracing
//! state as it found it:
//! - scripts/kernel-acks.sh traces the kernel's senders and says how each ACK was
//!   answered. What it prints shows the rule the simulator's `psh` models (Linux 6.18's
//!   `tcp_tso_should_defer`): a segment the window lets out alone waits only when the ACK
//!   of the oldest outstanding segment is due within about a millisecond, and some do wait.
//! - scripts/host-times.sh measures the hosts' timing that `cclab fidelity --hosts
//!   testbed` models: the ACKs left to the application's read and the senders' answer.

mod common;
use common::*;
use std::path::{Path, PathBuf};
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

/// Held by each test for its whole run: both scripts mount tracefs if it is not mounted
/// and unmount it after, so a test that looked while the other's script ran would find
/// it in the other's state (the scripts themselves wait for each other on the root lock).
static TRACING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Why `script` cannot run here (no root, TUN or tracefs), if it cannot.
fn tracing_unavailable(script: &str) -> Option<String> {
    if let Some(why) = testbed_unavailable() {
        return Some(format!("{script} needs root and TUN: {why}"));
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !filesystems.contains("tracefs") || !Path::new(TRACEFS).is_dir() {
        return Some(format!("{script} needs tracefs, which this kernel lacks"));
    }
    None
}

/// Runs `script` (in scripts/) on matrix file `file` cut to 8 s, with its output in `out`
/// under `dir`, and checks that it left tracefs as it found it (mounted or not, and the
/// events it used off) and succeeded; `None`, with the reason printed, where it cannot run.
fn traced_run(dir: &TempDir, script: &str, file: &str, events: &[&str]) -> Option<PathBuf> {
    if let Some(why) = tracing_unavailable(&format!("scripts/{script}")) {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let _tracing = TRACING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mounted_before = tracefs_mounted();
    let text = std::fs::read_to_string(repo().join(format!("scenarios/fidelity/{file}.toml")))
        .unwrap()
        .replace("duration = \"30s\"", "duration = \"8s\"");
    let scenario = dir.write("scenario.toml", &text);
    let out = dir.path().join("out");
    let run = Command::new("bash")
        .arg(repo().join("scripts").join(script))
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .env("CCLAB_BIN", env!("CARGO_BIN_EXE_cclab"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(tracefs_mounted(), mounted_before, "tracefs left as it was found");
    if mounted_before {
        for event in events {
            let enabled = std::fs::read_to_string(format!("{TRACEFS}/events/{event}/enable"));
            assert_eq!(enabled.unwrap().trim(), "0", "{event} left off");
        }
    }
    assert!(run.status.success(), "{script} failed:\n{}", stderr(&run));
    assert!(out.join("run/summary.json").exists() && out.join("trace.txt").exists());
    Some(out)
}

#[test]
fn the_kernel_holds_a_lone_segment_back_only_for_an_ack_due_within_a_millisecond() {
    let dir = TempDir::new("kernel-acks");
    let events = ["tcp/tcp_probe", "tcp/tcp_retransmit_skb", "tcp/tcp_sendmsg_locked"];
    let Some(out) = traced_run(&dir, "kernel-acks.sh", "cubic-vs-reno", &events) else { return };
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

/// The numbers of `text` in order (words that parse once their punctuation is trimmed).
fn numbers(text: &str) -> Vec<f64> {
    let trim = |w: &str| w.trim_matches(|c: char| !c.is_ascii_digit() && c != '.').to_string();
    text.split_whitespace().filter_map(|w| trim(w).parse().ok()).collect()
}

/// The value after `label` in `text` (e.g. "p50" in a row of percentiles), if a number.
fn value_after(text: &str, label: &str) -> Option<f64> {
    let rest = text.split(label).nth(1)?;
    numbers(rest.split_whitespace().next()?).first().copied()
}

/// The hosts' timing on Reno at RTT ratio 4, whose 20 ms flow's receive window grows to
/// its clamp early, after which Linux leaves most of its ACKs to the application's read
/// (73% to 75% of them over 30 s runs on 2026-11-28; 30% over the 8 s here, slow start
/// included): the script finds those ACKs, their delay after the segment (45 to 47 us
/// median on this machine; more than 10 us, a thread's wake-up, is asserted), the
/// senders' answers, and prints the two values for `cclab fidelity`. The share is the
/// kernel's, not the script's, and it varies: on 2026-11-29, 18 runs of this 8 s case by
/// hand gave 30% to 38%, and two of five runs of this test (one in CI) 4.6% and 7.0%, a
/// few hundred ACKs. So what is asserted is that the script finds them at all: at least
/// 2% of the ACKs, over a hundred.
#[test]
fn host_times_finds_the_acks_left_to_the_read_and_the_senders_answer() {
    let dir = TempDir::new("host-times");
    let events = ["tcp/tcp_probe", "net/net_dev_queue", "tcp/tcp_rcv_space_adjust"];
    let Some(out) = traced_run(&dir, "host-times.sh", "rtt4-reno-reno", &events) else { return };
    assert!(out.join("packets.csv").is_file());
    let text = std::fs::read_to_string(out.join("hosts.txt")).unwrap();
    let flows: Vec<&str> = text.split("\n198.18.").collect();
    assert_eq!(flows.len(), 2, "a section per flow:\n{text}");
    // "198.18.1.1: 18946 ACKs reached the emulator, 13813 (72.9%) sent after the read"
    let counts = numbers(flows[0].lines().next().unwrap().split_once(": ").unwrap().1);
    let [acks, read_path, share] = counts[..] else { panic!("{text}") };
    assert!(acks > 1000.0 && read_path <= acks, "the 20 ms flow's ACKs:\n{text}");
    assert!(share >= 2.0, "some of the 20 ms flow's ACKs wait for the read:\n{text}");
    for flow in &flows {
        let answer = flow.split("sender's answer to an ACK").nth(1).unwrap_or("");
        let p50 = value_after(answer, "p50 ").unwrap_or_else(|| panic!("{flow}"));
        assert!(p50 > 0.0 && p50 < 1000.0, "{flow}");
    }
    let read = flows[0].split("segment arrival to that ACK").nth(1).unwrap_or("");
    let p50 = value_after(read, "p50 ").unwrap_or_else(|| panic!("{text}"));
    assert!(p50 > 10.0 && p50 < 1000.0, "a read-path ACK waits for a thread:\n{text}");
    let host = value_after(&text, "--host-delay ").unwrap_or_else(|| panic!("{text}"));
    let read = value_after(&text, "--read-delay ").unwrap_or_else(|| panic!("{text}"));
    assert!((1.0..1000.0).contains(&host) && (10.0..1000.0).contains(&read), "{text}");
}
