//! Differential test: the BPF algorithms' C code (compiled for the host through
//! bpf/host_shim.h) against the Rust reference in crates/cc, on the same event sequences
//! (crates/cc's `replay`), requiring identical (cwnd, ssthresh) after every event.
//!
//! Sequences: hand-written ones for the paths that matter (slow start with HyStart,
//! losses, timeouts, undo, idle restart, live parameter changes) and seeded random ones
//! (a small xorshift, fixed seeds: deterministic), at HZ 1000 and at this kernel's 250.

use cclab_cc::replay::{replay, replay_with, standard_sequences, Event};
use cclab_cc::{Algorithm, CongestionControl, TcpState};
use cclab_kernel::host::HostAlgo;
use cclab_kernel::Algo;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type Trace = Vec<(u32, u32)>;

fn run(algo: Algo, hz: u32, events: &[Event]) -> (Trace, Trace) {
    let mut tp = TcpState::new(1448, 10);
    tp.hz = hz;
    let mut rust = Algorithm::new(algo.reference()).unwrap();
    let rust_trace = replay_with(&mut rust, &mut tp.clone(), events);
    let mut c = HostAlgo::new(algo);
    let c_trace = replay_with(&mut c, &mut tp, events);
    (rust_trace, c_trace)
}

fn assert_same(algo: Algo, hz: u32, events: &[Event], what: &str) {
    let (r, c) = run(algo, hz, events);
    if let Some(i) = r.iter().zip(&c).position(|(a, b)| a != b) {
        let from = i.saturating_sub(3);
        panic!(
            "{} vs crates/cc {} ({what}, hz {hz}) differ first at event {i} {:?}:\n  rust {:?}\n  bpf  {:?}\n  events before: {:?}",
            algo.name(),
            algo.reference(),
            events[i],
            &r[from..=i],
            &c[from..=i],
            &events[from..i]
        );
    }
    assert_eq!(r.len(), c.len());
}

fn rounds(n: usize, rtt_us: u32) -> Vec<Event> {
    (0..n).map(|_| Event::AckRound { rtt_us, duration_us: rtt_us as u64 }).collect()
}

/// Slow start, HyStart exit by delay increase, a loss, cubic growth across the plateau.
fn scripted() -> Vec<Event> {
    let mut e = rounds(4, 40_000);
    e.extend((0..6).map(|i| Event::AckRound { rtt_us: 40_000 + i * 3_000, duration_us: 40_000 }));
    e.push(Event::Loss);
    e.extend(rounds(30, 50_000));
    e.push(Event::Loss);
    e.extend(rounds(20, 50_000));
    e.push(Event::Timeout);
    e.extend(rounds(12, 45_000));
    e.push(Event::Loss);
    e.push(Event::Undo);
    e.extend(rounds(5, 45_000));
    e.push(Event::Idle { us: 2_000_000 });
    e.extend(rounds(10, 45_000));
    e
}

fn random_events(rng: &mut Rng, algo: Algo, n: usize) -> Vec<Event> {
    let mut e = Vec::with_capacity(n);
    let base = 5_000 + rng.below(150_000) as u32;
    for _ in 0..n {
        let rtt = base + rng.below(base as u64 / 2 + 1) as u32;
        e.push(match rng.below(100) {
            0..=54 => Event::AckRound { rtt_us: rtt, duration_us: rtt as u64 },
            55..=74 => Event::Ack {
                acked: 1 + rng.below(4) as u32,
                rtt_us: if rng.below(5) == 0 { None } else { Some(rtt) },
            },
            75..=79 => Event::Advance { us: rng.below(50_000) },
            80..=86 => Event::Loss,
            87..=88 => Event::Timeout,
            89..=90 => Event::Undo,
            91..=92 => Event::Idle { us: rng.below(3_000_000) },
            _ => random_set(rng, algo),
        });
    }
    e
}

fn random_set(rng: &mut Rng, algo: Algo) -> Event {
    let bool_v = |rng: &mut Rng| rng.below(2) as f64;
    match (algo, rng.below(6)) {
        (Algo::Tuner, 0) => {
            Event::Set { name: "alpha", value: [0.25, 0.5, 1.0, 1.5, 2.0][rng.below(5) as usize] }
        }
        (Algo::Tuner, 1) => {
            Event::Set { name: "beta", value: [0.25, 0.5, 0.7, 0.8, 0.95][rng.below(5) as usize] }
        }
        (Algo::Tuner, 2) => {
            Event::Set { name: "bic_scale", value: [20.0, 41.0, 82.0][rng.below(3) as usize] }
        }
        (Algo::Tuner, 3) => Event::Set { name: "hystart_detect", value: rng.below(4) as f64 },
        (_, 4) => Event::Set { name: "fast_convergence", value: bool_v(rng) },
        (_, 5) => Event::Set { name: "tcp_friendliness", value: bool_v(rng) },
        _ => Event::Set { name: "hystart", value: bool_v(rng) },
    }
}

