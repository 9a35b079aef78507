//! The testbed: a scenario's flows as real kernel TCP connections through the emulator,
//! measured into the simulator's own output types (`FlowSample`, `QueueSample`, `Report`)
//! so a real run is written and compared exactly like a simulated one.
//!
//! Topology (a dumbbell with one bottleneck, as the simulator's): senders in namespace A,
//! receivers in B. The uplink (A to B) is the bottleneck: the scenario's rate or trace,
//! buffer, queue discipline, loss and one-way delay. The downlink carries the ACKs with
//! the rest of each flow's RTT (`rtt - delay`, chosen by the ACK's source address) and no
//! rate limit, except in runs with reverse traffic: then it is the simulator's reverse
//! bottleneck too (`reverse_rate` or the rate, the same buffer and discipline), reverse
//! UDP sources send from B through it, and the ACKs queue behind them. Each flow has its own receiver address in B (198.18.1.x), which also lets
//! its `rto_min` and `initcwnd` be set on its own route, as TCPTuner did with `ip route`.
//!
//! Measured, not modelled: cwnd, ssthresh, srtt, inflight and retransmits come from
//! `TCP_INFO` every sample interval (not per ACK); RTT percentiles are over those srtt
//! samples; delivered bytes are counted by the receiving application. Each flow's drops
//! are the uplink's losses of packets to its receiver address (its data and SYNs).
//!
//! A flow can instead use cclab's own TCP and algorithm over UDP ([`Transport::Udp`],
//! the [`crate::udp`] drivers), for algorithms the kernel lacks; it is sampled from the
//! algorithm's own state.
//!
//! cclab's BPF algorithms run under their kernel names with the scenario's parameters
//! ([`crate::kernel_algos`]); a caller can retune them and the routes while a run goes
//! ([`run_steered`]).
//!
//! Not yet supported (a clear error, never a silent substitute): reverse TCP flows,
//! parameters of the kernel's own algorithms (Linux's `cubic` has module parameters,
//! global and not cclab's to change), scheduled parameter changes, and more than
//! [`MAX_FLOWS`] flows.

use crate::forwarder::{monotonic_ns, DirectionGauge};
use crate::harness::{Harness, Side};
use crate::kernel_algos::{kernel_name, set_live, tunable, RunTunables};
use crate::stats::{DirectionStats, Lateness};
use crate::steal::StealTimeline;
use crate::tcpinfo::{tcp_info, TcpInfo};
use crate::{DirectionConfig, EmuError};
use cclab_cc::tcp_limits::{INITCWND, RTO_MIN_MS};
use cclab_sim::cross::{CrossSource, CrossStep};
use cclab_sim::hist::Histogram;
use cclab_sim::rng::{stream, Rng};
use cclab_sim::trace::LinkSchedule;
use cclab_sim::{
    CrossReport, Direction, FlowConfig, FlowReport, FlowSample, LinkRate, LinkReport, Observer,
    QueueSample, Report, RttSummary, SimConfig,
};
use cclab_units::{Duration, Time};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::ops::ControlFlow;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
    cclab_sim::validate(cfg).map_err(|e| EmuError::Config(e.to_string()))?;
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
            // cclab's own algorithms: the configuration's check covered them.
        } else if !available.iter().any(|a| a == kernel_name(&f.cc)) {
            let name = kernel_name(&f.cc);
            let udp = "run the flow with transport = \"udp\" (cclab's own TCP and algorithm over UDP) or in the simulator";
            let hint = if tunable(&f.cc) {
                format!("load it first (cclab kernel load {name})")
            } else if LINUX_MODULES.contains(&name) {
                format!("load its module where the kernel has one (modprobe tcp_{name}), or {udp}")
            } else {
                udp.to_string()
            };
            return bad(format!(
                "flows[{i}] ({}): algorithm \"{name}\" is not available in this kernel (available: {}); {hint}",
                f.name,
                available.join(" ")
            ));
        } else if let Some((name, _)) = f.params.first().filter(|_| !tunable(&f.cc)) {
            return bad(format!("flows[{i}] ({}): params.{name}: the testbed cannot set per-flow parameters of kernel algorithms", f.name));
        }
    }
    if let Some(c) = cfg.changes.iter().min_by_key(|c| c.at) {
        let what: Vec<&str> = c.set.iter().map(|(n, _)| n.as_str()).collect();
        let flow = cfg.flows.get(c.flow);
        // While a run goes, it holds its algorithms' parameters (`cclab kernel set` is
        // refused): the web lab's tuning of the run is the one way in.
        let live = if flow.is_some_and(|f| tunable(&f.cc)) {
            "its algorithm's parameters, rto_min and initcwnd"
        } else {
            "rto_min and initcwnd; the kernel's own algorithms take no parameters per flow"
        };
        return bad(format!(
            "changes: the testbed does not run scheduled parameter changes (the first: {} of flows[{}] ({}) at {}); retune the running flow live in the web lab instead (cclab serve, a kernel run's tuning: {live})",
            what.join(", "),
            c.flow,
            flow.map_or("", |f| f.name.as_str()),
            format_args!("{}s", c.at.as_secs_f64())
        ));
    }
    check_one_way(cfg).map_err(EmuError::Config)
}

/// Linux's congestion control modules (net/ipv4/tcp_<name>.c) by the names they register.
const LINUX_MODULES: &[&str] = &[
    "bbr",
    "bic",
    "cdg",
    "dctcp",
    "highspeed",
    "htcp",
    "hybla",
    "illinois",
    "lp",
    "nv",
    "scalable",
    "vegas",
    "veno",
    "westwood",
    "yeah",
];

/// Reverse UDP sources run (from B through the downlink), reverse TCP flows do not: each
/// flow's receiver is in B and its sender in A.
fn check_one_way(cfg: &SimConfig) -> Result<(), String> {
    match cfg.flows.iter().position(|f| f.direction == Direction::Reverse) {
        Some(i) => Err(format!("testbed: flows[{i}].direction = \"reverse\": the testbed runs TCP flows forward only (allowed: \"forward\"; reverse [[cross]] sources are allowed); run reverse TCP flows in the simulator")),
        None => Ok(()),
    }
}

/// The one-way delay after the bottleneck of `direction` on the emulated path ([`path`]):
/// the bottleneck's delay on the uplink, and on the downlink the default ACK path's,
/// which cross traffic (host B's address, not a flow's) takes.
fn delay_after_bottleneck(cfg: &SimConfig, direction: Direction) -> Duration {
    let (up, down) = path(cfg);
    match direction {
        Direction::Forward => up.delay,
        Direction::Reverse => down.delay,
    }
}

/// The emulated path for `cfg`: the bottleneck on the uplink, the ACK path's delay on the
/// downlink, and there the reverse bottleneck in runs that have one (the simulator's:
/// the same buffer and discipline, `reverse_rate` or the forward rate, no random loss).
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
    let mut down = DirectionConfig {
        delay: cfg.flows.first().map_or(b.delay, |f| back(f.rtt)),
        per_source_delay,
        ..Default::default()
    };
    if cfg.has_reverse_link() {
        down.rate = Some(b.reverse_link_rate());
        down.buffer = b.buffer;
        down.qdisc = b.qdisc.clone();
    }
    (up, down)
}

/// What a cross-traffic source sent and what reached its sink (a `CrossReport`'s
/// counts; bytes as on the wire, the UDP payload and 28 bytes of headers).
#[derive(Default)]
struct CrossCounts {
    /// The source's UDP port once it has one (0 before): the sink, which every source
    /// of a direction shares, tells them apart by it.
    port: AtomicU32,
    sent_packets: AtomicU64,
    sent_bytes: AtomicU64,
    delivered_packets: AtomicU64,
    delivered_bytes: AtomicU64,
}

impl CrossCounts {
    /// Source `i`'s report. Its drops are not known: the forwarder counts drops by
    /// destination address, which the sources of a direction share.
    fn report(&self, i: usize) -> CrossReport {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CrossReport {
            source: i,
            sent_packets: n(&self.sent_packets),
            sent_bytes: n(&self.sent_bytes),
            delivered_packets: n(&self.delivered_packets),
            delivered_bytes: n(&self.delivered_bytes),
            drops: None,
        }
    }
}

