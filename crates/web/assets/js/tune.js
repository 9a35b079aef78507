// Tune live: the controls of the selected flow, generated from its algorithm's parameter
// descriptions (name, unit, range, default, meaning as a tooltip). TCPTuner's controls
// come first (alpha, beta, fast convergence, TCP friendliness, then the route's rto_min
// and initcwnd), then every other parameter. A change is applied to the running flow at
// the current simulated time; a refusal is shown beside the control.
import { el, shownDefault } from "./dom.js";

const TCPTUNER_FIRST = ["alpha", "beta", "fast_convergence", "tcp_friendliness"];
/** Slider ends for ranges too wide to slide through (the number box takes the rest). */
const SLIDER_MAX = { rto_min: 1000, initcwnd: 100 };

function step(spec) {
  if (spec.kind !== "float") return 1;
  const span = (SLIDER_MAX[spec.name] || spec.max) - spec.min;
  return 10 ** Math.floor(Math.log10(span / 100));
}

/** Controls in TCPTuner's order: its four first, the TCP pair, then the rest. */
export function orderedSpecs(algo, tcpParams) {
  const params = algo ? algo.params : [];
  const first = TCPTUNER_FIRST.map((n) => params.find((p) => p.name === n)).filter(Boolean);
  const rest = params.filter((p) => !TCPTUNER_FIRST.includes(p.name));
  return [...first, ...tcpParams.map((p) => ({ ...p, tcp: true })), ...rest];
}

/** The algorithms with a BPF build whose parameters a testbed run can change. */
const BPF_ALGORITHMS = ["tuner", "cubic-fit"];

export class TunePanel {
  constructor({ root, select, note, algorithms, tcpParams, apply }) {
    Object.assign(this, { root, select, note, algorithms, tcpParams, apply });
    this.values = {}; // "flow.name" -> current value
    this.enabled = false;
    select.addEventListener("change", () => this.render());
  }

  /** A new run: its flows in the selector, values from the scenario and then from the
   *  live changes made so far (`changes`, as the run's status lists them: a run watched
   *  again after a reload has some). */
  setRun(flows, testbed = false, changes = []) {
    this.flows = flows;
    this.testbed = testbed;
    this.base = {};
    for (const f of flows) {
      for (const [k, v] of Object.entries(f.params || {})) this.base[`${f.id}.${k}`] = v;
      this.base[`${f.id}.rto_min`] = f.rto_min_ms;
      this.base[`${f.id}.initcwnd`] = f.initcwnd;
    }
    this.followed = {};
    this.values = {};
    this.follow(changes);
    this.select.replaceChildren(...flows.map((f) => el("option", { value: f.id, text: `${f.id}: ${f.name} (${f.cc})` })));
    const tunable = flows.find((f) => f.cc === "tuner") || flows[0];
    if (tunable) this.select.value = tunable.id;
    this.note.textContent = testbed
      ? "Real TCP: rto_min and initcwnd change the flow's route; the parameters of cclab's BPF algorithms (tuner, cubic-fit) change their kernel map, shared by every flow using it, until the run ends."
      : "Changes apply to the running flow at the current simulated time and are marked on the charts.";
    this.render();
  }

  /** Takes the run's changes so far, scheduled (`[[changes]]`) and live, in time order:
   *  the controls show the value each flow has now, so that a nudge starts from it. A
   *  value only moves when the changes move it (`followed`, what they said last time),
   *  not when a frame sent before a change just applied arrives; and a number box being
   *  typed in is left as it is until it is left. */
  follow(changes) {
    const now = { ...this.base };
    for (const c of changes) now[`${c.flow}.${c.name}`] = c.value;
    for (const [key, v] of Object.entries(now)) {
      if (v === this.followed[key]) continue;
      this.values[key] = v;
      const control = this.shows && this.shows[key];
      const typing = control && control.box.contains(document.activeElement) && document.activeElement.type === "number";
      if (typing) now[key] = this.followed[key]; // shown once the box is left
      else if (control) control.shown(v);
    }
    this.followed = now;
  }

  selected() {
    return Number(this.select.value);
  }

  render() {
    const flow = this.flows && this.flows[this.selected()];
    if (!flow) { this.root.replaceChildren(); return; }
    // On the testbed only cclab's BPF algorithms have parameters cclab can change.
    const kernelOwn = this.testbed && !BPF_ALGORITHMS.includes(flow.cc);
    const algo = kernelOwn ? null : this.algorithms.find((a) => a.name === flow.cc);
    this.measured = el("div", { class: "measured", id: "measured" }, "no back-off yet");
    this.shows = {}; // "flow.name" -> its control's box, and what puts a value in it
    const knobs = orderedSpecs(algo, this.tcpParams).map((s) => this.knob(flow.id, s));
    this.root.replaceChildren(this.measured, ...knobs);
    this.setEnabled(this.enabled);
  }

