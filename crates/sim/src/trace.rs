//! mahimahi packet-delivery traces and the bottleneck's service schedule.
//!
//! Trace format (mahimahi, `shared/traces/PROVENANCE.md`): one non-negative integer per
//! line, a millisecond at which the link may deliver one MTU (1500 bytes); a value
//! repeated k times gives k opportunities in that millisecond; the schedule repeats with
//! period equal to the last timestamp. As in mahimahi's `LinkQueue`, an opportunity
//! delivers up to 1500 bytes from the head of the queue, a larger packet takes several
//! opportunities, and bytes of an opportunity that find no packet are lost.
//!
//! [`LinkSchedule`] is a plain struct driven by `now` (no event loop), so the wall-clock
//! emulator uses it unchanged.

use crate::config::Trace;
use cclab_units::{Duration, Rate, Time};
use std::sync::Arc;

/// Bytes one trace opportunity may deliver (mahimahi's MTU).
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

const MS: u64 = 1_000_000;

impl Trace {
    /// Parses mahimahi trace text. Blank lines are ignored; anything else must be a
    /// non-negative integer not smaller than the line before.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut ops = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            let too_large =
                || format!("line {}: {t} ms is absurdly large (at most 10^12 ms)", i + 1);
            let v: u64 = t.parse().map_err(|_| {
                // Digits alone that do not fit 64 bits are a whole number, too large.
                if t.bytes().all(|b| b.is_ascii_digit()) {
                    return too_large();
                }
                format!("line {}: \"{t}\" is not a whole number of milliseconds (mahimahi trace format: one integer per line)", i + 1)
            })?;
            if v > 1_000_000_000_000 {
                return Err(too_large());
            }
            if let Some(&last) = ops.last() {
                if v < last {
                    return Err(format!(
                        "line {}: {v} ms comes after {last} ms; timestamps must not decrease",
                        i + 1
                    ));
                }
            }
            ops.push(v);
        }
        let Some(&period) = ops.last() else {
            return Err("the trace is empty: it needs at least one delivery opportunity".into());
        };
        if period == 0 {
            return Err("the trace's last timestamp is 0 ms: the period (last timestamp) must be at least 1 ms".into());
        }
        Ok(Trace { opportunities_ms: ops, period_ms: period })
    }

    /// Reads and parses a trace file; errors name the file.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Trace, String> {
        let p = path.as_ref();
        let text = std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read trace file {}: {e}", p.display()))?;
        Trace::parse(&text).map_err(|e| format!("trace file {}: {e}", p.display()))
    }

    /// Mean capacity: opportunities per period times 1500 bytes.
    pub fn mean_rate(&self) -> Rate {
        let bits = self.opportunities_ms.len() as u128 * TRACE_OPPORTUNITY_BYTES as u128 * 8 * 1000;
        Rate((bits / self.period_ms as u128) as u64)
    }

    /// Number of opportunities at times in `[0, end)`.
    pub fn opportunities_before(&self, end: Time) -> u64 {
        // Opportunity m of lap L happens at L*period + m; count the laps for each m.
        let period_ns = self.period_ms * MS;
        self.opportunities_ms
            .iter()
            .map(|&m| if end.0 > m * MS { (end.0 - m * MS).div_ceil(period_ns) } else { 0 })
            .sum()
    }
}

/// When the bottleneck can serve bytes: a constant rate, or a trace's opportunities.
#[derive(Clone, Debug)]
pub enum LinkSchedule {
    Constant(ConstantRate),
    Trace(TraceCursor),
}

/// A constant rate with the serialisation time of the last packet size it sent: nearly
/// every packet on a bottleneck has the size of the one before, so the division in
/// [`Rate::tx_time`] runs only when the size changes.
#[derive(Clone, Debug)]
pub struct ConstantRate {
    rate: Rate,
    last_bytes: u64,
    last_tx: Duration,
}

impl ConstantRate {
    pub fn new(rate: Rate) -> ConstantRate {
        ConstantRate { rate, last_bytes: 0, last_tx: rate.tx_time(0) }
    }

    /// `rate.tx_time(bytes)`, exactly.
    #[inline]
    pub fn tx_time(&mut self, bytes: u64) -> Duration {
        if bytes != self.last_bytes {
            self.last_bytes = bytes;
            self.last_tx = self.rate.tx_time(bytes);
        }
        self.last_tx
    }
}

