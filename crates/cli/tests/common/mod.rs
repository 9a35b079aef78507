//! Helpers shared by the integration tests: the built binary, temporary folders that
//! clean up after themselves (also when a test panics), and the repository's paths.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// The files of a results folder written with CSV series (`cclab run`).
pub const RESULT_FILES: &[&str] = &[
    "summary.json",
    "perf.json",
    "flows.csv",
    "queue.csv",
    "cwnd.svg",
    "goodput.svg",
    "queue.svg",
    "rtt.svg",
    "report.html",
];

/// Whether this process is root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { geteuid() == 0 }
}

extern "C" {
    fn geteuid() -> u32;
}

/// Why real TCP through the emulator cannot run here (it needs root and /dev/net/tun),
/// or None when it can.
pub fn testbed_unavailable() -> Option<String> {
    if !is_root() {
        return Some("not root".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    None
}

/// The network namespaces of the cclab process `pid` that are still there
/// (`cclab-<pid>-<n>-<side>`), in name order.
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("cclab-{pid}-");
    let mut v: Vec<String> = std::fs::read_dir("/run/netns")
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    v.retain(|n| n.starts_with(&prefix));
    v.sort();
    v
}

pub fn cclab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cclab"))
}

/// The workspace root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// A fresh folder under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "cclab-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// Writes `name` (a path below the folder; its folders are made) with `text`.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).expect("make the test file's folder");
        std::fs::write(&p, text).expect("write test file");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `cclab` with `args` in `cwd`.
pub fn run_in(cwd: &Path, args: &[&str]) -> Output {
    cclab().current_dir(cwd).args(args).output().expect("run cclab")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `cclab args` in `cwd`, expecting success, and returns its stdout.
pub fn run_ok(cwd: &Path, args: &[&str]) -> String {
    let o = run_in(cwd, args);
    assert!(o.status.success(), "cclab {args:?} failed: {}", stderr(&o));
    stdout(&o)
}

/// The values of column `column` in flow `flow`'s rows of a results folder's flows.csv,
/// in time order (empty cells kept).
pub fn flow_column(dir: &Path, flow: usize, column: &str) -> Vec<String> {
    let path = dir.join("flows.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| header.iter().position(|&h| h == name).expect(name);
    let (cf, cv) = (col("flow"), col(column));
    let flow = flow.to_string();
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[cf] == flow)
        .map(|c| c[cv].to_string())
        .collect()
}

/// A valid small scenario to start from (lines numbered for the tests that edit it):
/// 1 duration, 2 seed, 3 [bottleneck], 4 rate, 5 delay, 6 buffer, 7 [[flows]], 8 cc, 9 rtt,
/// 10 [[flows]], 11 cc, 12 rtt.
pub const BASE: &str = "duration = \"2s\"\nseed = 1\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"20ms\"\nbuffer = \"1bdp\"\n[[flows]]\ncc = \"reno\"\nrtt = \"100ms\"\n[[flows]]\ncc = \"tahoe\"\nrtt = \"60ms\"\n";

/// Runs `scripts/packet_log.py` on the packet log `log` of a run of two flows (the
/// testbed's receiver addresses 198.18.1.1 and .2) that overflowed its queue after its
/// first second, and checks that it reports both flows, their ACK latency and the
/// overflows.
pub fn assert_the_script_reads_the_packet_log(log: &Path) {
    let script = repo().join("scripts/packet_log.py");
    let o = Command::new("python3").arg(&script).arg(log).arg("--skip").arg("1").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    for addr in ["198.18.1.1", "198.18.1.2"] {
        assert!(report.contains(&format!("{addr}: arrived/dropped/departed/released")), "{report}");
    }
    assert_eq!(report.matches("receiver's ACK latency, us: p5").count(), 2, "{report}");
    assert!(report.contains("overflows after 1 s:"), "{report}");
}
