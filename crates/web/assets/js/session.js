// What outlives a page load: the run this tab started (kept in sessionStorage, so a
// reload watches it again instead of leaving it to run unwatched until the server stops
// it), and the runs going on the server, listed with a Stop button each when the server
// refuses another run (a run left behind by a closed tab holds its slot for a while).

import { post } from "./api.js";
import { el } from "./dom.js";
import { isGoing } from "./live.js";

const KEY = "cclab.run";

/** The run this tab watches, {id, instance}, or null: what it answers for on `channel`. */
let watching = null;

/** The page's tabs talk over this channel. "Duplicate tab" copies sessionStorage, so a
 *  duplicated tab remembers the run of the tab it was copied from: it asks here whether
 *  another tab watches that run, and leaves the run to it. A reloaded tab asks too, and
 *  nobody answers (the page that watched the run is gone). */
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("cclab.tabs") : null;
if (channel) {
  channel.addEventListener("message", (ev) => {
    const m = ev.data || {};
    if (m.ask && watching && m.id === watching.id && m.instance === watching.instance) channel.postMessage({ mine: m.ask });
  });
}

/** Remembers the run this tab watches (`status`, the server's): its id and name, the
 *  server process's instance (a restarted server numbers its runs from 1 again, so its
 *  run 3 is not ours), and the scenario as the page had it (text, file name, the ready
 *  scenario it came from). */
export function remember(status, { toml, file, picked }) {
  watching = { id: status.id, instance: status.instance };
  const kept = { id: status.id, instance: status.instance, name: status.name, toml, file, picked };
  try {
    sessionStorage.setItem(KEY, JSON.stringify(kept));
  } catch {
    // Storage refused (private mode, full): a reload then starts afresh, as before.
  }
}

/** The run remembered by this tab, or null. */
export function remembered() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEY) || "null");
    return kept && kept.id !== undefined ? kept : null;
  } catch {
    return null;
  }
}

export function forget() {
  watching = null;
  try { sessionStorage.removeItem(KEY); } catch { /* nothing kept */ }
}

/** Why the run `kept` remembers is not to be watched again now that the server says
 *  `status` about its id, or null: a restarted server's run of the same number (another
 *  instance; an entry without one is from before instances, and as doubtful). A run
 *  that has ended is watched again too: its charts and summary come back, and an unsaved
 *  run can still be saved (the server keeps it for a while). */
export function notBack(kept, status) {
  if (!kept.instance || status.instance !== kept.instance) {
    return `the lab server was restarted: run ${kept.id} (${kept.name}) is gone`;
  }
  return null;
}

/** Whether another open tab watches the run `kept` remembers: it answers within `ms`. */
export function watchedElsewhere(kept, ms = 300) {
  if (!channel) return Promise.resolve(false);
  const ask = `${Date.now()}-${Math.random()}`;
  return new Promise((resolve) => {
    const done = (yes) => {
      clearTimeout(timer);
      channel.removeEventListener("message", heard);
      resolve(yes);
    };
    const heard = (ev) => { if (ev.data && ev.data.mine === ask) done(true); };
    const timer = setTimeout(() => done(false), ms);
    channel.addEventListener("message", heard);
    channel.postMessage({ ask, id: kept.id, instance: kept.instance });
  });
}

/** The runs going on the server, each with a Stop button, shown in `box` after the
 *  server refused a run for having too many (429). `onFree` is called once one stops
 *  (the refusal shown is out of date). */
export class GoingRuns {
  constructor(box, onFree) {
    this.box = box;
    this.onFree = onFree;
  }

  hide() {
    this.box.hidden = true;
    this.box.replaceChildren();
  }

  /** `going`: the runs the refusal named, as `GET /api/runs` lists them (asking the
   *  server again could list runs started or ended since). */
  show(going) {
    const rows = going.filter((r) => isGoing(r.state)).map((r) => this.row(r));
    this.box.replaceChildren(el("div", { text: "Runs going on the server (a closed or reloaded tab's run goes on until nobody has watched it for a while):" }), ...rows);
    this.box.hidden = false;
  }

  row(r) {
    const stop = el("button", { class: "small", "data-stop": r.id, text: "Stop" });
    stop.addEventListener("click", async () => {
      stop.disabled = true;
      try {
        await post(`/api/runs/${r.id}/control`, { action: "stop" });
        this.box.replaceChildren(el("div", { text: `Run ${r.id} stopped: a slot is free, press Start again.` }));
        this.onFree();
      } catch (e) {
        stop.disabled = false;
        this.box.append(el("div", { class: "msg", text: e.message }));
      }
    });
    const watched = r.clients ? `${r.clients} watching` : "nobody watching";
    const text = `run ${r.id}: ${r.name}${r.testbed ? " (testbed)" : ""}, ${r.state} at ${r.now_s.toFixed(1)} of ${r.duration_s} s, ${watched}`;
    return el("div", { class: "row" }, el("span", { text }), stop);
  }
}
