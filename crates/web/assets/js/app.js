// The lab page: wires the scenario form, the run controls, the live charts and table,
// the tuning panel, results and the kernel panel. `window.lab` holds the page's state
// (the current run's data included), for the curious and for the browser test.

import { get, post } from "./api.js";
import { Chart, flowColor } from "./charts.js";
import { ScenarioForm } from "./form.js";
import { LiveRun, cubicCurve } from "./live.js";
import { TunePanel } from "./tune.js";
import { Results } from "./results.js";
import { KernelPanel } from "./kernel.js";

const $ = (id) => document.getElementById(id);
const lab = { run: null, speed: "100x", file: "scenario.toml", toml: "", last: {} };
window.lab = lab;

/** Calls `f` once things have been quiet for `ms`. */
function debounce(f, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => f(...args), ms); };
}

// ----- scenario -----

/** Shows a refusal of the scenario: beside its field in the form, and in the box above
 *  the editor as well when the form is not what the user is looking at (the TOML tab). */
function showScenarioError(err) {
  lab.scenarioError = err;
  const box = $("scenario-error");
  const placed = err && lab.form.showError(err);
  const seen = placed && !$("form").hidden;
  box.hidden = !err || seen;
  box.textContent = err && !seen ? err.error : "";
}

/** Checks the scenario text; the form follows a TOML edit when the text parses. */
async function check(fromToml) {
  try {
    const r = await post("/api/scenarios/check", { toml: lab.toml, file: lab.file });
    if (fromToml) lab.form.load(r.doc);
    lab.form.clearErrors();
    showScenarioError(null);
    return true;
  } catch (e) {
    if (fromToml && e.body.doc) lab.form.load(e.body.doc);
    showScenarioError(e.body && e.body.error ? e.body : { error: e.message });
    return false;
  }
}
const checkSoon = debounce(check, 300);

function scenarioEdited(toml, source) {
  lab.toml = toml;
  if (source === "form") $("toml").value = toml;
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
  showPicked();
  $("toml").value = s.toml;
  await check(true);
}

