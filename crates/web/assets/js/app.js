// The lab page: wires the scenario form, the run controls, the live charts and table,
// the tuning panel, results and the kernel panel. `window.lab` holds the page's state
// (the current run's data included), for the curious and for the browser test.

import { UNREACHABLE, del, get, getText, post, postText } from "./api.js";
import { Chart, flowColor, valueText } from "./charts.js";
import { ScenarioForm } from "./form.js";
import { LiveRun, cubicCurve, isGoing } from "./live.js";
import { TunePanel } from "./tune.js";
import { Results } from "./results.js";
import { KernelPanel } from "./kernel.js";
import { GoingRuns, forget, notBack, remember, remembered, watchedElsewhere } from "./session.js";

const $ = (id) => document.getElementById(id);
// `baseline`: the scenario text as last picked or run; the page warns before leaving
// edits beyond it.
const lab = { run: null, speed: "100x", file: "scenario.toml", toml: "", baseline: "", last: {} };
window.lab = lab;

/** Calls `f` once things have been quiet for `ms`. */
function debounce(f, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => f(...args), ms); };
}

// ----- scenario -----

/** Shows a refusal of the scenario: beside its field in the form, and in the box above
 *  the editor as well when the form is not what the user is looking at (the TOML tab).
 *  Returns the message beside the field when that is where it shows, else null. */
function showScenarioError(err) {
  lab.scenarioError = err;
  const box = $("scenario-error");
  const placed = err && lab.form.showError(err);
  const seen = placed && !$("form").hidden;
  box.hidden = !err || seen;
  box.textContent = err && !seen ? err.error : "";
  return seen ? placed : null;
}

/** Checks the scenario text; the form follows a TOML edit when the text parses, and
 *  takes no edits while it does not (`ScenarioForm.setStale`). An answer about text that
 *  has changed since is not shown: checks can answer out of order (one that reads a large
 *  trace is slow). `lab.checked` is the text as it stands once its check has answered
 *  (the browser test waits for it to be `lab.toml` rather than for the debounce to have
 *  passed). */
async function check(fromToml) {
  const toml = lab.toml;
  const current = () => toml === lab.toml;
  try {
    const r = await post("/api/scenarios/check", { toml, file: lab.file });
    if (current()) {
      if (fromToml) lab.form.load(r.doc);
      lab.form.clearErrors();
      showScenarioError(null);
    }
    return true;
  } catch (e) {
    // A refusal of the scenario is a 400 with the document as far as it parsed (null
    // where it does not); anything else is a check that did not happen.
    const refused = e.status === 400 && e.body && e.body.error;
    if (current()) {
      if (fromToml && refused && e.body.doc) lab.form.load(e.body.doc);
      else if (fromToml && refused) lab.form.setStale(`does not parse (${e.body.error})`);
      else if (fromToml) {
        // The server did not answer: asked again until it does, or the text changes.
        lab.form.setStale(`could not be checked (${e.message}); asked again every 3 s`);
        setTimeout(() => { if (current()) check(true); }, 3000);
      }
      showScenarioError(e.body && e.body.error ? e.body : { error: e.message });
    }
    return false;
  } finally {
    if (current()) lab.checked = toml;
  }
}
const checkSoon = debounce(check, 300);

function scenarioEdited(toml, source) {
  lab.toml = toml;
  if (source === "form") $("toml").value = toml;
  // Until its check answers, the form may not write its older copy over the new text.
  if (source === "toml") lab.form.setStale("is being checked");
  showPicked();
  checkSoon(source === "toml");
}

/** The picked scenario's description, marked once the text no longer is that file. */
function showPicked() {
  const s = lab.picked;
  if (!s) return;
  $("picker-note").textContent = lab.toml === s.toml ? s.description : `${s.description} (edited: no longer ${s.id} as it stands)`;
}

