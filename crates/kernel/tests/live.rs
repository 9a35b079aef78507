//! Live kernel tests (root, BPF): load/list/get/set/unload round trip, range errors,
//! cleanup, and real TCP through a tbf bottleneck between two network namespaces.
//!
//! The path: namespaces `cclabk<pid>a` (sender) and `cclabk<pid>b` (receiver), a veth
//! pair with addresses in 198.19.0.0/16 (inside 198.18.0.0/15), and on the sender's veth
//! `tbf rate 20mbit burst 16kb limit 60kb`. There is no added propagation delay: this
//! kernel has neither netem nor fq (so no EDT delay from a tc BPF program either), and a
//! user-space TUN delay line is the emulator's job (crates/emu). The RTT (~0.1 ms base)
//! is made by the tbf queue itself (up to 24 ms when full): a bufferbloated bottleneck.
//! That is enough for what is checked here: the algorithm fills the bottleneck, and its
//! multiplicative decrease at each loss is seen in ssthresh / cwnd sampled with TCP_INFO
//! every half millisecond.
//!
//! Everything is removed afterwards by Drop guards, also when an assertion fails:
//! namespaces (and with them veths and qdiscs), BPF pins, registrations. The struct_ops
//! names are global, so these tests take one lock and fail with a clear message if a
//! `cclab kernel load` from outside holds the names.

use cclab_kernel::loader::{DefaultNow, Unloaded};
use cclab_kernel::{run_params, socket, Algo, Kernel};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// Why this machine cannot run these tests (not root, or a kernel without BTF), if so. A
/// capable machine whose build lacked the BPF programs is a failure, not a skip: the
/// build dependencies are missing there, and a silent skip would hide it.
fn skip_reason() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("no kernel BTF".into());
    }
    if let Some(why) = cclab_kernel::bpf_unavailable() {
        panic!(
            "this machine can run the kernel tests, but the build has no BPF programs: {why} \
             (then rebuild: cargo clean -p cclab-kernel)"
        );
    }
    None
}

macro_rules! skip_unless_capable {
    () => {
        if let Some(why) = skip_reason() {
            eprintln!("SKIPPED: kernel BPF tests need root and BPF: {why}");
            return;
        }
    };
}

/// Loads algorithms under a private pin root; unloads everything on drop.
struct Loaded {
    k: Kernel,
    algos: Vec<Algo>,
}

impl Loaded {
    fn new(algos: &[Algo]) -> Loaded {
        let k = Kernel::with_pin_root(PathBuf::from(format!(
            "/sys/fs/bpf/cclab-test-{}",
            std::process::id()
        )));
        let l = Loaded { k, algos: algos.to_vec() };
        for &a in algos {
            l.k.load(a).unwrap_or_else(|e| panic!("loading {}: {e}", a.name()));
        }
        l
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        for &a in &self.algos {
            if let Err(e) = self.k.unload(a) {
                eprintln!("cleanup: unloading {}: {e}", a.name());
            }
        }
        let _ = std::fs::remove_dir_all(&self.k.pin_root);
    }
}

fn available() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap()
}

fn sh(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("running {args:?}: {e}"));
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Two namespaces joined by a veth pair with a tbf bottleneck on the sender side.
struct Path {
    a: String,
    b: String,
    addr_b: String,
}

impl Path {
    /// `rate` at the tbf on a -> b with `limit` bytes of buffer.
    fn new(rate: &str, limit: &str) -> Path {
        let pid = std::process::id();
        let (a, b) = (format!("cclabk{pid}a"), format!("cclabk{pid}b"));
        let subnet = 100 + pid % 100;
        let p = Path { a: a.clone(), b: b.clone(), addr_b: format!("198.19.{subnet}.2") };
        sh(&["ip", "netns", "add", &a]);
        sh(&["ip", "netns", "add", &b]);
        sh(&[
            "ip", "-n", &a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", &b,
        ]);
        sh(&["ip", "-n", &a, "addr", "add", &format!("198.19.{subnet}.1/24"), "dev", "va"]);
        sh(&["ip", "-n", &b, "addr", "add", &format!("198.19.{subnet}.2/24"), "dev", "vb"]);
        for (ns, dev) in [(&a, "va"), (&b, "vb")] {
            sh(&["ip", "-n", ns, "link", "set", dev, "up"]);
            sh(&["ip", "-n", ns, "link", "set", "lo", "up"]);
        }
        sh(&[
            "tc", "-n", &a, "qdisc", "add", "dev", "va", "root", "tbf", "rate", rate, "burst",
            "16kb", "limit", limit,
        ]);
        p
    }
}

impl Drop for Path {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Runs `f` in a thread that has entered network namespace `ns`.
fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let f_ns = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        // SAFETY: setns on this thread only, with a valid namespace fd.
        let rc = unsafe { libc::setns(f_ns.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    })
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    t: Duration,
    cwnd: u32,
    ssthresh: u32,
    ca_state: u8,
}

struct Flow {
    goodput_bps: f64,
    samples: Vec<Sample>,
}

fn tcp_info(fd: i32) -> Option<libc::tcp_info> {
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: info is a valid tcp_info buffer of len bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some(info)
}