function setupScenario(scenarios, traces) {
  lab.form = new ScenarioForm($("form"), { algorithms: lab.algorithms, traces, onChange: (t) => scenarioEdited(t, "form") });
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

/** Watches a run the server has started (simulated or on the testbed) of `toml`. */
function attachRun(status, toml) {
  if (lab.run) {
    lab.run.close();
    lab.last[lab.run.testbed ? "real" : "simulated"] = lab.run;
  }
  lab.form.clearErrors();
  showScenarioError(null);
  lab.status = status;
  lab.run = new LiveRun(status.id, {
    onUpdate: () => requestDraw(),
    onSave: (s) => lab.results.saved(s),
    onClose: () => requestDraw(),
  });
  Object.assign(lab.run, { toml, testbed: Boolean(status.testbed) });
  lab.tune.setRun(status.flows, status.testbed);
  $("save-note").textContent = "";
}

/** Starts the scenario in the simulator, or (`path` = /api/kernel/runs) on the testbed.
 *  A run still going is stopped first, as Stop would (Start means start over, and a
 *  forgotten run would hold one of the server's run slots until it ended), but only
 *  once the scenario is known to be good: a refused Start leaves the run going. */
async function start(path = "/api/runs") {
  $("start").disabled = true;
  try {
    const going = lab.run && (lab.run.state === "running" || lab.run.state === "paused");
    if (going && !(await check(false))) return;
    if (going) await control("stop");
    const body = { toml: lab.toml, file: lab.file };
    if (path === "/api/runs") body.speed = lab.speed;
    attachRun(await post(path, body), lab.toml);
  } catch (e) {
    showScenarioError(e.body && e.body.error ? e.body : { error: e.message });
    throw e;
  } finally {
    $("start").disabled = false;
  }
}

async function control(action, extra = {}) {
  if (!lab.run) return;
  try {
    await post(`/api/runs/${lab.run.id}/control`, { action, ...extra });
  } catch (e) {
    $("status").textContent = e.message;
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
      if (lab.run && (lab.run.state === "running" || lab.run.state === "paused")) control("speed", { speed: lab.speed });
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

function flowSeries(run, pick, extra = {}) {
  return run.flows.map((f) => ({ name: f.name, color: flowColor(f.id), points: pick(f.id), ...extra }));
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

/** A bucket's length as the drops caption gives it ("60 ms"). */
function bucketText(seconds) {
  return seconds ? `${+(seconds * 1000).toPrecision(3)} ms` : "bucket";
}

function markers(run) {
  return run.changes().slice(-30).map((c) => ({ t: c.t, label: `f${c.flow} ${c.name}=${typeof c.value === "number" ? +c.value.toFixed(4) : c.value}`, color: c.source === "live" ? "#b54708" : "#475467" }));
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
    c.queue.set({ ...common, series: both((r) => [{ name: `queue (max per ${bucketText(r.bucketS)})`, color: "#344054", points: r.queue() }]), bars: { points: run.drops(), color: "#d92d20", label: `drops per ${bucketText(run.bucketS)}` } });
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
  $("fairness").textContent = `Jain's index ${tb.jain.toFixed(4)} \u00b7 utilisation ${(tb.utilization * 100).toFixed(1)}% \u00b7 drops ${tb.drops}`;
}

function drawStatus() {
  const run = lab.run;
  const state = run ? run.state || "starting" : "idle";
  const pill = $("status");
  pill.textContent = run && run.reason ? `${state}: ${run.reason}` : state;
  pill.className = `pill ${state}`;
  const active = state === "running" || state === "paused";
  const testbed = Boolean(lab.status && lab.status.testbed);
  $("pause").disabled = !active || testbed; // real TCP cannot be paused
  $("pause").textContent = state === "paused" ? "Resume" : "Pause";
  $("stop").disabled = !active;
  $("save").disabled = !run || state === "stopped" || testbed;
  lab.tune.setEnabled(active);
  $("clock").textContent = run && run.duration ? `${(run.now || 0).toFixed(1)} / ${run.duration} s \u00b7 ${run.speed}` : "";
}

/** Draws soon after something changed: at once, or when 16 ms have passed since the
 *  last draw, so every frame the server sends (20 a second) is drawn even where the
 *  browser's animation frames are slow (a busy headless browser gives ~20 a second). */
function requestDraw() {
  if (lab.drawPending) return;
  lab.drawPending = true;
  const wait = Math.max(0, 16 - (performance.now() - (lab.lastDraw || 0)));
  setTimeout(draw, wait);
}

function draw() {
  lab.drawPending = false;
  lab.lastDraw = performance.now();
  const t0 = performance.now();
  drawCharts();
  drawTable();
  drawStatus();
  lab.tune.showBackoff(lab.run);
  lab.frames = (lab.frames || 0) + 1;
  // Draw times of the last 200 frames (ms), to check the charts keep up.
  lab.drawMs = [...(lab.drawMs || []).slice(-199), performance.now() - t0];
}

async function init() {
  const [algs, scen, traces] = await Promise.all([get("/api/algorithms"), get("/api/scenarios"), get("/api/traces")]);
  lab.algorithms = algs.algorithms;
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
  lab.kernel = new KernelPanel($("kernel-body"), () => start("/api/kernel/runs"));
  window.addEventListener("resize", () => { requestDraw(); });
  const first = lab.scenarios.find((s) => s.id === "default.toml") || lab.scenarios[0];
  if (first) { $("picker").value = first.id; await pickScenario(first.id); }
  lab.results.refresh();
  lab.kernel.refresh();
  lab.ready = true;
  requestDraw();
}

init().catch((e) => showScenarioError({ error: `the page could not start: ${e.message}` }));
