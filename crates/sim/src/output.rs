//! What a simulation reports: samples while it runs, a report at the end. The testbed
//! (crates/emu) reports a real run in the same types, with the same formulas (the
//! associated functions of [`FlowReport`], [`LinkReport`] and [`RttSummary`]).

use crate::config::{CrossConfig, Direction, LinkRate};
use crate::hist::Histogram;
use cclab_units::{Duration, Time};

/// Receives the simulation's time series while it runs. Every method has an empty
/// default, so an observer implements only what it needs.
pub trait Observer {
    /// One flow's state at a sampling instant (every `sample_interval`, for every flow
    /// that has started and not finished).
    fn flow_sample(&mut self, _s: &FlowSample) {}
    /// The bottleneck queue at a sampling instant.
    fn queue_sample(&mut self, _s: &QueueSample) {}
    /// The reverse bottleneck's queue at a sampling instant, right after
    /// [`queue_sample`](Self::queue_sample); only in runs that model it
    /// ([`SimConfig::has_reverse_link`](crate::SimConfig::has_reverse_link)).
    fn reverse_queue_sample(&mut self, _s: &QueueSample) {}
    /// A parameter change took effect on a flow.
    fn param_changed(&mut self, _at: Time, _flow: usize, _name: &str, _value: f64) {}
    /// Whether [`flow_sample`](Self::flow_sample) should be called at all (building a
    /// sample for each of 10,000 flows every 10 ms costs time); default true.
    fn wants_flow_samples(&self) -> bool {
        true
    }
    /// Whether the samples should carry the algorithms' internal variables
    /// ([`FlowSample::cc`]); asking every flow's algorithm for them is most of what a
    /// sample costs, so an observer that ignores them says so; default true.
    fn wants_cc_values(&self) -> bool {
        true
    }
    /// Every active flow at one sampling instant, in flow order. The default hands each
    /// row to [`flow_sample`](Self::flow_sample); an observer that reads the columns
    /// directly saves building a [`FlowSample`] per flow.
    fn flow_samples(&mut self, samples: &FlowSamples) {
        let mut s = FlowSample::default();
        for row in 0..samples.len() {
            samples.row(row, &mut s);
            self.flow_sample(&s);
        }
    }
}

/// An observer that records nothing.
pub struct NoObserver;
impl Observer for NoObserver {
    fn wants_flow_samples(&self) -> bool {
        false
    }
    fn wants_cc_values(&self) -> bool {
        false
    }
}

/// An observer that keeps every sample in memory (for tests and small runs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recorder {
    pub flows: Vec<FlowSample>,
    pub queue: Vec<QueueSample>,
    pub reverse_queue: Vec<QueueSample>,
    pub changes: Vec<(Time, usize, String, f64)>,
}

impl Observer for Recorder {
    fn flow_sample(&mut self, s: &FlowSample) {
        self.flows.push(s.clone());
    }
    fn queue_sample(&mut self, s: &QueueSample) {
        self.queue.push(s.clone());
    }
    fn reverse_queue_sample(&mut self, s: &QueueSample) {
        self.reverse_queue.push(s.clone());
    }
    fn param_changed(&mut self, at: Time, flow: usize, name: &str, value: f64) {
        self.changes.push((at, flow, name.to_string(), value));
    }
}

/// One flow at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSample {
    pub time: Time,
    pub flow: usize,
    pub cwnd_pkts: u32,
    pub ssthresh_pkts: u32,
    /// Smoothed RTT (zero before the first sample).
    pub srtt: Duration,
    pub inflight_pkts: u32,
    /// Bytes delivered in order to the receiving application so far.
    pub delivered_bytes: u64,
    pub retransmits: u64,
    /// The algorithm's internal variables at this instant (`cc_*` columns), in the
    /// algorithm's own fixed order.
    pub cc: Vec<(&'static str, f64)>,
}

/// One row of [`FlowSamples`] without its internal variables: a [`FlowSample`]'s numbers
/// (no time, no `cc`), as the engine copies them from a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleRow {
    pub flow: usize,
    pub cwnd_pkts: u32,
    pub ssthresh_pkts: u32,
    pub srtt: Duration,
    pub inflight_pkts: u32,
    pub delivered_bytes: u64,
    pub retransmits: u64,
}

