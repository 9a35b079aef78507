//! The event loop and the dumbbell.
//!
//! Topology and delays: each flow's sender hands segments straight to the bottleneck
//! queue (forward access delay zero); the bottleneck link serialises them (or delivers
//! them at trace opportunities) and they reach the receiver `delay` later; ACKs return
//! over an uncongested path of `rtt - delay`. So a flow's base RTT is exactly its `rtt`.
//! Where along the loop the access delay sits does not change any flow's dynamics (it
//! only shifts a sender's clock), and putting it on the return path saves one event per
//! packet.
//!
//! Speed: events are 24-byte entries ordered by (time, insertion sequence), kept in a
//! binary heap, except per-flow timers (RTO, delayed ACK), which sit in a calendar queue
//! (`wheel.rs`); the earlier head of the two runs next. Packets never get their
//! own heap entry while they sit in a FIFO with a constant delay: the bottleneck
//! schedules only its head packet's departure, the bottleneck-to-receivers pipe and each
//! ACK path (one per distinct return delay) schedule only their head (htsim's trick), so
//! the heap holds O(ACK paths + cross sources) entries. Packets are `Copy` structs in
//! `VecDeque`s that grow once and are reused: no allocation per packet. Timers (RTO,
//! delayed ACK) are lazy: a deadline field per flow, and an event only when the deadline
//! moves earlier than the pending one.

use crate::config::*;
use crate::error::SimError;
use crate::loss::Loss;
use crate::output::*;
use crate::qdisc::{Queue, QueuedPacket};
use crate::rng::{stream, Rng};
use crate::tcp::{Ack, Segment, TcpReceiver, TcpSender};
use crate::trace::LinkSchedule;
use crate::wheel::{Timed, Wheel};
use cclab_cc::tcp_limits::{TcpLimit, INITCWND, RTO_MIN_MS};
use cclab_cc::{Algorithm, CongestionControl};
use cclab_units::{Duration, Time};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

impl Timed for Event {
    fn time(&self) -> u64 {
        self.time
    }
}

/// Limits on what a configuration may ask for (memory and sanity).
pub const MAX_FLOWS: usize = 1_000_000;
pub const MAX_CROSS: usize = 100_000;

impl QueuedPacket for Segment {
    fn size_bytes(&self) -> u32 {
        self.wire_bytes
    }
    fn flow_key(&self) -> u64 {
        self.flow as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The bottleneck finished sending its head packet.
    LinkDone,
    /// The head of the bottleneck-to-receivers pipe arrives.
    Arrive,
    /// The head of ACK path i arrives at its sender.
    AckArrive(u32),
    Rto(u32),
    DelAck(u32),
    FlowStart(u32),
    FlowStop(u32),
    Cross(u32),
    Sample,
    Change(u32),
}

#[derive(Clone, Copy, Debug)]
struct Event {
    time: u64,
    seq: u64,
    kind: Kind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest, FIFO among equals.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

struct Flow {
    name: String,
    sender: TcpSender,
    receiver: TcpReceiver,
    /// Index of the ACK path (shared by all flows with the same return delay).
    ack_path: u32,
    start: Time,
    stop: Option<Time>,
    started: bool,
    /// Time of the earliest pending Rto / DelAck event, if any.
    rto_ev: Option<Time>,
    delack_ev: Option<Time>,
}

/// A UDP source.
struct Cross {
    cfg: CrossConfig,
    rng: Rng,
    /// Exponential on/off: end of the current on period.
    on_until: Time,
}

/// Everything but the flows: the network, the clock and the event heap.
struct Net {
    heap: BinaryHeap<Event>,
    /// Per-flow timers (RTO, delayed ACK) in a calendar queue: there is one or two per
    /// flow, and keeping them out of `heap` keeps the hot heap a few entries deep.
    timers: Wheel<Event>,
    /// ACKs on their way back, one FIFO per distinct return delay: (arrival time, ACK).
    ack_paths: Vec<(Duration, VecDeque<(u64, Ack)>)>,
    seq: u64,
    events: u64,
    now: Time,
    queue: Queue<Segment>,
    queue_rng: Rng,
    link: LinkSchedule,
    delay: Duration,
    /// The packet being sent by the bottleneck.
    in_service: Option<Segment>,
    /// Bottleneck-to-receivers pipe: (arrival time, packet).
    pipe: VecDeque<(u64, Segment)>,
    loss: Loss,
    loss_rng: Rng,
    n_flows: u32,
    delivered_packets: u64,
    delivered_bytes: u64,
    random_losses: u64,
    /// Integral of queue length (packets) over time, packet-nanoseconds.
    queue_area: u128,
    queue_area_since: Time,
}

impl Net {
    #[inline]
    fn schedule(&mut self, at: Time, kind: Kind) {
        let ev = Event { time: at.0, seq: self.seq, kind };
        self.seq += 1;
        match kind {
            Kind::Rto(_) | Kind::DelAck(_) => self.timers.push(ev),
            _ => self.heap.push(ev),
        }
    }

