//! One run's thread: it owns the [`Simulation`], advances it at the chosen speed, obeys
//! commands from a channel and publishes decimated frames to the run's [`Feed`] (kept for
//! clients that join later) and to its broadcast channel (clients watching now).
//!
//! Speed: real time and its multiples advance simulated time with the wall clock (the
//! thread steps `run_until` in small increments and sleeps between them); "max" steps as
//! fast as the simulation goes. Steps are sized to take about [`STEP_WALL`] of wall time,
//! so commands are obeyed within a few milliseconds whatever the scenario.
//!
//! A live parameter change is applied between two steps, by the simulator's rule
//! ([`LiveClock`]): after every event up to the current time `t`, before any later one,
//! recorded at `t + 1 ns` where a `[[changes]]` entry of a re-run falls in the same place,
//! so the saved scenario replays the run exactly.

use crate::catalog::ShownValue;
use crate::decimate::{Bucket, Decimator, Event};
use crate::runs::Run;
use cclab_scenario::metrics::{
    byte_shares, fairness_goodputs, jain, run_metrics, sent_bytes, FlowSeries, Tee,
};
use cclab_sim::{Direction, LiveClock, Report, SimConfig, SimError, Simulation};
use cclab_units::Time;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, oneshot};

/// Wall time one simulation step aims at.
const STEP_WALL: Duration = Duration::from_millis(5);
/// How often frames go out (20 per second).
const FRAME: Duration = Duration::from_millis(50);
/// Sleep between real-time steps that are ahead of the clock.
const TICK: Duration = Duration::from_millis(10);
/// Back-off events kept per run (the oldest go first); changes are all kept.
const MAX_BACKOFFS: usize = 2000;
/// Live changes accepted per run.
pub const MAX_CHANGES: usize = 10_000;

/// How fast simulated time runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Speed {
    /// This many simulated seconds per wall second (1 = real time).
    Times(f64),
    /// As fast as the simulation goes.
    Max,
}

impl Speed {
    /// "realtime", "1x", "10x", "100x" or "max".
    pub fn parse(s: &str) -> Result<Speed, String> {
        match s {
            "realtime" | "1x" => Ok(Speed::Times(1.0)),
            "10x" => Ok(Speed::Times(10.0)),
            "100x" => Ok(Speed::Times(100.0)),
            "max" => Ok(Speed::Max),
            _ => Err(format!("\"{s}\": allowed: realtime (or 1x), 10x, 100x, max")),
        }
    }

    pub fn label(&self) -> String {
        match self {
            Speed::Times(f) if *f == 1.0 => "realtime".to_string(),
            Speed::Times(f) => format!("{f}x"),
            Speed::Max => "max".to_string(),
        }
    }
}

/// Each flow's algorithm, in flow order.
pub fn flow_algorithms(cfg: &SimConfig) -> Vec<String> {
    cfg.flows.iter().map(|f| f.cc.clone()).collect()
}

/// A live parameter change as recorded for the saved scenario.
#[derive(Clone, Debug, Serialize)]
pub struct LiveChange {
    /// When it applies in a re-run (nanoseconds).
    pub at_ns: u64,
    pub flow: usize,
    pub name: String,
    pub value: ShownValue,
}