/// Every active flow at one sampling instant, a column per field of [`FlowSample`]
/// (row `r` of each column is one flow): the engine only copies a few numbers per flow
/// into them, and the columns keep their room from one instant to the next.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSamples {
    pub time: Time,
    pub flow: Vec<usize>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub srtt: Vec<Duration>,
    pub inflight_pkts: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub retransmits: Vec<u64>,
    /// Every row's internal variables one after another (empty rows when no observer
    /// [wants them](Observer::wants_cc_values)); see [`cc_of`](Self::cc_of).
    cc: Vec<(&'static str, f64)>,
    /// Where each row's part of `cc` ends.
    cc_ends: Vec<usize>,
}

impl FlowSamples {
    /// Empties the columns for the instant `time`, keeping their room.
    pub fn start(&mut self, time: Time) {
        self.time = time;
        self.flow.clear();
        self.cwnd_pkts.clear();
        self.ssthresh_pkts.clear();
        self.srtt.clear();
        self.inflight_pkts.clear();
        self.delivered_bytes.clear();
        self.retransmits.clear();
        self.cc.clear();
        self.cc_ends.clear();
    }

    /// Adds one row: the flow's numbers in `s` (its `time` and `cc` are not read), then
    /// whatever `inspect` reports as its internal variables.
    pub fn push(
        &mut self,
        s: &FlowSample,
        inspect: impl FnOnce(&mut dyn FnMut(&'static str, f64)),
    ) {
        let row = SampleRow {
            flow: s.flow,
            cwnd_pkts: s.cwnd_pkts,
            ssthresh_pkts: s.ssthresh_pkts,
            srtt: s.srtt,
            inflight_pkts: s.inflight_pkts,
            delivered_bytes: s.delivered_bytes,
            retransmits: s.retransmits,
        };
        self.write_rows(self.len(), 1, |rows| rows.push(&row, inspect));
    }

    /// Replaces the rows with those of the instant `time`: `write` calls
    /// [`RowWriter::push`] at most `max_rows` times. Each row is stored by index into
    /// columns already long enough, rather than pushed column by column: with a hundred
    /// flows sampled every 10 ms, the pushes' length and capacity checks and the
    /// columns' regrowth from empty at each instant were a fifth of what sampling cost.
    pub fn fill(&mut self, time: Time, max_rows: usize, write: impl FnOnce(&mut RowWriter<'_>)) {
        self.time = time;
        self.cc.clear();
        self.write_rows(0, max_rows, write);
    }

    /// Writes up to `max_rows` rows from row `first` on, and drops any rows after them.
    fn write_rows(
        &mut self,
        first: usize,
        max_rows: usize,
        write: impl FnOnce(&mut RowWriter<'_>),
    ) {
        let room = first + max_rows;
        if self.flow.len() < room {
            self.resize(room);
        }
        let mut writer = RowWriter {
            flow: &mut self.flow[..room],
            cwnd_pkts: &mut self.cwnd_pkts[..room],
            ssthresh_pkts: &mut self.ssthresh_pkts[..room],
            srtt: &mut self.srtt[..room],
            inflight_pkts: &mut self.inflight_pkts[..room],
            delivered_bytes: &mut self.delivered_bytes[..room],
            retransmits: &mut self.retransmits[..room],
            cc_ends: &mut self.cc_ends[..room],
            cc: &mut self.cc,
            rows: first,
        };
        write(&mut writer);
        let rows = writer.rows;
        self.resize(rows);
    }

    /// Makes every column `rows` long (new rows are zero).
    fn resize(&mut self, rows: usize) {
        self.flow.resize(rows, 0);
        self.cwnd_pkts.resize(rows, 0);
        self.ssthresh_pkts.resize(rows, 0);
        self.srtt.resize(rows, Duration::ZERO);
        self.inflight_pkts.resize(rows, 0);
        self.delivered_bytes.resize(rows, 0);
        self.retransmits.resize(rows, 0);
        self.cc_ends.resize(rows, 0);
    }

    /// Appends `other`'s rows after these (the time stays this one's): a results writer
    /// gathers several instants' rows into one batch this way, without an allocation per
    /// instant.
    pub fn append(&mut self, other: &FlowSamples) {
        self.flow.extend_from_slice(&other.flow);
        self.cwnd_pkts.extend_from_slice(&other.cwnd_pkts);
        self.ssthresh_pkts.extend_from_slice(&other.ssthresh_pkts);
        self.srtt.extend_from_slice(&other.srtt);
        self.inflight_pkts.extend_from_slice(&other.inflight_pkts);
        self.delivered_bytes.extend_from_slice(&other.delivered_bytes);
        self.retransmits.extend_from_slice(&other.retransmits);
        let cc_before = self.cc.len();
        self.cc.extend_from_slice(&other.cc);
        self.cc_ends.extend(other.cc_ends.iter().map(|end| end + cc_before));
    }

    /// Rows (flows) at this instant.
    pub fn len(&self) -> usize {
        self.flow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }

    /// Row `row`'s internal variables, in its algorithm's own order.
    pub fn cc_of(&self, row: usize) -> &[(&'static str, f64)] {
        let start = if row == 0 { 0 } else { self.cc_ends[row - 1] };
        &self.cc[start..self.cc_ends[row]]
    }

    /// Row `row` as a [`FlowSample`], written into `s` (its `cc` keeps its room).
    pub fn row(&self, row: usize, s: &mut FlowSample) {
        s.time = self.time;
        s.flow = self.flow[row];
        s.cwnd_pkts = self.cwnd_pkts[row];
        s.ssthresh_pkts = self.ssthresh_pkts[row];
        s.srtt = self.srtt[row];
        s.inflight_pkts = self.inflight_pkts[row];
        s.delivered_bytes = self.delivered_bytes[row];
        s.retransmits = self.retransmits[row];
        s.cc.clear();
        s.cc.extend_from_slice(self.cc_of(row));
    }
}

/// Writes rows into the columns of a [`FlowSamples`] (see [`FlowSamples::fill`]). The
/// columns are slices of one length, so a single check of the row index covers them all.
pub struct RowWriter<'a> {
    flow: &'a mut [usize],
    cwnd_pkts: &'a mut [u32],
    ssthresh_pkts: &'a mut [u32],
    srtt: &'a mut [Duration],
    inflight_pkts: &'a mut [u32],
    delivered_bytes: &'a mut [u64],
    retransmits: &'a mut [u64],
    cc_ends: &'a mut [usize],
    cc: &'a mut Vec<(&'static str, f64)>,
    /// Rows written so far (the next row's index).
    rows: usize,
}

impl RowWriter<'_> {
    /// The next row: `row`'s numbers, then whatever `inspect` reports as the flow's
    /// internal variables. Panics past the `max_rows` given to [`FlowSamples::fill`].
    pub fn push(
        &mut self,
        row: &SampleRow,
        inspect: impl FnOnce(&mut dyn FnMut(&'static str, f64)),
    ) {
        let k = self.rows;
        assert!(k < self.flow.len(), "more rows than FlowSamples::fill was given room for");
        self.flow[k] = row.flow;
        self.cwnd_pkts[k] = row.cwnd_pkts;
        self.ssthresh_pkts[k] = row.ssthresh_pkts;
        self.srtt[k] = row.srtt;
        self.inflight_pkts[k] = row.inflight_pkts;
        self.delivered_bytes[k] = row.delivered_bytes;
        self.retransmits[k] = row.retransmits;
        let cc = &mut *self.cc;
        inspect(&mut |name, value| cc.push((name, value)));
        self.cc_ends[k] = cc.len();
        self.rows = k + 1;
    }
}

/// One packet event, kept while [`Simulation::record_packets`] is on: the simulator's
/// side of the testbed's packet log (`cclab testbed run --packet-log`), with the same
/// events, so that one script reads both. A cross-traffic packet is recorded at its
/// bottleneck (arrive, drop, depart), where the simulator's model of it ends.
///
/// [`Simulation::record_packets`]: crate::Simulation::record_packets
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRecord {
    pub time: Time,
    /// The TCP flow's index; cross-traffic source `i` is the number of flows plus `i`.
    pub flow: u32,
    /// Which bottleneck or path: forward (data of forward flows, the testbed's "up") or
    /// reverse (their ACKs, the testbed's "down").
    pub direction: Direction,
    pub event: PacketEvent,
}

/// What happened to a packet (see [`PacketRecord`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    /// Queued at the bottleneck, or, for an ACK of a run without a reverse bottleneck,
    /// set off on its path; with the backlog after it, in packets (the one on the link
    /// included).
    Arrive { queue: u64 },
    /// Lost at random, refused by the queue, or dropped from it by the queue discipline;
    /// with the backlog after it.
    Drop { queue: u64 },
    /// Left the bottleneck's link (for an ACK without a reverse bottleneck, at once).
    Depart,
    /// Reached the receiver (data) or the sender (an ACK).
    Release,
}

/// The bottleneck queue at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueSample {
    pub time: Time,
    pub packets: u64,
    pub bytes: u64,
    /// Packets dropped at the bottleneck so far (queue overflow, AQM and random loss).
    pub drops: u64,
}

/// Totals at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Simulated time covered.
    pub duration: Duration,
    /// The forward bottleneck.
    pub link: LinkReport,
    /// The reverse bottleneck, in runs that model it.
    pub reverse_link: Option<LinkReport>,
    pub flows: Vec<FlowReport>,
    /// The cross-traffic sources (`[[cross]]`, after `count` is expanded), in order.
    pub cross: Vec<CrossReport>,
    /// Events processed (for speed figures; deterministic for a given scenario and seed).
    /// The forward bottleneck's departures are handled beside the event queue and are
    /// not counted (see the engine's module doc).
    pub events: u64,
}

impl Report {
    /// The cross sources of `direction` together, as the load they put on its
    /// bottleneck: their offered and delivered bytes over the run's whole duration, in
    /// bit/s (a sum of the sources' own rates would add sources active at different
    /// times as if they sent together). `sources` is the run's configuration of them,
    /// `cfg.cross`.
    pub fn cross_load_bps(&self, sources: &[CrossConfig], direction: Direction) -> (f64, f64) {
        let of_direction = self.cross.iter().filter(|c| sources[c.source].direction == direction);
        let (sent, delivered) =
            of_direction.fold((0, 0), |(s, d), c| (s + c.sent_bytes, d + c.delivered_bytes));
        (CrossReport::bps(sent, self.duration), CrossReport::bps(delivered, self.duration))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkReport {
    /// The link's mean capacity over the run in bit/s (the constant rate, or the trace's).
    pub capacity_bps: f64,
    /// Fraction of the capacity used by delivered bytes, 0..1.
    pub utilization: f64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Drops at the bottleneck: queue overflow plus AQM.
    pub queue_drops: u64,
    /// Packets lost to the random loss model.
    pub random_losses: u64,
    /// Time-averaged queue length in packets.
    pub mean_queue_packets: f64,
}

/// One cross-traffic source's totals: what it sent into the bottleneck of its direction,
/// and what crossed it.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossReport {
    pub source: usize,
    /// Packets sent, and their bytes on the wire.
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// Packets that crossed the bottleneck, and their bytes on the wire.
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Packets lost at the bottleneck: queue drops (overflow and AQM) and random loss;
    /// None where not measured (the testbed's forwarder counts drops by address, which
    /// every source shares).
    pub drops: Option<u64>,
}

impl CrossReport {
    /// Bytes on the wire over `duration`, as bit/s (a cross source's rates are its
    /// packets' whole size, as its configured rate is).
    pub fn bps(bytes: u64, duration: Duration) -> f64 {
        bytes as f64 * 8.0 / duration.as_secs_f64().max(1e-9)
    }

