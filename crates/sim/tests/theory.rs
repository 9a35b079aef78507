//! Whole-simulation checks against theory. Each test states the model, the setting and
//! the tolerance. They simulate tens of thousands of packets each and take well under a
//! second in release mode (a few seconds in debug).

mod common;
use cclab_sim::*;
use cclab_units::{Duration, Rate, Time};
use common::*;

fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

/// One Reno flow and a buffer of one BDP: the sawtooth's trough (cwnd/2 = BDP) still
/// fills the pipe, so the link stays busy: utilisation >= 0.95 (the rest is slow start).
#[test]
fn one_reno_flow_with_a_one_bdp_buffer_fills_the_link() {
    let rate = Rate::from_mbps(10);
    let rtt = ms(40);
    let cfg = dumbbell(rate, ms(10), bdp_packets(rate, rtt), 60, vec![flow("reno", rtt)]);
    let r = run(cfg);
    println!("1-BDP utilisation {:.4}", r.link.utilization);
    assert!(r.link.utilization >= 0.95, "utilisation {}", r.link.utilization);
    assert!(r.link.queue_drops > 0, "the flow must have probed the buffer");
    assert_eq!(r.flows[0].timeouts, 0);
}

/// A tiny buffer (4 packets, 2% of a 200-packet BDP): Reno's window saws between W/2 and
/// W with W = BDP + B, so the link is busy about 3/4 of the time (a linear ramp from 1/2
/// to 1 of the BDP; with B = 2% of the BDP the fluid model gives 0.764). Tolerance:
/// 0.70..0.82 (delayed ACKs, the initial slow start, bursts). A buffer of 1-2 packets
/// is *not* used: without pacing, ACK-clocked bursts of 3 packets (a delayed ACK
/// releasing 2 plus the window increase) overflow it, as they would in a real network.
#[test]
fn one_reno_flow_with_a_tiny_buffer_gets_about_three_quarters() {
    let rate = Rate::from_mbps(24);
    let rtt = ms(100);
    assert_eq!(bdp_packets(rate, rtt), 200);
    let cfg = dumbbell(rate, ms(10), 4, 200, vec![flow("reno", rtt)]);
    let r = run(cfg);
    println!("tiny-buffer utilisation {:.4}", r.link.utilization);
    assert!((0.70..=0.82).contains(&r.link.utilization), "utilisation {}", r.link.utilization);
}

/// Mathis et al. 1997: throughput = (MSS / RTT) * C / sqrt(p). With an ACK per segment,
/// C = sqrt(3/2) = 1.22. Delayed ACKs make the classic constant sqrt(3/4) = 0.87 because
/// the window then grows by half a segment per RTT; but Linux's Reno counts ACKed
/// *segments* (`tcp_cong_avoid_ai` is fed `acked`), so it still grows by one segment per
/// RTT and C = 1.22 is the constant to compare with. Random (rather than periodic)
/// loss and a few timeouts at p = 1% push the measured value below the formula; the
/// tolerance is -25%..+15%. The link (100 Mbit/s) is far from being the limit.
/// Measured over seeds 1..=6 (300 s each): p = 0.1% gave -4%..+12% (seed 1: +12.4%),
/// p = 1% gave -9%..0% (seed 1: -3.3%).
fn mathis(p: f64) -> (f64, f64) {
    let rtt = ms(100);
    let mut cfg = dumbbell(Rate::from_mbps(100), ms(10), 10_000, 300, vec![flow("reno", rtt)]);
    cfg.bottleneck.loss = LossModel::Bernoulli { p };
    let r = run(cfg);
    let model = 1448.0 * 8.0 / rtt.as_secs_f64() * 1.22 / p.sqrt();
    (r.flows[0].goodput_bps, model)
}

#[test]
fn reno_matches_mathis_at_one_in_a_thousand_loss() {
    let (got, model) = mathis(0.001);
    println!("p=0.001: {got:.0} bps vs Mathis {model:.0} ({:+.1}%)", (got / model - 1.0) * 100.0);
    assert!(got > 0.75 * model && got < 1.15 * model, "{got} vs {model}");
}

#[test]
fn reno_matches_mathis_at_one_percent_loss() {
    let (got, model) = mathis(0.01);
    println!("p=0.01: {got:.0} bps vs Mathis {model:.0} ({:+.1}%)", (got / model - 1.0) * 100.0);
    assert!(got > 0.75 * model && got < 1.15 * model, "{got} vs {model}");
}

