//! One direction's bottleneck, as the forwarder drives it in wall-clock time: random loss,
//! then the queue, then the link's service schedule. The loss model, the queue
//! disciplines and the schedule (constant rate or mahimahi trace) are the simulator's own
//! (`cclab_sim::{loss, qdisc, trace}`); this file only binds them to real packets and the
//! wall clock, behind the small [`Link`] trait the forwarder uses.

use cclab_sim::loss::Loss;
use cclab_sim::qdisc::{Queue, QueuedPacket};
use cclab_sim::rng::{stream, Rng};
use cclab_sim::trace::LinkSchedule;
use cclab_sim::{Buffer, LinkRate, LossModel, Qdisc};
use cclab_units::{Duration, Time};
use std::collections::VecDeque;

/// A packet held by the emulator: an index into the direction's buffer pool, its length,
/// a flow key (for fair-queueing disciplines) and when it arrived. Plain data, so queues
/// hold no heap pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pkt {
    pub slot: u32,
    pub len: u32,
    pub flow: u64,
    /// IPv4 source address (0 for other packets), for per-source delays.
    pub src: u32,
    pub arrived: Time,
}

/// The IPv4 source address of a packet (0 if it is not IPv4).
pub fn ipv4_source(ip: &[u8]) -> u32 {
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return 0;
    }
    u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]])
}

impl QueuedPacket for Pkt {
    fn size_bytes(&self) -> u32 {
        self.len
    }
    fn flow_key(&self) -> u64 {
        self.flow
    }
}

/// A flow key from an IPv4 header: addresses, protocol and (TCP/UDP) ports, mixed.
/// Other packets share key 0.
pub fn flow_key(ip: &[u8]) -> u64 {
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return 0;
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let word = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
    let mut k = (word(&ip[12..16]) << 32 | word(&ip[16..20])) ^ ip[9] as u64;
    if (ip[9] == 6 || ip[9] == 17) && ip.len() >= ihl + 4 {
        k = k.rotate_left(17) ^ word(&ip[ihl..ihl + 4]);
    }
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The IPv4 destination address of a packet (0 if it is not IPv4).
pub fn ipv4_destination(ip: &[u8]) -> u32 {
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return 0;
    }
    u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]])
}

/// Opportunities of a looping trace at times in `[from, to]` (what a link kept busy over
/// that interval can deliver, in 1500-byte packets).
pub fn trace_opportunities(trace: &cclab_sim::Trace, from: Time, to: Time) -> u64 {
    trace.opportunities_before(to + Duration(1)).saturating_sub(trace.opportunities_before(from))
}

/// The simulator's queue disciplines that the emulator runs: those that drop only on
/// arrival (see [`Qdisc::drops_at_dequeue`]).
pub fn emulator_qdiscs() -> Vec<&'static str> {
    Qdisc::names().filter(|n| Qdisc::named(n).is_some_and(|q| !q.drops_at_dequeue())).collect()
}

/// Why a packet offered to a link was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The random loss model took it.
    RandomLoss,
    /// The queue was full or its AQM chose it.
    QueueDrop,
}

/// One direction's bottleneck as the forwarder drives it in wall-clock time.
pub trait Link {
    /// Offers a packet arriving at `now`; a refused packet is handed back with the reason.
    fn enqueue(&mut self, pkt: Pkt, now: Time) -> Result<(), (Pkt, Refusal)>;
    /// When the packet in service finishes crossing the link (`None`: link idle).
    fn next_departure(&self) -> Option<Time>;
    /// The packet in service and its scheduled departure, if that is not after `now`.
    fn dequeue(&mut self, now: Time) -> Option<(Pkt, Time)>;
    /// Packets and bytes in the link (waiting and in service).
    fn backlog(&self) -> (u64, u64);
}

/// The simulator's loss, queue and schedule bound to real packets.
pub struct EmuLink {
    /// `None`: no rate limit (a packet leaves as soon as it reaches the head).
    schedule: Option<LinkSchedule>,
    queue: Queue<Pkt>,
    loss: Loss,
    loss_rng: Rng,
    queue_rng: Rng,
    /// The packet being served and when it will have left.
    in_service: Option<(Pkt, Time)>,
    /// When the last packet left (the next cannot start earlier).
    last_departure: Time,
}

