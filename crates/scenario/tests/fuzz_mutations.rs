//! A deterministic mutation fuzzer for the scenario parser on stable Rust: seeded byte
//! and line mutations of the shipped scenarios, tens of thousands of them, each parsed
//! with and without `--set` overrides. Every input must give either a valid scenario
//! or a proper error (file name, a message, and a line that exists), never a panic.
//! (The coverage-guided twin is `fuzz/fuzz_targets/scenario_parser.rs`, for cargo-fuzz.)

use cclab_scenario::{parse_str, parse_str_or_sweep, Loaded, ScenarioError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// xorshift64*: a tiny seeded generator, so failures reproduce from the iteration number.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Fragments that reach deep into the schema when spliced in.
const TOKENS: &[&str] = &[
    "\"",
    "'",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    "=",
    ",",
    "\n",
    "#",
    "\\",
    ".",
    "-",
    "0",
    "1e308",
    "-1",
    "nan",
    "inf",
    "18446744073709551616",
    "9223372036854775807",
    "true",
    "\"1bdp\"",
    "\"0bdp\"",
    "\"1e9bdp\"",
    "\"5pkt\"",
    "\"10MB\"",
    "\"10Mbps\"",
    "\"0bps\"",
    "\"-5ms\"",
    "\"1ms\"",
    "\"1000000s\"",
    "count = 999999",
    "count = 0",
    "\n[[flows]]\ncc = \"reno\"\nrtt = \"1s\"\n",
    "\n[[changes]]\nat = \"1s\"\nflow = 0\nset = { initcwnd = 3 }\n",
    "qdisc = { kind = \"red\", min_th = 3 }",
    "loss = { kind = \"gilbert\", p_good_to_bad = 1, p_bad_to_good = 1 }",
    "params = { x = 1 }",
    "é",
    "\u{0}",
    "trace = \"/dev/null\"",
    "trace = \"../traces/0.57mbps-poisson.trace\"",
    "rtt = \"\"",
    "sample_interval = \"100us\"",
    "1979-05-27T07:32:00Z",
    "\n[sweep]\nseeds = 2\n\"flows[0].cc\" = [\"reno\", \"cubic\"]\n",
    "seeds = 0",
    "seeds = 100000",
    "\"flows[0].rtt\" = []",
    "\"flows[7].rtt\" = [\"10ms\"]",
    "\"bottleneck.rate\" = [\"1Mbps\", 3]",
    "arrivals = { rate = 5.0 }",
    "arrivals = { rate = 1e9, shape = 1.0 }",
    "arrivals = { mean_size = \"0B\" }",
];

const OVERRIDES: &[&str] = &[
    "duration=1s",
    "flows[0].cc=tahoe",
    "bottleneck.rate=5Mbps",
    "flows[0].params.beta=0.5",
    "flows[9].x=1",
    "a..b=1",
    "=",
    "bottleneck={}",
    "flows=3",
];

fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut bytes = base.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = bytes.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                bytes[i] = rng.next() as u8;
            }
            1 if len > 0 => {
                let i = rng.below(len);
                let j = (i + 1 + rng.below(20)).min(len);
                bytes.drain(i..j);
            }
            2 => {
                let i = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(i..i, t.bytes());
            }
            3 => {
                // Duplicate or drop a whole line.
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let i = rng.below(lines.len());
                    if rng.below(2) == 0 {
                        let l = lines[i];
                        lines.insert(rng.below(lines.len() + 1), l);
                    } else {
                        lines.remove(i);
                    }
                }
                bytes = lines.join("\n").into_bytes();
            }
            4 if len > 0 => bytes.truncate(rng.below(len)),
            5 => {
                // Replace a digit run with a big or odd number.
                if let Some(i) = bytes.iter().position(|b| b.is_ascii_digit()) {
                    let n = ["0", "00", "1000000000000", "0.0000001", "-0", "99999999999999999999"]
                        [rng.below(6)];
                    bytes.splice(i..i + 1, n.bytes());
                }
            }
            _ => {
                // Swap two lines.
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.len() > 1 {
                    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                    lines.swap(a, b);
                }
                bytes = lines.join("\n").into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn check_error(e: &ScenarioError, text: &str) {
    let shown = e.to_string();
    assert!(shown.starts_with("fuzz.toml"), "error does not name the file: {shown}");
    assert!(!e.message.trim().is_empty(), "empty message: {shown}");
    assert!(!shown.contains('\n'), "multi-line error: {shown}");
    if let Some(l) = e.line {
        assert!(l >= 1 && l <= text.lines().count() + 1, "line {l} does not exist: {shown}");
    }
}

#[test]
fn mutated_scenarios_never_panic_and_always_explain_themselves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let small = root.join("small");
    let mut bases = Vec::new();
    for dir in [&root, &small] {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for f in files {
            bases.push(std::fs::read_to_string(f).unwrap());
        }
    }
    assert!(bases.len() >= 5);
    let iterations: u64 =
        std::env::var("FUZZ_ITERATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let (mut ok, mut err) = (0u64, 0u64);
    for i in 0..iterations {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (i + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let base = &bases[rng.below(bases.len())];
        let text = mutate(&mut rng, base);
        let overrides: Vec<String> = if rng.below(4) == 0 {
            vec![OVERRIDES[rng.below(OVERRIDES.len())].to_string()]
        } else {
            vec![]
        };
        let result = catch_unwind(AssertUnwindSafe(|| {
            parse_str(&text, "fuzz.toml", Some(&small), "fuzz", &overrides)
        }));
        match result {
            Err(_) => panic!("iteration {i} panicked on input:\n{text}\noverrides: {overrides:?}"),
            Ok(Ok(s)) => {
                ok += 1;
                let c = &s.config;
                assert!(
                    !c.flows.is_empty() && c.flows.len() <= cclab_scenario::MAX_FLOWS,
                    "iteration {i}"
                );
                // The scenario checked every part with the simulator's rules, so the whole
                // configuration passes them.
                if let Err(e) = cclab_sim::validate(c) {
                    panic!("iteration {i}: accepted, but the simulator refuses it: {e}\n{text}");
                }
                assert!(
                    c.flows.iter().all(|f| f.rtt >= c.bottleneck.delay.saturating_mul(2)),
                    "iteration {i}: RTT rule broken"
                );
                assert!(c.changes.iter().all(|ch| ch.flow < c.flows.len()), "iteration {i}");
            }
            Ok(Err(e)) => {
                err += 1;
                check_error(&e, &text);
            }
        }
    }
    eprintln!("{iterations} mutated scenarios: {ok} valid, {err} refused with a message");
    // The mutations must exercise both outcomes, or the test proves little.
    assert!(ok > iterations / 50 && err > iterations / 4, "ok {ok}, err {err}");
}

/// The same for files that may hold a `[sweep]` (the seeds' experiments): a mutated sweep
/// is a plan whose every point the simulator accepts, or one clear error, never a panic.
#[test]
fn mutated_sweeps_never_panic_and_always_explain_themselves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(root.join("seeds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "toml")
                && !p.to_string_lossy().ends_with(".expected.toml")
        })
        .collect();
    files.sort();
    let bases: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(bases.iter().filter(|b| b.contains("[sweep]")).count() >= 5);
    let iterations: u64 = std::env::var("FUZZ_ITERATIONS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(4_000, |n| n / 10);
    let (mut plans, mut singles, mut err) = (0u64, 0u64, 0u64);
    for i in 0..iterations {
        let mut rng = Rng(0xA076_1D64_78BD_642F ^ (i + 1).wrapping_mul(0xE703_7ED1_A0B4_28DB));
        let base = &bases[rng.below(bases.len())];
        let text = mutate(&mut rng, base);
        let dir = root.join("seeds");
        let result = catch_unwind(AssertUnwindSafe(|| {
            parse_str_or_sweep(&text, "fuzz.toml", Some(&dir), "fuzz", &[])
        }));
        match result {
            Err(_) => panic!("iteration {i} panicked on input:\n{text}"),
            Ok(Ok(Loaded::Sweep(plan))) => {
                plans += 1;
                assert!(!plan.runs.is_empty(), "iteration {i}: an empty plan");
                for run in &plan.runs {
                    if let Err(e) = cclab_sim::validate(&run.scenario.config) {
                        panic!("iteration {i}: a point the simulator refuses: {e}\n{text}");
                    }
                }
            }
            Ok(Ok(Loaded::Single(_))) => singles += 1,
            Ok(Err(e)) => {
                err += 1;
                check_error(&e, &text);
            }
        }
    }
    eprintln!(
        "{iterations} mutated sweeps: {plans} plans, {singles} single scenarios, {err} refused"
    );
    assert!(plans > iterations / 20 && err > iterations / 10, "plans {plans}, err {err}");
}