/// A change made, and how its flow had ended already, if it had (the change then has
/// nothing left to act on).
pub type Applied = (LiveChange, Option<&'static str>);

/// What the web side asks of a run.
pub enum Command {
    Pause,
    Resume,
    Speed(Speed),
    Stop,
    SetParam {
        flow: usize,
        name: String,
        value: f64,
        reply: oneshot::Sender<Result<Applied, SimError>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Running,
    Paused,
    Finished,
    Stopped,
}

impl State {
    pub fn active(self) -> bool {
        matches!(self, State::Running | State::Paused)
    }
}

/// What a run has published: everything a client joining now needs.
pub struct Feed {
    pub state: State,
    /// Why a run was stopped.
    pub reason: Option<String>,
    pub now: Time,
    pub speed: Speed,
    pub buckets: Vec<Bucket>,
    pub tip: Option<Bucket>,
    pub events: Vec<Event>,
    pub changes: Vec<LiveChange>,
    /// The live table (goodput, share, Jain) as of `now`.
    pub table: Value,
    /// summary.json of the finished run (the bytes `cclab run` writes).
    pub summary: Option<String>,
    /// Sequence number of the last frame sent.
    pub seq: u64,
    pub tx: broadcast::Sender<Arc<str>>,
}

impl Feed {
    pub fn new(speed: Speed) -> Feed {
        Feed {
            state: State::Running,
            reason: None,
            now: Time::ZERO,
            speed,
            buckets: Vec::new(),
            tip: None,
            events: Vec::new(),
            changes: Vec::new(),
            table: Value::Null,
            summary: None,
            seq: 0,
            tx: broadcast::channel(64).0,
        }
    }

    /// Keeps new buckets and events, dropping the oldest back-offs past the limit.
    fn absorb(&mut self, buckets: &[Bucket], events: &[Event]) {
        self.buckets.extend_from_slice(buckets);
        self.events.extend_from_slice(events);
        let backoffs = self.events.iter().filter(|e| matches!(e, Event::Backoff { .. })).count();
        if backoffs > MAX_BACKOFFS {
            let mut drop = backoffs - MAX_BACKOFFS;
            self.events.retain(|e| {
                let old = drop > 0 && matches!(e, Event::Backoff { .. });
                drop -= old as usize;
                !old
            });
        }
    }
}

/// The live table: per-flow goodput so far, share of all delivered bytes, and Jain's index.
pub fn live_table(cfg: &SimConfig, report: &Report) -> Value {
    let shares = byte_shares(report);
    let flows: Vec<Value> = report
        .flows
        .iter()
        .zip(&shares)
        .map(|(f, share)| {
            json!({
                "id": f.flow,
                "goodput_bps": f.goodput_bps,
                "delivered_bytes": f.delivered_bytes,
                "retransmits": f.retransmits,
                "timeouts": f.timeouts,
                "rtt_p50_ms": f.rtt.p50_ms,
                "rtt_p99_ms": f.rtt.p99_ms,
                "share": share,
            })
        })
        .collect();
    json!({
        "now_s": report.duration.as_secs_f64(),
        "flows": flows,
        "jain": jain(&fairness_goodputs(cfg, report)),
        "utilization": report.link.utilization,
        "drops": report.link.queue_drops + report.link.random_losses,
        "cross": live_cross(cfg, report),
    })
}

/// The cross traffic so far, per direction it crosses (null in a run without any): its
/// sources' number and their load on the link so far, as the terminal's lines give it.
fn live_cross(cfg: &SimConfig, report: &Report) -> Value {
    if report.cross.is_empty() {
        return Value::Null;
    }
    let per_direction = [Direction::Forward, Direction::Reverse].into_iter().filter_map(|dir| {
        let sources = report.cross.iter().filter(|c| cfg.cross[c.source].direction == dir).count();
        let (offered, delivered) = report.cross_load_bps(&cfg.cross, dir);
        (sources > 0).then(|| {
            json!({
                "direction": dir.name(),
                "sources": sources,
                "offered_bps": offered,
                "throughput_bps": delivered,
            })
        })
    });
    Value::Array(per_direction.collect())
}

/// Maps simulated time to wall time for real-time speeds.
struct Clock {
    wall: Instant,
    sim_ns: u64,
}

impl Clock {
    fn at(sim_ns: u64) -> Clock {
        Clock { wall: Instant::now(), sim_ns }
    }
    fn target(&self, factor: f64) -> u64 {
        self.sim_ns + (self.wall.elapsed().as_secs_f64() * factor * 1e9) as u64
    }
}

/// Why the loop ended.
enum End {
    Finished,
    Stopped(String),
}

/// The run thread.
pub struct Runner {
    run: Arc<Run>,
    sim: Simulation,
    rx: Receiver<Command>,
    dec: Decimator,
    /// What the summary's metrics need beyond the report (mean cwnd, loss synchrony, ...).
    series: FlowSeries,
    clock: Clock,
    /// Simulated nanoseconds per step, adapted to take about STEP_WALL.
    step_ns: u64,
    end_ns: u64,
    /// Where a live change lands (see the module doc).
    live_clock: LiveClock,
    last_frame: Instant,
    paused: bool,
    speed: Speed,
}

impl Runner {
    pub fn new(run: Arc<Run>, mut sim: Simulation, rx: Receiver<Command>, speed: Speed) -> Runner {
        let cfg = &run.checked.scenario.config;
        let mut dec = Decimator::new(flow_algorithms(cfg), run.columns.clone(), run.bucket_ns);
        // "Now" means every event up to now has run; at the start that includes time 0,
        // so a change made before the first step lands after the flows starting at 0.
        let mut series = FlowSeries::new(cfg, &run.checked.scenario.metrics);
        sim.run_until(Time::ZERO, &mut Tee(&mut dec, &mut series));
        let live_clock = LiveClock::new(cfg);
        Runner {
            step_ns: cfg.sample_interval.as_nanos().max(1),
            end_ns: cfg.duration.as_nanos(),
            sim,
            rx,
            dec,
            series,
            clock: Clock::at(0),
            live_clock,
            last_frame: Instant::now(),
            paused: false,
            speed,
            run,
        }
    }

    /// Runs to the end, a stop, or abandonment; then publishes the outcome.
    pub fn run(mut self) {
        let end = self.drive();
        self.dec.flush();
        match end {
            End::Finished => self.finish(),
            End::Stopped(reason) => {
                // Stopped first, as `finish` publishes Finished before saving: a save
                // asked for after this sees the state and is refused.
                self.publish(Some((State::Stopped, Some(reason.clone()))));
                self.run.give_up_save(&reason);
            }
        }
    }

    fn drive(&mut self) -> End {
        loop {
            if let Some(end) = self.obey_pending() {
                return end;
            }
            if let Some(idle) = self.run.abandoned() {
                return End::Stopped(format!("no client watched it for {} s", idle.as_secs()));
            }
            if self.paused {
                if let Some(end) = self.wait(Duration::from_millis(100)) {
                    return end;
                }
                continue;
            }
            let now = self.sim.now().as_nanos();
            let target = match self.speed {
                Speed::Max => now + self.step_ns,
                // Less than a tick of simulated time behind the clock: sleep a tick. Steps
                // of the few microseconds the clock moves between two of them kept a core
                // busy at any speed.
                Speed::Times(f)
                    if self.clock.target(f) < now + (f * TICK.as_nanos() as f64) as u64 =>
                {
                    if let Some(end) = self.wait(TICK) {
                        return end;
                    }
                    continue;
                }
                Speed::Times(f) => self.real_time_target(f, now),
            };
            let started = Instant::now();
            let done = self.sim.run_until(Time(target), &mut Tee(&mut self.dec, &mut self.series));
            self.adapt_step(started.elapsed());
            if done {
                return End::Finished;
            }
            if self.last_frame.elapsed() >= FRAME {
                self.publish(None);
            }
        }
    }

    /// Where real time says the simulation should be, at most one step ahead of `now`; a
    /// simulation that cannot keep up is re-anchored rather than chased.
    fn real_time_target(&mut self, factor: f64, now: u64) -> u64 {
        let target = self.clock.target(factor);
        let behind_limit = (factor * 1e9) as u64; // a wall second's worth
        if target > now + behind_limit {
            self.clock = Clock::at(now);
        }
        target.min(now + self.step_ns)
    }

    fn adapt_step(&mut self, took: Duration) {
        let ratio = STEP_WALL.as_secs_f64() / took.as_secs_f64().max(1e-6);
        let next = (self.step_ns as f64 * ratio.clamp(0.5, 2.0)) as u64;
        self.step_ns = next.clamp(100_000, self.end_ns.max(100_000));
    }

    /// Obeys every command waiting; Some when the run must end.
    fn obey_pending(&mut self) -> Option<End> {
        loop {
            match self.rx.try_recv() {
                Ok(cmd) => {
                    if let Some(end) = self.obey(cmd) {
                        return Some(end);
                    }
                }
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    return Some(End::Stopped("the server dropped the run".to_string()))
                }
            }
        }
    }

    /// Sleeps up to `d`, waking for a command.
    fn wait(&mut self, d: Duration) -> Option<End> {
        match self.rx.recv_timeout(d) {
            Ok(cmd) => self.obey(cmd),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                Some(End::Stopped("the server dropped the run".to_string()))
            }
        }
    }

    fn obey(&mut self, cmd: Command) -> Option<End> {
        match cmd {
            Command::Stop => return Some(End::Stopped("stopped by a client".to_string())),
            Command::Pause => self.paused = true,
            Command::Resume => self.paused = false,
            Command::Speed(s) => self.speed = s,
            Command::SetParam { flow, name, value, reply } => {
                let _ = reply.send(self.set_param(flow, &name, value));
            }
        }
        self.clock = Clock::at(self.sim.now().as_nanos());
        self.publish(None);
        None
    }

    /// Applies a live change between two steps and records it (see the module doc).
    fn set_param(&mut self, flow: usize, name: &str, value: f64) -> Result<Applied, SimError> {
        room_for_a_change(&self.run)?;
        let obs = &mut Tee(&mut self.dec, &mut self.series);
        let at_ns = self.live_clock.apply(&mut self.sim, obs, flow, name, value)?;
        let cc = &self.run.checked.scenario.config.flows[flow].cc;
        let value = ShownValue::of(cc, name, value);
        let change = LiveChange { at_ns, flow, name: name.to_string(), value };
        self.dec.live_change(Time(at_ns - 1), flow, name, value);
        self.run.feed.lock().unwrap().changes.push(change.clone());
        Ok((change, self.sim.flow_ended(flow)))
    }

    fn finish(&mut self) {
        let report = self.sim.report();
        let scn = &self.run.checked.scenario;
        let sent = sent_bytes(&self.sim);
        let metrics = run_metrics(&scn.config, &scn.metrics, &report, &self.series, Some(&sent));
        let summary = self.run.results.summary_json(scn, &report, &metrics);
        self.run.feed.lock().unwrap().summary = Some(summary);
        // The run's slot stays held until the thread is done, through a save asked for
        // now or as Finished is published (taken before, so it is never unheld).
        let _slot = self.run.keep_slot();
        self.publish(Some((State::Finished, None)));
        // Commands sent as the run finished are answered now ("ended before the change
        // applied"), not after the save.
        let (_, closed) = std::sync::mpsc::channel();
        drop(std::mem::replace(&mut self.rx, closed));
        self.run.save_if_asked();
    }

    /// Sends a frame (see [`publish`]); `outcome` ends the run.
    fn publish(&mut self, outcome: Option<(State, Option<String>)>) {
        self.last_frame = Instant::now();
        let table = live_table(&self.run.checked.scenario.config, &self.sim.report());
        let state = if self.paused { State::Paused } else { State::Running };
        let (state, reason) = outcome.unwrap_or((state, None));
        let frame = Frame { now: self.sim.now(), speed: self.speed, table, state, reason };
        publish(&self.run, &mut self.dec, frame);
    }
}