impl EmuLink {
    /// `direction` (0 uplink, 1 downlink) selects independent random streams of `seed`.
    pub fn new(
        rate: Option<&LinkRate>,
        buffer: Buffer,
        qdisc: &Qdisc,
        loss: LossModel,
        seed: u64,
        direction: u64,
    ) -> Result<EmuLink, String> {
        if qdisc.drops_at_dequeue() {
            // These drop inside dequeue, where the packet (and its pool buffer) is discarded
            // by the queue; the emulator would leak the buffer.
            return Err(format!(
                "qdisc = \"{}\" is not supported by the emulator (it drops inside dequeue); allowed: {}",
                qdisc.name(),
                emulator_qdiscs().join(", ")
            ));
        }
        // RED ages its average over idle time in units of a typical packet's time.
        let mean_pkt_time = rate.map_or(Duration::from_micros(1), LinkRate::mean_packet_time);
        let mut queue_rng = Rng::stream(seed, stream::QUEUE, direction);
        Ok(EmuLink {
            schedule: rate.map(LinkSchedule::new),
            queue: Queue::new(qdisc, buffer, mean_pkt_time, &mut queue_rng),
            loss: Loss::new(loss),
            loss_rng: Rng::stream(seed, stream::LOSS, direction),
            queue_rng,
            in_service: None,
            last_departure: Time::ZERO,
        })
    }

    /// Starts serving the next queued packet at `at` (the link is free).
    fn serve_next(&mut self, at: Time) {
        let start = at.max(self.last_departure);
        self.in_service = self.queue.dequeue_with_arrival(start).map(|(p, arrived)| {
            let done = match &mut self.schedule {
                Some(s) => s.transmit_queued(start, arrived, p.len as u64),
                None => start,
            };
            (p, done)
        });
    }
}

impl Link for EmuLink {
    fn enqueue(&mut self, pkt: Pkt, now: Time) -> Result<(), (Pkt, Refusal)> {
        if self.loss.drop_packet(&mut self.loss_rng) {
            return Err((pkt, Refusal::RandomLoss));
        }
        self.queue.enqueue(now, pkt, &mut self.queue_rng).map_err(|p| (p, Refusal::QueueDrop))?;
        if self.in_service.is_none() {
            self.serve_next(now);
        }
        Ok(())
    }

    fn next_departure(&self) -> Option<Time> {
        self.in_service.map(|(_, t)| t)
    }

    fn dequeue(&mut self, now: Time) -> Option<(Pkt, Time)> {
        let (pkt, at) = self.in_service.filter(|&(_, t)| t <= now)?;
        self.last_departure = at;
        // The next packet starts at the scheduled departure, not the (possibly late) wall
        // clock, so lateness never accumulates.
        self.serve_next(at);
        Some((pkt, at))
    }

    fn backlog(&self) -> (u64, u64) {
        let (p, b) = self.in_service.map_or((0, 0), |(p, _)| (1, p.len as u64));
        (self.queue.len_packets() + p, self.queue.len_bytes() + b)
    }
}

/// A constant one-way delay after the link: a FIFO of packets and their release times
/// (FIFO order holds because the delay is the same for every packet).
pub struct DelayLine {
    pub delay: Duration,
    fifo: VecDeque<(Pkt, Time)>,
}

impl DelayLine {
    pub fn new(delay: Duration) -> DelayLine {
        DelayLine { delay, fifo: VecDeque::with_capacity(1024) }
    }
    pub fn push(&mut self, pkt: Pkt, departed: Time) {
        self.fifo.push_back((pkt, departed + self.delay));
    }
    pub fn next_release(&self) -> Option<Time> {
        self.fifo.front().map(|&(_, t)| t)
    }
    /// The head packet and its release time, if due at `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<(Pkt, Time)> {
        match self.fifo.front() {
            Some(&(_, t)) if t <= now => self.fifo.pop_front(),
            _ => None,
        }
    }
    pub fn len(&self) -> usize {
        self.fifo.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
}

/// The delay stage of a direction: a default one-way delay, and other delays for packets
/// from given IPv4 sources (how the testbed gives each flow its own RTT on a shared
/// path). One FIFO per distinct delay keeps every FIFO in release order.
pub struct Delays {
    lines: Vec<DelayLine>,
    /// (source address, index into `lines`).
    by_source: Vec<(u32, usize)>,
}