    /// Removes and returns the earliest event of both heaps if it is due by `t`.
    #[inline]
    fn pop_due(&mut self, t: Time) -> Option<Event> {
        let h = self.heap.peek().map(|e| (e.time, e.seq));
        let m = self.timers.peek().map(|e| (e.time, e.seq));
        let from_timers = match (h, m) {
            (None, None) => return None,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(b)) => b < a,
        };
        let due = |e: Option<(u64, u64)>| e.is_some_and(|(time, _)| time <= t.0);
        if from_timers {
            if due(m) {
                self.timers.pop()
            } else {
                None
            }
        } else if due(h) {
            self.heap.pop()
        } else {
            None
        }
    }

    #[inline]
    fn account_queue(&mut self) {
        let dt = self.now.0 - self.queue_area_since.0;
        self.queue_area += self.queue.len_packets() as u128 * dt as u128;
        self.queue_area_since = self.now;
    }

    /// A packet arrives at the bottleneck: random loss, then the queue.
    fn offer(&mut self, pkt: Segment) {
        if self.loss.drop_packet(&mut self.loss_rng) {
            self.random_losses += 1;
            return;
        }
        self.account_queue();
        if self.queue.enqueue(self.now, pkt, &mut self.queue_rng).is_err() {
            return;
        }
        if self.in_service.is_none() {
            self.start_service();
        }
    }

    fn start_service(&mut self) {
        self.account_queue();
        if let Some(p) = self.queue.dequeue(self.now) {
            let done = self.link.transmit(self.now, p.wire_bytes as u64);
            self.in_service = Some(p);
            self.schedule(done, Kind::LinkDone);
        }
    }

