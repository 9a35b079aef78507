//! The three-way handshake in the simulator: the SYN crosses the bottleneck queue, the
//! SYN-ACK comes back over the ACK path, data leaves when it arrives, and the RTT
//! estimator starts from that sample; a dropped SYN waits for the 1 s initial RTO.

mod common;
use cclab_sim::*;
use cclab_units::{Rate, Time};
use common::*;

const US: u64 = 1_000;

/// Flow 1 (40 ms, handshake) starts at 0 behind flow 0, which sends its initial window
/// of `burst` full segments at once (no handshake) into a 10 Mbit/s link (1.2 ms each)
/// with a DropTail buffer of `buffer` packets.
fn behind_a_burst(burst: u32, buffer: u64, burst_bytes: Option<u64>) -> Simulation {
    let mut a = flow("reno", ms(20));
    a.tcp.handshake = false;
    a.tcp.init_cwnd = burst;
    a.bytes = burst_bytes;
    let b = flow("reno", ms(40));
    Simulation::new(dumbbell(Rate::from_mbps(10), ms(10), buffer, 5, vec![a, b])).unwrap()
}

#[test]
fn the_syn_queues_behind_data_and_its_round_trip_seeds_the_estimator() {
    let mut sim = behind_a_burst(10, 100, None);
    // The SYN waits for 10 packets (12 ms), takes 48 us itself (60 bytes), then 40 ms.
    let syn_ack = 52_048 * US;
    sim.run_until(Time::ZERO, &mut NoObserver);
    assert_eq!((sim.sender(0).snd_nxt(), sim.sender(1).snd_nxt()), (10, 0));
    sim.run_until(Time(syn_ack - 1), &mut NoObserver);
    assert_eq!(sim.sender(1).snd_nxt(), 0, "no data before the SYN-ACK");
    sim.run_until(Time(syn_ack), &mut NoObserver);
    let b = sim.sender(1);
    assert_eq!(b.snd_nxt(), 10, "the initial window leaves with the SYN-ACK");
    assert_eq!((b.tp().srtt_us(), b.tp().min_rtt_us), (52_048, 52_048));
    // Linux from one sample R: RTO = R + max(2R, rto_min), here R + 200 ms.
    assert_eq!(b.rto().as_micros(), 52_048 + 200_000);
}

#[test]
fn without_a_handshake_data_leaves_at_the_start_and_the_rto_is_the_initial_one() {
    let mut f = flow("reno", ms(40));
    f.tcp.handshake = false;
    let mut sim = Simulation::new(dumbbell(Rate::from_mbps(10), ms(10), 100, 1, vec![f])).unwrap();
    sim.run_until(Time::ZERO, &mut NoObserver);
    assert_eq!(sim.sender(0).snd_nxt(), 10);
    assert_eq!((sim.sender(0).tp().srtt_us(), sim.sender(0).rto().as_micros()), (0, 1_000_000));
}

#[test]
fn a_dropped_syn_is_sent_again_after_one_second() {
    // Flow 0's 40-segment transfer overflows the 5-packet buffer; flow 1's SYN, offered
    // right after it, is dropped. Flow 0 has recovered well before 1 s, so the second
    // SYN crosses an empty queue.
    let mut sim = behind_a_burst(40, 5, Some(40 * 1448));
    let again = 1_000_000 * US;
    sim.run_until(Time(again - 1), &mut NoObserver);
    assert!(sim.sender(0).is_complete(), "flow 0 done before the SYN's timer");
    assert_eq!(sim.sender(1).snd_nxt(), 0);
    assert_eq!(sim.sender(1).stats().timeouts, 0);
    let syn_ack = again + 40_048 * US;
    sim.run_until(Time(syn_ack - 1), &mut NoObserver);
    assert_eq!((sim.sender(1).snd_nxt(), sim.sender(1).stats().timeouts), (0, 1));
    sim.run_until(Time(syn_ack), &mut NoObserver);
    let b = sim.sender(1);
    assert_eq!(b.snd_nxt(), 10, "one SYN retransmission keeps initcwnd");
    assert_eq!(b.tp().srtt_us(), 40_048, "the retransmitted SYN's round trip");
    let report = sim.run(&mut NoObserver);
    assert!(report.flows[1].goodput_bps > 1e6, "flow 1 runs after the late handshake");
}
