//! Server-side decimation: an [`Observer`] that folds every sample of a run into time
//! buckets, about [`BUCKETS_PER_RUN`] of them over the whole run, so what the server
//! keeps and the browser draws has a fixed size however long the run is (a 10-minute run
//! sampled every 10 ms is 60,000 samples per flow; it is drawn from 1,000 buckets).
//!
//! A bucket keeps, per flow, the lowest, highest and last cwnd and which extreme came
//! first (so a line through them keeps the sawtooth's peaks and troughs), and the last
//! value of everything else. Back-offs are found at full resolution, before decimation:
//! whenever a flow's ssthresh is lowered between two samples, or a loss brings its cwnd
//! down, after it has grown, to an ssthresh the back-off leaves where it was (a
//! sawtooth's losses often come back to the same threshold), a `backoff` event records the cwnd of
//! the sample before and the new ssthresh, whose ratio is the multiplicative decrease
//! the flow applied (beta).

use crate::catalog::ShownValue;
use cclab_sim::{FlowSample, Observer, QueueSample};
use cclab_units::Time;
use serde::Serialize;

/// Buckets over a whole run (fewer when the run has fewer samples).
pub const BUCKETS_PER_RUN: u64 = 1000;
/// An ssthresh this large means "not set yet" (Linux's initial TCP_INFINITE_SSTHRESH).
const NO_SSTHRESH: u32 = 1 << 30;

/// One flow over one bucket.
#[derive(Clone, Debug, Serialize)]
pub struct FlowAgg {
    /// Lowest, highest and last cwnd (packets), and whether the lowest came first.
    pub lo: u32,
    pub hi: u32,
    pub last: u32,
    pub lo_first: bool,
    /// Last ssthresh in packets (None while unset).
    pub ss: Option<u32>,
    /// Last smoothed RTT in ms (None before the first sample).
    pub rtt: Option<f64>,
    pub inflight: u32,
    /// Bytes delivered so far (throughput is its change over time).
    pub delivered: u64,
    pub retransmits: u64,
    /// The algorithm's variables, by the run's `columns`.
    pub cc: Vec<Option<f64>>,
}

/// The bottleneck over one bucket.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueAgg {
    pub last: u64,
    pub hi: u64,
    /// Cumulative drops at the end of the bucket.
    pub drops: u64,
}

/// One bucket: `t` is the time of its last sample, in seconds.
#[derive(Clone, Debug, Serialize)]
pub struct Bucket {
    pub t: f64,
    pub q: QueueAgg,
    /// Per flow; None for a flow with no sample in the bucket (not started or finished).
    pub f: Vec<Option<FlowAgg>>,
}

/// Something that happened at one instant: a parameter change or a back-off.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A parameter change took effect (`source`: "scenario" for `[[changes]]`, "live").
    Change { t: f64, flow: usize, name: String, value: ShownValue, source: &'static str },
    /// A back-off (module doc): the flow went from `cwnd` (the sample before) to `ssthresh`.
    Backoff { t: f64, flow: usize, cwnd: u32, ssthresh: u32, ratio: f64 },
}

/// The Observer the run thread hands the simulation.
pub struct Decimator {
    width_ns: u64,
    columns: Vec<&'static str>,
    current: Option<(u64, Bucket)>,
    closed: Vec<Bucket>,
    events: Vec<Event>,
    /// Each flow's previous sample, for back-off detection.
    prev: Vec<Option<LastSample>>,
    flows: usize,
    /// Each flow's algorithm, to show a change of a switch as true or false.
    algorithms: Vec<String>,
    /// A flow sample's algorithm variables by column (reused between samples).
    cc_scratch: Vec<Option<f64>>,
}

/// Bucket width for a run: the run over [`BUCKETS_PER_RUN`], a whole number of samples.
pub fn bucket_width(duration_ns: u64, sample_ns: u64) -> u64 {
    let sample_ns = sample_ns.max(1);
    let per = duration_ns.div_ceil(BUCKETS_PER_RUN).div_ceil(sample_ns).max(1);
    per * sample_ns
}

