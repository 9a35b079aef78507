// A run as the page sees it: what its WebSocket sent (the server's decimated buckets,
// events and live table), and the series the charts draw from it. The server sends at
// most about a thousand buckets per run, so this stays the same size however long the
// run; back-off events are capped here as on the server.

import { openLive } from "./api.js";

const MAX_BACKOFFS = 2000;

/** Whether a run in `state` is still going (it takes commands and holds a run slot). */
export function isGoing(state) {
  return state === "running" || state === "paused";
}

export class LiveRun {
  /** `onClose(run)` is called when the WebSocket closes without the page closing it.
   *  `instance`: the server process the run belongs to (its status says). */
  constructor(id, instance, { onUpdate, onSave, onClose }) {
    this.id = id;
    this.instance = instance;
    this.onUpdate = onUpdate;
    this.onSave = onSave;
    this.onClose = onClose;
    this.seq = -1;
    this.buckets = [];
    this.events = [];
    this.tip = null;
    this.open();
  }

  /** Opens (or opens again, after a lost connection) the run's WebSocket: its hello
   *  carries the whole history, so nothing is missed meanwhile. */
  open() {
    this.ws = openLive(this.id, (m) => this.receive(m), () => this.onClose && this.onClose(this));
  }

  close() {
    this.ws.onclose = null;
    this.ws.close();
  }

  receive(msg) {
    this.messages = (this.messages || 0) + 1;
    if (msg.type === "hello") this.hello(msg);
    else if (msg.type === "frame") this.frame(msg);
    else if (msg.type === "save") this.onSave(msg.save);
    this.onUpdate(this);
  }

  hello(m) {
    // Another server process's run of the same number (the server was restarted between
    // the page's status check and this connection): not ours, so not taken in; the
    // page's `onClose` asks the server about it again and finds it gone.
    if (this.instance && m.instance !== this.instance) {
      this.close();
      if (this.onClose) this.onClose(this);
      return;
    }
    Object.assign(this, {
      seq: m.seq, name: m.name, flows: m.flows, columns: m.columns, bucketS: m.bucket_s, sampleS: m.sample_s,
      duration: m.duration_s, buckets: m.buckets, tip: m.tip, events: m.events, table: m.table,
      state: m.state, reason: m.reason, now: m.now_s, speed: m.speed, summary: m.summary,
    });
  }

  frame(m) {
    if (m.seq <= this.seq) return; // already in the hello
    this.seq = m.seq;
    this.buckets.push(...m.buckets);
    this.events.push(...m.events);
    this.capEvents();
    Object.assign(this, { tip: m.tip, table: m.table, state: m.state, reason: m.reason, now: m.now_s, speed: m.speed });
    if (m.summary) this.summary = m.summary;
  }

  capEvents() {
    let extra = this.events.filter((e) => e.kind === "backoff").length - MAX_BACKOFFS;
    if (extra > 0) this.events = this.events.filter((e) => !(e.kind === "backoff" && extra-- > 0));
  }

  /** Buckets with the tip (the bucket being filled) at the end. */
  all() {
    return this.tip ? [...this.buckets, this.tip] : this.buckets;
  }

  /** cwnd through each bucket's extremes in the order they came, so peaks survive. */
  cwnd(flow) {
    const pts = [];
    const half = (this.bucketS || 0) / 2;
    for (const b of this.all()) {
      const f = b.f[flow];
      if (!f) { pts.push([b.t, null]); continue; }
      const [first, second] = f.lo_first ? [f.lo, f.hi] : [f.hi, f.lo];
      pts.push([b.t - half, first], [b.t, second]);
    }
    return pts;
  }

  series(flow, pick) {
    return this.all().map((b) => [b.t, b.f[flow] ? pick(b.f[flow]) : null]);
  }

  ssthresh(flow) {
    return this.series(flow, (f) => (f.ss === null ? null : f.ss));
  }

  rtt(flow) {
    return this.series(flow, (f) => f.rtt);
  }

  /** Goodput in Mbit/s: the bytes delivered in order to the receiving application over
   *  a trailing window of at most 1% of the run (at least one bucket), as the results'
   *  goodput plot takes it (`goodput_points` in `results.rs`); a bucket in which the flow
   *  has no sample (not started, or finished) ends its line, and the window starts anew
   *  after it. Bucket to bucket, a retransmission that fills a hole delivers the whole
   *  window held behind it at once, and the line would spike to several times the link's
   *  rate. */
  goodput(flow) {
    const window = Math.max((this.duration || 0) / 100, this.bucketS || 0);
    const out = [];
    const seen = []; // this flow's [t, delivered] since it last had no sample
    let j = 0;
    for (const b of this.all()) {
      const f = b.f[flow];
      if (!f) { seen.length = 0; j = 0; out.push([b.t, null]); continue; }
      const i = seen.push([b.t, f.delivered]) - 1;
      while (j < i && b.t - seen[j][0] > window + 1e-12) j++;
      const k = j === i && i > 0 ? i - 1 : j; // at least the bucket before
      const dt = b.t - (k < i ? seen[k][0] : b.t);
      if (dt > 0) out.push([b.t, ((f.delivered - seen[k][1]) * 8) / dt / 1e6]);
    }
    return out;
  }

  /** Flow `flow`'s algorithm parameters now: the scenario's, then every change made so
   *  far (scheduled or live), in order. */
  paramsOf(flow) {
    const f = (this.flows || [])[flow];
    const params = { ...((f && f.params) || {}) };
    for (const c of this.changes()) if (c.flow === flow) params[c.name] = c.value;
    return params;
  }

  queue() {
    return this.all().map((b) => [b.t, b.q.hi]);
  }

  /** Drops per bucket (the server sends the running total). */
  drops() {
    const out = [];
    let prev = 0;
    for (const b of this.all()) {
      out.push([b.t, b.q.drops - prev]);
      prev = b.q.drops;
    }
    return out;
  }

  /** The latest values of flow `i`: cwnd and the algorithm's variables by name. */
  latest(flow) {
    const all = this.all();
    for (let k = all.length - 1; k >= 0; k--) {
      const f = all[k].f[flow];
      if (!f) continue;
      const cc = {};
      (this.columns || []).forEach((name, j) => { cc[name] = f.cc[j]; });
      return { t: all[k].t, cwnd: f.last, ssthresh: f.ss, cc };
    }
    return null;
  }

  backoffs(flow) {
    return this.events.filter((e) => e.kind === "backoff" && e.flow === flow);
  }

  changes() {
    return this.events.filter((e) => e.kind === "change");
  }
}

/** CUBIC's target W(t) = origin + C (t - epoch_start + delay_min - K)^3 (Linux
 *  bictcp_update, t evaluated one min RTT ahead), for the current epoch of a flow whose
 *  algorithm reports origin, k, epoch_start and delay_min_us; null otherwise. */
export function cubicCurve(latest, params, now, until) {
  const cc = latest && latest.cc;
  if (!cc || cc.origin == null || cc.k == null || !cc.epoch_start) return null;
  const scale = params && params.bic_scale !== undefined ? params.bic_scale : 41;
  const C = (scale * 10) / 1024;
  const d = (cc.delay_min_us || 0) / 1e6;
  const pts = [];
  const end = Math.max(now, Math.min(until, now + Math.max(cc.k, 1)));
  const steps = 120;
  for (let i = 0; i <= steps; i++) {
    const t = cc.epoch_start + ((end - cc.epoch_start) * i) / steps;
    const x = t - cc.epoch_start + d - cc.k;
    pts.push([t, cc.origin + C * x * x * x]);
  }
  return pts;
}
