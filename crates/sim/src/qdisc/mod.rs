//! Queue disciplines for the bottleneck: DropTail (packets or bytes), RED (gentle),
//! CoDel (RFC 8289), PIE (RFC 8033) and FQ-CoDel (RFC 8290), compact versions written
//! from the papers and RFCs.
//!
//! [`Queue`] is generic over the packet type ([`QueuedPacket`]: a size and a flow key),
//! takes `now` and an RNG on every call, and never touches the event loop, so the
//! wall-clock emulator (crates/emu) runs the same code on real packets. AQM drops made at
//! dequeue (CoDel, FQ-CoDel) are counted in [`Queue::drops`] and the packet is discarded
//! (which is why the emulator, whose packets hold pool buffers, refuses those two).

use crate::config::{Buffer, CodelConfig, PieConfig, Qdisc, RedConfig};
use crate::rng::Rng;
use cclab_units::{Duration, Time};
use std::collections::VecDeque;

/// What a queue needs to know about a packet.
pub trait QueuedPacket {
    /// Size on the wire in bytes (what byte limits and FQ's deficit count).
    fn size_bytes(&self) -> u32;
    /// Which flow it belongs to (for FQ-CoDel's hashing); any stable number.
    fn flow_key(&self) -> u64;
}

/// Bytes of one MTU, used by CoDel ("at most one MTU queued: don't drop") and FQ's quantum.
const MTU: u64 = 1514;

#[derive(Clone, Debug)]
struct Entry<P> {
    pkt: P,
    enqueued: Time,
}

/// A bottleneck queue with its discipline.
#[derive(Clone, Debug)]
pub struct Queue<P> {
    limit: Buffer,
    kind: Kind,
    fifo: VecDeque<Entry<P>>,
    fq: Option<Box<FqState<P>>>,
    packets: u64,
    bytes: u64,
    drops: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    DropTail,
    Red(Red),
    Codel(Codel),
    Pie(Pie),
    FqCodel,
}

impl<P: QueuedPacket> Queue<P> {
    /// `mean_pkt_time`: the time to send a typical (1500-byte) packet at the link's mean
    /// rate; RED uses it to age its average over idle periods.
    pub fn new(qdisc: &Qdisc, limit: Buffer, mean_pkt_time: Duration, rng: &mut Rng) -> Queue<P> {
        let mut fq = None;
        let kind = match qdisc {
            Qdisc::DropTail => Kind::DropTail,
            Qdisc::Red(c) => Kind::Red(Red::new(c.clone(), mean_pkt_time)),
            Qdisc::Codel(c) => Kind::Codel(Codel::new(c)),
            Qdisc::Pie(c) => Kind::Pie(Pie::new(c.clone())),
            Qdisc::FqCodel(c) => {
                fq = Some(Box::new(FqState::new(c, rng.next_u64())));
                Kind::FqCodel
            }
        };
        Queue { limit, kind, fifo: VecDeque::new(), fq, packets: 0, bytes: 0, drops: 0 }
    }

    pub fn len_packets(&self) -> u64 {
        self.packets
    }
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    /// Packets dropped so far (overflow and AQM).
    pub fn drops(&self) -> u64 {
        self.drops
    }
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    fn fits(&self, size: u64) -> bool {
        match self.limit {
            Buffer::Packets(n) => self.packets < n,
            Buffer::Bytes(b) => self.bytes + size <= b,
        }
    }

