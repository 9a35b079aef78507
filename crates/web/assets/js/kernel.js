// The real-kernel panel: what the kernel offers, cclab's BPF algorithms with load and
// unload, and their tunables rewritten live in the kernel's map (`cclab kernel set`).
// When the server cannot act, it lists exactly what is missing.

import { el } from "./dom.js";
import { get, post, token } from "./api.js";

export class KernelPanel {
  /** `runTestbed()` starts the current scenario on the testbed (rejects with the error). */
  constructor(root, runTestbed) {
    this.root = root;
    this.runTestbed = runTestbed;
    document.getElementById("kernel-refresh").addEventListener("click", () => this.refresh());
  }

  async refresh() {
    try {
      this.render(await get("/api/kernel"));
    } catch (e) {
      this.root.textContent = e.message;
    }
  }

  render(s) {
    const parts = [];
    if (!s.ready) {
      parts.push(el("p", { text: "The real kernel is not available here:" }),
        el("ul", { class: "kernel-missing" }, ...s.missing.map((m) => el("li", { text: m }))));
    }
    parts.push(el("p", { class: "note", text: `kernel algorithms: ${s.available.join(", ") || "unknown"}; default ${s.default || "?"}` }));
    if (!token) parts.push(el("p", { class: "note", text: "Open the URL the server printed (it carries the token) to act on the kernel." }));
    for (const a of s.algorithms) parts.push(this.algo(a, s.ready));
    parts.push(this.testbed(s.testbed_missing));
    this.root.replaceChildren(...parts);
  }

  algo(a, ready) {
    const btn = el("button", { class: "small", text: a.loaded ? "unload" : "load" });
    btn.disabled = !ready || !token;
    const msg = el("div", { class: "msg" });
    btn.addEventListener("click", () => this.act(a.loaded ? "unload" : "load", { algorithm: a.name }, msg));
    const box = el("div", { class: "kernel-algo" },
      el("div", { class: "knob-head" }, el("b", { text: a.name }), el("span", { class: "unit", text: a.loaded ? "loaded" : "not loaded" }), btn));
    if (a.loaded) {
      for (const p of a.params) box.append(this.param(a.name, p, msg));
    }
    box.append(msg);
    return box;
  }

  /** Runs the scenario on real TCP through the emulator, charted like a simulated run. */
  testbed(missing) {
    const box = el("div", { class: "kernel-algo" });
    const msg = el("div", { class: "msg" });
    const btn = el("button", { class: "small", id: "testbed-run", text: "Run scenario on the testbed" });
    btn.disabled = missing.length > 0 || !token;
    btn.addEventListener("click", () => { msg.textContent = ""; this.runTestbed().catch((e) => { msg.textContent = e.message; }); });
    box.append(el("div", { class: "knob-head" }, el("b", { text: "Testbed" }), btn),
      el("p", { class: "note", text: missing.length ? missing.join("; ") : "real TCP between namespaces through the emulated link, sampled from TCP_INFO; real time, at most 60 s" }), msg);
    return box;
  }

  param(algo, p, msg) {
    const input = el("input", { type: "number", value: p.current ?? p.default, step: p.kind === "float" ? "0.01" : "1", title: `${p.doc}; allowed: ${p.allowed}` });
    input.addEventListener("change", () => this.act("set", { algorithm: algo, name: p.name, value: Number(input.value) }, msg, false));
    return el("div", { class: "field" }, el("label", { text: p.name, title: p.doc }), input);
  }

  async act(action, body, msg, rerender = true) {
    msg.textContent = "";
    try {
      const r = await post(`/api/kernel/${action}`, body);
      if (rerender) this.render(r);
    } catch (e) {
      msg.textContent = e.message;
    }
  }
}