/// Position in a looping trace: the current opportunity and the bytes it has left.
#[derive(Clone, Debug)]
pub struct TraceCursor {
    trace: Arc<Trace>,
    /// Which loop of the trace we are in.
    lap: u64,
    /// Index of the current opportunity within the trace.
    idx: usize,
    /// Bytes the current opportunity can still deliver.
    budget: u64,
}

impl TraceCursor {
    pub fn new(trace: Arc<Trace>) -> TraceCursor {
        TraceCursor { trace, lap: 0, idx: 0, budget: TRACE_OPPORTUNITY_BYTES }
    }

    fn time_of(&self, lap: u64, idx: usize) -> Time {
        Time((lap * self.trace.period_ms + self.trace.opportunities_ms[idx]) * MS)
    }

    fn current(&self) -> Time {
        self.time_of(self.lap, self.idx)
    }

    fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.trace.opportunities_ms.len() {
            self.idx = 0;
            self.lap += 1;
        }
        self.budget = TRACE_OPPORTUNITY_BYTES;
    }

    /// Moves to the first opportunity at or after `now` that has budget left.
    fn seek(&mut self, now: Time) {
        if self.budget == 0 {
            self.advance();
        }
        if self.current() >= now {
            return;
        }
        // Skip whole laps at once after a long idle period, then walk.
        let period_ns = self.trace.period_ms * MS;
        let target_lap = now.0 / period_ns;
        if target_lap > self.lap + 1 {
            self.lap = target_lap - 1;
            self.idx = 0;
        }
        while self.current() < now {
            self.advance();
        }
        self.budget = TRACE_OPPORTUNITY_BYTES;
    }
}

impl LinkSchedule {
    pub fn new(rate: &crate::config::LinkRate) -> LinkSchedule {
        match rate {
            crate::config::LinkRate::Constant(r) => LinkSchedule::Constant(ConstantRate::new(*r)),
            crate::config::LinkRate::Trace(t) => LinkSchedule::Trace(TraceCursor::new(t.clone())),
        }
    }

    /// A packet of `bytes` starts service at `now` (the link is free); returns when its
    /// last byte has left the link. Constant rate: serialisation time. Trace: the
    /// opportunity that delivers its last byte (consuming the opportunities' budgets).
    #[inline]
    pub fn transmit(&mut self, now: Time, bytes: u64) -> Time {
        match self {
            LinkSchedule::Constant(r) => now + r.tx_time(bytes),
            LinkSchedule::Trace(c) => {
                c.seek(now);
                let mut left = bytes.max(1);
                while left > c.budget {
                    left -= c.budget;
                    c.budget = 0;
                    c.advance();
                }
                c.budget -= left;
                c.current()
            }
        }
    }

    /// A packet that arrived at `arrived` starts service at `start` (when the link is
    /// free, never before `arrived`): as [`transmit`], except that on a trace it uses only
    /// opportunities strictly after its arrival. mahimahi's `LinkQueue::read_packet`
    /// (linkshell's link_queue.cc) spends every opportunity up to the arrival's timestamp
    /// (`rationalize(now)`) before it queues the packet, so an opportunity at the very
    /// instant of an arrival goes to the packets already there. The tie happens only where
    /// arrivals fall exactly on the trace's whole milliseconds, as they do in a simulation
    /// with whole-millisecond delays; in a real emulator the hosts' processing puts every
    /// arrival a little after the instant that caused it, and the rule gives the same
    /// answer as any such arrival.
    ///
    /// [`transmit`]: Self::transmit
    #[inline]
    pub fn transmit_queued(&mut self, start: Time, arrived: Time, bytes: u64) -> Time {
        if let LinkSchedule::Trace(c) = self {
            c.seek(start.max(arrived + Duration(1)));
        }
        self.transmit(start, bytes)
    }

