//! `cclab emu bench`: the figures behind the emulator's targets, printed (benchmarks, not
//! timed tests; the machine's load changes them).
//!
//! 1. departure error: a backlogged constant-rate link; every packet's write time against
//!    its schedule (p50/p99/max);
//! 2. delay: UDP echo probes through 20 ms each way; RTT minus 40 ms (p50/p99/max);
//! 3. trace fidelity: a backlogged trace link; packets delivered against the trace's
//!    opportunities in the same interval;
//! 4. throughput: 1500-byte packets as fast as one side can send them through a 10 Gbit/s
//!    emulated link;
//! 5. one real kernel CUBIC flow (the testbed) through 20 Mbit/s, 40 ms RTT, 1 BDP DropTail;
//! 6. with `--agreement CC`: real kernel TCP beside the simulator on four scenarios.

use crate::forwarder::unless_signalled;
use crate::harness::{Harness, Side};
use crate::model::trace_opportunities;
use crate::stats::Lateness;
use crate::{DirectionConfig, EmuError, ADDR_B};
use cclab_sim::{Buffer, LinkRate};
use cclab_units::{Duration, Rate, Time};
use clap::Args;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Args, Debug, Default)]
pub struct BenchArgs {
    /// Shorter runs (about 10 s in all instead of about 30 s).
    #[arg(long)]
    pub quick: bool,
    /// Run the forwarder as an ordinary (SCHED_OTHER) thread instead of SCHED_FIFO.
    #[arg(long)]
    pub no_realtime: bool,
    /// Instead of the emulator figures: real kernel TCP (the testbed) beside the simulator
    /// on four scenarios, with this algorithm (e.g. cubic, reno).
    #[arg(long, value_name = "CC")]
    pub agreement: Option<String>,
    /// Trace for the fidelity figure (default: `TMobile-LTE-short.down` from the
    /// `shared/traces` folder beside the repository).
    #[arg(long)]
    pub trace: Option<PathBuf>,
}

/// The default trace: `shared/traces/TMobile-LTE-short.down` beside the repository, found
/// from the working directory or from the binary (`target/release/cclab`).
fn default_trace() -> Result<PathBuf, EmuError> {
    let rel = Path::new("shared/traces/TMobile-LTE-short.down");
    let mut bases: Vec<PathBuf> = vec![];
    if let Ok(cwd) = std::env::current_dir() {
        bases.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Ok(exe) = std::env::current_exe() {
        bases.extend(exe.ancestors().map(Path::to_path_buf));
    }
    bases.iter().map(|b| b.join(rel)).find(|p| p.is_file()).ok_or_else(|| {
        EmuError::Config(format!("--trace: no {} found beside the repository (or above the working folder); give --trace FILE", rel.display()))
    })
}

fn us(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e3
}

fn lateness_line(name: &str, l: &Lateness) -> String {
    format!(
        "{name}: {} packets, error p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        l.count(),
        us(l.quantile(0.5)),
        us(l.quantile(0.99)),
        us(l.max())
    )
}

fn io(what: &str) -> impl Fn(std::io::Error) -> EmuError + '_ {
    move |e| EmuError::Io(format!("{what}: {e}"))
}

