//! The rules a simulation's configuration follows, in one place (a queue discipline's
//! own are in its file under [`crate::qdisc`]).
//!
//! Each part of a configuration checks itself and names its own fields (`rtt`,
//! `tcp.mss`, `qdisc.max_th`), so a reader of a file can point at the line that wrote the
//! value (crates/scenario does); [`validate`] checks a whole [`SimConfig`] and names the
//! fields from its root (`flows[3].rtt`). A flow's algorithm is made from its name and
//! parameters in one place, [`FlowConfig::algorithm`]; checking a flow returns it, which is
//! how the engine builds its flows.

use crate::config::*;
use crate::error::SimError;
use cclab_cc::tcp_limits::{
    TcpLimit, INITCWND as LIMITS_INITCWND, MSS as LIMITS_MSS, RTO_MIN_MS as LIMITS_RTO_MIN,
};
use cclab_cc::{Algorithm, ParamError};
use cclab_units::{Duration, Rate, Time};
use std::fmt::Display;

/// Most flows in a run: each costs on the order of a kilobyte, so a million is already a
/// gigabyte.
pub const MAX_FLOWS: usize = 1_000_000;
/// Most UDP cross-traffic sources.
pub const MAX_CROSS: usize = 100_000;
/// Shortest run.
pub const MIN_DURATION: Duration = Duration::from_millis(1);
/// Longest run (about 11.5 days), and longest of any interval in a configuration.
pub const MAX_DURATION: Duration = Duration::from_secs(1_000_000);
/// Shortest sampling interval.
pub const MIN_SAMPLE_INTERVAL: Duration = Duration::from_micros(100);
/// Longest base RTT (and bottleneck delay): CUBIC's fixed-point arithmetic is valid up
/// to 100 s (tcp_cubic.c).
pub const MAX_RTT: Duration = Duration::from_secs(100);
/// Slowest and fastest bottleneck or UDP source.
pub const MIN_RATE: Rate = Rate(1_000);
pub const MAX_RATE: Rate = Rate(1_000_000_000_000);
/// Largest buffer in packets. A queued packet costs the simulator up to about 100 bytes
/// (its record, and the ring's room to grow), so a full queue of this many takes about
/// 1 GB; a hundred million, the limit before, aborted a run out of memory.
pub const MAX_BUFFER_PACKETS: u64 = 10_000_000;
/// Smallest (one full packet) and largest buffer in bytes (as many 1500-byte packets as
/// [`MAX_BUFFER_PACKETS`]).
pub const BUFFER_BYTES: (u64, u64) = (1500, 15_000_000_000);
/// Largest finite transfer.
pub const MAX_FLOW_BYTES: u64 = 1_000_000_000_000_000;
/// Segment sizes (cclab_cc::tcp_limits, the one table of TCP-level limits).
pub const MSS: (u32, u32) = (LIMITS_MSS.min as u32, LIMITS_MSS.max as u32);
/// UDP packet sizes on the wire: IP and UDP headers alone to a jumbo frame.
pub const PACKET_BYTES: (u32, u32) = (28, 9000);
/// TCP-level limits, the same for a flow's configuration and a change on a running flow
/// (TCPTuner's `ip route` parameters), from cclab_cc::tcp_limits, which `cclab kernel
/// route` and the testbed also use.
pub const RTO_MIN: (Duration, Duration) =
    (Duration::from_millis(LIMITS_RTO_MIN.min), Duration::from_millis(LIMITS_RTO_MIN.max));
pub const INIT_CWND: (u32, u32) = (LIMITS_INITCWND.min as u32, LIMITS_INITCWND.max as u32);
/// Largest receiver window in bytes.
pub const MAX_RWND: u64 = 1 << 40;
/// The jiffies frequencies a Linux kernel can be built with (`kernel/Kconfig.hz`).
pub const LINUX_HZ: [u32; 4] = [100, 250, 300, 1000];
/// What an error about `hz` says is allowed.
pub const LINUX_HZ_ALLOWED: &str =
    "100, 250, 300 or 1000 (the timer frequencies Linux's CONFIG_HZ offers)";
/// The largest `host_delay` and `read_delay`: a host's processing time; a longer path
/// belongs in `rtt`.
pub const MAX_HOST_DELAY: Duration = Duration::from_millis(10);

