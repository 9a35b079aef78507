//! How much processor time the machine's host took from each of this guest's processors
//! while a real-time run lasted ("steal time").
//!
//! In a virtual machine the host runs each virtual processor as one of its own threads,
//! and when it runs something else instead the guest's processor stands still: the
//! emulator's timer fires late, a host's sender wakes late, and packets meet at the
//! bottleneck in an order the scenario's network would not give them. The guest's kernel
//! counts that time per processor (the `steal` column of `/proc/stat`, from the
//! hypervisor's steal clock: `account_steal_time` in kernel/sched/cputime.c), so a run
//! can say how much of it there was, and on which processor, beside the lateness the
//! emulator measures itself (docs/fidelity.md, "The host's steal, recorded per run").
//! On bare metal, and on hypervisors that do not report it, the counts stay at zero.

use cclab_units::{Duration, Time};

/// Each processor's steal counter, in the kernel's clock ticks (`USER_HZ`), in
/// processor order as `/proc/stat` lists them (`cpu0`, `cpu1`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StealCounters(Vec<(usize, u64)>);

impl StealCounters {
    /// The counters now; empty where `/proc/stat` cannot be read.
    pub fn now() -> StealCounters {
        StealCounters::parse(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
    }

    /// The per-processor lines (`cpuN user nice system idle iowait irq softirq steal
    /// ...`, proc(5)) of a `/proc/stat` text; a line without a steal column (kernels
    /// before 2.6.11) or that does not parse is left out.
    pub fn parse(text: &str) -> StealCounters {
        let per_cpu = text.lines().filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal = fields.nth(7)?.parse().ok()?;
            Some((cpu, steal))
        });
        StealCounters(per_cpu.collect())
    }

    /// What each processor had stolen between `earlier` and these counters, indexed by
    /// processor number (a processor missing from either reading, say taken offline,
    /// counts zero).
    pub fn since(&self, earlier: &StealCounters) -> Vec<Duration> {
        let Some(last_cpu) = self.0.iter().map(|&(cpu, _)| cpu).max() else {
            return Vec::new();
        };
        let tick_ns = 1_000_000_000 / clock_ticks_per_second();
        let mut stolen = vec![Duration::ZERO; last_cpu + 1];
        for &(cpu, now) in &self.0 {
            if let Some(&(_, before)) = earlier.0.iter().find(|&&(c, _)| c == cpu) {
                stolen[cpu] = Duration::from_nanos(now.saturating_sub(before) * tick_ns);
            }
        }
        stolen
    }
}

/// The steal of a run as it grew: read at the run's sampling instants, kept where it had
/// grown. A whole run's sum cannot say whether the host took its time during the half
/// second in which a flow's slow start decides where it leaves; this can (the fidelity
/// report sums it over each flow's slow start).
#[derive(Clone, Debug, Default)]
pub struct StealTimeline {
    /// The first reading, which the others count from.
    start: StealCounters,
    /// When the counters were last read.
    last_read: Option<Time>,
    /// Each processor's steal since `start` at the instants where it had grown since
    /// the entry before.
    growth: Vec<(Time, Vec<Duration>)>,
}

impl StealTimeline {
    /// The counters move in `USER_HZ` ticks (10 ms), so reading them more often shows
    /// nothing more; each read of `/proc/stat` costs about 10 us of the processor the
    /// hosts' threads run on.
    const READ_EVERY: Duration = Duration::from_millis(10);

    /// Reads the counters at `t` (a run's sampling instant) unless they were read less
    /// than [`Self::READ_EVERY`] before; `last` reads them whatever the interval (the
    /// run's end).
    pub fn read(&mut self, t: Time, last: bool) {
        if let Some(prev) = self.last_read {
            if !last && t.saturating_since(prev) < Self::READ_EVERY {
                return;
            }
        }
        self.record(t, StealCounters::now());
    }

    /// Adds the reading `now`, taken at `t`.
    fn record(&mut self, t: Time, now: StealCounters) {
        if self.last_read.replace(t).is_none() {
            self.start = now;
            return;
        }
        let stolen = now.since(&self.start);
        let before = self.growth.last().map(|(_, s)| s.as_slice());
        let total = |s: &[Duration]| s.iter().map(|d| d.as_nanos()).sum::<u64>();
        if total(&stolen) > before.map_or(0, total) {
            self.growth.push((t, stolen));
        }
    }

    /// Each processor's steal over the whole run (empty where `/proc/stat` cannot be
    /// read), indexed by processor.
    pub fn total(&self) -> Vec<Duration> {
        match self.growth.last() {
            Some((_, stolen)) => stolen.clone(),
            None => self.start.since(&self.start),
        }
    }