/// One bulk flow a -> b with congestion control `cc` for `secs`; `during(elapsed)` is
/// called every 100 ms from the test thread (to retune live). Goodput is measured at the
/// receiver over the flow after the first second.
fn bulk_flow(path: &Path, cc: &str, secs: u64, mut during: impl FnMut(Duration)) -> Flow {
    let port = 5001;
    let addr: SocketAddr = format!("{}:{port}", path.addr_b).parse().unwrap();
    let listener_ready = Arc::new(AtomicBool::new(false));
    let ready = listener_ready.clone();
    let receiver = in_netns(&path.b, move || {
        let l = TcpListener::bind(addr).expect("bind receiver");
        ready.store(true, Ordering::SeqCst);
        let (mut s, _) = l.accept().expect("accept");
        let mut buf = vec![0u8; 1 << 16];
        let start = Instant::now();
        let (mut total, mut after_warmup) = (0u64, 0u64);
        let mut warm_at = None;
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n as u64;
                    if start.elapsed() >= Duration::from_secs(1) {
                        warm_at.get_or_insert(Instant::now());
                        after_warmup += n as u64;
                    }
                }
            }
        }
        let span = warm_at.map(|w| w.elapsed().as_secs_f64()).unwrap_or(1.0);
        (total, after_warmup as f64 * 8.0 / span)
    });
    while !listener_ready.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let cc_name = cc.to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_s = stop.clone();
    let samples = Arc::new(Mutex::new(Vec::new()));
    let samples_s = samples.clone();
    let sender = in_netns(&path.a, move || {
        let s = connect_with(addr, &cc_name);
        let fd = s.as_raw_fd();
        let sampler_stop = Arc::new(AtomicBool::new(false));
        let ss = sampler_stop.clone();
        let sampler = std::thread::spawn(move || {
            let t0 = Instant::now();
            while !ss.load(Ordering::SeqCst) {
                if let Some(i) = tcp_info(fd) {
                    samples_s.lock().unwrap().push(Sample {
                        t: t0.elapsed(),
                        cwnd: i.tcpi_snd_cwnd,
                        ssthresh: i.tcpi_snd_ssthresh,
                        ca_state: i.tcpi_ca_state,
                    });
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        });
        let chunk = vec![0x5au8; 1 << 16];
        let mut s = s;
        while !stop_s.load(Ordering::SeqCst) {
            if s.write_all(&chunk).is_err() {
                break;
            }
        }
        sampler_stop.store(true, Ordering::SeqCst);
        sampler.join().unwrap();
        let _ = s.shutdown(std::net::Shutdown::Write);
    });
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_millis(100));
        during(start.elapsed());
    }
    stop.store(true, Ordering::SeqCst);
    sender.join().expect("sender thread");
    let (_, goodput) = receiver.join().expect("receiver thread");
    let samples = Arc::try_unwrap(samples).unwrap().into_inner().unwrap();
    Flow { goodput_bps: goodput, samples }
}

/// A connected TCP socket running `cc` from its handshake on, checked by reading it back.
fn connect_with(addr: SocketAddr, cc: &str) -> TcpStream {
    let SocketAddr::V4(v4) = addr else { unreachable!("the test paths are IPv4") };
    let s = socket::connect_with_congestion(v4, cc).unwrap_or_else(|e| panic!("{e}"));
    let got = socket::congestion(s.as_raw_fd()).expect("TCP_CONGESTION");
    assert_eq!(got, cc, "the socket runs {got}, not {cc}");
    s
}

/// Multiplicative decreases: at each entry into loss recovery (ca_state from Open or
/// Disorder to Recovery or Loss), the new ssthresh over the largest cwnd sampled in the
/// 20 ms before (cwnd when the kernel called ssthresh(); PRR lowers cwnd right after).
/// A sample no congestion control on these paths can produce: cwnd beyond a million
/// packets, or an ssthresh that is negative as Linux's `int` arithmetic reads it (other
/// than "infinite", 0x7fffffff). Seen about once in 15 runs under load, for
/// `cclab_tuner` only: on entry to Recovery the socket's `snd_ssthresh` became
/// 0x81104110, the low half of a kernel text address (stale stack), although the
/// program's translated code (`bpftool prog dump xlated`) returns at most cwnd, and a
/// kernel trace (tcp_probe, tcp_cong_state_set) showed PRR
/// (`tcp_cwnd_reduction`) then growing cwnd by ssthresh / prior_cwnd per ACK. The cause
/// in the kernel's struct_ops call path is not yet proven; see the README's "Known
/// issues".
fn impossible_sample(samples: &[Sample]) -> Option<&Sample> {
    samples
        .iter()
        .find(|s| s.cwnd >= 1 << 20 || (s.ssthresh >= 1 << 31 && s.ssthresh != u32::MAX >> 1))
}

/// [`bulk_flow`] without `during`, run once more (saying so) when the kernel produced
/// an [`impossible_sample`]; a second one fails the test.
fn bulk_flow_checked(path: &Path, cc: &str, secs: u64) -> Flow {
    run_checked(cc, || bulk_flow(path, cc, secs, |_| {}), |flow| &flow.samples)
}

/// `run()`, once more (saying so) when the samples of what it returns hold an
/// [`impossible_sample`]; a second one fails the test.
fn run_checked<T>(cc: &str, mut run: impl FnMut() -> T, samples: impl Fn(&T) -> &[Sample]) -> T {
    let first = run();
    let Some(bad) = impossible_sample(samples(&first)) else { return first };
    eprintln!(
        "KERNEL ANOMALY: {cc} at {:?}: cwnd {} ssthresh {:#x} (ca_state {}); running the flow again",
        bad.t, bad.cwnd, bad.ssthresh, bad.ca_state
    );
    let again = run();
    if let Some(bad) = impossible_sample(samples(&again)) {
        panic!(
            "{cc}: the kernel again stored an impossible window: cwnd {} ssthresh {:#x} at {:?}",
            bad.cwnd, bad.ssthresh, bad.t
        );
    }
    again
}