/// What the threads of one flow share with the sampler.
#[derive(Default)]
struct FlowShared {
    /// Bytes the receiving application has read.
    received: AtomicU64,
    /// Emulator-clock ns + 1 when a finite transfer was fully acknowledged (0: not yet).
    completed: AtomicU64,
    /// Emulator-clock ns + 1 when the sender stopped sending (0: still sending), and the
    /// bytes the receiving application had read then: a flow that stops counts those in
    /// its goodput, as the simulator counts what was delivered by the stop.
    stopped: AtomicU64,
    received_at_stop: AtomicU64,
    /// Emulator-clock ns + 1 when the kernel sender called `connect()` (0: never).
    connecting: AtomicU64,
    /// User-space flows: the sender's latest state, and its counters at the end.
    snapshot: std::sync::Mutex<Option<FlowSample>>,
    retransmits: AtomicU64,
    timeouts: AtomicU64,
    probes: AtomicU64,
}

impl FlowShared {
    /// The sender stopped sending at `t` (its `stop`, the end, or a failure).
    fn note_stop(&self, t: Time) {
        self.received_at_stop.store(self.received.load(Ordering::Relaxed), Ordering::Relaxed);
        self.stopped.store(t.as_nanos() + 1, Ordering::Relaxed);
    }
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
    // A signal (where the caller installed cclab's handlers) ends the run early, through
    // its normal end.
    let steer = &mut |t, _: &mut Steering<'_>| {
        progress(t);
        if crate::forwarder::signalled() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    run_steered(cfg, transports, obs, steer).map(|(report, _)| report)
}

/// The senders' namespace's HyStart counters at the end of a run (`TcpExt` in
/// /proc/net/netstat, Linux `LINUX_MIB_TCPHYSTART*`, counted by `hystart_update` in
/// net/ipv4/tcp_cubic.c): how many slow starts each detector ended, and the sum of the
/// cwnds it ended them at, over every kernel CUBIC flow of the run (`cclab_tuner` keeps no
/// such counters). Zero where the kernel has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HystartCounters {
    pub train_detect: u64,
    pub train_cwnd: u64,
    pub delay_detect: u64,
    pub delay_cwnd: u64,
}

impl HystartCounters {
    /// Reads them from the text of /proc/net/netstat (a names line, then a values line).
    pub fn parse(netstat: &str) -> HystartCounters {
        let lines: Vec<&str> = netstat.lines().collect();
        let mut c = HystartCounters::default();
        for pair in lines.windows(2) {
            let (Some(names), Some(values)) =
                (pair[0].strip_prefix("TcpExt:"), pair[1].strip_prefix("TcpExt:"))
            else {
                continue;
            };
            for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
                let v = value.parse().unwrap_or(0);
                match name {
                    "TCPHystartTrainDetect" => c.train_detect = v,
                    "TCPHystartTrainCwnd" => c.train_cwnd = v,
                    "TCPHystartDelayDetect" => c.delay_detect = v,
                    "TCPHystartDelayCwnd" => c.delay_cwnd = v,
                    _ => {}
                }
            }
        }
        c
    }
}

/// What the kernel says of a run beyond its samples: the senders' HyStart counters and,
/// per flow on the kernel's TCP, its socket at the end ([`SocketFacts`]; `None` for
/// user-space flows and flows that never connected).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFacts {
    pub hystart: HystartCounters,
    pub flows: Vec<Option<SocketFacts>>,
    /// How closely the emulator kept to its schedule ([`EmulatorTiming`]).
    pub emulator: EmulatorTiming,
}

/// How late the emulator released the run's packets (both directions) against their
/// scheduled times. A packet held up by more than one packet's transmission time at the
/// bottleneck's mean rate can change the order in which the flows' packets meet there
/// and the spacing of a flow's ACKs, which is what slow-start exits and shares turn on
/// (docs/fidelity.md, "What ends RTT ratio 2's 40 ms slow start"). On an idle machine
/// the emulator is within tens of microseconds; on a virtual machine whose host takes
/// its CPUs away for milliseconds (steal time), a run can be late for hundreds of
/// packets, and then it is not a run of the scenario's network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmulatorTiming {
    /// Packets the emulator delivered (both directions).
    pub deliveries: u64,
    /// One packet's transmission time at the bottleneck's mean rate (1,500 bytes).
    pub late_limit: Duration,
    /// Deliveries later than `late_limit`.
    pub late: u64,
    /// The latest delivery's lateness.
    pub max_late: Duration,
    /// The deliveries' lateness at the median and the 99th percentile: what the emulator
    /// adds to a packet's time on its link as a rule, not only when disturbed.
    pub late_p50: Duration,
    pub late_p99: Duration,
    /// How often the emulator slept on its timer, and how late it woke at the median and
    /// the 99th percentile: about what a packet reaching it while it sleeps waits before
    /// it is read and takes its place at the bottleneck (the forwarder's `wakes`).
    pub wakes: u64,
    pub wake_p50: Duration,
    pub wake_p99: Duration,
    /// The processor the emulator ran on and kept from idling
    /// ([`crate::keep_awake::KeepAwake`]), if it did.
    pub cpu_kept_awake: Option<usize>,
    /// How much later than its start in the scenario the latest kernel flow called
    /// `connect()`, on the emulator's clock ([`SocketFacts::connect_us`]). Not the
    /// emulator's own lateness but its host's: a sender thread the machine holds up past
    /// the start line sends its first window late, which changes where it meets the other
    /// flows' at the bottleneck as a late packet does.
    pub start_late: Duration,
    /// How much processor time the machine's host took from each of this guest's
    /// processors while the run's flows ran, indexed by processor ([`crate::steal`]):
    /// where it lands says whose timing it disturbed (the processor kept awake runs the
    /// emulator, the other ones the hosts' threads). Zero on bare metal; empty where
    /// `/proc/stat` cannot be read.
    pub steal: Vec<Duration>,
    /// The same as it grew over the run: each processor's steal since the run's first
    /// sample at the sampling instants where it had grown, so that a reader can tell how
    /// much fell within a flow's slow start.
    pub steal_growth: Vec<(Time, Vec<Duration>)>,
}

/// The share of deliveries beyond which a real run counts as disturbed: more than one in
/// a hundred packets late by more than a packet time. Runs on an idle machine stay far
/// below it (0 to 0.2% on the AMD EPYC guest of 2026-11-29); the runs there whose kernel
/// left slow start unlike its usual runs were at 2 to 6%.
pub const DISTURBED_LATE_SHARE: f64 = 0.01;

impl EmulatorTiming {
    /// The timing of a finished emulator (a [`crate::forwarder::Forwarder`], as
    /// [`crate::harness::Harness::finish`] returns it): its two directions' delivery stats
    /// and its wake-ups, a delivery counted late beyond `late_limit` (one packet time at
    /// the bottleneck's mean rate). What only a testbed run knows (the flows' start, the
    /// host's steal) is left at zero.
    pub fn of(
        stats: [&DirectionStats; 2],
        wakes: &Lateness,
        late_limit: Duration,
    ) -> EmulatorTiming {
        let mut all = stats[0].lateness.clone();
        all.merge(&stats[1].lateness);
        EmulatorTiming {
            deliveries: all.count(),
            late_limit,
            late: all.beyond(late_limit),
            max_late: all.max(),
            late_p50: all.quantile(0.50),
            late_p99: all.quantile(0.99),
            wakes: wakes.count(),
            wake_p50: wakes.quantile(0.50),
            wake_p99: wakes.quantile(0.99),
            cpu_kept_awake: None,
            start_late: Duration::ZERO,
            steal: Vec::new(),
            steal_growth: Vec::new(),
        }
    }

    /// The share of deliveries later than `late_limit` (0 with none).
    pub fn late_share(&self) -> f64 {
        if self.deliveries == 0 {
            return 0.0;
        }
        self.late as f64 / self.deliveries as f64
    }

    /// Whether more than [`DISTURBED_LATE_SHARE`] of the deliveries were late.
    pub fn late_beyond_share(&self) -> bool {
        self.late_share() > DISTURBED_LATE_SHARE
    }

    /// Whether a kernel flow called `connect()` more than `late_limit` after its start:
    /// the one-packet-time rule of the deliveries, applied to the flows' first packet.
    pub fn started_late(&self) -> bool {
        self.start_late > self.late_limit
    }

    /// Whether the run was disturbed: too many packets late, or a flow started late; then
    /// it is not a run of the scenario's network.
    pub fn disturbed(&self) -> bool {
        self.late_beyond_share() || self.started_late()
    }

    /// Whether the median packet was released more than a packet time late: late as a
    /// rule, not now and then, so the bottleneck is faster than the emulator's own timing
    /// can follow whatever else the machine does (at 500 Gbit/s a packet time is 24 ns).
    /// Such a run is also [`disturbed`](Self::disturbed), since half of its packets are late.
    pub fn too_fast(&self) -> bool {
        self.late_p50 > self.late_limit
    }