    /// Capacity in bytes over `[0, end)`: what the link could deliver at most.
    pub fn capacity_bytes(rate: &crate::config::LinkRate, end: Time) -> u64 {
        match rate {
            crate::config::LinkRate::Constant(r) => r.bytes_in(Duration(end.0)),
            crate::config::LinkRate::Trace(t) => {
                t.opportunities_before(end) * TRACE_OPPORTUNITY_BYTES
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_with_line_numbers() {
        let t = Trace::parse("0\n0\n5\n\n10\n").unwrap();
        assert_eq!(t.opportunities_ms, vec![0, 0, 5, 10]);
        assert_eq!(t.period_ms, 10);
        assert_eq!(t.mean_rate(), Rate(4 * 1500 * 8 * 100));
        assert!(Trace::parse("1\nx\n").unwrap_err().contains("line 2"));
        assert!(Trace::parse("5\n3\n").unwrap_err().contains("must not decrease"));
        assert!(Trace::parse("").unwrap_err().contains("empty"));
        assert!(Trace::parse("0\n").unwrap_err().contains("period"));
        assert!(Trace::parse("-1\n").is_err());
        // Too large for 64 bits is still a whole number: said as too large.
        let e = Trace::parse("1\n99999999999999999999\n").unwrap_err();
        assert_eq!(e, "line 2: 99999999999999999999 ms is absurdly large (at most 10^12 ms)");
    }

    #[test]
    fn a_trace_of_one_is_twelve_megabits() {
        let t = Trace::parse("1\n").unwrap();
        assert_eq!(t.mean_rate(), Rate::from_mbps(12));
        assert_eq!(t.opportunities_before(Time(10 * MS)), 9); // at 1..9 ms
        assert_eq!(t.opportunities_before(Time(10 * MS + 1)), 10);
    }

    #[test]
    fn trace_schedule_consumes_budget_and_loops() {
        let t = Arc::new(Trace::parse("2\n2\n4\n").unwrap());
        let mut s = LinkSchedule::Trace(TraceCursor::new(t));
        // Two 700-byte packets share the first opportunity at 2 ms.
        assert_eq!(s.transmit(Time(0), 700), Time(2 * MS));
        assert_eq!(s.transmit(Time(2 * MS), 700), Time(2 * MS));
        // 1500 bytes: 100 left in the first, 1400 from the second opportunity (also 2 ms).
        assert_eq!(s.transmit(Time(2 * MS), 1500), Time(2 * MS));
        assert_eq!(s.transmit(Time(2 * MS), 1500), Time(4 * MS));
        // Next lap: opportunities at 6, 6, 8 ms; idle until 7 ms wastes the ones at 6.
        assert_eq!(s.transmit(Time(7 * MS), 1500), Time(8 * MS));
        // Long idle: jumps laps.
        assert_eq!(s.transmit(Time(4001 * MS), 1500), Time(4002 * MS));
    }

    #[test]
    fn a_packet_misses_the_opportunity_at_its_own_arrival() {
        let t = Arc::new(Trace::parse("2\n2\n4\n").unwrap());
        let at = |ms| Time(ms * MS);
        let mut s = LinkSchedule::Trace(TraceCursor::new(t.clone()));
        assert_eq!(s.transmit_queued(at(2), at(2), 1500), at(4));
        // A moment earlier, it is in time for the first at 2 ms; of two packets queued
        // behind it, the one there before 2 ms takes the second, the one that came at
        // 2 ms waits.
        let mut s = LinkSchedule::Trace(TraceCursor::new(t));
        assert_eq!(s.transmit_queued(Time(2 * MS - 1), Time(2 * MS - 1), 1500), at(2));
        assert_eq!(s.transmit_queued(at(2), Time(2 * MS - 1), 1500), at(2));
        let mut s2 = s.clone();
        assert_eq!(s.transmit_queued(at(2), at(2), 1500), at(4));
        assert_eq!(s2.transmit_queued(at(3), at(3), 1500), at(4));
        let mut c = LinkSchedule::new(&crate::config::LinkRate::Constant(Rate::from_mbps(12)));
        assert_eq!(c.transmit_queued(at(1), at(1), 1500), at(2));
    }

    #[test]
    fn a_constant_rate_remembers_only_what_it_can_reuse() {
        let r = Rate::from_mbps(7);
        let mut c = ConstantRate::new(r);
        for bytes in [1500, 1500, 52, 1500, 0, 64, 64, 9000, 1500] {
            assert_eq!(c.tx_time(bytes), r.tx_time(bytes), "{bytes} bytes");
        }
        assert_eq!(ConstantRate::new(Rate(0)).tx_time(1500), Duration::MAX);
    }
}