fn backoffs(samples: &[Sample], from: Duration, to: Duration) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..samples.len() {
        let (p, s) = (samples[i - 1], samples[i]);
        if s.t < from || s.t > to || p.ca_state >= 3 || s.ca_state < 3 {
            continue;
        }
        let cwnd = samples[..i]
            .iter()
            .rev()
            .take_while(|x| s.t - x.t <= Duration::from_millis(20))
            .map(|x| x.cwnd)
            .max()
            .unwrap_or(p.cwnd);
        if cwnd > 10 {
            out.push(s.ssthresh as f64 / cwnd as f64);
        }
    }
    out
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[test]
fn load_list_get_set_unload_round_trip_leaves_nothing_behind() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let pin_root;
    let ours: Vec<u64>;
    let our_maps: Vec<u64>;
    {
        let before = cclab_prog_ids();
        let maps_before = cclab_struct_ops_ids();
        let l = Loaded::new(&Algo::ALL);
        pin_root = l.k.pin_root.clone();
        ours = cclab_prog_ids().into_iter().filter(|id| !before.contains(id)).collect();
        assert_eq!(ours.len(), 14, "7 struct_ops programs per algorithm: {ours:?}");
        our_maps =
            cclab_struct_ops_ids().into_iter().filter(|id| !maps_before.contains(id)).collect();
        assert_eq!(our_maps.len(), 2, "{our_maps:?}");
        let avail = available();
        assert!(avail.contains("cclab_tuner") && avail.contains("cclab_cubic_fit"), "{avail}");
        for a in Algo::ALL {
            let st = l.k.status(a);
            assert!(st.pinned && st.registered, "{a:?}: {st:?}");
        }
        // Loading again is refused with a clear message.
        let e = l.k.load(Algo::Tuner).unwrap_err().to_string();
        assert!(e.contains("already loaded"), "{e}");

        let before = l.k.get(Algo::Tuner).unwrap();
        assert!(
            before.contains(&("beta", 717.0 / 1024.0)) && before.contains(&("alpha", 1.0)),
            "{before:?}"
        );
        l.k.set(
            Algo::Tuner,
            &[("beta".into(), 0.5), ("alpha".into(), 1.5), ("fast_convergence".into(), 0.0)],
        )
        .unwrap();
        let after = l.k.get(Algo::Tuner).unwrap();
        for want in [("beta", 0.5), ("alpha", 1.5), ("fast_convergence", 0.0), ("bic_scale", 41.0)]
        {
            assert!(after.contains(&want), "{want:?} in {after:?}");
        }
        // Range errors name parameter, value and range, and change nothing.
        let e =
            l.k.set(Algo::Tuner, &[("alpha".into(), 1.0), ("beta".into(), 1.5)])
                .unwrap_err()
                .to_string();
        assert!(e.contains("\"beta\"") && e.contains("1.5") && e.contains("(0, 1]"), "{e}");
        let e = l.k.set(Algo::Tuner, &[("alpha".into(), 2.5)]).unwrap_err().to_string();
        assert!(e.contains("\"alpha\"") && e.contains("(0, 2]"), "{e}");
        assert_eq!(l.k.get(Algo::Tuner).unwrap(), after, "a refused set must not write");
        let fit = l.k.get(Algo::CubicFit).unwrap();
        assert!(fit.contains(&("hystart", 1.0)), "{fit:?}");
        let s = l.k.fit_stats().unwrap();
        assert_eq!(s.updates, 0);
        // A map's pin removed by hand (an operator's test): the error says how to make
        // the pins again, and unload (on drop) still removes everything.
        std::fs::remove_file(pin_root.join("cclab_cubic_fit/params")).unwrap();
        let e = l.k.get(Algo::CubicFit).unwrap_err().to_string();
        assert!(
            e.contains("pins are incomplete: run `cclab kernel unload cclab_cubic_fit`"),
            "{e}"
        );
    }
    // Dropped: unloaded.
    let avail = available();
    assert!(!avail.contains("cclab_"), "still registered: {avail}");
    assert!(!pin_root.exists(), "pins left in {}", pin_root.display());
    // Objects of earlier tests may live on while sockets that used them finish closing
    // (and the kernel bug described in loader.rs set_default can keep one forever), so
    // only the ids this test created are checked.
    assert_freed(|id| ours.contains(id), |id| our_maps.contains(id));
}

