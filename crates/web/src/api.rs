//! The API handlers (README, "The web lab": every endpoint with its body and answers).
//! Bodies are read as bytes and parsed here, so that every bad one gets a JSON error
//! naming the field rather than a framework's plain-text rejection.

use crate::catalog::refuse_switch_value;
use crate::error::{ApiError, ApiResult};
use crate::intake;
use crate::live::{Command, Speed, State as RunState};
use crate::runs::{Run, SaveState};
use crate::server::{file_response, Shared};
use crate::store::check_name;
use axum::body::Bytes;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

type Answer = ApiResult<Json<Value>>;

/// An endpoint that takes no query parameters: one given is refused rather than ignored,
/// as [`only_keys`] refuses an unknown one where some are taken.
pub struct NoQuery;

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for NoQuery {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, ApiError> {
        // The first key given, decoded as the other endpoints name one.
        let pairs = Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
            .map(|Query(pairs)| pairs)
            .unwrap_or_default();
        let Some((key, _)) = pairs.first() else { return Ok(NoQuery) };
        let field = if key.is_empty() { "query" } else { key.as_str() };
        Err(ApiError::field(
            field,
            format!("unknown query parameter; {} takes none", parts.uri.path()),
        ))
    }
}

/// The query parameters of an endpoint that takes some, each given at most once: a key
/// given twice is refused, naming it (a map would keep the last and skip the checks on
/// the first, `?name=a/b&name=a.trace`).
pub struct Params(pub BTreeMap<String, String>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
            .map_err(|e| ApiError::field("query", format!("cannot be read: {e}")))?;
        let mut params = BTreeMap::new();
        for (key, value) in pairs {
            if params.contains_key(&key) {
                return Err(ApiError::field(&key, "given twice in the query; give it once"));
            }
            params.insert(key, value);
        }
        Ok(Params(params))
    }
}

/// A JSON body of type T, or a 400 that says what is wrong with it. Anything but an
/// object is refused as such before serde reads it: its own message for an array would
/// name the first field it looked for ("expected a string"), not what is wrong.
fn body<T: DeserializeOwned>(bytes: &[u8]) -> ApiResult<T> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|b| *b != b'{') {
        return Err(ApiError::bad("request body: expected a JSON object ({...})"));
    }
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        // The path serde had reached names the field at fault (`scenario.flows[0].count`
        // for a number too large for a double), which serde_json's own message does not.
        let mut field = e.path().to_string();
        let message = e.inner().to_string();
        // A missing field is reported at the object that lacks it: name the field.
        if let Some(missing) =
            message.strip_prefix("missing field `").and_then(|m| m.split('`').next())
        {
            field = if field == "." { missing.to_string() } else { format!("{field}.{missing}") };
        }
        // "." is the body itself; "?" a place serde could not name (a key that is no string).
        if field == "." || field.contains('?') {
            return ApiError::bad(format!("request body: {message}"));
        }
        ApiError::field(&field, &message)
            .with("error", Value::String(format!("request body: {field}: {message}")))
    })?;
    reader.end().map_err(|e| ApiError::bad(format!("request body: {e}")))?;
    Ok(value)
}

/// Runs blocking work (file system, kernel, result writing) off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("the task failed: {e}")))?
}

pub async fn algorithms(_: NoQuery) -> Json<Value> {
    Json(crate::catalog::algorithms_json())
}

pub async fn scenarios(State(app): State<Shared>, _: NoQuery) -> Answer {
    // Off the async threads: every ready file is read.
    let folder = app.cfg.scenarios.clone();
    let ready = match folder.clone() {
        Some(folder) => blocking(move || Ok(crate::catalog::ready_scenarios(&folder))).await?,
        None => Vec::new(),
    };
    let list: Vec<Value> = ready
        .into_iter()
        .map(|r| json!({ "id": r.id, "group": r.group, "description": r.description, "toml": r.toml }))
        .collect();
    let folder = folder.map(|p| p.display().to_string());
    Ok(Json(json!({ "folder": folder, "scenarios": list })))
}

