//! The event loop and the dumbbell: building a run from its configuration, and the
//! handlers of its events. The network under the flows is in `net.rs`, the time series
//! in `sampling.rs`, the end-of-run totals in `report.rs`; cross traffic's timing is
//! [`crate::cross`] and the rules a configuration follows are [`crate::validate`](mod@crate::validate).
//!
//! Topology and delays: each flow's sender hands segments straight to the bottleneck
//! queue (forward access delay zero); the bottleneck link serialises them (or delivers
//! them at trace opportunities) and they reach the receiver `delay` later; ACKs return
//! over an uncongested path of `rtt - delay`. So a flow's base RTT is exactly its `rtt`.
//! Where along the loop the access delay sits does not change any flow's dynamics (it
//! only shifts a sender's clock), and putting it on the return path saves one event per
//! packet.
//!
//! Reverse traffic: in a run with reverse flows or sources (or `reverse_rate`), a second
//! bottleneck serves the other direction (`link.rs`: its own queue with the same buffer
//! and discipline, the forward rate or `reverse_rate`, no random loss). Every ACK then
//! crosses the bottleneck opposite to its flow's data before its path back: a forward
//! flow's ACKs queue at the reverse bottleneck behind the reverse data (the ACK
//! compression of two-way traffic: Zhang, Shenker and Clark, SIGCOMM 1991), a reverse
//! flow's at the forward one. It is the mirror image of the forward path: data reaches
//! its receiver `delay` after leaving its bottleneck, an ACK its sender `rtt - delay`
//! after leaving its own, so base RTTs stay `rtt`. Without reverse traffic no ACK queues
//! anywhere, as before.
//!
//! Speed: events are 24-byte entries ordered by (time, insertion sequence), kept in a
//! queue that is a sorted `Vec` while small (`small_queue.rs`), except per-flow timers
//! (RTO, delayed ACK), which sit in a calendar queue (`wheel.rs`), and the forward
//! bottleneck's next departure and its pipe's next arrival (one pending each, one of each
//! per packet), which sit in two fields of `Net`; the earliest key of these runs next, so
//! the order is that of one queue (the earlier of the heap's and the wheel's heads is
//! kept between pushes and pops, so most events compare three cached keys). A departure
//! is handled where it is found, inside `Net::pop_due`, and does not count as an event.
//! Packets never get their own heap entry while they sit in a FIFO with a constant delay:
//! the bottleneck schedules only its head packet's departure, the bottleneck-to-receivers
//! pipe and each ACK path (one per distinct return delay) schedule only their head
//! (htsim's trick), so the heap holds O(ACK paths + cross sources) entries. With a
//! constant-rate DropTail bottleneck crossed only by TCP data (no reverse link, no cross
//! traffic), a packet's departure is known when it is queued, so it goes straight into
//! the pipe and the queue only counts it; its departure still runs at its place in the
//! order (it ends its queueing and the next one's wait), but copies nothing
//! (`Net::scheduled`). Everything else keeps the packets in the queue. Packets are `Copy`
//! structs in rings (`fifo.rs`, and the queues' own) that grow once and are reused: no
//! allocation per packet. Timers (RTO, delayed ACK) are lazy: a deadline field per flow,
//! and an event only when the deadline moves earlier than the pending one.

mod link;
mod live;
mod net;
mod prefetch;
mod report;
mod sampling;

use crate::config::*;
use crate::cross::{CrossSource, CrossStep};
use crate::error::SimError;
use crate::output::*;
use crate::rng::{stream, Rng};
use crate::tcp::{Ack, Segment, TcpReceiver, TcpSender};
use crate::trace::LinkSchedule;
use crate::validate::{self, apply_param, flow_index_error, TcpChange};
use cclab_units::Time;
use link::{ack_wire_bytes, Packet};
pub use live::LiveClock;
use net::{Kind, Net};

/// One flow's running state (its name and the rest of its configuration stay in
/// `Simulation::cfg`, not copied here).
struct Flow {
    sender: TcpSender,
    receiver: TcpReceiver,
    /// Which way the data goes (the ACKs go the other way).
    direction: Direction,
    /// IP and TCP header bytes of each packet (an ACK's size, before SACK blocks).
    header_bytes: u32,
    start: Time,
    stop: Option<Time>,
    started: bool,
    /// Time of the earliest pending Rto / DelAck event, if any.
    rto_ev: Option<Time>,
    delack_ev: Option<Time>,
}