impl Decimator {
    /// `algorithms`: each flow's algorithm (to show its parameters' changes).
    pub fn new(algorithms: Vec<String>, columns: Vec<&'static str>, width_ns: u64) -> Decimator {
        let flows = algorithms.len();
        Decimator {
            algorithms,
            width_ns: width_ns.max(1),
            columns,
            current: None,
            closed: Vec::new(),
            events: Vec::new(),
            prev: vec![None; flows],
            flows,
            cc_scratch: Vec::new(),
        }
    }

    pub fn width_ns(&self) -> u64 {
        self.width_ns
    }

    /// Buckets closed and events seen since the last call.
    pub fn take(&mut self) -> (Vec<Bucket>, Vec<Event>) {
        (std::mem::take(&mut self.closed), std::mem::take(&mut self.events))
    }

    /// The bucket being filled, if any (sent as the live tip, not kept).
    pub fn tip(&self) -> Option<&Bucket> {
        self.current.as_ref().map(|(_, b)| b)
    }

    /// Closes the bucket being filled (at the end of a run).
    pub fn flush(&mut self) {
        if let Some((_, b)) = self.current.take() {
            self.closed.push(b);
        }
    }

    /// Records a live change made by the server between two steps.
    pub fn live_change(&mut self, at: Time, flow: usize, name: &str, value: ShownValue) {
        let t = at.as_secs_f64();
        self.events.push(Event::Change { t, flow, name: name.to_string(), value, source: "live" });
    }

    /// The bucket a sample at `time` belongs to, closing the current one if it is older.
    fn bucket_at(&mut self, time: Time) -> &mut Bucket {
        let index = time.as_nanos() / self.width_ns;
        if self.current.as_ref().is_some_and(|(i, _)| *i != index) {
            self.flush();
        }
        let flows = self.flows;
        let (_, b) = self.current.get_or_insert_with(|| {
            (index, Bucket { t: 0.0, q: QueueAgg::default(), f: vec![None; flows] })
        });
        b.t = time.as_secs_f64();
        b
    }

    fn detect_backoff(&mut self, s: &FlowSample) {
        let Some(prev) = self.prev.get_mut(s.flow) else { return };
        let mut now = LastSample {
            cwnd: s.cwnd_pkts,
            ssthresh: s.ssthresh_pkts,
            retransmits: s.retransmits,
            reducing: false,
        };
        if let Some(p) = *prev {
            let lowered = s.ssthresh_pkts <= p.cwnd.saturating_add(1);
            // Slow start ending without a loss (HyStart sets ssthresh to the cwnd) is not
            // a back-off; a loss retransmits in the same instant it lowers ssthresh.
            let left_slow_start = s.retransmits == p.retransmits && s.ssthresh_pkts >= p.cwnd;
            let changed = s.ssthresh_pkts != p.ssthresh && s.ssthresh_pkts < NO_SSTHRESH;
            // A loss that brings the cwnd down towards the threshold the last one set,
            // once the cwnd has grown past it. Not while the reduction after a loss takes
            // the cwnd down over several samples, retransmitting as it goes, nor for
            // losses found later in the same recovery, where the cwnd is at or below
            // the threshold.
            let fell_to_same = s.ssthresh_pkts == p.ssthresh
                && s.retransmits > p.retransmits
                && s.cwnd_pkts < p.cwnd
                && p.cwnd > p.ssthresh
                && !p.reducing;
            let backoff = (changed && lowered && !left_slow_start) || fell_to_same;
            if backoff && p.cwnd > 0 {
                self.events.push(Event::Backoff {
                    t: s.time.as_secs_f64(),
                    flow: s.flow,
                    cwnd: p.cwnd,
                    ssthresh: s.ssthresh_pkts,
                    ratio: s.ssthresh_pkts as f64 / p.cwnd as f64,
                });
            }
            // The reduction is over once the cwnd grows with nothing more retransmitted
            // (it may tick up while the reduction still retransmits).
            let grew = s.cwnd_pkts > p.cwnd && s.retransmits == p.retransmits;
            now.reducing = backoff || (p.reducing && !grew);
        }
        *prev = Some(now);
    }
}

