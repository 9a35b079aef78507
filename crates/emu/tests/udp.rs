//! cclab's own TCP (the simulator's sender and receiver) over UDP through the emulator.
//! Needs root and /dev/net/tun; skips with a printed reason.

mod common;

use cclab_emu::harness::Harness;
use cclab_emu::testbed::EmulatorTiming;
use cclab_emu::udp::{run_flow, UdpFlow};
use cclab_emu::DirectionConfig;
use cclab_sim::{Buffer, LinkRate, TcpConfig};
use cclab_units::{Duration, Rate};

fn unavailable() -> bool {
    match cclab_emu::netns::preflight() {
        Ok(()) => false,
        Err(e) => {
            eprintln!("skipped: {e}");
            true
        }
    }
}

fn path() -> (DirectionConfig, DirectionConfig) {
    // 10 Mbit/s, 40 ms RTT, 1 BDP (50 kB) buffer on the data direction.
    let up = DirectionConfig {
        rate: Some(LinkRate::Constant(Rate::from_mbps(10))),
        delay: Duration::from_millis(20),
        buffer: Buffer::Bytes(50_000),
        ..Default::default()
    };
    let down = DirectionConfig { delay: Duration::from_millis(20), ..Default::default() };
    (up, down)
}

fn flow(cc: &str, bytes: Option<u64>, secs: u64) -> UdpFlow {
    UdpFlow {
        cc: cc.into(),
        params: vec![],
        tcp: TcpConfig::default(),
        bytes,
        duration: Duration::from_secs(secs),
        sample_interval: Duration::from_millis(10),
    }
}

#[test]
fn a_user_space_reno_flow_fills_the_link() {
    if unavailable() {
        return;
    }
    let (up, down) = path();
    let packet_time = up.rate.as_ref().unwrap().mean_packet_time();
    let ((r, drops), timing) = common::least_disturbed(|| {
        let h = Harness::start(&up, &down, 1).unwrap();
        let r = run_flow(&h, &flow("reno", None, 3)).unwrap();
        let fwd = h.finish().unwrap();
        let stats = [&fwd.dirs[0].stats, &fwd.dirs[1].stats];
        let timing = EmulatorTiming::of(stats, fwd.wakes(), packet_time);
        ((r, fwd.dirs[0].stats.queue_drops), timing)
    });
    eprintln!(
        "goodput {:.2} Mbit/s, {} retransmits, drops {drops}",
        r.goodput_bps / 1e6,
        r.retransmits,
    );
    // cwnd samples from the algorithm itself, srtt at least the 40 ms path.
    assert!(!r.samples.is_empty());
    assert!(r
        .samples
        .iter()
        .filter(|s| s.srtt.as_nanos() > 0)
        .all(|s| s.srtt >= Duration::from_millis(40)));
    // Never above the link's payload rate (10 Mbit/s x 1448/1500), however the emulator
    // was timed: bytes that arrive after the run's end are not the run's (operator
    // review, 2026-12-06: 11.58 Mbit/s over 1 s, the 200 ms after the end counted).
    assert!(r.goodput_bps <= 10e6 * 1448.0 / 1500.0 * 1.01, "goodput {}", r.goodput_bps);
    if common::undisturbed(&timing, "the goodput and the sample count") {
        // Payload share of a 1500-byte packet is 1448/1500; slow start costs a little.
        assert!(r.goodput_bps > 8.0e6 && r.goodput_bps < 9.7e6, "goodput {}", r.goodput_bps);
        assert!(r.samples.len() > 250, "{} samples", r.samples.len());
    }
}

#[test]
fn tahoe_which_the_kernel_lacks_completes_a_transfer() {
    if unavailable() {
        return;
    }
    let (up, down) = path();
    let h = Harness::start(&up, &down, 1).unwrap();
    let r = run_flow(&h, &flow("tahoe", Some(500_000), 5)).unwrap();
    drop(h);
    eprintln!("delivered {} B, completed {:?}", r.delivered_bytes, r.completed_at);
    assert_eq!(r.delivered_bytes, 500_000);
    let done = r.completed_at.expect("completed").as_secs_f64();
    assert!(done > 0.4 && done < 5.0, "completed at {done} s");
}