    /// Whether this run is the better one to keep of two runs of one scenario: an
    /// undisturbed run first, then the one with the smaller share of late packets.
    pub fn less_disturbed_than(&self, other: &EmulatorTiming) -> bool {
        (self.disturbed(), self.late_share()) < (other.disturbed(), other.late_share())
    }

    /// "4.5% of packets late, a flow 3286 us late to start (the host took 1.12 s)": why
    /// the run was disturbed, and the processor time the machine's host took meanwhile,
    /// if any.
    pub fn disturbance(&self) -> String {
        let mut why = Vec::new();
        if self.late_beyond_share() {
            why.push(format!("{:.1}% of packets late", self.late_share() * 100.0));
        }
        if self.started_late() {
            why.push(format!("a flow {} us late to start", self.start_late.as_micros()));
        }
        let stolen: f64 = self.steal.iter().map(|d| d.as_secs_f64()).sum();
        if stolen > 0.0 {
            format!("{} (the host took {stolen:.2} s)", why.join(", "))
        } else {
            why.join(", ")
        }
    }
}

/// The latest a kernel flow called `connect()` after its start in `cfg` (zero without
/// kernel flows).
fn start_late(cfg: &SimConfig, flows: &[Option<SocketFacts>]) -> Duration {
    let late_us = cfg.flows.iter().zip(flows).filter_map(|(flow, facts)| {
        Some(facts.as_ref()?.connect_us.saturating_sub(flow.start.as_micros()))
    });
    Duration::from_micros(late_us.max().unwrap_or(0))
}

/// One kernel flow's socket at the end of its run: the algorithm it ran, read back with
/// `TCP_CONGESTION`, when it connected, and how much of the time it had data in flight (`tcpi_busy_time`)
/// the receiver's window or its own send buffer held it back (`tcpi_rwnd_limited`,
/// `tcpi_sndbuf_limited`: `tcp_get_info_chrono_stats`, net/ipv4/tcp.c). A flow limited
/// by either is shaped by the hosts' buffer settings, not by the path under test, so the
/// testbed would be measuring its own set-up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SocketFacts {
    pub cc: String,
    /// When the sender called `connect()`, in µs after the run's start: its `start` plus
    /// the time its host took to get there (flows told to start together do not).
    pub connect_us: u64,
    pub busy_us: u64,
    pub rwnd_limited_us: u64,
    pub sndbuf_limited_us: u64,
}

/// Runs the scenario on real kernel TCP like [`run_with`], letting `steer` act at every
/// sample instant: change a flow's route ([`Steering::set_route`]) or end the run there
/// (`Break`). A run ended early reports on the time it ran, and leaves nothing behind
/// either way. Also returns what the kernel says of the run ([`KernelFacts`]).
pub fn run_steered(
    cfg: &SimConfig,
    transports: &[Transport],
    obs: &mut dyn Observer,
    steer: &mut dyn FnMut(Time, &mut Steering<'_>) -> ControlFlow<()>,
) -> Result<(Report, KernelFacts), EmuError> {
    run_logged(cfg, transports, obs, steer, None)
}

/// [`run_steered`], with every packet event of the emulator written to `packet_log`
/// ([`crate::packet_log`]) if given.
pub fn run_logged(
    cfg: &SimConfig,
    transports: &[Transport],
    obs: &mut dyn Observer,
    steer: &mut dyn FnMut(Time, &mut Steering<'_>) -> ControlFlow<()>,
    packet_log: Option<&Path>,
) -> Result<(Report, KernelFacts), EmuError> {
    crate::netns::preflight()?;
    check(cfg, transports, &kernel_algorithms())?;
    let kernel: Vec<bool> = transports.iter().map(|t| *t == Transport::Kernel).collect();
    let _tunables = RunTunables::apply(&cfg.flows, &kernel)?;
    let (up, down) = path(cfg);
    // The routes go in before the emulator's clock starts, and the run's clock is the
    // emulator's: a trace's time 0 is the scenario's (the routes' `ip` took 3 to 4 ms,
    // which put the trace that far ahead of the flows). The clock starts SETUP_LEAD
    // later, once the hosts' threads and sockets are made.
    let routes = |net: &crate::EmuNet| add_flow_routes(net, cfg);
    let h = Harness::start_after(&up, &down, cfg.seed, true, packet_log, routes, SETUP_LEAD)?;
    let clock = Clock { origin: h.origin_ns() };
    let mut threads = Threads::new(cfg);
    threads.start_receivers(&h, cfg, transports, clock)?;
    let sockets = threads.start_senders(&h, cfg, transports, clock);
    let mut sampler = Sampler::new(cfg, transports, sockets);
    let mut steering =
        Steering { ns: h.net().a.name().to_string(), routes: flow_routes(cfg), flows: &cfg.flows };
    let sampled = sampler.run(&h, &threads.shared, clock, obs, &mut |t| steer(t, &mut steering));
    // Interrupted, nothing of the run is kept: no data in flight to wait for.
    threads.wind_down(sampled.is_ok() && !crate::forwarder::signalled(), sampler.end, clock);
    let netstat = h.spawn(Side::A, || std::fs::read_to_string("/proc/thread-self/net/netstat"));
    let hystart =
        HystartCounters::parse(&netstat.join().ok().and_then(Result::ok).unwrap_or_default());
    let fwd = h.finish()?;
    sampled?;
    let stats = [&fwd.dirs[crate::UPLINK].stats, &fwd.dirs[crate::DOWNLINK].stats];
    let report = sampler.report(cfg, transports, &threads, stats);
    let mut emulator =
        EmulatorTiming::of(stats, fwd.wakes(), cfg.bottleneck.rate.mean_packet_time());
    emulator.cpu_kept_awake = fwd.cpu_kept_awake();
    let flows = sampler.socket_facts(&threads.shared);
    emulator.start_late = start_late(cfg, &flows);
    emulator.steal = sampler.steal.total();
    emulator.steal_growth = sampler.steal.growth().to_vec();
    Ok((report, KernelFacts { hystart, flows, emulator }))
}

/// What a caller may change on a running testbed: each flow's route metrics and the
/// parameters of cclab's BPF algorithms.
pub struct Steering<'a> {
    /// The senders' namespace, where the flows' routes are.
    ns: String,
    /// Each flow's `rto_min` (ms) and `initcwnd` as its route has them now.
    routes: Vec<(u64, u32)>,
    flows: &'a [FlowConfig],
}

impl Steering<'_> {
    /// Sets a running flow's parameter: `rto_min` (ms) or `initcwnd` on its route, or a
    /// parameter of its BPF algorithm (which every flow of that algorithm shares).
    pub fn set_param(&mut self, flow: usize, name: &str, value: f64) -> Result<(), EmuError> {
        let whole = |unit: &str| {
            (value.fract() == 0.0 && value >= 0.0 && value <= u32::MAX as f64)
                .then_some(value as u32)
                .ok_or_else(|| {
                    EmuError::Config(format!(
                        "flows[{flow}].{name}: {value} is not a whole number of {unit}"
                    ))
                })
        };
        match name {
            "rto_min" => self.set_route(flow, Some(u64::from(whole(RTO_MIN_MS.unit)?)), None),
            "initcwnd" => self.set_route(flow, None, Some(whole(INITCWND.unit)?)),
            _ => {
                let f = self.flows.get(flow).ok_or_else(|| {
                    EmuError::Config(format!("flow {flow}: the run has {} flows", self.flows.len()))
                })?;
                set_live(flow, f, name, value)
            }
        }
    }

    /// Sets flow `flow`'s `rto_min` and/or `initcwnd` on its route (`ip route change`),
    /// as TCPTuner did. Linux reads `rto_min` from the route whenever it computes an RTO
    /// (`tcp_rto_min`, include/net/tcp.h), so a running connection picks it up once its
    /// cached route is checked again; `initcwnd` is read only when a window starts
    /// (`tcp_init_cwnd`: at the connection's start and after idle).
    pub fn set_route(
        &mut self,
        flow: usize,
        rto_min_ms: Option<u64>,
        initcwnd: Option<u32>,
    ) -> Result<(), EmuError> {
        let flows = self.routes.len();
        let route = self
            .routes
            .get_mut(flow)
            .ok_or_else(|| EmuError::Config(format!("flow {flow}: the run has {flows} flows")))?;
        let limits = [(rto_min_ms, RTO_MIN_MS), (initcwnd.map(u64::from), INITCWND)];
        for (value, limit) in limits {
            if let Some(v) = value.filter(|v| !limit.contains(*v)) {
                return Err(EmuError::Config(format!(
                    "flows[{flow}].{}: {v} is out of range; allowed: {}",
                    limit.name,
                    limit.allowed()
                )));
            }
        }
        let new = (rto_min_ms.unwrap_or(route.0), initcwnd.unwrap_or(route.1));
        ip_batch(&self.ns, &route_command("change", flow, new))?;
        *route = new;
        Ok(())
    }
}