async function pickScenario(id) {
  const s = lab.scenarios.find((x) => x.id === id);
  if (!s) return;
  lab.file = id.split("/").pop();
  lab.picked = s;
  lab.toml = s.toml;
  lab.baseline = s.toml;
  showPicked();
  $("toml").value = s.toml;
  await check(true);
}

function setupScenario(scenarios, traces) {
  lab.form = new ScenarioForm($("form"), { algorithms: lab.algorithms, traces, onChange: (t) => scenarioEdited(t, "form"), upload: uploadTrace, removeTrace });
  const groups = {
    "": "scenarios/",
    seeds: "seeds' experiments",
    fidelity: "fidelity (simulator vs kernel)",
    small: "small (golden tests)",
  };
  for (const [g, label] of Object.entries(groups)) {
    const og = document.createElement("optgroup");
    og.label = label;
    for (const s of scenarios.filter((x) => x.group === g)) og.append(new Option(s.id, s.id));
    if (og.children.length) $("picker").append(og);
  }
  $("picker").addEventListener("change", (e) => pickScenario(e.target.value));
  $("toml").addEventListener("input", (e) => scenarioEdited(e.target.value, "toml"));
  for (const b of document.querySelectorAll(".tabs button")) {
    b.addEventListener("click", () => {
      for (const o of document.querySelectorAll(".tabs button")) o.classList.toggle("on", o === b);
      $("form").hidden = b.dataset.tab !== "form";
      $("toml-pane").hidden = b.dataset.tab !== "toml";
      showScenarioError(lab.scenarioError); // where it shows depends on the tab
    });
  }
}

// ----- running -----

/** Watches a run the server has started (simulated or on the testbed) of `toml`, and
 *  remembers it for this tab (a reload watches it again: `reattach`). */
function attachRun(status, toml) {
  if (lab.run) {
    lab.run.close();
    lab.last[lab.run.testbed ? "real" : "simulated"] = lab.run;
  }
  clearTimeout(lab.retry);
  lab.form.clearErrors();
  showScenarioError(null);
  lab.going.hide();
  lab.status = status;
  lab.run = new LiveRun(status.id, status.instance, {
    onUpdate: () => requestDraw(),
    onSave: (s) => lab.results.saved(s),
    onClose: (run) => connectionClosed(run),
  });
  Object.assign(lab.run, { toml, testbed: Boolean(status.testbed) });
  lab.tune.setRun(status.flows, status.testbed, status.changes || []);
  lab.baseline = toml;
  remember(status, { toml, file: lab.file, picked: lab.picked && lab.picked.id });
  $("save-note").textContent = "";
  $("run-note").textContent = "";
  lab.results.saved(status.save); // a save asked before a reload
}

/** After a reload: the run this tab started, if this server process still has it
 *  (going or ended: an unsaved run can still be saved) and no other tab watches it,
 *  with the scenario text it started from (or, failing that, the server's copy of it),
 *  its charts (the WebSocket's hello carries the whole history), its speed, its tuning
 *  and its save. Otherwise the tab starts idle, saying why. */
async function reattach() {
  const kept = remembered();
  if (!kept) return false;
  let status;
  try {
    status = await get(`/api/runs/${kept.id}`);
  } catch (e) {
    if (e.status === 404) notWatched(`the lab server no longer has run ${kept.id} (${kept.name}): was it restarted?`);
    return false;
  }
  const why = notBack(kept, status) || ((await watchedElsewhere(kept)) && `run ${kept.id} (${kept.name}) is watched in another tab (this one was duplicated from it); this tab starts afresh`);
  if (why) { notWatched(why); return false; }
  const toml = kept.toml || (await getText(`/api/runs/${kept.id}/scenario`));
  const picked = lab.scenarios.find((x) => x.id === kept.picked);
  if (picked) { $("picker").value = picked.id; lab.picked = picked; }
  lab.file = kept.file || status.file || lab.file;
  lab.toml = toml;
  $("toml").value = toml;
  showPicked();
  await check(true);
  if (!status.testbed) showSpeed(status.speed);
  attachRun(status, toml);
  return true;
}