    /// The source's offered and delivered rates in bit/s over its active time in a run
    /// of `duration` (as a flow's goodput is over its own), given its configuration.
    pub fn rates_bps(&self, source: &CrossConfig, duration: Duration) -> (f64, f64) {
        let active = source.active_time(duration);
        (CrossReport::bps(self.sent_bytes, active), CrossReport::bps(self.delivered_bytes, active))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowReport {
    pub flow: usize,
    /// Payload bytes delivered in order to the receiver.
    pub delivered_bytes: u64,
    /// Goodput over the flow's active time (start to completion or stop or end of run).
    pub goodput_bps: f64,
    /// Segments retransmitted (fast retransmit and RTO), SYNs included.
    pub retransmits: u64,
    /// Retransmission timer expiries, the SYN's included.
    pub timeouts: u64,
    /// Tail-loss probes sent (None where unknown: the kernel counts them only for the
    /// whole host, `TCPLossProbes`, not per connection).
    pub probes: Option<u64>,
    /// The flow's segments (data and SYNs) lost at its bottleneck: queue drops (overflow
    /// and AQM) and random loss. Its ACKs lost on the way back are not counted.
    pub drops: u64,
    /// RTT samples (each ACK with a valid sample), as percentiles.
    pub rtt: RttSummary,
    /// For finite transfers, when the last byte was acknowledged.
    pub completed_at: Option<Time>,
}

/// RTT statistics in milliseconds; NaN (written as `null` or `-`) for a flow with no RTT
/// sample, whose RTT is unknown, not zero. Equality takes two unknowns as equal, so that
/// two identical runs' reports compare equal.
#[derive(Clone, Copy, Debug)]
pub struct RttSummary {
    pub samples: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

impl FlowReport {
    /// Goodput over a flow's active time: from `start` to the earliest of `now` and the
    /// given ends (its stop, its completion); zero if it has not been active. For a flow
    /// that stopped, `delivered_bytes` are those delivered by its stop, so that bytes it
    /// had in flight, delivered after it, do not count over a time that ends before them
    /// (a flow stopped early could otherwise show more than the link's rate).
    pub fn goodput_bps(
        delivered_bytes: u64,
        start: Time,
        ends: [Option<Time>; 2],
        now: Time,
    ) -> f64 {
        let until = ends.into_iter().flatten().fold(now, Time::min);
        let active = until.saturating_since(start);
        if active.0 > 0 {
            delivered_bytes as f64 * 8.0 / active.as_secs_f64()
        } else {
            0.0
        }
    }
}

impl LinkReport {
    /// The link's mean capacity over `elapsed`: a constant rate as it is, a trace's from
    /// the `capacity_bytes` its opportunities offered.
    pub fn capacity_bps(rate: &LinkRate, elapsed: Duration, capacity_bytes: u64) -> f64 {
        match rate {
            LinkRate::Constant(r) => r.0 as f64,
            LinkRate::Trace(_) => capacity_bytes as f64 * 8.0 / (elapsed.0.max(1) as f64 / 1e9),
        }
    }

    /// The fraction of `capacity_bytes` that `delivered_bytes` used, at most 1.
    pub fn utilization(delivered_bytes: u64, capacity_bytes: u64) -> f64 {
        if capacity_bytes == 0 {
            0.0
        } else {
            (delivered_bytes as f64 / capacity_bytes as f64).min(1.0)
        }
    }
}

impl Default for RttSummary {
    /// No samples, so no figures.
    fn default() -> RttSummary {
        let none = f64::NAN;
        RttSummary { samples: 0, mean_ms: none, p50_ms: none, p95_ms: none, p99_ms: none }
    }
}

impl PartialEq for RttSummary {
    fn eq(&self, other: &RttSummary) -> bool {
        let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        self.samples == other.samples
            && same(self.mean_ms, other.mean_ms)
            && same(self.p50_ms, other.p50_ms)
            && same(self.p95_ms, other.p95_ms)
            && same(self.p99_ms, other.p99_ms)
    }
}

impl RttSummary {
    /// The summary of RTT samples recorded in microseconds.
    pub fn of(rtt_us: &Histogram) -> RttSummary {
        if rtt_us.count() == 0 {
            return RttSummary::default();
        }
        RttSummary {
            samples: rtt_us.count(),
            mean_ms: rtt_us.mean() / 1000.0,
            p50_ms: rtt_us.quantile(0.5) / 1000.0,
            p95_ms: rtt_us.quantile(0.95) / 1000.0,
            p99_ms: rtt_us.quantile(0.99) / 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow without samples has no RTT figures, and two such summaries are equal (so
    /// are two runs' reports), while different figures are not.
    #[test]
    fn an_rtt_summary_without_samples_is_unknown_and_equal_to_itself() {
        let none = RttSummary::of(&Histogram::default());
        assert!(none.p50_ms.is_nan() && none.mean_ms.is_nan() && none.samples == 0);
        assert_eq!(none, RttSummary::default());
        let some = RttSummary { samples: 1, mean_ms: 1.0, p50_ms: 1.0, p95_ms: 1.0, p99_ms: 1.0 };
        assert_ne!(none, some);
        assert_ne!(some, RttSummary { p99_ms: 2.0, ..some });
    }

    fn sample(flow: usize, cwnd_pkts: u32) -> FlowSample {
        FlowSample { time: Time(7), flow, cwnd_pkts, ..FlowSample::default() }
    }

    /// Rows with and without internal variables side by side: each row gets its own.
    #[test]
    fn each_row_keeps_its_own_internal_variables() {
        let mut b = FlowSamples::default();
        b.start(Time(5));
        b.push(&sample(0, 10), |report| report("w_max", 1.5));
        b.push(&sample(2, 20), |_| {});
        b.push(&sample(3, 30), |report| {
            report("k", 2.0);
            report("cnt", 3.0);
        });
        assert_eq!(b.len(), 3);
        assert_eq!(b.cc_of(0), &[("w_max", 1.5)]);
        assert!(b.cc_of(1).is_empty());
        assert_eq!(b.cc_of(2), &[("k", 2.0), ("cnt", 3.0)]);
        let mut s = FlowSample::default();
        b.row(2, &mut s);
        let expected =
            FlowSample { time: Time(5), cc: vec![("k", 2.0), ("cnt", 3.0)], ..sample(3, 30) };
        assert_eq!(s, expected, "the instant's time, not the pushed sample's");
        b.row(1, &mut s);
        assert_eq!(s, FlowSample { time: Time(5), ..sample(2, 20) });
        // A new instant starts empty.
        b.start(Time(6));
        assert!(b.is_empty() && b.flow.is_empty() && b.srtt.is_empty());
    }

    /// `fill` replaces the instant's rows with those written, however many there were
    /// before and however much room it was given.
    #[test]
    fn fill_keeps_exactly_the_rows_written() {
        let row = |flow, cwnd_pkts| SampleRow { flow, cwnd_pkts, ..SampleRow::default() };
        let mut b = FlowSamples::default();
        b.fill(Time(1), 4, |rows| {
            rows.push(&row(0, 10), |report| report("k", 1.0));
            rows.push(&row(1, 11), |_| {});
            rows.push(&row(3, 13), |report| report("k", 3.0));
        });
        assert_eq!((b.time, b.len()), (Time(1), 3));
        assert_eq!(
            (b.flow.as_slice(), b.cwnd_pkts.as_slice()),
            (&[0, 1, 3][..], &[10, 11, 13][..])
        );
        assert!(b.srtt.len() == 3 && b.retransmits.len() == 3 && b.delivered_bytes.len() == 3);
        assert_eq!(
            (b.cc_of(0), b.cc_of(1), b.cc_of(2)),
            (&[("k", 1.0)][..], &[][..], &[("k", 3.0)][..])
        );
        // Fewer rows at the next instant: nothing of the last one is left.
        b.fill(Time(2), 4, |rows| rows.push(&row(2, 12), |_| {}));
        assert_eq!(
            (b.time, b.flow.as_slice(), b.cwnd_pkts.as_slice()),
            (Time(2), &[2][..], &[12][..])
        );
        assert!(b.cc_of(0).is_empty() && b.inflight_pkts.len() == 1);
        // A push after a fill adds a row.
        b.push(&FlowSample { flow: 5, cwnd_pkts: 15, ..FlowSample::default() }, |_| {});
        assert_eq!((b.time, b.flow.as_slice()), (Time(2), &[2, 5][..]));
    }

    #[test]
    #[should_panic(expected = "more rows than")]
    fn fill_refuses_rows_beyond_its_room() {
        let mut b = FlowSamples::default();
        b.fill(Time(1), 1, |rows| {
            rows.push(&SampleRow::default(), |_| {});
            rows.push(&SampleRow::default(), |_| {});
        });
    }
}