    fn link_done(&mut self) {
        let Some(p) = self.in_service.take() else { return };
        self.delivered_packets += 1;
        self.delivered_bytes += p.wire_bytes as u64;
        if p.flow < self.n_flows {
            let at = self.now + self.delay;
            if self.pipe.is_empty() {
                self.schedule(at, Kind::Arrive);
            }
            self.pipe.push_back((at.0, p));
        }
        self.start_service();
    }
}

/// A running simulation. See the crate documentation.
pub struct Simulation {
    cfg: SimConfig,
    net: Net,
    flows: Vec<Flow>,
    cross: Vec<Cross>,
    end: Time,
    capacity_bytes: u64,
    sample: FlowSample,
}

fn err(field: impl Into<String>, msg: impl Into<String>) -> SimError {
    SimError::new(field, msg)
}

/// Checks a configuration; errors name the field, the value and what is allowed.
pub fn validate(cfg: &SimConfig) -> Result<(), SimError> {
    if cfg.duration == Duration::ZERO {
        return Err(err("duration", "0s: a run must last longer than zero"));
    }
    if cfg.sample_interval == Duration::ZERO {
        return Err(err("sample_interval", "0s: must be positive"));
    }
    let b = &cfg.bottleneck;
    match &b.rate {
        LinkRate::Constant(r) if r.0 == 0 => {
            return Err(err("bottleneck.rate", "0bps: the link rate must be positive"))
        }
        LinkRate::Trace(t) if t.opportunities_ms.is_empty() || t.period_ms == 0 => {
            return Err(err("bottleneck.trace", "the trace has no delivery opportunities"))
        }
        _ => {}
    }
    match b.buffer {
        Buffer::Packets(0) | Buffer::Bytes(0) => {
            return Err(err("bottleneck.buffer", "0: the buffer must hold at least one packet"))
        }
        Buffer::Packets(n) if n > 100_000_000 => {
            return Err(err(
                "bottleneck.buffer",
                format!("{n} packets is absurd (at most 100000000)"),
            ))
        }
        _ => {}
    }
    match &b.qdisc {
        Qdisc::Red(r) => {
            if !(r.min_th >= 0.0 && r.max_th > r.min_th) {
                return Err(err(
                    "bottleneck.qdisc.max_th",
                    format!(
                        "min_th = {}, max_th = {}: need 0 <= min_th < max_th",
                        r.min_th, r.max_th
                    ),
                ));
            }
            if !(r.max_p > 0.0 && r.max_p <= 1.0) {
                return Err(err("bottleneck.qdisc.max_p", format!("{}: allowed (0, 1]", r.max_p)));
            }
            if !(r.weight > 0.0 && r.weight <= 1.0) {
                return Err(err(
                    "bottleneck.qdisc.weight",
                    format!("{}: allowed (0, 1]", r.weight),
                ));
            }
        }
        Qdisc::Codel(c) | Qdisc::FqCodel(c) => {
            for (name, d) in [("target", c.target), ("interval", c.interval)] {
                if d == Duration::ZERO {
                    return Err(err(
                        format!("bottleneck.qdisc.{name}"),
                        format!("{d}: must be positive"),
                    ));
                }
            }
        }
        Qdisc::Pie(p) => {
            for (name, d) in [("target", p.target), ("tupdate", p.tupdate)] {
                if d == Duration::ZERO {
                    return Err(err(
                        format!("bottleneck.qdisc.{name}"),
                        format!("{d}: must be positive"),
                    ));
                }
            }
            for (name, g) in [("alpha", p.alpha), ("beta", p.beta)] {
                if !(g >= 0.0 && g.is_finite()) {
                    return Err(err(
                        format!("bottleneck.qdisc.{name}"),
                        format!("{g}: allowed a finite number >= 0"),
                    ));
                }
            }
        }
        Qdisc::DropTail => {}
    }
    if let Err((name, v)) = Loss::validate(&b.loss) {
        return Err(err(
            format!("bottleneck.loss.{name}"),
            format!("{v}: a probability must be in [0, 1]"),
        ));
    }
    if cfg.flows.len() > MAX_FLOWS {
        return Err(err(
            "flows",
            format!("{} flows: at most {MAX_FLOWS} fit in memory", cfg.flows.len()),
        ));
    }
    if cfg.cross.len() > MAX_CROSS {
        return Err(err("cross", format!("{} sources: at most {MAX_CROSS}", cfg.cross.len())));
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        let field = |x: &str| format!("flows[{i}].{x}");
        let mut alg = Algorithm::new(&f.cc).map_err(|e| err(field("cc"), e.to_string()))?;
        for (name, v) in &f.params {
            alg.set_param(name, *v)
                .map_err(|e| err(field(&format!("params.{name}")), e.to_string()))?;
        }
        if f.rtt < b.delay.saturating_mul(2) || f.rtt == Duration::ZERO {
            return Err(err(
                field("rtt"),
                format!(
                    "{}: must be positive and at least twice the bottleneck delay ({})",
                    f.rtt,
                    b.delay.saturating_mul(2)
                ),
            ));
        }
        if let Some(stop) = f.stop {
            if stop < f.start {
                return Err(err(field("stop"), format!("{stop} is before start {}", f.start)));
            }
        }
        if f.bytes == Some(0) {
            return Err(err(field("bytes"), "0: a finite transfer needs at least one byte"));
        }
        let t = &f.tcp;
        t.check_limits().map_err(|(name, why)| err(field(&format!("tcp.{name}")), why))?;
        if t.rto_initial == Duration::ZERO {
            return Err(err(field("tcp.rto_initial"), "0s: must be positive"));
        }
        if t.delayed_ack.enabled && t.delayed_ack.every == 0 {
            return Err(err(field("tcp.delayed_ack.every"), "0: allowed at least 1 segment"));
        }
        if t.delayed_ack.enabled && t.delayed_ack.timeout == Duration::ZERO {
            return Err(err(
                field("tcp.delayed_ack.timeout"),
                format!("{}: must be positive", t.delayed_ack.timeout),
            ));
        }
        if t.rwnd == Some(0) {
            return Err(err(field("tcp.rwnd"), "0: the receiver window must be positive"));
        }
        if t.hz == 0 {
            return Err(err(field("tcp.hz"), "0: must be positive"));
        }
    }
    for (i, c) in cfg.cross.iter().enumerate() {
        if c.rate.0 == 0 {
            return Err(err(format!("cross[{i}].rate"), "0bps: a source needs a positive rate"));
        }
        if !(28..=65_535).contains(&c.packet_bytes) {
            return Err(err(
                format!("cross[{i}].packet_bytes"),
                format!("{}: allowed 28..=65535", c.packet_bytes),
            ));
        }
        if let CrossKind::Exponential { mean_on, .. } = c.kind {
            if mean_on == Duration::ZERO {
                return Err(err(
                    format!("cross[{i}].mean_on"),
                    "0s: the on period must be positive",
                ));
            }
        }
    }
    for (k, ch) in cfg.changes.iter().enumerate() {
        let f = cfg.flows.get(ch.flow).ok_or_else(|| {
            err(
                format!("changes[{k}].flow"),
                format!("{}: there are {} flows", ch.flow, cfg.flows.len()),
            )
        })?;
        for (name, v) in &ch.set {
            check_param(ch.flow, f, name, *v)
                .map_err(|e| err(format!("changes[{k}].{name}"), e.message))?;
        }
    }
    Ok(())
}

fn check_param(flow: usize, f: &FlowConfig, name: &str, v: f64) -> Result<(), SimError> {
    let field = format!("flows[{flow}].{name}");
    let range = |limit: TcpLimit| {
        if v.is_finite() && v.fract() == 0.0 && v >= 0.0 && limit.contains(v as u64) {
            Ok(())
        } else {
            Err(err(&field, format!("flow {flow} (\"{}\"): parameter \"{name}\" = {v} is out of range; allowed: an integer in [{}, {}] {}", f.name, limit.min, limit.max, limit.unit)))
        }
    };
    match name {
        "rto_min" => range(RTO_MIN_MS),
        "initcwnd" => range(INITCWND),
        _ => {
            let mut alg = Algorithm::new(&f.cc).map_err(|e| err(&field, e.to_string()))?;
            alg.set_param(name, v).map_err(|e| {
                err(
                    &field,
                    format!(
                        "flow {flow} (\"{}\"): {e}; TCP parameters: {}",
                        f.name,
                        TCP_PARAMS.join(", ")
                    ),
                )
            })
        }
    }
}

impl Simulation {
    pub fn new(cfg: SimConfig) -> Result<Simulation, SimError> {
        validate(&cfg)?;
        let b = &cfg.bottleneck;
        let mean_rate = match &b.rate {
            LinkRate::Constant(r) => *r,
            LinkRate::Trace(t) => t.mean_rate(),
        };
        let mut queue_rng = Rng::stream(cfg.seed, stream::QUEUE, 0);
        let queue = Queue::new(&b.qdisc, b.buffer, mean_rate.tx_time(1500), &mut queue_rng);
        let end = Time(cfg.duration.0);
        // One ACK path per distinct return delay, numbered in order of first use.
        let mut path_of: std::collections::BTreeMap<Duration, u32> = Default::default();
        let mut ack_paths = Vec::new();
        for f in &cfg.flows {
            let d = f.rtt.saturating_sub(b.delay);
            path_of.entry(d).or_insert_with(|| {
                ack_paths.push((d, VecDeque::new()));
                ack_paths.len() as u32 - 1
            });
        }
        let mut net = Net {
            heap: BinaryHeap::with_capacity(ack_paths.len() + cfg.cross.len() + 16),
            timers: Wheel::new(),
            ack_paths,
            seq: 0,
            events: 0,
            now: Time::ZERO,
            queue,
            queue_rng,
            link: LinkSchedule::new(&b.rate),
            delay: b.delay,
            in_service: None,
            pipe: VecDeque::new(),
            loss: Loss::new(b.loss.clone()),
            loss_rng: Rng::stream(cfg.seed, stream::LOSS, 0),
            n_flows: cfg.flows.len() as u32,
            delivered_packets: 0,
            delivered_bytes: 0,
            random_losses: 0,
            queue_area: 0,
            queue_area_since: Time::ZERO,
        };
        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let mut alg = Algorithm::new(&f.cc).expect("validated");
            for (name, v) in &f.params {
                alg.set_param(name, *v).expect("validated");
            }
            let sender = TcpSender::new(i as u32, alg, f.tcp.clone(), f.bytes);
            let receiver = TcpReceiver::new(i as u32, f.tcp.mss, f.bytes, f.tcp.delayed_ack);
            flows.push(Flow {
                name: f.name.clone(),
                sender,
                receiver,
                ack_path: path_of[&f.rtt.saturating_sub(b.delay)],
                start: f.start,
                stop: f.stop,
                started: false,
                rto_ev: None,
                delack_ev: None,
            });
            if f.start < end {
                net.schedule(f.start, Kind::FlowStart(i as u32));
            }
            if let Some(s) = f.stop {
                if s < end {
                    net.schedule(s, Kind::FlowStop(i as u32));
                }
            }
        }
        let mut cross = Vec::with_capacity(cfg.cross.len());
        for (i, c) in cfg.cross.iter().enumerate() {
            cross.push(Cross {
                cfg: c.clone(),
                rng: Rng::stream(cfg.seed, stream::CROSS, i as u64),
                on_until: Time::ZERO,
            });
            if c.start < end {
                net.schedule(c.start, Kind::Cross(i as u32));
            }
        }
        for (k, ch) in cfg.changes.iter().enumerate() {
            if ch.at <= end {
                net.schedule(ch.at, Kind::Change(k as u32));
            }
        }
        net.schedule(Time::ZERO, Kind::Sample);
        let capacity_bytes = LinkSchedule::capacity_bytes(&b.rate, end);
        let sample = FlowSample {
            time: Time::ZERO,
            flow: 0,
            cwnd_pkts: 0,
            ssthresh_pkts: 0,
            srtt: Duration::ZERO,
            inflight_pkts: 0,
            delivered_bytes: 0,
            retransmits: 0,
            cc: Vec::new(),
        };
        Ok(Simulation { cfg, net, flows, cross, end, capacity_bytes, sample })
    }