impl Delays {
    pub fn new(default: Duration, per_source: &[(std::net::Ipv4Addr, Duration)]) -> Delays {
        let mut lines = vec![DelayLine::new(default)];
        let mut by_source = Vec::new();
        for &(addr, d) in per_source {
            let i = match lines.iter().position(|l| l.delay == d) {
                Some(i) => i,
                None => {
                    lines.push(DelayLine::new(d));
                    lines.len() - 1
                }
            };
            by_source.push((u32::from(addr), i));
        }
        Delays { lines, by_source }
    }
    pub fn push(&mut self, pkt: Pkt, departed: Time) {
        let i = self.by_source.iter().find(|&&(a, _)| a == pkt.src).map_or(0, |&(_, i)| i);
        self.lines[i].push(pkt, departed);
    }
    pub fn next_release(&self) -> Option<Time> {
        self.lines.iter().filter_map(DelayLine::next_release).min()
    }
    /// The earliest packet due at `now`, with its release time.
    pub fn pop_due(&mut self, now: Time) -> Option<(Pkt, Time)> {
        let (i, _) = self
            .lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.next_release().map(|t| (i, t)))
            .filter(|&(_, t)| t <= now)
            .min_by_key(|&(_, t)| t)?;
        self.lines[i].pop_due(now)
    }
    pub fn len(&self) -> usize {
        self.lines.iter().map(DelayLine::len).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_sim::{RedConfig, Trace};
    use cclab_units::Rate;
    use std::sync::Arc;

    fn pkt(slot: u32, len: u32, at: Time) -> Pkt {
        Pkt { slot, len, flow: 0, src: 0, arrived: at }
    }

    fn link(rate: Option<LinkRate>, buffer: Buffer, qdisc: Qdisc, loss: LossModel) -> EmuLink {
        EmuLink::new(rate.as_ref(), buffer, &qdisc, loss, 1, 0).unwrap()
    }

    fn drain(link: &mut EmuLink) -> Vec<u64> {
        let mut out = vec![];
        while let Some((_, t)) = link.dequeue(Time::MAX) {
            out.push(t.0 / 1_000_000);
        }
        out
    }

    #[test]
    fn constant_rate_serialises_back_to_back_packets() {
        let mut l = link(
            Some(LinkRate::Constant(Rate::from_mbps(12))),
            Buffer::Packets(100),
            Qdisc::DropTail,
            LossModel::None,
        );
        for i in 0..3 {
            l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).unwrap();
        }
        assert_eq!(drain(&mut l), vec![1, 2, 3]);
        // An idle link starts serving at the arrival.
        let t = Time(10_000_000);
        l.enqueue(pkt(9, 1500, t), t).unwrap();
        assert_eq!(drain(&mut l), vec![11]);
    }

    #[test]
    fn a_late_dequeue_does_not_shift_the_schedule() {
        let mut l = link(
            Some(LinkRate::Constant(Rate::from_mbps(12))),
            Buffer::Packets(100),
            Qdisc::DropTail,
            LossModel::None,
        );
        for i in 0..3 {
            l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).unwrap();
        }
        // The loop wakes 0.7 ms late for the first departure.
        let (_, t) = l.dequeue(Time(1_700_000)).unwrap();
        assert_eq!(t, Time(1_000_000));
        assert_eq!(l.next_departure(), Some(Time(2_000_000)));
    }

    #[test]
    fn droptail_counts_waiting_packets_and_the_one_in_service_leaves_room() {
        let mut l = link(
            Some(LinkRate::Constant(Rate::from_mbps(1))),
            Buffer::Packets(2),
            Qdisc::DropTail,
            LossModel::None,
        );
        // The first goes straight into service; two more wait; the fourth is dropped.
        for i in 0..3 {
            assert!(l.enqueue(pkt(i, 100, Time::ZERO), Time::ZERO).is_ok());
        }
        assert_eq!(
            l.enqueue(pkt(3, 100, Time::ZERO), Time::ZERO).unwrap_err().1,
            Refusal::QueueDrop
        );
        assert_eq!(l.backlog(), (3, 300));
    }

    #[test]
    fn trace_link_never_beats_its_opportunities() {
        // Opportunities at 1, 1, 3 ms, period 3 ms: 1,1,3 | 4,4,6 | 7,7,9.
        let trace = Arc::new(Trace::parse("1\n1\n3\n").unwrap());
        let mut l = link(
            Some(LinkRate::Trace(trace)),
            Buffer::Packets(1000),
            Qdisc::DropTail,
            LossModel::None,
        );
        for i in 0..7 {
            l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).unwrap();
        }
        assert_eq!(drain(&mut l), vec![1, 1, 3, 4, 4, 6, 7]);
    }

    #[test]
    fn counts_opportunities_in_a_closed_interval() {
        let t = Trace::parse("1\n1\n3\n").unwrap(); // 1,1,3 | 4,4,6 | 7,7,9
        let ms = |n: u64| Time(n * 1_000_000);
        assert_eq!(trace_opportunities(&t, Time::ZERO, ms(3)), 3);
        assert_eq!(trace_opportunities(&t, ms(1), ms(4)), 5);
        assert_eq!(trace_opportunities(&t, Time(1_500_000), ms(7)), 6);
    }

    #[test]
    fn bernoulli_loss_takes_about_p() {
        let mut l =
            link(None, Buffer::Packets(u64::MAX), Qdisc::DropTail, LossModel::Bernoulli { p: 0.1 });
        let mut lost = 0;
        for i in 0..100_000 {
            match l.enqueue(pkt(i, 100, Time::ZERO), Time::ZERO) {
                Err((_, Refusal::RandomLoss)) => lost += 1,
                Err(e) => panic!("{e:?}"),
                Ok(()) => {
                    l.dequeue(Time::ZERO);
                }
            }
        }
        assert!((9_000..11_000).contains(&lost), "lost {lost}");
    }

    #[test]
    fn red_holds_the_queue_down() {
        let cfg = RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.5, gentle: true };
        let mut l = link(
            Some(LinkRate::Constant(Rate::from_mbps(1))),
            Buffer::Packets(1000),
            Qdisc::Red(cfg),
            LossModel::None,
        );
        let drops =
            (0..200).filter(|&i| l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).is_err()).count();
        assert!(drops > 100, "drops {drops}");
        assert!(l.backlog().0 < 40, "queue {:?} should be held near 2*max_th", l.backlog());
    }

    #[test]
    fn codel_is_refused_with_what_is_allowed() {
        let q = Qdisc::Codel(cclab_sim::CodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
        });
        let e = EmuLink::new(None, Buffer::Packets(10), &q, LossModel::None, 1, 0).err().unwrap();
        assert!(e.contains(&format!("allowed: {}", emulator_qdiscs().join(", "))), "{e}");
        assert!(e.contains("qdisc = \"codel\""), "{e}");
        let runs = emulator_qdiscs();
        assert!(["droptail", "red", "pie"].iter().all(|q| runs.contains(q)), "{runs:?}");
        assert!(!runs.contains(&"codel") && !runs.contains(&"fq_codel"), "{runs:?}");
    }

    #[test]
    fn per_source_delays_release_in_time_order() {
        let a = std::net::Ipv4Addr::new(198, 18, 1, 1);
        let mut d = Delays::new(Duration::from_millis(10), &[(a, Duration::from_millis(50))]);
        let ms = |n: u64| Time(n * 1_000_000);
        d.push(Pkt { src: u32::from(a), ..pkt(1, 100, ms(0)) }, ms(0)); // due 50
        d.push(pkt(2, 100, ms(1)), ms(1)); // due 11
        d.push(pkt(3, 100, ms(2)), ms(2)); // due 12
        assert_eq!(d.next_release(), Some(ms(11)));
        assert!(d.pop_due(ms(10)).is_none());
        let order: Vec<(u32, u64)> = std::iter::from_fn(|| d.pop_due(ms(100)))
            .map(|(p, t)| (p.slot, t.0 / 1_000_000))
            .collect();
        assert_eq!(order, vec![(2, 11), (3, 12), (1, 50)]);
        assert!(d.is_empty());
    }

    #[test]
    fn flow_keys_separate_five_tuples() {
        let mut a = [0u8; 28];
        a[0] = 0x45;
        a[9] = 17;
        a[12..16].copy_from_slice(&[198, 18, 0, 1]);
        a[16..20].copy_from_slice(&[198, 18, 0, 2]);
        a[20..24].copy_from_slice(&[0x10, 0x00, 0x23, 0x29]);
        let mut b = a;
        b[21] = 0x01; // another source port
        assert_ne!(flow_key(&a), flow_key(&b));
        assert_eq!(flow_key(&a), flow_key(&a.clone()));
        assert_eq!(flow_key(&[0x60; 40]), 0); // not IPv4
        assert_eq!(ipv4_source(&a), u32::from(std::net::Ipv4Addr::new(198, 18, 0, 1)));
        assert_eq!(ipv4_destination(&a), u32::from(std::net::Ipv4Addr::new(198, 18, 0, 2)));
        assert_eq!(ipv4_destination(&[0x60; 40]), 0);
    }
}
