//! The testbed: a scenario's flows as real kernel TCP connections through the emulator,
//! measured into the simulator's own output types (`FlowSample`, `QueueSample`, `Report`)
//! so a real run is written and compared exactly like a simulated one.
//!
//! Topology (a dumbbell with one bottleneck, as the simulator's): senders in namespace A,
//! receivers in B. The uplink (A to B) is the bottleneck: the scenario's rate or trace,
//! buffer, queue discipline, loss and one-way delay. The downlink carries the ACKs with
//! the rest of each flow's RTT (`rtt - delay`, chosen by the ACK's source address) and no
//! rate limit. Each flow has its own receiver address in B (198.18.1.x), which also lets
//! its `rto_min` and `initcwnd` be set on its own route, as TCPTuner did with `ip route`.
//!
//! Measured, not modelled: cwnd, ssthresh, srtt, inflight and retransmits come from
//! `TCP_INFO` every sample interval (not per ACK); RTT percentiles are over those srtt
//! samples; delivered bytes are counted by the receiving application.
//!
//! A flow can instead use cclab's own TCP and algorithm over UDP ([`Transport::Udp`],
//! the [`crate::udp`] drivers), for algorithms the kernel lacks; it is sampled from the
//! algorithm's own state.
//!
//! Not yet supported (a clear error, never a silent substitute): per-flow parameters of
//! kernel algorithms and scheduled parameter changes (kernel modules'
//! parameters are global; the BPF algorithms' tuning lives in `cclab-kernel`), and more
//! than [`MAX_FLOWS`] flows.

use crate::forwarder::monotonic_ns;
use crate::harness::{Harness, Side};
use crate::tcpinfo::tcp_info;
use crate::{DirectionConfig, EmuError};
use cclab_sim::rng::{stream, Rng};
use cclab_sim::{
    CrossKind, FlowReport, FlowSample, LinkRate, LinkReport, Observer, QueueSample, Report,
    RttSummary, SimConfig,
};
use cclab_units::{Duration, Time};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// Each flow is two threads; beyond this, a 2-core machine measures itself, not TCP.
pub const MAX_FLOWS: usize = 64;
/// TCP port of every receiver (each flow has its own address).
const PORT: u16 = 5201;
/// UDP port of the cross-traffic sink.
const CROSS_PORT: u16 = 5301;

/// The receiving address of flow `i` in namespace B.
pub fn flow_addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, 1, 1 + i as u8)
}

/// The algorithms the running kernel offers (`net.ipv4.tcp_available_congestion_control`).
pub fn kernel_algorithms() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// How a flow's packets are made: a scenario's per-flow `transport` field.
pub use cclab_scenario::Transport;

/// Checks that the testbed can run `cfg` faithfully with the kernel algorithms `available`
/// and each flow's transport.
pub fn check(
    cfg: &SimConfig,
    transports: &[Transport],
    available: &[String],
) -> Result<(), EmuError> {
    let bad = |m: String| Err(EmuError::Config(m));
    if transports.len() != cfg.flows.len() {
        return bad(format!(
            "testbed: {} transports for {} flows",
            transports.len(),
            cfg.flows.len()
        ));
    }
    if cfg.flows.is_empty() {
        return bad("testbed: the scenario has no flows".into());
    }
    if cfg.flows.len() > MAX_FLOWS {
        return bad(format!(
            "testbed: {} flows; the testbed runs at most {MAX_FLOWS}",
            cfg.flows.len()
        ));
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        if transports[i] == Transport::Udp {
            crate::udp::algorithm(&f.cc, &f.params)
                .map_err(|e| EmuError::Config(format!("flows[{i}] ({}): {e}", f.name)))?;
        } else if !available.iter().any(|a| a == &f.cc) {
            return bad(format!(
                "flows[{i}] ({}): algorithm \"{}\" is not available in this kernel (available: {}); load it first (cclab kernel) or use the simulator",
                f.name,
                f.cc,
                available.join(" ")
            ));
        } else if let Some((name, _)) = f.params.first() {
            return bad(format!("flows[{i}] ({}): params.{name}: the testbed cannot set per-flow parameters of kernel algorithms", f.name));
        }
        // Both transports: the kernel gets rto_min and initcwnd on the flow's route, the
        // user-space sender runs the simulator's TCP with them.
        if let Err((name, why)) = f.tcp.check_limits() {
            return bad(format!("flows[{i}] ({}): tcp.{name} = {why}", f.name));
        }
        if f.rtt < cfg.bottleneck.delay.saturating_mul(2) {
            return bad(format!(
                "flows[{i}] ({}): rtt {} is less than twice the bottleneck delay {}",
                f.name, f.rtt, cfg.bottleneck.delay
            ));
        }
    }
    if !cfg.changes.is_empty() {
        return bad("testbed: scheduled parameter changes are not supported on kernel flows".into());
    }
    Ok(())
}

