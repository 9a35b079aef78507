//! What a simulation is made of: plain data, already validated by whoever built it
//! (the scenario crate turns TOML into these, with errors naming the field).

use cclab_cc::tcp_limits::{TcpLimit, INITCWND, MSS, RTO_MIN_MS};
use cclab_cc::LossRecovery;
use cclab_units::{Duration, Rate, Time};
use std::sync::Arc;

/// A whole simulation.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Simulated time to run.
    pub duration: Duration,
    /// Seed of every random stream in the run (each component derives its own stream).
    pub seed: u64,
    pub bottleneck: LinkConfig,
    /// One entry per flow (a scenario's `count` is already expanded).
    pub flows: Vec<FlowConfig>,
    /// One entry per UDP source (a scenario's `count` is already expanded).
    pub cross: Vec<CrossConfig>,
    /// Interval between time-series samples (flows and queue); default 10 ms.
    pub sample_interval: Duration,
    /// Parameter changes scheduled during the run.
    pub changes: Vec<ParamChange>,
}

/// The shared bottleneck link and its queue.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub rate: LinkRate,
    /// One-way propagation delay of the bottleneck link.
    pub delay: Duration,
    /// Queue capacity.
    pub buffer: Buffer,
    pub qdisc: Qdisc,
    pub loss: LossModel,
}

/// How fast the bottleneck serves packets.
#[derive(Clone, Debug)]
pub enum LinkRate {
    Constant(Rate),
    /// A mahimahi packet-delivery trace (see [`Trace`]).
    Trace(Arc<Trace>),
}

/// A mahimahi trace: each entry is a millisecond at which the link may deliver one
/// 1500-byte packet (MTU-sized delivery opportunity); the schedule repeats with period
/// `period_ms` (the last timestamp). Format: one integer per line (shared/traces/PROVENANCE.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Delivery opportunities, milliseconds, non-decreasing.
    pub opportunities_ms: Vec<u64>,
    /// The trace's period in ms (its last timestamp); it loops after that.
    pub period_ms: u64,
}

/// Queue capacity, in packets or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    Packets(u64),
    Bytes(u64),
}

/// Queue discipline at the bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub enum Qdisc {
    DropTail,
    Red(RedConfig),
    Codel(CodelConfig),
    Pie(PieConfig),
    FqCodel(CodelConfig),
}

/// Random Early Detection (Floyd & Jacobson 1993), "gentle" variant; thresholds in
/// packets, as ns-2's RED is usually configured in the seeds' study (`003_…`).
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Average queue (packets) below which nothing is dropped.
    pub min_th: f64,
    /// Average queue (packets) at which the drop probability reaches `max_p`.
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub weight: f64,
    /// Gentle RED: between max_th and 2*max_th the probability rises linearly to 1.
    pub gentle: bool,
}

/// CoDel (RFC 8289).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelConfig {
    pub target: Duration,
    pub interval: Duration,
}

/// PIE (RFC 8033).
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    pub target: Duration,
    pub tupdate: Duration,
    pub alpha: f64,
    pub beta: f64,
}

/// Random loss applied to packets arriving at the bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        p: f64,
    },
    /// Two-state Markov burst loss: in Good, loss `loss_good`; in Bad, `loss_bad`; move
    /// Good->Bad with `p_good_to_bad` and Bad->Good with `p_bad_to_good` per packet.
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

/// One TCP flow.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// Display name (e.g. "cubic#0").
    pub name: String,
    /// Algorithm name (validated: `cclab_cc::Algorithm::new` accepts it).
    pub cc: String,
    /// Initial parameters of the algorithm (validated names and values).
    pub params: Vec<(String, f64)>,
    /// Base round-trip propagation time (bottleneck delay included, no queueing).
    pub rtt: Duration,
    pub start: Time,
    /// When the sender stops sending new data (`None`: end of run).
    pub stop: Option<Time>,
    /// Finite transfer size in bytes (`None`: bulk).
    pub bytes: Option<u64>,
    pub tcp: TcpConfig,
}