/// Each flow's `rto_min` in whole milliseconds (rounded up, at least 1) and `initcwnd`.
fn flow_routes(cfg: &SimConfig) -> Vec<(u64, u32)> {
    cfg.flows
        .iter()
        .map(|f| (f.tcp.rto_min.as_nanos().div_ceil(1_000_000).max(1), f.tcp.init_cwnd))
        .collect()
}

/// The `ip route` line (for `ip -batch`) of flow `i` with `rto_min` ms and `initcwnd`.
fn route_command(verb: &str, i: usize, (rto_min_ms, initcwnd): (u64, u32)) -> String {
    format!(
        "route {verb} {}/32 dev {} rto_min {rto_min_ms}ms initcwnd {initcwnd}\n",
        flow_addr(i),
        crate::TUN_NAME
    )
}

/// One address and route per flow: `rto_min` and `initcwnd` as `ip route` sets them.
fn add_flow_routes(net: &crate::EmuNet, cfg: &SimConfig) -> Result<(), EmuError> {
    let mut b_cmds = String::new();
    let mut a_cmds = String::new();
    for (i, route) in flow_routes(cfg).into_iter().enumerate() {
        b_cmds += &format!("addr add {}/32 dev {}\n", flow_addr(i), crate::TUN_NAME);
        a_cmds += &route_command("add", i, route);
    }
    ip_batch(net.b.name(), &b_cmds)?;
    ip_batch(net.a.name(), &a_cmds)
}

/// How long after the emulator starts forwarding its clock, and the run's, reads zero:
/// time for the receivers to listen and the senders to make their sockets, so that a flow
/// told to start at 0 connects at the trace's time 0. Without it the flows connected
/// 0.6 to 1.5 ms into the trace (2026-12-02), where the simulator's start at 0, and on
/// the Verizon trace that decided which of two flows left slow start high
/// (docs/fidelity.md, "Which flow the first overflow takes, and where flows start").
/// A host slower than this starts its flows late, which `connect_us` shows.
const SETUP_LEAD: Duration = Duration::from_millis(20);

/// The run's clock: CLOCK_MONOTONIC since the emulator's clock started, shared by every
/// thread. It reads zero until then ([`SETUP_LEAD`]).
#[derive(Clone, Copy)]
struct Clock {
    origin: u64,
}

impl Clock {
    fn now(self) -> Time {
        self.ahead(Duration::ZERO)
    }

    /// The run's clock `lead` from now (zero while that is before the run starts).
    fn ahead(self, lead: Duration) -> Time {
        Time((monotonic_ns() + lead.as_nanos()).saturating_sub(self.origin))
    }

    /// How long until `t` on the run's clock, the time before the run starts included;
    /// None once `t` has come.
    fn until(self, t: Time) -> Option<std::time::Duration> {
        let left = (self.origin + t.as_nanos()).saturating_sub(monotonic_ns());
        (left > 0).then(|| std::time::Duration::from_nanos(left))
    }
}

/// The receiving, sending and cross-traffic threads of a run. Dropping it tells them to
/// stop.
struct Threads {
    stop: Arc<AtomicBool>,
    shared: Vec<Arc<FlowShared>>,
    cross: Arc<Vec<CrossCounts>>,
    /// The run's end on its clock, in ns: the planned end, or the instant the run was
    /// stopped at. The cross sources send until then, and the sinks count what left the
    /// bottleneck by then.
    cross_end: Arc<AtomicU64>,
    /// The longest one-way delay after a cross source's bottleneck.
    cross_delay: Duration,
    handles: Vec<std::thread::JoinHandle<()>>,
}

/// How late after its release from the delay line a cross-traffic packet may reach its
/// sink and still count as having left the bottleneck by the run's end: the host's time
/// to write it into the receiving side and wake the sink (tens of microseconds; a few
/// milliseconds on a loaded host). A packet that left the bottleneck up to this long
/// after the end may be counted too.
const SINK_SLACK: Duration = Duration::from_millis(2);

impl Drop for Threads {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Threads {
    fn new(cfg: &SimConfig) -> Threads {
        let cross_delay = cfg.cross.iter().map(|c| delay_after_bottleneck(cfg, c.direction)).max();
        Threads {
            stop: Arc::new(AtomicBool::new(false)),
            shared: (0..cfg.flows.len()).map(|_| Arc::new(FlowShared::default())).collect(),
            cross: Arc::new((0..cfg.cross.len()).map(|_| CrossCounts::default()).collect()),
            cross_end: Arc::new(AtomicU64::new(cfg.duration.as_nanos())),
            cross_delay: cross_delay.unwrap_or(Duration::ZERO),
            handles: Vec::new(),
        }
    }

    /// Starts the receivers and the cross-traffic sink in B, and waits until all listen
    /// (so that no sender starts before its receiver).
    fn start_receivers(
        &mut self,
        h: &Harness,
        cfg: &SimConfig,
        transports: &[Transport],
        clock: Clock,
    ) -> Result<(), EmuError> {
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        for (i, sh) in self.shared.iter().enumerate() {
            let (sh, stop, ready) = (sh.clone(), self.stop.clone(), ready_tx.clone());
            self.handles.push(match transports[i] {
                Transport::Kernel => {
                    h.spawn(Side::B, move || receive(flow_addr(i), sh, stop, ready))
                }
                Transport::Udp => {
                    let f = cfg.flows[i].clone();
                    h.spawn(Side::B, move || receive_udp(i, f, clock.origin, sh, stop, ready))
                }
            });
        }
        let reverse = cfg.cross.iter().any(|c| c.direction == Direction::Reverse);
        for (side, addr, dir) in [
            (Side::B, crate::ADDR_B, Direction::Forward),
            (Side::A, crate::ADDR_A, Direction::Reverse),
        ] {
            if side == Side::A && !reverse {
                continue;
            }
            let (stop, ready, counts) = (self.stop.clone(), ready_tx.clone(), self.cross.clone());
            // The sink's own sources: those of the other direction bind their ports in
            // the other namespace, where a number may repeat.
            let sources: Vec<usize> =
                (0..cfg.cross.len()).filter(|&i| cfg.cross[i].direction == dir).collect();
            let until = (clock, delay_after_bottleneck(cfg, dir), self.cross_end.clone());
            self.handles.push(
                h.spawn(side, move || cross_sink(addr, (sources, counts), until, stop, ready)),
            );
        }
        for _ in 0..cfg.flows.len() + 1 + usize::from(reverse) {
            match ready_rx.recv_timeout(std::time::Duration::from_secs(5)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(EmuError::Setup(format!("testbed receiver: {e}"))),
                Err(_) => return Err(EmuError::Setup("testbed receivers did not start".into())),
            }
        }
        Ok(())
    }

    /// Starts the senders and the cross-traffic sources in A. Each kernel sender hands
    /// its connected socket (or why it has none) to the returned channel.
    fn start_senders(
        &mut self,
        h: &Harness,
        cfg: &SimConfig,
        transports: &[Transport],
        clock: Clock,
    ) -> mpsc::Receiver<(usize, Result<TcpStream, String>)> {
        let end = Time::ZERO + cfg.duration;
        let (sock_tx, sock_rx) = mpsc::channel();
        let line = Arc::new(StartLine::new(
            transports.iter().filter(|t| **t == Transport::Kernel).count(),
        ));
        for (i, f) in cfg.flows.iter().enumerate() {
            let (f, sh, stop, tx) =
                (f.clone(), self.shared[i].clone(), self.stop.clone(), sock_tx.clone());
            self.handles.push(match transports[i] {
                Transport::Kernel => {
                    let line = line.clone();
                    let flow = SenderFlow { i, f, end, sh, stop, tx, line };
                    h.spawn(Side::A, move || send(flow, clock))
                }
                Transport::Udp => {
                    let interval = Duration::from_millis(1).min(cfg.sample_interval);
                    h.spawn(Side::A, move || send_udp(i, f, end, clock, interval, sh, stop))
                }
            });
        }
        for (i, c) in cfg.cross.iter().enumerate() {
            let src = CrossSource::new(c.clone(), Rng::stream(cfg.seed, stream::CROSS, i as u64));
            let stop = self.stop.clone();
            let (side, to) = match c.direction {
                Direction::Forward => (Side::A, crate::ADDR_B),
                Direction::Reverse => (Side::B, crate::ADDR_A),
            };
            let (counts, end) = (self.cross.clone(), self.cross_end.clone());
            self.handles
                .push(h.spawn(side, move || cross_source(src, to, (i, counts), end, clock, stop)));
        }
        sock_rx
    }

