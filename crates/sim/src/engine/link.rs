//! One bottleneck of the dumbbell, in one direction: random loss, the queue and the
//! link's service schedule, with the totals its report and samples read. The forward one
//! always exists; the reverse one only in runs with reverse traffic (see
//! [`SimConfig::has_reverse_link`](crate::SimConfig::has_reverse_link)). It knows
//! nothing of events: its methods say when the link will be done, and `Net` schedules.

use crate::config::{Buffer, LinkRate, LossModel, Qdisc};
use crate::loss::Loss;
use crate::output::QueueSample;
use crate::qdisc::{Queue, QueuedPacket};
use crate::rng::Rng;
use crate::tcp::{Ack, Segment};
use crate::trace::LinkSchedule;
use cclab_units::Time;

/// What crosses a bottleneck: a data segment (a TCP flow's or a UDP source's), or an ACK
/// with its size on the wire. ACKs queue only at a modelled bottleneck (a forward flow's
/// at the reverse one, a reverse flow's at the forward one).
#[derive(Clone, Copy, Debug)]
pub(super) enum Packet {
    Data(Segment),
    Ack { ack: Ack, wire_bytes: u32 },
}

impl Packet {
    /// The TCP flow (or cross-traffic source) the packet belongs to.
    pub(super) fn flow(&self) -> u32 {
        match self {
            Packet::Data(s) => s.flow,
            Packet::Ack { ack, .. } => ack.flow,
        }
    }
}

impl QueuedPacket for Packet {
    fn size_bytes(&self) -> u32 {
        match self {
            Packet::Data(s) => s.wire_bytes,
            Packet::Ack { wire_bytes, .. } => *wire_bytes,
        }
    }
    fn flow_key(&self) -> u64 {
        match self {
            Packet::Data(s) => s.flow as u64,
            Packet::Ack { ack, .. } => ack.flow as u64,
        }
    }
}

/// An ACK's size on the wire: the flow's headers (IP and TCP with timestamps) plus its
/// SACK option, which Linux writes as two NOPs, kind, length and 8 bytes per block
/// (`tcp_options_write`, `tcp_established_options` in net/ipv4/tcp_output.c; RFC 2018).
pub(super) fn ack_wire_bytes(header_bytes: u32, ack: &Ack) -> u32 {
    match ack.n_sacks {
        0 => header_bytes,
        n => header_bytes + 4 + 8 * n as u32,
    }
}

/// Counts a lost packet against its sender in `flow_drops` when it is data: a TCP flow's
/// segment (data or SYN) or a cross-traffic packet (ids above the flows'); an ACK lost
/// on the way back is not a loss of the flow's data. While a packet log is kept
/// (`dropped`), the packet goes there too, whatever it is.
#[inline]
fn charge_drop(flow_drops: &mut [u64], dropped: &mut Option<Vec<Packet>>, pkt: &Packet) {
    if let Some(log) = dropped {
        log.push(*pkt);
    }
    if let Packet::Data(seg) = pkt {
        if let Some(n) = flow_drops.get_mut(seg.flow as usize) {
            *n += 1;
        }
    }
}

/// What became of a packet offered to a bottleneck.
pub(super) enum Offered {
    /// Lost at random or refused by the queue.
    Dropped,
    /// Queued; with the time the link will be done with the packet it starts sending,
    /// if it was idle and now starts.
    Queued(Option<Time>),
}

/// The queue, the link and the counters of one direction.
pub(super) struct Bottleneck {
    pub(super) queue: Queue<Packet>,
    queue_rng: Rng,
    link: LinkSchedule,
    loss: Loss,
    loss_rng: Rng,
    /// The packet being sent.
    in_service: Option<Packet>,
    pub(super) delivered_packets: u64,
    pub(super) delivered_bytes: u64,
    pub(super) random_losses: u64,
    /// Data packets lost here (queue drops and random loss), by sender id: the TCP flows',
    /// then the cross-traffic sources'.
    pub(super) flow_drops: Vec<u64>,
    /// Every packet dropped here since the engine last took them, while it keeps a packet
    /// log (None otherwise).
    pub(super) dropped: Option<Vec<Packet>>,
    /// Integral of queue length (packets) over time, packet-nanoseconds.
    queue_area: u128,
    queue_area_since: Time,
}

/// What a bottleneck is built from: its rate, buffer, discipline and loss, and its own
/// random streams (queue, loss).
pub(super) struct BottleneckSpec<'a> {
    pub rate: &'a LinkRate,
    pub buffer: Buffer,
    pub qdisc: &'a Qdisc,
    pub loss: LossModel,
    pub queue_rng: Rng,
    pub loss_rng: Rng,
    /// TCP flows in the run (ids below this are theirs; cross traffic's are above).
    pub flows: usize,
    /// Cross-traffic sources in the run.
    pub cross: usize,
}

impl Bottleneck {
    pub(super) fn new(spec: BottleneckSpec) -> Bottleneck {
        let mut queue_rng = spec.queue_rng;
        let queue =
            Queue::new(spec.qdisc, spec.buffer, spec.rate.mean_packet_time(), &mut queue_rng);
        Bottleneck {
            queue,
            queue_rng,
            link: LinkSchedule::new(spec.rate),
            loss: Loss::new(spec.loss),
            loss_rng: spec.loss_rng,
            in_service: None,
            delivered_packets: 0,
            delivered_bytes: 0,
            random_losses: 0,
            flow_drops: vec![0; spec.flows + spec.cross],
            dropped: None,
            queue_area: 0,
            queue_area_since: Time::ZERO,
        }
    }