pub async fn traces(State(app): State<Shared>, _: NoQuery) -> Json<Value> {
    let list: Vec<Value> = app
        .store
        .traces
        .list()
        .into_iter()
        .map(|(name, origin, bytes)| json!({ "name": name, "origin": origin, "bytes": bytes }))
        .collect();
    Json(json!({ "traces": list }))
}

pub async fn upload_trace(State(app): State<Shared>, Params(q): Params, bytes: Bytes) -> Answer {
    only_keys(&q, &["name"])?;
    let name = q
        .get("name")
        .cloned()
        .ok_or_else(|| ApiError::field("name", "missing: give ?name=my-link.trace"))?;
    let store = app.store.clone();
    blocking(move || store.upload_trace(&name, &bytes)).await.map(Json)
}

/// `DELETE /api/traces/{name}`: an uploaded trace.
pub async fn delete_trace(
    State(app): State<Shared>,
    Path(name): Path<String>,
    _: NoQuery,
    bytes: Bytes,
) -> Answer {
    no_body(&bytes, &format!("DELETE /api/traces/{name}"))?;
    let store = app.store.clone();
    blocking(move || store.delete_trace(&name)).await.map(Json)
}

/// A request that takes no body (`what`: its method and path) and came with one.
fn no_body(bytes: &Bytes, what: &str) -> ApiResult<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad(format!("request body: {what} takes none ({} bytes sent)", bytes.len())))
}

/// Refuses query keys other than `allowed`.
fn only_keys(q: &BTreeMap<String, String>, allowed: &[&str]) -> ApiResult<()> {
    match q.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(ApiError::field(
            k,
            format!("unknown query parameter; allowed: {}", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

/// The JSON form of a scenario request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioBody {
    /// Scenario text (TOML).
    toml: Option<String>,
    /// Or the scenario as a JSON document of the same shape.
    scenario: Option<UniqueKeys>,
    /// The file name errors use (default scenario.toml).
    file: Option<String>,
    /// realtime, 10x, 100x or max (runs only; default realtime).
    speed: Option<String>,
}

/// A JSON value whose objects name each key once. The scenario file refuses a key
/// written twice; JSON readers keep the last one, which would drop the first unseen.
struct UniqueKeys(Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeysVisitor).map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let why = format!("{key:?} is given twice in one object; allowed: each key once");
                return Err(serde::de::Error::custom(why));
            }
            let UniqueKeys(v) = map.next_value()?;
            object.insert(key, v);
        }
        Ok(Value::Object(object))
    }
}

/// A scenario as a request gives it.
struct ScenarioRequest {
    text: String,
    /// The file name errors use.
    file: String,
    speed: Option<String>,
    /// The text was written from a JSON `scenario` document: an error's line is of it.
    from_json: bool,
}

impl ScenarioRequest {
    /// Checks the scenario ([`intake::check`]); where the client sent a JSON document, the
    /// refusal carries the text its `line` counts in (`toml`).
    fn check(&self, app: &Shared) -> ApiResult<intake::Checked> {
        intake::check(&self.text, &self.file, &app.store.traces, &app.cfg.limits).map_err(|e| {
            if self.from_json {
                e.with("toml", Value::String(self.text.clone()))
            } else {
                e
            }
        })
    }
}

/// Scenario text, file label and speed from a request: JSON (`ScenarioBody`) when the
/// content type says so (in any case: media types are case-insensitive) or the body
/// begins with `{`, which no TOML document can (`curl -d` labels JSON as a form);
/// otherwise the body is TOML and `?file=&speed=` are in the query.
fn scenario_request(
    headers: &HeaderMap,
    q: &BTreeMap<String, String>,
    bytes: &[u8],
) -> ApiResult<ScenarioRequest> {
    let labelled_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.get(..16).is_some_and(|m| m.eq_ignore_ascii_case("application/json")));
    let looks_json = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if labelled_json || looks_json {
        if let Some(k) = q.keys().next() {
            return Err(ApiError::field(
                k,
                "with a JSON body, \"file\" and \"speed\" go in the body; the query is for a TOML body",
            ));
        }
        let b: ScenarioBody = body(bytes)?;
        let (text, from_json) = match (b.toml, b.scenario) {
            (Some(t), None) => (t, false),
            (None, Some(UniqueKeys(doc))) => (intake::json_to_toml(&doc)?, true),
            _ => return Err(ApiError::bad("request body: give exactly one of \"toml\" (the scenario text) and \"scenario\" (a JSON document)")),
        };
        let file = intake::file_label(b.file.as_deref())?;
        return Ok(ScenarioRequest { text, file, speed: b.speed, from_json });
    }
    only_keys(q, &["file", "speed"])?;
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ApiError::bad(format!(
            "request body: not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    Ok(ScenarioRequest {
        text: text.to_string(),
        file: intake::file_label(q.get("file").map(String::as_str))?,
        speed: q.get("speed").cloned(),
        from_json: false,
    })
}

