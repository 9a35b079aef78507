//! Traffic in the reverse direction: UDP sources and TCP flows through the reverse
//! bottleneck, where the forward flows' ACKs queue behind them.

mod common;

use cclab_sim::*;
use cclab_units::{Duration, Rate, Time};
use common::*;

/// A 10 Mbit/s, 10 ms dumbbell with a 50-packet DropTail buffer (one BDP at 60 ms).
fn path(secs: u64, flows: Vec<FlowConfig>) -> SimConfig {
    dumbbell(Rate::from_mbps(10), ms(10), 50, secs, flows)
}

fn source(kind: CrossKind, mbps: f64, direction: Direction) -> CrossConfig {
    CrossConfig {
        kind,
        rate: Rate((mbps * 1e6) as u64),
        packet_bytes: 1500,
        start: Time::ZERO,
        stop: None,
        direction,
    }
}

fn reverse(f: FlowConfig) -> FlowConfig {
    FlowConfig { direction: Direction::Reverse, ..f }
}

/// A flow whose window the receiver caps at 30,000 bytes (about 20 packets, under half
/// the path's bandwidth-delay product): it never fills the forward queue, so its RTT is
/// the base RTT plus what its ACKs wait on the way back, and its goodput one window per
/// RTT.
fn window_limited() -> FlowConfig {
    let mut f = flow("reno", ms(60));
    f.tcp.rwnd = Some(30_000);
    f
}

fn reverse_link(r: &Report) -> &LinkReport {
    r.reverse_link.as_ref().expect("the run models the reverse bottleneck")
}

fn with_reverse_rate(mut cfg: SimConfig) -> SimConfig {
    cfg.bottleneck.reverse_rate = Some(Rate::from_mbps(10));
    cfg
}

#[test]
fn reverse_sources_deliver_their_configured_rate_on_the_reverse_link_only() {
    let on_off = CrossKind::Exponential {
        mean_on: Duration::from_millis(200),
        mean_off: Duration::from_millis(200),
    };
    for (kind, mbps, tolerance) in
        [(CrossKind::Cbr, 3.0, 0.001), (CrossKind::Poisson, 6.0, 0.02), (on_off, 2.0, 0.05)]
    {
        let secs = 100;
        let mut cfg = path(secs, vec![]);
        cfg.cross = vec![source(kind, mbps, Direction::Reverse)];
        let r = run(cfg);
        let rev = reverse_link(&r);
        let measured = rev.delivered_bytes as f64 * 8.0 / secs as f64 / 1e6;
        assert!(
            (measured / mbps - 1.0).abs() < tolerance,
            "{kind:?}: {measured:.4} Mbit/s measured against {mbps} configured"
        );
        assert_eq!(rev.utilization, rev.delivered_bytes as f64 * 8.0 / (secs as f64 * 1e7));
        assert_eq!(r.link.delivered_packets, 0, "{kind:?}: nothing crosses the forward link");
    }
}

#[test]
fn without_reverse_traffic_there_is_no_reverse_link_and_reverse_rate_adds_one() {
    let r = run(path(5, vec![flow("cubic", ms(60))]));
    assert!(r.reverse_link.is_none());
    // With the rate set, the forward flow's ACKs cross it: one ACK per one or two
    // segments (delayed ACKs), each 52 bytes without SACK blocks, a few more with.
    let r = run(with_reverse_rate(path(5, vec![flow("cubic", ms(60))])));
    let rev = reverse_link(&r);
    let segments = r.link.delivered_packets;
    assert!(
        rev.delivered_packets >= segments / 2 && rev.delivered_packets <= segments,
        "{} ACKs for {segments} segments",
        rev.delivered_packets
    );
    let per_ack = rev.delivered_bytes as f64 / rev.delivered_packets as f64;
    assert!((52.0..=52.0 + 4.0 + 24.0).contains(&per_ack), "{per_ack} bytes per ACK");
    assert_eq!(rev.queue_drops, 0);
}

/// The reverse bottleneck is the forward one's mirror image: a reverse flow alone runs
/// exactly as a forward flow alone whose ACKs cross a reverse link of the same rate.
#[test]
fn a_reverse_flow_alone_mirrors_a_forward_flow_alone() {
    let fwd = run(with_reverse_rate(path(20, vec![flow("cubic", ms(60))])));
    let rev = run(path(20, vec![reverse(flow("cubic", ms(60)))]));
    assert_eq!(fwd.flows, rev.flows);
    assert_eq!(&fwd.link, reverse_link(&rev));
    assert_eq!(reverse_link(&fwd), &rev.link);
    assert!(rev.flows[0].goodput_bps > 9e6, "{}", rev.flows[0].goodput_bps);
}

#[test]
fn reverse_rate_limits_the_reverse_flows_not_the_forward_ones() {
    let mut cfg = path(30, vec![flow("cubic", ms(60)), reverse(flow("cubic", ms(60)))]);
    cfg.bottleneck.reverse_rate = Some(Rate::from_mbps(2));
    let r = run(cfg);
    let rev = reverse_link(&r);
    assert_eq!(rev.capacity_bps, 2e6);
    assert!(rev.utilization > 0.9, "{}", rev.utilization);
    // The reverse flow gets most of the 2 Mbit/s (its data shares it with the forward
    // flow's ACKs) and no more.
    let back = r.flows[1].goodput_bps;
    assert!(back > 1.4e6 && back < 2e6, "reverse flow: {back} bit/s");
    assert!(r.flows[0].goodput_bps > 3.0 * back, "forward flow: {}", r.flows[0].goodput_bps);
}