    #[inline]
    pub(super) fn account_queue(&mut self, now: Time) {
        let dt = now.0 - self.queue_area_since.0;
        self.queue_area += self.queue.len_packets() as u128 * dt as u128;
        self.queue_area_since = now;
    }

    /// The queue-length integral up to `now` (packet-nanoseconds).
    pub(super) fn queue_area(&self, now: Time) -> u128 {
        self.queue_area
            + self.queue.len_packets() as u128 * (now.0 - self.queue_area_since.0) as u128
    }

    /// Random loss on arrival: whether `pkt` is lost (then counted).
    #[inline]
    fn lost(&mut self, pkt: &Packet) -> bool {
        if !self.loss.drop_packet(&mut self.loss_rng) {
            return false;
        }
        self.random_losses += 1;
        charge_drop(&mut self.flow_drops, &mut self.dropped, pkt);
        true
    }

    /// A packet arrives: random loss, then the queue. Says whether it was queued, and
    /// when the link will be done with the packet it starts sending, if it was idle and
    /// now starts.
    #[inline]
    pub(super) fn offer(&mut self, now: Time, pkt: Packet) -> Offered {
        if self.lost(&pkt) {
            return Offered::Dropped;
        }
        self.account_queue(now);
        if let Err(refused) = self.queue.enqueue(now, pkt, &mut self.queue_rng) {
            charge_drop(&mut self.flow_drops, &mut self.dropped, &refused);
            return Offered::Dropped;
        }
        self.count_discarded();
        Offered::Queued(if self.in_service.is_none() { self.start_service(now) } else { None })
    }

    /// Packets waiting and the one on the link.
    pub(super) fn backlog(&self) -> u64 {
        self.queue.len_packets() + self.in_service.is_some() as u64
    }

    /// Takes the next packet from the queue into service, if any; returns when it is done.
    #[inline]
    pub(super) fn start_service(&mut self, now: Time) -> Option<Time> {
        self.account_queue(now);
        let p = self.queue.dequeue_with_arrival(now);
        self.count_discarded();
        let (p, arrived) = p?;
        let done = self.link.transmit_queued(now, arrived, p.size_bytes() as u64);
        self.in_service = Some(p);
        Some(done)
    }

    /// Charges what the queue dropped from inside itself in its last call (AQM drops at
    /// dequeue, FQ-CoDel's overflow) to their flows.
    #[inline]
    fn count_discarded(&mut self) {
        for p in self.queue.discarded() {
            charge_drop(&mut self.flow_drops, &mut self.dropped, p);
        }
    }

    /// The link finished sending its packet: counts it and hands it on.
    #[inline]
    pub(super) fn finish(&mut self) -> Option<Packet> {
        let p = self.in_service.take()?;
        self.delivered(p.size_bytes());
        Some(p)
    }

    /// Whether this bottleneck can be scheduled at arrival (see `Net::scheduled`): a
    /// constant rate and a DropTail queue, so that a packet's departure is fixed when it
    /// is queued and nothing happens to it in between.
    pub(super) fn can_schedule(spec: &BottleneckSpec) -> bool {
        matches!(spec.rate, LinkRate::Constant(_)) && *spec.qdisc == Qdisc::DropTail
    }

    /// Scheduled path: a packet arrives at `now`; random loss, then DropTail's admission
    /// (counted in the queue, kept by the caller). Returns whether it was admitted.
    // Always inlined: the event loop is compiled twice (with and without the packet
    // log), and with two callers the compiler stopped inlining it (docs/performance.md).
    #[inline(always)]
    pub(super) fn admit(&mut self, now: Time, pkt: &Packet) -> bool {
        if self.lost(pkt) {
            return false;
        }
        self.account_queue(now);
        if !self.queue.count_in(pkt.size_bytes() as u64) {
            charge_drop(&mut self.flow_drops, &mut self.dropped, pkt);
            return false;
        }
        true
    }

    /// Scheduled path: when a packet of `bytes` starting at `start` (the previous one's
    /// departure, or now on an idle link) will have left the link.
    #[inline]
    pub(super) fn departure(&mut self, start: Time, bytes: u32) -> Time {
        self.link.transmit(start, bytes as u64)
    }

    /// Scheduled path: an admitted packet of `bytes` leaves the queue for the link at
    /// `now`.
    #[inline]
    pub(super) fn start(&mut self, now: Time, bytes: u32) {
        self.account_queue(now);
        self.queue.count_out(bytes as u64);
    }

    /// Scheduled path: the link finished a packet of `bytes`.
    #[inline]
    pub(super) fn delivered(&mut self, bytes: u32) {
        self.delivered_packets += 1;
        self.delivered_bytes += bytes as u64;
    }

    /// The queue now; drops count overflow, AQM and random loss.
    pub(super) fn sample(&mut self, now: Time) -> QueueSample {
        self.account_queue(now);
        QueueSample {
            time: now,
            packets: self.queue.len_packets(),
            bytes: self.queue.len_bytes(),
            drops: self.queue.drops() + self.random_losses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_carries_its_sack_blocks_on_the_wire() {
        let mut ack = Ack {
            flow: 0,
            ack: 5,
            sacks: [(0, 0); 3],
            n_sacks: 0,
            window: 0,
            tsecr: Time::ZERO,
            tsval: Time::ZERO,
        };
        assert_eq!(ack_wire_bytes(52, &ack), 52);
        ack.n_sacks = 1;
        assert_eq!(ack_wire_bytes(52, &ack), 64);
        ack.n_sacks = 3;
        // 52 + 2 NOPs + kind + length + 3 x 8: the 80-byte ACK Linux sends with three blocks.
        assert_eq!(ack_wire_bytes(52, &ack), 80);
    }
}