/** The remembered run is not watched again (`why`, said beside the clock): forgotten, so
 *  that the next reload does not ask again. */
function notWatched(why) {
  forget();
  $("run-note").textContent = why;
}

/** The speed buttons show `speed` (realtime, 10x, 100x or max). */
function showSpeed(speed) {
  if (!speed) return;
  lab.speed = speed;
  for (const o of document.querySelectorAll("#speed button")) o.classList.toggle("on", o.dataset.speed === speed);
}

/** The run's WebSocket closed without the page closing it: the server went away, or
 *  it dropped the connection. If the server still answers about the run, the page
 *  watches it again, whatever its state (the hello carries the final state and summary
 *  of a run that ended meanwhile) and shows how its save went; if the server is another
 *  process now (restarted: its run of this number is not ours) or has forgotten the run,
 *  the page says so; if it does not answer, the page says the connection is lost
 *  (instead of "running" beside a frozen clock) and asks again every few seconds. */
async function connectionClosed(run) {
  if (run !== lab.run) return;
  try {
    const status = await get(`/api/runs/${run.id}`);
    if (run !== lab.run) return;
    if (status.instance !== run.instance) {
      runGone(run, `the lab server was restarted: run ${run.id} is gone`);
      return;
    }
    run.lost = null;
    // What an action said while the server was away is out of date now.
    for (const id of ["run-note", "save-note"]) if ($(id).textContent.includes(UNREACHABLE)) $(id).textContent = "";
    lab.results.saved(status.save); // a pending save may have been made, or failed, meanwhile
    // Opened again at once the first time, then at most every 3 s (a server that closes
    // every connection at once would otherwise be asked without pause).
    const wait = Date.now() - (run.reopened || 0) < 3000 ? 3000 : 0;
    run.reopened = Date.now() + wait;
    lab.retry = setTimeout(() => run.open(), wait);
  } catch (e) {
    if (run !== lab.run) return;
    if (e.status === 404) {
      runGone(run, `the server no longer has run ${run.id} (was it restarted?)`);
      return;
    }
    run.lost = "connection to the lab server lost";
    lab.retry = setTimeout(() => connectionClosed(run), 3000);
  }
  requestDraw();
}

/** The server has no such run now: the page keeps its charts as last heard, says `why`
 *  in place of its state, and forgets it (a reload does not look for it again). */
function runGone(run, why) {
  run.lost = why;
  forget();
  requestDraw();
}

/** Why leaving the page now would lose something (the browser asks first), or null. */
function leaving() {
  const run = lab.run;
  if (run && !run.lost && isGoing(run.state)) {
    return `run ${run.id} is going: a closed page stops it (a reload watches it again)`;
  }
  // A finished simulated run can be saved until the page that started it is gone.
  if (run && !run.lost && run.state === "finished" && !run.testbed && !["asked", "pending", "saved"].includes(run.saveState)) {
    return `run ${run.id} finished but is not saved: a closed page loses it (a reload keeps it)`;
  }
  if (lab.toml !== lab.baseline) return "the scenario has edits that are neither run nor saved";
  return null;
}

/** A refused Start must say why where the eye is: the field may be far down the form. */
function bringIntoView(message) {
  if (message) message.scrollIntoView({ block: "center" });
}

/** Starts the scenario in the simulator, or (`path` = /api/kernel/runs) on the testbed.
 *  A run still going is stopped first, as Stop would (Start means start over, and a
 *  forgotten run would hold one of the server's run slots until it ended), but only
 *  once the scenario is known to be good: a refused Start leaves the run going. */
