//! The network under the flows: the event heap and timer wheel, the bottlenecks (one per
//! direction, `link.rs`), the pipes to the receivers and the ACK paths back. See the
//! engine's module doc for why only FIFO heads are scheduled.

use super::link::{Bottleneck, BottleneckSpec, Offered, Packet};
use crate::config::{Direction, LossModel, SimConfig};
use crate::fifo::Fifo;
use crate::output::{PacketEvent, PacketRecord};
use crate::rng::{stream, Rng};
use crate::small_queue::SmallQueue;
use crate::tcp::{Ack, Segment};
use crate::wheel::{Timed, Wheel};
use cclab_units::{Duration, Time};
use std::cmp::Ordering;
use std::collections::BTreeMap;

impl Timed for Event {
    fn time(&self) -> u64 {
        self.time
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The bottleneck of this direction finished sending its head packet.
    LinkDone(Direction),
    /// The head of this direction's bottleneck-to-receivers pipe arrives.
    Arrive(Direction),
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
pub(super) struct Event {
    pub(super) time: u64,
    seq: u64,
    pub(super) kind: Kind,
}

impl Event {
    /// (time, seq) as one number, so that ordering events is a single wide comparison
    /// (no branch between the two fields).
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }

    #[inline(always)]
    fn time_of_key(key: u128) -> u64 {
        (key >> 64) as u64
    }
}

/// A key no event has (later than all of them): an empty slot.
const NO_EVENT: u128 = u128::MAX;

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    #[inline(always)]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
    /// `a > b`: `a` is due first.
    #[inline(always)]
    fn gt(&self, o: &Self) -> bool {
        self.key() < o.key()
    }
}
impl Ord for Event {
    /// Reversed so that a max-queue pops the earliest, FIFO among equals.
    #[inline(always)]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// Everything but the flows: the network, the clock and the event heap.
pub(super) struct Net {
    heap: SmallQueue<Event>,
    /// Per-flow timers (RTO, delayed ACK) in a calendar queue: there is one or two per
    /// flow, and keeping them out of `heap` keeps the hot heap a few entries deep.
    timers: Wheel<Event>,
    /// The earliest [`Event::key`] of `heap` and `timers` together ([`NO_EVENT`]: none),
    /// or None when not known: kept between pushes and pops, so that the departures and
    /// arrivals that make up most of the order are compared with one number, and most
    /// events ask neither queue.
    queued_head: Option<u128>,
    /// The earliest key of `timers` alone, or None when not known (the wheel's `peek`
    /// may have to move through empty slots).
    timer_head: Option<u128>,
    /// The forward bottleneck's next departure and the forward pipe's next arrival (the
    /// keys of their `LinkDone` and `Arrive` events), or [`NO_EVENT`]. They are the two
    /// most frequent events (one each per packet) and each has at most one pending: held
    /// here, they are compared with the heads of `heap` and `timers` instead of passing
    /// through `heap`, with the same keys and so the same places in the order.
    departure: u128,
    arrival: u128,
    /// ACKs on their way back, one FIFO per distinct return delay, and one of its own for
    /// each flow with a host delay: (arrival time, ACK).
    pub(super) ack_paths: Vec<(Duration, Fifo<(u64, Ack)>)>,
    /// Each flow's ACK path (an index into `ack_paths`).
    ack_path_of: Vec<u32>,
    seq: u64,
    pub(super) events: u64,
    pub(super) now: Time,
    pub(super) fwd: Bottleneck,
    /// The reverse bottleneck, in runs that model it.
    pub(super) rev: Option<Bottleneck>,
    delay: Duration,
    /// Bottleneck-to-receivers pipes, forward and reverse: (arrival time, packet).
    pub(super) pipes: [Fifo<(u64, Segment)>; 2],
    /// Whether the forward bottleneck is scheduled at arrival: with a constant rate, a
    /// DropTail queue and only TCP data crossing it (no reverse link, no cross traffic),
    /// a packet's departure is known when it is queued (the previous one's, or now, plus
    /// its serialisation time), so it goes straight into the forward pipe, and the queue
    /// only counts it. The departures still run in the order of their `LinkDone` keys
    /// (`depart`), as the packets leaving the queue did, so everything that reads the
    /// queue or the pipe sees the same at the same point of the order; what they save is
    /// the queue's copy of each packet.
    scheduled: bool,
    /// In a scheduled run, how many packets at the front of the forward pipe have left
    /// the bottleneck; the next one is on the link, those after it wait in the queue.
    departed: usize,
    n_flows: u32,
    /// Per cross-traffic source, the packets and bytes (on the wire) it sent, and those
    /// that crossed its bottleneck.
    pub(super) cross_sent: Vec<(u64, u64)>,
    pub(super) cross_delivered: Vec<(u64, u64)>,
    /// Per flow, its hosts' largest processing time (ns) and the stream it is drawn
    /// from; empty when no flow has one, so runs without it draw nothing.
    host_delay: Vec<(u64, Rng)>,
    /// The packet log (`Simulation::record_packets`).
    pub(super) packets: PacketLog,
}

/// Every packet event at the bottlenecks and on the flows' paths since the engine last
/// took them, while a packet log is kept. The packet path logs only in the event loop's
/// logging copy (`Simulation::run_events::<true>`), so a run without a log pays nothing
/// for it.
pub(super) struct PacketLog {
    records: Option<Vec<PacketRecord>>,
}

impl PacketLog {
    /// Whether a log is kept.
    pub(super) fn on(&self) -> bool {
        self.records.is_some()
    }