/// Waits up to 5 s for the kernel to free the BPF programs and struct_ops maps named
/// cclab_* that `prog` and `map` pick by id (it frees them, deferred, once the last
/// reference goes), and fails if any is still there.
fn assert_freed(prog: impl Fn(&u64) -> bool, map: impl Fn(&u64) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let progs: Vec<u64> = cclab_prog_ids().into_iter().filter(&prog).collect();
        let maps: Vec<u64> = cclab_struct_ops_ids().into_iter().filter(&map).collect();
        if progs.is_empty() && maps.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "BPF programs {progs:?} / struct_ops maps {maps:?} still there 5 s after unload"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Ids of struct_ops maps named cclab_* (registered or not).
fn cclab_struct_ops_ids() -> Vec<u64> {
    let out = Command::new("bpftool").args(["-j", "struct_ops", "list"]).output().expect("bpftool");
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    v.as_array()
        .map(|a| {
            a.iter()
                .filter(|m| m["name"].as_str().is_some_and(|n| n.starts_with("cclab_")))
                .filter_map(|m| m["id"].as_u64())
                .collect()
        })
        .unwrap_or_default()
}

/// Ids of loaded BPF programs whose name starts with cclab_.
fn cclab_prog_ids() -> Vec<u64> {
    let out = Command::new("bpftool").args(["-j", "prog", "list"]).output().expect("bpftool");
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    v.as_array()
        .map(|a| {
            a.iter()
                .filter(|p| p["name"].as_str().is_some_and(|n| n.starts_with("cclab_")))
                .filter_map(|p| p["id"].as_u64())
                .collect()
        })
        .unwrap_or_default()
}

fn netns_list() -> String {
    Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

#[test]
fn unload_cleans_up_after_a_crashed_load() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let k = Kernel::with_pin_root(format!("/sys/fs/bpf/cclab-test-crash-{}", std::process::id()));
    // A crash between pinning the map and attaching leaves a directory without a link.
    let dir = k.dir(Algo::Tuner);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("params"), b"").ok(); // bpffs refuses regular files; fine if absent
    assert!(k.unload(Algo::Tuner).is_ok());
    assert!(!dir.exists());
    // `cclab-kernel load` in a child process that exits: the pins alone keep the
    // algorithm registered, and `unload` from another process finds them.
    let cli = env!("CARGO_BIN_EXE_cclab-kernel");
    let run = |args: &[&str]| {
        let out =
            Command::new(cli).args(args).env("CCLAB_BPF_PIN_DIR", &k.pin_root).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (ok, text) = run(&["load", "cclab_tuner"]);
    assert!(ok, "{text}");
    assert!(available().contains("cclab_tuner"), "registered after the loader exited");
    let (ok, text) = run(&["load", "cclab_tuner"]);
    assert!(ok && text.contains("cclab_tuner was already loaded"), "loading again: {text}");
    let (ok, text) = run(&["set", "cclab_tuner", "beta=0.5", "fast_convergence=false"]);
    assert!(ok && text.contains("beta = 0.5\n"), "{text}");
    // A value between two of the kernel's fixed-point steps is kept as the step, saying so.
    let (ok, text) = run(&["set", "cclab_tuner", "alpha=0.0001"]);
    assert!(
        ok && text
            .contains("alpha = 0.001953125 (asked 0.0001: the kernel keeps it in fixed point)"),
        "{text}"
    );
    run(&["set", "cclab_tuner", "alpha=1"]);
    let (ok, text) = run(&["get", "cclab_tuner"]);
    assert!(
        ok && text.contains("beta = 0.5") && text.contains("fast_convergence = false"),
        "{text}"
    );
    let (ok, text) = run(&["set", "cclab_tuner", "beta=1.5"]);
    assert!(
        !ok && text.contains("\"beta\" = 1.5 is out of range; allowed: a number in (0, 1]"),
        "{text}"
    );
    assert!(matches!(k.unload(Algo::Tuner).unwrap(), Unloaded::Done { .. }));
    assert!(!available().contains("cclab_tuner"));
    let (ok, text) = run(&["get", "cclab_tuner"]);
    assert!(!ok && text.contains("not loaded"), "{text}");
    let _ = std::fs::remove_dir_all(&k.pin_root);
}

/// Runs the `cclab-kernel` binary with `args` and the pin root `pin_root`; returns whether
/// it succeeded and its stdout and stderr.
fn run_cli(pin_root: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cclab-kernel"))
        .args(args)
        .env("CCLAB_BPF_PIN_DIR", pin_root)
        .output()
        .unwrap();
    (out.status.success(), output_text(&out))
}

fn output_text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Issue 8: on a machine where nothing is mounted on /sys/fs/bpf, every load failed. Here
/// each script runs under `unshare -m`, a private copy of the mount table (util-linux makes
/// its propagation private) in which /sys/fs/bpf is unmounted first: whatever the host has
/// mounted, and whatever tests ran before, the commands meet a machine without bpffs, and
/// nothing done there reaches the host's mounts.
#[test]
fn load_set_unload_work_where_no_bpf_filesystem_is_mounted() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let pin_root =
        PathBuf::from(format!("/sys/fs/bpf/cclab-test-unmounted-{}", std::process::id()));
    let progs_before = cclab_prog_ids();
    let maps_before = cclab_struct_ops_ids();
    let in_private_mount_ns = |script: &str| {
        let unmount = "while umount /sys/fs/bpf 2>/dev/null; do :; done\n\
                       if grep -q ' /sys/fs/bpf bpf ' /proc/mounts; then echo 'still mounted'; exit 90; fi\n";
        let out = Command::new("unshare")
            .args(["-m", "sh", "-c", &format!("{unmount}{script}")])
            .env("CLI", env!("CARGO_BIN_EXE_cclab-kernel"))
            .env("CCLAB_BPF_PIN_DIR", &pin_root)
            .output()
            .expect("unshare (util-linux)");
        (out.status.success(), output_text(&out))
    };

    // A command alone in its mount namespace cannot keep a mount: refused, saying why.
    let (ok, text) = in_private_mount_ns("exec \"$CLI\" load cclab_tuner");
    assert!(
        !ok && text.contains("no BPF filesystem at /sys/fs/bpf")
            && text.contains("no other process shares this mount namespace")
            && text.contains("vanish"),
        "{text}"
    );
    assert!(!available().contains("cclab_tuner"), "registered after a refused load");

    // With the shell sharing the namespace, `load` mounts bpffs and its pins outlive it.
    let script = r#"set -e
        "$CLI" load cclab_tuner
        grep ' /sys/fs/bpf bpf ' /proc/mounts
        grep -qw cclab_tuner /proc/sys/net/ipv4/tcp_available_congestion_control
        "$CLI" set cclab_tuner beta=0.5
        "$CLI" get cclab_tuner
        "$CLI" unload cclab_tuner
        if grep -qw cclab_tuner /proc/sys/net/ipv4/tcp_available_congestion_control; then
            echo 'still registered'; exit 91
        fi
        test ! -e "$CCLAB_BPF_PIN_DIR"
    "#;
    let (ok, text) = in_private_mount_ns(script);
    assert!(ok, "{text}");
    for want in ["loaded cclab_tuner", "bpf /sys/fs/bpf bpf", "mode=700", "beta = 0.5", "unloaded"]
    {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    // Nothing is left behind: no registration, no pins, no programs or maps.
    assert!(!available().contains("cclab_tuner"), "{}", available());
    assert!(!pin_root.exists());
    assert_freed(|id| !progs_before.contains(id), |id| !maps_before.contains(id));

    // Loaded from the host, then asked from a namespace with a BPF filesystem of its own
    // (a shell under `unshare -m` that mounted one): its pins are not there, and unload
    // says so rather than "was not loaded"; it stays registered, and the host unloads it.
    let host = Kernel::with_pin_root(pin_root.clone());
    let _unload = Loaded { k: host.clone(), algos: vec![Algo::Tuner] };
    let (ok, text) = run_cli(&pin_root, &["load", "cclab_tuner"]);
    assert!(ok, "{text}");
    let script = "mount -t bpf -o mode=0700 bpf /sys/fs/bpf && exec \"$CLI\" unload cclab_tuner";
    let (ok, text) = in_private_mount_ns(script);
    assert!(
        !ok && text.contains("cclab_tuner is registered, but its pins cannot be seen")
            && text.contains("holds none in this mount namespace"),
        "{text}"
    );
    assert!(available().contains("cclab_tuner"), "unregistered from the other namespace");
    let (ok, text) = run_cli(&pin_root, &["unload", "cclab_tuner"]);
    assert!(ok && text.contains("unloaded cclab_tuner"), "{text}");

    // A pin root on no BPF filesystem, outside /sys/fs/bpf: nothing to mount, a clear error.
    let elsewhere = std::env::temp_dir().join(format!("cclab-not-bpffs-{}", std::process::id()));
    let (ok, text) = run_cli(&elsewhere, &["load", "cclab_tuner"]);
    assert!(
        !ok && text.contains(&format!("no BPF filesystem at {}", elsewhere.display()))
            && text.contains("mount -t bpf"),
        "{text}"
    );
    assert!(!elsewhere.exists());
}

/// Pins are meant to outlive the command that made them, so `load` reaps only loads that
/// died half-way (a directory without a link), never a complete one, and never one that a
/// running command is still making (it holds the lock on the pin root's parent).
#[test]
fn load_reaps_half_made_loads_of_dead_commands_and_nothing_else() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let k = Kernel::with_pin_root(format!("/sys/fs/bpf/cclab-test-reap-{}", std::process::id()));
    let _unload_all = Loaded { k: k.clone(), algos: Algo::ALL.to_vec() };
    let root = k.pin_root.clone();

    // A deliberate load by a command that has exited, retuned since.
    let (ok, text) = run_cli(&root, &["load", "cclab_tuner"]);
    assert!(ok, "{text}");
    let (ok, text) = run_cli(&root, &["set", "cclab_tuner", "beta=0.5"]);
    assert!(ok, "{text}");
    // What a load of cclab_cubic_fit killed after pinning its params map leaves behind.
    let half_made = k.dir(Algo::CubicFit);
    std::fs::create_dir_all(&half_made).unwrap();
    let opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
        sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
        ..Default::default()
    };
    let mut map =
        libbpf_rs::MapHandle::create(libbpf_rs::MapType::Array, Some("cclab_half"), 4, 4, 1, &opts)
            .unwrap();
    map.pin(half_made.join("params")).unwrap();
    drop(map);

    // A command holding the lock is a load in progress: nothing is reaped under it.
    let lock = std::fs::File::open(root.parent().unwrap()).unwrap();
    lock.lock().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_cclab-kernel"))
        .args(["load", "cclab_cubic_fit"])
        .env("CCLAB_BPF_PIN_DIR", &root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(half_made.join("params").exists(), "reaped while another command held the lock");
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let said: Vec<&str> = text.lines().filter(|l| l.contains("half-made")).collect();
    assert_eq!(said.len(), 1, "one line names what was reaped:\n{text}");
    assert!(said[0].contains(&half_made.display().to_string()), "{text}");
    assert!(!said[0].contains("cclab_tuner"), "the complete load is not named: {text}");

    // The half-made load is replaced by a real one; the complete one kept its tuning.
    for a in Algo::ALL {
        let st = k.status(a);
        assert!(st.pinned && st.registered, "{a:?}: {st:?}");
    }
    assert!(k.get(Algo::Tuner).unwrap().contains(&("beta", 0.5)));
    // Nothing half-made: nothing said.
    assert!(matches!(k.unload(Algo::CubicFit).unwrap(), Unloaded::Done { .. }));
    let (ok, text) = run_cli(&root, &["load", "cclab_cubic_fit"]);
    assert!(ok && !text.contains("half-made"), "{text}");
}