    /// Runs to the end and returns the report.
    pub fn run(&mut self, obs: &mut dyn Observer) -> Report {
        self.run_until(self.end, obs);
        self.report()
    }

    /// Processes every event up to and including time `t` (capped at the run's end) and
    /// moves the clock to `t`. Returns true when the run is finished.
    pub fn run_until(&mut self, t: Time, obs: &mut dyn Observer) -> bool {
        let t = t.min(self.end);
        while let Some(ev) = self.net.pop_due(t) {
            self.net.now = Time(ev.time);
            self.net.events += 1;
            self.handle(ev.kind, obs);
        }
        if t > self.net.now {
            self.net.now = t;
        }
        self.net.now >= self.end
    }

    pub fn now(&self) -> Time {
        self.net.now
    }

    pub fn events(&self) -> u64 {
        self.net.events
    }

    /// Changes a parameter of a running flow: an algorithm parameter (by the algorithm's
    /// own name, validated by its `ParamSpec`) or a TCP one (`rto_min` in ms, `initcwnd`
    /// in segments; see [`TCP_PARAMS`]).
    pub fn set_param(&mut self, flow: usize, name: &str, value: f64) -> Result<(), SimError> {
        let fc = self.cfg.flows.get(flow).ok_or_else(|| {
            err(
                "flow",
                format!(
                    "{flow}: there are {} flows (0..{})",
                    self.cfg.flows.len(),
                    self.cfg.flows.len()
                ),
            )
        })?;
        check_param(flow, fc, name, value)?;
        let s = &mut self.flows[flow].sender;
        match name {
            "rto_min" => s.set_rto_min(Duration::from_micros((value * 1000.0) as u64)),
            "initcwnd" => s.set_init_cwnd(value as u32),
            _ => {
                s.ca.set_param(name, value)
                    .map_err(|e| err(format!("flows[{flow}].{name}"), e.to_string()))?
            }
        }
        Ok(())
    }

