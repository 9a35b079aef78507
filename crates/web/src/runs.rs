//! The runs a server holds: each [`Run`] is the checked scenario, the channel to its
//! thread and what the thread published ([`Feed`]). [`Runs`] creates them within the
//! limits, finds them by id, and forgets finished ones nobody asks about.

use crate::error::{ApiError, ApiResult};
use crate::intake::{self, Checked};
use crate::limits::{too_big, Limits};
use crate::live::{Command, Feed, Runner, Speed, State};
use crate::store::Store;
use crate::ResultFiles;
use axum::http::StatusCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Whether a run is to be saved, and how that went.
#[derive(Clone, Debug)]
pub enum SaveState {
    None,
    /// Saved under this name when the run finishes.
    Pending(String),
    Saved(Value),
    /// Why, and the status a request that asked for the save is answered with.
    Failed(StatusCode, String),
}

pub struct Run {
    pub id: u64,
    /// The server process's random id ([`Runs::instance`]), sent with the run's status
    /// and hello.
    pub instance: Arc<str>,
    /// Real TCP through the emulator ([`crate::testbed`]) rather than the simulator.
    pub testbed: bool,
    pub checked: Checked,
    /// The algorithms' variables reported per flow (`cc_*` columns of flows.csv).
    pub columns: Vec<&'static str>,
    pub bucket_ns: u64,
    pub results: Arc<dyn ResultFiles>,
    pub store: Arc<Store>,
    cmd: Mutex<Sender<Command>>,
    pub feed: Mutex<Feed>,
    /// WebSocket clients watching.
    pub clients: AtomicUsize,
    /// Last time a client asked about the run or left it.
    interest: Mutex<Instant>,
    pub save: Mutex<SaveState>,
    /// Held while the run is being saved: the run's thread (when it finishes) and a
    /// client's `save` (when it already had) may both ask at once, and only one may write.
    saving: Mutex<()>,
    /// [`ReplaySlot`]s held: a save replays the whole run in the simulator, so a finished
    /// run being saved counts among the runs going (`--max-runs`) until it is done.
    replaying: AtomicUsize,
    idle_stop: Duration,
}

impl Run {
    /// Someone asked about the run: it is not abandoned.
    pub fn touch(&self) {
        *self.interest.lock().unwrap() = Instant::now();
    }

    fn idle(&self) -> Duration {
        self.interest.lock().unwrap().elapsed()
    }

    /// How long nobody has watched the run, if that is past the limit and the run is not
    /// to be saved (a run to be saved is left to finish, unless it is paused: then it
    /// would never finish, and would hold one of the run slots for good).
    pub fn abandoned(&self) -> Option<Duration> {
        let pending = matches!(*self.save.lock().unwrap(), SaveState::Pending(_));
        let finishing = pending && self.state() != State::Paused;
        let idle = self.idle();
        (self.clients.load(Ordering::SeqCst) == 0 && !finishing && idle > self.idle_stop)
            .then_some(idle)
    }

    pub fn state(&self) -> State {
        self.feed.lock().unwrap().state
    }

    /// Whether the run holds one of the `--max-runs` slots: going, or being saved. (The
    /// state is read first: the run's thread takes its replay slot before it publishes
    /// Finished, so no reader sees the run in neither.)
    fn busy(&self) -> bool {
        self.state().active() || self.replaying.load(Ordering::SeqCst) > 0
    }

    /// The run's thread keeps its slot for a save it may replay as it finishes: called
    /// while the run is still going, so the slot was counted already.
    pub fn keep_slot(self: &Arc<Self>) -> ReplaySlot {
        ReplaySlot::hold(self)
    }

    /// Sends a command to the run's thread.
    pub fn send(&self, cmd: Command) -> ApiResult<()> {
        if self.testbed && matches!(cmd, Command::Pause | Command::Resume | Command::Speed(_)) {
            return Err(ApiError::conflict(format!("run {} is a testbed run: real TCP goes in real time, so it cannot be paused or sped up (it can be stopped and retuned)", self.id)));
        }
        let state = self.state();
        if !state.active() {
            return Err(ApiError::conflict(format!(
                "run {} is {}; it takes no more commands",
                self.id,
                json!(state).as_str().unwrap_or("over")
            )));
        }
        self.cmd
            .lock()
            .unwrap()
            .send(cmd)
            .map_err(|_| ApiError::conflict(format!("run {} has ended", self.id)))
    }