/// The emulated path for `cfg`: the bottleneck on the uplink, the ACK path's delay on the
/// downlink.
pub fn path(cfg: &SimConfig) -> (DirectionConfig, DirectionConfig) {
    let b = &cfg.bottleneck;
    let up = DirectionConfig {
        rate: Some(b.rate.clone()),
        delay: b.delay,
        per_source_delay: vec![],
        buffer: b.buffer,
        qdisc: b.qdisc.clone(),
        loss: b.loss.clone(),
    };
    // Each flow's ACKs come from its own receiver address and carry the rest of its RTT.
    let back = |rtt: Duration| rtt.saturating_sub(b.delay);
    let per_source_delay =
        cfg.flows.iter().enumerate().map(|(i, f)| (flow_addr(i), back(f.rtt))).collect();
    let down = DirectionConfig {
        delay: cfg.flows.first().map_or(b.delay, |f| back(f.rtt)),
        per_source_delay,
        ..Default::default()
    };
    (up, down)
}

/// What the threads of one flow share with the sampler.
#[derive(Default)]
struct FlowShared {
    /// Bytes the receiving application has read.
    received: AtomicU64,
    /// Emulator-clock ns + 1 when a finite transfer was fully acknowledged (0: not yet).
    completed: AtomicU64,
    /// Emulator-clock ns + 1 when the sender stopped sending (0: still sending).
    stopped: AtomicU64,
    /// User-space flows: the sender's latest state, and its counters at the end.
    snapshot: std::sync::Mutex<Option<FlowSample>>,
    retransmits: AtomicU64,
    timeouts: AtomicU64,
}

/// Runs the scenario with every flow on kernel TCP (see [`run_with`]).
pub fn run(
    cfg: &SimConfig,
    obs: &mut dyn Observer,
    progress: &mut dyn FnMut(Time),
) -> Result<Report, EmuError> {
    run_with(cfg, &vec![Transport::Kernel; cfg.flows.len()], obs, progress)
}