    /// Gives data in flight a moment to arrive when the run went well (senders stop at
    /// the end by themselves), and the cross traffic that left its bottleneck by `end`
    /// (the planned end, or the instant the run was stopped at) time to cross the delay
    /// after it; then stops and joins every thread.
    fn wind_down(&mut self, drain: bool, end: Time, clock: Clock) {
        self.cross_end.fetch_min(end.as_nanos(), Ordering::Relaxed);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while drain
            && std::time::Instant::now() < until
            && self.shared.iter().any(|s| s.stopped.load(Ordering::Relaxed) == 0)
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let counted_until = end + self.cross_delay + SINK_SLACK;
        // In steps, so that an interrupt (the delay may be long) is not held up.
        while drain && !self.cross.is_empty() && !crate::forwarder::signalled() {
            let Some(left) = clock.until(counted_until) else { break };
            std::thread::sleep(left.min(std::time::Duration::from_millis(5)));
        }
        self.stop.store(true, Ordering::Relaxed);
        for t in self.handles.drain(..) {
            let _ = t.join();
        }
    }
}

/// Samples the run every `sample_interval` into the simulator's output types, and keeps
/// what the report needs.
struct Sampler {
    interval: Duration,
    end: Time,
    transports: Vec<Transport>,
    sockets: mpsc::Receiver<(usize, Result<TcpStream, String>)>,
    socks: Vec<Option<TcpStream>>,
    /// Smoothed RTT samples of each flow, microseconds (its RTT percentiles).
    srtt_us: Vec<Histogram>,
    /// Each kernel flow's last `TCP_INFO` (its retransmits and timeouts at the end).
    last_info: Vec<Option<TcpInfo>>,
    /// The queues of [uplink, downlink]; the downlink's is sampled and reported only in
    /// runs with a reverse bottleneck.
    queues: [QueueMeter; 2],
    reverse: bool,
    /// Bytes each receiver had read by the end.
    received: Vec<u64>,
    /// The host's steal, read at the sampling instants.
    steal: StealTimeline,
}

impl Sampler {
    fn new(
        cfg: &SimConfig,
        transports: &[Transport],
        sockets: mpsc::Receiver<(usize, Result<TcpStream, String>)>,
    ) -> Sampler {
        let n = cfg.flows.len();
        Sampler {
            interval: cfg.sample_interval,
            end: Time::ZERO + cfg.duration,
            transports: transports.to_vec(),
            sockets,
            socks: (0..n).map(|_| None).collect(),
            srtt_us: vec![Histogram::default(); n],
            last_info: vec![None; n],
            queues: Default::default(),
            reverse: cfg.has_reverse_link(),
            received: vec![0; n],
            steal: StealTimeline::default(),
        }
    }

    /// Samples until the end of the run (or until a flow fails to start).
    fn run(
        &mut self,
        h: &Harness,
        shared: &[Arc<FlowShared>],
        clock: Clock,
        obs: &mut dyn Observer,
        steer: &mut dyn FnMut(Time) -> ControlFlow<()>,
    ) -> Result<(), EmuError> {
        let mut tick = Time::ZERO;
        loop {
            // The sample of time 0 (before any flow has connected) is taken at once, not at
            // the run's start, where this thread would take a processor from the senders
            // that start then.
            if let Some(left) = clock.until(tick).filter(|_| tick > Time::ZERO) {
                std::thread::sleep(left);
                continue;
            }
            while let Ok((i, s)) = self.sockets.try_recv() {
                self.socks[i] = Some(s.map_err(|e| EmuError::Setup(format!("flows[{i}]: {e}")))?);
            }
            // Samples carry their nominal instant (the simulator's grid); this ordinary
            // thread reads them within a few milliseconds of it.
            let t = tick.min(self.end);
            self.sample_flows(t, shared, obs);
            let g = h.gauges();
            obs.queue_sample(&self.queues[crate::UPLINK].sample(&g[crate::UPLINK], t));
            if self.reverse {
                let rev = &mut self.queues[crate::DOWNLINK];
                obs.reverse_queue_sample(&rev.sample(&g[crate::DOWNLINK], t));
            }
            if steer(t).is_break() {
                self.end = t;
            }
            self.steal.read(t, t >= self.end);
            if t >= self.end {
                for (q, g) in self.queues.iter_mut().zip(g.iter()) {
                    q.close(g);
                }
                for (r, sh) in self.received.iter_mut().zip(shared) {
                    *r = sh.received.load(Ordering::Relaxed);
                }
                return Ok(());
            }
            tick = (tick + self.interval).min(self.end);
        }
    }

    /// Every unfinished flow's state at `t`: kernel flows from `TCP_INFO`, user-space
    /// flows from their sender's latest snapshot.
    fn sample_flows(&mut self, t: Time, shared: &[Arc<FlowShared>], obs: &mut dyn Observer) {
        for (i, sh) in shared.iter().enumerate() {
            if sh.completed.load(Ordering::Relaxed) != 0 {
                continue;
            }
            let received = sh.received.load(Ordering::Relaxed);
            let sample = match self.transports[i] {
                Transport::Udp => {
                    let Some(mut snap) = sh.snapshot.lock().map(|g| g.clone()).unwrap_or(None)
                    else {
                        continue;
                    };
                    snap.time = t;
                    snap.delivered_bytes = received;
                    snap
                }
                Transport::Kernel => {
                    let Some(s) = &self.socks[i] else { continue };
                    let Ok(info) = tcp_info(s.as_raw_fd()) else { continue };
                    self.last_info[i] = Some(info);
                    FlowSample {
                        time: t,
                        flow: i,
                        cwnd_pkts: info.snd_cwnd,
                        ssthresh_pkts: info.snd_ssthresh,
                        srtt: Duration::from_micros(info.rtt_us as u64),
                        inflight_pkts: info.unacked,
                        delivered_bytes: received,
                        retransmits: info.total_retrans as u64,
                        cc: Vec::new(),
                    }
                }
            };
            if sample.srtt.as_nanos() > 0 {
                self.srtt_us[i].record(sample.srtt.as_nanos() / 1000);
            }
            obs.flow_sample(&sample);
        }
    }

    /// Each kernel flow's [`SocketFacts`], from its last `TCP_INFO` (the busy and limited
    /// times are running totals) and its socket.
    fn socket_facts(&self, shared: &[Arc<FlowShared>]) -> Vec<Option<SocketFacts>> {
        self.socks
            .iter()
            .zip(&self.last_info)
            .zip(shared)
            .map(|((sock, info), sh)| {
                let (sock, info) = (sock.as_ref()?, info.as_ref()?);
                Some(SocketFacts {
                    cc: cclab_kernel::socket::congestion(sock.as_raw_fd()).ok()?,
                    connect_us: sh.connecting.load(Ordering::Relaxed).saturating_sub(1) / 1000,
                    busy_us: info.busy_time,
                    rwnd_limited_us: info.rwnd_limited,
                    sndbuf_limited_us: info.sndbuf_limited,
                })
            })
            .collect()
    }

    /// The report of the run, with the simulator's formulas (`cclab_sim::output`).
    fn report(
        &self,
        cfg: &SimConfig,
        transports: &[Transport],
        threads: &Threads,
        stats: [&DirectionStats; 2],
    ) -> Report {
        let shared = &threads.shared;
        let flows = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let completed = match shared[i].completed.load(Ordering::Relaxed) {
                    0 => None,
                    v => Some(Time(v - 1)),
                };
                let info = self.last_info[i].unwrap_or_default();
                let (retransmits, timeouts, probes) = match transports[i] {
                    Transport::Kernel => (info.total_retrans as u64, info.total_rto as u64, None),
                    Transport::Udp => (
                        shared[i].retransmits.load(Ordering::Relaxed),
                        shared[i].timeouts.load(Ordering::Relaxed),
                        Some(shared[i].probes.load(Ordering::Relaxed)),
                    ),
                };
                let delivered = self.received[i];
                let drops = stats[crate::UPLINK].drops_to(u32::from(flow_addr(i)));
                // Stopped before it completed and before the end: what it had by the stop.
                let stopped = f.stop.filter(|&s| s < self.end && completed.is_none_or(|c| c > s));
                let counted = match stopped {
                    Some(_) => shared[i].received_at_stop.load(Ordering::Relaxed),
                    None => delivered,
                };
                FlowReport {
                    flow: i,
                    delivered_bytes: delivered,
                    goodput_bps: FlowReport::goodput_bps(
                        counted,
                        f.start,
                        [f.stop, completed],
                        self.end,
                    ),
                    retransmits,
                    timeouts,
                    probes,
                    drops,
                    rtt: RttSummary::of(&self.srtt_us[i]),
                    completed_at: completed,
                }
            })
            .collect();
        let [up, down] = &self.queues;
        let reverse_rate = cfg.bottleneck.reverse_link_rate();
        // The run's length: the planned one, or up to where it was stopped.
        let duration = Duration(self.end.as_nanos());
        Report {
            duration,
            link: up.report(&cfg.bottleneck.rate, duration, self.end, stats[crate::UPLINK]),
            reverse_link: self
                .reverse
                .then(|| down.report(&reverse_rate, duration, self.end, stats[crate::DOWNLINK])),
            flows,
            cross: threads.cross.iter().enumerate().map(|(i, c)| c.report(i)).collect(),
            events: 0,
        }
    }
}