fn out_of_range(field: &str, value: impl Display, allowed: impl Display) -> SimError {
    SimError::new(field, value.to_string(), format!("out of range; allowed: {allowed}"))
}

fn time_in(field: &str, d: Duration, min: Duration, max: Duration) -> Result<(), SimError> {
    if d < min || d > max {
        return Err(out_of_range(field, d, format!("{min} to {max}")));
    }
    Ok(())
}

fn rate_in(field: &str, r: Rate) -> Result<(), SimError> {
    if r < MIN_RATE || r > MAX_RATE {
        return Err(out_of_range(field, r, format!("{MIN_RATE} to {MAX_RATE}")));
    }
    Ok(())
}

fn later_than_start(field: &str, stop: Option<Time>, start: Time) -> Result<(), SimError> {
    match stop {
        Some(s) if s <= start => Err(SimError::new(
            field,
            Duration(s.0).to_string(),
            format!("must be later than start = {}", Duration(start.0)),
        )),
        _ => Ok(()),
    }
}

/// Checks a whole configuration; fields are named from its root (`flows[3].rtt`).
pub fn validate(cfg: &SimConfig) -> Result<(), SimError> {
    check_network(cfg)?;
    for (i, f) in cfg.flows.iter().enumerate() {
        f.check(&cfg.bottleneck).map_err(|e| e.within(&format!("flows[{i}]")))?;
    }
    check_changes(cfg)
}

/// The run's length and sampling interval.
pub fn check_times(duration: Duration, sample_interval: Duration) -> Result<(), SimError> {
    time_in("duration", duration, MIN_DURATION, MAX_DURATION)?;
    // At most the run's length: longer, the run has one sample, at time zero, and what
    // is averaged over the samples (each flow's mean cwnd) reads the initial window. One
    // range, whichever end is passed.
    if sample_interval < MIN_SAMPLE_INTERVAL || sample_interval > duration {
        return Err(out_of_range(
            "sample_interval",
            sample_interval,
            format!("{MIN_SAMPLE_INTERVAL} to duration = {duration}"),
        ));
    }
    Ok(())
}

/// Everything but the flows' own settings and the changes: times, the bottleneck, how
/// many flows and sources, and each source.
pub(crate) fn check_network(cfg: &SimConfig) -> Result<(), SimError> {
    check_times(cfg.duration, cfg.sample_interval)?;
    cfg.bottleneck.check().map_err(|e| e.within("bottleneck"))?;
    if cfg.flows.len() > MAX_FLOWS {
        return Err(out_of_range("flows", cfg.flows.len(), format!("at most {MAX_FLOWS} flows")));
    }
    if cfg.cross.len() > MAX_CROSS {
        return Err(out_of_range("cross", cfg.cross.len(), format!("at most {MAX_CROSS} sources")));
    }
    for (i, c) in cfg.cross.iter().enumerate() {
        c.check(&cfg.bottleneck).map_err(|e| e.within(&format!("cross[{i}]")))?;
    }
    check_cross_total(&cfg.cross)?;
    check_buffer_packets(cfg)
}

/// How many packets the buffer can hold, against [`MAX_BUFFER_PACKETS`] (the field is
/// named from the root, `bottleneck.buffer`): a buffer in bytes holds more of the run's
/// smallest packets than of full-sized ones.
pub fn check_buffer_packets(cfg: &SimConfig) -> Result<(), SimError> {
    let (most, smallest) = most_queued_packets(cfg);
    match (cfg.bottleneck.buffer, smallest) {
        (Buffer::Bytes(b), Some(size)) if most > MAX_BUFFER_PACKETS => Err(SimError::new(
            "bottleneck.buffer",
            format!("{b} bytes"),
            format!(
                "holds up to {most} packets of {size} bytes, the smallest this run queues; allowed: at most {MAX_BUFFER_PACKETS} packets, so at most {} bytes here",
                MAX_BUFFER_PACKETS * u64::from(size)
            ),
        )),
        _ => check_red_reaches(cfg, most),
    }
}

