//! The time series as observers see it: every sampling instant arrives as one set of
//! columns ([`FlowSamples`]), the default adapter hands the same rows to `flow_sample`
//! one by one, and the algorithms are asked for their internal variables only when an
//! observer wants them.

mod common;
use cclab_sim::*;
use cclab_units::Rate;
use common::*;

/// Keeps every instant's columns, and says whether it wants the `cc_*` values.
struct Columns {
    wants_cc: bool,
    instants: Vec<FlowSamples>,
}

impl Observer for Columns {
    fn flow_samples(&mut self, samples: &FlowSamples) {
        self.instants.push(samples.clone());
    }
    fn wants_cc_values(&self) -> bool {
        self.wants_cc
    }
}

/// A CUBIC flow from the start and a Reno flow that starts at 1 s and stops at 2 s, 3 s
/// in all, sampled every 10 ms.
fn two_flows() -> SimConfig {
    let mut reno = flow("reno", ms(40));
    reno.start = cclab_units::Time(1_000_000_000);
    reno.stop = Some(cclab_units::Time(2_000_000_000));
    let rate = Rate::from_mbps(20);
    dumbbell(rate, ms(5), bdp_packets(rate, ms(40)), 3, vec![flow("cubic", ms(40)), reno])
}

fn columns(wants_cc: bool) -> Vec<FlowSamples> {
    let mut obs = Columns { wants_cc, instants: Vec::new() };
    Simulation::new(two_flows()).unwrap().run(&mut obs);
    obs.instants
}

/// The rows of every instant, each as a [`FlowSample`].
fn rows(instants: &[FlowSamples]) -> Vec<FlowSample> {
    let mut out = Vec::new();
    for b in instants {
        for row in 0..b.len() {
            let mut s = FlowSample::default();
            b.row(row, &mut s);
            out.push(s);
        }
    }
    out
}

#[test]
fn each_instant_arrives_once_with_its_active_flows_in_order() {
    let instants = columns(true);
    assert_eq!(instants.len(), 301, "0 to 3 s every 10 ms");
    for (k, b) in instants.iter().enumerate() {
        assert_eq!(b.time.as_nanos(), k as u64 * 10_000_000);
        let t = b.time.as_secs_f64();
        let expected: Vec<usize> = if (1.0..2.0).contains(&t) { vec![0, 1] } else { vec![0] };
        assert_eq!(b.flow, expected, "flows sampled at {t} s");
    }
    let last = instants.last().unwrap();
    assert!(last.delivered_bytes[0] > 3_000_000, "CUBIC moved data: {last:?}");
    assert!(last.srtt[0] >= ms(40), "srtt at least the base RTT: {last:?}");
}

#[test]
fn the_default_adapter_hands_flow_sample_the_same_rows() {
    let mut rec = Recorder::default();
    Simulation::new(two_flows()).unwrap().run(&mut rec);
    assert_eq!(rec.flows, rows(&columns(true)));
    assert!(rec.flows.len() > 301);
}

#[test]
fn algorithms_are_asked_for_their_variables_only_when_wanted() {
    let with = columns(true);
    let without = columns(false);
    // The same numbers either way: asking changes nothing in the run.
    let numbers = |rows: Vec<FlowSample>| -> Vec<FlowSample> {
        rows.into_iter().map(|s| FlowSample { cc: Vec::new(), ..s }).collect()
    };
    assert_eq!(numbers(rows(&with)), numbers(rows(&without)));
    for b in &without {
        assert!((0..b.len()).all(|row| b.cc_of(row).is_empty()), "no cc values at {:?}", b.time);
    }
    // With them, each row has its own algorithm's names: CUBIC's W_max, none for Reno.
    for b in &with {
        for row in 0..b.len() {
            let names: Vec<&str> = b.cc_of(row).iter().map(|(n, _)| *n).collect();
            match b.flow[row] {
                0 => assert!(names.contains(&"w_max"), "cubic reports w_max: {names:?}"),
                _ => assert!(names.is_empty(), "reno reports nothing: {names:?}"),
            }
        }
    }
}
