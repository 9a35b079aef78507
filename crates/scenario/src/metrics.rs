//! Summary statistics of a run: fairness (Jain's index, the min/max ratio), throughput
//! ratios against a reference, each group's share, the Bandwidth Stolen Rate of seed
//! `000_…` (CUBIC-FIT), loss synchronisation, and percentiles; plus [`FlowSeries`], the
//! observer that gathers what the report lacks (mean cwnd, goodput in a window, the
//! timing of each flow's losses), and [`run_metrics`], which puts them together.

use crate::metrics_spec::{MetricsSpec, Reference};
use cclab_sim::{
    Direction, FlowConfig, FlowSample, FlowSamples, Observer, QueueSample, Report, SimConfig,
    Simulation,
};
use cclab_units::Time;

/// Jain's fairness index (Jain, Chiu & Hawe, DEC-TR-301, 1984):
/// `(sum x)^2 / (n * sum x^2)`, from 1/n (one flow has everything) to 1 (equal shares).
/// Defined as 1 for an empty list or when every value is zero (nobody is favoured).
pub fn jain(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|x| x * x).sum();
    if values.is_empty() || sum_sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sum_sq)
    }
}

/// Whether fairness leaves the reverse flows out: with flows in both directions, only
/// the forward ones share a bottleneck (the reverse ones cross another link), so Jain's
/// index and the min/max ratio compare the forward flows' goodputs.
pub fn fairness_forward_only(cfg: &SimConfig) -> bool {
    let forward = |f: &FlowConfig| f.direction == Direction::Forward;
    cfg.flows.iter().any(forward) && !cfg.flows.iter().all(forward)
}

/// The goodputs fairness compares (see [`fairness_forward_only`]).
pub fn fairness_goodputs(cfg: &SimConfig, report: &Report) -> Vec<f64> {
    let forward_only = fairness_forward_only(cfg);
    report
        .flows
        .iter()
        .filter(|r| !forward_only || cfg.flows[r.flow].direction == Direction::Forward)
        .map(|r| r.goodput_bps)
        .collect()
}

/// `a / b`, e.g. the goodput of a CUBIC-FIT flow over that of its CUBIC competitor.
/// `None` when `b` is zero.
pub fn throughput_ratio(a: f64, b: f64) -> Option<f64> {
    (b != 0.0).then(|| a / b)
}

/// Bandwidth Stolen Rate as seed `000_…` defines it (after its reference [1]): with `t0`
/// the average throughput of S plain CUBIC flows sharing the bottleneck, and `t_prime` the
/// average throughput of S-1 plain CUBIC flows when one of the S is replaced by the flow
/// under test, `Phi = (T0 - T') / T0`. 0 means perfectly friendly; positive means the
/// test flow takes bandwidth from the others. `None` when `t0` is not positive.
pub fn bandwidth_stolen_rate(t0: f64, t_prime: f64) -> Option<f64> {
    (t0 > 0.0).then(|| (t0 - t_prime) / t0)
}

/// The arithmetic mean (`None` for an empty list).
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The `p`-th percentile (0..=100) of `values`, by linear interpolation between the two
/// nearest ranks (Hyndman & Fan type 7, numpy's default). `None` for an empty list or a
/// `p` outside 0..=100. NaNs sort last.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = p / 100.0 * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    Some(v[lo] + (v[hi] - v[lo]) * (rank - lo as f64))
}

/// The smallest throughput over the largest: 1 when equal, towards 0 when one flow
/// starves (the ns-2 study's fairness ratio FR = Thru_i / Thru_j, taken for the pair
/// furthest apart). `None` without flows or when every flow got nothing.
pub fn min_max_ratio(values: &[f64]) -> Option<f64> {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    (max > 0.0).then(|| min / max)
}

/// Loss synchronisation of flows sharing a bottleneck: the run is cut into intervals of
/// one base RTT (a congestion event reaches every flow within about an RTT); in each
/// interval where at least one of the `active` flows (two or more) lost a packet, the
/// fraction of active flows that lost one; the mean of those fractions. 1 means every
/// loss event hits all flows at once (global synchronisation); 1/n means flows lose
/// alone. This is the "global synchronisation rate" of Hassayoun & Ros, "Loss
/// synchronization and router buffer sizing with high-speed versions of TCP" (IEEE
/// INFOCOM Workshops 2008), with loss events read from retransmissions. Each interval
/// is (active flows, flows that lost). `None` when no interval qualifies.
pub fn synchronisation(intervals: &[(u32, u32)]) -> Option<f64> {
    let fractions: Vec<f64> = intervals
        .iter()
        .filter(|&&(active, lost)| active >= 2 && lost >= 1)
        .map(|&(active, lost)| lost as f64 / active as f64)
        .collect();
    mean(&fractions)
}