/// RED in the bottleneck must be able to drop early ([`red_never_drops_early`]).
fn check_red_reaches(cfg: &SimConfig, most: u64) -> Result<(), SimError> {
    let Qdisc::Red(red) = &cfg.bottleneck.qdisc else { return Ok(()) };
    let buffer = match cfg.bottleneck.buffer {
        Buffer::Packets(n) => format!("bottleneck.buffer = {n} packets"),
        Buffer::Bytes(b) => format!("bottleneck.buffer = {b} bytes, at most {most} packets"),
    };
    match red_never_drops_early(red.min_th, "min_th", most, &buffer) {
        None => Ok(()),
        Some(why) => Err(SimError::new("bottleneck.qdisc.min_th", red.min_th.to_string(), why)),
    }
}

/// Why RED with `min_th` (packets; the key it is set by, `name`) could never drop early
/// in a buffer of at most `most` packets (`buffer` says which), ending with what is
/// allowed; `None` where it can.
///
/// RED averages the queue an arriving packet finds, in packets, and drops early only
/// where the average passes `min_th` with two or more packets queued (`red.rs`). A packet
/// that finds the buffer full is dropped before RED sees it, so the average never passes
/// `most - 1`: a `min_th` of that or more, or a buffer of two packets or fewer, would
/// silently make RED DropTail. ns-2's defaults (5 and 15 packets) do that to a buffer of
/// a few packets.
pub fn red_never_drops_early(min_th: f64, name: &str, most: u64, buffer: &str) -> Option<String> {
    let reach = most.saturating_sub(1);
    if most > 2 && min_th < reach as f64 {
        return None;
    }
    let allowed = if most > 2 {
        format!("{name} below {reach} packets, or a larger buffer")
    } else {
        "a buffer of at least 3 packets".to_string()
    };
    Some(format!(
        "RED would never drop early: in {buffer} the average queue an arriving packet finds stays at or below {reach}, never above {name} = {min_th} packets; allowed: {allowed}"
    ))
}

/// How many packets the bottleneck's buffer can hold at most, and for a buffer in bytes
/// the smallest packet it would hold them in: a 28-byte UDP source's or, where the run
/// has a reverse link, an ACK (headers only) fills a buffer of bytes with far more
/// packets than 1500-byte ones would. Each queued packet costs memory, so the limits
/// on a buffer are on this count.
pub fn most_queued_packets(cfg: &SimConfig) -> (u64, Option<u32>) {
    let acks_queue = cfg.has_reverse_link();
    let smallest = cfg
        .flows
        .iter()
        .map(|f| if acks_queue { f.tcp.header_bytes } else { f.tcp.mss + f.tcp.header_bytes })
        .chain(cfg.cross.iter().map(|c| c.packet_bytes))
        .min()
        .map(|size| size.max(1));
    match cfg.bottleneck.buffer {
        Buffer::Packets(n) => (n, None),
        Buffer::Bytes(b) => (b / u64::from(smallest.unwrap_or(1500)), smallest),
    }
}

/// The sources of one direction together send at most [`MAX_RATE`], as one source may:
/// each packet is an event, and a thousand sources at the limit each would take the
/// simulator hours per simulated second.
fn check_cross_total(cross: &[CrossConfig]) -> Result<(), SimError> {
    for dir in [Direction::Forward, Direction::Reverse] {
        let total: u128 =
            cross.iter().filter(|c| c.direction == dir).map(|c| c.rate.0 as u128).sum();
        if total > MAX_RATE.0 as u128 {
            let shown = Rate(total.min(u64::MAX as u128) as u64);
            let which = if dir == Direction::Forward { "forward" } else { "reverse" };
            return Err(out_of_range(
                "cross",
                format!("{shown} in all from the {which} sources"),
                format!("their rates add up to at most {MAX_RATE} in each direction"),
            ));
        }
    }
    Ok(())
}

/// Every scheduled change, against the flows it names.
pub(crate) fn check_changes(cfg: &SimConfig) -> Result<(), SimError> {
    for (k, ch) in cfg.changes.iter().enumerate() {
        ch.check(&cfg.flows).map_err(|e| e.within(&format!("changes[{k}]")))?;
    }
    Ok(())
}