#[test]
fn tuner_matches_crates_cc_on_scripted_sequences() {
    for hz in [1000, 250] {
        assert_same(Algo::Tuner, hz, &scripted(), "scripted");
        let mut live = scripted();
        live.insert(12, Event::Set { name: "beta", value: 0.5 });
        live.insert(20, Event::Set { name: "alpha", value: 1.5 });
        live.insert(40, Event::Set { name: "beta", value: 1.0 });
        assert_same(Algo::Tuner, hz, &live, "scripted with live alpha/beta changes");
    }
}

#[test]
fn tuner_matches_crates_cc_on_random_sequences() {
    for seed in 1..=40u64 {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let events = random_events(&mut rng, Algo::Tuner, 150);
        assert_same(
            Algo::Tuner,
            if seed % 2 == 0 { 250 } else { 1000 },
            &events,
            &format!("random seed {seed}"),
        );
    }
}

#[test]
fn cubic_fit_matches_crates_cc_including_n_updates() {
    for hz in [1000, 250] {
        assert_same(Algo::CubicFit, hz, &scripted(), "scripted");
    }
    // Long uncongested stretch (N grows by one per 500 ms), then queueing (N falls).
    let mut e = rounds(60, 20_000);
    e.push(Event::Loss);
    e.extend(
        (0..80).map(|i| Event::AckRound { rtt_us: 20_000 + (i % 10) * 2_000, duration_us: 25_000 }),
    );
    e.push(Event::Loss);
    e.extend(rounds(40, 60_000));
    assert_same(Algo::CubicFit, 250, &e, "N up and down");
    // and N really moved in the C code
    let mut tp = TcpState::new(1448, 10);
    tp.hz = 250;
    let mut c = HostAlgo::new(Algo::CubicFit);
    replay_with(&mut c, &mut tp, &rounds(60, 20_000));
    assert!(c.fit_n() > 2 * 1024, "N after 1.2 s without queueing: {}", c.fit_n() as f64 / 1024.0);

    for seed in 1..=30u64 {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ seed);
        let events = random_events(&mut rng, Algo::CubicFit, 200);
        assert_same(
            Algo::CubicFit,
            if seed % 2 == 0 { 250 } else { 1000 },
            &events,
            &format!("random seed {seed}"),
        );
    }
}

#[test]
fn host_parameters_round_trip_like_the_reference() {
    let mut c = HostAlgo::new(Algo::Tuner);
    let r = Algorithm::new("tuner").unwrap();
    for p in Algo::Tuner.params() {
        assert_eq!(
            c.param(p.name),
            r.param(p.name).map(|v| if p.name == "beta" {
                (v * 1024.0).round() / 1024.0
            } else {
                v
            }),
            "{}",
            p.name
        );
    }
    c.apply_param("beta", 0.5);
    assert_eq!(c.param("beta"), Some(0.5));
}

/// crates/cc's named sequences (slow start and HyStart, epochs, fast convergence, the
/// Reno region at 2 ms, timeout and undo, idle restart), through `replay` itself.
#[test]
fn both_algorithms_match_on_crates_cc_standard_sequences() {
    for algo in Algo::ALL {
        for (name, events) in standard_sequences() {
            let mut rust = Algorithm::new(algo.reference()).unwrap();
            let mut c = HostAlgo::new(algo);
            let (r, k) = (replay(&mut rust, &events), replay(&mut c, &events));
            let first = r.iter().zip(&k).position(|(a, b)| a != b);
            assert!(
                first.is_none(),
                "{} {name}: first difference at event {:?}: rust {:?} bpf {:?}",
                algo.name(),
                first,
                first.map(|i| r[i]),
                first.map(|i| k[i])
            );
        }
    }
}

/// CUBIC-FIT's beta: the C code's exact integer rounding equals crates/cc's f64 rounding
/// for every N from 1 to the 1000-flow cap, in 1/1024 steps.
#[test]
fn cubic_fit_beta_rounding_agrees_for_every_n() {
    use cclab_cc::cubic::{CubicConfig, Derived};
    for n in 1024..=1000 * 1024u32 {
        let nf = n as f64 / 1024.0;
        let cfg =
            CubicConfig { beta: (19.0 * nf - 3.0) / (19.0 * nf + 1.0), ..CubicConfig::default() };
        assert_eq!(cclab_kernel::host::fit_beta(n), Derived::of(&cfg).beta, "N = {nf}");
    }
}