/// The group a flow belongs to: its `[[flows]]` name, or its algorithm when it has none
/// (the scenario names flows `<name or cc>#<number>`, the number in the file; the
/// suffix is dropped).
pub fn group_of(f: &FlowConfig, number: usize) -> String {
    let base = f.name.strip_suffix(&format!("#{number}")).unwrap_or(&f.name);
    if base.is_empty() {
        f.cc.clone()
    } else {
        base.to_string()
    }
}

/// Gathers, while a run goes on, what the end-of-run report does not hold: each flow's
/// mean cwnd, delivered bytes at the edges of the metrics window, and which flows lost
/// packets in each synchronisation interval.
pub struct FlowSeries {
    interval_ns: u64,
    window_ns: Option<(u64, u64)>,
    flows: Vec<SeriesOfFlow>,
    current: Option<u64>,
    /// Flows active and flows that lost a packet in the current interval.
    active: u32,
    lost: u32,
    intervals: Vec<(u32, u32)>,
}

#[derive(Clone, Default)]
struct SeriesOfFlow {
    cwnd_sum: f64,
    samples: u64,
    retransmits: u64,
    seen_in: Option<u64>,
    lost_in: Option<u64>,
    delivered_at_start: u64,
    delivered_at_end: u64,
}

impl FlowSeries {
    pub fn new(cfg: &SimConfig, spec: &MetricsSpec) -> FlowSeries {
        let max_rtt = cfg.flows.iter().map(|f| f.rtt.as_nanos()).max().unwrap_or(0);
        FlowSeries {
            interval_ns: max_rtt.max(cfg.sample_interval.as_nanos()).max(1),
            window_ns: spec.window.map(|(a, b)| (a.as_nanos(), b.as_nanos())),
            flows: vec![SeriesOfFlow::default(); cfg.flows.len()],
            current: None,
            active: 0,
            lost: 0,
            intervals: Vec::new(),
        }
    }

    /// (active flows, flows that lost) per interval, the current one included.
    pub fn intervals(&self) -> Vec<(u32, u32)> {
        let mut all = self.intervals.clone();
        if self.current.is_some() {
            all.push((self.active, self.lost));
        }
        all
    }
}

impl FlowSeries {
    /// Moves to the synchronisation interval of a sample taken at `t` (ns), closing the
    /// one before; returns its number. A sample tells what happened since the sample
    /// before it, so interval k is (k I, (k+1) I] and a sample at its end belongs to it:
    /// read as [k I, (k+1) I), a sample on a boundary would carry the losses of the
    /// interval before into the next, and the index would change with `sample_interval`
    /// even where that divides the interval.
    fn enter_interval(&mut self, t: u64) -> u64 {
        let interval = t.saturating_sub(1) / self.interval_ns;
        if self.current != Some(interval) {
            if self.current.is_some() {
                self.intervals.push((self.active, self.lost));
            }
            self.current = Some(interval);
            (self.active, self.lost) = (0, 0);
        }
        interval
    }

    /// One flow's numbers at time `t` (ns) in synchronisation interval `interval`.
    fn record(&mut self, t: u64, interval: u64, s: FlowNumbers) {
        let Some(f) = self.flows.get_mut(s.flow) else { return };
        f.cwnd_sum += s.cwnd_pkts as f64;
        f.samples += 1;
        if f.seen_in != Some(interval) {
            f.seen_in = Some(interval);
            self.active += 1;
        }
        if s.retransmits > f.retransmits && f.lost_in != Some(interval) {
            f.lost_in = Some(interval);
            self.lost += 1;
        }
        f.retransmits = s.retransmits;
        if let Some((start, end)) = self.window_ns {
            if t <= start {
                f.delivered_at_start = s.delivered_bytes;
            }
            if t <= end {
                f.delivered_at_end = s.delivered_bytes;
            }
        }
    }
}

/// What [`FlowSeries`] reads of a flow sample.
#[derive(Clone, Copy)]
struct FlowNumbers {
    flow: usize,
    cwnd_pkts: u32,
    retransmits: u64,
    delivered_bytes: u64,
}

impl Observer for FlowSeries {
    fn flow_sample(&mut self, s: &FlowSample) {
        let t = s.time.as_nanos();
        let interval = self.enter_interval(t);
        let numbers = FlowNumbers {
            flow: s.flow,
            cwnd_pkts: s.cwnd_pkts,
            retransmits: s.retransmits,
            delivered_bytes: s.delivered_bytes,
        };
        self.record(t, interval, numbers);
    }

