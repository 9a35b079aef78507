//! RTT samples stay within what the path allows, in every loss-recovery mode (issue 8:
//! with `recovery = "newreno"` a partial ACK yielded samples from segments sent many
//! rounds earlier, srtt reached 51 s and the RTT p99 10.8 s on a 100 ms path).

mod common;
use cclab_cc::LossRecovery;
use cclab_sim::*;
use cclab_units::{Duration, Rate};
use common::*;

/// Tracks the largest smoothed RTT of each flow over the run.
#[derive(Default)]
struct LargestSrtt(Vec<Duration>);

impl Observer for LargestSrtt {
    fn flow_sample(&mut self, s: &FlowSample) {
        if self.0.len() <= s.flow {
            self.0.resize(s.flow + 1, Duration::ZERO);
        }
        self.0[s.flow] = self.0[s.flow].max(s.srtt);
    }
}

const MODES: [LossRecovery; 3] = [LossRecovery::Sack, LossRecovery::NewReno, LossRecovery::Tahoe];

/// The longest round trip a packet can see on `cfg`'s single-RTT dumbbell: the base RTT,
/// a full DropTail buffer and the packet in service ahead of it (1500-byte packets), the
/// delayed-ACK timer if the receiver delays, and 1 ms for the event ordering.
fn longest_round_trip(cfg: &SimConfig) -> Duration {
    let LinkRate::Constant(rate) = cfg.bottleneck.rate else { panic!("constant rate") };
    let Buffer::Packets(buffer) = cfg.bottleneck.buffer else { panic!("buffer in packets") };
    let packet_time = rate.tx_time(1500);
    let f = &cfg.flows[0];
    let delack = if f.tcp.delayed_ack.enabled { f.tcp.delayed_ack.timeout } else { Duration::ZERO };
    f.rtt + packet_time.saturating_mul(buffer + 1) + delack + ms(1)
}

/// Runs `cfg` with each recovery mode and checks every flow's RTT p99 and largest srtt.
fn assert_rtt_within_path(what: &str, cfg: SimConfig) {
    let limit = longest_round_trip(&cfg);
    // The summary's percentiles are histogram bucket midpoints, within 0.4% of a sample.
    let p99_limit_ms = limit.as_millis_f64() * 1.004;
    for mode in MODES {
        let mut cfg = cfg.clone();
        for f in &mut cfg.flows {
            f.tcp.recovery = Some(mode);
        }
        let mut largest = LargestSrtt::default();
        let report = Simulation::new(cfg).expect("valid config").run(&mut largest);
        for (f, srtt) in report.flows.iter().zip(&largest.0) {
            let ctx = format!("{what}, recovery {mode:?}, flow {}", f.flow);
            assert!(f.rtt.samples > 1000, "{ctx}: only {} RTT samples", f.rtt.samples);
            assert!(f.retransmits > 0, "{ctx}: no loss, so no recovery was exercised");
            assert!(
                f.rtt.p99_ms <= p99_limit_ms,
                "{ctx}: RTT p99 {} ms beyond the path's longest round trip {limit:?}",
                f.rtt.p99_ms
            );
            assert!(*srtt <= limit, "{ctx}: srtt reached {srtt:?}, the path allows {limit:?}");
        }
    }
}

#[test]
fn rtt_samples_stay_within_the_path_after_newreno_partial_acks() {
    // One Reno flow, no delayed ACKs, 100 Mbit/s, 50 ms, a 1-BDP (417-packet) DropTail
    // buffer, 60 s: srtt reached 51 s with NewReno before the fix.
    let mut f = flow("reno", ms(50));
    f.tcp.delayed_ack.enabled = false;
    let cfg = dumbbell(Rate::from_mbps(100), ms(10), 417, 60, vec![f]);
    assert_rtt_within_path("one Reno flow", cfg);
}

#[test]
fn rtt_samples_stay_within_the_path_with_two_cubic_flows() {
    // Two CUBIC flows, 20 Mbit/s, 100 ms, a 1-BDP buffer, delayed ACKs on, 60 s.
    let (rate, rtt) = (Rate::from_mbps(20), ms(100));
    let flows = vec![flow("cubic", rtt), flow("cubic", rtt)];
    let cfg = dumbbell(rate, ms(20), bdp_packets(rate, rtt), 60, flows);
    assert_rtt_within_path("two CUBIC flows", cfg);
}
