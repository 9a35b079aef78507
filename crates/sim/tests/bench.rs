//! Speed targets of issue 2 item 7, measured in CPU time of the simulating thread so a
//! loaded machine does not fail them. Ignored by default (they need a release build and
//! take ~10 s): `cargo test --release -p cclab-sim --test bench -- --ignored --nocapture`.

use cclab_sim::bench;

#[test]
#[ignore]
fn bench_targets() {
    assert!(!cfg!(debug_assertions), "run the speed test with --release");
    for case in bench::standard() {
        let r = bench::run(&case);
        let cpu = r.cpu_s.unwrap_or(r.wall_s);
        println!(
            "{}: {} pkts in {:.2} s CPU ({:.2} s wall): {:.2} M pkts/CPU-s, {:.2} M events/CPU-s, util {:.3}",
            r.name,
            r.bottleneck_packets,
            cpu,
            r.wall_s,
            r.packets_per_cpu_s() / 1e6,
            r.events as f64 / cpu / 1e6,
            r.utilization
        );
        assert!(r.utilization > 0.9, "{}: utilisation {}", r.name, r.utilization);
        match r.name {
            "b" => assert!(r.packets_per_cpu_s() >= 3e6, "b: {} packets per CPU second", r.packets_per_cpu_s()),
            "c" => assert!(cpu < 10.0, "c: {cpu} CPU seconds"),
            _ => {}
        }
    }
    let peak = bench::peak_rss_bytes().unwrap_or(0);
    println!("peak RSS {:.0} MB", peak as f64 / 1e6);
    assert!(peak < 1_000_000_000);
}
