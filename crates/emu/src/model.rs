//! The link model one direction of the emulator applies: random loss, then a queue
//! (DropTail or RED), then the link's service schedule (constant rate or a mahimahi trace).
//!
//! The forwarder only sees the small [`Link`] trait, driven by wall-clock `now`, so the
//! simulator's own models can stand behind it. The configuration types are the
//! simulator's (`cclab_sim::{LinkRate, Buffer, Qdisc, LossModel, Trace}`), so one
//! scenario description feeds both.
//!
//! TEMPORARY: the queue, schedule and loss code below is the emulator's minimal copy,
//! written while `cclab-sim`'s models were being built in parallel; it is to be replaced
//! by them (no duplicate logic in the project).

use cclab_sim::{Buffer, LinkRate, LossModel, Qdisc, RedConfig, Trace};
use cclab_units::{Duration, Time};
use std::collections::VecDeque;
use std::sync::Arc;

/// Bytes one mahimahi delivery opportunity carries (PROVENANCE.md: one 1500-byte packet).
pub const TRACE_OPPORTUNITY_BYTES: u32 = 1500;

/// A packet held by the emulator: an index into the direction's buffer pool, its length,
/// and when it arrived. Plain data, so queues hold no heap pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pkt {
    pub slot: u32,
    pub len: u32,
    pub arrived: Time,
}

/// Why a packet offered to a link was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The random loss model took it.
    RandomLoss,
    /// The queue was full (DropTail) or the AQM chose it (RED).
    QueueDrop,
}

/// One direction's bottleneck as the forwarder drives it in wall-clock time.
pub trait Link {
    /// Offers a packet arriving at `now`; a refused packet is handed back with the reason.
    fn enqueue(&mut self, pkt: Pkt, now: Time) -> Result<(), (Pkt, Refusal)>;
    /// When the head packet finishes crossing the link (`None`: queue empty).
    fn next_departure(&self) -> Option<Time>;
    /// The head packet and its scheduled departure, if that is not after `now`.
    fn dequeue(&mut self, now: Time) -> Option<(Pkt, Time)>;
    /// Packets and bytes waiting (the head packet included).
    fn backlog(&self) -> (u64, u64);
}

/// A small seeded generator (SplitMix64) for the loss and RED decisions: deterministic
/// for a given seed, no global state.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Parses a mahimahi trace: one millisecond timestamp per line, non-decreasing; blank
/// lines ignored. The period is the last timestamp, which must be positive.
pub fn parse_trace(text: &str) -> Result<Trace, String> {
    let mut opportunities_ms = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let ms: u64 = t
            .parse()
            .map_err(|_| format!("line {}: \"{t}\" is not a whole number of milliseconds", i + 1))?;
        if let Some(&prev) = opportunities_ms.last() {
            if ms < prev {
                return Err(format!("line {}: {ms} is earlier than the previous timestamp {prev}", i + 1));
            }
        }
        opportunities_ms.push(ms);
    }
    let period_ms = *opportunities_ms.last().ok_or("the trace has no timestamps")?;
    if period_ms == 0 {
        return Err("the trace's last timestamp is 0 ms: its period must be positive".into());
    }
    Ok(Trace { opportunities_ms, period_ms })
}

/// Reads and parses a trace file; the error names the path.
pub fn load_trace(path: &std::path::Path) -> Result<Trace, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    parse_trace(&text).map_err(|e| format!("trace {}: {e}", path.display()))
}

/// Delivery opportunities of a looping trace whose time lies in `[from, to]`.
pub fn trace_opportunities(trace: &Trace, from: Time, to: Time) -> u64 {
    // Opportunities at or before `t`: whole loops, then the partial loop.
    let upto = |t: Time| -> u64 {
        let ms = t.as_nanos() / 1_000_000;
        let loops = ms / trace.period_ms;
        let rest = ms % trace.period_ms;
        let within = trace.opportunities_ms.partition_point(|&o| o <= rest) as u64;
        loops * trace.opportunities_ms.len() as u64 + within
    };
    // An opportunity at exactly `from` counts; `from` rounded up to whole ms.
    let before = if from.as_nanos() == 0 { 0 } else { upto(Time(from.as_nanos().div_ceil(1_000_000) * 1_000_000 - 1)) };
    upto(to).saturating_sub(before)
}

/// When the link can finish serving a packet.
#[derive(Clone, Debug)]
enum Schedule {
    /// No rate limit: a packet leaves as soon as it is at the head.
    Unlimited,
    /// Serialisation at a constant rate; `free_at` is when the link is next idle.
    Constant { rate: cclab_units::Rate, free_at: Time },
    /// mahimahi delivery opportunities; a packet larger than what is left of the current
    /// opportunity continues into the next one (as mm-link does), unused bytes are lost.
    Trace(TraceCursor),
}

