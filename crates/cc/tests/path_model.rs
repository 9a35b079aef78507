//! A deliberately small path model that checks the algorithms' behaviour end to end
//! without the simulator (crates/sim), so this crate's tests stand alone: one sender, a FIFO DropTail bottleneck
//! of `rate` packets per second and `buffer` packets, a fixed base RTT, one ACK per packet,
//! optional Bernoulli random loss. Loss is detected one base RTT after the drop (standing
//! in for three duplicate ACKs); recovery is SACK-like and simple: cwnd goes straight to
//! ssthresh, lost packets are resent, and recovery ends when everything sent before it
//! is ACKed (then `set_state(Open)` and `CaEvent::CompleteCwr`, as Linux). No timeouts,
//! no delayed ACKs, no PRR: this model exists to exercise the algorithms' own logic
//! (rounds, delay estimates, loss responses), not TCP's. Times in microseconds.

use cclab_cc::{
    AckFlags, AckSample, Algorithm, CaEvent, CaState, CongestionControl, TcpState, ALGORITHMS,
};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const MSS: u32 = 1448;

#[derive(Clone, Copy)]
struct Path {
    /// Bottleneck rate, packets per second.
    rate_pps: u64,
    /// Base round-trip time, µs.
    rtt_us: u64,
    /// Bottleneck buffer, packets.
    buffer: usize,
    /// Random loss probability.
    loss: f64,
}

#[derive(Default)]
struct Outcome {
    /// Delivered packets / (rate x duration) over the second half of the run.
    utilisation: f64,
    /// Mean queueing delay seen by ACKs in the second half, in packets (delay x rate).
    mean_queue_pkts: f64,
    /// Internal variables at the end of the run.
    internals: Vec<(&'static str, f64)>,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The ACK for packet `seq`, sent at `sent`, arrives.
    Ack { seq: u64, sent: u64 },
    /// The sender learns that packet `seq` was lost.
    Lost { seq: u64 },
}

fn run(name: &str, path: Path, secs: u64, seed: u64) -> Outcome {
    let mut alg = Algorithm::new(name).unwrap();
    let mut tp = TcpState::new(MSS, 10);
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut uniform = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    alg.init(&mut tp);
    let service_us = 1_000_000 / path.rate_pps;
    let end = secs * 1_000_000;
    let half = end / 2;
    let mut events: BinaryHeap<Reverse<(u64, Ev)>> = BinaryHeap::new();
    let mut queue: VecDeque<u64> = VecDeque::new(); // departure times of queued packets
    let mut link_free = 0u64;
    let mut next_seq = 0u64;
    let mut in_flight = 0u32;
    let mut retransmit: VecDeque<u64> = VecDeque::new();
    let mut recovery_end: Option<u64> = None;
    let (mut delivered_late, mut qsum, mut qn) = (0u64, 0f64, 0u64);

    let mut send = |now: u64,
                    tp: &mut TcpState,
                    in_flight: &mut u32,
                    next_seq: &mut u64,
                    retransmit: &mut VecDeque<u64>,
                    events: &mut BinaryHeap<Reverse<(u64, Ev)>>,
                    queue: &mut VecDeque<u64>,
                    link_free: &mut u64| {
        while *in_flight < tp.snd_cwnd {
            let seq = retransmit.pop_front().unwrap_or_else(|| {
                *next_seq += 1;
                *next_seq
            });
            *in_flight += 1;
            while queue.front().is_some_and(|&d| d <= now) {
                queue.pop_front();
            }
            if queue.len() >= path.buffer || uniform() < path.loss {
                events.push(Reverse((now + path.rtt_us, Ev::Lost { seq })));
                continue;
            }
            let depart = (*link_free).max(now) + service_us;
            *link_free = depart;
            queue.push_back(depart);
            events.push(Reverse((depart + path.rtt_us, Ev::Ack { seq, sent: now })));
        }
    };

    tp.now_us = 0;
    send(
        0,
        &mut tp,
        &mut in_flight,
        &mut next_seq,
        &mut retransmit,
        &mut events,
        &mut queue,
        &mut link_free,
    );
    while let Some(Reverse((now, ev))) = events.pop() {
        if now > end {
            break;
        }
        tp.now_us = now;
        in_flight -= 1;
        match ev {
            Ev::Ack { seq, sent } => {
                let rtt = (now - sent) as u32;
                tp.delivered += 1;
                tp.packets_in_flight = in_flight;
                tp.max_packets_out = tp.max_packets_out.max(in_flight);
                tp.srtt_us =
                    if tp.srtt_us == 0 { rtt << 3 } else { tp.srtt_us - (tp.srtt_us >> 3) + rtt };
                tp.min_rtt_us = tp.min_rtt_us.min(rtt);
                if now >= half {
                    delivered_late += 1;
                    qsum += (rtt as f64 - path.rtt_us as f64) / service_us as f64;
                    qn += 1;
                }
                alg.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: Some(rtt), in_flight });
                alg.in_ack_event(&mut tp, AckFlags { acked_bytes: MSS, ..AckFlags::default() });
                if let Some(until) = recovery_end {
                    if seq >= until && retransmit.is_empty() {
                        recovery_end = None;
                        alg.set_state(&mut tp, CaState::Open);
                        tp.ca_state = CaState::Open;
                        alg.cwnd_event(&mut tp, CaEvent::CompleteCwr);
                    }
                } else {
                    alg.cong_avoid(&mut tp, 1);
                }
            }
            Ev::Lost { seq } => {
                tp.packets_in_flight = in_flight;
                if recovery_end.is_none() {
                    tp.prior_cwnd = tp.snd_cwnd;
                    tp.snd_ssthresh = alg.ssthresh(&tp);
                    alg.set_state(&mut tp, CaState::Recovery);
                    tp.ca_state = CaState::Recovery;
                    tp.snd_cwnd = tp.snd_ssthresh;
                    recovery_end = Some(next_seq);
                }
                retransmit.push_back(seq);
            }
        }
        send(
            now,
            &mut tp,
            &mut in_flight,
            &mut next_seq,
            &mut retransmit,
            &mut events,
            &mut queue,
            &mut link_free,
        );
    }
    let mut internals = vec![];
    alg.inspect(&mut |k, v| internals.push((k, v)));
    Outcome {
        utilisation: delivered_late as f64 / (path.rate_pps as f64 * (end - half) as f64 / 1e6),
        mean_queue_pkts: if qn > 0 { qsum / qn as f64 } else { 0.0 },
        internals,
    }
}