    fn handle(&mut self, kind: Kind, obs: &mut dyn Observer) {
        match kind {
            Kind::LinkDone => self.net.link_done(),
            Kind::Arrive => self.arrive(),
            Kind::AckArrive(f) => self.ack_arrive(f as usize),
            Kind::Rto(f) => self.rto(f as usize),
            Kind::DelAck(f) => self.delack(f as usize),
            Kind::FlowStart(f) => {
                let now = self.net.now;
                let fl = &mut self.flows[f as usize];
                fl.started = true;
                fl.sender.start(now);
                self.send(f as usize);
            }
            Kind::FlowStop(f) => self.flows[f as usize].sender.close(),
            Kind::Cross(i) => self.cross(i as usize),
            Kind::Sample => self.take_samples(obs),
            Kind::Change(k) => {
                let ch = self.cfg.changes[k as usize].clone();
                for (name, v) in &ch.set {
                    if self.set_param(ch.flow, name, *v).is_ok() {
                        obs.param_changed(self.net.now, ch.flow, name, *v);
                    }
                }
            }
        }
    }

    /// Lets flow `f` send, then makes sure its RTO timer has an event.
    fn send(&mut self, f: usize) {
        let now = self.net.now;
        let net = &mut self.net;
        let fl = &mut self.flows[f];
        fl.sender.transmit(now, &mut |seg| net.offer(seg));
        Self::arm_rto(net, fl, f);
    }