    /// Logs `event` of TCP flow `flow`'s packet in direction `dir` at `now`, if a log is
    /// kept. Out of line: the packet path stays as compact with a log as without.
    #[cold]
    #[inline(never)]
    pub(super) fn record(&mut self, now: Time, flow: u32, dir: Direction, event: PacketEvent) {
        if let Some(log) = &mut self.records {
            log.push(PacketRecord { time: now, flow, direction: dir, event });
        }
    }

    /// The records since the last call, in the order they happened.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = PacketRecord> + '_ {
        self.records.iter_mut().flat_map(|log| log.drain(..))
    }
}

impl Net {
    /// The network of `cfg`, idle at time zero. ACK paths: one per distinct return delay
    /// `rtt - delay`, numbered in order of first use. Flows of equal delay share a path,
    /// since a constant delay keeps their ACKs in order, except a flow with a host delay:
    /// its host's draws hold back only its own ACKs, not other flows' on the same path
    /// (each receiver takes its own time before the ACK sets off), so it gets its own.
    pub(super) fn new(cfg: &SimConfig) -> Net {
        let b = &cfg.bottleneck;
        let mut path_of: BTreeMap<(Duration, Option<usize>), u32> = Default::default();
        let mut ack_paths = Vec::new();
        let mut ack_path_of = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let d = f.rtt.saturating_sub(b.delay);
            let own = (f.tcp.host_delay > Duration::ZERO).then_some(i);
            ack_path_of.push(*path_of.entry((d, own)).or_insert_with(|| {
                ack_paths.push((d, Fifo::default()));
                ack_paths.len() as u32 - 1
            }));
        }
        let fwd_spec = BottleneckSpec {
            rate: &b.rate,
            buffer: b.buffer,
            qdisc: &b.qdisc,
            loss: b.loss.clone(),
            queue_rng: Rng::stream(cfg.seed, stream::QUEUE, 0),
            loss_rng: Rng::stream(cfg.seed, stream::LOSS, 0),
            flows: cfg.flows.len(),
            cross: cfg.cross.len(),
        };
        let scheduled =
            Bottleneck::can_schedule(&fwd_spec) && !cfg.has_reverse_link() && cfg.cross.is_empty();
        let fwd = Bottleneck::new(fwd_spec);
        // The same buffer and discipline the other way; no random loss (see LinkConfig).
        let rev = cfg.has_reverse_link().then(|| {
            Bottleneck::new(BottleneckSpec {
                rate: &b.reverse_link_rate(),
                buffer: b.buffer,
                qdisc: &b.qdisc,
                loss: LossModel::None,
                queue_rng: Rng::stream(cfg.seed, stream::QUEUE, 1),
                loss_rng: Rng::stream(cfg.seed, stream::LOSS, 1),
                flows: cfg.flows.len(),
                cross: cfg.cross.len(),
            })
        });
        Net {
            heap: SmallQueue::new(),
            timers: Wheel::new(),
            queued_head: None,
            timer_head: None,
            departure: NO_EVENT,
            arrival: NO_EVENT,
            ack_paths,
            ack_path_of,
            seq: 0,
            events: 0,
            now: Time::ZERO,
            fwd,
            rev,
            delay: b.delay,
            pipes: [Fifo::default(), Fifo::default()],
            scheduled,
            departed: 0,
            n_flows: cfg.flows.len() as u32,
            cross_sent: vec![(0, 0); cfg.cross.len()],
            cross_delivered: vec![(0, 0); cfg.cross.len()],
            host_delay: host_delays(cfg),
            packets: PacketLog { records: None },
        }
    }

    /// Starts keeping the packet log (see `packets`), the bottlenecks' drops included.
    pub(super) fn record_packets(&mut self) {
        self.packets.records.get_or_insert_with(Vec::new);
        self.fwd.dropped.get_or_insert_with(Vec::new);
        if let Some(rev) = &mut self.rev {
            rev.dropped.get_or_insert_with(Vec::new);
        }
    }

    /// Packets waiting at the bottleneck of `dir` and the one on its link.
    fn backlog(&self, dir: Direction) -> u64 {
        if self.scheduled && dir == Direction::Forward {
            let on_link = self.pipes[dir as usize].len() > self.departed;
            return self.fwd.queue.len_packets() + on_link as u64;
        }
        match dir {
            Direction::Forward => self.fwd.backlog(),
            Direction::Reverse => self.rev.as_ref().map_or(0, Bottleneck::backlog),
        }
    }

    /// Logs what the bottleneck of `dir` dropped since the last look, then `arrived` (a
    /// packet it queued), if any; cross traffic's too, under ids above the flows'.
    #[cold]
    fn log_bottleneck(&mut self, dir: Direction, arrived: Option<&Packet>) {
        let queue = self.backlog(dir);
        let mut dropped = self.bottleneck(dir).dropped.take().unwrap_or_default();
        for p in &dropped {
            self.packets.record(self.now, p.flow(), dir, PacketEvent::Drop { queue });
        }
        dropped.clear();
        self.bottleneck(dir).dropped = Some(dropped);
        if let Some(p) = arrived {
            self.packets.record(self.now, p.flow(), dir, PacketEvent::Arrive { queue });
        }
    }

    #[inline(always)]
    pub(super) fn schedule(&mut self, at: Time, kind: Kind) {
        let ev = Event { time: at.0, seq: self.seq, kind };
        self.seq += 1;
        match kind {
            Kind::LinkDone(Direction::Forward) => {
                debug_assert_eq!(self.departure, NO_EVENT, "one departure at a time");
                self.departure = ev.key();
                return;
            }
            Kind::Arrive(Direction::Forward) => {
                debug_assert_eq!(self.arrival, NO_EVENT, "one arrival at a time");
                self.arrival = ev.key();
                return;
            }
            Kind::Rto(_) | Kind::DelAck(_) => {
                self.timers.push(ev);
                self.timer_head = self.timer_head.map(|head| head.min(ev.key()));
            }
            _ => self.heap.push(ev),
        }
        if let Some(head) = self.queued_head {
            self.queued_head = Some(head.min(ev.key()));
        }
    }

    /// The earliest key of `heap` and `timers`, asking them only when it may have changed.
    #[inline]
    fn queued_head(&mut self) -> u128 {
        match self.queued_head {
            Some(head) => head,
            None => {
                let head = self.heap_head().min(self.timer_head());
                self.queued_head = Some(head);
                head
            }
        }
    }

    #[inline]
    fn heap_head(&self) -> u128 {
        self.heap.peek().map_or(NO_EVENT, Event::key)
    }

    #[inline]
    fn timer_head(&mut self) -> u128 {
        match self.timer_head {
            Some(head) => head,
            None => {
                let head = self.timers.peek().map_or(NO_EVENT, Event::key);
                self.timer_head = Some(head);
                head
            }
        }
    }

    /// The kind of the earliest pending timer, if any (remembering its key, as
    /// `timer_head` does).
    #[inline]
    pub(super) fn next_timer(&mut self) -> Option<Kind> {
        let next = self.timers.peek().copied();
        self.timer_head = Some(next.map_or(NO_EVENT, |e| e.key()));
        next.map(|e| e.kind)
    }

    /// Removes and returns the earliest event if it is due by `t`, first handling the
    /// forward departures due before it (see `departure`).
    #[inline]
    pub(super) fn pop_due<const LOG: bool>(&mut self, t: Time) -> Option<Event> {
        loop {
            // Keys are unique but for NO_EVENT, so at most one of the three is the least.
            let (d, a, q) = (self.departure, self.arrival, self.queued_head());
            if d < a && d < q {
                if Event::time_of_key(d) > t.0 {
                    return None;
                }
                self.departure = NO_EVENT;
                self.now = Time(Event::time_of_key(d));
                if self.scheduled {
                    self.depart::<LOG>();
                } else {
                    self.link_done::<LOG>(Direction::Forward);
                }
                continue;
            }
            if a < q {
                if Event::time_of_key(a) > t.0 {
                    return None;
                }
                self.arrival = NO_EVENT;
                let (time, seq) = (Event::time_of_key(a), a as u64);
                return Some(Event { time, seq, kind: Kind::Arrive(Direction::Forward) });
            }
            if q == NO_EVENT || Event::time_of_key(q) > t.0 {
                return None;
            }
            self.queued_head = None;
            if q == self.timer_head() {
                self.timer_head = None;
                return self.timers.pop();
            }
            return self.heap.pop();
        }
    }

    /// The bottleneck of direction `dir` (the reverse one exists whenever something
    /// is sent that way).
    #[inline]
    fn bottleneck(&mut self, dir: Direction) -> &mut Bottleneck {
        match dir {
            Direction::Forward => &mut self.fwd,
            Direction::Reverse => self.rev.as_mut().expect("reverse traffic has a reverse link"),
        }
    }

    /// A packet arrives at the bottleneck of `dir`.
    #[inline]
    pub(super) fn offer<const LOG: bool>(&mut self, dir: Direction, pkt: Packet) {
        let now = self.now;
        if self.scheduled && dir == Direction::Forward {
            return self.offer_scheduled::<LOG>(pkt);
        }
        let offered = self.bottleneck(dir).offer(now, pkt);
        if LOG {
            let queued = matches!(offered, Offered::Queued(_));
            self.log_bottleneck(dir, queued.then_some(&pkt));
        }
        if let Offered::Queued(Some(done)) = offered {
            self.schedule(done, Kind::LinkDone(dir));
        }
    }

    /// A packet arrives at the scheduled forward bottleneck (see `scheduled`): once
    /// admitted it goes into the pipe with its arrival time, and on an idle link it
    /// starts at once (as `Bottleneck::offer` would start it).
    #[inline]
    fn offer_scheduled<const LOG: bool>(&mut self, pkt: Packet) {
        let now = self.now;
        // Only TCP data crosses a scheduled bottleneck (no ACKs, no cross traffic: see
        // `scheduled`); anything else here would be a bug in choosing this path.
        let Packet::Data(seg) = pkt else {
            debug_assert!(false, "a scheduled bottleneck carries TCP data only: {pkt:?}");
            return;
        };
        if !self.fwd.admit(now, &pkt) {
            if LOG {
                self.log_bottleneck(Direction::Forward, None);
            }
            return;
        }
        let pipe = &mut self.pipes[Direction::Forward as usize];
        let idle = pipe.len() == self.departed;
        let start = match pipe.back() {
            Some(&(arrival, _)) if !idle => Time(arrival - self.delay.as_nanos()),
            _ => now,
        };
        let done = self.fwd.departure(start, seg.wire_bytes);
        pipe.push_back(((done + self.delay).0, seg));
        if idle {
            self.fwd.start(now, seg.wire_bytes);
            self.schedule(done, Kind::LinkDone(Direction::Forward));
        }
        if LOG {
            self.log_bottleneck(Direction::Forward, Some(&pkt));
        }
    }

    /// The scheduled forward bottleneck's packet on the link has left (its `LinkDone`
    /// is due): what `link_done` does, with the packets already in the pipe. It heads
    /// for its receiver (scheduled now if no packet is ahead of it in the pipe), and the
    /// next one, if any, leaves the queue for the link.
    #[inline]
    fn depart<const LOG: bool>(&mut self) {
        let now = self.now;
        let pipe = &self.pipes[Direction::Forward as usize];
        // A departure is scheduled only for a packet put on the link, so one is there (as
        // the `VecDeque` index this replaced, a broken invariant stops the run).
        let &(arrival, seg) = pipe.get(self.departed).expect("a departing packet on the link");
        self.fwd.delivered(seg.wire_bytes);
        if LOG {
            self.packets.record(now, seg.flow, Direction::Forward, PacketEvent::Depart);
        }
        if self.departed == 0 {
            self.schedule(Time(arrival), Kind::Arrive(Direction::Forward));
        }
        self.departed += 1;
        if let Some(&(arrival, next)) = self.pipes[Direction::Forward as usize].get(self.departed) {
            self.fwd.start(now, next.wire_bytes);
            self.schedule(
                Time(arrival - self.delay.as_nanos()),
                Kind::LinkDone(Direction::Forward),
            );
        }
    }

    /// The head of the pipe of `dir` has reached its receiver: the next one, if it has
    /// left the bottleneck, is the next to arrive.
    // Always inlined: the event loop is compiled twice (with and without the packet
    // log), and with two callers the compiler stopped inlining it (docs/performance.md).
    #[inline(always)]
    pub(super) fn arrived(&mut self, dir: Direction) {
        let pipe = &mut self.pipes[dir as usize];
        pipe.pop_front();
        if self.scheduled && dir == Direction::Forward {
            self.departed -= 1;
            if self.departed == 0 {
                return;
            }
        }
        if let Some(&(t, _)) = pipe.front() {
            self.schedule(Time(t), Kind::Arrive(dir));
        }
    }

    /// The bottleneck of `dir` finished its packet: data goes on to its receiver (cross
    /// traffic ends here), an ACK to its path back; then the next packet starts.
    #[inline]
    pub(super) fn link_done<const LOG: bool>(&mut self, dir: Direction) {
        let Some(p) = self.bottleneck(dir).finish() else { return };
        if LOG {
            self.packets.record(self.now, p.flow(), dir, PacketEvent::Depart);
        }
        match p {
            Packet::Data(seg) if seg.flow < self.n_flows => {
                let at = self.now + self.delay;
                if self.pipes[dir as usize].is_empty() {
                    self.schedule(at, Kind::Arrive(dir));
                }
                self.pipes[dir as usize].push_back((at.0, seg));
            }
            Packet::Data(seg) => {
                let (packets, bytes) =
                    &mut self.cross_delivered[(seg.flow - self.n_flows) as usize];
                *packets += 1;
                *bytes += u64::from(seg.wire_bytes);
            }
            Packet::Ack { ack, .. } => self.ack_path_push(ack),
        }
        let now = self.now;
        let done = self.bottleneck(dir).start_service(now);
        if LOG {
            self.log_bottleneck(dir, None);
        }
        if let Some(done) = done {
            self.schedule(done, Kind::LinkDone(dir));
        }
    }

    /// An ACK starts on its flow's path back to the sender (`rtt - delay` long, plus
    /// the hosts' processing time where the flow has one).
    #[inline]
    pub(super) fn ack_path_push(&mut self, ack: Ack) {
        let p = self.ack_path_of[ack.flow as usize] as usize;
        let mut at = (self.now + self.ack_paths[p].0).0;
        if !self.host_delay.is_empty() {
            at = self.delayed_by_host(ack.flow as usize, at, p);
        }
        if self.ack_paths[p].1.is_empty() {
            self.schedule(Time(at), Kind::AckArrive(p as u32));
        }
        self.ack_paths[p].1.push_back((at, ack));
    }

    /// `at` plus flow `f`'s processing time, but never before the flow's ACK ahead of it
    /// on its own path `p` (a path is a FIFO, and only its head is scheduled).
    #[cold]
    fn delayed_by_host(&mut self, f: usize, at: u64, p: usize) -> u64 {
        let at = at + self.host_time(f);
        self.ack_paths[p].1.back().map_or(at, |&(ahead, _)| at.max(ahead))
    }

    /// When flow `f`'s host acts on its start at `at`: one draw of its processing time,
    /// as for each ACK, so that flows told to start together begin in an order the seed
    /// decides, as the testbed's sender threads do, and not always in file order.
    pub(super) fn host_start(&mut self, f: usize, at: Time) -> Time {
        if self.host_delay.is_empty() {
            return at;
        }
        Time(at.0 + self.host_time(f))
    }

    /// One draw of flow `f`'s processing time in ns: uniform on 0 to its `host_delay`.
    fn host_time(&mut self, f: usize) -> u64 {
        let (max_ns, rng) = &mut self.host_delay[f];
        if *max_ns == 0 {
            0
        } else {
            rng.below(*max_ns + 1)
        }
    }
}

/// Each flow's `host_delay` with its own stream, or nothing when no flow has one.
fn host_delays(cfg: &SimConfig) -> Vec<(u64, Rng)> {
    if cfg.flows.iter().all(|f| f.tcp.host_delay == Duration::ZERO) {
        return Vec::new();
    }
    let stream_of = |i: usize| Rng::stream(cfg.seed, stream::HOST, i as u64);
    cfg.flows.iter().enumerate().map(|(i, f)| (f.tcp.host_delay.as_nanos(), stream_of(i))).collect()
}
