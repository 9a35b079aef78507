//! A testbed run from the page: the scenario on real TCP through the emulator
//! (`cclab_emu::testbed`, as `cclab testbed run` does), its flows sampled from `TCP_INFO`
//! every sample interval and streamed through the same decimation, feed and WebSocket as
//! a simulated run, so the page charts it the same way.
//!
//! The testbed runs in real time: it cannot be paused or sped up, but it can be stopped
//! (from the page, or when no client watches it), and retuned while it runs: the flow's
//! `rto_min` and `initcwnd` on its route, and the parameters of cclab's BPF algorithms in
//! their tunables map (shared by every flow of that algorithm, as in `cclab kernel set`;
//! the run puts the earlier values back when it ends). Changes are marked on the charts.
//! Runs are kept short ([`MAX_DURATION`]) and one goes at a time. Its namespaces, TUN
//! devices and routes belong to the emulator's harness, which removes them when the run
//! ends, however it ends.

use crate::catalog::ShownValue;
use crate::decimate::Decimator;
use crate::live::{flow_algorithms, live_table, publish, Command, Frame, LiveChange, Speed, State};
use crate::runs::Run;
use cclab_emu::testbed::Steering;
use cclab_scenario::metrics::{run_metrics, FlowSeries, Tee};
use cclab_sim::{FlowSample, Observer, QueueSample, SimError};
use cclab_units::{Duration, Time};
use serde_json::Value;
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::mpsc::Receiver;
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
    /// Live changes applied since the last sample, to be marked on the charts.
    marks: &'a RefCell<Vec<LiveChange>>,
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
        for c in self.marks.borrow_mut().drain(..) {
            self.dec.live_change(Time(c.at_ns), c.flow, &c.name, c.value);
        }
        if self.last.elapsed() >= std::time::Duration::from_millis(50) {
            self.frame(State::Running, None, Value::Null);
        }
    }
}

/// Applies the commands a client sent since the last sample; `Break` (with the reason)
/// ends the run.
fn obey(
    run: &Run,
    rx: &Receiver<Command>,
    now: Time,
    steering: &mut Steering<'_>,
    marks: &RefCell<Vec<LiveChange>>,
) -> ControlFlow<String> {
    if let Some(idle) = run.abandoned() {
        return ControlFlow::Break(format!("no client watched it for {} s", idle.as_secs()));
    }
    while let Ok(cmd) = rx.try_recv() {
        match cmd {
            Command::Stop => return ControlFlow::Break("stopped by a client".into()),
            Command::SetParam { flow, name, value, reply } => {
                let answer = crate::live::room_for_a_change(run)
                    .and_then(|()| {
                        steering.set_param(flow, &name, value).map_err(|e| {
                            SimError::new(
                                format!("flows[{flow}].{name}"),
                                value.to_string(),
                                e.to_string(),
                            )
                        })
                    })
                    .map(|()| {
                        let cc = &run.checked.scenario.config.flows[flow].cc;
                        let value = ShownValue::of(cc, &name, value);
                        let change = LiveChange { at_ns: now.as_nanos(), flow, name, value };
                        run.feed.lock().unwrap().changes.push(change.clone());
                        marks.borrow_mut().push(change.clone());
                        (change, None) // whether a real flow has ended is not known here
                    });
                let _ = reply.send(answer);
            }
            // Refused by `Run::send` before they get here: real time cannot be paused.
            Command::Pause | Command::Resume | Command::Speed(_) => {}
        }
    }
    ControlFlow::Continue(())
}

/// The testbed run's thread: runs the scenario and publishes as it goes, obeying the
/// run's commands at every sample.
pub fn run(run: Arc<Run>, rx: Receiver<Command>) {
    let scn = &run.checked.scenario;
    let dec = Decimator::new(flow_algorithms(&scn.config), run.columns.clone(), run.bucket_ns);
    let marks = RefCell::new(Vec::new());
    let mut p = Publisher { run: &run, dec, now: Time::ZERO, last: Instant::now(), marks: &marks };
    let mut series = FlowSeries::new(&scn.config, &scn.metrics);
    let mut stopped = None;
    let outcome = {
        let mut steer =
            |t: Time, steering: &mut Steering<'_>| match obey(&run, &rx, t, steering, &marks) {
                ControlFlow::Break(why) => {
                    stopped = Some(why);
                    ControlFlow::Break(())
                }
                ControlFlow::Continue(()) => ControlFlow::Continue(()),
            };
        let mut both = Tee(&mut p, &mut series);
        cclab_emu::testbed::run_steered(&scn.config, &scn.transports, &mut both, &mut steer)
            .map(|(report, _)| report)
    };
    p.dec.flush();
    match (outcome, stopped) {
        (Ok(report), None) => {
            let metrics = run_metrics(&scn.config, &scn.metrics, &report, &series, None);
            let summary = run.results.summary_json(scn, &report, &metrics);
            run.feed.lock().unwrap().summary = Some(summary);
            p.frame(State::Finished, None, live_table(&scn.config, &report));
        }
        (Ok(report), Some(why)) => {
            p.frame(State::Stopped, Some(why), live_table(&scn.config, &report))
        }
        (Err(e), _) => {
            p.frame(State::Stopped, Some(format!("the testbed failed: {e}")), Value::Null)
        }
    }
}