    fn arm_rto(net: &mut Net, fl: &mut Flow, f: usize) {
        if let Some(d) = fl.sender.rto_deadline() {
            if fl.rto_ev.is_none_or(|e| e > d) {
                net.schedule(d, Kind::Rto(f as u32));
                fl.rto_ev = Some(d);
            }
        }
    }

    fn arrive(&mut self) {
        let now = self.net.now;
        let Some((_, seg)) = self.net.pipe.pop_front() else { return };
        if let Some(&(t, _)) = self.net.pipe.front() {
            self.net.schedule(Time(t), Kind::Arrive);
        }
        let f = seg.flow as usize;
        let fl = &mut self.flows[f];
        match fl.receiver.on_data(now, &seg) {
            Some(ack) => Self::push_ack(&mut self.net, fl, ack),
            None => {
                if let Some(d) = fl.receiver.delack_deadline() {
                    if fl.delack_ev.is_none_or(|e| e > d) {
                        self.net.schedule(d, Kind::DelAck(f as u32));
                        fl.delack_ev = Some(d);
                    }
                }
            }
        }
    }

    fn push_ack(net: &mut Net, fl: &Flow, ack: Ack) {
        let p = fl.ack_path as usize;
        let at = net.now + net.ack_paths[p].0;
        if net.ack_paths[p].1.is_empty() {
            net.schedule(at, Kind::AckArrive(p as u32));
        }
        net.ack_paths[p].1.push_back((at.0, ack));
    }