/// ACKs that queue behind reverse traffic arrive late: a window-limited flow's RTT goes
/// up by about the reverse queue's delay and its goodput (one window per RTT) down.
#[test]
fn reverse_load_delays_a_forward_flows_acks_and_lowers_its_goodput() {
    let secs = 30;
    // The baseline has a reverse link too, so both runs serialise the ACKs alike.
    let none = run(with_reverse_rate(path(secs, vec![window_limited()])));
    let loads: [(&str, SimConfig); 2] = [
        ("Poisson UDP at 9 Mbit/s", {
            let mut c = path(secs, vec![window_limited()]);
            c.cross = vec![source(CrossKind::Poisson, 9.0, Direction::Reverse)];
            c
        }),
        ("a bulk TCP flow", path(secs, vec![window_limited(), reverse(flow("cubic", ms(60)))])),
    ];
    let base_rtt = none.flows[0].rtt.mean_ms;
    assert!((60.0..65.0).contains(&base_rtt), "unloaded RTT {base_rtt} ms");
    for (what, cfg) in loads {
        let r = run(cfg);
        let f = &r.flows[0];
        let rev = reverse_link(&r);
        // Little's law: the mean reverse queue, in packets of about 1500 bytes at
        // 10 Mbit/s, is the mean wait of what crosses it.
        let wait_ms = rev.mean_queue_packets * 1.2;
        eprintln!(
            "{what}: RTT {:.2} ms (unloaded {base_rtt:.2}), goodput {:.0} (unloaded {:.0}), reverse queue {:.2} packets, forward queue {:.2}",
            f.rtt.mean_ms, f.goodput_bps, none.flows[0].goodput_bps, rev.mean_queue_packets, r.link.mean_queue_packets
        );
        assert!(wait_ms > 3.0, "{what}: reverse queue {} packets", rev.mean_queue_packets);
        assert!(
            f.rtt.mean_ms > base_rtt + 0.5 * wait_ms,
            "{what}: RTT {} ms against {base_rtt} ms unloaded, reverse wait {wait_ms:.1} ms",
            f.rtt.mean_ms
        );
        let expected = none.flows[0].goodput_bps * base_rtt / f.rtt.mean_ms;
        assert!(
            f.goodput_bps < none.flows[0].goodput_bps * 0.95
                && (f.goodput_bps / expected - 1.0).abs() < 0.1,
            "{what}: goodput {} against {} unloaded ({expected:.0} expected from the RTT)",
            f.goodput_bps,
            none.flows[0].goodput_bps
        );
        // Nothing queues forward: the flow's window stays under the BDP.
        assert!(r.link.mean_queue_packets < 1.0, "{what}: {}", r.link.mean_queue_packets);
    }
}

/// Two-way bulk TCP: each direction's ACKs queue behind the other's data and arrive in
/// bursts (ACK compression), so each flow gets well under the link it has alone.
#[test]
fn two_way_bulk_tcp_lowers_the_forward_flows_goodput() {
    let alone = run(with_reverse_rate(path(30, vec![flow("cubic", ms(60))])));
    let both = run(path(30, vec![flow("cubic", ms(60)), reverse(flow("cubic", ms(60)))]));
    let (a, b) = (alone.flows[0].goodput_bps, both.flows[0].goodput_bps);
    assert!(a > 9e6, "alone: {a}");
    assert!(b < 0.8 * a, "with a reverse bulk flow: {b} against {a} alone");
    assert!(both.flows[0].rtt.p99_ms > alone.flows[0].rtt.p99_ms);
}

#[test]
fn same_config_same_reverse_run() {
    let cfg = || {
        let mut c = path(10, vec![flow("cubic", ms(60)), reverse(flow("reno", ms(80)))]);
        c.cross = vec![source(CrossKind::Poisson, 2.0, Direction::Reverse)];
        c.bottleneck.qdisc = Qdisc::named("fq_codel").expect("a discipline");
        c
    };
    let mut a = Recorder::default();
    let mut b = Recorder::default();
    let ra = Simulation::new(cfg()).unwrap().run(&mut a);
    let rb = Simulation::new(cfg()).unwrap().run(&mut b);
    assert_eq!(ra, rb);
    assert_eq!(a, b);
    assert_eq!(a.reverse_queue.len(), a.queue.len());
    assert!(a.reverse_queue.iter().any(|q| q.packets > 0));
}

#[test]
fn reverse_rate_is_checked() {
    let mut cfg = path(1, vec![flow("cubic", ms(60))]);
    cfg.bottleneck.reverse_rate = Some(Rate(10));
    let e = validate(&cfg).unwrap_err().to_string();
    assert!(e.contains("bottleneck.reverse_rate") && e.contains("allowed"), "{e}");
}