  current(flow, spec) {
    const v = this.values[`${flow}.${spec.name}`];
    return v === undefined ? spec.default : v;
  }

  knob(flow, spec) {
    const value = this.current(flow, spec);
    const tip = `${spec.doc}. Allowed: ${spec.allowed}${spec.unit ? ` ${spec.unit}` : ""}; default ${shownDefault(spec)}.`;
    const msg = el("div", { class: "msg" });
    const head = el("div", { class: "knob-head" }, el("label", { title: tip, text: spec.name }),
      el("span", { class: "unit", text: spec.unit || "" }));
    const box = el("div", { class: `knob${spec.tcp ? " tcp" : ""}`, "data-param": spec.name }, head);
    if (spec.kind === "bool") {
      const cb = el("input", { type: "checkbox", id: `tune-${spec.name}`, title: tip });
      cb.checked = value !== 0 && value !== false;
      const shown = (v) => { cb.checked = v !== 0 && v !== false; };
      this.shows[`${flow}.${spec.name}`] = { box, shown };
      cb.addEventListener("change", () => this.send(flow, spec, cb.checked ? 1 : 0, msg, shown));
      box.append(el("label", { class: "switch" }, cb, spec.doc));
    } else {
      box.append(this.slider(flow, spec, value, tip, msg, box));
    }
    box.append(msg);
    return box;
  }

  /** A slider and a number box. The slider's end for a wide range (SLIDER_MAX) moves
   *  out to a larger value taken from the box, so the slider never sits at its end
   *  while the flow has more. */
  slider(flow, spec, value, tip, msg, box) {
    const st = step(spec);
    const lo = spec.min_exclusive ? spec.min + st : spec.min;
    const hi = Math.min(spec.max, SLIDER_MAX[spec.name] || spec.max);
    const range = el("input", { type: "range", id: `tune-slider-${spec.name}`, min: lo, max: Math.max(hi, value), step: st, title: tip });
    range.value = value; // after max, which may have been moved out for it
    const num = el("input", { type: "number", id: `tune-${spec.name}`, step: st, value, title: tip });
    const shown = (v) => {
      if (v > Number(range.max)) range.max = v;
      range.value = v;
      num.value = v;
    };
    this.shows[`${flow}.${spec.name}`] = { box, shown };
    range.addEventListener("input", () => { num.value = range.value; });
    range.addEventListener("change", () => this.send(flow, spec, Number(range.value), msg, shown));
    num.addEventListener("change", () => {
      if (num.value.trim() === "") {
        msg.textContent = `${spec.name}: enter a value (allowed: ${spec.allowed})`;
        shown(this.current(flow, spec));
        return;
      }
      this.send(flow, spec, Number(num.value), msg, shown);
    });
    return el("div", { class: "knob-row" }, range, num);
  }

  /** Applies `value`; a refusal is shown beside the control, which goes back to the
   *  value the flow still has (`shown` puts a value in the control). */
  async send(flow, spec, value, msg, shown) {
    msg.textContent = "";
    // The value the flow has already: nothing to change, and no change to record. (On
    // the testbed a BPF algorithm's parameters are one map that every flow of it shares,
    // and the panel knows only this flow's changes: the change is always sent.)
    const now = this.current(flow, spec);
    const same = spec.kind === "bool" ? Boolean(value) === Boolean(now) : value === now;
    if (same && !this.testbed) {
      shown(now);
      return;
    }
    try {
      const r = await this.apply(flow, spec.name, value);
      if (r && r.note) msg.textContent = r.note; // the flow had ended: the change acts on nothing
      this.values[`${flow}.${spec.name}`] = value;
      shown(value); // both controls of a slider follow the value taken, however entered
    } catch (e) {
      msg.textContent = e.message;
      shown(this.current(flow, spec));
    }
  }

  /** Enables the controls while a run goes on (a finished run takes no changes). */
  setEnabled(on) {
    this.enabled = on;
    for (const input of this.root.querySelectorAll("input")) input.disabled = !on;
  }

  /** The selected flow's last back-off, measured from the run's own samples. */
  showBackoff(run) {
    if (!this.measured || !run) return;
    const list = run.backoffs(this.selected());
    const b = list[list.length - 1];
    this.measured.innerHTML = "";
    if (!b) { this.measured.textContent = "no back-off yet"; return; }
    this.measured.append("last back-off at ", el("b", { text: `${b.t.toFixed(2)} s` }), ": cwnd ",
      el("b", { text: String(b.cwnd) }), " \u2192 ssthresh ", el("b", { text: String(b.ssthresh) }),
      " = ", el("b", { id: "measured-ratio", text: b.ratio.toFixed(3) }), " \u00d7 cwnd");
    // Between samples far apart the window also grows, or backs off more than once.
    if (run.sampleS > 0.01) this.measured.append(` (from samples ${Math.round(run.sampleS * 1000)} ms apart: a rough measure)`);
  }
}