#[test]
fn tuner_backs_off_to_beta_and_follows_a_live_beta_change() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let l = Loaded::new(&[Algo::Tuner]);
    let path = Path::new("20mbit", "60kb");
    // A 12 s flow whose beta goes from the default 0.7 to 0.5 at 6 s; when it changed.
    let run = || {
        l.k.set(Algo::Tuner, &[("beta".into(), 0.7)]).unwrap();
        let mut changed_at = None;
        let flow = bulk_flow(&path, "cclab_tuner", 12, |t| {
            if t >= Duration::from_secs(6) && changed_at.is_none() {
                l.k.set(Algo::Tuner, &[("beta".into(), 0.5)]).unwrap();
                changed_at = Some(t);
            }
        });
        (flow, changed_at.unwrap())
    };
    // The kernel anomaly of `impossible_sample` (the README's "Known issues") showed here
    // once in a clean-clone CI run: after it, PRR's wrapped windows made a dozen entries
    // into recovery whose backoffs meant nothing.
    let (flow, changed_at) = run_checked("cclab_tuner", run, |(flow, _)| &flow.samples);
    let names = format!("{} {}", path.a, path.b);
    drop(path);
    let left = netns_list();
    assert!(
        !left.contains(&names.split(' ').next().unwrap().to_string()),
        "namespaces left: {left}"
    );
    let before = backoffs(&flow.samples, Duration::from_millis(500), changed_at);
    let after =
        backoffs(&flow.samples, changed_at + Duration::from_millis(300), Duration::from_secs(13));
    eprintln!(
        "cclab_tuner: goodput {:.2} Mbit/s, backoffs before beta=0.5: {:?}, after: {:?}",
        flow.goodput_bps / 1e6,
        before.iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>(),
        after.iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>()
    );
    if std::env::var_os("CCLAB_TRACE").is_some() {
        for w in flow.samples.windows(2) {
            if w[0].ca_state != w[1].ca_state || w[0].ssthresh != w[1].ssthresh {
                eprintln!("{:?}", w[1]);
            }
        }
    }
    assert!(
        flow.goodput_bps > 0.85 * 20e6,
        "goodput {:.2} Mbit/s on a 20 Mbit/s bottleneck",
        flow.goodput_bps / 1e6
    );
    assert!(
        before.len() >= 2 && after.len() >= 2,
        "too few losses seen: before {before:?} after {after:?}"
    );
    let (mb, ma) = (median(&before), median(&after));
    assert!((mb - 0.7).abs() < 0.06, "backoff before the change: median {mb:.3} (want ~0.7)");
    assert!((ma - 0.5).abs() < 0.06, "backoff after beta=0.5: median {ma:.3} (want ~0.5)");
}

#[test]
fn tuner_defaults_match_kernel_cubic_throughput_and_cubic_fit_fills_the_link() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let l = Loaded::new(&Algo::ALL);
    let path = Path::new("20mbit", "60kb");
    let cubic = bulk_flow_checked(&path, "cubic", 7);
    let tuner = bulk_flow_checked(&path, "cclab_tuner", 7);
    let fit = bulk_flow_checked(&path, "cclab_cubic_fit", 7);
    let stats = l.k.fit_stats().unwrap();
    eprintln!(
        "goodput Mbit/s: cubic {:.2}, cclab_tuner {:.2}, cclab_cubic_fit {:.2}; fit state {stats:?}",
        cubic.goodput_bps / 1e6,
        tuner.goodput_bps / 1e6,
        fit.goodput_bps / 1e6
    );
    for (name, f) in [("cubic", &cubic), ("cclab_tuner", &tuner), ("cclab_cubic_fit", &fit)] {
        assert!(
            f.goodput_bps > 0.85 * 20e6,
            "{name}: goodput {:.2} Mbit/s on 20 Mbit/s",
            f.goodput_bps / 1e6
        );
    }
    let rel = (tuner.goodput_bps - cubic.goodput_bps).abs() / cubic.goodput_bps;
    assert!(rel < 0.03, "cclab_tuner vs cubic differ by {:.1}%", rel * 100.0);
    // The buffer never drains on this path (no propagation delay), so goodput alone
    // cannot tell the two apart; their sawtooth can: same decrease, similar loss rate.
    let all = (Duration::from_millis(300), Duration::from_secs(8));
    let (bc, bt) = (backoffs(&cubic.samples, all.0, all.1), backoffs(&tuner.samples, all.0, all.1));
    eprintln!(
        "losses in 7 s: cubic {} (backoff median {:.3}), cclab_tuner {} (backoff median {:.3})",
        bc.len(),
        median(&bc),
        bt.len(),
        median(&bt)
    );
    assert!(bc.len() >= 3 && bt.len() >= 3, "too few losses: cubic {bc:?} tuner {bt:?}");
    assert!((median(&bc) - median(&bt)).abs() < 0.03, "backoff cubic {bc:?} vs cclab_tuner {bt:?}");
    let ratio = bt.len() as f64 / bc.len() as f64;
    assert!(
        (0.75..=1.34).contains(&ratio),
        "loss events cubic {} vs cclab_tuner {}",
        bc.len(),
        bt.len()
    );
    assert!(stats.updates >= 5, "CUBIC-FIT updated N only {} times in 7 s", stats.updates);
    assert!(
        stats.n >= 1.0 && stats.rtt_min_us > 0 && stats.rtt_max_us >= stats.rtt_min_us,
        "{stats:?}"
    );
    // The tbf queue (60 kB at 20 Mbit/s: 24 ms) sets the RTT; with queueing this large
    // against a ~0.1 ms base, alpha is at its 1/10 cap and Eq. 6 holds N at 1.
    assert!((1_000..40_000).contains(&stats.rtt_avg_us) && stats.rtt_max_us < 60_000, "{stats:?}");
    assert!((stats.alpha - 0.1).abs() < 0.001 && stats.n == 1.0, "{stats:?}");
}