    /// Offers a packet; `Err` gives it back when it is dropped.
    pub fn enqueue(&mut self, now: Time, pkt: P, rng: &mut Rng) -> Result<(), P> {
        let size = pkt.size_bytes() as u64;
        if let Kind::FqCodel = self.kind {
            self.fq.as_mut().expect("fq state").push(pkt, now);
            self.packets += 1;
            self.bytes += size;
            let over = match self.limit {
                Buffer::Packets(n) => self.packets > n,
                Buffer::Bytes(b) => self.bytes > b,
            };
            if over {
                // RFC 8290 4.1.3: drop from the head of the fattest flow's queue.
                if let Some(sz) = self.fq.as_mut().expect("fq state").drop_fattest() {
                    self.packets -= 1;
                    self.bytes -= sz;
                    self.drops += 1;
                }
            }
            return Ok(());
        }
        if !self.fits(size) {
            self.drops += 1;
            return Err(pkt);
        }
        let early_drop = match &mut self.kind {
            Kind::Red(r) => r.on_arrival(now, self.packets, rng),
            Kind::Pie(p) => p.on_arrival(now, self.bytes, rng),
            _ => false,
        };
        if early_drop {
            self.drops += 1;
            return Err(pkt);
        }
        self.fifo.push_back(Entry { pkt, enqueued: now });
        self.packets += 1;
        self.bytes += size;
        Ok(())
    }

    /// Takes the next packet to send, or `None` if the queue is (or became, through AQM
    /// drops) empty.
    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        let mut dropped = 0u64;
        let mut dropped_bytes = 0u64;
        let out = match &mut self.kind {
            Kind::DropTail => self.fifo.pop_front(),
            Kind::Red(r) => {
                let e = self.fifo.pop_front();
                if self.fifo.is_empty() {
                    r.idle_since = Some(now);
                }
                e
            }
            Kind::Pie(p) => {
                let e = self.fifo.pop_front();
                if let Some(e) = &e {
                    p.on_departure(now, now.saturating_since(e.enqueued));
                }
                e
            }
            Kind::Codel(c) => {
                let mut bytes = self.bytes;
                let e = c.dequeue(&mut self.fifo, &mut bytes, now, &mut dropped);
                dropped_bytes =
                    self.bytes - bytes - e.as_ref().map_or(0, |e| e.pkt.size_bytes() as u64);
                e
            }
            Kind::FqCodel => {
                let fq = self.fq.as_mut().expect("fq state");
                fq.dequeue(now, &mut dropped, &mut dropped_bytes)
            }
        };
        self.drops += dropped;
        self.packets -= dropped;
        self.bytes -= dropped_bytes;
        let e = out?;
        self.packets -= 1;
        self.bytes -= e.pkt.size_bytes() as u64;
        Some(e.pkt)
    }
}

/// RED (Floyd & Jacobson, "Random Early Detection Gateways for Congestion Avoidance",
/// 1993), gentle variant (Floyd 2000), thresholds in packets as ns-2 configures it.
#[derive(Clone, Debug)]
struct Red {
    cfg: RedConfig,
    /// Average queue in packets (EWMA).
    avg: f64,
    /// Packets since the last drop while avg is between the thresholds (-1: none yet).
    count: i64,
    /// When the queue went empty (for the idle-time correction of the average).
    idle_since: Option<Time>,
    mean_pkt_time: Duration,
}

impl Red {
    fn new(cfg: RedConfig, mean_pkt_time: Duration) -> Red {
        Red { cfg, avg: 0.0, count: -1, idle_since: Some(Time::ZERO), mean_pkt_time }
    }