/// The TCP sender's and receiver's settings (Linux defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes); Linux on a 1500-byte MTU with timestamps: 1448.
    pub mss: u32,
    /// Initial congestion window in segments (Linux `initcwnd`, default 10).
    pub init_cwnd: u32,
    /// Minimum retransmission timeout (Linux `rto_min`, default 200 ms).
    pub rto_min: Duration,
    /// Maximum retransmission timeout (Linux `TCP_RTO_MAX`, 120 s).
    pub rto_max: Duration,
    /// Initial RTO before any RTT sample (RFC 6298: 1 s).
    pub rto_initial: Duration,
    pub delayed_ack: DelayedAck,
    /// Receiver window in bytes (`None`: large enough never to limit).
    pub rwnd: Option<u64>,
    /// Overrides the algorithm's loss-recovery style (`None`: the algorithm's own).
    pub recovery: Option<LossRecovery>,
    /// Header bytes added to each segment on the wire (IP + TCP with timestamps: 52).
    pub header_bytes: u32,
    /// Jiffies frequency given to algorithms (Linux `CONFIG_HZ`).
    pub hz: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            init_cwnd: 10,
            rto_min: Duration::from_millis(200),
            rto_max: Duration::from_secs(120),
            rto_initial: Duration::from_secs(1),
            delayed_ack: DelayedAck::default(),
            rwnd: None,
            recovery: None,
            header_bytes: 52,
            hz: 1000,
        }
    }
}

impl TcpConfig {
    /// Checks mss, init_cwnd and rto_min against [`cclab_cc::tcp_limits`] (and rto_min
    /// against rto_max); the error names the field and says what is allowed.
    pub fn check_limits(&self) -> Result<(), (&'static str, String)> {
        let whole = |field, limit: &TcpLimit, v: u64| {
            if limit.contains(v) {
                Ok(())
            } else {
                Err((field, format!("{v}: allowed {}", limit.allowed())))
            }
        };
        whole("mss", &MSS, self.mss as u64)?;
        whole("init_cwnd", &INITCWND, self.init_cwnd as u64)?;
        let (lo, hi) = rto_min_range();
        if self.rto_min < lo || self.rto_min > hi || self.rto_min > self.rto_max {
            return Err((
                "rto_min",
                format!(
                    "{}: allowed {lo} to {hi}, at most rto_max ({})",
                    self.rto_min, self.rto_max
                ),
            ));
        }
        Ok(())
    }
}

/// The allowed `rto_min` ([`RTO_MIN_MS`]) as durations.
pub fn rto_min_range() -> (Duration, Duration) {
    (Duration::from_millis(RTO_MIN_MS.min), Duration::from_millis(RTO_MIN_MS.max))
}

/// Receiver delayed-ACK policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayedAck {
    pub enabled: bool,
    /// ACK at least every this many full-sized segments (Linux: 2).
    pub every: u32,
    /// Delayed-ACK timer (Linux: 40 ms minimum, `TCP_DELACK_MIN`).
    pub timeout: Duration,
}

impl Default for DelayedAck {
    fn default() -> Self {
        DelayedAck { enabled: true, every: 2, timeout: Duration::from_millis(40) }
    }
}

/// One UDP background source through the bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossConfig {
    pub kind: CrossKind,
    /// Mean rate of the source.
    pub rate: Rate,
    /// Packet size on the wire in bytes (default 1500).
    pub packet_bytes: u32,
    pub start: Time,
    pub stop: Option<Time>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CrossKind {
    /// Constant bit rate.
    Cbr,
    /// Poisson arrivals at the mean rate.
    Poisson,
    /// Exponential on/off: sends at `rate / duty` while on, so the long-run mean is `rate`.
    Exponential { mean_on: Duration, mean_off: Duration },
}

/// A scheduled change of an algorithm parameter on a running flow.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamChange {
    pub at: Time,
    /// Index into `SimConfig::flows`.
    pub flow: usize,
    /// What to change: an algorithm parameter, or one of the TCP-level ones.
    pub set: Vec<(String, f64)>,
}

/// TCP-level parameters that can change on a running flow (TCPTuner's `ip route` ones),
/// accepted by `set_param` and `ParamChange` besides the algorithm's own parameters.
/// `rto_min` is in milliseconds, `initcwnd` in segments.
pub const TCP_PARAMS: &[&str] = &[RTO_MIN_MS.name, INITCWND.name];
