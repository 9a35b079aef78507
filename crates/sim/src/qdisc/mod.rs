//! Queue disciplines for the bottleneck: DropTail (packets or bytes) here, and one file
//! per active queue management scheme, each with its configuration, its parameter table
//! and its state, written from the papers and RFCs.
//!
//! [`Queue`] is generic over the packet type ([`QueuedPacket`]: a size and a flow key),
//! takes `now` and an RNG on every call, and never touches the event loop, so the
//! wall-clock emulator (crates/emu) runs the same code on real packets. A packet refused
//! on arrival is handed back by [`Queue::enqueue`]; one dropped from inside the queue
//! (CoDel and FQ-CoDel at dequeue, FQ-CoDel's fattest flow on overflow) is counted in
//! [`Queue::drops`] and kept in [`Queue::discarded`] until the next call, so a caller can
//! say whose it was (the emulator, whose packets hold pool buffers, still refuses the
//! disciplines that drop at dequeue: [`Qdisc::drops_at_dequeue`]).
//!
//! [`Qdisc`] is the configuration: the disciplines by name ([`Qdisc::named`], with their
//! defaults), their parameters ([`params`]) and their rules ([`Qdisc::check`]), which
//! scenario files, the emulator's link descriptions and the simulator all use.
//!
//! Adding a discipline takes a file here, a few lines in this one and its documentation in
//! README.md: see README.md, "Recipes".

mod codel;
mod fq_codel;
pub mod params;
mod pie;
mod red;

pub use codel::CodelConfig;
pub use pie::PieConfig;
pub use red::RedConfig;

use crate::config::Buffer;
use crate::error::SimError;
use crate::rng::Rng;
use cclab_units::{Duration, Time};
use codel::Codel;
use fq_codel::FqState;
use params::{AnySettings, ParamInfo, Value};
use pie::Pie;
use red::Red;
use std::collections::VecDeque;

/// Queue discipline at the bottleneck, with its configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum Qdisc {
    DropTail,
    /// Random Early Detection, gentle (`red.rs`).
    Red(RedConfig),
    /// CoDel, RFC 8289 (`codel.rs`).
    Codel(CodelConfig),
    /// PIE, RFC 8033 (`pie.rs`).
    Pie(PieConfig),
    /// FQ-CoDel, RFC 8290 (`fq_codel.rs`), with CoDel's configuration for every bucket.
    FqCodel(CodelConfig),
}

/// Makes a discipline with its defaults.
type WithDefaults = fn() -> Qdisc;

/// Every discipline by the name scenario files and the emulator use, with its defaults.
const KINDS: &[(&str, WithDefaults)] = &[
    ("droptail", || Qdisc::DropTail),
    ("red", || Qdisc::Red(RedConfig::default())),
    ("codel", || Qdisc::Codel(CodelConfig::default())),
    ("pie", || Qdisc::Pie(PieConfig::default())),
    ("fq_codel", || Qdisc::FqCodel(CodelConfig::default())),
];