/// `POST /api/scenarios/check`: validates without running; answers the parsed document
/// (for the page's form) and the expanded flows.
pub async fn check_scenario(
    State(app): State<Shared>,
    headers: HeaderMap,
    Params(q): Params,
    bytes: Bytes,
) -> Answer {
    let req = scenario_request(&headers, &q, &bytes)?;
    // Checked as a run would take it, so that a check that passes means the run starts.
    run_speed(req.speed.clone())?;
    let doc = intake::toml_to_json(&req.text).unwrap_or(Value::Null);
    // Off the async threads: the check reads the scenario's trace file (up to 16 MiB).
    let app2 = app.clone();
    let (req, checked) = blocking(move || req.check(&app2).map(|checked| (req, checked)))
        .await
        .map_err(|e| e.with("doc", doc.clone()))?;
    let flows: Vec<Value> = checked
        .scenario
        .config
        .flows
        .iter()
        .map(|f| json!({ "name": f.name, "cc": f.cc }))
        .collect();
    Ok(Json(
        json!({ "ok": true, "name": checked.scenario.name, "doc": doc, "toml": req.text, "flows": flows }),
    ))
}

/// A run's speed as a request gives it (default: real time).
fn run_speed(speed: Option<String>) -> ApiResult<Speed> {
    match speed {
        None => Ok(Speed::Times(1.0)),
        Some(s) => Speed::parse(&s).map_err(|m| ApiError::field("speed", m)),
    }
}

pub async fn list_runs(State(app): State<Shared>, _: NoQuery) -> Json<Value> {
    Json(json!({ "runs": app.runs.list() }))
}

/// `POST /api/runs`: checks the scenario and starts it.
pub async fn create_run(
    State(app): State<Shared>,
    headers: HeaderMap,
    Params(q): Params,
    bytes: Bytes,
) -> ApiResult<Response> {
    let req = scenario_request(&headers, &q, &bytes)?;
    let speed = run_speed(req.speed.clone())?;
    let app2 = app.clone();
    let run = blocking(move || app2.runs.create(req.check(&app2)?, speed)).await?;
    Ok((StatusCode::CREATED, Json(run.status_json())).into_response())
}

pub async fn run_status(State(app): State<Shared>, Path(id): Path<String>, _: NoQuery) -> Answer {
    Ok(Json(app.runs.get(&id)?.status_json()))
}

/// `GET /api/runs/{id}/scenario`: the scenario with the live changes so far.
/// `?download=1` gives it as a file named after the run (`NAME-runID.toml`), which is
/// how a stopped run, which cannot be saved, keeps its history of changes.
pub async fn run_scenario(
    State(app): State<Shared>,
    Path(id): Path<String>,
    Params(q): Params,
) -> ApiResult<Response> {
    let download = wants_download(&q)?;
    let run = app.runs.get(&id)?;
    let changes = run.feed.lock().unwrap().changes.clone();
    let file = named_after(&run.checked.scenario.name, &format!("run{}.toml", run.id));
    // Off the async threads: the scenario is parsed again, its trace read again.
    let text =
        blocking(move || crate::replay::scenario_with_changes(&run.checked, &changes)).await?;
    Ok(file_response(text.into_bytes(), "text/plain; charset=utf-8", download.then_some(&file)))
}