/// Refuses a live change beyond [`MAX_CHANGES`] (simulated and testbed runs alike).
pub fn room_for_a_change(run: &Run) -> Result<(), SimError> {
    if run.feed.lock().unwrap().changes.len() >= MAX_CHANGES {
        return Err(SimError::new(
            "changes",
            MAX_CHANGES.to_string(),
            format!("a run takes at most {MAX_CHANGES} live changes"),
        ));
    }
    Ok(())
}

/// What a frame says besides the new buckets and events.
pub struct Frame {
    pub now: Time,
    pub speed: Speed,
    pub table: Value,
    pub state: State,
    pub reason: Option<String>,
}

/// Sends a frame: the buckets and events since the last one, the tip, the table and the
/// state; keeps them in the run's feed for clients that join later.
pub fn publish(run: &Run, dec: &mut Decimator, f: Frame) {
    let (buckets, events) = dec.take();
    let mut feed = run.feed.lock().unwrap();
    feed.absorb(&buckets, &events);
    feed.now = f.now;
    feed.speed = f.speed;
    feed.tip = dec.tip().cloned();
    if !f.table.is_null() {
        feed.table = f.table;
    }
    feed.state = f.state;
    feed.reason = f.reason;
    feed.seq += 1;
    let frame = json!({
        "type": "frame",
        "seq": feed.seq,
        "state": feed.state,
        "reason": feed.reason,
        "now_s": feed.now.as_secs_f64(),
        "speed": feed.speed.label(),
        "buckets": buckets,
        "tip": feed.tip,
        "events": events,
        "table": feed.table,
        "summary": feed.summary.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()),
    });
    let _ = feed.tx.send(Arc::from(frame.to_string()));
}
