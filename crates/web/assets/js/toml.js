// Writes a scenario document (the JSON shape of a scenario file, as the form edits it)
// as TOML text in the order the README documents: top-level keys, [bottleneck],
// [[flows]], [[cross]], [[changes]]. Keys the form does not know are written as they came.

const TOP = ["name", "duration", "seed", "sample_interval"];
const BOTTLENECK = ["rate", "trace", "delay", "buffer", "qdisc", "loss", "reverse_rate"];
const FLOW = ["name", "cc", "rtt", "count", "start", "stop", "bytes", "params", "rto_min", "initcwnd"];
const CROSS = ["kind", "rate", "count", "start", "stop", "packet_size", "mean_on", "mean_off", "direction"];

function quote(s) {
  return JSON.stringify(s); // a TOML basic string escapes like a JSON string
}

function bareKey(k) {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : quote(k);
}

/** One value: strings quoted, numbers and booleans as they are, objects inline. */
export function value(v) {
  if (typeof v === "string") return quote(v);
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : quote(String(v));
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(value).join(", ")}]`;
  if (v && typeof v === "object") {
    const parts = Object.entries(v).filter(([, x]) => x !== undefined && x !== null && x !== "")
      .map(([k, x]) => `${bareKey(k)} = ${value(x)}`);
    return parts.length ? `{ ${parts.join(", ")} }` : "{ }";
  }
  return quote(String(v));
}

function isSet(v) {
  return v !== undefined && v !== null && v !== "" &&
    !(typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0);
}

/** `key = value` lines for `obj`, known keys first in their order, then the rest. */
function lines(obj, order) {
  const keys = [...order.filter((k) => k in obj), ...Object.keys(obj).filter((k) => !order.includes(k))];
  return keys.filter((k) => isSet(obj[k])).map((k) => `${bareKey(k)} = ${value(obj[k])}`);
}

export function toToml(doc) {
  const out = [];
  const rest = Object.keys(doc).filter((k) => !["bottleneck", "flows", "cross", "changes"].includes(k));
  const top = {};
  for (const k of rest) top[k] = doc[k];
  out.push(...lines(top, TOP));
  if (doc.bottleneck) out.push("", "[bottleneck]", ...lines(doc.bottleneck, BOTTLENECK));
  for (const f of doc.flows || []) out.push("", "[[flows]]", ...lines(f, FLOW));
  for (const c of doc.cross || []) out.push("", "[[cross]]", ...lines(c, CROSS));
  for (const c of doc.changes || []) out.push("", "[[changes]]", ...lines(c, ["at", "flow", "set"]));
  return out.join("\n").replace(/^\n+/, "") + "\n";
}
