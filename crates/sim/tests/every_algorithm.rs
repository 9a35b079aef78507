//! Smoke test of every registered algorithm in the simulator: alone on a 10 Mbit/s,
//! 50 ms RTT path with a one-BDP DropTail buffer for 20 s it must use the link, and two
//! flows of the same algorithm must share it fairly (Jain's index above 0.8).
//!
//! Run with `cargo test -p cclab-sim --release --test every_algorithm -- --nocapture` to
//! see the figures. The scenario has no randomness (no random loss, no cross traffic),
//! so the run is the same for every seed.

use cclab_cc::ALGORITHMS;
use cclab_sim::{Buffer, FlowConfig, LinkConfig, LinkRate, LossModel, NoObserver, Qdisc, SimConfig, Simulation, TcpConfig};
use cclab_units::{Duration, Rate, Time};

const RATE_BPS: u64 = 10_000_000;
const RTT_MS: u64 = 50;
/// One bandwidth-delay product: 10 Mbit/s x 50 ms = 62.5 kB = 42 packets of 1500 bytes.
const BDP_PACKETS: u64 = 42;

/// Utilisation an algorithm alone must reach. 0.8 for all, except where the algorithm's
/// own design explains less on a one-BDP buffer:
/// - tahoe: every loss restarts from one segment and slow-starts again.
fn utilisation_floor(name: &str) -> f64 {
    match name {
        "tahoe" => 0.7,
        _ => 0.8,
    }
}

fn scenario(cc: &str, flows: usize) -> SimConfig {
    let flow = |i: usize| FlowConfig {
        name: format!("{cc}#{i}"),
        cc: cc.to_string(),
        params: vec![],
        rtt: Duration::from_millis(RTT_MS),
        start: Time::ZERO,
        stop: None,
        bytes: None,
        tcp: TcpConfig::default(),
    };
    SimConfig {
        duration: Duration::from_secs(20),
        seed: 1,
        bottleneck: LinkConfig {
            rate: LinkRate::Constant(Rate::from_bps(RATE_BPS)),
            delay: Duration::from_millis(RTT_MS / 2),
            buffer: Buffer::Packets(BDP_PACKETS),
            qdisc: Qdisc::DropTail,
            loss: LossModel::None,
        },
        flows: (0..flows).map(flow).collect(),
        cross: vec![],
        sample_interval: Duration::from_millis(100),
        changes: vec![],
    }
}

/// Jain's index two flows of one algorithm must exceed. 0.8 for all, except:
/// - tahoe: on this deterministic DropTail path one Tahoe flow takes most of the drops
///   (a traffic phase effect, Floyd & Jacobson 1992) and every drop restarts it from one
///   segment; measured 0.63 over 20 s and 0.59 over 60 s. Kept as a regression bound,
///   and reported to the simulator's owner as worth a look.
fn jain_floor(name: &str) -> f64 {
    match name {
        "tahoe" => 0.55,
        _ => 0.8,
    }
}

fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    sum * sum / (x.len() as f64 * sq)
}

#[test]
fn every_algorithm_alone_uses_the_link() {
    let mut failures = vec![];
    for info in ALGORITHMS {
        let report = Simulation::new(scenario(info.name, 1)).unwrap().run(&mut NoObserver);
        let u = report.link.utilization;
        println!("{:<14} utilisation {u:.3}", info.name);
        if u < utilisation_floor(info.name) {
            failures.push(format!("{}: utilisation {u:.3} < {}", info.name, utilisation_floor(info.name)));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn two_flows_of_every_algorithm_share_fairly() {
    let mut failures = vec![];
    for info in ALGORITHMS {
        let report = Simulation::new(scenario(info.name, 2)).unwrap().run(&mut NoObserver);
        let goodputs: Vec<f64> = report.flows.iter().map(|f| f.goodput_bps).collect();
        assert_eq!(goodputs.len(), 2, "{}: two flow reports", info.name);
        let j = jain(&goodputs);
        println!("{:<14} goodputs {:?} Jain {j:.3}", info.name, goodputs);
        if !(j > jain_floor(info.name)) {
            failures.push(format!("{}: Jain {j:.3} < {} (goodputs {goodputs:?})", info.name, jain_floor(info.name)));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
