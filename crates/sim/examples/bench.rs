//! `cargo run --release -p cclab-sim --example bench [a|b|c]...`: runs the standard
//! benchmark cases and prints their speed (the CLI's `cclab bench` prints the same).
fn main() {
    let want: Vec<String> = std::env::args().skip(1).collect();
    for case in cclab_sim::bench::standard() {
        if !want.is_empty() && !want.iter().any(|w| w == case.name) {
            continue;
        }
        let description = case.description;
        let r = cclab_sim::bench::run(case);
        println!(
            "{}: {} | sim {:.0} s, wall {:.2} s, cpu {:.2} s, {} pkts, {:.2} M pkts/cpu-s, {:.2} M pkts/s, {:.2} M events/s, util {:.3}, peak RSS {:.0} MB",
            r.name,
            description,
            r.simulated_s,
            r.wall_s,
            r.cpu_s.unwrap_or(f64::NAN),
            r.bottleneck_packets,
            r.packets_per_cpu_s() / 1e6,
            r.packets_per_wall_s() / 1e6,
            r.events_per_wall_s() / 1e6,
            r.utilization,
            cclab_sim::bench::peak_rss_bytes().unwrap_or(0) as f64 / 1e6
        );
    }
}
