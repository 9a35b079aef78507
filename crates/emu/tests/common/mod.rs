//! What the emulator's real-time tests share: a run is checked against the scenario's
//! network only when this machine let the emulator keep to time.

use cclab_emu::testbed::EmulatorTiming;

/// How many times a test runs its scenario at most while this machine disturbs the runs.
pub const ATTEMPTS: usize = 3;

/// Calls `attempt` until its run is not disturbed ([`EmulatorTiming::disturbed`]), at most
/// [`ATTEMPTS`] times, and keeps the least disturbed run. Why: a virtual machine's host
/// can take its processors for milliseconds at a time, and the link stalls meanwhile. A CI
/// run of 2026-12-03 whose host took 10 to 14% of them failed the test of a user-space
/// flow beside a kernel flow (its log did not keep which check); with
/// `scripts/take-cpus.py 20 40` beside them, the testbed tests' utilizations were 0.55 to
/// 0.72 against the 0.8 and 0.85 asserted.
pub fn least_disturbed<T>(mut attempt: impl FnMut() -> (T, EmulatorTiming)) -> (T, EmulatorTiming) {
    let mut kept = attempt();
    for _ in 1..ATTEMPTS {
        if !kept.1.disturbed() {
            break;
        }
        let next = attempt();
        if next.1.less_disturbed_than(&kept.1) {
            kept = next;
        }
    }
    kept
}

/// Whether `run` (the kept run of [`least_disturbed`]) is one of the scenario's network,
/// whose rates, utilization and delays a test may check; says loudly which `checks` are
/// skipped when it is not.
pub fn undisturbed(run: &EmulatorTiming, checks: &str) -> bool {
    if run.disturbed() {
        eprintln!(
            "SKIPPED: {checks}: this machine disturbed all {ATTEMPTS} runs (the least: {})",
            run.disturbance()
        );
    }
    !run.disturbed()
}