/// One direction's queue, read from the forwarder's gauges at each sample, and what it
/// delivered by the end.
#[derive(Default)]
struct QueueMeter {
    queue_sum: f64,
    queue_n: u64,
    /// Packets and bytes that left the link by the end, as the simulator counts a
    /// bottleneck's deliveries: those still on the delay line then are counted too (what
    /// the receiving side had by then left out the last one-way delay's worth, a
    /// utilisation lower by the delay over the run's length).
    delivered: (u64, u64),
}

impl QueueMeter {
    fn sample(&mut self, g: &DirectionGauge, t: Time) -> QueueSample {
        let q = g.queue_packets.load(Ordering::Relaxed);
        self.queue_sum += q as f64;
        self.queue_n += 1;
        QueueSample {
            time: t,
            packets: q,
            bytes: g.queue_bytes.load(Ordering::Relaxed),
            drops: g.drops.load(Ordering::Relaxed),
        }
    }

    fn close(&mut self, g: &DirectionGauge) {
        self.delivered =
            (g.departed_packets.load(Ordering::Relaxed), g.departed_bytes.load(Ordering::Relaxed));
    }

    /// The link's totals with the simulator's formulas (`cclab_sim::output`); the mean
    /// queue is over the samples.
    fn report(
        &self,
        rate: &LinkRate,
        duration: Duration,
        end: Time,
        stats: &DirectionStats,
    ) -> LinkReport {
        let capacity_bytes = LinkSchedule::capacity_bytes(rate, end);
        let (delivered_packets, delivered_bytes) = self.delivered;
        LinkReport {
            capacity_bps: LinkReport::capacity_bps(rate, duration, capacity_bytes),
            utilization: LinkReport::utilization(delivered_bytes, capacity_bytes),
            delivered_packets,
            delivered_bytes,
            queue_drops: stats.queue_drops,
            random_losses: stats.random_losses,
            mean_queue_packets: if self.queue_n > 0 {
                self.queue_sum / self.queue_n as f64
            } else {
                0.0
            },
        }
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

/// How far ahead of the last kernel sender's arrival at the [`StartLine`] the senders go:
/// time for the others, yielding in a loop, to see it.
const START_LEAD: Duration = Duration::from_micros(100);

/// Where the kernel senders line up before they start. Each makes its socket and its
/// buffer first, then waits here for the others; the last to arrive sets one instant,
/// [`START_LEAD`] ahead or the run's start if that is later (as a rule, [`SETUP_LEAD`]),
/// and every sender connects at that instant or at its own later `start`. Without it the senders connected as their threads happened to begin, so that
/// of two flows told to start together flow 0 was usually first (in 29 of 41 one-second
/// runs of `cubic-vs-reno.toml` on 2026-12-02, by up to 1 ms), and the flow whose first
/// window reached the bottleneck later took the whole first overflow (docs/fidelity.md,
/// "Which flow the first overflow takes, and where flows start"). The waiting threads
/// yield the processor in a loop rather than sleep, since a woken thread can take longer
/// than the lead to run.
struct StartLine {
    /// Senders arrived so far.
    arrived: AtomicU64,
    /// The instant they go, in ns on the run's clock plus 1 (0: not every sender is here).
    go: AtomicU64,
    senders: u64,
}

impl StartLine {
    fn new(senders: usize) -> StartLine {
        StartLine { arrived: AtomicU64::new(0), go: AtomicU64::new(0), senders: senders as u64 }
    }

    /// Waits until every sender has arrived and returns the instant they go (the run's
    /// start if every sender came at least [`START_LEAD`] before it); None if the run is
    /// stopped first.
    fn arrive(&self, clock: Clock, stop: &AtomicBool) -> Option<Time> {
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 >= self.senders {
            self.go.store(clock.ahead(START_LEAD).as_nanos() + 1, Ordering::Release);
        }
        loop {
            match self.go.load(Ordering::Acquire) {
                0 if stop.load(Ordering::Relaxed) => return None,
                0 => std::thread::yield_now(),
                go => return Some(Time(go - 1)),
            }
        }
    }
}

/// What one kernel sender's thread is given.
struct SenderFlow {
    i: usize,
    f: cclab_sim::FlowConfig,
    end: Time,
    sh: Arc<FlowShared>,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<(usize, Result<TcpStream, String>)>,
    line: Arc<StartLine>,
}

/// Sender of one flow: starts at `f.start` (flows told to start together connect together,
/// see [`StartLine`]), sends until its size, its stop time or the end of the run; its
/// socket uses the kernel's algorithm `cc`.
fn send(flow: SenderFlow, clock: Clock) {
    let SenderFlow { i, f, end, sh, stop, tx, line } = flow;
    let now = || clock.now();
    let mark = |a: &AtomicU64, t: Time| a.store(t.as_nanos() + 1, Ordering::Relaxed);
    // Everything but the handshake is done before the line, so that the moment a flow
    // starts is spent on `connect` alone.
    let socket = cclab_kernel::socket::UnconnectedSocket::with_congestion(kernel_name(&f.cc));
    let buf = vec![0x5au8; 1 << 16];
    let Some(go) = line.arrive(clock, &stop) else {
        return;
    };
    if !wait_for_start(f.start.max(go), clock, &stop) {
        return;
    }
    let last = f.stop.unwrap_or(end).min(end);
    if now() >= last {
        sh.note_stop(now());
        return;
    }
    let addr = std::net::SocketAddrV4::new(flow_addr(i), PORT);
    mark(&sh.connecting, now());
    let s = match socket.and_then(|socket| socket.connect_unless(addr, &stop)) {
        Ok(s) => s,
        // The run ended (or was interrupted) before the handshake did: the flow never
        // started, which is no error of its own.
        Err(_) if stop.load(Ordering::Relaxed) => return,
        Err(e) => {
            let _ = tx.send((i, Err(e.to_string())));
            return;
        }
    };
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
    sh.note_stop(now());
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
    // The algorithm was checked before the run (`check`).
    let recovery = f
        .algorithm()
        .map_or(cclab_cc::LossRecovery::Sack, |ca| cclab_sim::tcp::recovery_style(&f.tcp, &ca));
    let mut r =
        cclab_sim::tcp::TcpReceiver::new(i as u32, f.tcp.mss, f.bytes, f.tcp.delayed_ack, recovery);
    let _ = crate::udp::serve_receiver(&s, &mut r, origin, &stop, &sh.received);
}

/// Sending end of a user-space flow: the simulator's TCP sender with cclab's algorithm.
fn send_udp(
    i: usize,
    f: cclab_sim::FlowConfig,
    end: Time,
    clock: Clock,
    interval: Duration,
    sh: Arc<FlowShared>,
    stop: Arc<AtomicBool>,
) {
    let now = || clock.now();
    let mark = |a: &AtomicU64, t: Time| a.store(t.as_nanos() + 1, Ordering::Relaxed);
    if !wait_for_start(f.start, clock, &stop) {
        return;
    }
    let last = f.stop.unwrap_or(end).min(end);
    // Checked by `check` before the run.
    let (Ok(ca), Ok(sock)) =
        (f.algorithm(), crate::udp::sender_socket((flow_addr(i), crate::udp::PORT).into()))
    else {
        sh.note_stop(now());
        return;
    };
    let mut snd = cclab_sim::tcp::TcpSender::new(i as u32, ca, f.tcp.clone(), f.bytes);
    snd.start(now());
    let origin = clock.origin;
    crate::udp::drive_sender(&sock, &mut snd, origin, last, interval, &stop, &mut |snd, t| {
        if let Ok(mut g) = sh.snapshot.lock() {
            *g = Some(crate::udp::sample_of(snd, i, t));
        }
    });
    sh.note_stop(now());
    sh.retransmits.store(snd.stats().retransmits, Ordering::Relaxed);
    sh.timeouts.store(snd.stats().timeouts, Ordering::Relaxed);
    sh.probes.store(snd.stats().probes, Ordering::Relaxed);
    if let Some(t) = snd.stats().completed_at {
        mark(&sh.completed, t);
    }
}

/// UDP background source through the bottleneck of its direction (to the sink at `to`),
/// timed by the simulator's own generator (`cclab_sim::cross`), until the run's `end`
/// (in ns on its clock; earlier once the run is stopped).
/// `(i, counts)`: the source's index and where its counts go.
fn cross_source(
    mut src: CrossSource,
    to: Ipv4Addr,
    (i, counts): (usize, Arc<Vec<CrossCounts>>),
    end: Arc<AtomicU64>,
    clock: Clock,
    stop: Arc<AtomicBool>,
) {
    let Ok(s) = UdpSocket::bind("0.0.0.0:0") else {
        return;
    };
    if s.connect((to, CROSS_PORT)).is_err() {
        return;
    }
    let mine = &counts[i];
    mine.port.store(s.local_addr().map_or(0, |a| u32::from(a.port())), Ordering::Release);
    // The IPv4 and UDP headers are 28 of the packet's bytes; a 28-byte packet is an empty
    // datagram, which UDP carries.
    let payload = vec![0u8; (src.config().packet_bytes as usize).saturating_sub(28)];
    let mut next = src.config().start;
    while next.as_nanos() < end.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
        if let Some(left) = clock.until(next) {
            std::thread::sleep(left.min(std::time::Duration::from_millis(5)));
            continue;
        }
        next = match src.step(next) {
            CrossStep::Send { next } => {
                if s.send(&payload).is_ok() {
                    mine.sent_packets.fetch_add(1, Ordering::Relaxed);
                    mine.sent_bytes.fetch_add(payload.len() as u64 + 28, Ordering::Relaxed);
                }
                next
            }
            CrossStep::Wait(at) => at,
            CrossStep::Stop => return,
        };
    }
}

/// Swallows the cross traffic sent to `addr` (B's forward sources, A's reverse ones),
/// counting each packet against its source among `sources` (indices into `counts`),
/// found by its port. `(clock, delay, end)`: a packet counts as delivered, as the
/// simulator counts one that left the bottleneck by the run's end, if it arrives by the
/// `end` (in ns on the run's clock) plus the `delay` after its bottleneck and
/// [`SINK_SLACK`].
fn cross_sink(
    addr: Ipv4Addr,
    (sources, counts): (Vec<usize>, Arc<Vec<CrossCounts>>),
    (clock, delay, end): (Clock, Duration, Arc<AtomicU64>),
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<(), String>>,
) {
    let s = match UdpSocket::bind((addr, CROSS_PORT)) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(format!("bind cross sink: {e}")));
            return;
        }
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(50)));
    let _ = ready.send(Ok(()));
    let mut buf = [0u8; 9000];
    let mut source_of = std::collections::HashMap::<u16, usize>::new();
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = s.recv_from(&mut buf) else { continue };
        let cut_off = end.load(Ordering::Relaxed).saturating_add((delay + SINK_SLACK).as_nanos());
        if clock.now().as_nanos() > cut_off {
            continue;
        }
        let port = from.port();
        let found = source_of.get(&port).copied().or_else(|| {
            let i = *sources
                .iter()
                .find(|&&i| counts[i].port.load(Ordering::Acquire) == u32::from(port))?;
            source_of.insert(port, i);
            Some(i)
        });
        if let Some(i) = found {
            counts[i].delivered_packets.fetch_add(1, Ordering::Relaxed);
            counts[i].delivered_bytes.fetch_add(n as u64 + 28, Ordering::Relaxed);
        }
    }
}

