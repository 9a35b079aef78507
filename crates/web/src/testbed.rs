//! A testbed run from the page: the scenario on real TCP through the emulator
//! (`cclab_emu::testbed`, as `cclab testbed run` does), its flows sampled from `TCP_INFO`
//! every sample interval and streamed through the same decimation, feed and WebSocket as
//! a simulated run, so the page charts it the same way.
//!
//! The testbed runs in real time to its end: it cannot be paused, sped up or stopped
//! (the emulator has no stop hook yet), so its runs are kept short ([`MAX_DURATION`]),
//! and one goes at a time. Its namespaces and TUN devices belong to the emulator's
//! harness, which removes them when the run ends. Parameters of a running kernel
//! algorithm are changed through the kernel panel (`cclab kernel set` rewrites the loaded
//! BPF algorithm's tunables for every flow using it).

use crate::decimate::Decimator;
use crate::live::{live_table, publish, Frame, Speed, State};
use crate::runs::Run;
use cclab_sim::{FlowSample, Observer, QueueSample};
use cclab_units::{Duration, Time};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// Longest testbed run started from the page.
pub const MAX_DURATION: Duration = Duration::from_secs(60);
/// Most flows in a testbed run started from the page.
pub const MAX_FLOWS: usize = 10;

/// What keeps the testbed from running here (empty when nothing does).
pub fn missing() -> Vec<String> {
    match cclab_emu::netns::preflight() {
        Ok(()) => vec![],
        Err(e) => vec![format!("testbed runs: {e}")],
    }
}

/// Folds the testbed's samples into buckets and publishes a frame every 50 ms.
struct Publisher<'a> {
    run: &'a Run,
    dec: Decimator,
    now: Time,
    last: Instant,
}

impl Publisher<'_> {
    fn frame(&mut self, state: State, reason: Option<String>, table: Value) {
        self.last = Instant::now();
        let frame = Frame { now: self.now, speed: Speed::Times(1.0), table, state, reason };
        publish(self.run, &mut self.dec, frame);
    }
}

impl Observer for Publisher<'_> {
    fn flow_sample(&mut self, s: &FlowSample) {
        self.now = self.now.max(s.time);
        self.dec.flow_sample(s);
    }
    fn queue_sample(&mut self, s: &QueueSample) {
        self.now = self.now.max(s.time);
        self.dec.queue_sample(s);
        if self.last.elapsed() >= std::time::Duration::from_millis(50) {
            self.frame(State::Running, None, Value::Null);
        }
    }
}

/// The testbed run's thread: runs the scenario and publishes as it goes.
pub fn run(run: Arc<Run>) {
    let scn = &run.checked.scenario;
    let dec = Decimator::new(scn.config.flows.len(), run.columns.clone(), run.bucket_ns);
    let mut p = Publisher { run: &run, dec, now: Time::ZERO, last: Instant::now() };
    let outcome = cclab_emu::testbed::run_with(&scn.config, &scn.transports, &mut p, &mut |_| {});
    p.dec.flush();
    match outcome {
        Ok(report) => {
            let summary = run.results.summary_json(scn, &report);
            run.feed.lock().unwrap().summary = Some(summary);
            p.frame(State::Finished, None, live_table(&report));
        }
        Err(e) => p.frame(State::Stopped, Some(format!("the testbed failed: {e}")), Value::Null),
    }
}