    /// The instants where the steal had grown, each with every processor's steal since
    /// the run's first reading.
    pub fn growth(&self) -> &[(Time, Vec<Duration>)] {
        &self.growth
    }
}

/// `USER_HZ`, the unit of `/proc/stat`'s counters (100 on Linux's common architectures).
fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf takes a constant and has no other effect.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).ok().filter(|&hz| hz > 0).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "cpu  900 0 300 10000 5 0 2 130 0 0
cpu0 400 0 100 5000 2 0 1 20 0 0
cpu1 500 0 200 5000 3 0 1 110 0 0
intr 12345
ctxt 678
";

    const AFTER: &str = "cpu  1000 0 310 10400 5 0 2 260 0 0
cpu0 450 0 105 5200 2 0 1 23 0 0
cpu1 550 0 205 5200 3 0 1 237 0 0
intr 12999
";

    #[test]
    fn each_processors_steal_is_read_from_its_eighth_counter_and_the_total_line_is_not() {
        let c = StealCounters::parse(BEFORE);
        assert_eq!(c, StealCounters(vec![(0, 20), (1, 110)]));
    }

    #[test]
    fn the_steal_between_two_readings_is_in_clock_ticks_per_processor() {
        let tick = 1_000_000_000 / clock_ticks_per_second();
        let stolen = StealCounters::parse(AFTER).since(&StealCounters::parse(BEFORE));
        assert_eq!(stolen, vec![Duration::from_nanos(3 * tick), Duration::from_nanos(127 * tick)]);
    }

    #[test]
    fn a_processor_absent_from_the_first_reading_counts_zero_and_short_lines_are_skipped() {
        let before = StealCounters::parse("cpu0 1 2 3 4 5 6 7 8\ncpu1 1 2 3\n");
        assert_eq!(before, StealCounters(vec![(0, 8)]));
        let after = StealCounters::parse("cpu0 1 2 3 4 5 6 7 9\ncpu1 1 2 3 4 5 6 7 50\n");
        let tick = Duration::from_nanos(1_000_000_000 / clock_ticks_per_second());
        assert_eq!(after.since(&before), vec![tick, Duration::ZERO]);
        assert_eq!(StealCounters::default().since(&before), Vec::<Duration>::new());
    }

    #[test]
    fn a_timeline_keeps_the_instants_where_steal_grew_counted_from_its_first_reading() {
        let tick = Duration::from_nanos(1_000_000_000 / clock_ticks_per_second());
        let at = |ms| Time::ZERO + Duration::from_millis(ms);
        let mut timeline = StealTimeline::default();
        timeline
            .record(at(0), StealCounters::parse("cpu0 0 0 0 0 0 0 0 5\ncpu1 0 0 0 0 0 0 0 7\n"));
        assert_eq!(timeline.total(), vec![Duration::ZERO, Duration::ZERO]);
        timeline
            .record(at(10), StealCounters::parse("cpu0 0 0 0 0 0 0 0 5\ncpu1 0 0 0 0 0 0 0 7\n"));
        timeline
            .record(at(20), StealCounters::parse("cpu0 0 0 0 0 0 0 0 6\ncpu1 0 0 0 0 0 0 0 9\n"));
        timeline
            .record(at(30), StealCounters::parse("cpu0 0 0 0 0 0 0 0 6\ncpu1 0 0 0 0 0 0 0 9\n"));
        timeline
            .record(at(40), StealCounters::parse("cpu0 0 0 0 0 0 0 0 6\ncpu1 0 0 0 0 0 0 0 10\n"));
        let (one, two, three) = (tick, tick.saturating_mul(2), tick.saturating_mul(3));
        assert_eq!(timeline.growth(), &[(at(20), vec![one, two]), (at(40), vec![one, three])]);
        assert_eq!(timeline.total(), vec![one, three]);
        assert!(StealTimeline::default().total().is_empty());
    }

    #[test]
    fn a_timeline_reads_at_most_once_a_tick_but_always_at_the_end() {
        let at = |ms| Time::ZERO + Duration::from_millis(ms);
        let mut timeline = StealTimeline::default();
        timeline.read(at(0), false);
        timeline.read(at(4), false);
        assert_eq!(timeline.last_read, Some(at(0)));
        timeline.read(at(10), false);
        assert_eq!(timeline.last_read, Some(at(10)));
        timeline.read(at(12), true);
        assert_eq!(timeline.last_read, Some(at(12)));
    }

    #[test]
    fn this_machines_counters_are_read_and_nothing_is_stolen_between_a_reading_and_itself() {
        let now = StealCounters::now();
        assert!(!now.0.is_empty(), "no per-processor line in /proc/stat");
        assert!(now.since(&now).iter().all(|&d| d == Duration::ZERO));
    }
}
