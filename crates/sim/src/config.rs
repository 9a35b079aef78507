//! What a simulation is made of: plain data. The rules each part must follow are in
//! [`crate::validate`](mod@crate::validate) (a queue discipline's in its file under [`crate::qdisc`]); the
//! scenario crate turns TOML into these and points its errors at the file's lines.

pub use crate::qdisc::{CodelConfig, PieConfig, Qdisc, RedConfig};
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

impl SimConfig {
    /// At most how many flow samples the run's time series holds: each flow is sampled
    /// every `sample_interval` (from time zero) while it runs, from its start to its stop
    /// or the end. An upper bound: a finite flow may finish sooner.
    pub fn max_flow_samples(&self) -> u64 {
        max_flow_samples(&self.flows, self.duration, self.sample_interval)
    }
}

/// [`SimConfig::max_flow_samples`] of these flows in a run of `duration`.
pub fn max_flow_samples(flows: &[FlowConfig], duration: Duration, interval: Duration) -> u64 {
    let iv = interval.as_nanos().max(1);
    flows
        .iter()
        .map(|f| {
            let start = f.start.as_nanos();
            let end = f.stop.map_or(duration.as_nanos(), |s| s.as_nanos().min(duration.as_nanos()));
            // The run's end is an instant too where the interval does not divide it.
            let last = u64::from(end == duration.as_nanos() && end % iv != 0);
            if end < start {
                0
            } else {
                end / iv - start.div_ceil(iv) + 1 + last
            }
        })
        .fold(0u64, u64::saturating_add)
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
    /// Random loss, on the forward direction only.
    pub loss: LossModel,
    /// Rate of the reverse bottleneck (`None`: the forward `rate`, trace included). It
    /// exists only in runs with reverse traffic or with this rate set; see
    /// [`SimConfig::has_reverse_link`].
    pub reverse_rate: Option<Rate>,
}

impl LinkConfig {
    /// How fast the reverse bottleneck serves packets.
    pub fn reverse_link_rate(&self) -> LinkRate {
        match self.reverse_rate {
            Some(r) => LinkRate::Constant(r),
            None => self.rate.clone(),
        }
    }
}

/// Which way a flow's data or a UDP source's packets cross the dumbbell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Through the forward bottleneck (`bottleneck`), as the flows' data goes by default.
    #[default]
    Forward,
    /// Through the reverse bottleneck, where the forward flows' ACKs queue too; a reverse
    /// TCP flow's ACKs cross the forward bottleneck.
    Reverse,
}

impl Direction {
    /// The names a scenario writes, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["forward", "reverse"];

