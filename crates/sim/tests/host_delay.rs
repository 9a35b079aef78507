//! The hosts' processing time (`TcpConfig::host_delay`): each ACK reaches its sender up
//! to that much later, drawn from the flow's own seeded stream, and that breaks the
//! DropTail phase effect of a model whose hosts take no time.

mod common;
use cclab_sim::*;
use cclab_units::{Duration, Rate};
use common::*;

/// Reno at 20 and 80 ms sharing 20 Mbit/s with one BDP (of the longer RTT, in whole
/// packets rounded up, 134, as a scenario file's "1bdp" is) of DropTail for 30 s, both
/// flows with host delay `d`, seeded `seed`: `scenarios/fidelity/rtt4-reno-reno.toml`.
fn reno_at_rtt_ratio_4(d: Duration, seed: u64) -> SimConfig {
    let rate = Rate::from_mbps(20);
    let flows: Vec<FlowConfig> = [20, 80]
        .iter()
        .map(|&rtt| {
            let mut f = flow("reno", ms(rtt));
            f.tcp.host_delay = d;
            f
        })
        .collect();
    let mut cfg = dumbbell(rate, ms(5), rate.bytes_in(ms(80)).div_ceil(1500), 30, flows);
    cfg.seed = seed;
    cfg
}

#[test]
fn a_flow_that_never_queues_sees_its_rtt_grow_by_at_most_the_host_delay() {
    // A receive window of 10 segments keeps the 10 Mbit/s, 40 ms path (33 packets in
    // flight) from ever queueing, so RTT samples differ only by the hosts' time.
    let mean_rtt_ms = |d: Duration| {
        let mut f = flow("cubic", ms(40));
        f.tcp.rwnd = Some(10 * 1448);
        f.tcp.host_delay = d;
        run(dumbbell(Rate::from_mbps(10), ms(5), 100, 5, vec![f])).flows[0].rtt.mean_ms
    };
    let (plain, delayed) = (mean_rtt_ms(Duration::ZERO), mean_rtt_ms(Duration::from_micros(500)));
    let added = delayed - plain;
    // Uniform on 0 to 0.5 ms: about 0.25 ms on average, never more than 0.5.
    assert!(added > 0.1 && added <= 0.5, "{plain} ms, then {delayed} ms");
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let d = Duration::from_micros(60);
    let a = run(reno_at_rtt_ratio_4(d, 1));
    assert_eq!(a, run(reno_at_rtt_ratio_4(d, 1)));
    assert_ne!(a.flows, run(reno_at_rtt_ratio_4(d, 2)).flows);
    // Without a host delay the seed has nothing to draw here (no random loss or AQM).
    let plain = run(reno_at_rtt_ratio_4(Duration::ZERO, 1));
    assert_eq!(plain.flows, run(reno_at_rtt_ratio_4(Duration::ZERO, 2)).flows);
}

#[test]
fn one_hosts_time_does_not_hold_back_another_flows_acks() {
    // Two flows on one 40 ms path at 10 Gbit/s, each held to 10 segments by its receive
    // window, so that they hardly queue (a packet takes 1.2 us). A slow host for flow 0
    // delays flow 0's ACKs only: flow 1's RTT is the same as beside a flow without one.
    let mean_rtt_of_flow_1 = |d: Duration| {
        let flows = (0..2)
            .map(|i| {
                let mut f = flow("cubic", ms(40));
                f.tcp.rwnd = Some(10 * 1448);
                f.tcp.host_delay = if i == 0 { d } else { Duration::ZERO };
                f
            })
            .collect();
        run(dumbbell(Rate::from_mbps(10_000), ms(5), 100, 5, flows)).flows[1].rtt.mean_ms
    };
    let (beside_plain, beside_slow) =
        (mean_rtt_of_flow_1(Duration::ZERO), mean_rtt_of_flow_1(Duration::from_millis(5)));
    assert!((beside_slow - beside_plain).abs() < 0.05, "{beside_plain} ms, then {beside_slow} ms");
}

#[test]
fn identical_flows_told_to_start_together_begin_in_an_order_the_seed_decides() {
    // Two CUBIC flows on one 40 ms path, as the fidelity matrix's rtt1 case: their ACKs
    // share one FIFO, so the per-ACK draws cannot reorder them, and the order in which
    // they start decides how the drops after slow start fall between them, and so which
    // keeps the larger share. Without a host delay the order is fixed and so is the
    // leader, whatever the seed (flow 1 since the receiver's autotuning of Linux 6.18;
    // flow 0 before). With one the start is a draw too (the testbed's senders called
    // `connect()` 0 to 45 us apart), so over seeds each flow leads in some runs.
    let first_leads = |d: Duration, seed: u64| {
        let rate = Rate::from_mbps(20);
        let flows = (0..2)
            .map(|_| {
                let mut f = flow("cubic", ms(40));
                f.tcp.host_delay = d;
                f
            })
            .collect();
        let mut cfg = dumbbell(rate, ms(10), bdp_packets(rate, ms(40)), 20, flows);
        cfg.seed = seed;
        let r = run(cfg);
        r.flows[0].goodput_bps > r.flows[1].goodput_bps
    };
    let plain: Vec<bool> = (1..=4).map(|seed| first_leads(Duration::ZERO, seed)).collect();
    assert!(plain.iter().all(|&lead| lead == plain[0]), "without host delay: {plain:?}");
    let drawn: Vec<bool> =
        (1..=10).map(|seed| first_leads(Duration::from_micros(60), seed)).collect();
    assert!(drawn.contains(&true) && drawn.contains(&false), "with 60 us: {drawn:?}");
}

#[test]
fn a_host_delay_longer_than_10ms_is_refused_by_name() {
    let cfg = reno_at_rtt_ratio_4(Duration::from_micros(10_001), 1);
    let err = Simulation::new(cfg).err().expect("refused").to_string();
    assert!(err.contains("flows[0].tcp.host_delay") && err.contains("0us to 10ms"), "{err}");
}

#[test]
fn a_read_delay_reaches_the_run_and_keeps_the_link_full() {
    // Reno at RTT ratio 4 with PSH: the receivers' ACKs left to the application's read
    // (`TcpConfig::read_delay`) leave later, so the flows' phase and their split move,
    // while the link stays full.
    let with_read = |d: Duration| {
        let mut cfg = reno_at_rtt_ratio_4(Duration::ZERO, 1);
        for f in &mut cfg.flows {
            f.tcp.psh = true;
            f.tcp.read_delay = d;
        }
        run(cfg)
    };
    let (plain, read) = (with_read(Duration::ZERO), with_read(Duration::from_micros(47)));
    assert_ne!(plain.flows, read.flows);
    let total = |r: &Report| r.flows.iter().map(|f| f.goodput_bps).sum::<f64>();
    assert!(
        (total(&read) / total(&plain) - 1.0).abs() < 0.02,
        "{} {}",
        total(&plain),
        total(&read)
    );
}