async function start(path = "/api/runs") {
  $("start").disabled = true;
  lab.going.hide();
  try {
    const going = lab.run && isGoing(lab.run.state);
    if (going && !(await check(false))) return bringIntoView(showScenarioError(lab.scenarioError));
    if (going) await control("stop");
    const body = { toml: lab.toml, file: lab.file };
    if (path === "/api/runs") body.speed = lab.speed;
    attachRun(await post(path, body), lab.toml);
  } catch (e) {
    bringIntoView(showScenarioError(e.body && e.body.error ? e.body : { error: e.message }));
    if (e.status === 429 && e.body.going) lab.going.show(e.body.going); // which runs hold the slots
    throw e;
  } finally {
    $("start").disabled = false;
  }
}

/** Sends a run command; a refusal (or an unreachable server) is said beside the clock,
 *  and so is the server's note on a command that changed nothing (a second pause). */
async function control(action, extra = {}) {
  if (!lab.run) return;
  $("run-note").textContent = "";
  try {
    const r = await post(`/api/runs/${lab.run.id}/control`, { action, ...extra });
    if (r && r.note) $("run-note").textContent = `${action}: ${r.note}`;
  } catch (e) {
    $("run-note").textContent = `${action}: ${e.message}`;
  }
}

function setupControls() {
  $("start").addEventListener("click", () => start().catch(() => {}));
  $("pause").addEventListener("click", () => control(lab.run && lab.run.state === "paused" ? "resume" : "pause"));
  $("stop").addEventListener("click", () => control("stop"));
  for (const b of document.querySelectorAll("#speed button")) {
    b.addEventListener("click", () => {
      lab.speed = b.dataset.speed;
      for (const o of document.querySelectorAll("#speed button")) o.classList.toggle("on", o === b);
      if (lab.run && isGoing(lab.run.state)) control("speed", { speed: lab.speed });
    });
  }
}

function applyParam(flow, name, value) {
  if (!lab.run) return Promise.reject(new Error("no run"));
  return post(`/api/runs/${lab.run.id}/params`, { flow, name, value });
}

// ----- drawing -----

function makeCharts() {
  return {
    cwnd: new Chart($("chart-cwnd"), { title: "Congestion window", yLabel: "packets" }),
    tput: new Chart($("chart-tput"), { title: "Goodput", yLabel: "Mbit/s" }),
    queue: new Chart($("chart-queue"), { title: "Bottleneck queue and drops", yLabel: "packets", y2Label: "drops" }),
    rtt: new Chart($("chart-rtt"), { title: "Smoothed RTT", yLabel: "ms" }),
  };
}

/** One series per flow (`flow`: the legend may leave some out, and counts them). */
function flowSeries(run, pick, extra = {}) {
  return run.flows.map((f) => ({ name: f.name, color: flowColor(f.id), points: pick(f.id), flow: true, ...extra }));
}

/** cwnd of every flow, ssthresh dashed, and for the selected CUBIC-family flow W_max
 *  and the analytic W(t) of its current epoch. */
function cwndSeries(run) {
  const out = flowSeries(run, (i) => run.cwnd(i), { width: 1.4 });
  // One legend entry says what the dashed lines are; each is in its flow's colour.
  for (const [k, f] of run.flows.entries()) {
    out.push({ name: "ssthresh (dashed)", color: flowColor(f.id), points: run.ssthresh(f.id), dash: [2, 3], width: 1, legend: k === 0 });
  }
  const sel = lab.tune.selected();
  const latest = run.latest(sel);
  const flow = run.flows[sel];
  const curve = flow && cubicCurve(latest, run.paramsOf(sel), run.now, run.duration);
  if (curve) out.push({ name: "W(t)", color: "#101828", points: curve, dash: [6, 4], width: 1.3, pin: true });
  // W_max from the epoch's start, or (for an algorithm that does not report its epoch)
  // from the flow's last back-off.
  const wmax = flow && latest && latest.cc.w_max;
  if (wmax) {
    const last = run.backoffs(sel).slice(-1)[0];
    const from = latest.cc.epoch_start || (last ? last.t : 0);
    out.push({ name: "W_max", color: "#98a2b3", points: [[from, wmax], [run.duration, wmax]], dash: [4, 4], width: 1, pin: true });
  }
  return out;
}