/// Runs the scenario on real kernel TCP; samples go to `obs` every
/// `cfg.sample_interval`, `progress` sees the emulator clock.
pub fn run_with(
    cfg: &SimConfig,
    transports: &[Transport],
    obs: &mut dyn Observer,
    progress: &mut dyn FnMut(Time),
) -> Result<Report, EmuError> {
    crate::netns::preflight()?;
    check(cfg, transports, &kernel_algorithms())?;
    let (up, down) = path(cfg);
    let h = Harness::start_with(&up, &down, cfg.seed, true)?;
    // One address and route per flow: rto_min and initcwnd as `ip route` sets them.
    let mut b_cmds = String::new();
    let mut a_cmds = String::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        b_cmds += &format!("addr add {}/32 dev {}\n", flow_addr(i), crate::TUN_NAME);
        a_cmds += &format!(
            "route add {}/32 dev {} rto_min {}ms initcwnd {}\n",
            flow_addr(i),
            crate::TUN_NAME,
            f.tcp.rto_min.as_nanos().div_ceil(1_000_000).max(1),
            f.tcp.init_cwnd
        );
    }
    ip_batch(h.net().b.name(), &b_cmds)?;
    ip_batch(h.net().a.name(), &a_cmds)?;

    let origin = monotonic_ns();
    let now = move || Time(monotonic_ns().saturating_sub(origin));
    let end = Time::ZERO + cfg.duration;
    let stop = Arc::new(AtomicBool::new(false));
    let shared: Vec<Arc<FlowShared>> =
        cfg.flows.iter().map(|_| Arc::new(FlowShared::default())).collect();
    let mut threads = Vec::new();

    // Receivers first, bound before any sender starts.
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
    for (i, sh) in shared.iter().enumerate() {
        let (sh, stop, ready) = (sh.clone(), stop.clone(), ready_tx.clone());
        match transports[i] {
            Transport::Kernel => {
                threads.push(h.spawn(Side::B, move || receive(flow_addr(i), sh, stop, ready)))
            }
            Transport::Udp => {
                let f = cfg.flows[i].clone();
                threads.push(h.spawn(Side::B, move || receive_udp(i, f, origin, sh, stop, ready)));
            }
        }
    }
    let sink_stop = stop.clone();
    let sink_ready = ready_tx.clone();
    threads.push(h.spawn(Side::B, move || cross_sink(sink_stop, sink_ready)));
    for _ in 0..=cfg.flows.len() {
        match ready_rx.recv_timeout(std::time::Duration::from_secs(5)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(EmuError::Setup(format!("testbed receiver: {e}"))),
            Err(_) => return Err(EmuError::Setup("testbed receivers did not start".into())),
        }
    }

    // Senders: each publishes its socket to the sampler once connected.
    let (sock_tx, sock_rx) = mpsc::channel::<(usize, Result<TcpStream, String>)>();
    for (i, f) in cfg.flows.iter().enumerate() {
        let (f, sh, stop, tx) = (f.clone(), shared[i].clone(), stop.clone(), sock_tx.clone());
        match transports[i] {
            Transport::Kernel => {
                threads.push(h.spawn(Side::A, move || send(i, f, end, now, sh, stop, tx)))
            }
            Transport::Udp => {
                let interval = Duration::from_millis(1).min(cfg.sample_interval);
                threads.push(
                    h.spawn(Side::A, move || send_udp(i, f, end, origin, interval, sh, stop)),
                );
            }
        }
    }
    for (i, c) in cfg.cross.iter().enumerate() {
        let (c, stop) = (c.clone(), stop.clone());
        let rng = Rng::stream(cfg.seed, stream::CROSS, i as u64);
        threads.push(h.spawn(Side::A, move || cross_source(c, end, now, rng, stop)));
    }
    drop(sock_tx);

    // Sample until the end of the run.
    let n = cfg.flows.len();
    let mut socks: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let mut srtt_ms: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut last_info = vec![None; n];
    let (mut queue_sum, mut queue_n) = (0f64, 0u64);
    let mut at_end = (0u64, 0u64);
    let mut received_at_end = vec![0u64; n];
    let mut failure = None;
    let mut tick = Time::ZERO;
    loop {
        let t = now();
        if t < tick {
            std::thread::sleep(std::time::Duration::from_nanos((tick - t).as_nanos()));
            continue;
        }
        while let Ok((i, s)) = sock_rx.try_recv() {
            match s {
                Ok(s) => socks[i] = Some(s),
                Err(e) => failure = Some(EmuError::Setup(format!("flows[{i}]: {e}"))),
            }
        }
        if failure.is_some() {
            break;
        }
        // Samples carry their nominal instant (the simulator's grid); this ordinary thread
        // reads them within a few milliseconds of it.
        let t = tick.min(end);
        for i in 0..n {
            let sh = &shared[i];
            if sh.completed.load(Ordering::Relaxed) != 0 {
                continue;
            }
            if transports[i] == Transport::Udp {
                let snap = sh.snapshot.lock().map(|g| g.clone()).unwrap_or(None);
                if let Some(mut snap) = snap {
                    snap.time = t;
                    snap.delivered_bytes = sh.received.load(Ordering::Relaxed);
                    if snap.srtt.as_nanos() > 0 {
                        srtt_ms[i].push(snap.srtt.as_millis_f64());
                    }
                    obs.flow_sample(&snap);
                }
                continue;
            }
            let Some(s) = &socks[i] else { continue };
            let Ok(info) = tcp_info(s.as_raw_fd()) else {
                continue;
            };
            last_info[i] = Some(info);
            let srtt = Duration::from_micros(info.rtt_us as u64);
            if info.rtt_us > 0 {
                srtt_ms[i].push(srtt.as_millis_f64());
            }
            obs.flow_sample(&FlowSample {
                time: t,
                flow: i,
                cwnd_pkts: info.snd_cwnd,
                ssthresh_pkts: info.snd_ssthresh,
                srtt,
                inflight_pkts: info.unacked,
                delivered_bytes: sh.received.load(Ordering::Relaxed),
                retransmits: info.total_retrans as u64,
                cc: Vec::new(),
            });
        }
        let g = &h.gauges()[crate::UPLINK];
        let q = g.queue_packets.load(Ordering::Relaxed);
        queue_sum += q as f64;
        queue_n += 1;
        obs.queue_sample(&QueueSample {
            time: t,
            packets: q,
            bytes: g.queue_bytes.load(Ordering::Relaxed),
            drops: g.drops.load(Ordering::Relaxed),
        });
        progress(t);
        if tick >= end {
            at_end = (
                g.delivered_packets.load(Ordering::Relaxed),
                g.delivered_bytes.load(Ordering::Relaxed),
            );
            for (r, sh) in received_at_end.iter_mut().zip(&shared) {
                *r = sh.received.load(Ordering::Relaxed);
            }
            break;
        }
        tick = (tick + cfg.sample_interval).min(end);
    }

    // Wind down: senders stop at `end` by themselves; give data in flight a moment.
    let drain = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < drain
        && shared.iter().any(|s| s.stopped.load(Ordering::Relaxed) == 0)
        && failure.is_none()
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let fwd = h.finish()?;
    if let Some(e) = failure {
        return Err(e);
    }

    let capacity_bps = match &cfg.bottleneck.rate {
        LinkRate::Constant(r) => r.bps() as f64,
        LinkRate::Trace(t) => t.mean_rate().bps() as f64,
    };
    let secs = cfg.duration.as_secs_f64();
    let up_stats = &fwd.dirs[crate::UPLINK].stats;
    let flows = (0..n)
        .map(|i| {
            let f = &cfg.flows[i];
            let completed = match shared[i].completed.load(Ordering::Relaxed) {
                0 => None,
                v => Some(Time(v - 1)),
            };
            let active_end = completed.or(f.stop).unwrap_or(end).min(end);
            let active = active_end.saturating_since(f.start).as_secs_f64();
            let info = last_info[i].unwrap_or_default();
            let (retransmits, timeouts) = match transports[i] {
                Transport::Kernel => (info.total_retrans as u64, info.total_rto as u64),
                Transport::Udp => (
                    shared[i].retransmits.load(Ordering::Relaxed),
                    shared[i].timeouts.load(Ordering::Relaxed),
                ),
            };
            FlowReport {
                flow: i,
                delivered_bytes: received_at_end[i],
                goodput_bps: if active > 0.0 {
                    received_at_end[i] as f64 * 8.0 / active
                } else {
                    0.0
                },
                retransmits,
                timeouts,
                rtt: summarize(&mut srtt_ms[i]),
                completed_at: completed,
            }
        })
        .collect();
    Ok(Report {
        duration: cfg.duration,
        link: LinkReport {
            capacity_bps,
            utilization: if capacity_bps > 0.0 && secs > 0.0 {
                (at_end.1 as f64 * 8.0 / (capacity_bps * secs)).min(1.0)
            } else {
                0.0
            },
            delivered_packets: at_end.0,
            delivered_bytes: at_end.1,
            queue_drops: up_stats.queue_drops,
            random_losses: up_stats.random_losses,
            mean_queue_packets: if queue_n > 0 { queue_sum / queue_n as f64 } else { 0.0 },
        },
        flows,
        events: 0,
    })
}