fn internal(o: &Outcome, name: &str) -> f64 {
    o.internals
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("no internal {name}"))
}

/// 12 Mbit/s (1000 packets/s), 50 ms, one-BDP buffer: every algorithm fills the link.
#[test]
fn every_algorithm_fills_a_one_bdp_path() {
    let path = Path { rate_pps: 1000, rtt_us: 50_000, buffer: 50, loss: 0.0 };
    let mut low = vec![];
    for info in ALGORITHMS {
        let o = run(info.name, path, 60, 1);
        println!(
            "{:<12} utilisation {:.3} queue {:.1} pkts",
            info.name, o.utilisation, o.mean_queue_pkts
        );
        if o.utilisation < 0.8 {
            low.push((info.name, o.utilisation));
        }
    }
    assert!(low.is_empty(), "{low:?}");
}

/// Vegas holds between alpha = 2 and beta = 4 packets in the queue, with a deep buffer
/// that loss-based algorithms would fill.
#[test]
fn vegas_keeps_alpha_to_beta_packets_queued() {
    let path = Path { rate_pps: 1000, rtt_us: 50_000, buffer: 500, loss: 0.0 };
    let o = run("vegas", path, 60, 1);
    assert!(o.utilisation > 0.98, "{}", o.utilisation);
    assert!((1.5..=5.0).contains(&o.mean_queue_pkts), "queue {}", o.mean_queue_pkts);
    let reno = run("reno", path, 60, 1);
    assert!(reno.mean_queue_pkts > 50.0, "Reno fills the deep buffer: {}", reno.mean_queue_pkts);
}

/// Compound on a large BDP (10 000 packets/s, 100 ms: BDP 1000) with a small buffer
/// (200 packets): after a loss Reno needs hundreds of RTTs to climb back, while CTCP's
/// delay window grows in a few and then stops near gamma = 30 queued packets (it gives
/// back what Reno's window adds), so CTCP keeps the link full with the queue well below
/// the buffer (measured here: a mean of about 70 packets, as each round's dwnd step at
/// this window is about 24 packets).
#[test]
fn compound_fills_a_large_bdp_with_a_short_queue() {
    let path = Path { rate_pps: 10_000, rtt_us: 100_000, buffer: 200, loss: 0.0 };
    let o = run("compound", path, 120, 1);
    let reno = run("reno", path, 120, 1);
    println!(
        "compound: util {:.3} queue {:.1} {:?}",
        o.utilisation, o.mean_queue_pkts, o.internals
    );
    println!("reno:     util {:.3} queue {:.1}", reno.utilisation, reno.mean_queue_pkts);
    assert!(o.utilisation > 0.97, "{}", o.utilisation);
    assert!(
        o.utilisation > reno.utilisation + 0.03,
        "compound {} reno {}",
        o.utilisation,
        reno.utilisation
    );
    assert!(o.mean_queue_pkts < 100.0, "queue {}", o.mean_queue_pkts);
}

/// With a buffer deeper than the BDP, Reno's window alone overfills the path; CTCP can
/// only give its delay window back, so dwnd ends at zero (its documented limitation).
#[test]
fn compound_gives_back_dwnd_when_the_loss_window_fills_the_queue() {
    let path = Path { rate_pps: 10_000, rtt_us: 100_000, buffer: 2000, loss: 0.0 };
    let o = run("compound", path, 60, 1);
    assert_eq!(internal(&o, "dwnd"), 0.0);
    assert!(internal(&o, "diff") > 30.0);
}

/// Random loss (1%) on an under-buffered fast path: algorithms built for it beat Reno.
/// TCP-FIT raises N (no queue builds), Westwood+ and Veno cut less than half.
#[test]
fn loss_tolerant_algorithms_beat_reno_under_random_loss() {
    let path = Path { rate_pps: 2000, rtt_us: 100_000, buffer: 200, loss: 0.01 };
    let reno = run("reno", path, 60, 7).utilisation;
    for name in ["tcp-fit", "westwood", "veno", "scalable", "hybla"] {
        let o = run(name, path, 60, 7);
        println!("{name:<10} {:.3} vs reno {reno:.3} {:?}", o.utilisation, o.internals);
        assert!(o.utilisation > 1.2 * reno, "{name}: {:.3} vs reno {reno:.3}", o.utilisation);
    }
    let fit = run("tcp-fit", path, 60, 7);
    assert!(internal(&fit, "n") > 2.0, "N = {}", internal(&fit, "n"));
    // Without random loss and with a full buffer, TCP-FIT's N stays small.
    let clean = run("tcp-fit", Path { loss: 0.0, ..path }, 60, 7);
    assert!(internal(&clean, "n") < 3.0, "N = {}", internal(&clean, "n"));
}