/** The queue line's name: the largest sample in each bucket, or where a bucket holds
 *  one sample (a run sampled as coarsely as the chart's buckets), that sample. */
function queueLabel(run) {
  const one = run.sampleS && run.bucketS <= run.sampleS * (1 + 1e-9);
  return one ? `queue (a sample every ${bucketText(run.sampleS)})` : `queue (max per ${bucketText(run.bucketS)})`;
}

/** A bucket's length as the drops caption gives it ("60 ms"). */
function bucketText(seconds) {
  return seconds ? `${+(seconds * 1000).toPrecision(3)} ms` : "bucket";
}

/** The unit of parameter `name` of flow `flow` of `run` ("ms" for rto_min), or "". */
function unitOf(run, flow, name) {
  const f = run.flows[flow];
  const algo = f && lab.algorithms.find((a) => a.name === f.cc);
  const spec = [...lab.tcpParams, ...(algo ? algo.params : [])].find((p) => p.name === name);
  return (spec && spec.unit) || "";
}

/** The latest changes drawn as markers: more could not be told apart, and each is
 *  measured and drawn on every chart at every draw. */
const MAX_MARKERS = 500;

function markers(run) {
  return run.changes().slice(-MAX_MARKERS).map((c) => ({ t: c.t, label: `f${c.flow} ${c.name}=${valueText(c.value, unitOf(run, c.flow, c.name))}`, color: c.source === "live" ? "#b54708" : "#475467" }));
}

/** The latest run of the other kind (real beside simulated) of the same scenario text,
 *  drawn dashed on the same axes, or null. */
function otherRun(run) {
  const other = lab.last[run.testbed ? "simulated" : "real"];
  return other && other.toml === run.toml && other.flows ? other : null;
}

/** A run's series again, dashed and labelled with its kind, for the overlay. */
function overlay(other, series) {
  const kind = other.testbed ? "real" : "simulated";
  return series.map((s) => ({ ...s, name: `${s.name} (${kind})`, dash: [6, 3], width: 1 }));
}

function drawCharts() {
  const run = lab.run;
  const c = lab.charts;
  if (run && run.flows) {
    const other = otherRun(run);
    const both = (pick) => [...pick(run), ...(other ? overlay(other, pick(other)) : [])];
    const xMax = Math.max(run.duration, other ? other.duration : 0);
    const common = { xMax, markers: markers(run) };
    c.cwnd.set({ ...common, series: [...cwndSeries(run), ...(other ? overlay(other, flowSeries(other, (i) => other.cwnd(i))) : [])] });
    c.tput.set({ ...common, series: both((r) => flowSeries(r, (i) => r.goodput(i))) });
    c.queue.set({ ...common, series: both((r) => [{ name: queueLabel(r), color: "#344054", points: r.queue() }]), bars: { points: run.drops(), color: "#d92d20", label: `drops per ${bucketText(run.bucketS)}` } });
    c.rtt.set({ ...common, series: both((r) => flowSeries(r, (i) => r.rtt(i))) });
  }
  for (const ch of Object.values(c)) ch.draw();
}

function cell(text, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  if (text instanceof Node) td.append(text); else td.textContent = text;
  return td;
}