    fn flow_samples(&mut self, b: &FlowSamples) {
        if b.is_empty() {
            return;
        }
        let t = b.time.as_nanos();
        let interval = self.enter_interval(t);
        for row in 0..b.len() {
            let numbers = FlowNumbers {
                flow: b.flow[row],
                cwnd_pkts: b.cwnd_pkts[row],
                retransmits: b.retransmits[row],
                delivered_bytes: b.delivered_bytes[row],
            };
            self.record(t, interval, numbers);
        }
    }

    fn queue_sample(&mut self, _s: &QueueSample) {}

    fn wants_cc_values(&self) -> bool {
        false
    }
}

/// Passes every sample to two observers (the results recorder and [`FlowSeries`]).
pub struct Tee<'a>(pub &'a mut dyn Observer, pub &'a mut dyn Observer);

impl Observer for Tee<'_> {
    fn flow_sample(&mut self, s: &FlowSample) {
        self.0.flow_sample(s);
        self.1.flow_sample(s);
    }
    fn flow_samples(&mut self, samples: &FlowSamples) {
        self.0.flow_samples(samples);
        self.1.flow_samples(samples);
    }
    fn queue_sample(&mut self, s: &QueueSample) {
        self.0.queue_sample(s);
        self.1.queue_sample(s);
    }
    fn reverse_queue_sample(&mut self, s: &QueueSample) {
        self.0.reverse_queue_sample(s);
        self.1.reverse_queue_sample(s);
    }
    fn param_changed(&mut self, at: Time, flow: usize, name: &str, value: f64) {
        self.0.param_changed(at, flow, name, value);
        self.1.param_changed(at, flow, name, value);
    }
    fn wants_flow_samples(&self) -> bool {
        self.0.wants_flow_samples() || self.1.wants_flow_samples()
    }
    fn wants_cc_values(&self) -> bool {
        self.0.wants_cc_values() || self.1.wants_cc_values()
    }
}