    /// Updates the average and decides whether to drop the arriving packet.
    fn on_arrival(&mut self, now: Time, qlen: u64, rng: &mut Rng) -> bool {
        let w = self.cfg.weight;
        match self.idle_since.take() {
            // Idle: age the average as if m small packets had arrived to an empty queue.
            Some(since) if qlen == 0 => {
                let m = now.saturating_since(since).0 as f64 / self.mean_pkt_time.0.max(1) as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * qlen as f64,
        }
        let (min_th, max_th, max_p) = (self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        let pb = if self.avg < min_th {
            self.count = -1;
            return false;
        } else if self.avg < max_th {
            max_p * (self.avg - min_th) / (max_th - min_th)
        } else if self.cfg.gentle && self.avg < 2.0 * max_th {
            max_p + (1.0 - max_p) * (self.avg - max_th) / max_th
        } else {
            self.count = 0;
            return true;
        };
        // Count-based spacing of drops: pa = pb / (1 - count * pb).
        self.count += 1;
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
        if rng.chance(pa) {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

/// CoDel (RFC 8289): drop at dequeue when packets have sat longer than `target` for at
/// least `interval`, at a rate growing with the square root of the drop count.
#[derive(Clone, Debug)]
struct Codel {
    target: Duration,
    interval: Duration,
    first_above: Option<Time>,
    dropping: bool,
    drop_next: Time,
    count: u32,
    last_count: u32,
}

impl Codel {
    fn new(c: &CodelConfig) -> Codel {
        Codel {
            target: c.target,
            interval: c.interval,
            first_above: None,
            dropping: false,
            drop_next: Time::ZERO,
            count: 0,
            last_count: 0,
        }
    }

    fn control_law(&self, t: Time) -> Time {
        t + Duration((self.interval.0 as f64 / (self.count.max(1) as f64).sqrt()) as u64)
    }

    /// RFC 8289 `dodequeue`: pops the head and says whether it may be dropped.
    fn pop<P: QueuedPacket>(
        &mut self,
        q: &mut VecDeque<Entry<P>>,
        bytes: &mut u64,
        now: Time,
    ) -> (Option<Entry<P>>, bool) {
        let Some(e) = q.pop_front() else {
            self.first_above = None;
            return (None, false);
        };
        *bytes -= e.pkt.size_bytes() as u64;
        let sojourn = now.saturating_since(e.enqueued);
        let mut ok_to_drop = false;
        if sojourn < self.target || *bytes <= MTU {
            self.first_above = None;
        } else {
            match self.first_above {
                None => self.first_above = Some(now + self.interval),
                Some(t) if now >= t => ok_to_drop = true,
                _ => {}
            }
        }
        (Some(e), ok_to_drop)
    }

    fn dequeue<P: QueuedPacket>(
        &mut self,
        q: &mut VecDeque<Entry<P>>,
        bytes: &mut u64,
        now: Time,
        dropped: &mut u64,
    ) -> Option<Entry<P>> {
        let (mut e, mut ok) = self.pop(q, bytes, now);
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next && e.is_some() {
                *dropped += 1;
                self.count += 1;
                (e, ok) = self.pop(q, bytes, now);
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok && e.is_some() {
            *dropped += 1;
            (e, _) = self.pop(q, bytes, now);
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1
                && now.saturating_since(self.drop_next) < self.interval.saturating_mul(16)
            {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now);
            self.last_count = self.count;
        }
        e
    }
}

/// PIE (RFC 8033): a drop probability steered by a PI controller on the queueing delay,
/// updated every `tupdate` (lazily, on the next packet after each update time), with the
/// RFC's auto-tuning of the gains and a 150 ms burst allowance.
#[derive(Clone, Debug)]
struct Pie {
    cfg: PieConfig,
    drop_prob: f64,
    qdelay: Duration,
    qdelay_old: Duration,
    burst_allowance: Duration,
    next_update: Time,
}

const PIE_MAX_BURST: Duration = Duration::from_millis(150);

impl Pie {
    fn new(cfg: PieConfig) -> Pie {
        Pie {
            next_update: Time::ZERO + cfg.tupdate,
            cfg,
            drop_prob: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: PIE_MAX_BURST,
        }
    }

    fn update(&mut self, now: Time) {
        while now >= self.next_update {
            let target = self.cfg.target.as_secs_f64();
            let (q, q_old) = (self.qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64());
            let mut p = self.cfg.alpha * (q - target) + self.cfg.beta * (q - q_old);
            let scale = match self.drop_prob {
                d if d < 0.000_001 => 1.0 / 2048.0,
                d if d < 0.000_01 => 1.0 / 512.0,
                d if d < 0.000_1 => 1.0 / 128.0,
                d if d < 0.001 => 1.0 / 32.0,
                d if d < 0.01 => 1.0 / 8.0,
                d if d < 0.1 => 1.0 / 2.0,
                _ => 1.0,
            };
            p *= scale;
            self.drop_prob = (self.drop_prob + p).clamp(0.0, 1.0);
            if q == 0.0 && q_old == 0.0 {
                self.drop_prob *= 0.98;
            }
            self.qdelay_old = self.qdelay;
            self.burst_allowance = self.burst_allowance.saturating_sub(self.cfg.tupdate);
            if self.drop_prob == 0.0 && q < target / 2.0 && q_old < target / 2.0 {
                self.burst_allowance = PIE_MAX_BURST;
            }
            self.next_update += self.cfg.tupdate;
            // After a long idle period, catch up in one step.
            if now.saturating_since(self.next_update) > self.cfg.tupdate.saturating_mul(100) {
                self.qdelay = Duration::ZERO;
                self.next_update = now + self.cfg.tupdate;
            }
        }
    }

    fn on_arrival(&mut self, now: Time, bytes: u64, rng: &mut Rng) -> bool {
        self.update(now);
        if self.burst_allowance > Duration::ZERO {
            return false;
        }
        let half = self.cfg.target.0 / 2;
        if (self.qdelay_old.0 < half && self.drop_prob < 0.2) || bytes <= 2 * MTU {
            return false;
        }
        rng.chance(self.drop_prob)
    }

    fn on_departure(&mut self, now: Time, sojourn: Duration) {
        self.update(now);
        self.qdelay = sojourn;
    }
}

/// FQ-CoDel (RFC 8290): flows hashed into buckets, deficit round robin between them with
/// new flows served first, CoDel on each bucket.
#[derive(Clone, Debug)]
struct FqState<P> {
    buckets: Vec<Bucket<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    perturb: u64,
}

#[derive(Clone, Debug)]
struct Bucket<P> {
    q: VecDeque<Entry<P>>,
    bytes: u64,
    deficit: i64,
    codel: Codel,
    listed: bool,
}

const FQ_BUCKETS: usize = 1024;

impl<P: QueuedPacket> FqState<P> {
    fn new(c: &CodelConfig, perturb: u64) -> FqState<P> {
        let buckets = (0..FQ_BUCKETS)
            .map(|_| Bucket {
                q: VecDeque::new(),
                bytes: 0,
                deficit: 0,
                codel: Codel::new(c),
                listed: false,
            })
            .collect();
        FqState { buckets, new_flows: VecDeque::new(), old_flows: VecDeque::new(), perturb }
    }

    fn push(&mut self, pkt: P, now: Time) {
        let h = (pkt.flow_key() ^ self.perturb).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54; // 10 bits
        let i = h as usize % FQ_BUCKETS;
        let b = &mut self.buckets[i];
        b.bytes += pkt.size_bytes() as u64;
        b.q.push_back(Entry { pkt, enqueued: now });
        if !b.listed {
            b.listed = true;
            b.deficit = MTU as i64;
            self.new_flows.push_back(i as u32);
        }
    }

    fn drop_fattest(&mut self) -> Option<u64> {
        let (i, _) = self
            .buckets
            .iter()
            .enumerate()
            .max_by_key(|(i, b)| (b.bytes, std::cmp::Reverse(*i)))?;
        let b = &mut self.buckets[i];
        let e = b.q.pop_front()?;
        let sz = e.pkt.size_bytes() as u64;
        b.bytes -= sz;
        Some(sz)
    }

    fn dequeue(
        &mut self,
        now: Time,
        dropped: &mut u64,
        dropped_bytes: &mut u64,
    ) -> Option<Entry<P>> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            let b = &mut self.buckets[i as usize];
            if b.deficit <= 0 {
                b.deficit += MTU as i64;
                if from_new {
                    self.new_flows.pop_front()
                } else {
                    self.old_flows.pop_front()
                };
                self.old_flows.push_back(i);
                continue;
            }
            let before = b.bytes;
            let mut d = 0;
            let e = b.codel.dequeue(&mut b.q, &mut b.bytes, now, &mut d);
            *dropped += d;
            *dropped_bytes +=
                before - b.bytes - e.as_ref().map_or(0, |e| e.pkt.size_bytes() as u64);
            match e {
                Some(e) => {
                    b.deficit -= e.pkt.size_bytes() as i64;
                    return Some(e);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            self.old_flows.push_back(i);
                            continue;
                        }
                    } else {
                        self.old_flows.pop_front();
                    }
                    b.listed = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct P(u32, u64);
    impl QueuedPacket for P {
        fn size_bytes(&self) -> u32 {
            self.0
        }
        fn flow_key(&self) -> u64 {
            self.1
        }
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn droptail_limits_in_packets_and_bytes() {
        let mut rng = Rng::from_seed(1);
        let mut q: Queue<P> =
            Queue::new(&Qdisc::DropTail, Buffer::Packets(2), Duration(1), &mut rng);
        assert!(q.enqueue(ms(0), P(1500, 0), &mut rng).is_ok());
        assert!(q.enqueue(ms(0), P(1500, 0), &mut rng).is_ok());
        assert_eq!(q.enqueue(ms(0), P(100, 0), &mut rng), Err(P(100, 0)));
        assert_eq!((q.len_packets(), q.len_bytes(), q.drops()), (2, 3000, 1));
        let mut b: Queue<P> =
            Queue::new(&Qdisc::DropTail, Buffer::Bytes(2000), Duration(1), &mut rng);
        assert!(b.enqueue(ms(0), P(1500, 0), &mut rng).is_ok());
        assert!(b.enqueue(ms(0), P(600, 0), &mut rng).is_err());
        assert!(b.enqueue(ms(0), P(500, 0), &mut rng).is_ok());
        assert_eq!(b.dequeue(ms(1)), Some(P(1500, 0)));
        assert_eq!(b.len_bytes(), 500);
    }

    #[test]
    fn red_drops_more_as_the_average_rises_and_ages_when_idle() {
        let cfg = RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.02, gentle: true };
        let mut rng = Rng::from_seed(2);
        // Keeps `standing` packets queued for 20,000 arrivals; returns the drop rate and the queue.
        let measure = |standing: usize, rng: &mut Rng| {
            let mut q: Queue<P> = Queue::new(
                &Qdisc::Red(cfg.clone()),
                Buffer::Packets(1000),
                Duration::from_micros(120),
                rng,
            );
            for _ in 0..standing {
                let _ = q.enqueue(ms(0), P(1500, 0), rng);
            }
            let mut drops = 0;
            for _ in 0..20_000 {
                if q.enqueue(ms(0), P(1500, 0), rng).is_err() {
                    drops += 1;
                } else {
                    q.dequeue(ms(0));
                }
            }
            (drops as f64 / 20_000.0, q)
        };
        // Keep 10 packets standing: avg converges to 10, drop probability ~ 0.05 (more with count).
        let (rate, mut q) = measure(10, &mut rng);
        assert!(rate > 0.03 && rate < 0.15, "{rate}");
        // A higher average drops more (pb 0.02 at 7 packets, 0.08 at 13).
        let (low, _) = measure(7, &mut rng);
        let (high, _) = measure(13, &mut rng);
        assert!(
            low < rate && rate < high,
            "drop rates at 7, 10, 13 standing packets: {low} {rate} {high}"
        );
        // Drain, wait 1 s idle: the average decays to ~0 and nothing is dropped.
        while q.dequeue(ms(0)).is_some() {}
        let Kind::Red(r) = &q.kind else { unreachable!() };
        assert!(r.avg > 5.0);
        assert!(q.enqueue(ms(1000), P(1500, 0), &mut rng).is_ok());
        let Kind::Red(r) = &q.kind else { unreachable!() };
        assert!(r.avg < 0.1, "{}", r.avg);
    }

    #[test]
    fn codel_drops_a_standing_queue_and_not_a_short_one() {
        let cfg =
            CodelConfig { target: Duration::from_millis(5), interval: Duration::from_millis(100) };
        let mut rng = Rng::from_seed(3);
        let mut q: Queue<P> =
            Queue::new(&Qdisc::Codel(cfg.clone()), Buffer::Packets(10_000), Duration(1), &mut rng);
        // Arrivals at 1 per ms, service at 1 per 1.1 ms for 6 s: unmanaged, the queue would
        // reach 545 packets (600 ms); CoDel's drop rate grows until it matches the excess.
        let mut t_service = 0u64;
        for i in 0..6000u64 {
            q.enqueue(Time(i * 1_000_000), P(1500, 0), &mut rng).unwrap();
            while t_service <= i * 1_000_000 {
                q.dequeue(Time(t_service));
                t_service += 1_100_000;
            }
        }
        assert!(q.drops() > 10, "drops {}", q.drops());
        // The standing queue is a small fraction of the unmanaged one.
        assert!(q.len_packets() < 60, "{}", q.len_packets());

        // A burst that drains within `interval` is left alone even though its tail waits
        // far longer than `target`: 30 packets every 100 ms, one served per ms (up to 29 ms).
        let mut q: Queue<P> =
            Queue::new(&Qdisc::Codel(cfg), Buffer::Packets(10_000), Duration(1), &mut rng);
        let mut served = 0;
        for burst in 0..60u64 {
            let t0 = burst * 100_000_000;
            for _ in 0..30 {
                q.enqueue(Time(t0), P(1500, 0), &mut rng).unwrap();
            }
            for k in 0..30u64 {
                served += q.dequeue(Time(t0 + k * 1_000_000)).is_some() as u32;
            }
        }
        assert_eq!((q.drops(), served), (0, 1800));
    }

    #[test]
    fn pie_raises_its_probability_under_persistent_delay() {
        let cfg = PieConfig {
            target: Duration::from_millis(15),
            tupdate: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
        };
        let mut rng = Rng::from_seed(4);
        let mut q: Queue<P> =
            Queue::new(&Qdisc::Pie(cfg), Buffer::Packets(10_000), Duration(1), &mut rng);
        let mut t_service = 0u64;
        for i in 0..10_000u64 {
            let _ = q.enqueue(Time(i * 1_000_000), P(1500, 0), &mut rng);
            while t_service <= i * 1_000_000 {
                q.dequeue(Time(t_service));
                t_service += 1_200_000;
            }
        }
        assert!(q.drops() > 100, "{}", q.drops());
        let Kind::Pie(p) = &q.kind else { unreachable!() };
        assert!(p.drop_prob > 0.05, "{}", p.drop_prob);
        assert!(q.len_packets() < 100, "{}", q.len_packets());
    }

    #[test]
    fn fq_codel_shares_between_flows_and_drops_from_the_fattest() {
        let cfg =
            CodelConfig { target: Duration::from_millis(5), interval: Duration::from_millis(100) };
        let mut rng = Rng::from_seed(5);
        let mut q: Queue<P> =
            Queue::new(&Qdisc::FqCodel(cfg), Buffer::Packets(100), Duration(1), &mut rng);
        for _ in 0..100 {
            q.enqueue(ms(0), P(1500, 1), &mut rng).unwrap();
        }
        for _ in 0..10 {
            q.enqueue(ms(0), P(1500, 2), &mut rng).unwrap();
        }
        assert_eq!(q.len_packets(), 100);
        assert_eq!(q.drops(), 10);
        // Round robin: among the first 20 dequeued, flow 2 gets about half.
        let got: Vec<u64> = (0..20).map(|_| q.dequeue(ms(0)).unwrap().1).collect();
        let f2 = got.iter().filter(|&&f| f == 2).count();
        assert!((9..=11).contains(&f2), "{got:?}");
    }
}
