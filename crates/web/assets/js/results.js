// Results: save the current run (a results folder as `cclab run` writes it, with the
// scenario that replays it), the saved runs with their files, and two of them compared
// (what `cclab compare` shows, in a dialog).

import { del, get, post } from "./api.js";

const $ = (id) => document.getElementById(id);
/** The files a saved run lists first; every other file of it follows, in name order. */
const FIRST_FILES = ["report.html", "summary.json", "scenario.toml", "flows.csv", "queue.csv", "cwnd.svg"];

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  a.target = "_blank";
  a.rel = "noopener";
  return a;
}

/** The two runs the Compare pickers show: the ones chosen, while both still exist and
 *  differ; otherwise (and after a save, `fresh` being the run just saved) the two saved
 *  last, older as A. Comparing a run with itself shows nothing, so it is never offered. */
export function comparePair(saved, a, b, fresh) {
  const names = saved.map((s) => s.name);
  const kept = !fresh && names.includes(a) && names.includes(b) && a !== b;
  if (kept || names.length < 2) return kept ? [a, b] : [names[0] || "", names[0] || ""];
  const latest = [...saved].sort((x, y) => (x.saved_at_s || 0) - (y.saved_at_s || 0)).map((s) => s.name);
  const newer = fresh && names.includes(fresh) ? fresh : latest[latest.length - 1];
  const older = latest.filter((n) => n !== newer).pop();
  return [older, newer];
}

/** How full the server's results folder is, against its limit (`--max-disk-mb`). */
function diskText({ used_bytes: used, max_bytes: max }) {
  const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
  const full = used >= max ? ": full, so nothing more can be saved, compared or uploaded until something is deleted" : "";
  return `results folder: ${mb(used)} of ${mb(max)} (${Math.round((100 * used) / max)}%)${full}`;
}

export class Results {
  constructor(getRun) {
    this.getRun = getRun;
    this.asked = 0; // refreshes asked for; only the latest one's answer is shown
    this.fresh = null; // a run just saved, to be run B once a listing is shown
    this.failure = null; // what a failed refresh said in #compare-note
    $("save").addEventListener("click", () => this.save());
    $("compare").addEventListener("click", () => this.compare());
    // A note about the pair chosen before (such as "both A and B") no longer holds.
    for (const id of ["cmp-a", "cmp-b"]) {
      $(id).addEventListener("change", () => {
        if ($("compare-note").textContent !== this.failure) $("compare-note").textContent = "";
      });
    }
    $("compare-close").addEventListener("click", () => $("compare-view").close());
  }

  /** Lists the saved runs again (after a save, and when the page comes back into view:
   *  another tab may have saved one). `fresh`, a run just saved, becomes run B of the
   *  comparison, beside the one saved before it. Refreshes may be answered out of order
   *  (one on focus, one after a save): an answer to a refresh asked before the latest is
   *  dropped, as it may lack a run saved since, and a run just saved stays `fresh` until
   *  a listing is shown. */
  async refresh(fresh) {
    const n = ++this.asked;
    if (fresh) this.fresh = fresh;
    let saved, disk;
    try {
      ({ saved, disk } = await get("/api/saved"));
    } catch (e) {
      if (n !== this.asked) return;
      this.failure = `the saved runs could not be listed: ${e.message}`;
      $("compare-note").textContent = this.failure;
      return;
    }
    if (n !== this.asked) return;
    this.show(saved, this.fresh);
    this.fresh = null;
    $("disk-note").textContent = diskText(disk);
    // A failure said before is over; anything else the note says (a comparison's) stays.
    if (this.failure && $("compare-note").textContent === this.failure) $("compare-note").textContent = "";
    this.failure = null;
  }

  /** The saved list and the Compare pickers for `saved`. */
  show(saved, fresh) {
    $("saved").replaceChildren(...saved.map((s) => this.item(s)));
    const names = saved.map((s) => s.name);
    const [a, b] = comparePair(saved, $("cmp-a").value, $("cmp-b").value, fresh);
    for (const [id, v] of [["cmp-a", a], ["cmp-b", b]]) {
      $(id).replaceChildren(...names.map((n) => new Option(n, n)));
      $(id).value = v;
    }
  }

  item(s) {
    const li = document.createElement("li");
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = s.name;
    const files = document.createElement("div");
    files.className = "files";
    const base = `/api/saved/${encodeURIComponent(s.name)}/files/`;
    const rank = (n) => (FIRST_FILES.includes(n) || n.endsWith(".toml") ? 0 : 1);
    const names = s.files.map((f) => f.name).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    for (const n of names) files.append(link(base + encodeURIComponent(n), n));
    files.append(link(`/api/saved/${encodeURIComponent(s.name)}`, "all files (JSON)"));
    const remove = document.createElement("button");
    remove.className = "delete";
    remove.textContent = "delete";
    remove.title = `delete the saved run "${s.name}" and its comparisons`;
    remove.addEventListener("click", () => this.remove(s.name));
    files.append(remove);
    li.append(name, files);
    return li;
  }

  /** Deletes a saved run (after asking), then lists the saved runs again. */
  async remove(name) {
    if (!confirm(`Delete the saved run "${name}" and its comparisons? This cannot be undone.`)) return;
    try {
      await del(`/api/saved/${encodeURIComponent(name)}`);
    } catch (e) {
      $("compare-note").textContent = `"${name}" was not deleted: ${e.message}`;
    }
    this.refresh();
  }

  /** Saves now if the run has finished, or when it finishes. */
  async save() {
    const run = this.getRun();
    if (!run) return;
    const name = $("save-name").value.trim();
    $("save-note").textContent = "saving\u2026";
    run.saveState = "asked"; // the page need not ask before it is left meanwhile
    try {
      const r = await post(`/api/runs/${run.id}/save`, name ? { name } : {});
      this.saved(r, run);
    } catch (e) {
      run.saveState = null;
      $("save-note").textContent = e.message;
    }
  }

  /** Shows how saving `run` went (also called when a pending save completes), and
   *  keeps the state on the run (a finished run not saved is a reason to ask before
   *  the page is left). */
  saved(r, run = this.getRun()) {
    if (run) run.saveState = r ? r.state : null;
    if (!r) return;
    if (r.state === "pending") $("save-note").textContent = `will be saved as "${r.name}" when the run finishes`;
    else if (r.state === "saved") {
      $("save-note").textContent = `saved as "${r.saved.name}"; its scenario replays the run byte for byte`;
      this.refresh(r.saved.name);
    } else if (r.state === "failed") $("save-note").textContent = r.error;
  }

  async compare() {
    const a = $("cmp-a").value, b = $("cmp-b").value;
    if (!a || !b) { $("compare-note").textContent = "save two runs first"; return; }
    if (a === b) { $("compare-note").textContent = `"${a}" is both A and B: choose two different saved runs`; return; }
    $("compare-note").textContent = "comparing\u2026";
    try {
      await post("/api/compare", { a, b });
      $("compare-note").textContent = "";
      $("compare-title").textContent = `${a} vs ${b}`;
      $("compare-frame").src = `/api/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}/files/compare.html`;
      $("compare-view").showModal();
    } catch (e) {
      $("compare-note").textContent = e.message;
    }
  }
}