/// Sends `payload`-byte UDP datagrams to `dst` for `dur`, paced to `rate` (None: as fast
/// as possible); returns datagrams sent.
pub fn udp_send(
    dst: SocketAddr,
    payload: usize,
    rate: Option<Rate>,
    dur: std::time::Duration,
) -> std::io::Result<u64> {
    let s = UdpSocket::bind("0.0.0.0:0")?;
    s.connect(dst)?;
    let buf = vec![0u8; payload];
    let start = Instant::now();
    let mut sent = 0u64;
    let wire_bits = (payload as u64 + 28) * 8;
    while start.elapsed() < dur && !crate::forwarder::signalled() {
        let due = match rate {
            Some(r) => {
                (start.elapsed().as_nanos() as u64 as u128 * r.bps() as u128
                    / 1_000_000_000
                    / wire_bits as u128) as u64
                    + 1
            }
            None => sent + 64,
        };
        while sent < due {
            // A full device queue refuses (ENOBUFS); that is the offered load's excess.
            let _ = s.send(&buf);
            sent += 1;
        }
        if rate.is_some() {
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
    }
    Ok(sent)
}

/// Counts UDP bytes arriving at `bind` until `stop`; returns (packets, bytes).
pub fn udp_sink(
    bind: SocketAddr,
    stop: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<()>,
) -> std::io::Result<(u64, u64)> {
    let s = UdpSocket::bind(bind)?;
    s.set_read_timeout(Some(std::time::Duration::from_millis(50)))?;
    let _ = ready.send(());
    let mut buf = [0u8; 2048];
    let (mut p, mut b) = (0, 0);
    while !stop.load(Ordering::Relaxed) {
        if let Ok(n) = s.recv(&mut buf) {
            p += 1;
            b += n as u64;
        }
    }
    Ok((p, b))
}

/// Starts a UDP sink in B at `port`; returns its stop flag and join handle once bound.
/// A running UDP sink: its stop flag and the thread returning (packets, bytes).
type Sink = (Arc<AtomicBool>, std::thread::JoinHandle<std::io::Result<(u64, u64)>>);

fn start_sink(h: &Harness, port: u16) -> Result<Sink, EmuError> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let s2 = stop.clone();
    let j = h.spawn(Side::B, move || udp_sink(SocketAddr::new(ADDR_B.into(), port), s2, tx));
    rx.recv_timeout(std::time::Duration::from_secs(2))
        .map_err(|_| EmuError::Setup("the UDP sink did not start".into()))?;
    Ok((stop, j))
}

fn constant(rate: Rate, delay_ms: u64, buffer: Buffer) -> DirectionConfig {
    DirectionConfig {
        rate: Some(LinkRate::Constant(rate)),
        delay: Duration::from_millis(delay_ms),
        buffer,
        ..Default::default()
    }
}

/// 1. Backlogged 20 Mbit/s link: every departure's error against its schedule.
pub fn departure_error(secs: u64, rt: bool) -> Result<Lateness, EmuError> {
    let link = constant(Rate::from_mbps(20), 0, Buffer::Packets(100));
    let h = Harness::start_with(&link, &DirectionConfig::default(), 1, rt)?;
    let (stop, sink) = start_sink(&h, 9001)?;
    let dst = SocketAddr::new(ADDR_B.into(), 9001);
    let send = h.spawn(Side::A, move || {
        udp_send(dst, 1472, Some(Rate::from_mbps(30)), std::time::Duration::from_secs(secs))
    });
    send.join().map_err(|_| EmuError::Setup("sender panicked".into()))?.map_err(io("udp send"))?;
    let fwd = h.finish()?;
    stop.store(true, Ordering::Relaxed);
    let _ = sink.join();
    Ok(fwd.dirs[0].stats.lateness.clone())
}

/// 2. Echo probes through 20 ms each way: (RTT - 40 ms) distribution, and the
///    forwarder's own lateness of the delay line's releases.
pub fn delay_error(probes: usize, rt: bool) -> Result<(Lateness, Lateness), EmuError> {
    let link = constant(Rate::from_mbps(100), 20, Buffer::Packets(1000));
    let h = Harness::start_with(&link, &link, 1, rt)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = h.spawn(Side::B, move || -> std::io::Result<()> {
        let s = UdpSocket::bind((ADDR_B, 9002))?;
        s.set_read_timeout(Some(std::time::Duration::from_millis(500)))?;
        let _ = tx.send(());
        let mut buf = [0u8; 256];
        while let Ok((n, from)) = s.recv_from(&mut buf) {
            s.send_to(&buf[..n], from)?;
        }
        Ok(())
    });
    rx.recv_timeout(std::time::Duration::from_secs(2))
        .map_err(|_| EmuError::Setup("the echo server did not start".into()))?;
    let probe = h.spawn(Side::A, move || -> std::io::Result<Lateness> {
        let s = UdpSocket::bind("0.0.0.0:0")?;
        s.connect((ADDR_B, 9002))?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(1)))?;
        let mut l = Lateness::default();
        let mut buf = [0u8; 256];
        for _ in 0..probes {
            let t = Instant::now();
            s.send(&[7u8; 100])?;
            s.recv(&mut buf)?;
            let rtt = t.elapsed().as_nanos() as u64;
            l.record(Duration(rtt.saturating_sub(40_000_000)));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(l)
    });
    let app = probe
        .join()
        .map_err(|_| EmuError::Setup("prober panicked".into()))?
        .map_err(io("probe"))?;
    let fwd = h.finish()?;
    let _ = echo.join();
    let mut fl = fwd.dirs[0].stats.lateness.clone();
    fl.merge(&fwd.dirs[1].stats.lateness);
    Ok((app, fl))
}

