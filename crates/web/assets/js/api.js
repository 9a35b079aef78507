// The HTTP + WebSocket API of cclab serve (README, "The web lab"), as the page uses it.

/** The token from the URL the server printed; kernel actions need it. */
export const token = new URLSearchParams(location.search).get("token") || "";

/** An answer with an error status: `body` is the server's JSON ({error, field, ...}). */
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

/** What any request says when the server does not answer at all (fetch's own words,
 *  "Failed to fetch", do not say which end is at fault). */
export const UNREACHABLE = "cannot reach the lab server: is cclab serve still running?";

/** `fetch`, with a network failure as an ApiError of status 0 that says so. */
async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch {
    throw new ApiError(0, { error: UNREACHABLE, unreachable: true });
  }
}

async function call(method, path, body, type = "application/json") {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = type;
    init.body = type === "application/json" ? JSON.stringify(body) : body;
  }
  if (path.startsWith("/api/kernel/")) init.headers["X-Cclab-Token"] = token;
  const res = await reach(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
export const del = (path) => call("DELETE", path);
/** POSTs text as it is (a trace upload). */
export const postText = (path, text) => call("POST", path, text, "text/plain");

/** GETs a text answer (a run's scenario). */
export async function getText(path) {
  const res = await reach(path, {});
  const text = await res.text();
  if (!res.ok) {
    let data = null;
    try { data = JSON.parse(text); } catch { data = { error: text }; }
    throw new ApiError(res.status, data);
  }
  return text;
}

/** Opens a run's live feed; `onMessage` gets each parsed message. */
export function openLive(id, onMessage, onClose) {
  const ws = new WebSocket(`ws://${location.host}/api/runs/${id}/live`);
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => onClose && onClose();
  return ws;
}
