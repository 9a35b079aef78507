// The scenario form: edits a scenario document (the JSON shape of a scenario file) and
// shows the server's errors beside the field they name, in the CLI's words. Every input
// carries its field path (data-field="flows[1].rtt"), the same path errors use.

import { el, shownDefault } from "./dom.js";
import { toToml } from "./toml.js";
import { flowColor } from "./charts.js";

/** A file name as the server takes a trace's name: letters, digits, '.', '_', '-'
 *  (anything else becomes '_'), not starting with '.', at most 100 characters. */
function traceName(file) {
  const name = file.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "").slice(0, 100);
  return name || "upload.trace";
}

/** A flow's colour dot. The colour is set through the element's style object: the
 *  page's CSP refuses inline style attributes. */
function dot(color) {
  const d = el("span", { class: "dot" });
  d.style.background = color;
  return d;
}

const QDISC_KEYS = {
  droptail: [],
  red: ["min_th", "max_th", "max_p", "weight", "gentle"],
  codel: ["target", "interval"],
  fq_codel: ["target", "interval"],
  pie: ["target", "tupdate", "alpha", "beta"],
};
const LOSS_KEYS = { bernoulli: ["p"], gilbert: ["p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad"] };
const FLOW_FIELDS = [
  ["name", "name", "text", "default: the algorithm"],
  ["rtt", "RTT", "text", "e.g. 80ms"],
  ["count", "count", "int", "1"],
  ["start", "start", "text", "0s"],
  ["stop", "stop", "text", "end of run"],
  ["bytes", "bytes", "text", "bulk"],
  ["rto_min", "rto_min", "text", "200ms"],
  ["initcwnd", "initcwnd", "int", "10"],
];
const FLOW_KNOWN = ["cc", "params", ...FLOW_FIELDS.map((f) => f[0])];
const CROSS_FIELDS = [
  ["rate", "rate", "text", "1Mbps"],
  ["count", "count", "int", "1"],
  ["start", "start", "text", "0s"],
  ["stop", "stop", "text", "end of run"],
  ["packet_size", "packet size", "text", "1500B"],
  ["mean_on", "mean on", "text", "500ms"],
  ["mean_off", "mean off", "text", "500ms"],
];

