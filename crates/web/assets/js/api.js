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

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (path.startsWith("/api/kernel/")) init.headers["X-Cclab-Token"] = token;
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);

/** Opens a run's live feed; `onMessage` gets each parsed message. */
export function openLive(id, onMessage, onClose) {
  const ws = new WebSocket(`ws://${location.host}/api/runs/${id}/live`);
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => onClose && onClose();
  return ws;
}