/// Waits until `start` on the run's clock (the time before the run starts included),
/// checking `stop` as it goes: it sleeps in steps of 200 µs until the last
/// [`START_SPIN`], then yields the processor in a loop, since a sleep can end a
/// scheduler's tick late. False if the run was stopped first (a flow thread then returns
/// without starting).
fn wait_for_start(start: Time, clock: Clock, stop: &AtomicBool) -> bool {
    loop {
        let Some(left) = clock.until(start) else {
            return true;
        };
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        if left > std::time::Duration::from_nanos(START_SPIN.as_nanos()) {
            std::thread::sleep(std::time::Duration::from_micros(200));
        } else {
            std::thread::yield_now();
        }
    }
}

/// The last part of a wait for a start that is spent yielding instead of sleeping.
const START_SPIN: Duration = Duration::from_micros(300);

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_sim::{Buffer, FlowConfig, LinkConfig, LinkRate, LossModel, Qdisc, TcpConfig};
    use cclab_units::Rate;

    #[test]
    fn a_run_with_more_than_one_packet_in_a_hundred_late_is_disturbed() {
        let stats = |late_us: &[u64]| {
            let mut d = DirectionStats::default();
            late_us.iter().for_each(|&us| d.lateness.record(Duration::from_micros(us)));
            d
        };
        // 300 us: a packet time at 40 Mbit/s. Uplink: 99 on time; downlink: 1 late.
        let (up, down) = (stats(&[10; 99]), stats(&[301]));
        let no_sleep = Lateness::default();
        let t = EmulatorTiming::of([&up, &down], &no_sleep, Duration::from_micros(300));
        assert_eq!((t.deliveries, t.late, t.max_late), (100, 1, Duration::from_micros(301)));
        assert!(!t.disturbed(), "1% late is the limit, not beyond it");
        let down = stats(&[301, 2_000]);
        let t = EmulatorTiming::of([&up, &down], &no_sleep, Duration::from_micros(300));
        assert_eq!((t.deliveries, t.late), (101, 2));
        assert!(t.disturbed());
        assert_eq!(EmulatorTiming::default().late_share(), 0.0);
    }

    #[test]
    fn a_run_whose_kernel_flow_connected_more_than_a_packet_time_after_its_start_is_disturbed() {
        let us = Duration::from_micros;
        let mut cfg = config(&[("cubic", 40), ("reno", 40), ("cubic", 40)]);
        cfg.flows[1].start = Time::from_secs_f64(10.0);
        let facts = |connect_us: u64| SocketFacts { connect_us, ..SocketFacts::default() };
        // The second flow on time at 10 s, the third user-space (no socket facts).
        let flows = [Some(facts(250)), Some(facts(10_000_120)), None];
        assert_eq!(start_late(&cfg, &flows), us(250), "the latest flow, against its own start");
        let on_time =
            EmulatorTiming { late_limit: us(300), start_late: us(250), ..Default::default() };
        assert!(!on_time.disturbed());
        let late = EmulatorTiming { start_late: us(301), ..on_time };
        assert!(late.started_late() && late.disturbed() && !late.late_beyond_share());
        assert_eq!(start_late(&cfg, &[None, None, None]), Duration::ZERO);
    }

    fn timing(late: u64, start_late_us: u64, steal_ms: &[u64]) -> EmulatorTiming {
        EmulatorTiming {
            deliveries: 1000,
            late_limit: Duration::from_micros(400),
            late,
            start_late: Duration::from_micros(start_late_us),
            steal: steal_ms.iter().map(|&ms| Duration::from_millis(ms)).collect(),
            ..EmulatorTiming::default()
        }
    }

    #[test]
    fn a_disturbed_runs_reason_ends_with_what_the_host_took_when_it_took_anything() {
        let e = timing(45, 3286, &[930, 190]);
        assert_eq!(
            e.disturbance(),
            "4.5% of packets late, a flow 3286 us late to start (the host took 1.12 s)"
        );
        assert_eq!(timing(45, 0, &[0, 0]).disturbance(), "4.5% of packets late");
        assert_eq!(timing(0, 900, &[]).disturbance(), "a flow 900 us late to start");
    }

    #[test]
    fn an_undisturbed_run_is_kept_before_one_with_fewer_late_packets_but_a_late_start() {
        let (on_time, few_late, many_late) =
            (timing(9, 0, &[]), timing(5, 0, &[]), timing(20, 0, &[]));
        let late_start = timing(0, 900, &[]);
        assert!(late_start.disturbed() && !on_time.disturbed() && many_late.disturbed());
        assert!(on_time.less_disturbed_than(&late_start));
        assert!(!late_start.less_disturbed_than(&on_time));
        assert!(few_late.less_disturbed_than(&on_time), "then the fewer late packets");
        assert!(late_start.less_disturbed_than(&many_late));
        assert!(!on_time.less_disturbed_than(&on_time), "a tie keeps the earlier run");
    }

    #[test]
    fn the_timing_reports_the_usual_lateness_and_the_wake_ups_as_well_as_the_late_ones() {
        let us = Duration::from_micros;
        let mut up = DirectionStats::default();
        // 98 packets 3 us late, one 40 us and one 900 us (a packet time is 300 us).
        [3; 98].iter().chain(&[40, 900]).for_each(|&l| up.lateness.record(us(l)));
        let mut wakes = Lateness::default();
        [20; 90].iter().chain(&[250; 10]).for_each(|&l| wakes.record(us(l)));
        let t = EmulatorTiming::of([&up, &DirectionStats::default()], &wakes, us(300));
        // Quantiles are the upper edges of 1 us buckets, at most the largest value.
        assert_eq!((t.late_p50, t.late_p99, t.late), (us(4), us(41), 1));
        assert_eq!((t.wakes, t.wake_p50, t.wake_p99), (100, us(21), us(250)));
        assert_eq!(EmulatorTiming::default().wake_p99, Duration::ZERO);
    }

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
                reverse_rate: None,
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
                    direction: cclab_sim::Direction::Forward,
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
                && e.contains("reno cubic")
                && e.contains("transport = \"udp\""),
            "{e}"
        );
        let e = check(&config(&[("vegas", 40)]), &k(1), &avail).unwrap_err().to_string();
        assert!(e.contains("(modprobe tcp_vegas), or run the flow with transport"), "{e}");
        let e =
            check(&config(&[("cubic", 40), ("cubic", 15)]), &k(2), &avail).unwrap_err().to_string();
        assert!(
            e.contains("flows[1].rtt = 15ms") && e.contains("at least 2 x bottleneck.delay"),
            "{e}"
        );
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
        // A `tuner` flow runs as the kernel's cclab_tuner (which must be loaded), with its
        // parameters.
        let mut c = config(&[("tuner", 40)]);
        c.flows[0].params.push(("beta".into(), 0.5));
        assert!(check(&c, &k(1), &avail)
            .unwrap_err()
            .to_string()
            .contains("\"cclab_tuner\" is not available in this kernel (available: reno cubic); load it first (cclab kernel load cclab_tuner)"));
        let with_twin: Vec<String> = [&avail[..], &["cclab_tuner".to_string()]].concat();
        assert!(check(&c, &k(1), &with_twin).is_ok());
        // Scheduled changes are refused, the earliest named.
        let change = |at: u64, name: &str, value: f64| cclab_sim::ParamChange {
            at: Time::ZERO + Duration::from_secs(at),
            flow: 0,
            set: vec![(name.into(), value)],
        };
        c.changes = vec![change(5, "beta", 0.6), change(2, "rto_min", 50.0)];
        let e = check(&c, &k(1), &with_twin).unwrap_err().to_string();
        assert!(e.contains("(the first: rto_min of flows[0] (tuner#0) at 2s)"), "{e}");
        // The one way to retune a running testbed flow (`cclab kernel set` is refused
        // while a run holds the parameters).
        assert!(e.contains("live in the web lab instead") && !e.contains("kernel set"), "{e}");
        let many: Vec<(&str, u64)> = vec![("cubic", 40); MAX_FLOWS + 1];
        assert!(check(&config(&many), &k(MAX_FLOWS + 1), &avail)
            .unwrap_err()
            .to_string()
            .contains("at most"));
    }

    #[test]
    fn reverse_flows_are_refused_and_reverse_sources_run_on_the_downlink() {
        let avail: Vec<String> = vec!["cubic".to_string()];
        let k = vec![Transport::Kernel; 2];
        let mut c = config(&[("cubic", 40), ("cubic", 40)]);
        c.flows[1].direction = Direction::Reverse;
        let e = check(&c, &k, &avail).unwrap_err().to_string();
        assert!(e.contains("flows[1].direction = \"reverse\"") && e.contains("allowed"), "{e}");
        // Reverse UDP sources run: on the downlink, which becomes the reverse bottleneck.
        let mut c = config(&[("cubic", 40), ("cubic", 40)]);
        c.bottleneck.reverse_rate = Some(Rate::from_mbps(5));
        c.cross.push(cclab_sim::CrossConfig {
            kind: cclab_sim::CrossKind::Cbr,
            rate: Rate::from_mbps(1),
            packet_bytes: 1500,
            start: Time::ZERO,
            stop: None,
            direction: Direction::Reverse,
        });
        assert!(check(&c, &k, &avail).is_ok());
        let (up, down) = path(&c);
        assert!(matches!(down.rate, Some(LinkRate::Constant(r)) if r == Rate::from_mbps(5)));
        assert_eq!((down.buffer, &down.qdisc), (up.buffer, &up.qdisc));
        assert_eq!(down.per_source_delay.len(), 2);
        assert!(path(&config(&[("cubic", 40)])).1.rate.is_none());
    }

    #[test]
    fn hystart_counters_come_from_the_tcpext_lines() {
        let text = "TcpExt: SyncookiesSent TCPHystartTrainDetect TCPHystartTrainCwnd TCPHystartDelayDetect TCPHystartDelayCwnd\n\
                    TcpExt: 0 1 135 2 60\nIpExt: InNoRoutes\nIpExt: 0\n";
        let c = HystartCounters::parse(text);
        assert_eq!(
            c,
            HystartCounters { train_detect: 1, train_cwnd: 135, delay_detect: 2, delay_cwnd: 60 }
        );
        assert_eq!(HystartCounters::parse(""), HystartCounters::default());
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

    /// A run's clock that starts `lead` from now, as the testbed's starts [`SETUP_LEAD`]
    /// after the emulator.
    fn clock_starting_in(lead: std::time::Duration) -> Clock {
        Clock { origin: monotonic_ns() + lead.as_nanos() as u64 }
    }

    #[test]
    fn senders_that_arrive_at_the_line_apart_all_go_at_one_instant() {
        let clock = clock_starting_in(std::time::Duration::ZERO);
        let (line, stop) = (Arc::new(StartLine::new(3)), Arc::new(AtomicBool::new(false)));
        let senders: Vec<_> = (0..3u64)
            .map(|k| {
                let (line, stop) = (line.clone(), stop.clone());
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(5 * k));
                    let arrived = clock.now();
                    (arrived, line.arrive(clock, &stop))
                })
            })
            .collect();
        let got: Vec<(Time, Option<Time>)> =
            senders.into_iter().map(|t| t.join().unwrap()).collect();
        let go = got[0].1.expect("every sender arrived, so they go");
        assert!(got.iter().all(|&(_, g)| g == Some(go)), "{got:?}");
        let last_arrival = got.iter().map(|&(a, _)| a).max().unwrap();
        assert!(go >= last_arrival + START_LEAD, "go {go:?}, last arrival {last_arrival:?}");
    }

    #[test]
    fn senders_ready_before_the_run_starts_go_at_its_start_and_not_before() {
        let clock = clock_starting_in(std::time::Duration::from_millis(30));
        let (line, stop) = (StartLine::new(1), AtomicBool::new(false));
        let go = line.arrive(clock, &stop);
        assert_eq!(go, Some(Time::ZERO), "arrived 30 ms before the start");
        assert!(wait_for_start(Time::ZERO, clock, &stop));
        assert!(clock.until(Time::ZERO).is_none(), "left the wait before the run's start");
    }

    #[test]
    fn a_stopped_run_releases_a_sender_waiting_at_the_line() {
        let clock = clock_starting_in(std::time::Duration::ZERO);
        let (line, stop) = (Arc::new(StartLine::new(2)), Arc::new(AtomicBool::new(false)));
        let waiting = {
            let (line, stop) = (line.clone(), stop.clone());
            std::thread::spawn(move || line.arrive(clock, &stop))
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(waiting.join().unwrap(), None, "the other sender never came");
    }

    #[test]
    fn a_start_is_never_left_early_and_a_stop_ends_the_wait() {
        let (stop, clock) = (AtomicBool::new(false), clock_starting_in(std::time::Duration::ZERO));
        let start = clock.now() + Duration::from_millis(3);
        assert!(wait_for_start(start, clock, &stop));
        let reached = clock.now();
        assert!(reached >= start, "returned at {reached:?}, before {start:?}");
        stop.store(true, Ordering::Relaxed);
        assert!(!wait_for_start(clock.now() + Duration::from_secs(60), clock, &stop));
    }
}