    fn ack_arrive(&mut self, p: usize) {
        let now = self.net.now;
        let path = &mut self.net.ack_paths[p].1;
        let Some((_, ack)) = path.pop_front() else { return };
        if let Some(&(t, _)) = path.front() {
            self.net.schedule(Time(t), Kind::AckArrive(p as u32));
        }
        let f = ack.flow as usize;
        let fl = &mut self.flows[f];
        fl.sender.on_ack(now, &ack);
        self.send(f);
    }

    fn rto(&mut self, f: usize) {
        let now = self.net.now;
        let fl = &mut self.flows[f];
        if fl.rto_ev == Some(now) {
            fl.rto_ev = None;
        }
        match fl.sender.rto_deadline() {
            Some(d) if d <= now => {
                fl.sender.on_rto(now);
                self.send(f);
            }
            Some(_) => Self::arm_rto(&mut self.net, fl, f),
            None => {}
        }
    }

    fn delack(&mut self, f: usize) {
        let now = self.net.now;
        let fl = &mut self.flows[f];
        if fl.delack_ev == Some(now) {
            fl.delack_ev = None;
        }
        match fl.receiver.delack_deadline() {
            Some(d) if d <= now => {
                if let Some(ack) = fl.receiver.on_delack_timer(now) {
                    Self::push_ack(&mut self.net, fl, ack);
                }
            }
            Some(d) if fl.delack_ev.is_none_or(|e| e > d) => {
                self.net.schedule(d, Kind::DelAck(f as u32));
                fl.delack_ev = Some(d);
            }
            _ => {}
        }
    }

    fn cross(&mut self, i: usize) {
        let now = self.net.now;
        let n_flows = self.flows.len() as u32;
        let c = &mut self.cross[i];
        if c.cfg.stop.is_some_and(|s| now >= s) {
            return;
        }
        let bytes = c.cfg.packet_bytes;
        let mean_gap_ns = bytes as f64 * 8.0 * 1e9 / c.cfg.rate.0 as f64;
        let next = match c.cfg.kind {
            CrossKind::Cbr => Some(now + Duration(mean_gap_ns.round().max(1.0) as u64)),
            CrossKind::Poisson => {
                Some(now + Duration(c.rng.exponential(mean_gap_ns).round().max(1.0) as u64))
            }
            CrossKind::Exponential { mean_on, mean_off } => {
                // Sends at rate / duty while on, so the long-run mean is `rate`.
                let duty = mean_on.0 as f64 / (mean_on.0 + mean_off.0) as f64;
                let gap = Duration((mean_gap_ns * duty).round().max(1.0) as u64);
                if now >= c.on_until {
                    // Start a new on period after an off period (none at the very start).
                    let off = if c.on_until == Time::ZERO && now == c.cfg.start {
                        0.0
                    } else {
                        c.rng.exponential(mean_off.0 as f64)
                    };
                    let start = now + Duration(off.round() as u64);
                    c.on_until = start
                        + Duration(c.rng.exponential(mean_on.0 as f64).round().max(1.0) as u64);
                    if start > now {
                        self.net.schedule(start, Kind::Cross(i as u32));
                        return;
                    }
                }
                Some(now + gap)
            }
        };
        let pkt =
            Segment { flow: n_flows + i as u32, seq: 0, payload: 0, wire_bytes: bytes, tsval: now };
        self.net.offer(pkt);
        if let Some(t) = next {
            if t < self.end {
                self.net.schedule(t, Kind::Cross(i as u32));
            }
        }
    }

    fn flow_active(fl: &Flow, now: Time) -> bool {
        fl.started && !fl.sender.is_complete() && fl.stop.is_none_or(|s| now < s)
    }