/// What back-off detection keeps of a flow's previous sample.
#[derive(Clone, Copy)]
struct LastSample {
    cwnd: u32,
    ssthresh: u32,
    retransmits: u64,
    /// Since its last back-off, the cwnd has not grown: still the same reduction.
    reducing: bool,
}

impl Observer for Decimator {
    fn flow_sample(&mut self, s: &FlowSample) {
        self.detect_backoff(s);
        // The algorithm's variables by column, in a buffer kept between samples (taken
        // out while the bucket is borrowed): no allocation per sample.
        let mut cc = std::mem::take(&mut self.cc_scratch);
        cc.clear();
        cc.resize(self.columns.len(), None);
        for (name, v) in &s.cc {
            if let Some(i) = self.columns.iter().position(|c| c == name) {
                cc[i] = Some(*v);
            }
        }
        let b = self.bucket_at(s.time);
        let Some(slot) = b.f.get_mut(s.flow) else {
            self.cc_scratch = cc;
            return;
        };
        let c = s.cwnd_pkts;
        let agg = slot.get_or_insert(FlowAgg {
            lo: c,
            hi: c,
            last: c,
            lo_first: true,
            ss: None,
            rtt: None,
            inflight: 0,
            delivered: 0,
            retransmits: 0,
            cc: Vec::new(),
        });
        if c < agg.lo {
            agg.lo = c;
            agg.lo_first = false;
        }
        if c > agg.hi {
            agg.hi = c;
            agg.lo_first = true;
        }
        agg.last = c;
        agg.ss = (s.ssthresh_pkts < NO_SSTHRESH).then_some(s.ssthresh_pkts);
        agg.rtt = (s.srtt.as_nanos() > 0).then(|| s.srtt.as_millis_f64());
        agg.inflight = s.inflight_pkts;
        agg.delivered = s.delivered_bytes;
        agg.retransmits = s.retransmits;
        agg.cc.clone_from(&cc);
        self.cc_scratch = cc;
    }

    fn queue_sample(&mut self, s: &QueueSample) {
        let b = self.bucket_at(s.time);
        b.q.last = s.packets;
        b.q.hi = b.q.hi.max(s.packets);
        b.q.drops = s.drops;
    }