/// 3. A backlogged trace link: (delivered, opportunities in the same interval).
pub fn trace_fidelity(
    trace: &std::path::Path,
    secs: u64,
    rt: bool,
) -> Result<(u64, u64, Lateness), EmuError> {
    let t = Arc::new(cclab_sim::Trace::load(trace).map_err(EmuError::Config)?);
    let mean_bps = t.mean_rate().bps();
    let link = DirectionConfig {
        rate: Some(LinkRate::Trace(t.clone())),
        buffer: Buffer::Packets(2000),
        ..Default::default()
    };
    let h = Harness::start_with(&link, &DirectionConfig::default(), 1, rt)?;
    let (stop, sink) = start_sink(&h, 9003)?;
    let dst = SocketAddr::new(ADDR_B.into(), 9003);
    // Offer more than the trace's peak so the queue never empties.
    let offered = Rate((mean_bps * 3).max(50_000_000));
    let send = h.spawn(Side::A, move || {
        udp_send(dst, 1472, Some(offered), std::time::Duration::from_secs(secs))
    });
    send.join().map_err(|_| EmuError::Setup("sender panicked".into()))?.map_err(io("udp send"))?;
    let fwd = h.finish()?;
    stop.store(true, Ordering::Relaxed);
    let _ = sink.join();
    let s = &fwd.dirs[0].stats;
    let from = s.first_arrival.unwrap_or(Time::ZERO);
    let to = Time::ZERO + fwd.elapsed();
    Ok((s.delivered_packets, trace_opportunities(&t, from, to), s.lateness.clone()))
}

/// 4. Throughput of 1500-byte packets through a 10 Gbit/s link: (delivered bit/s, sent,
///    delivered, forwarder CPU time).
pub fn throughput(secs: u64, rt: bool) -> Result<(f64, u64, u64, Duration), EmuError> {
    let link = constant(Rate(10_000_000_000), 0, Buffer::Packets(10_000));
    let h = Harness::start_with(&link, &DirectionConfig::default(), 1, rt)?;
    let (stop, sink) = start_sink(&h, 9004)?;
    let dst = SocketAddr::new(ADDR_B.into(), 9004);
    let t0 = h.now();
    let send =
        h.spawn(Side::A, move || udp_send(dst, 1472, None, std::time::Duration::from_secs(secs)));
    let sent = send
        .join()
        .map_err(|_| EmuError::Setup("sender panicked".into()))?
        .map_err(io("udp send"))?;
    let t1 = h.now();
    let fwd = h.finish()?;
    stop.store(true, Ordering::Relaxed);
    sink.join().map_err(|_| EmuError::Setup("sink panicked".into()))?.map_err(io("udp sink"))?;
    let s = &fwd.dirs[0].stats;
    let bps = s.delivered_bytes as f64 * 8.0 / (t1 - t0).as_secs_f64();
    Ok((bps, sent, s.delivered_packets, fwd.cpu_time()))
}

/// Mean cwnd (packets) per flow over the samples.
#[derive(Default)]
struct CwndMean {
    sum: Vec<f64>,
    n: Vec<u64>,
}

impl cclab_sim::Observer for CwndMean {
    fn flow_sample(&mut self, s: &cclab_sim::FlowSample) {
        if self.sum.len() <= s.flow {
            self.sum.resize(s.flow + 1, 0.0);
            self.n.resize(s.flow + 1, 0);
        }
        self.sum[s.flow] += s.cwnd_pkts as f64;
        self.n[s.flow] += 1;
    }
}