impl Qdisc {
    /// Every discipline's name, in a fixed order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        KINDS.iter().map(|(name, _)| *name)
    }

    /// The discipline called `name`, with its defaults.
    pub fn named(name: &str) -> Option<Qdisc> {
        KINDS.iter().find(|(n, _)| *n == name).map(|(_, make)| make())
    }

    /// The name scenario files use (`"fq_codel"`).
    pub fn name(&self) -> &'static str {
        let this = std::mem::discriminant(self);
        KINDS
            .iter()
            .find(|(_, make)| std::mem::discriminant(&make()) == this)
            .map_or("unknown", |(name, _)| *name)
    }

    /// Whether it discards packets inside dequeue (CoDel's family). The emulator, whose
    /// packets hold pool buffers, runs only disciplines that drop on arrival.
    pub fn drops_at_dequeue(&self) -> bool {
        match self {
            Qdisc::Codel(_) | Qdisc::FqCodel(_) => true,
            Qdisc::DropTail | Qdisc::Red(_) | Qdisc::Pie(_) => false,
        }
    }

    fn settings(&self) -> Option<&dyn AnySettings> {
        match self {
            Qdisc::DropTail => None,
            Qdisc::Red(c) => Some(c),
            Qdisc::Codel(c) | Qdisc::FqCodel(c) => Some(c),
            Qdisc::Pie(c) => Some(c),
        }
    }

    fn settings_mut(&mut self) -> Option<&mut dyn AnySettings> {
        match self {
            Qdisc::DropTail => None,
            Qdisc::Red(c) => Some(c),
            Qdisc::Codel(c) | Qdisc::FqCodel(c) => Some(c),
            Qdisc::Pie(c) => Some(c),
        }
    }

    /// Its parameters, in the order its table lists them.
    pub fn params(&self) -> Vec<ParamInfo> {
        self.settings().map_or_else(Vec::new, |s| s.infos())
    }

    /// The parameter called `name`, if it has one.
    pub fn param(&self, name: &str) -> Option<ParamInfo> {
        self.params().into_iter().find(|p| p.name == name)
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        self.settings()?.get(name)
    }

    /// Sets a parameter; the error says what it has or allows (`qdisc "codel" has
    /// parameters target, interval`; `out of range; allowed: a number in (0, 1]`).
    pub fn set(&mut self, name: &str, v: Value) -> Result<(), String> {
        if let Some(s) = self.settings_mut().filter(|s| s.get(name).is_some()) {
            return s.set(name, v);
        }
        Err(self.unknown_param())
    }

    /// The refusal of a parameter it does not have: `unknown parameter; qdisc "codel"
    /// has parameters target, interval`.
    pub fn unknown_param(&self) -> String {
        format!("unknown parameter; {}", self.has_params())
    }

    /// What parameters it has, in words: `qdisc "codel" has parameters target, interval`.
    pub fn has_params(&self) -> String {
        let names: Vec<&str> = self.params().iter().map(|p| p.name).collect();
        if names.is_empty() {
            format!("qdisc \"{}\" has no parameters", self.name())
        } else {
            format!("qdisc \"{}\" has parameters {}", self.name(), names.join(", "))
        }
    }

    /// Every parameter within its range and the rules across them; the error's field is
    /// the parameter (`max_th`).
    pub fn check(&self) -> Result<(), SimError> {
        self.settings().map_or(Ok(()), |s| s.check())
    }
}

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
    /// Packets the last `enqueue` or `dequeue` dropped from inside the queue.
    discarded: Vec<P>,
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
        Queue {
            limit,
            kind,
            fifo: VecDeque::new(),
            fq,
            packets: 0,
            bytes: 0,
            drops: 0,
            discarded: Vec::new(),
        }
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
    /// The packets the last [`enqueue`](Self::enqueue) or [`dequeue`](Self::dequeue)
    /// dropped from inside the queue (not the one `enqueue` refused, which it hands back).
    pub fn discarded(&self) -> &[P] {
        &self.discarded
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
        self.discarded.clear();
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
                if let Some(p) = self.fq.as_mut().expect("fq state").drop_fattest() {
                    self.packets -= 1;
                    self.bytes -= p.size_bytes() as u64;
                    self.drops += 1;
                    self.discarded.push(p);
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

    /// DropTail's admission of a packet of `size` bytes that the caller keeps elsewhere
    /// (the simulator's scheduled bottleneck, `engine/link.rs`): counts it in if it fits,
    /// else counts a drop and returns false, exactly as [`enqueue`](Self::enqueue) would.
    /// Only for DropTail, which decides on sizes and counts alone.
    pub fn count_in(&mut self, size: u64) -> bool {
        debug_assert!(matches!(self.kind, Kind::DropTail), "only DropTail counts without packets");
        if !self.fits(size) {
            self.drops += 1;
            return false;
        }
        self.packets += 1;
        self.bytes += size;
        true
    }

    /// A packet counted in by [`count_in`](Self::count_in) leaves the queue.
    pub fn count_out(&mut self, size: u64) {
        self.packets -= 1;
        self.bytes -= size;
    }

    /// Takes the next packet to send, or `None` if the queue is (or became, through AQM
    /// drops) empty.
    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        self.dequeue_with_arrival(now).map(|(p, _)| p)
    }

    /// [`dequeue`](Self::dequeue), with when the packet arrived (a trace link needs it:
    /// `LinkSchedule::transmit_queued`).
    #[inline]
    pub fn dequeue_with_arrival(&mut self, now: Time) -> Option<(P, Time)> {
        if let Kind::DropTail = self.kind {
            // The simulator's most common case, kept free of the AQM bookkeeping below
            // so the packet moves straight out of the FIFO.
            let e = self.fifo.pop_front()?;
            self.packets -= 1;
            self.bytes -= e.pkt.size_bytes() as u64;
            return Some((e.pkt, e.enqueued));
        }
        // The CoDel family discards here (DropTail, above, never fills the list).
        let dropped = &mut self.discarded;
        dropped.clear();
        let out = match &mut self.kind {
            Kind::DropTail => self.fifo.pop_front(),
            Kind::Red(r) => {
                let e = self.fifo.pop_front();
                if self.fifo.is_empty() {
                    r.went_idle(now);
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
                c.dequeue(&mut self.fifo, &mut bytes, now, dropped)
            }
            Kind::FqCodel => self.fq.as_mut().expect("fq state").dequeue(now, dropped),
        };
        let dropped_bytes: u64 = dropped.iter().map(|p| p.size_bytes() as u64).sum();
        self.drops += dropped.len() as u64;
        self.packets -= dropped.len() as u64;
        self.bytes -= dropped_bytes;
        let e = out?;
        self.packets -= 1;
        self.bytes -= e.pkt.size_bytes() as u64;
        Some((e.pkt, e.enqueued))
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

    /// DropTail counting sizes alone admits, refuses and counts exactly as it does
    /// holding the packets, in packets and in bytes.
    #[test]
    fn droptail_counts_alone_as_it_queues() {
        let mut rng = Rng::from_seed(3);
        for limit in [Buffer::Packets(5), Buffer::Bytes(6000)] {
            let mut held: Queue<P> = Queue::new(&Qdisc::DropTail, limit, Duration(1), &mut rng);
            let mut counted: Queue<P> = Queue::new(&Qdisc::DropTail, limit, Duration(1), &mut rng);
            let mut sizes = std::collections::VecDeque::new();
            for i in 0..2000 {
                if rng.chance(0.55) {
                    let size = 40 + rng.below(1500) as u32;
                    let ok = held.enqueue(ms(i), P(size, 0), &mut rng).is_ok();
                    assert_eq!(counted.count_in(size as u64), ok, "packet {i}");
                    if ok {
                        sizes.push_back(size);
                    }
                } else if let Some(p) = held.dequeue(ms(i)) {
                    assert_eq!(sizes.pop_front(), Some(p.0));
                    counted.count_out(p.0 as u64);
                }
                let state = |q: &Queue<P>| (q.len_packets(), q.len_bytes(), q.drops());
                assert_eq!(state(&held), state(&counted), "after step {i}");
            }
            assert!(held.drops() > 0);
        }
    }

    #[test]
    fn every_discipline_is_named_and_its_defaults_follow_its_rules() {
        let names: Vec<&str> = Qdisc::names().collect();
        assert!(names.starts_with(&["droptail", "red", "codel", "pie", "fq_codel"]));
        for name in names {
            let q = Qdisc::named(name).unwrap();
            assert_eq!(q.name(), name);
            assert_eq!(q.check(), Ok(()), "{name}");
            for p in q.params() {
                let v = q.get(p.name).unwrap();
                assert!(p.range.admits(v), "{name}.{} = {v}", p.name);
                let mut same = q.clone();
                same.set(p.name, v).unwrap();
                assert_eq!(same, q, "{name}.{}: get and set disagree", p.name);
            }
        }
        assert_eq!(Qdisc::named("fifo"), None);
        assert!(Qdisc::named("fq_codel").unwrap().drops_at_dequeue());
        assert!(!Qdisc::named("pie").unwrap().drops_at_dequeue());
    }

    #[test]
    fn parameters_are_set_within_their_ranges_and_rules() {
        let mut red = Qdisc::named("red").unwrap();
        red.set("max_p", Value::Number(0.2)).unwrap();
        assert!(matches!(&red, Qdisc::Red(c) if c.max_p == 0.2));
        let out = Err("out of range; allowed: a number in (0, 1]".to_string());
        assert_eq!(red.set("max_p", Value::Number(1.5)), out);
        assert_eq!(red.set("max_p", Value::Number(f64::NAN)), out);
        assert_eq!(red.set("max_p", Value::Switch(true)), out);
        // RED's rule across parameters names the one to change.
        red.set("min_th", Value::Number(20.0)).unwrap();
        let e = red.check().unwrap_err();
        assert_eq!(e.to_string(), "max_th = 15: must be greater than min_th = 20");
        let mut codel = Qdisc::named("codel").unwrap();
        assert_eq!(
            codel.set("max_p", Value::Number(0.1)),
            Err("unknown parameter; qdisc \"codel\" has parameters target, interval".to_string())
        );
        assert_eq!(
            codel.set("interval", Value::Time(Duration::ZERO)),
            Err("out of range; allowed: 1us to 100s".to_string())
        );
        assert_eq!(
            Qdisc::DropTail.set("limit", Value::Number(1.0)),
            Err("unknown parameter; qdisc \"droptail\" has no parameters".to_string())
        );
        let pie = Qdisc::Pie(PieConfig { alpha: 101.0, ..PieConfig::default() });
        assert_eq!(
            pie.check().unwrap_err().to_string(),
            "alpha = 101: out of range; allowed: a number in [0, 100]"
        );
    }

    #[test]
    fn drops_inside_the_queue_are_handed_over_until_the_next_call() {
        let mut rng = Rng::from_seed(3);
        let codel =
            CodelConfig { target: Duration::from_millis(5), interval: Duration::from_millis(100) };
        let mut q: Queue<P> =
            Queue::new(&Qdisc::Codel(codel.clone()), Buffer::Packets(1000), Duration(1), &mut rng);
        for i in 0..200 {
            q.enqueue(ms(0), P(1500, i % 3), &mut rng).unwrap();
        }
        // Packets that waited 300 ms and more: after an interval above target CoDel
        // starts dropping at dequeue.
        let mut seen = 0;
        for t in 300..500 {
            let before = q.drops();
            q.dequeue(ms(t));
            assert_eq!(q.discarded().len() as u64, q.drops() - before, "at {t} ms");
            seen += q.discarded().len();
        }
        assert!(seen > 0 && q.drops() == seen as u64, "{seen} of {}", q.drops());
        q.enqueue(ms(500), P(1500, 0), &mut rng).unwrap();
        assert!(q.discarded().is_empty());
        // FQ-CoDel over its limit drops the fattest flow's head, not the arrival.
        let mut fq: Queue<P> =
            Queue::new(&Qdisc::FqCodel(codel), Buffer::Packets(3), Duration(1), &mut rng);
        for key in [7, 7, 7, 9] {
            assert!(fq.enqueue(ms(0), P(1500, key), &mut rng).is_ok());
        }
        assert_eq!(fq.discarded(), &[P(1500, 7)]);
        assert_eq!((fq.len_packets(), fq.drops()), (3, 1));
        // A refused arrival is handed back, not listed.
        let mut dt: Queue<P> =
            Queue::new(&Qdisc::DropTail, Buffer::Packets(1), Duration(1), &mut rng);
        dt.enqueue(ms(0), P(1500, 1), &mut rng).unwrap();
        assert_eq!(dt.enqueue(ms(0), P(1500, 2), &mut rng), Err(P(1500, 2)));
        assert!(dt.discarded().is_empty());
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

    /// ns-2's rule: RED never drops a packet that finds at most one waiting, so a flow
    /// sending one packet at a time after a burst is not refused while the average is
    /// still high (it was, for as long as 90 s of a 100 s run, before this rule).
    #[test]
    fn red_never_drops_at_an_empty_queue() {
        let cfg = RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.02, gentle: true };
        let mut rng = Rng::from_seed(4);
        let mut q: Queue<P> = Queue::new(
            &Qdisc::Red(cfg),
            Buffer::Packets(1000),
            Duration::from_micros(120),
            &mut rng,
        );
        // A standing queue of 100 packets pushes the average past 2 max_th.
        for _ in 0..100 {
            let _ = q.enqueue(ms(0), P(1500, 0), &mut rng);
        }
        for _ in 0..200 {
            if q.enqueue(ms(0), P(1500, 0), &mut rng).is_ok() {
                q.dequeue(ms(0));
            }
        }
        let Kind::Red(r) = &q.kind else { unreachable!() };
        assert!(r.avg > 30.0, "{}", r.avg);
        // Two packets waiting: forced drop at this average.
        while q.len_packets() > 2 {
            q.dequeue(ms(0));
        }
        assert!(q.enqueue(ms(0), P(1500, 0), &mut rng).is_err());
        // Drained: one packet at a time, each sent before the next, all admitted.
        while q.dequeue(ms(0)).is_some() {}
        for i in 0..100 {
            assert!(q.enqueue(ms(1 + i), P(1500, 0), &mut rng).is_ok(), "arrival {i}");
            assert!(q.dequeue(ms(1 + i)).is_some());
        }
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