fn summarize(ms: &mut [f64]) -> RttSummary {
    if ms.is_empty() {
        return RttSummary::default();
    }
    ms.sort_by(f64::total_cmp);
    let q = |p: f64| ms[((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    RttSummary {
        samples: ms.len() as u64,
        mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
        p50_ms: q(0.5),
        p95_ms: q(0.95),
        p99_ms: q(0.99),
    }
}

fn ip_batch(ns: &str, cmds: &str) -> Result<(), EmuError> {
    let mut child = std::process::Command::new("ip")
        .args(["-n", ns, "-batch", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| EmuError::Setup(format!("cannot run `ip`: {e}")))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(cmds.as_bytes())
        .map_err(|e| EmuError::Setup(format!("ip -batch: {e}")))?;
    let out = child.wait_with_output().map_err(|e| EmuError::Setup(format!("ip -batch: {e}")))?;
    if !out.status.success() {
        return Err(EmuError::Setup(format!(
            "ip -n {ns} -batch failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Receiver of one flow: accepts one connection and counts what the application reads.
fn receive(
    addr: Ipv4Addr,
    sh: Arc<FlowShared>,
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<(), String>>,
) {
    let l = match TcpListener::bind((addr, PORT)).and_then(|l| l.set_nonblocking(true).map(|_| l)) {
        Ok(l) => l,
        Err(e) => {
            let _ = ready.send(Err(format!("bind {addr}:{PORT}: {e}")));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut conn = loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        match l.accept() {
            Ok((c, _)) => break c,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    };
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(std::time::Duration::from_millis(50)));
    let mut buf = vec![0u8; 1 << 16];
    while !stop.load(Ordering::Relaxed) {
        match conn.read(&mut buf) {
            Ok(0) => return,
            Ok(k) => {
                sh.received.fetch_add(k as u64, Ordering::Relaxed);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// Sender of one flow: starts at `f.start`, sends until its size, its stop time or the
/// end of the run.
fn send(
    i: usize,
    f: cclab_sim::FlowConfig,
    end: Time,
    now: impl Fn() -> Time,
    sh: Arc<FlowShared>,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<(usize, Result<TcpStream, String>)>,
) {
    let mark = |a: &AtomicU64, t: Time| a.store(t.as_nanos() + 1, Ordering::Relaxed);
    if !wait_for_start(f.start, &now, &stop) {
        return;
    }
    let last = f.stop.unwrap_or(end).min(end);
    if now() >= last {
        mark(&sh.stopped, now());
        return;
    }
    let s = match TcpStream::connect((flow_addr(i), PORT)) {
        Ok(s) => s,
        Err(e) => {
            let _ = tx.send((i, Err(format!("connect: {e}"))));
            return;
        }
    };
    if let Err(e) = crate::tcpinfo::set_congestion(&s, &f.cc) {
        let _ = tx.send((i, Err(format!("TCP_CONGESTION {}: {e}", f.cc))));
        return;
    }
    let _ = s.set_nodelay(true);
    let _ = s.set_write_timeout(Some(std::time::Duration::from_millis(20)));
    match s.try_clone() {
        Ok(c) => {
            let _ = tx.send((i, Ok(c)));
        }
        Err(e) => {
            let _ = tx.send((i, Err(format!("socket: {e}"))));
            return;
        }
    }
    let mut s = s;
    let buf = vec![0x5au8; 1 << 16];
    let mut left = f.bytes.unwrap_or(u64::MAX);
    while left > 0 && now() < last && !stop.load(Ordering::Relaxed) {
        let chunk = buf.len().min(left.min(usize::MAX as u64) as usize);
        match s.write(&buf[..chunk]) {
            Ok(k) => left -= k as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => break,
        }
    }
    mark(&sh.stopped, now());
    let _ = s.shutdown(std::net::Shutdown::Write);
    if left == 0 {
        // A finite transfer completes when its last byte is acknowledged.
        while !stop.load(Ordering::Relaxed) {
            match tcp_info(s.as_raw_fd()) {
                Ok(info) if info.unacked == 0 => {
                    mark(&sh.completed, now());
                    break;
                }
                Ok(_) => std::thread::sleep(std::time::Duration::from_micros(500)),
                Err(_) => break,
            }
        }
    }
}

/// Receiving end of a user-space flow (cclab's TCP receiver over UDP).
fn receive_udp(
    i: usize,
    f: cclab_sim::FlowConfig,
    origin: u64,
    sh: Arc<FlowShared>,
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<(), String>>,
) {
    let s = match UdpSocket::bind((flow_addr(i), crate::udp::PORT)) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(format!("bind {}:{}: {e}", flow_addr(i), crate::udp::PORT)));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut r = cclab_sim::tcp::TcpReceiver::new(i as u32, f.tcp.mss, f.bytes, f.tcp.delayed_ack);
    let _ = crate::udp::serve_receiver(&s, &mut r, origin, &stop, &sh.received);
}

/// Sending end of a user-space flow: the simulator's TCP sender with cclab's algorithm.
fn send_udp(
    i: usize,
    f: cclab_sim::FlowConfig,
    end: Time,
    origin: u64,
    interval: Duration,
    sh: Arc<FlowShared>,
    stop: Arc<AtomicBool>,
) {
    let now = || Time(monotonic_ns().saturating_sub(origin));
    let mark = |a: &AtomicU64, t: Time| a.store(t.as_nanos() + 1, Ordering::Relaxed);
    if !wait_for_start(f.start, &now, &stop) {
        return;
    }
    let last = f.stop.unwrap_or(end).min(end);
    // Checked by `check` before the run.
    let (Ok(ca), Ok(sock)) = (
        crate::udp::algorithm(&f.cc, &f.params),
        crate::udp::sender_socket((flow_addr(i), crate::udp::PORT).into()),
    ) else {
        mark(&sh.stopped, now());
        return;
    };
    let mut snd = cclab_sim::tcp::TcpSender::new(i as u32, ca, f.tcp.clone(), f.bytes);
    snd.start(now());
    crate::udp::drive_sender(&sock, &mut snd, origin, last, interval, &stop, &mut |snd, t| {
        if let Ok(mut g) = sh.snapshot.lock() {
            *g = Some(crate::udp::sample_of(snd, i, t));
        }
    });
    mark(&sh.stopped, now());
    sh.retransmits.store(snd.stats.retransmits, Ordering::Relaxed);
    sh.timeouts.store(snd.stats.timeouts, Ordering::Relaxed);
    if let Some(t) = snd.stats.completed_at {
        mark(&sh.completed, t);
    }
}

/// UDP background source through the bottleneck (CBR, Poisson or exponential on/off).
fn cross_source(
    c: cclab_sim::CrossConfig,
    end: Time,
    now: impl Fn() -> Time,
    mut rng: Rng,
    stop: Arc<AtomicBool>,
) {
    let Ok(s) = UdpSocket::bind("0.0.0.0:0") else {
        return;
    };
    if s.connect((crate::ADDR_B, CROSS_PORT)).is_err() {
        return;
    }
    let payload = vec![0u8; (c.packet_bytes as usize).saturating_sub(28).max(1)];
    let mean_gap_ns = c.rate.tx_time(c.packet_bytes as u64).as_nanos() as f64;
    let last = c.stop.unwrap_or(end).min(end);
    let mut next = c.start;
    // Exponential on/off: sends at rate / duty while on, so the long-run mean is `rate`.
    let (mut on_until, mut gap) = (Time::MAX, mean_gap_ns);
    if let CrossKind::Exponential { mean_on, mean_off } = c.kind {
        let duty =
            mean_on.as_nanos() as f64 / (mean_on.as_nanos() + mean_off.as_nanos()).max(1) as f64;
        gap = mean_gap_ns * duty;
        on_until = next + Duration(rng.exponential(mean_on.as_nanos() as f64) as u64);
    }
    while next < last && !stop.load(Ordering::Relaxed) {
        let t = now();
        if t < next {
            std::thread::sleep(std::time::Duration::from_nanos(
                (next - t).as_nanos().min(5_000_000),
            ));
            continue;
        }
        let _ = s.send(&payload);
        next += match c.kind {
            CrossKind::Cbr => Duration(gap as u64),
            CrossKind::Poisson => Duration(rng.exponential(gap) as u64),
            CrossKind::Exponential { mean_on, mean_off } => {
                let mut step = Duration(gap as u64);
                if next + step > on_until {
                    let off = Duration(rng.exponential(mean_off.as_nanos() as f64) as u64);
                    step += off;
                    on_until =
                        next + step + Duration(rng.exponential(mean_on.as_nanos() as f64) as u64);
                }
                step
            }
        };
    }
}

/// Swallows the cross traffic in B.
fn cross_sink(stop: Arc<AtomicBool>, ready: mpsc::Sender<Result<(), String>>) {
    let s = match UdpSocket::bind((crate::ADDR_B, CROSS_PORT)) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(format!("bind cross sink: {e}")));
            return;
        }
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(50)));
    let _ = ready.send(Ok(()));
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        let _ = s.recv(&mut buf);
    }
}

/// Sleeps until `start` on the run's clock, checking `stop` every 200 µs; false if the
/// run was stopped first (a flow thread then returns without starting).
fn wait_for_start(start: Time, now: &impl Fn() -> Time, stop: &AtomicBool) -> bool {
    while now() < start {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_sim::{Buffer, FlowConfig, LinkConfig, LossModel, Qdisc, TcpConfig};
    use cclab_units::Rate;

    pub fn config(flows: &[(&str, u64)]) -> SimConfig {
        SimConfig {
            duration: Duration::from_secs(2),
            seed: 1,
            bottleneck: LinkConfig {
                rate: LinkRate::Constant(Rate::from_mbps(10)),
                delay: Duration::from_millis(10),
                buffer: Buffer::Packets(50),
                qdisc: Qdisc::DropTail,
                loss: LossModel::None,
            },
            flows: flows
                .iter()
                .enumerate()
                .map(|(i, &(cc, rtt))| FlowConfig {
                    name: format!("{cc}#{i}"),
                    cc: cc.into(),
                    params: vec![],
                    rtt: Duration::from_millis(rtt),
                    start: Time::ZERO,
                    stop: None,
                    bytes: None,
                    tcp: TcpConfig::default(),
                })
                .collect(),
            cross: vec![],
            sample_interval: Duration::from_millis(10),
            changes: vec![],
        }
    }

    #[test]
    fn refuses_what_it_cannot_run_faithfully() {
        let avail: Vec<String> = ["reno", "cubic"].iter().map(|s| s.to_string()).collect();
        assert!(
            check(&config(&[("cubic", 40), ("reno", 40)]), &[Transport::Kernel; 2], &avail).is_ok()
        );
        let k = |n: usize| vec![Transport::Kernel; n];
        let e = check(&config(&[("tahoe", 40)]), &k(1), &avail).unwrap_err().to_string();
        assert!(
            e.contains("flows[0]")
                && e.contains("\"tahoe\" is not available")
                && e.contains("reno cubic"),
            "{e}"
        );
        let e =
            check(&config(&[("cubic", 40), ("cubic", 15)]), &k(2), &avail).unwrap_err().to_string();
        assert!(e.contains("flows[1]") && e.contains("twice the bottleneck delay"), "{e}");
        let mut c = config(&[("cubic", 40)]);
        c.flows[0].params.push(("beta".into(), 0.5));
        assert!(check(&c, &k(1), &avail).unwrap_err().to_string().contains("params.beta"));
        // Over UDP, cclab's own algorithms run, with their parameters.
        assert!(check(&config(&[("tahoe", 40)]), &[Transport::Udp], &avail).is_ok());
        let mut c = config(&[("reno", 40)]);
        c.flows[0].params.push(("nosuch".into(), 0.5));
        let e = check(&c, &[Transport::Udp], &avail).unwrap_err().to_string();
        assert!(e.contains("flows[0]") && e.contains("nosuch"), "{e}");
        assert!(check(&config(&[("reno", 40)]), &k(2), &avail).is_err());
        // The TCP-level limits of scenario files hold here too, for both transports.
        let mut c = config(&[("reno", 40)]);
        c.flows[0].tcp.init_cwnd = 1001;
        let e = check(&c, &[Transport::Udp], &avail).unwrap_err().to_string();
        assert!(e.contains("tcp.init_cwnd = 1001") && e.contains("1 to 1000 segments"), "{e}");
        c.flows[0].tcp.init_cwnd = 10;
        c.flows[0].tcp.rto_min = Duration::from_secs(61);
        let e = check(&c, &k(1), &avail).unwrap_err().to_string();
        assert!(e.contains("tcp.rto_min = 61s") && e.contains("1ms to 60s"), "{e}");
        let many: Vec<(&str, u64)> = vec![("cubic", 40); MAX_FLOWS + 1];
        assert!(check(&config(&many), &k(MAX_FLOWS + 1), &avail)
            .unwrap_err()
            .to_string()
            .contains("at most"));
    }

    #[test]
    fn the_bottleneck_is_the_uplink_and_the_ack_path_carries_the_rest_of_each_rtt() {
        let (up, down) = path(&config(&[("cubic", 50), ("reno", 100)]));
        assert_eq!(up.delay, Duration::from_millis(10));
        assert!(matches!(up.rate, Some(LinkRate::Constant(r)) if r == Rate::from_mbps(10)));
        assert_eq!(down.delay, Duration::from_millis(40));
        assert_eq!(
            down.per_source_delay,
            vec![
                (flow_addr(0), Duration::from_millis(40)),
                (flow_addr(1), Duration::from_millis(90))
            ]
        );
        assert!(down.rate.is_none());
    }
}