impl LinkConfig {
    pub fn check(&self) -> Result<(), SimError> {
        match &self.rate {
            LinkRate::Constant(r) => rate_in("rate", *r)?,
            LinkRate::Trace(t) if t.opportunities_ms.is_empty() || t.period_ms == 0 => {
                return Err(SimError::new("trace", "", "the trace has no delivery opportunities"))
            }
            LinkRate::Trace(t) if t.mean_rate() > MAX_RATE => {
                let mean = t.mean_rate();
                let why =
                    format!("its mean rate, {mean}, is out of range; allowed: at most {MAX_RATE}");
                return Err(SimError::new("trace", mean.to_string(), why));
            }
            LinkRate::Trace(_) => {}
        }
        if let Some(r) = self.reverse_rate {
            rate_in("reverse_rate", r)?;
        }
        time_in("delay", self.delay, Duration::ZERO, MAX_RTT)?;
        match self.buffer {
            Buffer::Packets(n) if !(1..=MAX_BUFFER_PACKETS).contains(&n) => {
                return Err(out_of_range(
                    "buffer",
                    format!("{n} packets"),
                    format!("1 to {MAX_BUFFER_PACKETS} packets"),
                ))
            }
            Buffer::Bytes(b) if !(BUFFER_BYTES.0..=BUFFER_BYTES.1).contains(&b) => {
                return Err(out_of_range(
                    "buffer",
                    format!("{b} bytes"),
                    format!("{} to {} bytes", BUFFER_BYTES.0, BUFFER_BYTES.1),
                ))
            }
            _ => {}
        }
        self.qdisc.check().map_err(|e| e.within("qdisc"))?;
        self.loss.check().map_err(|e| e.within("loss"))
    }
}

impl LossModel {
    pub fn check(&self) -> Result<(), SimError> {
        // A probability in [0, 1], or with an open end.
        let probability = |name: &str, p: f64, above_zero: bool, below_one: bool| {
            let low_ok = if above_zero { p > 0.0 } else { p >= 0.0 };
            let high_ok = if below_one { p < 1.0 } else { p <= 1.0 };
            if low_ok && high_ok {
                return Ok(());
            }
            let low = if above_zero { '(' } else { '[' };
            let high = if below_one { ')' } else { ']' };
            Err(out_of_range(name, p, format!("a probability in {low}0, 1{high}")))
        };
        match *self {
            LossModel::None => Ok(()),
            // A link that loses every packet carries nothing.
            LossModel::Bernoulli { p } => probability("p", p, false, true),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                probability("p_good_to_bad", p_good_to_bad, false, false)?;
                // Zero would keep the link in the bad state for ever.
                probability("p_bad_to_good", p_bad_to_good, true, false)?;
                probability("loss_good", loss_good, false, false)?;
                probability("loss_bad", loss_bad, false, false)
            }
        }
    }
}

impl FlowConfig {
    /// The flow's algorithm with its parameters set: the one place where an algorithm's
    /// name is looked up. Errors name `cc` or `params.<name>`.
    pub fn algorithm(&self) -> Result<Algorithm, SimError> {
        let mut alg =
            Algorithm::new(&self.cc).map_err(|e| SimError::new("cc", &self.cc, e.to_string()))?;
        for (name, v) in &self.params {
            alg.set_param(name, *v).map_err(|e| {
                let message = e.about_value(&self.cc).unwrap_or_else(|| e.to_string());
                SimError::new(format!("params.{name}"), v.to_string(), message)
            })?;
        }
        Ok(alg)
    }

    /// Checks the flow's RTT on its own (the link is not needed): a scenario sizes a
    /// BDP buffer from the largest RTT, so it checks the RTTs before the buffer.
    pub fn check_rtt(&self) -> Result<(), SimError> {
        time_in("rtt", self.rtt, Duration::from_micros(1), MAX_RTT)
    }

    /// Checks the flow on `link` and returns its algorithm, ready to run.
    pub fn check(&self, link: &LinkConfig) -> Result<Algorithm, SimError> {
        let alg = self.algorithm()?;
        self.check_rtt()?;
        let floor = link.delay.saturating_mul(2);
        if self.rtt < floor {
            return Err(SimError::new(
                "rtt",
                self.rtt.to_string(),
                format!("a flow's base RTT includes the bottleneck delay both ways, so it must be at least 2 x bottleneck.delay = {floor}"),
            ));
        }
        later_than_start("stop", self.stop, self.start)?;
        if let Some(b) = self.bytes {
            if !(1..=MAX_FLOW_BYTES).contains(&b) {
                return Err(out_of_range("bytes", b, format!("1 to {MAX_FLOW_BYTES} bytes")));
            }
        }
        self.tcp.check().map_err(|e| e.within("tcp"))?;
        fits_buffer("mss", self.tcp.mss + self.tcp.header_bytes, self.tcp.header_bytes, link)
            .map_err(|e| e.within("tcp"))?;
        Ok(alg)
    }
}