    /// Saves the run if a client asked. Called by the run's thread when the run finishes
    /// and by `save` for a finished run; whoever comes second finds it saved and returns.
    pub fn save_if_asked(&self) {
        let _one_at_a_time = self.saving.lock().unwrap();
        let name = match &*self.save.lock().unwrap() {
            SaveState::Pending(n) => n.clone(),
            _ => return,
        };
        let outcome = match self.store.save(self, &name) {
            Ok(v) => SaveState::Saved(v),
            Err(e) => SaveState::Failed(e.status, e.message().to_string()),
        };
        self.store.release(&name);
        *self.save.lock().unwrap() = outcome;
        self.publish_save();
    }

    /// A run stopped before its end cannot be saved: a save asked for fails, and its
    /// name is free again. Called by the run's thread when the run stops.
    pub fn give_up_save(&self, why: &str) {
        let _one_at_a_time = self.saving.lock().unwrap();
        let mut save = self.save.lock().unwrap();
        let SaveState::Pending(name) = &*save else { return };
        self.store.release(name);
        *save = SaveState::Failed(StatusCode::CONFLICT, format!("not saved as \"{name}\": the run stopped before its end ({why}); only a whole run can be saved"));
        drop(save);
        self.publish_save();
    }

    /// Tells the run's clients how its save went. (The save is read before the feed is
    /// locked: `save` is always locked first, as the save request does.)
    pub fn publish_save(&self) {
        let msg = Arc::from(json!({ "type": "save", "save": self.save_json() }).to_string());
        let _ = self.feed.lock().unwrap().tx.send(msg);
    }

    pub fn save_json(&self) -> Value {
        match &*self.save.lock().unwrap() {
            SaveState::None => Value::Null,
            SaveState::Pending(n) => json!({ "state": "pending", "name": n }),
            SaveState::Saved(v) => json!({ "state": "saved", "saved": v }),
            SaveState::Failed(_, e) => json!({ "state": "failed", "error": e }),
        }
    }

    /// The run's flows as the page lists them.
    fn flows_json(&self) -> Vec<Value> {
        let cfg = &self.checked.scenario.config;
        cfg.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let params: serde_json::Map<String, Value> =
                    f.params.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
                json!({
                    "id": i,
                    "name": f.name,
                    "cc": f.cc,
                    "params": params,
                    "rtt_ms": f.rtt.as_millis_f64(),
                    "start_s": f.start.as_secs_f64(),
                    "rto_min_ms": f.tcp.rto_min.as_millis_f64(),
                    "initcwnd": f.tcp.init_cwnd,
                })
            })
            .collect()
    }

    /// The run as `GET /api/runs` lists it.
    pub fn list_json(&self) -> Value {
        let feed = self.feed.lock().unwrap();
        json!({
            "id": self.id,
            "testbed": self.testbed,
            "name": self.checked.scenario.name,
            "state": feed.state,
            "now_s": feed.now.as_secs_f64(),
            "duration_s": self.checked.scenario.config.duration.as_secs_f64(),
            "speed": feed.speed.label(),
            "clients": self.clients.load(Ordering::SeqCst),
        })
    }

    /// `GET /api/runs/{id}`.
    pub fn status_json(&self) -> Value {
        let save = self.save_json(); // before the feed: see `publish_save`
        let feed = self.feed.lock().unwrap();
        let scn = &self.checked.scenario;
        json!({
            "id": self.id,
            "instance": &*self.instance,
            "testbed": self.testbed,
            "name": scn.name,
            "file": self.checked.file,
            "state": feed.state,
            "reason": feed.reason,
            "now_s": feed.now.as_secs_f64(),
            "duration_s": scn.config.duration.as_secs_f64(),
            "speed": feed.speed.label(),
            "flows": self.flows_json(),
            "changes": feed.changes,
            "table": feed.table,
            "summary": feed.summary.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()),
            "save": save,
            "clients": self.clients.load(Ordering::SeqCst),
        })
    }

    /// The first WebSocket message: the run and everything published so far.
    pub fn hello(&self, feed: &Feed) -> String {
        let cfg = &self.checked.scenario.config;
        json!({
            "type": "hello",
            "seq": feed.seq,
            "id": self.id,
            "instance": &*self.instance,
            "name": self.checked.scenario.name,
            "state": feed.state,
            "reason": feed.reason,
            "now_s": feed.now.as_secs_f64(),
            "duration_s": cfg.duration.as_secs_f64(),
            "speed": feed.speed.label(),
            "bucket_s": self.bucket_ns as f64 / 1e9,
            "sample_s": cfg.sample_interval.as_secs_f64(),
            "columns": self.columns,
            "flows": self.flows_json(),
            "buckets": feed.buckets,
            "tip": feed.tip,
            "events": feed.events,
            "table": feed.table,
            "summary": feed.summary.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()),
        })
        .to_string()
    }
}

