//! Builders shared by the simulator's integration tests.
#![allow(dead_code)]

pub mod path;

use cclab_sim::*;
use cclab_units::{Duration, Rate, Time};

pub fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

pub fn flow(cc: &str, rtt: Duration) -> FlowConfig {
    FlowConfig {
        name: cc.to_string(),
        cc: cc.into(),
        params: vec![],
        rtt,
        start: Time::ZERO,
        stop: None,
        bytes: None,
        tcp: TcpConfig::default(),
        direction: Direction::Forward,
    }
}

/// A dumbbell with `flows` at `rate`, bottleneck delay `delay`, DropTail of `buffer` packets.
pub fn dumbbell(
    rate: Rate,
    delay: Duration,
    buffer: u64,
    secs: u64,
    flows: Vec<FlowConfig>,
) -> SimConfig {
    SimConfig {
        duration: Duration::from_secs(secs),
        seed: 1,
        bottleneck: LinkConfig {
            rate: LinkRate::Constant(rate),
            delay,
            buffer: Buffer::Packets(buffer),
            qdisc: Qdisc::DropTail,
            loss: LossModel::None,
            reverse_rate: None,
        },
        flows,
        cross: vec![],
        sample_interval: ms(10),
        changes: vec![],
    }
}

/// Bandwidth-delay product in 1500-byte packets.
pub fn bdp_packets(rate: Rate, rtt: Duration) -> u64 {
    (rate.bytes_in(rtt) / 1500).max(1)
}

pub fn run(cfg: SimConfig) -> Report {
    Simulation::new(cfg).expect("valid config").run(&mut NoObserver)
}