/// A packet of `wire` bytes (`header` of them headers) must fit a buffer counted in
/// bytes, or the bottleneck drops every one and the run "succeeds" with nothing
/// delivered. `field` is the size's own field (its value is `wire - header`).
fn fits_buffer(field: &str, wire: u32, header: u32, link: &LinkConfig) -> Result<(), SimError> {
    match link.buffer {
        Buffer::Bytes(b) if u64::from(wire) > b => Err(SimError::new(
            field,
            (wire - header).to_string(),
            format!(
                "a packet of {wire} bytes on the wire does not fit bottleneck.buffer = {b} bytes, which would drop every one; allowed: at most {} bytes with this buffer",
                b.saturating_sub(u64::from(header))
            ),
        )),
        _ => Ok(()),
    }
}

impl TcpConfig {
    pub fn check(&self) -> Result<(), SimError> {
        if !(MSS.0..=MSS.1).contains(&self.mss) {
            return Err(out_of_range("mss", self.mss, LIMITS_MSS.allowed()));
        }
        if !(INIT_CWND.0..=INIT_CWND.1).contains(&self.init_cwnd) {
            return Err(out_of_range("init_cwnd", self.init_cwnd, LIMITS_INITCWND.allowed()));
        }
        time_in("rto_min", self.rto_min, RTO_MIN.0, RTO_MIN.1)?;
        if self.rto_min > self.rto_max {
            return Err(SimError::new(
                "rto_min",
                self.rto_min.to_string(),
                format!("must be at most rto_max = {}", self.rto_max),
            ));
        }
        if self.rto_initial == Duration::ZERO {
            return Err(SimError::new("rto_initial", "0s", "must be positive"));
        }
        let d = &self.delayed_ack;
        if d.enabled && d.every == 0 {
            return Err(SimError::new("delayed_ack.every", "0", "allowed at least 1 segment"));
        }
        if d.enabled && d.timeout == Duration::ZERO {
            return Err(SimError::new(
                "delayed_ack.timeout",
                d.timeout.to_string(),
                "must be positive",
            ));
        }
        if let Some(w) = self.rwnd {
            if !(self.mss as u64..=MAX_RWND).contains(&w) {
                return Err(out_of_range(
                    "rwnd",
                    w,
                    format!("{} to {MAX_RWND} bytes (at least one segment)", self.mss),
                ));
            }
        }
        if !LINUX_HZ.contains(&self.hz) {
            return Err(SimError::new(
                "hz",
                self.hz.to_string(),
                format!("allowed: {LINUX_HZ_ALLOWED}"),
            ));
        }
        time_in("host_delay", self.host_delay, Duration::ZERO, MAX_HOST_DELAY)?;
        time_in("read_delay", self.read_delay, Duration::ZERO, MAX_HOST_DELAY)?;
        let tick = self.tick();
        if self.tick_phase >= tick {
            return Err(out_of_range(
                "tick_phase",
                self.tick_phase,
                format!("0us to under one tick ({tick} at hz = {})", self.hz),
            ));
        }
        Ok(())
    }
}

impl CrossConfig {
    /// Checks the source on `link`, whose buffer its packets must fit.
    pub fn check(&self, link: &LinkConfig) -> Result<(), SimError> {
        rate_in("rate", self.rate)?;
        let (lo, hi) = PACKET_BYTES;
        if !(lo..=hi).contains(&self.packet_bytes) {
            return Err(out_of_range(
                "packet_bytes",
                self.packet_bytes,
                format!("{lo} to {hi} bytes"),
            ));
        }
        if let CrossKind::Exponential { mean_on, mean_off } = self.kind {
            time_in("mean_on", mean_on, Duration::from_micros(1), MAX_DURATION)?;
            time_in("mean_off", mean_off, Duration::from_micros(1), MAX_DURATION)?;
        }
        fits_buffer("packet_bytes", self.packet_bytes, 0, link)?;
        later_than_start("stop", self.stop, self.start)
    }
}

