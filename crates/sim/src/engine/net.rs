//! The network under the flows: the event heap and timer wheel, the bottleneck (random
//! loss, the queue, the link's service schedule), the pipe to the receivers and the ACK
//! paths back. See the engine's module doc for why only FIFO heads are scheduled.

use crate::config::{LinkRate, SimConfig};
use crate::loss::Loss;
use crate::qdisc::{Queue, QueuedPacket};
use crate::rng::{stream, Rng};
use crate::small_queue::SmallQueue;
use crate::tcp::{Ack, Segment};
use crate::trace::LinkSchedule;
use crate::wheel::{Timed, Wheel};
use cclab_units::{Duration, Time};
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

impl Timed for Event {
    fn time(&self) -> u64 {
        self.time
    }
}

impl QueuedPacket for Segment {
    fn size_bytes(&self) -> u32 {
        self.wire_bytes
    }
    fn flow_key(&self) -> u64 {
        self.flow as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
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
pub(super) struct Event {
    pub(super) time: u64,
    seq: u64,
    pub(super) kind: Kind,
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
    /// Reversed so that a max-queue pops the earliest, FIFO among equals.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Everything but the flows: the network, the clock and the event heap.
pub(super) struct Net {
    heap: SmallQueue<Event>,
    /// Per-flow timers (RTO, delayed ACK) in a calendar queue: there is one or two per
    /// flow, and keeping them out of `heap` keeps the hot heap a few entries deep.
    timers: Wheel<Event>,
    /// ACKs on their way back, one FIFO per distinct return delay: (arrival time, ACK).
    pub(super) ack_paths: Vec<(Duration, VecDeque<(u64, Ack)>)>,
    seq: u64,
    pub(super) events: u64,
    pub(super) now: Time,
    pub(super) queue: Queue<Segment>,
    queue_rng: Rng,
    link: LinkSchedule,
    delay: Duration,
    /// The packet being sent by the bottleneck.
    in_service: Option<Segment>,
    /// Bottleneck-to-receivers pipe: (arrival time, packet).
    pub(super) pipe: VecDeque<(u64, Segment)>,
    loss: Loss,
    loss_rng: Rng,
    n_flows: u32,
    pub(super) delivered_packets: u64,
    pub(super) delivered_bytes: u64,
    pub(super) random_losses: u64,
    /// Integral of queue length (packets) over time, packet-nanoseconds.
    pub(super) queue_area: u128,
    pub(super) queue_area_since: Time,
}

impl Net {
    /// The network of `cfg`, idle at time zero, and the ACK path of each return delay
    /// (one per distinct `rtt - delay`, numbered in order of first use).
    pub(super) fn new(cfg: &SimConfig) -> (Net, BTreeMap<Duration, u32>) {
        let b = &cfg.bottleneck;
        let mean_rate = match &b.rate {
            LinkRate::Constant(r) => *r,
            LinkRate::Trace(t) => t.mean_rate(),
        };
        let mut queue_rng = Rng::stream(cfg.seed, stream::QUEUE, 0);
        let queue = Queue::new(&b.qdisc, b.buffer, mean_rate.tx_time(1500), &mut queue_rng);
        let mut path_of: BTreeMap<Duration, u32> = Default::default();
        let mut ack_paths = Vec::new();
        for f in &cfg.flows {
            let d = f.rtt.saturating_sub(b.delay);
            path_of.entry(d).or_insert_with(|| {
                ack_paths.push((d, VecDeque::new()));
                ack_paths.len() as u32 - 1
            });
        }
        let net = Net {
            heap: SmallQueue::new(),
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
        (net, path_of)
    }

    #[inline]
    pub(super) fn schedule(&mut self, at: Time, kind: Kind) {
        let ev = Event { time: at.0, seq: self.seq, kind };
        self.seq += 1;
        match kind {
            Kind::Rto(_) | Kind::DelAck(_) => self.timers.push(ev),
            _ => self.heap.push(ev),
        }
    }

    /// Removes and returns the earliest event of both heaps if it is due by `t`.
    #[inline]
    pub(super) fn pop_due(&mut self, t: Time) -> Option<Event> {
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
    pub(super) fn account_queue(&mut self) {
        let dt = self.now.0 - self.queue_area_since.0;
        self.queue_area += self.queue.len_packets() as u128 * dt as u128;
        self.queue_area_since = self.now;
    }

    /// A packet arrives at the bottleneck: random loss, then the queue.
    #[inline]
    pub(super) fn offer(&mut self, pkt: Segment) {
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

    #[inline]
    fn start_service(&mut self) {
        self.account_queue();
        if let Some(p) = self.queue.dequeue(self.now) {
            let done = self.link.transmit(self.now, p.wire_bytes as u64);
            self.in_service = Some(p);
            self.schedule(done, Kind::LinkDone);
        }
    }

    #[inline]
    pub(super) fn link_done(&mut self) {
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
