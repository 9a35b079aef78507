//! The standard benchmark scenarios (issue 2, item 7), so `cclab bench` and the tests run
//! exactly the same configurations. All flows are Reno with Linux defaults (MSS 1448,
//! initcwnd 10, delayed ACKs); DropTail buffers of one bandwidth-delay product in
//! 1500-byte packets; bottleneck one-way delay 5 ms, the rest of the RTT on the access
//! path.
//!
//! - `a`: 1 flow, 100 Mbit/s, RTT 50 ms, 1 BDP (417 packets), 60 s.
//! - `b`: 100 flows, 1 Gbit/s, RTT 20 ms, 1 BDP (1667 packets), 30 s.
//! - `c`: 10,000 flows, 10 Gbit/s, 10 s, RTT 100 ms, 1 BDP (83,333 packets): with a
//!   100 ms RTT each flow's share of the BDP is about 8 packets, enough for window-based
//!   TCP to work rather than live on timeouts. Starts are spread evenly over the first
//!   second so that 10,000 initial windows do not land in the same instant.

use crate::config::*;
use cclab_units::{Duration, Rate, Time};

/// One benchmark scenario.
#[derive(Clone, Debug)]
pub struct BenchCase {
    pub name: &'static str,
    pub description: &'static str,
    pub config: SimConfig,
}

/// What one benchmark run measured.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub name: &'static str,
    pub simulated_s: f64,
    pub wall_s: f64,
    /// CPU time of the simulating thread (Linux schedstat), if known: on a shared machine
    /// this is the fairer speed figure.
    pub cpu_s: Option<f64>,
    /// Packets that left the bottleneck.
    pub bottleneck_packets: u64,
    pub events: u64,
    pub utilization: f64,
}

impl BenchResult {
    /// Packets per CPU second (falls back to wall time when CPU time is unknown).
    pub fn packets_per_cpu_s(&self) -> f64 {
        self.bottleneck_packets as f64 / self.cpu_s.unwrap_or(self.wall_s).max(1e-9)
    }
    pub fn packets_per_wall_s(&self) -> f64 {
        self.bottleneck_packets as f64 / self.wall_s.max(1e-9)
    }
    pub fn events_per_wall_s(&self) -> f64 {
        self.events as f64 / self.wall_s.max(1e-9)
    }
}

/// Bandwidth-delay product in 1500-byte packets (at least 1).
pub fn bdp_packets(rate: Rate, rtt: Duration) -> u64 {
    (rate.bytes_in(rtt) / 1500).max(1)
}

fn dumbbell(
    name: &str,
    n: usize,
    rate: Rate,
    rtt: Duration,
    secs: u64,
    spread_starts: Duration,
) -> SimConfig {
    let flows = (0..n)
        .map(|i| FlowConfig {
            name: format!("{name}#{i}"),
            cc: "reno".into(),
            params: vec![],
            rtt,
            start: Time(spread_starts.0 / n as u64 * i as u64),
            stop: None,
            bytes: None,
            tcp: TcpConfig::default(),
            direction: Direction::Forward,
        })
        .collect();
    SimConfig {
        duration: Duration::from_secs(secs),
        seed: 1,
        bottleneck: LinkConfig {
            rate: LinkRate::Constant(rate),
            delay: Duration::from_millis(5),
            buffer: Buffer::Packets(bdp_packets(rate, rtt)),
            qdisc: Qdisc::DropTail,
            loss: LossModel::None,
            reverse_rate: None,
        },
        flows,
        cross: vec![],
        sample_interval: Duration::from_millis(10),
        changes: vec![],
    }
}

/// The scaling cases' path: `n` flows on 10 Gbit/s, RTT 100 ms, 10 s, starts spread over
/// the first second.
fn many_flows(n: usize) -> SimConfig {
    dumbbell(
        "reno",
        n,
        Rate::from_mbps(10_000),
        Duration::from_millis(100),
        10,
        Duration::from_secs(1),
    )
}

/// The three standard cases, in order a, b, c.
pub fn standard() -> Vec<BenchCase> {
    vec![
        BenchCase {
            name: "a",
            description: "1 flow, 100 Mbit/s, RTT 50 ms, 1 BDP DropTail, 60 s",
            config: dumbbell(
                "reno",
                1,
                Rate::from_mbps(100),
                Duration::from_millis(50),
                60,
                Duration::ZERO,
            ),
        },
        BenchCase {
            name: "b",
            description: "100 flows, 1 Gbit/s, RTT 20 ms, 1 BDP DropTail, 30 s",
            config: dumbbell(
                "reno",
                100,
                Rate::from_mbps(1000),
                Duration::from_millis(20),
                30,
                Duration::ZERO,
            ),
        },
        BenchCase {
            name: "c",
            description:
                "10,000 flows, 10 Gbit/s, RTT 100 ms, 1 BDP DropTail, 10 s (starts spread over 1 s)",
            config: many_flows(10_000),
        },
    ]
}

/// The scaling case, run on request (`cclab bench --large`): d.
pub fn large() -> Vec<BenchCase> {
    vec![BenchCase {
        name: "d",
        description:
            "100,000 flows, 10 Gbit/s, RTT 100 ms, 1 BDP DropTail, 10 s (starts spread over 1 s)",
        config: many_flows(100_000),
    }]
}

/// Runs one case with no observer and measures wall time. The case's configuration moves
/// into the simulation (a copy would be 100,000 flow configurations held twice).
pub fn run(case: BenchCase) -> BenchResult {
    let BenchCase { name, config, .. } = case;
    let c0 = thread_cpu_s();
    let t0 = std::time::Instant::now();
    let mut sim = crate::Simulation::new(config).expect("bench configs are valid");
    let report = sim.run(&mut crate::NoObserver);
    let wall = t0.elapsed().as_secs_f64();
    let cpu_s = match (c0, thread_cpu_s()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    BenchResult {
        cpu_s,
        name,
        simulated_s: report.duration.as_secs_f64(),
        wall_s: wall,
        bottleneck_packets: report.link.delivered_packets,
        events: report.events,
        utilization: report.link.utilization,
    }
}

/// CPU time consumed by the calling thread so far, seconds (Linux only).
pub fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kb("VmHWM:").map(|kb| kb * 1024)
}

/// This process's resident memory now (Linux `/proc/self/status` VmRSS), if known: before
/// a case is built, what the process holds without it.
pub fn rss_bytes() -> Option<u64> {
    status_kb("VmRSS:").map(|kb| kb * 1024)
}

fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