impl CwndMean {
    fn mean(&self) -> f64 {
        let per: Vec<f64> = self
            .sum
            .iter()
            .zip(&self.n)
            .filter(|(_, &n)| n > 0)
            .map(|(s, &n)| s / n as f64)
            .collect();
        per.iter().sum::<f64>() / per.len().max(1) as f64
    }
}

/// A dumbbell scenario for the agreement figures.
pub fn agreement_scenario(
    cc: &str,
    rate: LinkRate,
    rtt_ms: u64,
    buffer: Buffer,
    flows: usize,
    secs: u64,
) -> cclab_sim::SimConfig {
    let flow = |i: usize| cclab_sim::FlowConfig {
        name: format!("{cc}#{i}"),
        cc: cc.to_string(),
        params: vec![],
        rtt: Duration::from_millis(rtt_ms),
        start: Time::ZERO,
        stop: None,
        bytes: None,
        tcp: cclab_sim::TcpConfig::default(),
        direction: cclab_sim::Direction::Forward,
    };
    cclab_sim::SimConfig {
        duration: Duration::from_secs(secs),
        seed: 1,
        bottleneck: cclab_sim::LinkConfig {
            rate,
            delay: Duration::from_millis(rtt_ms / 4),
            buffer,
            qdisc: cclab_sim::Qdisc::DropTail,
            loss: cclab_sim::LossModel::None,
            reverse_rate: None,
        },
        flows: (0..flows).map(flow).collect(),
        cross: vec![],
        sample_interval: Duration::from_millis(10),
        changes: vec![],
    }
}

/// Real kernel TCP beside the simulator on the same scenarios: goodput and mean cwnd.
pub fn agreement(cc: &str, secs: u64, trace: Option<&std::path::Path>) -> Result<(), EmuError> {
    let mut cases = vec![
        (
            "TCPTuner: 12 Mbit/s, 80 ms, 120 kB",
            agreement_scenario(
                cc,
                LinkRate::Constant(Rate::from_mbps(12)),
                80,
                Buffer::Bytes(120_000),
                1,
                secs,
            ),
        ),
        (
            "20 Mbit/s, 40 ms, 1 BDP",
            agreement_scenario(
                cc,
                LinkRate::Constant(Rate::from_mbps(20)),
                40,
                Buffer::Bytes(100_000),
                1,
                secs,
            ),
        ),
        (
            "2 flows, 10 Mbit/s, 100 ms, 0.5 BDP",
            agreement_scenario(
                cc,
                LinkRate::Constant(Rate::from_mbps(10)),
                100,
                Buffer::Bytes(62_500),
                2,
                secs,
            ),
        ),
    ];
    if let Some(p) = trace {
        let t = Arc::new(cclab_sim::Trace::load(p).map_err(EmuError::Config)?);
        cases.push((
            "trace 12mbps.trace, 60 ms, 100 pkt",
            agreement_scenario(cc, LinkRate::Trace(t), 60, Buffer::Packets(100), 1, secs),
        ));
    }
    cclab_units::outln!("agreement, {cc}, {secs} s each: goodput (Mbit/s, all flows) and mean cwnd (packets), kernel vs simulator");
    cclab_units::outln!(
        "{:<38} {:>10} {:>10} {:>7} {:>10} {:>10}",
        "scenario",
        "kernel",
        "sim",
        "diff",
        "cwnd kern",
        "cwnd sim"
    );
    for (name, cfg) in cases {
        let mut kern_obs = CwndMean::default();
        let kern = unless_signalled(crate::testbed::run(&cfg, &mut kern_obs, &mut |_| {}))?;
        let mut sim_obs = CwndMean::default();
        let mut sim =
            cclab_sim::Simulation::new(cfg.clone()).map_err(|e| EmuError::Config(e.to_string()))?;
        let simr = sim.run(&mut sim_obs);
        let k: f64 = kern.flows.iter().map(|f| f.goodput_bps).sum();
        let s: f64 = simr.flows.iter().map(|f| f.goodput_bps).sum();
        cclab_units::outln!(
            "{name:<38} {:>10.2} {:>10.2} {:>6.1}% {:>10.1} {:>10.1}",
            k / 1e6,
            s / 1e6,
            (k / s - 1.0) * 100.0,
            kern_obs.mean(),
            sim_obs.mean()
        );
    }
    Ok(())
}