    fn param_changed(&mut self, at: Time, flow: usize, name: &str, value: f64) {
        let t = at.as_secs_f64();
        self.events.push(Event::Change {
            t,
            flow,
            name: name.to_string(),
            value: ShownValue::of(&self.algorithms[flow], name, value),
            source: "scenario",
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_units::Duration;

    fn sample(ms: u64, flow: usize, cwnd: u32, ss: u32) -> FlowSample {
        FlowSample {
            time: Time(ms * 1_000_000),
            flow,
            cwnd_pkts: cwnd,
            ssthresh_pkts: ss,
            srtt: Duration::from_millis(50),
            inflight_pkts: cwnd,
            delivered_bytes: ms * 1000,
            retransmits: 0,
            cc: vec![],
        }
    }

    #[test]
    fn a_bucket_keeps_the_extremes_in_order_and_the_last_values() {
        let mut d = Decimator::new(vec!["cubic".into()], vec![], 40_000_000);
        for (ms, cwnd) in [(0, 10), (10, 40), (20, 12), (30, 20), (40, 21)] {
            d.flow_sample(&sample(ms, 0, cwnd, u32::MAX));
        }
        let (closed, _) = d.take();
        assert_eq!(closed.len(), 1);
        let f = closed[0].f[0].as_ref().unwrap();
        assert_eq!((f.lo, f.hi, f.last, f.lo_first), (10, 40, 20, true));
        assert_eq!(f.ss, None);
        assert_eq!(closed[0].t, 0.03);
        assert_eq!(d.tip().unwrap().f[0].as_ref().unwrap().last, 21);
    }

    #[test]
    fn a_back_off_is_found_between_two_samples() {
        let mut d = Decimator::new(vec!["cubic".into()], vec![], 1_000_000_000);
        d.flow_sample(&sample(0, 0, 100, u32::MAX));
        d.flow_sample(&sample(10, 0, 100, 70));
        d.flow_sample(&sample(20, 0, 90, 70));
        let (_, events) = d.take();
        assert_eq!(events.len(), 1);
        match &events[0] {
            Event::Backoff { cwnd, ssthresh, ratio, .. } => {
                assert_eq!((*cwnd, *ssthresh), (100, 70));
                assert!((ratio - 0.7).abs() < 1e-12);
            }
            e => panic!("{e:?}"),
        }
    }

    /// HyStart ends slow start by setting ssthresh to the cwnd, with nothing lost: not a
    /// back-off. The same ssthresh with a retransmission (a loss at beta = 1) is one.
    #[test]
    fn slow_start_ending_without_a_loss_is_not_a_back_off() {
        let mut d = Decimator::new(vec!["tuner".into()], vec![], 1_000_000_000);
        d.flow_sample(&sample(0, 0, 127, u32::MAX));
        d.flow_sample(&sample(10, 0, 127, 127));
        assert!(d.take().1.is_empty());
        d.flow_sample(&sample(20, 0, 200, 127));
        d.flow_sample(&FlowSample { retransmits: 1, ..sample(30, 0, 200, 200) });
        match &d.take().1[..] {
            [Event::Backoff { cwnd: 200, ssthresh: 200, .. }] => {}
            e => panic!("{e:?}"),
        }
    }

    /// A loss that leaves ssthresh where the last one put it is a back-off all the same;
    /// the recovery's later retransmissions, below the threshold, are not new ones.
    #[test]
    fn a_loss_back_to_the_same_ssthresh_is_a_back_off() {
        let mut d = Decimator::new(vec!["cubic".into()], vec![], 1_000_000_000);
        let lost = |ms, cwnd, retransmits| FlowSample { retransmits, ..sample(ms, 0, cwnd, 46) };
        d.flow_sample(&lost(0, 69, 95));
        d.flow_sample(&lost(10, 46, 96));
        d.flow_sample(&lost(15, 50, 97)); // a tick up while the reduction retransmits
        d.flow_sample(&lost(20, 40, 98)); // the same reduction
        d.flow_sample(&lost(30, 60, 98));
        d.flow_sample(&lost(40, 62, 99)); // a probe's retransmission: cwnd did not fall
        d.flow_sample(&lost(50, 66, 99));
        d.flow_sample(&lost(60, 50, 100)); // the next loss
        d.flow_sample(&lost(70, 46, 100));
        d.flow_sample(&lost(80, 46, 100));
        d.flow_sample(&lost(90, 40, 102)); // more lost in that recovery, at the threshold
        match &d.take().1[..] {
            [Event::Backoff { cwnd: 69, ssthresh: 46, .. }, Event::Backoff { cwnd: 66, .. }] => {}
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn buckets_are_whole_samples_and_about_a_thousand_per_run() {
        assert_eq!(bucket_width(60_000_000_000, 10_000_000), 60_000_000);
        assert_eq!(bucket_width(600_000_000_000, 10_000_000), 600_000_000);
        assert_eq!(bucket_width(1_000_000_000, 10_000_000), 10_000_000);
        assert_eq!(bucket_width(61_000_000_000, 10_000_000), 70_000_000);
    }
}