impl ParamChange {
    /// Checks the change against the flows of its configuration; fields are `flow` and
    /// `set.<name>`.
    pub fn check(&self, flows: &[FlowConfig]) -> Result<(), SimError> {
        self.check_as(flows, self.flow)
    }

    /// [`check`](Self::check), its messages calling the flow `shown` (a scenario file's
    /// number for it, which may not be its index in the run).
    pub fn check_as(&self, flows: &[FlowConfig], shown: usize) -> Result<(), SimError> {
        let f = flows.get(self.flow).ok_or_else(|| flow_index_error(self.flow, flows.len()))?;
        let mut alg = f.algorithm()?;
        for (name, v) in &self.set {
            apply_param(shown, &mut alg, name, *v).map_err(|e| e.within("set"))?;
        }
        Ok(())
    }
}

/// A flow index that is not one of the `n` flows.
pub(crate) fn flow_index_error(i: usize, n: usize) -> SimError {
    out_of_range("flow", i, flow_indices_allowed(n))
}

/// The flow indices allowed among `n` flows, for an error message.
pub fn flow_indices_allowed(n: usize) -> String {
    match n {
        0 => "none: there are no flows".to_string(),
        1 => "0 (there is 1 flow)".to_string(),
        n => format!("a whole number in [0, {}] (there are {n} flows)", n - 1),
    }
}

/// A TCP-level setting that a parameter change asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpChange {
    RtoMin(Duration),
    InitCwnd(u32),
}

/// A refused value as an error shows it: as written for everyday magnitudes, in
/// exponent form beyond them (1e308 rather than its 309 digits).
fn shown_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-6..1e15).contains(&v.abs()) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

/// Applies `name = value` to flow `i` whose algorithm is `alg`: the algorithm's own
/// parameters are set on `alg` (which checks them against their spec), TCP-level ones
/// ([`TCP_PARAMS`]: `rto_min` in milliseconds, `initcwnd` in segments) are checked
/// against their limits and returned for the sender. A scheduled change is checked on
/// a fresh copy of the flow's algorithm; a live one goes to the running algorithm.
pub fn apply_param(
    i: usize,
    alg: &mut Algorithm,
    name: &str,
    value: f64,
) -> Result<Option<TcpChange>, SimError> {
    let who = format!("flow {i} ({})", alg.name());
    // The TCP-level settings take whole numbers within their limits.
    let refuse = |limit: &TcpLimit| {
        let (lo, hi) = (limit.min as f64, limit.max as f64);
        let what = if (lo..=hi).contains(&value) && value.fract() != 0.0 {
            "not a whole number".to_string()
        } else {
            format!("out of range for {who}")
        };
        let allowed = limit.allowed();
        Err(SimError::new(name, shown_number(value), format!("{what}; allowed: {allowed}")))
    };
    let whole_in = |lo: u64, hi: u64| {
        value.is_finite() && value.fract() == 0.0 && value >= lo as f64 && value <= hi as f64
    };
    match name {
        "rto_min" => {
            if !whole_in(LIMITS_RTO_MIN.min, LIMITS_RTO_MIN.max) {
                return refuse(&LIMITS_RTO_MIN);
            }
            Ok(Some(TcpChange::RtoMin(Duration::from_millis(value as u64))))
        }
        "initcwnd" => {
            if !whole_in(LIMITS_INITCWND.min, LIMITS_INITCWND.max) {
                return refuse(&LIMITS_INITCWND);
            }
            Ok(Some(TcpChange::InitCwnd(value as u32)))
        }
        _ => match alg.set_param(name, value) {
            Ok(()) => Ok(None),
            Err(e @ (ParamError::OutOfRange { .. } | ParamError::NotWhole { .. })) => {
                Err(SimError::new(name, shown_number(value), e.about_value(&who).expect("a value")))
            }
            Err(ParamError::Unknown { known, .. }) => {
                let accepts: Vec<&str> =
                    known.into_iter().chain(TCP_PARAMS.iter().copied()).collect();
                Err(SimError::new(
                    name,
                    shown_number(value),
                    format!(
                        "{who} has no parameter \"{name}\"; it accepts: {}",
                        accepts.join(", ")
                    ),
                ))
            }
        },
    }
}