pub fn run(args: &BenchArgs) -> Result<(), EmuError> {
    crate::netns::preflight()?;
    crate::netns::reap();
    // A signal stops the step under way through its normal end (its namespaces go with
    // it) and the bench before the next step.
    let _restore = crate::forwarder::signal_handlers_until_dropped();
    if let Some(cc) = &args.agreement {
        let trace = match &args.trace {
            Some(t) => t.clone(),
            None => default_trace()?,
        }
        .with_file_name("12mbps.trace");
        return agreement(
            cc,
            if args.quick { 10 } else { 30 },
            trace.exists().then_some(trace.as_path()),
        );
    }
    // Looked for before the steps that precede its use, so that a missing one is said at
    // once rather than after them.
    let trace = match &args.trace {
        Some(t) => t.clone(),
        None => default_trace()?,
    };
    if !trace.is_file() {
        return Err(EmuError::Config(format!(
            "--trace: {} is not a file; allowed: a mahimahi trace file",
            trace.display()
        )));
    }
    let secs = if args.quick { 2 } else { 5 };
    let mut rt = !args.no_realtime;
    if rt {
        if let Err(why) = crate::forwarder::realtime_permitted() {
            cclab_units::outln!(
                "warning: SCHED_FIFO refused ({why}); the forwarder runs as an ordinary thread"
            );
            rt = false;
        }
    }
    cclab_units::outln!(
        "cclab emu bench ({}, forwarder {})",
        if args.quick { "quick" } else { "full" },
        if rt { "SCHED_FIFO" } else { "SCHED_OTHER" }
    );

    let l = unless_signalled(departure_error(secs, rt))?;
    cclab_units::outln!(
        "[1] departure error, 20 Mbit/s backlogged, {secs} s: {}",
        lateness_line("departures", &l)
    );

    let (app, fwd) = unless_signalled(delay_error(if args.quick { 100 } else { 400 }, rt))?;
    cclab_units::outln!("[2] delay 20 ms each way: RTT - 40 ms over {} probes: p50 {:.1} us, p99 {:.1} us, max {:.1} us", app.count(), us(app.quantile(0.5)), us(app.quantile(0.99)), us(app.max()));
    cclab_units::outln!("    {}", lateness_line("delay-line releases", &fwd));

    let (delivered, opps, l) = unless_signalled(trace_fidelity(&trace, secs, rt))?;
    let ratio = delivered as f64 / opps.max(1) as f64;
    cclab_units::outln!(
        "[3] trace {}: delivered {delivered} of {opps} opportunities ({:.2}%); {}",
        trace.display(),
        ratio * 100.0,
        lateness_line("departures", &l)
    );

    let (bps, sent, delivered, cpu) = unless_signalled(throughput(secs, rt))?;
    let per_pkt = cpu.as_nanos() as f64 / delivered.max(1) as f64;
    cclab_units::outln!(
        "[4] throughput, 1500-byte packets, 10 Gbit/s link: {:.3} Gbit/s delivered ({delivered} of {sent} sent); forwarder CPU {:.2} us per packet, i.e. {:.2} Gbit/s per core",
        bps / 1e9,
        per_pkt / 1e3,
        1500.0 * 8.0 / per_pkt
    );

    let tsecs = if args.quick { 6 } else { 15 };
    let cfg = agreement_scenario(
        "cubic",
        LinkRate::Constant(Rate::from_mbps(20)),
        40,
        Buffer::Bytes(100_000),
        1,
        tsecs,
    );
    let r = unless_signalled(crate::testbed::run(&cfg, &mut cclab_sim::NoObserver, &mut |_| {}))?;
    cclab_units::outln!(
        "[5] kernel cubic (testbed), 20 Mbit/s, 40 ms RTT, 100 kB (1 BDP) DropTail, {tsecs} s: goodput {:.2} Mbit/s ({:.1}% of the rate), link utilization {:.1}%, {} drops",
        r.flows[0].goodput_bps / 1e6,
        r.flows[0].goodput_bps / 2e5,
        r.link.utilization * 100.0,
        r.link.queue_drops
    );
    Ok(())
}