#[test]
fn route_rto_min_and_initcwnd_set_and_restore_in_a_namespace() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use cclab_kernel::route::{RouteChange, Routes};
    let path = Path::new("20mbit", "60kb");
    let subnet_gw = path.addr_b.clone();
    // A route with a gateway and an mtu metric that must survive our changes.
    sh(&[
        "ip",
        "-n",
        &path.a,
        "route",
        "add",
        "198.19.250.0/24",
        "via",
        &subnet_gw,
        "dev",
        "va",
        "mtu",
        "1400",
    ]);
    let state_dir = TempDir::new("cclab-route-test");
    let state = state_dir.0.clone();
    let r = Routes { netns: Some(path.a.clone()), state_dir: state.clone(), ..Routes::default() };
    let before = r.list().unwrap();
    assert!(before.len() >= 2, "{before:?}");
    assert!(before.iter().all(|x| x.rto_min_ms.is_none() && x.initcwnd.is_none()), "{before:?}");
    // A table with no routes (one made and emptied) is refused, and nothing is saved.
    for verb in ["add", "del"] {
        sh(&["ip", "-n", &path.a, "route", verb, "198.19.251.0/24", "dev", "va", "table", "200"]);
    }
    let empty = Routes { table: "200".into(), ..r.clone() };
    let e = empty.set(RouteChange { rto_min_ms: Some(50), ..RouteChange::default() }).unwrap_err();
    assert!(e.to_string().contains("no routes in table 200"), "{e}");
    assert!(empty.restore().is_err());

    // One route first, then all: each route's values before its own first change are
    // the ones restore puts back (the first change used to save only its own routes).
    let one = Routes { dst: Some("198.19.250.0/24".into()), ..r.clone() };
    one.set(RouteChange { initcwnd: Some(30), ..RouteChange::default() }).unwrap();
    let (changed, skipped) = r
        .set(RouteChange { rto_min_ms: Some(50), initcwnd: Some(20), ..RouteChange::default() })
        .unwrap();
    assert_eq!(changed.len(), before.len(), "skipped: {skipped:?}");
    for x in r.list().unwrap() {
        assert_eq!((x.rto_min_ms, x.initcwnd), (Some(50), Some(20)), "{x:?}");
    }
    let text = Command::new("ip")
        .args(["-n", &path.a, "route", "show", "198.19.250.0/24"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("via")
            && text.contains("mtu 1400")
            && text.contains("initcwnd 20")
            && text.contains("rto_min"),
        "{text}"
    );

    // Only one route, one parameter: the other keeps what it had.
    one.set(RouteChange { rto_min_ms: Some(10), ..RouteChange::default() }).unwrap();
    let after = one.list().unwrap();
    assert_eq!((after[0].rto_min_ms, after[0].initcwnd), (Some(10), Some(20)));

    // Restoring one destination touches only it (and one never changed is refused).
    let never = Routes { dst: Some("198.19.251.0/24".into()), ..r.clone() };
    assert!(never.restore().unwrap_err().to_string().contains("has not changed 198.19.251.0/24"));
    assert_eq!(one.restore().unwrap(), vec!["198.19.250.0/24".to_string()]);
    assert_eq!((one.list().unwrap()[0].rto_min_ms, one.list().unwrap()[0].initcwnd), (None, None));
    let others: Vec<_> =
        r.list().unwrap().into_iter().filter(|x| x.dst != "198.19.250.0/24").collect();
    assert!(
        others.iter().all(|x| (x.rto_min_ms, x.initcwnd) == (Some(50), Some(20))),
        "{others:?}"
    );

    let restored = r.restore().unwrap();
    assert_eq!(restored.len(), before.len() - 1);
    let now = r.list().unwrap();
    assert!(now.iter().all(|x| x.rto_min_ms.is_none() && x.initcwnd.is_none()), "{now:?}");
    let text = Command::new("ip")
        .args(["-n", &path.a, "route", "show", "198.19.250.0/24"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("mtu 1400"));
    assert!(r.restore().is_err(), "a second restore has nothing to restore");

    // Values saved in one namespace are not given to a later namespace of the same name.
    r.set(RouteChange { rto_min_ms: Some(50), ..RouteChange::default() }).unwrap();
    sh(&["ip", "netns", "del", &path.a]);
    sh(&["ip", "netns", "add", &path.a]);
    sh(&["ip", "-n", &path.a, "link", "add", "x0", "type", "veth", "peer", "name", "x1"]);
    sh(&["ip", "-n", &path.a, "addr", "add", "198.19.252.1/24", "dev", "x0"]);
    for dev in ["x0", "x1"] {
        sh(&["ip", "-n", &path.a, "link", "set", dev, "up"]);
    }
    let e = r.restore().unwrap_err().to_string();
    assert!(e.contains("nothing to restore"), "{e}");
    r.set(RouteChange { rto_min_ms: Some(40), ..RouteChange::default() }).unwrap();
    let files: Vec<_> =
        std::fs::read_dir(&state).unwrap().flatten().map(|f| f.file_name()).collect();
    assert_eq!(files.len(), 1, "the first namespace's file is forgotten: {files:?}");
    assert_eq!(r.restore().unwrap(), vec!["198.19.252.0/24".to_string()]);
    assert!(r.list().unwrap().iter().all(|x| x.rto_min_ms.is_none()));

    // One subnet on two devices gives two routes that `ip route change` cannot tell apart
    // (it rewrote the first with the second's device), and a route with a realm would
    // lose it: each is skipped, saying why, and left exactly as it was.
    sh(&["ip", "-n", &path.a, "link", "add", "x2", "type", "veth", "peer", "name", "x3"]);
    for dev in ["x2", "x3"] {
        sh(&["ip", "-n", &path.a, "link", "set", dev, "up"]);
    }
    sh(&["ip", "-n", &path.a, "addr", "add", "198.19.252.2/24", "dev", "x2"]);
    let realm = ["198.19.253.0/24", "via", "198.19.252.9", "dev", "x0", "realm", "5"];
    sh(&[&["ip", "-n", &path.a, "route", "add"][..], &realm[..]].concat());
    let show = || {
        let out = Command::new("ip").args(["-n", &path.a, "route", "show"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let routes_before = show();
    let (changed, skipped) =
        r.set(RouteChange { rto_min_ms: Some(40), ..RouteChange::default() }).unwrap();
    assert!(changed.is_empty(), "{changed:?}");
    let whys: Vec<&str> = skipped.iter().map(|(_, why)| why.as_str()).collect();
    assert_eq!(whys.iter().filter(|w| w.contains("cannot tell them apart")).count(), 2, "{whys:?}");
    assert!(whys.iter().any(|w| w.contains("\"flow\"")), "{whys:?}");
    assert_eq!(show(), routes_before);
    // The command says it changed nothing, and fails (it used to exit 0).
    let cmd = cclab_kernel::cli::Cmd::Route {
        rto_min: Some("40ms".into()),
        initcwnd: None,
        dst: None,
        table: "main".into(),
        netns: Some(path.a.clone()),
        restore: false,
    };
    let e = cclab_kernel::cli::run(cclab_kernel::cli::Args { cmd }).unwrap_err().to_string();
    assert!(e.contains("no route changed: each route matched was skipped"), "{e}");
    assert_eq!(show(), routes_before);
}

/// `kernel default` refuses a non-allowed algorithm only outside the initial namespace:
/// this thread's is told to be it (kthreadd's; init's cannot be read on every machine),
/// and a namespace of ours is told apart (the decision itself: `initial_from`'s test).
#[test]
fn the_initial_network_namespace_is_told_apart_from_others() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use cclab_kernel::loader::in_initial_netns;
    assert_eq!(in_initial_netns(), Ok(true));
    let path = Path::new("20mbit", "60kb");
    assert_eq!(in_netns(&path.a, in_initial_netns).join().unwrap(), Ok(false));
}

#[test]
fn default_sets_and_restores_the_namespace_default_and_unload_puts_it_back() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // net.ipv4.tcp_congestion_control is per network namespace: work in one of ours so
    // the machine's default is never touched.
    let path = Path::new("20mbit", "60kb");
    let l = Loaded::new(&[Algo::Tuner]);
    let state_dir = TempDir::new("cclab-default-test");
    let state = state_dir.0.clone();
    let cli = env!("CARGO_BIN_EXE_cclab-kernel");
    let run = |args: &[&str]| {
        let out = Command::new("ip")
            .args(["netns", "exec", &path.a, cli])
            .args(args)
            .env("CCLAB_BPF_PIN_DIR", &l.k.pin_root)
            .env("CCLAB_STATE_DIR", &state)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let ns_default = || {
        let out = Command::new("ip")
            .args(["netns", "exec", &path.a, "cat", "/proc/sys/net/ipv4/tcp_congestion_control"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let host_before = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap();
    let original = ns_default();
    assert_ne!(original, "cclab_tuner");

    // Outside the initial namespace the kernel allows only "allowed" algorithms as default;
    // we refuse before the kernel does (its refusal leaks a reference, see loader.rs), so
    // nothing is saved either.
    let (ok, text) = run(&["default", "cclab_tuner"]);
    assert!(!ok && text.contains("tcp_allowed_congestion_control"), "{text}");
    let (ok, text) = run(&["default", "--restore"]);
    assert!(!ok && text.contains("nothing to restore"), "{text}");
    let _allowed = Allowed::add("cclab_tuner");

    // cclab's short name is taken, as `load` and `set` take it.
    let (ok, text) = run(&["default", "tuner"]);
    assert!(ok && text.contains("-> cclab_tuner"), "{text}");
    assert_eq!(ns_default(), "cclab_tuner");
    let (ok, text) = run(&["default", "cclab_tuner"]);
    assert!(ok && text.contains("cclab_tuner is the default already: nothing changed"), "{text}");
    // What was saved is this namespace's: the machine's namespace has nothing to restore.
    let host = Kernel { pin_root: l.k.pin_root.clone(), state_dir: state.clone() };
    let e = host.restore_default().unwrap_err().to_string();
    assert!(e.contains("nothing to restore"), "{e}");
    let (ok, text) = run(&["default", "reno"]);
    assert!(ok, "{text}");
    let (ok, text) = run(&["default", "--restore"]);
    assert!(ok && text.contains(&original), "restores the first saved default: {text}");
    assert_eq!(ns_default(), original);
    let (ok, text) = run(&["default", "--restore"]);
    assert!(!ok && text.contains("nothing to restore"), "{text}");
    let (ok, text) = run(&["default", "cclab_nonesuch"]);
    assert!(!ok && text.contains("not an available congestion control"), "{text}");

    // Through `ip netns exec` the pins are out of sight (it remounts /sys): unload says so
    // rather than "not loaded", and fails.
    let (ok, text) = run(&["unload", "cclab_tuner"]);
    assert!(!ok && text.contains("is registered, but its pins cannot be seen"), "{text}");
    // Unloading the algorithm that is the default puts the saved default back first. (Not
    // through `ip netns exec`: it remounts /sys, which hides the bpffs with our pins; a
    // thread that entered only the network namespace sees both.)
    let (ok, text) = run(&["default", "cclab_tuner"]);
    assert!(ok, "{text}");
    let k = Kernel { pin_root: l.k.pin_root.clone(), state_dir: state.clone() };
    let unloaded =
        in_netns(&path.a, move || k.unload(Algo::Tuner).map_err(|e| e.to_string())).join().unwrap();
    let back = DefaultNow { name: original.clone(), was_saved: true, allowed: None };
    assert_eq!(unloaded, Ok(Unloaded::Done { default_now: Some(back) }));
    assert_eq!(ns_default(), original);

    // Linux marks every default allowed to all users and never unmarks it; only the
    // initial namespace can widen the list that way (elsewhere a default must be on it
    // already), and there a restore takes off what cclab's defaults added, and nothing
    // else. The machine's default set to itself changes nothing and saves nothing (a
    // restore file would name it as the default to go back to); then a saved file is
    // written by hand, saying that another allowed name was added (the guard `_allowed`
    // puts the machine's list back).
    let host_default = host_before.trim();
    assert_eq!(host.set_default(host_default).unwrap(), (host_default.to_string(), false));
    let saved = state
        .join(format!("default_congestion_control-{}", cclab_kernel::netns::key(None).unwrap()));
    assert!(!saved.exists(), "{} saved for a default that did not change", saved.display());
    let e = host.restore_default().unwrap_err().to_string();
    assert!(e.contains("nothing to restore"), "{e}");
    let list = std::fs::read_to_string(ALLOWED).unwrap();
    let other = list.split_whitespace().find(|n| *n != host_default).map(String::from);
    let Some(other) = other else {
        panic!("the allowed list {list:?} needs a name besides the default {host_default}")
    };
    // A second line without the mark (an earlier build's whole list) counts for nothing.
    std::fs::write(&saved, format!("{host_default}\n{other}\n")).unwrap();
    assert_eq!(host.restore_default().unwrap(), (host_default.to_string(), None));
    std::fs::write(&saved, format!("{host_default}\nadded: {other}\n")).unwrap();
    let (back, said) = host.restore_default().unwrap();
    assert_eq!(back, host_default);
    assert!(said.is_some_and(|s| s.starts_with(&format!("{other} taken off"))));
    let now = std::fs::read_to_string(ALLOWED).unwrap();
    let expected: Vec<&str> = list.split_whitespace().filter(|n| *n != other).collect();
    assert_eq!(now.split_whitespace().collect::<Vec<_>>(), expected, "only {other} went");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap(),
        host_before,
        "the machine's default"
    );
}

/// Adds an algorithm to net.ipv4.tcp_allowed_congestion_control (global: it only lets
/// unprivileged sockets pick it); restores the list on drop.
struct Allowed(String);

const ALLOWED: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";

impl Allowed {
    fn add(name: &str) -> Allowed {
        let before = std::fs::read_to_string(ALLOWED).unwrap().trim().to_string();
        std::fs::write(ALLOWED, format!("{before} {name}")).unwrap();
        Allowed(before)
    }
}

impl Drop for Allowed {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(ALLOWED, &self.0) {
            eprintln!("cleanup: restoring {ALLOWED}: {e}");
        }
    }
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cclab kernel set` and the testbed's runs take turns on an algorithm's parameters
/// (operator review, 2026-12-05): while a run holds them, `set` and `unload` are refused,
/// since the run puts the earlier values back at its end; after a run killed outright,
/// `set` first puts back what that run had changed (as the run would have), so that the
/// next run's recovery cannot undo the newer setting.
#[test]
fn kernel_set_takes_turns_with_runs_and_finishes_a_killed_runs_restore() {
    skip_unless_capable!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let l = Loaded::new(&[Algo::Tuner]);
    let state_dir = TempDir::new("cclab-run-params-test");
    let state = state_dir.0.clone();
    let mut k = Kernel::with_pin_root(l.k.pin_root.clone());
    k.state_dir = state.clone();
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cclab-kernel"))
            .args(args)
            .env("CCLAB_BPF_PIN_DIR", &k.pin_root)
            .env("CCLAB_STATE_DIR", &state)
            .output()
            .unwrap();
        (out.status.success(), output_text(&out))
    };
    let value =
        |name: &str| k.get(Algo::Tuner).unwrap().into_iter().find(|(n, _)| *n == name).unwrap().1;

    // A run holds the parameters: both refused, nothing changed.
    let held = run_params::try_lock(&k, Algo::Tuner).unwrap().expect("the lock is free");
    let (ok, text) = cli(&["set", "cclab_tuner", "beta=0.6"]);
    assert!(!ok && text.contains("is using cclab_tuner") && text.contains("undo"), "{text}");
    assert!((value("beta") - 0.7).abs() < 0.01);
    let (ok, text) = cli(&["unload", "cclab_tuner"]);
    assert!(!ok && text.contains("before unloading it"), "{text}");
    assert!(available().contains("cclab_tuner"));
    drop(held);

    // A run that set alpha = 2 died before its restore, leaving alpha = 0.5 to put back.
    let mut before: run_params::Params =
        Algo::Tuner.params().iter().map(|p| (p.name.to_string(), p.default)).collect();
    before.iter_mut().find(|(n, _)| n == "alpha").unwrap().1 = 0.5;
    std::fs::write(k.run_params_paths(Algo::Tuner).1, run_params::to_text(&before)).unwrap();
    k.set(Algo::Tuner, &[("alpha".into(), 2.0)]).unwrap();
    let (ok, text) = cli(&["set", "cclab_tuner", "beta=0.8"]);
    assert!(ok && text.contains("first put back the values a run killed"), "{text}");
    assert_eq!(value("alpha"), 0.5, "the dead run's restore is done");
    assert!((value("beta") - 0.8).abs() < 0.01, "and the new setting kept");
    assert!(!k.run_params_paths(Algo::Tuner).1.exists(), "nothing left for a run to put back");

    // `get` shows the values in force: a dead run's are put back first (not while a run
    // holds the parameters: its file is its own).
    std::fs::write(k.run_params_paths(Algo::Tuner).1, run_params::to_text(&before)).unwrap();
    k.set(Algo::Tuner, &[("alpha".into(), 2.0)]).unwrap();
    let held = run_params::try_lock(&k, Algo::Tuner).unwrap().expect("the lock is free");
    let (ok, text) = cli(&["get", "tuner"]);
    assert!(ok && !text.contains("put back") && text.contains("alpha = 2"), "{text}");
    drop(held);
    let (ok, text) = cli(&["get", "tuner"]);
    assert!(ok && text.contains("first put back the values a run killed"), "{text}");
    assert!(text.contains("alpha = 0.5") && !text.contains("alpha = 2"), "{text}");
    assert!(!k.run_params_paths(Algo::Tuner).1.exists());
}