    fn take_samples(&mut self, obs: &mut dyn Observer) {
        let now = self.net.now;
        if obs.wants_flow_samples() {
            for (i, fl) in self.flows.iter().enumerate() {
                if !Self::flow_active(fl, now) {
                    continue;
                }
                let s = &mut self.sample;
                let tp = &fl.sender.tp;
                s.time = now;
                s.flow = i;
                s.cwnd_pkts = tp.snd_cwnd;
                s.ssthresh_pkts = tp.snd_ssthresh;
                s.srtt = Duration::from_micros(tp.srtt_us() as u64);
                s.inflight_pkts = fl.sender.in_flight();
                s.delivered_bytes = fl.receiver.delivered_bytes();
                s.retransmits = fl.sender.stats.retransmits;
                s.cc.clear();
                fl.sender.ca.inspect(&mut |k, v| s.cc.push((k, v)));
                obs.flow_sample(s);
            }
        }
        self.net.account_queue();
        obs.queue_sample(&QueueSample {
            time: now,
            packets: self.net.queue.len_packets(),
            bytes: self.net.queue.len_bytes(),
            drops: self.net.queue.drops() + self.net.random_losses,
        });
        let next = now + self.cfg.sample_interval;
        if next <= self.end {
            self.net.schedule(next, Kind::Sample);
        }
    }

    /// The report as of now (final after `run`).
    pub fn report(&self) -> Report {
        let now = self.net.now;
        let elapsed = now.0.max(1);
        let capacity_bytes = if now >= self.end {
            self.capacity_bytes
        } else {
            LinkSchedule::capacity_bytes(&self.cfg.bottleneck.rate, now)
        };
        let capacity_bps = match &self.cfg.bottleneck.rate {
            LinkRate::Constant(r) => r.0 as f64,
            LinkRate::Trace(_) => capacity_bytes as f64 * 8.0 / (elapsed as f64 / 1e9),
        };
        let area = self.net.queue_area
            + self.net.queue.len_packets() as u128 * (now.0 - self.net.queue_area_since.0) as u128;
        let link = LinkReport {
            capacity_bps,
            utilization: if capacity_bytes == 0 {
                0.0
            } else {
                (self.net.delivered_bytes as f64 / capacity_bytes as f64).min(1.0)
            },
            delivered_packets: self.net.delivered_packets,
            delivered_bytes: self.net.delivered_bytes,
            queue_drops: self.net.queue.drops(),
            random_losses: self.net.random_losses,
            mean_queue_packets: area as f64 / elapsed as f64,
        };
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let delivered = fl.receiver.delivered_bytes();
                let st = &fl.sender.stats;
                let until = [Some(now), fl.stop, st.completed_at]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(now);
                let active = until.saturating_since(fl.start);
                let goodput_bps = if fl.started && active.0 > 0 {
                    delivered as f64 * 8.0 / active.as_secs_f64()
                } else {
                    0.0
                };
                let h = &st.rtt_us;
                FlowReport {
                    flow: i,
                    delivered_bytes: delivered,
                    goodput_bps,
                    retransmits: st.retransmits,
                    timeouts: st.timeouts,
                    rtt: RttSummary {
                        samples: h.count(),
                        mean_ms: h.mean() / 1000.0,
                        p50_ms: h.quantile(0.5) / 1000.0,
                        p95_ms: h.quantile(0.95) / 1000.0,
                        p99_ms: h.quantile(0.99) / 1000.0,
                    },
                    completed_at: st.completed_at,
                }
            })
            .collect();
        Report { duration: Duration(now.0), link, flows, events: self.net.events }
    }

    /// Flow `i`'s sender (read-only), for tests and inspection.
    pub fn sender(&self, i: usize) -> &TcpSender {
        &self.flows[i].sender
    }

    /// Flow `i`'s display name.
    pub fn flow_name(&self, i: usize) -> &str {
        &self.flows[i].name
    }
}
