//! Web-like background traffic (`arrivals` on a `[[flows]]` entry): what the file says
//! becomes finite transfers at the configured rate and mean size, drawn from the seed,
//! and the simulator carries them to completion.

use cclab_scenario::{parse_str, Scenario};
use cclab_sim::{NoObserver, Simulation};
use cclab_units::Time;

fn scenario(arrivals: &str, extra: &str) -> Result<Scenario, String> {
    let text = format!(
        r#"duration = "60s"
seed = 3
sample_interval = "1s"
[bottleneck]
rate = "100Mbps"
delay = "5ms"
[[flows]]
cc = "cubic"
rtt = "40ms"
[[flows]]
name = "web"
cc = "reno"
rtt = "40ms"
arrivals = {arrivals}
{extra}"#
    );
    parse_str(&text, "w.toml", None, "w", &[]).map_err(|e| e.to_string())
}

#[test]
fn transfers_arrive_at_the_configured_rate_with_the_configured_mean_size() {
    let s = scenario("{ rate = 20.0, mean_size = \"30kB\", shape = 2.5 }", "").unwrap();
    let web: Vec<_> = s.config.flows.iter().filter(|f| f.name.starts_with("web#")).collect();
    // 1,200 expected in 60 s (Poisson: s.d. about 35).
    assert!((web.len() as f64 - 1200.0).abs() < 140.0, "{} transfers", web.len());
    assert!(web.iter().all(|f| f.bytes.is_some() && f.stop.is_none() && f.cc == "reno"));
    let mean = web.iter().map(|f| f.bytes.unwrap() as f64).sum::<f64>() / web.len() as f64;
    assert!((mean / 30_000.0 - 1.0).abs() < 0.1, "mean size {mean}");
    assert!(web.windows(2).all(|w| w[0].start <= w[1].start));
    assert_eq!(s.config.flows[0].name, "cubic#0", "the other flows keep their names");
}

#[test]
fn the_same_seed_draws_the_same_transfers_and_another_seed_others() {
    let a = scenario("{ rate = 5.0 }", "").unwrap();
    let b = scenario("{ rate = 5.0 }", "").unwrap();
    let starts =
        |s: &Scenario| s.config.flows.iter().map(|f| (f.start, f.bytes)).collect::<Vec<_>>();
    assert_eq!(starts(&a), starts(&b));
    let text = "duration = \"60s\"\nseed = 4\n[bottleneck]\nrate = \"100Mbps\"\ndelay = \"5ms\"\n[[flows]]\ncc = \"cubic\"\nrtt = \"40ms\"\n[[flows]]\nname = \"web\"\ncc = \"reno\"\nrtt = \"40ms\"\narrivals = { rate = 5.0 }\n";
    let c = parse_str(text, "w.toml", None, "w", &[]).unwrap();
    assert_ne!(starts(&a), starts(&c));
    // ns-2's defaults: shape 1.2, mean 10 segments of the MSS (1448 bytes).
    let sizes: Vec<u64> = a.config.flows[1..].iter().map(|f| f.bytes.unwrap()).collect();
    let floor = (10.0 * 1448.0 * 0.2 / 1.2) as u64;
    assert!(sizes.iter().all(|&x| x >= floor), "{:?}", &sizes[..5]);
}

#[test]
fn the_window_is_start_to_stop_and_transfers_run_to_their_end() {
    let s = scenario("{ rate = 10.0, mean_size = \"20kB\" }", "start = \"10s\"\nstop = \"20s\"")
        .unwrap();
    let web = &s.config.flows[1..];
    assert!(!web.is_empty());
    assert!(web.iter().all(|f| f.start >= Time(10_000_000_000) && f.start < Time(20_000_000_000)));
    let mut sim = Simulation::new(s.config.clone()).unwrap();
    sim.run_until(Time(60_000_000_000), &mut NoObserver);
    let report = sim.report();
    for (f, r) in web.iter().zip(&report.flows[1..]) {
        assert!(r.completed_at.is_some(), "{} ({} bytes) completed", f.name, f.bytes.unwrap());
        assert_eq!(r.delivered_bytes, f.bytes.unwrap(), "{}", f.name);
    }
}

#[test]
fn bad_arrivals_name_the_field_the_value_and_what_is_allowed() {
    for (arrivals, extra, field, allowed) in [
        ("{ rate = 0.0 }", "", "flows[1].arrivals.rate", "more than 0"),
        ("{ rate = 2.0, shape = 1.0 }", "", "flows[1].arrivals.shape", "finite mean"),
        (
            "{ rate = 2.0, mean_size = \"0B\" }",
            "",
            "flows[1].arrivals.mean_size",
            "at least 1 byte",
        ),
        ("{ mean_size = \"10kB\" }", "", "flows[1].arrivals.rate", "transfers per second"),
        (
            "{ rate = 2.0, burst = 3 }",
            "",
            "flows[1].arrivals.burst",
            "allowed fields: rate, mean_size, shape",
        ),
        ("{ rate = 2.0 }", "count = 3", "flows[1].count", "set by arrivals"),
        ("{ rate = 2.0 }", "bytes = \"1MB\"", "flows[1].bytes", "set by arrivals"),
        ("3", "", "flows[1].arrivals", "expected a table"),
    ] {
        let e = scenario(arrivals, extra).unwrap_err();
        assert!(e.contains(field) && e.contains(allowed), "{arrivals} {extra}: {e}");
    }
}

/// Arrivals beyond the flow limit are refused as soon as the limit is passed, not after
/// drawing them all (10,000 a second for 1,000,000 s would be 10^10 transfers).
#[test]
fn arrivals_past_the_flow_limit_are_refused_without_drawing_them_all() {
    let text = "duration = \"1000000s\"\nsample_interval = \"1000s\"\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"40ms\"\narrivals = { rate = 10000.0 }\n";
    let e = parse_str(text, "w.toml", None, "w", &[]).unwrap_err().to_string();
    assert!(e.contains("flows[0].arrivals") && e.contains("at most 1000000 flows"), "{e}");
}