/// `NAME-tail`, a run's default name for a saved folder or a file, with the scenario's
/// name cut short to keep it within the 64 characters of [`check_name`]; just `tail`
/// when the scenario's name holds what such a name must not (a space, a slash).
fn named_after(scenario: &str, tail: &str) -> String {
    let room = 64usize.saturating_sub(tail.len() + 1);
    let head: String = scenario.chars().take(room).collect();
    let named = format!("{head}-{tail}");
    if check_name("name", &named).is_ok() {
        named
    } else {
        tail.to_string()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlBody {
    action: String,
    speed: Option<String>,
}

/// `POST /api/runs/{id}/control`: `{"action": "pause"|"resume"|"stop"|"speed", "speed": "10x"}`.
pub async fn control(
    State(app): State<Shared>,
    Path(id): Path<String>,
    _: NoQuery,
    bytes: Bytes,
) -> Answer {
    let run = app.runs.get(&id)?;
    let b: ControlBody = body(&bytes)?;
    let cmd = match (b.action.as_str(), b.speed) {
        ("pause", None) => Command::Pause,
        ("resume", None) => Command::Resume,
        ("stop", None) => Command::Stop,
        ("speed", Some(s)) => {
            Command::Speed(Speed::parse(&s).map_err(|m| ApiError::field("speed", m))?)
        }
        ("speed", None) => {
            return Err(ApiError::field("speed", "missing: give realtime, 10x, 100x or max"))
        }
        ("pause" | "resume" | "stop", Some(_)) => {
            return Err(ApiError::field("speed", "only with \"action\": \"speed\""))
        }
        (other, _) => {
            return Err(ApiError::field(
                "action",
                format!("\"{other}\": allowed: pause, resume, stop, speed"),
            ))
        }
    };
    let note = needless(&cmd, run.state());
    run.send(cmd)?;
    Ok(Json(match note {
        Some(note) => json!({ "ok": true, "note": note }),
        None => json!({ "ok": true }),
    }))
}

/// What a pause of a paused run or a resume of a running one did: nothing, which the
/// answer says (it is not an error: the run is as asked).
fn needless(cmd: &Command, state: RunState) -> Option<&'static str> {
    match (cmd, state) {
        (Command::Resume, RunState::Running) => Some("the run was not paused; it goes on"),
        (Command::Pause, RunState::Paused) => Some("the run was already paused"),
        _ => None,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamBody {
    flow: Value,
    name: String,
    value: Value,
}

/// `POST /api/runs/{id}/params`: `{"flow": 1, "name": "beta", "value": 0.3}`; the change
/// applies at the current simulated time and is recorded for `save`.
pub async fn params(
    State(app): State<Shared>,
    Path(id): Path<String>,
    _: NoQuery,
    bytes: Bytes,
) -> Answer {
    let run = app.runs.get(&id)?;
    let b: ParamBody = body(&bytes)?;
    let flow = b.flow.as_u64().ok_or_else(|| {
        ApiError::field("flow", format!("{}: a flow index, a whole number from 0", b.flow))
    })?;
    let value = match &b.value {
        Value::Bool(v) => {
            if let Some(f) = run.checked.scenario.config.flows.get(flow as usize) {
                refuse_switch_value(&f.cc, &b.name, *v).map_err(|e| ApiError::field("value", e))?;
            }
            *v as u8 as f64
        }
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        other => {
            return Err(ApiError::field(
                "value",
                format!("{other}: a number (rto_min in milliseconds, initcwnd in segments), or true/false for a switch"),
            ))
        }
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    run.send(Command::SetParam { flow: flow as usize, name: b.name.clone(), value, reply })?;
    let applied = answer
        .await
        .map_err(|_| ApiError::conflict(format!("run {id} ended before the change applied")))?;
    let (change, ended) = applied.map_err(|mut e| {
        // The simulator takes a switch as 1 or 0; the error shows it as it was sent.
        if let Value::Bool(sent) = b.value {
            e.value = sent.to_string();
        }
        // Named as the request named it: the simulator's `flows[i]` counts the run's
        // flows, which is not the scenario file's `[[flows]]` entry i once a count or a
        // disabled entry comes before (the message names the run's flow and algorithm).
        if e.field.starts_with(&format!("flows[{flow}]")) {
            e.field = b.name.clone();
        }
        ApiError::sim(&e, None)
    })?;
    let at_s = change.at_ns as f64 / 1e9;
    let mut answer = json!({ "ok": true, "change": change, "at_s": at_s });
    if let Some(how) = ended {
        answer["note"] = json!(format!(
            "flow {flow} {how}: the change is recorded at {at_s} s but has nothing left to act on"
        ));
    }
    Ok(Json(answer))
}

/// Why a run cannot be saved (again), in the names the student sees: the name it is
/// saved (or to be saved) as, not the server's run number `id` (which only the address
/// of a stopped run's scenario needs).
fn save_refusal(save: &SaveState, state: RunState, id: u64) -> Option<String> {
    match (save, state) {
        (SaveState::Saved(v), _) => Some(format!(
            "this run is already saved as \"{}\"; a run is saved once",
            v["name"].as_str().unwrap_or_default()
        )),
        (SaveState::Pending(name), RunState::Finished) => {
            Some(format!("this run is being saved as \"{name}\"; a run is saved once"))
        }
        (SaveState::Pending(name), _) => Some(format!(
            "this run is already to be saved as \"{name}\" when it finishes; a run is saved once"
        )),
        (_, RunState::Stopped) => Some(format!("this run was stopped before its end; only a whole run can be saved (start it again and let it run to the end; GET /api/runs/{id}/scenario gives its scenario with the live changes so far)")),
        _ => None,
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SaveBody {
    name: Option<String>,
}

/// `POST /api/runs/{id}/save` (`{"name": ...}` optional): saves a finished run now, or
/// marks a running one to be saved when it finishes (202); a stopped run cannot be saved.
pub async fn save(
    State(app): State<Shared>,
    Path(id): Path<String>,
    _: NoQuery,
    bytes: Bytes,
) -> ApiResult<Response> {
    let run = app.runs.get(&id)?;
    if run.testbed {
        return Err(ApiError::conflict("a testbed run is not replayed by the simulator; save real runs with cclab testbed run SCENARIO --out DIR"));
    }
    let b: SaveBody = if bytes.is_empty() { SaveBody::default() } else { body(&bytes)? };
    let name = b
        .name
        .unwrap_or_else(|| named_after(&run.checked.scenario.name, &format!("run{}", run.id)));
    // A run already saved hears so before its default name is found taken (by itself).
    if let Some(why) = save_refusal(&run.save.lock().unwrap(), run.state(), run.id) {
        return Err(ApiError::conflict(why));
    }
    // Room in the results folder, measured off the async threads (a large folder takes
    // a while to walk); `Store::save` asks again when it writes.
    let store = app.store.clone();
    blocking(move || store.check_room("save", 0)).await?;
    // Then the name (a taken name is the next thing to hear about); the promise is
    // released by `save_if_asked` once saved (or failed), when the run stops, or below.
    app.store.promise(&name)?;
    // A finished run's save replays it here: one of the `--max-runs` places while it
    // does, taken before the save is marked pending, so that a refusal (429) leaves
    // nothing to undo but the promise.
    let mut slot = None;
    loop {
        if slot.is_none() && run.state() == RunState::Finished {
            slot = Some(app.runs.slot_for_save(&run).inspect_err(|_| app.store.release(&name))?);
        }
        // `save` before `feed` (`run.state()`), as everywhere: see `Run::publish_save`.
        let mut save = run.save.lock().unwrap();
        let state = run.state();
        // Asked again under the lock: another request may have saved it meanwhile.
        if let Some(why) = save_refusal(&save, state, run.id) {
            app.store.release(&name);
            return Err(ApiError::conflict(why));
        }
        if state == RunState::Finished && slot.is_none() {
            continue; // it finished meanwhile: a place first
        }
        *save = SaveState::Pending(name.clone());
        if state != RunState::Finished {
            return Ok((StatusCode::ACCEPTED, Json(json!({ "state": "pending", "name": name })))
                .into_response());
        }
        break;
    }
    let run2 = run.clone();
    blocking(move || {
        run2.save_if_asked();
        drop(slot);
        Ok(())
    })
    .await?;
    let outcome = run.save_json();
    if outcome["state"] == "saved" {
        return Ok((StatusCode::CREATED, Json(outcome)).into_response());
    }
    // Failed: answered with the failure's own status (a conflict is the client's to
    // mend), and the run may be saved again. Read and reset under one lock, so that a
    // save asked for meanwhile is not wiped.
    let mut save = run.save.lock().unwrap();
    let SaveState::Failed(status, why) = &*save else {
        return Err(ApiError::internal("saving failed"));
    };
    let refusal = ApiError::new(*status, why.clone());
    *save = SaveState::None;
    Err(refusal)
}

pub async fn saved_list(State(app): State<Shared>, _: NoQuery) -> Answer {
    let store = app.store.clone();
    blocking(move || Ok(Json(json!({ "saved": store.list(), "disk": store.disk_json() })))).await
}

pub async fn saved_detail(
    State(app): State<Shared>,
    Path(name): Path<String>,
    _: NoQuery,
) -> Answer {
    let store = app.store.clone();
    blocking(move || store.detail(&name).map(Json)).await
}

/// `?download=1` asks for a file as an attachment; `0` or nothing, to show it inline.
fn wants_download(q: &BTreeMap<String, String>) -> ApiResult<bool> {
    only_keys(q, &["download"])?;
    match q.get("download").map(String::as_str) {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(v) => Err(ApiError::field("download", format!("\"{v}\": allowed: 1 or 0"))),
    }
}

async fn send_file(
    path: ApiResult<std::path::PathBuf>,
    name: &str,
    download: bool,
) -> ApiResult<Response> {
    let path = path?;
    let shown = name.to_string();
    let bytes = blocking(move || {
        std::fs::read(&path).map_err(|e| ApiError::internal(format!("cannot read {shown}: {e}")))
    })
    .await?;
    Ok(file_response(bytes, crate::store::content_type(name), download.then_some(name)))
}

pub async fn saved_file(
    State(app): State<Shared>,
    Path((name, file)): Path<(String, String)>,
    Params(q): Params,
) -> ApiResult<Response> {
    let download = wants_download(&q)?;
    let path = app.store.file(&name, &file);
    send_file(path, &file, download).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompareBody {
    a: String,
    b: String,
}

/// `DELETE /api/saved/{name}`; a run held in memory that was saved under the name is
/// no longer "saved" (it may be saved again).
pub async fn saved_delete(
    State(app): State<Shared>,
    Path(name): Path<String>,
    _: NoQuery,
    bytes: Bytes,
) -> Answer {
    no_body(&bytes, &format!("DELETE /api/saved/{name}"))?;
    let store = app.store.clone();
    let asked = name.clone();
    let deleted = blocking(move || store.delete(&asked)).await?;
    app.runs.forget_saved(&name);
    Ok(Json(deleted))
}

/// `POST /api/compare` `{"a": NAME, "b": NAME}`: what `cclab compare` shows.
pub async fn compare(State(app): State<Shared>, _: NoQuery, bytes: Bytes) -> Answer {
    let b: CompareBody = body(&bytes)?;
    check_name("a", &b.a)?;
    check_name("b", &b.b)?;
    if b.a == b.b {
        return Err(ApiError::field(
            "b",
            format!("\"{}\": the same run as a; compare two different saved runs", b.b),
        ));
    }
    let store = app.store.clone();
    blocking(move || store.compare(&b.a, &b.b).map(Json)).await
}

pub async fn compare_file(
    State(app): State<Shared>,
    Path((a, b, file)): Path<(String, String, String)>,
    Params(q): Params,
) -> ApiResult<Response> {
    let download = wants_download(&q)?;
    let (store, name) = (app.store.clone(), file.clone());
    let bytes = blocking(move || store.compare_file(&a, &b, &name)).await?;
    Ok(file_response(bytes, crate::store::content_type(&file), download.then_some(&file)))
}

pub async fn kernel_status(_: NoQuery) -> Answer {
    blocking(|| Ok(Json(crate::kernel::status()))).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelBody {
    algorithm: String,
    name: Option<String>,
    value: Option<f64>,
}

/// `POST /api/kernel/{load|unload|set}` (token needed; see the server module).
pub async fn kernel_action(Path(action): Path<String>, _: NoQuery, bytes: Bytes) -> Answer {
    let b: KernelBody = body(&bytes)?;
    blocking(move || match (action.as_str(), b.name, b.value) {
        ("load", None, None) => crate::kernel::load(&b.algorithm, true),
        ("unload", None, None) => crate::kernel::load(&b.algorithm, false),
        ("set", Some(name), Some(value)) => crate::kernel::set(&b.algorithm, &name, value),
        ("set", _, _) => Err(ApiError::bad("set needs \"name\" and \"value\"")),
        ("load" | "unload", _, _) => Err(ApiError::bad("load and unload take only \"algorithm\"")),
        (other, _, _) => Err(ApiError::not_found(format!(
            "no kernel action \"{other}\"; allowed: load, unload, set"
        ))),
    })
    .await
    .map(Json)
}

/// `POST /api/kernel/runs` (token needed): the scenario (as for `POST /api/runs`) on
/// real TCP through the emulator, streamed like a simulated run.
pub async fn kernel_run(
    State(app): State<Shared>,
    headers: HeaderMap,
    Params(q): Params,
    bytes: Bytes,
) -> ApiResult<Response> {
    let req = scenario_request(&headers, &q, &bytes)?;
    if req.speed.is_some() {
        return Err(ApiError::field("speed", "a testbed run goes in real time"));
    }
    let app2 = app.clone();
    let run = blocking(move || app2.runs.create_testbed(req.check(&app2)?)).await?;
    Ok((StatusCode::CREATED, Json(run.status_json())).into_response())
}

/// `GET /api/runs/{id}/live`: the WebSocket of a run (see [`stream`]).
pub async fn live(
    State(app): State<Shared>,
    Path(id): Path<String>,
    _: NoQuery,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    let run = app.runs.get(&id)?;
    // A plain GET (a browser's address bar, curl) gets what to do instead of axum's
    // wording of the missing header.
    let ws = ws.map_err(|e| {
        ApiError::new(
            e.status(),
            format!("/api/runs/{id}/live is a WebSocket ({e}): open it with a WebSocket client; GET /api/runs/{id} gives the run's status as JSON"),
        )
    })?;
    let max = app.cfg.limits.max_clients_per_run;
    let client = ClientSlot::take(run, max).ok_or_else(|| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("run {id} has {max} clients watching (the most)"),
        )
    })?;
    // A failed upgrade drops the callback, and with it the slot.
    Ok(ws.on_upgrade(move |socket| stream(socket, client)))
}

/// One of a run's `max_clients_per_run` WebSocket places, counted from before the
/// upgrade (checked and taken in one step, so simultaneous upgrades cannot all pass the
/// check) until the client leaves.
struct ClientSlot(Arc<Run>);

impl ClientSlot {
    fn take(run: Arc<Run>, max: usize) -> Option<ClientSlot> {
        let taken = run
            .clients
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < max).then_some(n + 1));
        taken.ok().map(|_| ClientSlot(run))
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        self.0.clients.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

/// Sends the run's `hello` (everything so far), then every frame; a client that falls
/// behind gets a fresh `hello` instead of the frames it missed.
async fn stream(mut socket: WebSocket, client: ClientSlot) {
    let run = &client.0;
    let (mut hello, mut rx) = {
        let feed = run.feed.lock().unwrap();
        (Some(run.hello(&feed)), feed.tx.subscribe())
    };
    loop {
        if let Some(text) = hello.take() {
            if socket.send(Message::Text(text.into())).await.is_err() {
                break;
            }
        }
        tokio::select! {
            msg = rx.recv() => match msg {
                Ok(text) => {
                    if socket.send(Message::Text(text.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    let feed = run.feed.lock().unwrap();
                    hello = Some(run.hello(&feed));
                    rx = feed.tx.subscribe();
                }
                Err(RecvError::Closed) => break,
            },
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                Some(Ok(_)) => {}
            },
        }
    }
}