/** Splits "flows[1].params.beta" into ["flows", 1, "params", "beta"]. */
export function parsePath(path) {
  const out = [];
  for (const part of path.split(".")) {
    const m = part.match(/^([^[\]]+)((?:\[\d+\])*)$/);
    if (!m) { out.push(part); continue; }
    out.push(m[1]);
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

function setPath(doc, path, v) {
  const keys = parsePath(path);
  let o = doc;
  for (const k of keys.slice(0, -1)) {
    if (o[k] === undefined || o[k] === null || typeof o[k] !== "object") o[k] = {};
    o = o[k];
  }
  const last = keys[keys.length - 1];
  if (v === undefined) delete o[last]; else o[last] = v;
}

function getPath(doc, path) {
  let o = doc;
  for (const k of parsePath(path)) {
    if (o === undefined || o === null) return undefined;
    o = o[k];
  }
  return o;
}

/** An input's text as a document value: numbers where the field takes numbers, text
 *  otherwise (a bad number stays text, so the server names it). */
function parseValue(type, text) {
  const t = text.trim();
  if (t === "") return undefined;
  // A number with a fraction goes as a number, for the server to say so (as a string it
  // would be "found a string").
  // One too large for a double (1e400) stays text: as a number it would be Infinity.
  if (type === "int" && t !== "" && Number.isFinite(Number(t))) return Number(t);
  if (type === "num" && t !== "" && Number.isFinite(Number(t))) return Number(t);
  if (type === "buffer" && /^\d+$/.test(t)) return Number(t);
  if (type === "bool" && (t === "true" || t === "false")) return t === "true";
  return t;
}

/** The numbers `[[changes]]` give the flows of entry `i` (`flow = n` counts flows after
 *  `count` is expanded, disabled entries included): `{first, count}`, or null when an
 *  entry up to `i` draws its flows from `arrivals` or has a count that is not a number,
 *  so that the form cannot know them. */
function flowNumbers(flows, i) {
  let first = 0;
  for (let k = 0; k <= i; k++) {
    const f = flows[k];
    const count = f.count === undefined ? 1 : f.count;
    if (f.arrivals !== undefined || !Number.isInteger(count)) return null;
    if (k === i) return { first, count };
    first += count;
  }
  return null;
}

/** The numbers the run (its charts and table) gives the flows of entry `i`: as
 *  `flowNumbers`, but without disabled entries (`enabled = false`, or a count of 0),
 *  which the run leaves out. Null when the form cannot know them, or entry `i` is
 *  disabled. */
function runNumbers(flows, i) {
  const on = (f) => f.enabled !== false && f.count !== 0;
  const all = flowNumbers(flows, i);
  if (!all || !on(flows[i])) return null;
  const before = flows.slice(0, i).filter((f) => !on(f)).reduce((n, f) => n + (f.count === undefined ? 1 : f.count), 0);
  return { first: all.first - before, count: all.count };
}

/** The largest `count` a flow entry takes (the server's limit). */
const MAX_COUNT = 1_000_000;

/** `countBefore` after flow entry `i` is removed: its entry goes, later ones move up. */
function shiftedAfterRemoval(countBefore, i) {
  const out = new Map();
  for (const [field, v] of countBefore) {
    const k = Number(/^flows\[(\d+)\]/.exec(field)[1]);
    if (k !== i) out.set(`flows[${k > i ? k - 1 : k}].count`, v);
  }
  return out;
}

/** Whether flow number `n` is one of the block's (`flowNumbers`). */
function inBlock(block, n) {
  return n >= block.first && n < block.first + block.count;
}

/** The TCP-level settings a change may make besides an algorithm's parameters. */
const CHANGE_TCP_KEYS = ["rto_min", "initcwnd"];

function shown(v) {
  if (v === undefined || v === null) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export class ScenarioForm {
  /** `onChange(toml)` is called after every edit; `upload(name, text)` sends a trace
   *  file to the server and answers `{name, mean_rate_bps, traces}` (the traces now);
   *  `removeTrace(name)` deletes an uploaded trace. */
  constructor(root, { algorithms, traces, onChange, upload, removeTrace }) {
    this.root = root;
    this.algorithms = algorithms;
    this.traces = traces;
    this.onChange = onChange;
    this.upload = upload;
    this.removeTrace = removeTrace;
    this.doc = { bottleneck: {}, flows: [] };
    this.notes = {}; // field path -> what the form did there ("beta dropped: ...")
    this.countBefore = new Map(); // flows[i].count -> its value before an edit under way
    this.stale = null; // why the form takes no edits (`setStale`), or null
    root.addEventListener("input", (ev) => this.edited(ev.target));
    root.addEventListener("change", (ev) => this.edited(ev.target, true));
    root.addEventListener("click", (ev) => this.clicked(ev));
  }

  toml() {
    return toToml(this.doc);
  }

  load(doc) {
    this.setStale(null, false);
    this.notes = {};
    this.countBefore.clear();
    this.doc = structuredClone(doc || {});
    if (!this.doc.bottleneck) this.doc.bottleneck = {};
    if (!Array.isArray(this.doc.flows)) this.doc.flows = [];
    this.render();
  }

  algorithm(name) {
    return this.algorithms.find((a) => a.name === name);
  }

  edited(input, committed = false) {
    if (this.stale) return; // `setStale`: the form is inert, and no event gets through
    if (input.dataset.upload && committed) return this.uploadTrace(input);
    const field = input.dataset.field;
    if (!field) return;
    if (input.dataset.type === "link") return this.switchLink(input.value);
    if (input.dataset.type === "kind") return this.switchKind(field, input.value);
    // A select sends "input" then "change": the switch is made once, on the change.
    if (input.dataset.type === "algorithm") return committed && this.switchAlgorithm(Number(input.dataset.index), input.value);
    // A flow's count numbers the flows after it: the value before this edit is kept
    // until the edit is committed, for the scheduled changes to follow (`recounted`).
    const counted = /^flows\[(\d+)\]\.count$/.exec(field);
    if (counted && !this.countBefore.has(field)) this.countBefore.set(field, getPath(this.doc, field));
    setPath(this.doc, field, parseValue(input.dataset.type, input.value));
    if (counted && committed) {
      // Taken out first, so that a change sent again meanwhile finds nothing to renumber
      // (Chromium sends one when a redraw removes the focused input).
      const before = this.countBefore.get(field);
      this.countBefore.delete(field);
      if (!this.recounted(Number(counted[1]), before)) this.countBefore.set(field, before);
    }
    if (committed && input.dataset.rerender) this.render();
    else if (committed && counted) this.redrawFlowLabels();
    this.onChange(this.toml());
  }

  switchLink(v) {
    const b = this.doc.bottleneck;
    if (v === "rate") { delete b.trace; b.rate = b.rate || "10Mbps"; } else { delete b.rate; b.trace = v; }
    this.render();
    this.onChange(this.toml());
  }

  /** A trace file chosen in the page: uploaded under its file name made a trace name
   *  (the server checks it is a mahimahi trace and keeps it among the uploads), then
   *  chosen as the link. The server's refusal shows beside the link. */
  async uploadTrace(input) {
    const file = input.files && input.files[0];
    if (!file) return;
    const name = traceName(file.name);
    const renamed = name === file.name ? "" : ` as ${name} (a trace's name is letters, digits, '.', '_', '-')`;
    const msg = this.root.querySelector('[data-msg="bottleneck.trace"]');
    msg.textContent = "";
    this.notes["bottleneck.trace"] = `uploading ${file.name}${renamed}\u2026`;
    this.showNote("bottleneck.trace");
    try {
      const r = await this.upload(name, await file.text());
      this.traces = r.traces;
      this.notes["bottleneck.trace"] = `uploaded ${file.name}${renamed}: ${(r.mean_rate_bps / 1e6).toPrecision(3)} Mbit/s on average`;
      this.switchLink(r.name);
    } catch (e) {
      this.notes["bottleneck.trace"] = "";
      this.showNote("bottleneck.trace");
      msg.textContent = e.status === 409
        ? `${name} is already uploaded: choose "trace: ${name}" as the link, or rename the file and upload it again to keep both`
        : `${file.name}: ${e.message}`;
      input.value = "";
    }
  }

  /** Deletes the uploaded trace the link uses (after asking); the link becomes a
   *  constant rate. Runs already started keep their own copy of the trace. A 404 means
   *  it was deleted meanwhile (from another tab): gone all the same. */
  async deleteTrace(name) {
    if (!confirm(`Delete the uploaded trace "${name}"? Runs already started keep it; new ones cannot use it.`)) return;
    let done = `deleted ${name}`;
    try {
      await this.removeTrace(name);
    } catch (e) {
      if (e.status !== 404) {
        this.notes["bottleneck.trace"] = "";
        this.showNote("bottleneck.trace");
        this.root.querySelector('[data-msg="bottleneck.trace"]').textContent = `${name} was not deleted: ${e.message}`;
        return;
      }
      done = `${name} was already deleted`;
    }
    this.traces = this.traces.filter((t) => t.name !== name);
    // Another scenario or link may have been chosen while the request was out.
    if (this.doc.bottleneck.trace !== name) return this.render();
    this.notes["bottleneck.trace"] = `${done}: the link is a constant rate again`;
    this.switchLink("rate");
  }

  /** Flow entry `i` switches to algorithm `cc`. It keeps only the parameters `cc` has
   *  (another algorithm's parameter would be refused); the form says which went. A kept
   *  one that `cc` describes otherwise is pointed out, as its meaning may differ: cubic's
   *  beta is the fraction of the window kept, cubic-2008's the fraction given up. */
  switchAlgorithm(i, cc) {
    const f = this.doc.flows[i];
    const was = (this.algorithm(f.cc) || {}).params || [];
    f.cc = cc;
    const now = (this.algorithm(cc) || {}).params || [];
    const spec = (list, k) => list.find((p) => p.name === k);
    const has = (k) => spec(now, k) !== undefined;
    const given = Object.keys(f.params || {});
    const missing = given.filter((k) => !has(k));
    for (const k of missing) delete f.params[k];
    if (f.params && !Object.keys(f.params).length) delete f.params;
    const notes = [];
    if (missing.length) notes.push(`${missing.join(", ")} dropped: ${cc} has no such ${missing.length === 1 ? "parameter" : "parameters"}`);
    const changed = this.dropChangedParams(i, (k) => has(k) || CHANGE_TCP_KEYS.includes(k));
    if (changed) notes.push(changed);
    // Kept in the flow or its scheduled changes, and described otherwise by `cc`.
    const block = flowNumbers(this.doc.flows, i);
    const inChanges = (this.doc.changes || []).filter((c) => block && inBlock(block, c.flow) && c.set).flatMap((c) => Object.keys(c.set));
    const described = [...new Set([...Object.keys(f.params || {}), ...inChanges])]
      .filter((k) => has(k) && spec(was, k) && spec(was, k).doc !== spec(now, k).doc);
    for (const k of described) notes.push(`${k} kept: check its value, as ${cc} describes it otherwise ("${spec(now, k).doc}"; before: "${spec(was, k).doc}")`);
    this.notes[`flows[${i}].params`] = notes.join("; ");
    this.render();
    this.onChange(this.toml());
  }

  /** Keeps in the scheduled changes of flow entry `i` only the settings `keep` accepts
   *  (a change to a parameter the flow's algorithm no longer has would be refused);
   *  a change left with nothing to set goes. Says what went, or "". */
  dropChangedParams(i, keep) {
    const block = flowNumbers(this.doc.flows, i);
    const changes = this.doc.changes || [];
    if (!block || !changes.length) return "";
    const gone = [];
    this.doc.changes = changes.filter((c) => {
      if (!inBlock(block, c.flow) || !c.set) return true;
      const dropped = Object.keys(c.set).filter((k) => !keep(k));
      for (const k of dropped) { delete c.set[k]; gone.push(`${k} at ${c.at}`); }
      return Object.keys(c.set).length > 0;
    });
    if (!this.doc.changes.length) delete this.doc.changes;
    return gone.length ? `scheduled ${gone.length === 1 ? "change" : "changes"} dropped: ${gone.join(", ")}` : "";
  }

  /** Removes flow entry `i` and its scheduled changes; later flows' changes, and a
   *  `[metrics] reference` given as a flow number, follow their flows' new numbers.
   *  Says what happened to them, or "". */
  removeFlow(i) {
    const block = flowNumbers(this.doc.flows, i);
    this.doc.flows.splice(i, 1);
    return this.renumber(i, block, 0);
  }

  /** Flow entry `i`'s block of flow numbers (`block`, as `flowNumbers` gave it before
   *  the edit) now holds `count` flows: the scheduled changes and a numbered `[metrics]
   *  reference` of flows past its new end go with them, and those of later entries follow
   *  their flows' new numbers. Says what happened to them, or "". */
  renumber(i, block, count) {
    const changes = this.doc.changes || [];
    const metrics = this.doc.metrics;
    const numbered = metrics && Number.isInteger(metrics.reference);
    if (!changes.length && !numbered) return "";
    if (!block) return "the scheduled changes and the metrics' reference keep their flow numbers (the form cannot number the flows: an entry up to this one draws them from arrivals or has a count that is not a whole number): check them";
    const end = block.first + block.count;
    const shift = count - block.count;
    const gone = (n) => n >= block.first + count && n < end;
    const said = [];
    if (numbered && gone(metrics.reference)) {
      said.push(`the metrics' reference (flow ${metrics.reference}) removed with its flow`);
      delete metrics.reference;
    } else if (numbered && metrics.reference >= end && shift) {
      metrics.reference += shift;
      said.push(`the metrics' reference renumbered to flow ${metrics.reference}`);
    }
    if (!changes.length) return said.join("; ");
    const kept = changes.filter((c) => !gone(c.flow));
    let moved = 0;
    for (const c of kept) if (Number.isInteger(c.flow) && c.flow >= end && shift) { c.flow += shift; moved++; }
    const removed = changes.length - kept.length;
    if (kept.length) this.doc.changes = kept; else delete this.doc.changes;
    if (removed) said.unshift(`${removed} scheduled ${removed === 1 ? "change" : "changes"} of flows[${i}] removed`);
    if (moved) said.push(`${moved === 1 ? "the change" : `the ${moved} changes`} of later flows renumbered`);
    return said.join("; ");
  }

  /** Flow entry `i`'s count was changed (committed) from `before` (undefined: 1): the
   *  changes and reference follow, as for a removal. Returns whether the edit is done
   *  with (false while the count is not a whole number, so that the next valid one is
   *  taken from `before`). */
  recounted(i, before) {
    const block = flowNumbers(this.doc.flows, i);
    const valid = (n) => Number.isInteger(n) && n >= 1 && n <= MAX_COUNT;
    const count = this.doc.flows[i].count === undefined ? 1 : this.doc.flows[i].count;
    if (!valid(count)) return false; // the server refuses it; the next valid one is taken
    const old = before === undefined ? 1 : before;
    if (!valid(old) || old === count) return true;
    const said = this.renumber(i, block && { first: block.first, count: old }, count);
    if (said) {
      this.notes.flows = said;
      this.showNote("flows");
      this.redrawChanges();
    }
    return true;
  }

  /** A qdisc or loss model chosen by kind: a plain name, or a table with the kind. A
   *  random loss starts at p = 0.01: p = 0 is no loss, and shows as none. */
  switchKind(field, kind) {
    const table = field.endsWith("qdisc") ? kind !== "droptail" && kind !== "" : kind === "gilbert";
    let v;
    if (kind === "") v = undefined;
    else if (field.endsWith("loss")) v = kind === "gilbert" ? { kind } : 0.01;
    else v = table ? { kind } : kind;
    setPath(this.doc, field, v);
    this.render();
    this.onChange(this.toml());
  }

  clicked(ev) {
    const b = ev.target.closest("button[data-act]");
    if (!b || this.stale) return;
    ev.preventDefault();
    const i = Number(b.dataset.index);
    const act = b.dataset.act;
    // A new flow takes the last one's RTT, which fits the bottleneck's delay; 80 ms may not.
    if (act === "add-flow") this.doc.flows.push({ cc: "cubic", rtt: this.doc.flows.length ? this.doc.flows[this.doc.flows.length - 1].rtt || "80ms" : "80ms" });
    let removed = "";
    if (act === "del-flow") { removed = this.removeFlow(i); this.countBefore = shiftedAfterRemoval(this.countBefore, i); }
    if (act === "add-cross") (this.doc.cross = this.doc.cross || []).push({ kind: "cbr", rate: "1Mbps" });
    if (act === "del-cross") this.doc.cross.splice(i, 1);
    if (act === "del-change") this.doc.changes.splice(i, 1);
    if (act === "del-param") this.removeParam(i, b.dataset.param);
    if (act === "del-trace") return this.deleteTrace(b.dataset.trace);
    if (act === "del-flow") this.notes = removed ? { flows: removed } : {}; // they name flows by index
    this.render();
    this.onChange(this.toml());
  }

  removeParam(i, name) {
    const f = this.doc.flows[i];
    delete f.params[name];
    if (!Object.keys(f.params).length) delete f.params;
  }

  /** What the form did at `field`, if anything (kept across renders). */
  note(field) {
    return el("div", { class: "note", "data-note": field, text: this.notes[field] || "" });
  }

  showNote(field) {
    const n = this.root.querySelector(`[data-note="${CSS.escape(field)}"]`);
    if (n) n.textContent = this.notes[field] || "";
  }

  input(field, type, placeholder, extra = {}) {
    return el("input", {
      "data-field": field, "data-type": type, value: shown(getPath(this.doc, field)),
      placeholder, "aria-label": field, ...extra,
    });
  }

  row(label, control, field) {
    return el("div", { class: "field", "data-for": field },
      el("label", { text: label }), control, el("div", { class: "msg", "data-msg": field }));
  }

  /** While the TOML tab holds text that has not parsed (`why`: "is being checked", "does
   *  not parse (the server's words)", ...), the form shows the scenario as it last parsed
   *  and takes no edits: an edit would write that older scenario over the text. `null`
   *  once the text parses again. */
  setStale(why, rerender = true) {
    if ((this.stale || null) === why) return;
    this.stale = why;
    this.root.inert = Boolean(why);
    if (rerender) this.render();
  }

  render() {
    const stale = this.stale && el("p", { class: "stale", "data-stale": "",
      text: `The TOML tab's text ${this.stale}. Until it parses, the form shows the scenario as it last parsed and takes no edits.` });
    const sections = [stale, this.runSection(), this.bottleneckSection(), this.flowsSection(),
      this.crossSection(), this.changesSection()];
    this.root.replaceChildren(...sections.filter(Boolean));
  }

  runSection() {
    return el("fieldset", {}, el("legend", { text: "Run" }),
      this.row("name", this.input("name", "text", "the file's name"), "name"),
      this.row("duration", this.input("duration", "text", "e.g. 60s"), "duration"),
      this.row("seed", this.input("seed", "int", "1"), "seed"),
      this.row("sampling", this.input("sample_interval", "text", "10ms"), "sample_interval"));
  }

  bottleneckSection() {
    const b = this.doc.bottleneck;
    const link = el("select", { "data-field": "bottleneck.link", "data-type": "link", "aria-label": "link" },
      el("option", { value: "rate", text: "constant rate" }),
      ...this.traces.map((t) => el("option", { value: t.name, text: `trace: ${t.name}` })));
    link.value = b.trace !== undefined ? b.trace : "rate";
    const upload = el("input", {
      type: "file", "data-upload": "1", accept: ".trace,.txt,text/plain", "aria-label": "upload a trace",
      title: "A mahimahi trace: one whole number of milliseconds per line, each a 1500-byte delivery opportunity. It is kept in the server's results folder.",
    });
    const uploaded = this.traces.some((t) => t.name === b.trace && t.origin === "uploaded");
    const remove = uploaded && el("button", {
      type: "button", class: "delete", "data-act": "del-trace", "data-trace": b.trace, text: "delete upload",
      title: `delete the uploaded trace ${b.trace} from the server`,
    });
    const rows = [el("legend", { text: "Bottleneck" }), this.row("link", link, "bottleneck.trace"),
      el("div", { class: "field" }, el("label", { text: "upload trace" }), upload, remove, this.note("bottleneck.trace"))];
    if (b.trace === undefined) rows.push(this.row("rate", this.input("bottleneck.rate", "text", "e.g. 12Mbps"), "bottleneck.rate"));
    rows.push(
      this.row("delay", this.input("bottleneck.delay", "text", "one way, e.g. 10ms"), "bottleneck.delay"),
      this.row("buffer", this.input("bottleneck.buffer", "buffer", "1bdp, 100pkt, 120KB"), "bottleneck.buffer"),
      ...this.kindRows("bottleneck.qdisc", "qdisc", Object.keys(QDISC_KEYS), QDISC_KEYS, "droptail"),
      ...this.lossRows());
    return el("fieldset", {}, ...rows);
  }

  /** A kind selector and, for table forms, one input per key. */
  kindRows(field, label, kinds, keysOf, plain) {
    const v = getPath(this.doc, field);
    const kind = typeof v === "object" && v ? v.kind : v || "";
    const sel = el("select", { "data-field": field, "data-type": "kind", "aria-label": field },
      el("option", { value: "", text: `default (${plain})` }), ...kinds.map((k) => el("option", { value: k, text: k })));
    sel.value = kind;
    const rows = [this.row(label, sel, field)];
    if (v && typeof v === "object") {
      for (const key of keysOf[kind] || []) {
        const type = key === "gentle" ? "bool" : ["target", "interval", "tupdate"].includes(key) ? "text" : "num";
        rows.push(this.row(`  ${key}`, this.input(`${field}.${key}`, type, "default"), `${field}.${key}`));
      }
    }
    return rows;
  }

  lossRows() {
    const v = this.doc.bottleneck.loss;
    // loss = 0 is what "none" means (a ready scenario may write it to say so).
    const none = v === undefined || v === 0;
    const kind = none ? "" : typeof v === "object" ? v.kind : "bernoulli";
    const sel = el("select", { "data-field": "bottleneck.loss", "data-type": "kind", "aria-label": "loss model" },
      el("option", { value: "", text: v === 0 ? "none (loss = 0)" : "none" }), el("option", { value: "bernoulli", text: "random (Bernoulli)" }),
      el("option", { value: "gilbert", text: "bursts (Gilbert-Elliott)" }));
    sel.value = kind;
    const rows = [this.row("loss", sel, "bottleneck.loss.kind")];
    if (!none && (typeof v === "number" || typeof v === "string")) {
      rows.push(this.row("  p", this.input("bottleneck.loss", "num", "0.01"), "bottleneck.loss"));
    } else if (v && typeof v === "object") {
      for (const key of LOSS_KEYS[v.kind] || []) {
        rows.push(this.row(`  ${key}`, this.input(`bottleneck.loss.${key}`, "num", ""), `bottleneck.loss.${key}`));
      }
    }
    return rows;
  }

  flowsSection() {
    const items = this.doc.flows.map((f, i) => this.flowItem(f, i));
    // The note below the button: a count committed by a click on it shows a note, which
    // above it would move the button from under the pointer and lose the click.
    return el("fieldset", {}, el("legend", { text: "Flows" }), ...items,
      el("div", { class: "msg", "data-msg": "flows" }),
      el("button", { class: "add small", "data-act": "add-flow", text: "+ flow" }), this.note("flows"));
  }

  flowItem(f, i) {
    const p = `flows[${i}]`;
    const cc = el("select", { "data-field": `${p}.cc`, "data-type": "algorithm", "data-index": i, "aria-label": `${p}.cc` },
      ...this.algorithms.map((a) => el("option", { value: a.name, text: a.name })));
    cc.value = f.cc || "";
    const head = el("div", { class: "item-head" }, this.flowLabel(i),
      el("button", { class: "small", "data-act": "del-flow", "data-index": i, text: "remove" }));
    const rows = [head, this.row("algorithm", cc, `${p}.cc`)];
    for (const [key, label, type, ph] of FLOW_FIELDS) rows.push(this.row(label, this.input(`${p}.${key}`, type, ph), `${p}.${key}`));
    rows.push(this.paramsBlock(f, p));
    const other = Object.keys(f).filter((k) => !FLOW_KNOWN.includes(k));
    if (other.length) rows.push(el("div", { class: "other", text: other.map((k) => `${k} = ${shown(f[k])}`).join("; ") }));
    return el("div", { class: "item", "data-for": p }, ...rows);
  }

  /** One input per parameter of the flow's algorithm, defaults as placeholders; a
   *  parameter the algorithm does not have (written in the TOML) with a remove button. */
  paramsBlock(f, p) {
    const algo = this.algorithm(f.cc);
    const specs = algo ? algo.params : [];
    const det = el("details", { class: "params" }, el("summary", { text: `parameters (${specs.length})` }));
    if ((f.params && Object.keys(f.params).length) || this.notes[`${p}.params`]) det.open = true;
    det.append(this.note(`${p}.params`));
    const i = parsePath(p)[1];
    for (const name of Object.keys(f.params || {}).filter((k) => !specs.some((s) => s.name === k))) {
      const field = `${p}.params.${name}`;
      det.append(this.row(name, el("div", { class: "item-head" }, el("span", { class: "other", text: `= ${shown(f.params[name])}` }),
        el("button", { class: "small", "data-act": "del-param", "data-index": i, "data-param": name, text: "remove" })), field));
    }
    for (const s of specs) {
      const field = `${p}.params.${s.name}`;
      const type = s.kind === "bool" ? "bool" : s.kind === "int" ? "int" : "num";
      const input = this.input(field, type, shownDefault(s), { title: `${s.doc}; allowed: ${s.allowed}${s.unit ? ` (${s.unit})` : ""}` });
      det.append(this.row(s.name, input, field));
    }
    det.append(el("div", { class: "msg", "data-msg": `${p}.params` }));
    return det;
  }

  crossSection() {
    const items = (this.doc.cross || []).map((c, i) => {
      const p = `cross[${i}]`;
      const kind = el("select", { "data-field": `${p}.kind`, "data-type": "text", "aria-label": `${p}.kind` },
        ...["cbr", "poisson", "exponential"].map((k) => el("option", { value: k, text: k })));
      kind.value = c.kind || "cbr";
      const rows = [el("div", { class: "item-head" }, el("span", { text: `source ${i}` }),
        el("button", { class: "small", "data-act": "del-cross", "data-index": i, text: "remove" })),
      this.row("kind", kind, `${p}.kind`)];
      for (const [key, label, type, ph] of CROSS_FIELDS) rows.push(this.row(label, this.input(`${p}.${key}`, type, ph), `${p}.${key}`));
      return el("div", { class: "item", "data-for": p }, ...rows);
    });
    return el("fieldset", {}, el("legend", { text: "Cross traffic (UDP)" }), ...items,
      el("button", { class: "add small", "data-act": "add-cross", text: "+ source" }));
  }

  changesSection() {
    const changes = this.doc.changes || [];
    if (!changes.length) return null;
    const items = changes.map((c, i) => el("div", { class: "item", "data-for": `changes[${i}]` },
      el("div", { class: "item-head" }, el("span", { text: `at ${c.at}: flow ${c.flow} ${shown(c.set)}` }),
        el("button", { class: "small", "data-act": "del-change", "data-index": i, text: "remove" })),
      el("div", { class: "msg", "data-msg": `changes[${i}]` })));
    return el("fieldset", { "data-section": "changes" }, el("legend", { text: "Scheduled changes" }), ...items);
  }

  /** Entry `i`'s label: the colour the charts give its (first) flow, and its numbers
   *  there when they are not the entry's own (a count, or a disabled entry before it). */
  flowLabel(i) {
    const run = runNumbers(this.doc.flows, i);
    const last = run && run.first + run.count - 1;
    const inCharts = !run ? "" : run.count > 1 ? ` (charts: ${run.first} to ${last})` : run.first !== i ? ` (charts: ${run.first})` : "";
    return el("span", { "data-label": `flows[${i}]` }, dot(run ? flowColor(run.first) : "#d0d5dd"), `flow ${i}`,
      el("span", { class: "unit", text: inCharts }));
  }

  /** The flow entries' labels again, after a count moved the numbers (the rest of the
   *  form stays, with the focus and click that committed the count). */
  redrawFlowLabels() {
    for (const old of this.root.querySelectorAll("[data-label]")) {
      old.replaceWith(this.flowLabel(Number(/\d+/.exec(old.dataset.label)[0])));
    }
  }

  /** Draws the scheduled changes again, and nothing else (a whole redraw would replace
   *  the element a click or the focus is on, and lose it). */
  redrawChanges() {
    const old = this.root.querySelector('[data-section="changes"]');
    const now = this.changesSection();
    if (old && now) old.replaceWith(now);
    else if (old) old.remove();
    else if (now) this.root.append(now);
  }

  /** Shows a server error beside the field it names (or the nearest enclosing one);
   *  returns the message element, or null when no field matched, so the caller shows
   *  it above the form. */
  showError(err) {
    this.clearErrors();
    const field = (err && err.field) || "";
    const parts = parsePath(field);
    for (let n = parts.length; n > 0; n--) {
      const path = parts.slice(0, n).reduce((acc, k) => (typeof k === "number" ? `${acc}[${k}]` : acc ? `${acc}.${k}` : k), "");
      const msg = this.root.querySelector(`[data-msg="${CSS.escape(path)}"]`);
      if (msg) {
        msg.textContent = err.error;
        const input = this.root.querySelector(`[data-field="${CSS.escape(path)}"]`);
        if (input) input.classList.add("bad");
        return msg;
      }
    }
    return null;
  }

  clearErrors() {
    for (const m of this.root.querySelectorAll(".msg")) m.textContent = "";
    for (const b of this.root.querySelectorAll(".bad")) b.classList.remove("bad");
  }
}
