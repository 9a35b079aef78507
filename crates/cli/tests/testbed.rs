//! `cclab testbed run` through the binary: each flow's `transport` field picks the kernel's
//! TCP or cclab's own TCP over UDP, and the results folder has the same files as a
//! simulated run. Needs root and /dev/net/tun; skips with a printed reason elsewhere.

mod common;
use common::*;

fn testbed_unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 {
        return Some("not root".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    None
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

/// A kernel CUBIC flow and a user-space Tahoe flow (the kernel has no Tahoe) share an
/// emulated 10 Mbit/s link for 4 s; both move data and the link is well used.
#[test]
fn per_flow_transport_mixes_kernel_and_udp_flows() {
    if let Some(why) = testbed_unavailable() {
        eprintln!("SKIPPED: the testbed needs root and TUN: {why}");
        return;
    }
    let dir = TempDir::new("testbed");
    dir.write(
        "mixed.toml",
        "duration = \"4s\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"10ms\"\nbuffer = \"1bdp\"\n\
         [[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\n\
         [[flows]]\ncc = \"tahoe\"\nrtt = \"40ms\"\ntransport = \"udp\"\n",
    );
    let o = run_in(dir.path(), &["testbed", "run", "mixed.toml", "--out", "tb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["summary.json", "perf.json", "flows.csv", "queue.csv", "cwnd.svg", "report.html"] {
        assert!(dir.path().join("tb").join(f).exists(), "{f} missing");
    }
    // perf.json with what a real-time run has: no simulator events.
    let perf = std::fs::read_to_string(dir.path().join("tb/perf.json")).unwrap();
    let p: serde_json::Value = serde_json::from_str(&perf).unwrap();
    assert_eq!(p["emulated_s"].as_f64(), Some(4.0), "{perf}");
    assert!(p["wall_s"].as_f64().unwrap() >= 4.0, "{perf}");
    assert!(p["bottleneck_packets"].as_u64().unwrap() > 1000, "{perf}");
    assert!(p.get("events").is_none() && p.get("simulated_s").is_none(), "{perf}");
    assert!(stdout(&o).contains("emulated 4 s in"), "{}", stdout(&o));
    let summary = std::fs::read_to_string(dir.path().join("tb/summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let flows = v["flows"].as_array().unwrap();
    assert_eq!(flows[0]["cc"], "cubic");
    assert_eq!(flows[1]["cc"], "tahoe");
    for f in flows {
        let g = f["goodput_bps"].as_f64().unwrap();
        assert!(g > 1e6, "every flow moves data: {f}");
    }
    let util = v["link"]["utilization"].as_f64().unwrap();
    assert!(util > 0.8, "utilisation {util}");

    // Without the per-flow field, the kernel has no tahoe: a clear error, not a substitute.
    let o = run_in(
        dir.path(),
        &["testbed", "run", "mixed.toml", "--out", "tb2", "--transport", "kernel"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("tahoe"), "{err}");
    assert!(!dir.path().join("tb2").exists(), "nothing written on failure");
}
