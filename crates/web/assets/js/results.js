// Results: save the current run (a results folder as `cclab run` writes it, with the
// scenario that replays it), the saved runs with their files, and two of them compared
// (what `cclab compare` shows, in a dialog).

import { get, post } from "./api.js";

const $ = (id) => document.getElementById(id);
const SHOWN_FILES = ["report.html", "summary.json", "scenario.toml", "flows.csv", "queue.csv", "cwnd.svg"];

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  a.target = "_blank";
  a.rel = "noopener";
  return a;
}

export class Results {
  constructor(getRun) {
    this.getRun = getRun;
    $("save").addEventListener("click", () => this.save());
    $("compare").addEventListener("click", () => this.compare());
    $("compare-close").addEventListener("click", () => $("compare-view").close());
  }

  async refresh() {
    const { saved } = await get("/api/saved");
    $("saved").replaceChildren(...saved.map((s) => this.item(s)));
    for (const id of ["cmp-a", "cmp-b"]) {
      const sel = $(id);
      const keep = sel.value;
      sel.replaceChildren(...saved.map((s) => new Option(s.name, s.name)));
      if (saved.some((s) => s.name === keep)) sel.value = keep;
    }
    if (saved.length > 1 && $("cmp-a").value === $("cmp-b").value) $("cmp-b").selectedIndex = 1;
  }

  item(s) {
    const li = document.createElement("li");
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = s.name;
    const files = document.createElement("div");
    files.className = "files";
    const base = `/api/saved/${encodeURIComponent(s.name)}/files/`;
    for (const f of s.files) {
      if (SHOWN_FILES.includes(f.name) || f.name.endsWith(".toml")) files.append(link(base + encodeURIComponent(f.name), f.name));
    }
    files.append(link(`/api/saved/${encodeURIComponent(s.name)}`, "all files (JSON)"));
    li.append(name, files);
    return li;
  }

  /** Saves now if the run has finished, or when it finishes. */
  async save() {
    const run = this.getRun();
    if (!run) return;
    const name = $("save-name").value.trim();
    $("save-note").textContent = "saving\u2026";
    try {
      const r = await post(`/api/runs/${run.id}/save`, name ? { name } : {});
      this.saved(r);
    } catch (e) {
      $("save-note").textContent = e.message;
    }
  }

  /** Shows how saving went (also called when a pending save completes). */
  saved(r) {
    if (!r) return;
    if (r.state === "pending") $("save-note").textContent = `will be saved as "${r.name}" when the run finishes`;
    else if (r.state === "saved") {
      $("save-note").textContent = `saved as "${r.saved.name}"; its scenario replays the run byte for byte`;
      this.refresh();
    } else if (r.state === "failed") $("save-note").textContent = r.error;
  }

  async compare() {
    const a = $("cmp-a").value, b = $("cmp-b").value;
    if (!a || !b) { $("compare-note").textContent = "save two runs first"; return; }
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