function drawTable() {
  const run = lab.run;
  const body = $("table").querySelector("tbody");
  if (!run || !run.flows || !run.table) { body.replaceChildren(); return; }
  const rows = run.flows.map((f) => {
    const t = run.table.flows[f.id] || {};
    const latest = run.latest(f.id);
    const b = run.backoffs(f.id).slice(-1)[0];
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = flowColor(f.id);
    const tr = document.createElement("tr");
    tr.className = f.id === lab.tune.selected() ? "selected" : "";
    tr.append(cell(sw), cell(f.name), cell(f.cc), cell(((t.goodput_bps || 0) / 1e6).toFixed(3), "num"),
      cell(`${((t.share || 0) * 100).toFixed(1)}%`, "num"), cell(String(t.retransmits ?? ""), "num"),
      cell(t.rtt_p50_ms ? t.rtt_p50_ms.toFixed(1) : "", "num"), cell(latest ? String(latest.cwnd) : "", "num"),
      cell(b ? `${b.ratio.toFixed(3)} \u00d7` : "", "num"));
    tr.addEventListener("click", () => { $("tune-flow").value = f.id; lab.tune.render(); requestDraw(); });
    return tr;
  });
  body.replaceChildren(...rows);
  const tb = run.table;
  const mbps = (bps) => (bps / 1e6).toFixed(3);
  // The cross traffic's load on each link it crosses, over the run so far (the other
  // figures are the forward link's, so only the reverse one is named).
  const cross = (tb.cross || []).map((c) =>
    ` \u00b7 cross traffic${c.direction === "reverse" ? " (reverse)" : ""} ${mbps(c.throughput_bps)} of ${mbps(c.offered_bps)} Mbit/s delivered`).join("");
  $("fairness").textContent =
    `Jain's index ${tb.jain.toFixed(4)} \u00b7 utilisation ${(tb.utilization * 100).toFixed(1)}% \u00b7 drops ${tb.drops}${cross}`;
}

function drawStatus() {
  const run = lab.run;
  const state = run ? run.state || "starting" : "idle";
  const pill = $("status");
  pill.textContent = run && run.lost ? run.lost : run && run.reason ? `${state}: ${run.reason}` : state;
  pill.className = `pill ${run && run.lost ? "lost" : state}`;
  const active = isGoing(state) && !(run && run.lost);
  const testbed = Boolean(lab.status && lab.status.testbed);
  $("pause").disabled = !active || testbed; // real TCP cannot be paused
  $("pause").textContent = state === "paused" ? "Resume" : "Pause";
  $("stop").disabled = !active;
  $("save").disabled = !run || state === "stopped" || testbed;
  showWhyNotSaved(run, state, testbed);
  lab.tune.setEnabled(active);
  const frozen = run && run.lost ? " (as last heard)" : "";
  $("clock").textContent = run && run.duration ? `${(run.now || 0).toFixed(1)} / ${run.duration} s \u00b7 ${run.speed}${frozen}` : "";
}

/** Says why Save run is greyed out (a stopped or testbed run), and offers the run's
 *  scenario with its live changes as [[changes]]: all a stopped run leaves to keep.
 *  Rebuilt only when the run or its state changes (this is drawn 20 times a second). */
function showWhyNotSaved(run, state, testbed) {
  const key = run ? `${run.id}/${state}/${testbed}` : "";
  if (lab.whyKey === key) return;
  lab.whyKey = key;
  const link = $("run-scenario");
  link.hidden = !run;
  if (run) {
    link.href = `/api/runs/${run.id}/scenario?download=1`;
    link.textContent = `download run ${run.id}'s scenario (its live changes as [[changes]])`;
  }
  let why = "";
  if (run && testbed) why = "A testbed run is not replayed by the simulator, so it is not saved here; save real runs with cclab testbed run SCENARIO --out DIR.";
  else if (run && state === "stopped") why = `Only a whole run can be saved: run ${run.id} was stopped at ${(run.now || 0).toFixed(1)} of ${run.duration} s. Start it again and let it run to the end (max is quickest), or download its scenario below and run it with cclab run.`;
  $("save").title = why || "Save the run as a results folder (a run still going is saved when it finishes)";
  $("save-why").textContent = why;
  $("save-why").hidden = !why;
}