/// A running simulation. See the crate documentation.
pub struct Simulation {
    cfg: SimConfig,
    net: Net,
    flows: Vec<Flow>,
    cross: Vec<CrossSource>,
    end: Time,
    /// What the link can carry over the whole run (computed once; see `report.rs`).
    capacity_bytes: u64,
    /// The columns of each sampling instant, reused, so sampling allocates only while
    /// they grow to the number of active flows (and nothing in runs without flow samples).
    samples: FlowSamples,
    /// Whether packets, timers and sampling instants load their flows' state ahead
    /// (`prefetch.rs`): only when the flows' state is too big to stay in the caches (see
    /// [`prefetch::worth_it`]); with 100 flows the prefetches cost more than they save.
    prefetch: bool,
    /// Each flow's payload bytes delivered and sent by its `stop`, once it has stopped:
    /// its goodput's and send rate's numerators, as the stop ends its active time (what
    /// it had in flight arrives later, and may be resent). Kept apart from `Flow`, which
    /// the packet path reads.
    by_stop: Vec<Option<(u64, u64)>>,
}

impl Simulation {
    /// Checks `cfg` (see [`crate::validate`](mod@crate::validate)) and builds the run, at time zero.
    pub fn new(cfg: SimConfig) -> Result<Simulation, SimError> {
        validate::check_network(&cfg)?;
        let mut net = Net::new(&cfg);
        let end = Time(cfg.duration.0);
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let mut tcp = crate::tcp::SharedConfig::default();
        for (i, f) in cfg.flows.iter().enumerate() {
            let alg = f.check(&cfg.bottleneck).map_err(|e| e.within(&format!("flows[{i}]")))?;
            let sender = TcpSender::new(i as u32, alg, tcp.of(&f.tcp), f.bytes);
            let recovery = sender.recovery_style();
            let receiver =
                TcpReceiver::new(i as u32, f.tcp.mss, f.bytes, f.tcp.delayed_ack, recovery)
                    .with_read_delay(f.tcp.read_delay)
                    .with_window(f.tcp.psh);
            flows.push(Flow {
                sender,
                receiver,
                direction: f.direction,
                header_bytes: f.tcp.header_bytes,
                start: f.start,
                stop: f.stop,
                started: false,
                rto_ev: None,
                delack_ev: None,
            });
        }
        validate::check_changes(&cfg)?;
        let cross = cfg
            .cross
            .iter()
            .enumerate()
            .map(|(i, c)| {
                CrossSource::new(c.clone(), Rng::stream(cfg.seed, stream::CROSS, i as u64))
            })
            .collect();
        schedule_starts(&mut net, &cfg, end);
        let capacity_bytes = LinkSchedule::capacity_bytes(&cfg.bottleneck.rate, end);
        let samples = FlowSamples::default();
        let prefetch = prefetch::worth_it(flows.len());
        let by_stop = vec![None; flows.len()];
        Ok(Simulation { cfg, net, flows, cross, end, capacity_bytes, samples, prefetch, by_stop })
    }

    /// Runs to the end and returns the report.
    pub fn run(&mut self, obs: &mut dyn Observer) -> Report {
        self.run_until(self.end, obs);
        self.report()
    }

    /// Processes every event up to and including time `t` (capped at the run's end) and
    /// moves the clock to `t`. Returns true when the run is finished.
    pub fn run_until(&mut self, t: Time, obs: &mut dyn Observer) -> bool {
        if self.net.packets.on() {
            self.run_events::<true>(t, obs)
        } else {
            self.run_events::<false>(t, obs)
        }
    }

    /// [`run_until`](Self::run_until), compiled twice: with `LOG` the packet path logs
    /// its events (`Simulation::record_packets`); without, it is the path without a
    /// log at all. A run-time check per event instead, even out of line, cost case (a)
    /// 2.5% more instructions.
    fn run_events<const LOG: bool>(&mut self, t: Time, obs: &mut dyn Observer) -> bool {
        let t = t.min(self.end);
        while let Some(ev) = self.net.pop_due::<LOG>(t) {
            self.net.now = Time(ev.time);
            self.net.events += 1;
            self.handle::<LOG>(ev.kind, obs);
        }
        if t > self.net.now {
            self.net.now = t;
        }
        self.net.now >= self.end
    }

    pub fn now(&self) -> Time {
        self.net.now
    }