/// Two identical Reno flows sharing a 1-BDP DropTail bottleneck: Jain's index > 0.95.
/// The second starts 0.5 s later so the test is not just symmetry.
#[test]
fn two_identical_reno_flows_share_fairly() {
    let rate = Rate::from_mbps(20);
    let rtt = ms(40);
    let mut f2 = flow("reno", rtt);
    f2.start = Time::from_secs_f64(0.5);
    let cfg = dumbbell(rate, ms(10), bdp_packets(rate, rtt), 120, vec![flow("reno", rtt), f2]);
    let r = run(cfg);
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let j = jain(&g);
    println!("goodputs {g:?}, Jain {j:.4}");
    assert!(j > 0.95, "Jain {j}");
    assert!(r.link.utilization > 0.9);
}

/// RTT unfairness: with DropTail, Reno's throughput goes roughly as 1/RTT (between
/// 1/RTT and 1/RTT^2 by the classic analyses), so the 20 ms flow must clearly beat the
/// 80 ms one; we require at least 1.5x.
#[test]
fn shorter_rtt_reno_flow_gets_more() {
    let rate = Rate::from_mbps(20);
    let cfg = dumbbell(
        rate,
        ms(5),
        bdp_packets(rate, ms(80)),
        120,
        vec![flow("reno", ms(20)), flow("reno", ms(80))],
    );
    let r = run(cfg);
    let (a, b) = (r.flows[0].goodput_bps, r.flows[1].goodput_bps);
    println!("20 ms: {a:.0} bps, 80 ms: {b:.0} bps, ratio {:.2}", a / b);
    assert!(a > 1.5 * b, "{a} vs {b}");
}

/// The shared mahimahi traces beside the repository (where CI has them), or `None`, after
/// saying so, in a clone without them: the trace tests then skip, as the emulator's do.
fn trace_dir() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!("skipped: {} not present (shared/traces beside the clone)", dir.display());
    None
}

/// A trace-driven link never delivers more than the trace allows: after every
/// millisecond, the bytes that left the bottleneck are at most 1500 bytes times the
/// opportunities so far. A bulk flow with a large buffer should also use most of them.
#[test]
fn trace_link_never_exceeds_the_trace() {
    let Some(traces) = trace_dir() else { return };
    for name in ["12mbps.trace", "TMobile-LTE-short.down", "2.64mbps-poisson.trace"] {
        let trace = std::sync::Arc::new(Trace::load(traces.join(name)).unwrap());
        let mut cfg = dumbbell(
            Rate::from_mbps(1),
            ms(10),
            400,
            20,
            vec![flow("reno", ms(50)), flow("reno", ms(80))],
        );
        cfg.bottleneck.rate = LinkRate::Trace(trace.clone());
        let mut sim = Simulation::new(cfg).unwrap();
        let mut t = Time::ZERO;
        let mut checks = 0;
        loop {
            t += Duration::from_millis(1);
            let done = sim.run_until(t, &mut NoObserver);
            let delivered = sim.report().link.delivered_bytes;
            // Opportunities at times <= t.
            let allowed = trace.opportunities_before(Time(t.0 + 1)) * 1500;
            assert!(
                delivered <= allowed,
                "{name}: at {t}: delivered {delivered} > allowed {allowed}"
            );
            checks += 1;
            if done {
                break;
            }
        }
        let r = sim.report();
        println!(
            "{name}: utilisation {:.3} of {:.2} Mbit/s over {checks} checks",
            r.link.utilization,
            r.link.capacity_bps / 1e6
        );
        assert!(
            r.link.utilization > 0.8,
            "{name}: a bulk flow with a big buffer uses the trace: {}",
            r.link.utilization
        );
    }
}

/// Every trace in shared/traces parses and drives a short run within its capacity.
#[test]
fn every_shared_trace_runs() {
    let Some(traces) = trace_dir() else { return };
    let mut n = 0;
    let mut entries: Vec<_> =
        std::fs::read_dir(traces).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let trace = std::sync::Arc::new(Trace::load(&path).unwrap_or_else(|e| panic!("{e}")));
        assert!(trace.mean_rate().0 > 0, "{}", path.display());
        let mut cfg = dumbbell(Rate::from_mbps(1), ms(10), 200, 3, vec![flow("reno", ms(60))]);
        cfg.bottleneck.rate = LinkRate::Trace(trace.clone());
        let r = run(cfg);
        let allowed = trace.opportunities_before(Time::from_secs_f64(3.0) + Duration(1)) * 1500;
        assert!(r.link.delivered_bytes <= allowed, "{}", path.display());
        assert!(r.flows[0].delivered_bytes > 0, "{}: nothing delivered", path.display());
        n += 1;
    }
    assert!(n >= 15, "found {n} traces");
}