/** Draws once things have been quiet for QUIET_MS (the server sends 20 frames a second,
 *  so each is drawn), or once MAX_DRAW_GAP_MS have passed since the last draw. A page
 *  that has fallen behind the run (a hundred flows on a slow machine, whose charts take
 *  longer to paint than frames take to come) is handed the frames waiting one after
 *  another: it takes them all in before drawing again, and catches up (Stop shows at
 *  once), where drawing after each would keep it behind. */
const QUIET_MS = 15;
const MAX_DRAW_GAP_MS = 500;
function requestDraw() {
  lab.lastAsked = performance.now();
  if (lab.drawPending) return;
  lab.drawPending = true;
  setTimeout(drawWhenQuiet, QUIET_MS);
}

function drawWhenQuiet() {
  const now = performance.now();
  const quietFor = now - lab.lastAsked;
  if (quietFor >= QUIET_MS || now - (lab.lastDraw || 0) >= MAX_DRAW_GAP_MS) draw();
  else setTimeout(drawWhenQuiet, QUIET_MS - quietFor);
}

function draw() {
  lab.drawPending = false;
  lab.lastDraw = performance.now();
  const t0 = performance.now();
  drawCharts();
  drawTable();
  drawStatus();
  // Once the hello has come (before it, the run's changes are not known yet).
  if (lab.run && lab.run.seq >= 0) lab.tune.follow(lab.run.changes());
  lab.tune.showBackoff(lab.run);
  lab.frames = (lab.frames || 0) + 1;
  // Draw times of the last 200 frames (ms), to check the charts keep up.
  lab.drawMs = [...(lab.drawMs || []).slice(-199), performance.now() - t0];
}

/** Deletes an uploaded trace. */
async function removeTrace(name) {
  try {
    await del(`/api/traces/${encodeURIComponent(name)}`);
  } finally {
    lab.results.refresh(); // how full the results folder is
  }
}

/** Sends a trace file to the server; answers the upload and the traces now. */
async function uploadTrace(name, text) {
  const r = await postText(`/api/traces?name=${encodeURIComponent(name)}`, text);
  lab.results.refresh(); // how full the results folder is
  const { traces } = await get("/api/traces");
  return { ...r, traces };
}

async function init() {
  const [algs, scen, traces] = await Promise.all([get("/api/algorithms"), get("/api/scenarios"), get("/api/traces")]);
  lab.algorithms = algs.algorithms;
  lab.tcpParams = algs.tcp_params;
  lab.scenarios = scen.scenarios;
  if (!scen.folder) $("picker-note").textContent = "No scenarios folder was found beside the server; start it with --scenarios DIR.";
  setupScenario(scen.scenarios, traces.traces);
  setupControls();
  lab.charts = makeCharts();
  lab.tune = new TunePanel({
    root: $("tune-controls"), select: $("tune-flow"), note: $("tune-note"),
    algorithms: lab.algorithms, tcpParams: algs.tcp_params, apply: applyParam,
  });
  $("tune-flow").addEventListener("change", () => { requestDraw(); });
  lab.results = new Results(() => lab.run);
  lab.going = new GoingRuns($("going"), () => showScenarioError(null));
  lab.leaving = leaving;
  lab.kernel = new KernelPanel($("kernel-body"), () => start("/api/kernel/runs"));
  window.addEventListener("resize", () => { requestDraw(); });
  // Another tab (or a script) may have saved runs meanwhile.
  window.addEventListener("focus", () => lab.results.refresh());
  window.addEventListener("beforeunload", (ev) => {
    if (!leaving()) return;
    ev.preventDefault();
    ev.returnValue = ""; // older browsers ask only when this is set
  });
  const first = lab.scenarios.find((s) => s.id === "default.toml") || lab.scenarios[0];
  const back = await reattach().catch(() => false);
  if (!back && first) { $("picker").value = first.id; await pickScenario(first.id); }
  lab.results.refresh();
  lab.kernel.refresh();
  lab.ready = true;
  requestDraw();
}

init().catch((e) => showScenarioError({ error: `the page could not start: ${e.message}` }));