/// The refusal of a run beyond the limit, naming the runs going and how to stop one
/// (a run whose page was closed goes on until nobody has watched it for a while).
/// `going` carries each run as `GET /api/runs` lists it, so the page can offer them
/// without asking again.
fn too_many(going: &[&Run], most: usize) -> ApiError {
    // A finished run holds its slot while its save replays it.
    let ids: Vec<String> = going
        .iter()
        .map(|r| match r.state().active() {
            true => r.id.to_string(),
            false => format!("{} (being saved)", r.id),
        })
        .collect();
    let (what, list) = match going {
        [_] => ("1 run is going".to_string(), format!("run {}", ids[0])),
        _ => (format!("{} runs are going", going.len()), format!("runs {}", ids.join(", "))),
    };
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!("{what} (at most {most} at once): {list}; stop one (POST /api/runs/ID/control {{\"action\": \"stop\"}}) or wait for one to finish"),
    )
    .with("going", Value::Array(going.iter().map(|r| r.list_json()).collect()))
}

/// One `--max-runs` slot held by a save's replay; given back when dropped.
pub struct ReplaySlot(Arc<Run>);

impl ReplaySlot {
    fn hold(run: &Arc<Run>) -> ReplaySlot {
        run.replaying.fetch_add(1, Ordering::SeqCst);
        ReplaySlot(run.clone())
    }
}

impl Drop for ReplaySlot {
    fn drop(&mut self) {
        self.0.replaying.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Every run the server holds.
pub struct Runs {
    map: Mutex<BTreeMap<u64, Arc<Run>>>,
    next: AtomicU64,
    /// This server process's random id. Run ids start at 1 in every process, so a page
    /// that remembers "run 3" across a reload (or a lost connection) checks it is this
    /// server's run 3, not a run a restarted server gave someone else.
    pub instance: Arc<str>,
    pub limits: Limits,
    pub results: Arc<dyn ResultFiles>,
    pub store: Arc<Store>,
}

impl Runs {
    pub fn new(limits: Limits, results: Arc<dyn ResultFiles>, store: Arc<Store>) -> Runs {
        Runs {
            map: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(1),
            instance: crate::server::new_token().into(),
            limits,
            results,
            store,
        }
    }

    /// Starts a simulated run of a checked scenario on its own thread.
    pub fn create(&self, checked: Checked, speed: Speed) -> ApiResult<Arc<Run>> {
        let sim = intake::simulation(&checked)?;
        self.insert(checked, speed, false, move |run, rx| Runner::new(run, sim, rx, speed).run())
    }

    /// Starts a testbed run (real TCP through the emulator) of a checked scenario.
    pub fn create_testbed(&self, checked: Checked) -> ApiResult<Arc<Run>> {
        let missing = crate::testbed::missing();
        if !missing.is_empty() {
            return Err(ApiError::conflict(missing.join("; ")));
        }
        let cfg = &checked.scenario.config;
        let (limit, most) = (crate::testbed::MAX_DURATION, crate::testbed::MAX_FLOWS);
        let file = &checked.file;
        if cfg.duration > limit {
            let why = format!("a testbed run from the page lasts at most {limit} (cclab testbed run takes longer ones)");
            return Err(too_big(file, "duration", cfg.duration.to_string(), why));
        }
        if cfg.flows.len() > most {
            let flows = format!("{} flows", cfg.flows.len());
            let why = format!("a testbed run from the page has at most {most} flows (cclab testbed run takes more)");
            return Err(too_big(file, "flows", flows, why));
        }
        self.insert(checked, Speed::Times(1.0), true, crate::testbed::run)
    }

    /// Makes room, registers the run and starts its thread with `body`.
    fn insert(
        &self,
        checked: Checked,
        speed: Speed,
        testbed: bool,
        body: impl FnOnce(Arc<Run>, std::sync::mpsc::Receiver<Command>) + Send + 'static,
    ) -> ApiResult<Arc<Run>> {
        self.evict();
        let mut map = self.map.lock().unwrap();
        // Checked under the same lock as it is registered: two requests at once cannot
        // both find no testbed run going.
        if testbed && map.values().any(|r| r.testbed && r.state().active()) {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "a testbed run is going; one runs at a time",
            ));
        }
        self.check_room(&map, None)?;
        while map.len() >= self.limits.max_kept_runs {
            let oldest = map.iter().find(|(_, r)| !r.busy()).map(|(id, _)| *id);
            match oldest {
                Some(id) => map.remove(&id),
                None => break,
            };
        }
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let cfg = &checked.scenario.config;
        let bucket_ns =
            crate::decimate::bucket_width(cfg.duration.as_nanos(), cfg.sample_interval.as_nanos());
        let (tx, rx) = std::sync::mpsc::channel();
        let run = Arc::new(Run {
            id,
            instance: self.instance.clone(),
            testbed,
            columns: self.results.cc_columns(&checked.scenario),
            checked,
            bucket_ns,
            results: self.results.clone(),
            store: self.store.clone(),
            cmd: Mutex::new(tx),
            feed: Mutex::new(Feed::new(speed)),
            clients: AtomicUsize::new(0),
            interest: Mutex::new(Instant::now()),
            save: Mutex::new(SaveState::None),
            saving: Mutex::new(()),
            replaying: AtomicUsize::new(0),
            idle_stop: self.limits.idle_stop,
        });
        let thread_run = run.clone();
        std::thread::Builder::new()
            .name(format!("cclab-run-{id}"))
            .spawn(move || body(thread_run, rx))
            .map_err(|e| ApiError::internal(format!("cannot start a thread for the run: {e}")))?;
        map.insert(id, run.clone());
        Ok(run)
    }