#[derive(Clone, Debug)]
struct TraceCursor {
    trace: Arc<Trace>,
    /// Start of the current loop of the trace, ms.
    loop_base_ms: u64,
    /// Index of the current opportunity.
    idx: usize,
    /// Bytes left in the current opportunity (0: used up).
    left: u32,
}

impl TraceCursor {
    fn time(&self) -> Time {
        Time((self.loop_base_ms + self.trace.opportunities_ms[self.idx]) * 1_000_000)
    }
    fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.trace.opportunities_ms.len() {
            self.idx = 0;
            self.loop_base_ms += self.trace.period_ms;
        }
        self.left = TRACE_OPPORTUNITY_BYTES;
    }
    /// Moves to the first opportunity at or after `t` (keeping the current one if it
    /// still has bytes and is not in the past).
    fn seek(&mut self, t: Time) {
        if self.time() >= t && self.left > 0 {
            return;
        }
        // Skip whole idle loops at once.
        let t_ms = t.0 / 1_000_000;
        let period = self.trace.period_ms;
        if t_ms > self.loop_base_ms + 2 * period {
            self.loop_base_ms += (t_ms - self.loop_base_ms) / period * period - period;
            self.idx = 0;
        }
        if self.left == 0 || self.time() < t {
            self.advance();
        }
        while self.time() < t {
            self.advance();
        }
    }
    fn finish(&mut self, ready: Time, bytes: u32) -> Time {
        self.seek(ready);
        let mut need = bytes.max(1);
        loop {
            let take = need.min(self.left);
            self.left -= take;
            need -= take;
            if need == 0 {
                return self.time();
            }
            self.advance();
        }
    }
}

impl Schedule {
    fn new(rate: Option<&LinkRate>) -> Schedule {
        match rate {
            None => Schedule::Unlimited,
            Some(LinkRate::Constant(r)) => Schedule::Constant { rate: *r, free_at: Time::ZERO },
            Some(LinkRate::Trace(t)) => {
                Schedule::Trace(TraceCursor { trace: t.clone(), loop_base_ms: 0, idx: 0, left: TRACE_OPPORTUNITY_BYTES })
            }
        }
    }
    fn finish(&mut self, ready: Time, bytes: u32) -> Time {
        match self {
            Schedule::Unlimited => ready,
            Schedule::Constant { rate, free_at } => {
                let start = ready.max(*free_at);
                *free_at = start + rate.tx_time(bytes as u64);
                *free_at
            }
            Schedule::Trace(c) => c.finish(ready, bytes),
        }
    }
}

/// Gentle RED state (Floyd & Jacobson 1993; "gentle" per Floyd 2000), average in packets.
#[derive(Clone, Debug)]
struct Red {
    cfg: RedConfig,
    avg: f64,
    /// Packets since the last drop (-1: none since the average left the drop region).
    count: i64,
    idle_since: Option<Time>,
}