    /// Keeps a record of every packet event of the TCP flows (and of the cross traffic at
    /// its bottleneck) from now on: arrivals at a bottleneck with its backlog, drops,
    /// departures from its link and deliveries, as
    /// the testbed's packet log has them ([`PacketRecord`]). Take them with
    /// [`drain_packet_records`](Self::drain_packet_records) as the run goes, or they pile
    /// up (about five per packet). Recording changes nothing in the run.
    pub fn record_packets(&mut self) {
        self.net.record_packets();
    }

    /// The packet events recorded since the last call, in the order they happened.
    pub fn drain_packet_records(&mut self) -> impl Iterator<Item = PacketRecord> + '_ {
        self.net.packets.drain()
    }

    pub fn events(&self) -> u64 {
        self.net.events
    }

    /// Changes a parameter of a running flow: an algorithm parameter (by the algorithm's
    /// own name, validated by its `ParamSpec`) or a TCP one (`rto_min` in ms, `initcwnd`
    /// in segments; see [`TCP_PARAMS`]).
    pub fn set_param(&mut self, flow: usize, name: &str, value: f64) -> Result<(), SimError> {
        let n = self.flows.len();
        let s = &mut self.flows.get_mut(flow).ok_or_else(|| flow_index_error(flow, n))?.sender;
        let change =
            apply_param(flow, s.ca_mut(), name, value).map_err(|e| in_flow(e, flow, name))?;
        match change {
            Some(TcpChange::RtoMin(d)) => s.set_rto_min(d),
            Some(TcpChange::InitCwnd(n)) => s.set_init_cwnd(n),
            None => {}
        }
        Ok(())
    }

    /// How flow `flow` has ended, if it has: a change to it is still made and recorded,
    /// but nothing of it remains to be changed.
    pub fn flow_ended(&self, flow: usize) -> Option<&'static str> {
        let fl = self.flows.get(flow)?;
        if fl.sender.is_complete() {
            Some("has finished its transfer")
        } else if fl.stop.is_some_and(|s| self.net.now >= s) {
            Some("has reached its stop time")
        } else {
            None
        }
    }

    /// Whether [`set_param`](Self::set_param) would take this change, with its error if
    /// not; nothing changes (a copy of the flow's algorithm takes the value). A live change
    /// is checked so before the run steps to where it would land.
    pub fn check_param(&self, flow: usize, name: &str, value: f64) -> Result<(), SimError> {
        let n = self.flows.len();
        let s = &self.flows.get(flow).ok_or_else(|| flow_index_error(flow, n))?.sender;
        let mut copy = s.ca().clone();
        apply_param(flow, &mut copy, name, value).map_err(|e| in_flow(e, flow, name))?;
        Ok(())
    }

    fn handle<const LOG: bool>(&mut self, kind: Kind, obs: &mut dyn Observer) {
        match kind {
            Kind::LinkDone(dir) => self.net.link_done::<LOG>(dir),
            Kind::Arrive(dir) => self.arrive::<LOG>(dir),
            Kind::AckArrive(f) => self.ack_arrive::<LOG>(f as usize),
            Kind::Rto(f) => {
                self.prefetch_next_timer();
                self.rto::<LOG>(f as usize)
            }
            Kind::DelAck(f) => {
                self.prefetch_next_timer();
                self.delack::<LOG>(f as usize)
            }
            Kind::FlowStart(f) => {
                let now = self.net.now;
                let fl = &mut self.flows[f as usize];
                fl.started = true;
                fl.sender.open(now);
                self.send::<LOG>(f as usize);
            }
            Kind::FlowStop(f) => {
                let fl = &mut self.flows[f as usize];
                let counts = (fl.receiver.delivered_bytes(), fl.sender.payload_bytes_sent());
                self.by_stop[f as usize] = Some(counts);
                fl.sender.close();
            }
            Kind::Cross(i) => self.cross::<LOG>(i as usize),
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

    /// Starts loading the state of the flow whose timer is due next (see `prefetch.rs`):
    /// timers of 10,000 flows come in no order the caches could follow.
    #[inline]
    fn prefetch_next_timer(&mut self) {
        if !self.prefetch {
            return;
        }
        if let Some(kind) = self.net.next_timer() {
            prefetch::timer_of(&self.flows, kind);
        }
    }

    /// Lets flow `f` send, then makes sure its RTO timer has an event.
    fn send<const LOG: bool>(&mut self, f: usize) {
        let now = self.net.now;
        let net = &mut self.net;
        let fl = &mut self.flows[f];
        let dir = fl.direction;
        fl.sender.transmit(now, &mut |seg| net.offer::<LOG>(dir, Packet::Data(seg)));
        Self::arm_rto(net, fl, f);
    }

    fn arm_rto(net: &mut Net, fl: &mut Flow, f: usize) {
        if let Some(d) = fl.sender.rto_deadline_before(fl.rto_ev) {
            net.schedule(d, Kind::Rto(f as u32));
            fl.rto_ev = Some(d);
        }
    }

    fn arrive<const LOG: bool>(&mut self, dir: Direction) {
        let now = self.net.now;
        let pipe = &mut self.net.pipes[dir as usize];
        // The receiver reads the segment where it lies (copying it out first costs more
        // than the receiver's work: see `ack_arrive`).
        let Some((_, seg)) = pipe.front() else { return };
        let f = seg.flow as usize;
        if self.prefetch {
            if let Some((_, later)) = pipe.get(prefetch::AHEAD) {
                prefetch::receiver_of(&self.flows, later.flow as usize);
            }
        }
        let fl = &mut self.flows[f];
        let ack = fl.receiver.on_data(now, seg);
        if LOG {
            self.net.packets.record(now, f as u32, dir, PacketEvent::Release);
        }
        self.net.arrived(dir);
        match ack {
            Some(ack) => {
                Self::push_ack::<LOG>(&mut self.net, fl, ack);
                if fl.receiver.flushed() {
                    Self::after_flush::<LOG>(&mut self.net, fl, f);
                }
            }
            None => Self::arm_delack(&mut self.net, fl, f),
        }
    }

    /// The receiver sent a compressed ACK before taking in a segment (rare): that
    /// segment's own ACK follows it, or waits for the timer it armed.
    #[cold]
    #[inline(never)]
    fn after_flush<const LOG: bool>(net: &mut Net, fl: &mut Flow, f: usize) {
        match fl.receiver.take_second_ack() {
            Some(second) => Self::push_ack::<LOG>(net, fl, second),
            None => Self::arm_delack(net, fl, f),
        }
    }

    /// Schedules the receiver's ACK timer, if it has one armed before the event already
    /// scheduled.
    #[inline]
    fn arm_delack(net: &mut Net, fl: &mut Flow, f: usize) {
        if let Some(d) = fl.receiver.delack_deadline() {
            if fl.delack_ev.is_none_or(|e| e > d) {
                net.schedule(d, Kind::DelAck(f as u32));
                fl.delack_ev = Some(d);
            }
        }
    }

    /// Sends an ACK back: through the bottleneck opposite to the flow's data where one
    /// is modelled, else straight onto its path.
    #[inline]
    fn push_ack<const LOG: bool>(net: &mut Net, fl: &Flow, ack: Ack) {
        let back = match fl.direction {
            Direction::Forward if net.rev.is_none() => {
                if LOG {
                    Self::log_ack_set_off(net, ack.flow);
                }
                return net.ack_path_push(ack);
            }
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        };
        net.offer::<LOG>(
            back,
            Packet::Ack { ack, wire_bytes: ack_wire_bytes(fl.header_bytes, &ack) },
        );
    }

    /// Logs an ACK of flow `flow` setting off on its path back, where no bottleneck lies
    /// on the way: it arrives and leaves at once.
    #[cold]
    #[inline(never)]
    fn log_ack_set_off(net: &mut Net, flow: u32) {
        let (now, back) = (net.now, Direction::Reverse);
        net.packets.record(now, flow, back, PacketEvent::Arrive { queue: 0 });
        net.packets.record(now, flow, back, PacketEvent::Depart);
    }

    fn ack_arrive<const LOG: bool>(&mut self, p: usize) {
        let now = self.net.now;
        let path = &mut self.net.ack_paths[p].1;
        // The sender reads the ACK where it lies: copying the 56-byte entry out first
        // went through the stack in pieces and stalled the loads that read it back.
        let Some((_, ack)) = path.front() else { return };
        let f = ack.flow as usize;
        if self.prefetch {
            if let Some((_, later)) = path.get(prefetch::AHEAD) {
                prefetch::sender_of(&self.flows, later.flow as usize);
            }
            if let Some((_, nearer)) = path.get(prefetch::AHEAD / 2) {
                prefetch::rtt_counts_of(&self.flows, nearer.flow as usize);
                prefetch::scoreboard_ends_of(&self.flows, nearer.flow as usize);
            }
        }
        self.flows[f].sender.on_ack(now, ack);
        path.pop_front();
        if let Some(&(t, _)) = path.front() {
            self.net.schedule(Time(t), Kind::AckArrive(p as u32));
        }
        if LOG {
            let back = self.flows[f].direction.opposite();
            self.net.packets.record(now, f as u32, back, PacketEvent::Release);
        }
        self.send::<LOG>(f);
    }

    fn rto<const LOG: bool>(&mut self, f: usize) {
        let now = self.net.now;
        let fl = &mut self.flows[f];
        if fl.rto_ev == Some(now) {
            fl.rto_ev = None;
        }
        match fl.sender.rto_deadline() {
            Some(d) if d <= now => {
                fl.sender.on_rto(now);
                self.send::<LOG>(f);
            }
            Some(_) => Self::arm_rto(&mut self.net, fl, f),
            None => {}
        }
    }

    fn delack<const LOG: bool>(&mut self, f: usize) {
        let now = self.net.now;
        let fl = &mut self.flows[f];
        if fl.delack_ev == Some(now) {
            fl.delack_ev = None;
        }
        match fl.receiver.delack_deadline() {
            Some(d) if d <= now => {
                if let Some(ack) = fl.receiver.on_delack_timer(now) {
                    Self::push_ack::<LOG>(&mut self.net, fl, ack);
                }
            }
            Some(d) if fl.delack_ev.is_none_or(|e| e > d) => {
                self.net.schedule(d, Kind::DelAck(f as u32));
                fl.delack_ev = Some(d);
            }
            _ => {}
        }
    }

    fn cross<const LOG: bool>(&mut self, i: usize) {
        let now = self.net.now;
        match self.cross[i].step(now) {
            CrossStep::Stop => {}
            CrossStep::Wait(at) => self.net.schedule(at, Kind::Cross(i as u32)),
            CrossStep::Send { next } => {
                let dir = self.cross[i].config().direction;
                let pkt = Segment {
                    flow: self.flows.len() as u32 + i as u32,
                    seq: 0,
                    payload: 0,
                    wire_bytes: self.cross[i].config().packet_bytes,
                    tsval: now,
                    tsecr: Time::ZERO,
                    psh: false,
                };
                let (packets, bytes) = &mut self.net.cross_sent[i];
                *packets += 1;
                *bytes += u64::from(pkt.wire_bytes);
                self.net.offer::<LOG>(dir, Packet::Data(pkt));
                if next < self.end {
                    self.net.schedule(next, Kind::Cross(i as u32));
                }
            }
        }
    }

    /// Flow `i`'s sender (read-only), for tests and inspection.
    pub fn sender(&self, i: usize) -> &TcpSender {
        &self.flows[i].sender
    }

    /// Payload bytes flow `i` sent while active, retransmissions included (the send
    /// rate's numerator): up to its stop once it has stopped.
    pub fn payload_bytes_sent(&self, i: usize) -> u64 {
        self.by_stop[i].map_or_else(|| self.flows[i].sender.payload_bytes_sent(), |(_, sent)| sent)
    }

    /// How many flows the simulation has (`count` expanded).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// Flow `i`'s display name.
    pub fn flow_name(&self, i: usize) -> &str {
        &self.cfg.flows[i].name
    }
}

/// The first events of a run, in a fixed order (flows' starts and stops, cross traffic,
/// changes, the first sample): equal times run in this order.
fn schedule_starts(net: &mut Net, cfg: &SimConfig, end: Time) {
    for (i, f) in cfg.flows.iter().enumerate() {
        let start = net.host_start(i, f.start);
        if start < end {
            net.schedule(start, Kind::FlowStart(i as u32));
        }
        if let Some(s) = f.stop {
            if s < end {
                net.schedule(s, Kind::FlowStop(i as u32));
            }
        }
    }
    for (i, c) in cfg.cross.iter().enumerate() {
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
}

/// A parameter's error named by the field a scenario file would set: an algorithm's own
/// parameter sits in the flow's `params` table, `rto_min` and `initcwnd` on the flow itself.
fn in_flow(e: SimError, flow: usize, name: &str) -> SimError {
    let table = if TCP_PARAMS.contains(&name) { "" } else { ".params" };
    e.within(&format!("flows[{flow}]{table}"))
}