    /// Refuses when every `--max-runs` slot is held, unless `run` holds one already.
    fn check_room(&self, map: &BTreeMap<u64, Arc<Run>>, run: Option<&Run>) -> ApiResult<()> {
        if run.is_some_and(|r| r.busy()) {
            return Ok(());
        }
        let going: Vec<&Run> = map.values().filter(|r| r.busy()).map(|r| &**r).collect();
        if going.len() >= self.limits.max_active_runs {
            return Err(too_many(&going, self.limits.max_active_runs));
        }
        Ok(())
    }

    /// A slot for saving a finished run, whose save replays it: refused, as a new run
    /// would be, when every slot is held (checked and taken under the map's lock, as a
    /// new run's is).
    pub fn slot_for_save(&self, run: &Arc<Run>) -> ApiResult<ReplaySlot> {
        let map = self.map.lock().unwrap();
        self.check_room(&map, Some(run))?;
        Ok(ReplaySlot::hold(run))
    }

    /// The run with this id (a request about it counts as interest).
    pub fn get(&self, id: &str) -> ApiResult<Arc<Run>> {
        let parsed: Option<u64> = id.parse().ok();
        let run = parsed.and_then(|n| self.map.lock().unwrap().get(&n).cloned());
        let run = run.ok_or_else(|| {
            ApiError::not_found(format!(
                "no run {id}: runs are numbered from 1, and a finished run is forgotten {} s after anyone last asked about it",
                self.limits.keep_finished.as_secs()
            ))
        })?;
        run.touch();
        Ok(run)
    }

    pub fn list(&self) -> Vec<Value> {
        self.map.lock().unwrap().values().map(|r| r.list_json()).collect()
    }

    /// The run saved as `name`, whose saved copy was deleted, is no longer saved: its
    /// status stops pointing at the folder, and it may be saved again.
    pub fn forget_saved(&self, name: &str) {
        for run in self.map.lock().unwrap().values() {
            let mut save = run.save.lock().unwrap();
            if matches!(&*save, SaveState::Saved(v) if v["name"] == name) {
                *save = SaveState::None;
                drop(save);
                run.publish_save();
            }
        }
    }

    /// Forgets finished runs that nobody watches or asked about for `keep_finished`.
    pub fn evict(&self) {
        let keep = self.limits.keep_finished;
        // A run being saved is kept: its place among `--max-runs` is counted in the map.
        self.map
            .lock()
            .unwrap()
            .retain(|_, r| r.busy() || r.clients.load(Ordering::SeqCst) > 0 || r.idle() < keep);
    }

    /// Stops every run (at shutdown).
    pub fn stop_all(&self) {
        for r in self.map.lock().unwrap().values() {
            let _ = r.send(Command::Stop);
        }
    }
}