    pub fn named(name: &str) -> Option<Direction> {
        match name {
            "forward" => Some(Direction::Forward),
            "reverse" => Some(Direction::Reverse),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The other way (the direction of a flow's ACKs).
    pub fn opposite(self) -> Direction {
        match self {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        }
    }
}

impl SimConfig {
    /// Whether the run models the reverse bottleneck: when some flow or source goes in
    /// reverse, or `bottleneck.reverse_rate` is set. Otherwise ACKs return over a plain
    /// delay, which is what a reverse link that carries only ACKs amounts to, give or take
    /// each ACK's serialisation time.
    pub fn has_reverse_link(&self) -> bool {
        self.bottleneck.reverse_rate.is_some()
            || self.flows.iter().any(|f| f.direction == Direction::Reverse)
            || self.cross.iter().any(|c| c.direction == Direction::Reverse)
    }
}

/// How fast the bottleneck serves packets.
#[derive(Clone, Debug)]
pub enum LinkRate {
    Constant(Rate),
    /// A mahimahi packet-delivery trace (see [`Trace`]).
    Trace(Arc<Trace>),
}

impl LinkRate {
    /// A 1,500-byte packet's transmission time at the link's mean rate: the typical
    /// packet time RED ages its average by, and the emulator's yardstick of lateness.
    pub fn mean_packet_time(&self) -> Duration {
        let mean = match self {
            LinkRate::Constant(r) => *r,
            LinkRate::Trace(t) => t.mean_rate(),
        };
        mean.tx_time(1500)
    }
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
    /// Which way the flow's data goes (its ACKs go the other way).
    pub direction: Direction,
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
    /// Open the connection with a three-way handshake before sending data, as Linux
    /// always does (default true); false: data leaves at the flow's start time.
    pub handshake: bool,
    /// Receiver window in bytes (`None`: large enough never to limit).
    pub rwnd: Option<u64>,
    /// Overrides the algorithm's loss-recovery style (`None`: the algorithm's own).
    pub recovery: Option<LossRecovery>,
    /// With SACK, detect losses with RACK (RFC 8985) as Linux does by default
    /// (`net.ipv4.tcp_recovery = 1`); false: RFC 6675 DupThresh. NewReno and Tahoe ignore it.
    pub rack: bool,
    /// With RACK, send tail-loss probes (RFC 8985 section 7) as Linux does by default
    /// (`net.ipv4.tcp_early_retrans = 3`); false: a loss at the tail waits for the RTO.
    /// Ignored where RACK is off.
    pub tlp: bool,
    /// Header bytes added to each segment on the wire (IP + TCP with timestamps: 52).
    pub header_bytes: u32,
    /// The sender's jiffies frequency (Linux `CONFIG_HZ`): the clock of the algorithms
    /// (CUBIC's epoch and its time since), the min-RTT window and the jiffy rounding of
    /// the reorder and probe timers. 1000 by default; Linux's Kconfig default, and
    /// Debian's kernels, use 250 (scenario key `hz`).
    pub hz: u32,
    /// The hosts' processing time (default zero): each ACK reaches its sender after a
    /// further delay drawn uniformly from 0 to this, from the flow's own seeded stream,
    /// without overtaking the ACKs ahead of it. Real hosts take tens of microseconds, never
    /// exactly the same, between a packet's arrival and what they send in reply; a model
    /// whose hosts take no time keeps every flow at a fixed phase of the bottleneck's
    /// departures, and DropTail then drops from the flows that grow most often (the phase
    /// effects of Floyd and Jacobson, "On Traffic Phase Effects in Packet-Switched
    /// Gateways", 1991). ns-2's TCP agents have the same remedy (`overhead_`, a uniform
    /// random delay before sending, `TcpAgent::send_much` in tcp.cc). The testbed's
    /// kernel hosts have their own and ignore it.
    pub host_delay: Duration,
    /// How long the receiving application takes to read a segment after it arrives
    /// (scenario key `read_delay`; default zero: it reads at once). It matters for the
    /// ACKs Linux leaves to the read: a second full segment is ACKed on arrival only if
    /// the window the ACK would offer, with the segment still unread, reaches the one
    /// offered last (`__tcp_ack_snd_check`, net/ipv4/tcp_input.c); otherwise, and for a
    /// pushed segment (`psh`), the ACK leaves when the application has read
    /// (`__tcp_cleanup_rbuf`, net/ipv4/tcp.c), this long after the arrival. On the
    /// testbed's hosts such ACKs left 47 us (median; 39 to 56 us for the middle 80%) after
    /// their segment's arrival, the others at once. The testbed's kernel hosts have their
    /// own and ignore it.
    pub read_delay: Duration,
    /// Where the run's time zero falls within one of the sender's ticks (scenario key
    /// `tick_phase`; under `1 s / hz`, to the microsecond; default zero). Linux's
    /// `jiffies` count from boot, so a real connection starts at an arbitrary point of a
    /// tick, and what CUBIC does with its jiffies clock (its epoch, the time since, its
    /// 1/32 s between updates) and where the min-RTT window ends move with it. Sweeping
    /// it shows how much of a run's outcome rests on that phase. The testbed's kernel has
    /// its own and ignores it.
    pub tick_phase: Duration,
    /// Segments carry PSH where Linux's senders put it, and the receiver ACKs a PSH
    /// segment at once (scenario key `psh`; default off). `tcp_write_xmit` sends new data
    /// in GSO packets of `tcp_tso_autosize` segments (about 1 ms at the pacing rate, at
    /// least two; see `cclab_cc::tcp::tso_segs`), and `__tcp_transmit_skb`
    /// (net/ipv4/tcp_output.c) forces PSH on every packet of more than one segment, which
    /// GSO leaves on its last segment. At the testbed's rates a packet holds two, so a pair
    /// ends with PSH and a segment sent alone carries none, as the kernel's packets show.
    /// Since Linux 6.1 a full-sized segment with PSH sets `ICSK_ACK_PUSHED`
    /// (`tcp_measure_rcv_mss`, net/ipv4/tcp_input.c), and once the application has read
    /// everything `__tcp_cleanup_rbuf` (net/ipv4/tcp.c) sends the ACK at once, even for
    /// that one segment. Each such ACK frees a single segment, so the sender's bursts and
    /// the ACKs that clock them are no longer all pairs. The receiving application here
    /// reads at once. A packet the window would cut below `tso_segs` waits for the next
    /// ACK when that is due within a millisecond and the last send was less than one ago
    /// (`tcp_tso_should_defer`, as of Linux 6.18), so some of those single-segment ACKs
    /// are answered by nothing at once and a pair later. The data waits in send buffers
    /// of at most 64 KiB and half the largest window the receiver has offered, which no
    /// GSO packet spans and whose last segment goes alone (`send_buffers.rs` in
    /// `cclab_sim::tcp`), so the receiver's ACKs carry their window. The testbed's kernel
    /// hosts do all this themselves and ignore the key.
    pub psh: bool,
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
            handshake: true,
            rwnd: None,
            recovery: None,
            rack: true,
            tlp: true,
            header_bytes: 52,
            hz: 1000,
            host_delay: Duration::ZERO,
            read_delay: Duration::ZERO,
            tick_phase: Duration::ZERO,
            psh: false,
        }
    }
}

impl TcpConfig {
    /// One of the sender's ticks (`1 s / hz`), to the microsecond: the range and the
    /// precision of `tick_phase`.
    pub fn tick(&self) -> Duration {
        Duration::from_micros(1_000_000 / self.hz.max(1) as u64)
    }
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

/// One UDP background source through the bottleneck of its direction.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossConfig {
    pub kind: CrossKind,
    /// Mean rate of the source.
    pub rate: Rate,
    /// Packet size on the wire in bytes (default 1500).
    pub packet_bytes: u32,
    pub start: Time,
    pub stop: Option<Time>,
    pub direction: Direction,
}

impl CrossConfig {
    /// How long the source sends in a run of `duration`: from its start to its stop or
    /// the run's end (at least a nanosecond, so that a rate over it is defined).
    pub fn active_time(&self, duration: Duration) -> Duration {
        let end = self.stop.map_or(duration.as_nanos(), |s| s.0.min(duration.as_nanos()));
        Duration(end.saturating_sub(self.start.0).max(1))
    }
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

impl CrossKind {
    /// The name a scenario's `kind` gives it (and summary.json writes).
    pub fn name(self) -> &'static str {
        match self {
            CrossKind::Cbr => "cbr",
            CrossKind::Poisson => "poisson",
            CrossKind::Exponential { .. } => "exponential",
        }
    }
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
pub const TCP_PARAMS: &[&str] = &["rto_min", "initcwnd"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_is_counted_only_for_the_instants_it_runs() {
        let ms = Duration::from_millis;
        let at = |m: u64| Time::ZERO + ms(m);
        let mut f = FlowConfig {
            name: "f".into(),
            cc: "cubic".into(),
            params: Vec::new(),
            rtt: ms(40),
            start: Time::ZERO,
            stop: None,
            bytes: None,
            tcp: TcpConfig::default(),
            direction: Direction::Forward,
        };
        let rows = |f: &FlowConfig| max_flow_samples(std::slice::from_ref(f), ms(1000), ms(10));
        assert_eq!(rows(&f), 101, "0, 10, ..., 1000 ms");
        f.start = at(995);
        assert_eq!(rows(&f), 1, "1000 ms only");
        f.start = at(5);
        f.stop = Some(at(30));
        assert_eq!(rows(&f), 3, "10, 20, 30 ms");
        f.stop = Some(at(2000));
        assert_eq!(rows(&f), 100, "a stop past the end counts to the end");
        f.start = at(1001);
        f.stop = None;
        assert_eq!(rows(&f), 0, "starts after the end");
    }
}