impl Red {
    /// Decides whether to drop an arriving packet given the instantaneous queue `q`.
    fn drop(&mut self, q: u64, now: Time, rng: &mut SplitMix64) -> bool {
        match self.idle_since.take() {
            // After an idle period the average decays as if empty packets had arrived
            // (one per millisecond here, a typical packet time; RED paper section 4).
            Some(since) if q == 0 => {
                let m = now.saturating_since(since).as_nanos() / 1_000_000;
                self.avg *= (1.0 - self.cfg.weight).powi(m.min(i32::MAX as u64) as i32);
            }
            _ => {}
        }
        self.avg = (1.0 - self.cfg.weight) * self.avg + self.cfg.weight * q as f64;
        let (min, max, max_p) = (self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        let pb = if self.avg < min {
            self.count = -1;
            return false;
        } else if self.avg < max {
            max_p * (self.avg - min) / (max - min)
        } else if self.cfg.gentle && self.avg < 2.0 * max {
            max_p + (1.0 - max_p) * (self.avg - max) / max
        } else {
            self.count = 0;
            return true;
        };
        self.count += 1;
        // Spread drops evenly: pa = pb / (1 - count * pb).
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { pb / denom };
        if rng.next_f64() < pa {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

/// A direction's bottleneck: loss, queue and schedule (the [`Link`] the forwarder drives).
pub struct EmuLink {
    schedule: Schedule,
    buffer: Buffer,
    red: Option<Red>,
    loss: LossModel,
    /// Gilbert-Elliott state: true while in the Bad state.
    ge_bad: bool,
    rng: SplitMix64,
    queue: VecDeque<Pkt>,
    queued_bytes: u64,
    /// Scheduled departure of the head packet.
    head_departure: Option<Time>,
    /// Departure of the last packet that left (the next head cannot start before it).
    last_departure: Time,
}

impl EmuLink {
    /// `rate: None` is a link without rate limit (delay and loss only).
    pub fn new(rate: Option<&LinkRate>, buffer: Buffer, qdisc: &Qdisc, loss: LossModel, seed: u64) -> Result<EmuLink, String> {
        let red = match qdisc {
            Qdisc::DropTail => None,
            Qdisc::Red(cfg) => Some(Red { cfg: cfg.clone(), avg: 0.0, count: -1, idle_since: Some(Time::ZERO) }),
            other => return Err(format!("qdisc {other:?} is not supported by the emulator (allowed: droptail, red)")),
        };
        Ok(EmuLink {
            schedule: Schedule::new(rate),
            buffer,
            red,
            loss,
            ge_bad: false,
            rng: SplitMix64::new(seed),
            queue: VecDeque::with_capacity(1024),
            queued_bytes: 0,
            head_departure: None,
            last_departure: Time::ZERO,
        })
    }

    fn randomly_lost(&mut self) -> bool {
        match self.loss {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.rng.next_f64() < p,
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                let flip = if self.ge_bad { p_bad_to_good } else { p_good_to_bad };
                if self.rng.next_f64() < flip {
                    self.ge_bad = !self.ge_bad;
                }
                self.rng.next_f64() < if self.ge_bad { loss_bad } else { loss_good }
            }
        }
    }

    fn full(&self, len: u32) -> bool {
        match self.buffer {
            Buffer::Packets(n) => self.queue.len() as u64 >= n,
            Buffer::Bytes(b) => self.queued_bytes + len as u64 > b,
        }
    }
}

impl Link for EmuLink {
    fn enqueue(&mut self, pkt: Pkt, now: Time) -> Result<(), (Pkt, Refusal)> {
        if self.randomly_lost() {
            return Err((pkt, Refusal::RandomLoss));
        }
        let q = self.queue.len() as u64;
        if let Some(red) = &mut self.red {
            if red.drop(q, now, &mut self.rng) {
                return Err((pkt, Refusal::QueueDrop));
            }
        }
        if self.full(pkt.len) {
            return Err((pkt, Refusal::QueueDrop));
        }
        self.queued_bytes += pkt.len as u64;
        self.queue.push_back(pkt);
        if self.queue.len() == 1 {
            let ready = now.max(self.last_departure);
            self.head_departure = Some(self.schedule.finish(ready, pkt.len));
        }
        Ok(())
    }

    fn next_departure(&self) -> Option<Time> {
        self.head_departure
    }

    fn dequeue(&mut self, now: Time) -> Option<(Pkt, Time)> {
        let at = self.head_departure.filter(|&t| t <= now)?;
        let pkt = self.queue.pop_front()?;
        self.queued_bytes -= pkt.len as u64;
        self.last_departure = at;
        // The next head starts service when this one has left (or when it arrived):
        // scheduled times, not the (possibly late) wall clock, so lateness never drifts.
        self.head_departure = self.queue.front().map(|next| {
            let ready = at.max(next.arrived);
            self.schedule.finish(ready, next.len)
        });
        if self.queue.is_empty() {
            if let Some(red) = &mut self.red {
                red.idle_since = Some(at);
            }
        }
        Some((pkt, at))
    }

    fn backlog(&self) -> (u64, u64) {
        (self.queue.len() as u64, self.queued_bytes)
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

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_units::Rate;

    fn pkt(slot: u32, len: u32, at: Time) -> Pkt {
        Pkt { slot, len, arrived: at }
    }

    fn drain(link: &mut EmuLink) -> Vec<Time> {
        let mut out = vec![];
        while let Some((_, t)) = link.dequeue(Time::MAX) {
            out.push(t);
        }
        out
    }

    #[test]
    fn constant_rate_serialises_back_to_back_packets() {
        let rate = LinkRate::Constant(Rate::from_mbps(12));
        let mut l = EmuLink::new(Some(&rate), Buffer::Packets(100), &Qdisc::DropTail, LossModel::None, 1).unwrap();
        for i in 0..3 {
            l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).unwrap();
        }
        let ms = |n: u64| Time(n * 1_000_000);
        assert_eq!(drain(&mut l), vec![ms(1), ms(2), ms(3)]);
        // An idle link starts serving at the arrival.
        l.enqueue(pkt(9, 1500, ms(10)), ms(10)).unwrap();
        assert_eq!(drain(&mut l), vec![ms(11)]);
    }

    #[test]
    fn droptail_counts_packets_or_bytes() {
        let rate = LinkRate::Constant(Rate::from_mbps(1));
        let mut l = EmuLink::new(Some(&rate), Buffer::Packets(2), &Qdisc::DropTail, LossModel::None, 1).unwrap();
        assert!(l.enqueue(pkt(0, 100, Time::ZERO), Time::ZERO).is_ok());
        assert!(l.enqueue(pkt(1, 100, Time::ZERO), Time::ZERO).is_ok());
        assert_eq!(l.enqueue(pkt(2, 100, Time::ZERO), Time::ZERO).unwrap_err().1, Refusal::QueueDrop);
        let mut l = EmuLink::new(Some(&rate), Buffer::Bytes(250), &Qdisc::DropTail, LossModel::None, 1).unwrap();
        assert!(l.enqueue(pkt(0, 100, Time::ZERO), Time::ZERO).is_ok());
        assert!(l.enqueue(pkt(1, 100, Time::ZERO), Time::ZERO).is_ok());
        assert!(l.enqueue(pkt(2, 100, Time::ZERO), Time::ZERO).is_err());
        assert!(l.enqueue(pkt(3, 50, Time::ZERO), Time::ZERO).is_ok());
        assert_eq!(l.backlog(), (3, 250));
    }

    #[test]
    fn trace_link_never_beats_its_opportunities() {
        // Opportunities at 1, 1, 3 ms, period 3 ms.
        let trace = Arc::new(parse_trace("1\n1\n3\n").unwrap());
        let rate = LinkRate::Trace(trace);
        let mut l = EmuLink::new(Some(&rate), Buffer::Packets(1000), &Qdisc::DropTail, LossModel::None, 1).unwrap();
        for i in 0..7 {
            l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).unwrap();
        }
        let got: Vec<u64> = drain(&mut l).iter().map(|t| t.0 / 1_000_000).collect();
        assert_eq!(got, vec![1, 1, 3, 4, 4, 6, 7]);
        // Small packets share one opportunity's 1500 bytes.
        let rate = LinkRate::Trace(Arc::new(parse_trace("5\n").unwrap()));
        let mut l = EmuLink::new(Some(&rate), Buffer::Packets(1000), &Qdisc::DropTail, LossModel::None, 1).unwrap();
        for i in 0..4 {
            l.enqueue(pkt(i, 500, Time::ZERO), Time::ZERO).unwrap();
        }
        let got: Vec<u64> = drain(&mut l).iter().map(|t| t.0 / 1_000_000).collect();
        assert_eq!(got, vec![5, 5, 5, 10]);
        // After a long idle period the next opportunity after the arrival is used.
        let at = Time(1_000_000_002 * 1_000);
        l.enqueue(pkt(9, 1500, at), at).unwrap();
        assert_eq!(l.next_departure(), Some(Time(1_000_005_000_000)));
    }

    #[test]
    fn counts_opportunities_of_a_looping_trace() {
        let t = parse_trace("1\n1\n3\n").unwrap(); // 1,1,3 | 4,4,6 | 7,7,9
        let ms = |n: u64| Time(n * 1_000_000);
        assert_eq!(trace_opportunities(&t, Time::ZERO, ms(3)), 3);
        assert_eq!(trace_opportunities(&t, ms(1), ms(4)), 5);
        assert_eq!(trace_opportunities(&t, Time(1_500_000), ms(7)), 6);
        assert_eq!(trace_opportunities(&t, ms(2), Time(3_999_999)), 1);
    }

    #[test]
    fn bernoulli_loss_takes_about_p() {
        let mut l = EmuLink::new(None, Buffer::Packets(u64::MAX), &Qdisc::DropTail, LossModel::Bernoulli { p: 0.1 }, 7).unwrap();
        let lost = (0..100_000).filter(|&i| l.enqueue(pkt(i, 100, Time::ZERO), Time::ZERO).is_err()).count();
        assert!((9_000..11_000).contains(&lost), "lost {lost}");
    }

    #[test]
    fn red_drops_nothing_below_min_th_and_everything_far_above() {
        let cfg = RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.5, gentle: true };
        let rate = LinkRate::Constant(Rate::from_mbps(1));
        let mut l = EmuLink::new(Some(&rate), Buffer::Packets(1000), &Qdisc::Red(cfg), LossModel::None, 3).unwrap();
        for i in 0..4 {
            assert!(l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).is_ok());
        }
        let mut drops = 0;
        for i in 4..200 {
            if l.enqueue(pkt(i, 1500, Time::ZERO), Time::ZERO).is_err() {
                drops += 1;
            }
        }
        assert!(drops > 100, "drops {drops}");
        let (q, _) = l.backlog();
        assert!(q < 40, "queue {q} should be held near 2*max_th");
    }

    #[test]
    fn bad_traces_are_refused_with_the_line() {
        assert!(parse_trace("").unwrap_err().contains("no timestamps"));
        assert!(parse_trace("1\nx\n").unwrap_err().contains("line 2"));
        assert!(parse_trace("5\n3\n").unwrap_err().contains("earlier"));
        assert!(parse_trace("0\n").unwrap_err().contains("positive"));
        let t = parse_trace("1\n\n2\n2\n").unwrap();
        assert_eq!((t.opportunities_ms.len(), t.period_ms), (3, 2));
    }
}