/// The metrics of one run beyond the report's own figures.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMetrics {
    pub flows: Vec<FlowMetrics>,
    /// Jain's index of the flows' goodputs ([`fairness_goodputs`]).
    pub jain: f64,
    /// Jain's index and the min/max ratio are of the forward flows only.
    pub forward_only: bool,
    pub min_max_ratio: Option<f64>,
    pub synchronisation: Option<f64>,
    /// Groups in order of their first flow.
    pub groups: Vec<GroupShare>,
    /// The reference of throughput ratios, as the summary names it.
    pub reference: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowMetrics {
    pub group: String,
    /// Payload bytes sent, retransmissions included, over the flow's active time.
    pub send_rate_bps: Option<f64>,
    pub mean_cwnd_pkts: Option<f64>,
    /// Goodput over `[metrics] window`.
    pub window_goodput_bps: Option<f64>,
    /// Flow completion time of a finite transfer that completed: start to last byte acknowledged.
    pub completion_s: Option<f64>,
    /// Goodput over the reference's mean goodput (the flow itself left out of it).
    pub throughput_ratio: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupShare {
    pub name: String,
    pub flows: usize,
    /// The group's delivered bytes over the whole run, as a rate.
    pub goodput_bps: f64,
    /// Fraction of all bytes delivered, 0..1.
    pub share: f64,
    /// The mean of its flows' goodputs (each while active) over the reference's.
    pub throughput_ratio: Option<f64>,
}

/// Payload bytes each flow's sender transmitted, retransmissions included (the send rate's
/// numerator), read from a simulation at its end.
pub fn sent_bytes(sim: &Simulation) -> Vec<u64> {
    (0..sim.flow_count()).map(|i| sim.payload_bytes_sent(i)).collect()
}

/// Puts the metrics of a run together. `sent_bytes` per flow is known for simulated
/// runs (the sender's counters) and not for real TCP (`None`).
pub fn run_metrics(
    cfg: &SimConfig,
    spec: &MetricsSpec,
    report: &Report,
    series: &FlowSeries,
    sent_bytes: Option<&[u64]>,
) -> RunMetrics {
    let goodputs: Vec<f64> = report.flows.iter().map(|f| f.goodput_bps).collect();
    let groups_of = &spec.groups;
    let reference: Option<Vec<usize>> = spec.reference.as_ref().map(|r| match r {
        Reference::Flow(i) => vec![*i],
        Reference::Group(g) => (0..cfg.flows.len()).filter(|&i| groups_of[i] == *g).collect(),
    });
    let ratio_to_reference = |value: f64, except: Option<usize>| -> Option<f64> {
        let refs: Vec<f64> = reference
            .as_ref()?
            .iter()
            .filter(|&&j| Some(j) != except)
            .map(|&j| goodputs[j])
            .collect();
        throughput_ratio(value, mean(&refs)?)
    };
    let flows = report
        .flows
        .iter()
        .map(|r| {
            let i = r.flow;
            let fc = &cfg.flows[i];
            let until = [Some(Time(cfg.duration.as_nanos())), fc.stop, r.completed_at]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(Time(cfg.duration.as_nanos()));
            let active_s = until.saturating_since(fc.start).as_secs_f64();
            let s = &series.flows[i];
            FlowMetrics {
                group: groups_of[i].clone(),
                send_rate_bps: sent_bytes
                    .and_then(|b| b.get(i))
                    .filter(|_| active_s > 0.0)
                    .map(|&b| b as f64 * 8.0 / active_s),
                mean_cwnd_pkts: (s.samples > 0).then(|| s.cwnd_sum / s.samples as f64),
                window_goodput_bps: window_goodput(cfg, spec, r, s),
                completion_s: r.completed_at.map(|t| t.saturating_since(fc.start).as_secs_f64()),
                throughput_ratio: ratio_to_reference(r.goodput_bps, Some(i)),
            }
        })
        .collect();
    let mut groups = group_shares(groups_of, report, cfg.duration.as_secs_f64());
    for g in &mut groups {
        // Like each flow's ratio: the members' goodputs while active, averaged.
        let members: Vec<f64> =
            (0..goodputs.len()).filter(|&i| groups_of[i] == g.name).map(|i| goodputs[i]).collect();
        g.throughput_ratio = mean(&members).and_then(|m| ratio_to_reference(m, None));
    }
    let fair = fairness_goodputs(cfg, report);
    RunMetrics {
        flows,
        jain: jain(&fair),
        forward_only: fairness_forward_only(cfg),
        min_max_ratio: min_max_ratio(&fair),
        synchronisation: synchronisation(&series.intervals()),
        groups,
        reference: spec.reference.as_ref().map(|r| match r {
            // By its name: its index in the run may not be its number in the file.
            Reference::Flow(i) => cfg.flows[*i].name.clone(),
            Reference::Group(g) => g.clone(),
        }),
    }
}

/// Each flow's share of the bytes all flows delivered (0 for all when none were), the
/// rule of the groups' shares below, flow by flow.
pub fn byte_shares(report: &Report) -> Vec<f64> {
    let total = report.flows.iter().map(|f| f.delivered_bytes).sum::<u64>() as f64;
    let share = |bytes: u64| if total > 0.0 { bytes as f64 / total } else { 0.0 };
    report.flows.iter().map(|f| share(f.delivered_bytes)).collect()
}

/// Each group's flows, goodput and share of the total, in order of first appearance.
/// A group's goodput is its flows' delivered bytes over the whole run, and its share is
/// of all bytes delivered: flows active for part of the run (staggered starts, finite
/// transfers such as web-like traffic) count for the bytes they moved, not for their
/// rate while active (a hundred short transfers would otherwise add up to more than the
/// link).
fn group_shares(groups_of: &[String], report: &Report, duration_s: f64) -> Vec<GroupShare> {
    let rate = |bytes: u64| if duration_s > 0.0 { bytes as f64 * 8.0 / duration_s } else { 0.0 };
    let goodputs: Vec<f64> = report.flows.iter().map(|f| rate(f.delivered_bytes)).collect();
    let total: f64 = goodputs.iter().sum();
    let mut groups: Vec<GroupShare> = Vec::new();
    for (g, &goodput) in groups_of.iter().zip(&goodputs) {
        match groups.iter_mut().find(|x| x.name == *g) {
            Some(x) => {
                x.flows += 1;
                x.goodput_bps += goodput;
            }
            None => groups.push(GroupShare {
                name: g.clone(),
                flows: 1,
                goodput_bps: goodput,
                share: 0.0,
                throughput_ratio: None,
            }),
        }
    }
    for g in &mut groups {
        g.share = if total > 0.0 { g.goodput_bps / total } else { 0.0 };
    }
    groups
}

/// Goodput over the metrics window: the bytes delivered between its edges, over its
/// length. Each edge is a sampling instant (`metrics_spec`), and a flow's count there is
/// its last sample at or before it. Flows are sampled only while active, so:
/// - a flow that completed by an edge has its final count there (all its bytes were
///   delivered by then);
/// - a flow that stopped (`stop`) by an edge has its last sample before the stop, so
///   its count ends at its stop: the data it had in flight, delivered later, counts in
///   no window (its final count would put bytes delivered after the edge inside it);
/// - otherwise, at the run's end, the final count.
///
/// A flow that completed or stopped before the window thus gets 0 at any sampling.
fn window_goodput(
    cfg: &SimConfig,
    spec: &MetricsSpec,
    r: &cclab_sim::FlowReport,
    s: &SeriesOfFlow,
) -> Option<f64> {
    let (start, end) = spec.window?;
    let stop = cfg.flows[r.flow].stop;
    let final_count_at = |edge: cclab_units::Duration| {
        let edge = Time(edge.as_nanos());
        let completed = r.completed_at.is_some_and(|t| t <= edge);
        let stopped = stop.is_some_and(|t| t <= edge);
        completed || (!stopped && edge.as_nanos() >= cfg.duration.as_nanos())
    };
    let count_at = |edge, sampled| if final_count_at(edge) { r.delivered_bytes } else { sampled };
    let bytes =
        count_at(end, s.delivered_at_end).saturating_sub(count_at(start, s.delivered_at_start));
    Some(bytes as f64 * 8.0 / (end.as_secs_f64() - start.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_ranges_from_one_over_n_to_one() {
        assert_eq!(jain(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+3)^2 / (2 * (1+9)) = 16/20.
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
        assert_eq!(jain(&[]), 1.0);
        assert_eq!(jain(&[0.0, 0.0]), 1.0);
        // Scale-free.
        assert!((jain(&[2e6, 6e6]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn ratio_and_stolen_rate() {
        assert_eq!(throughput_ratio(6.0, 3.0), Some(2.0));
        assert_eq!(throughput_ratio(1.0, 0.0), None);
        // Two CUBIC flows got 5 Mbit/s each; next to CUBIC-FIT the CUBIC flow gets 4.25.
        assert!((bandwidth_stolen_rate(5.0, 4.25).unwrap() - 0.15).abs() < 1e-12);
        // Getting more than before is a negative stolen rate, not clamped.
        assert!((bandwidth_stolen_rate(5.0, 5.5).unwrap() + 0.1).abs() < 1e-12);
        assert_eq!(bandwidth_stolen_rate(0.0, 1.0), None);
    }

    #[test]
    fn min_max_ratio_and_synchronisation_on_hand_made_cases() {
        assert_eq!(min_max_ratio(&[2.0, 8.0, 4.0]), Some(0.25));
        assert_eq!(min_max_ratio(&[5.0, 5.0]), Some(1.0));
        assert_eq!(min_max_ratio(&[0.0, 0.0]), None);
        assert_eq!(min_max_ratio(&[]), None);
        // Four flows: one interval where all four lose, one where one loses, one quiet,
        // and one with a single active flow (not counted): (1 + 1/4) / 2.
        assert_eq!(synchronisation(&[(4, 4), (4, 1), (4, 0), (1, 1)]), Some(0.625));
        assert_eq!(synchronisation(&[(3, 0), (1, 1)]), None);
    }

    #[test]
    fn groups_are_flow_names_without_the_index_or_the_algorithm() {
        let f = |name: &str, cc: &str| FlowConfig { name: name.into(), cc: cc.into(), ..flow() };
        assert_eq!(group_of(&f("cubic#0", "cubic"), 0), "cubic");
        assert_eq!(group_of(&f("bulk#3", "reno"), 3), "bulk");
        assert_eq!(group_of(&f("bulk", "reno"), 0), "bulk");
        assert_eq!(group_of(&f("a#1", "reno"), 2), "a#1");
    }

    fn flow() -> FlowConfig {
        FlowConfig {
            name: String::new(),
            cc: "reno".into(),
            params: vec![],
            rtt: cclab_units::Duration::from_millis(100),
            start: Time::ZERO,
            stop: None,
            bytes: None,
            tcp: cclab_sim::TcpConfig::default(),
            direction: cclab_sim::Direction::Forward,
        }
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(percentile(&v, 0.0), Some(15.0));
        assert_eq!(percentile(&v, 50.0), Some(35.0));
        assert_eq!(percentile(&v, 100.0), Some(50.0));
        // numpy.percentile([15,20,35,40,50], 40) == 29.0
        assert!((percentile(&v, 40.0).unwrap() - 29.0).abs() < 1e-12);
        // Order of input does not matter.
        assert_eq!(percentile(&[50.0, 15.0, 40.0, 20.0, 35.0], 50.0), Some(35.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&v, 101.0), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
    }
}
