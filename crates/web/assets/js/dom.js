// Building page elements: helpers shared by the panels.

/** `tag` with `attrs` (`class`, `text`, or any attribute; null and undefined are left
 *  out) and `children` appended (falsy ones skipped). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

/** A parameter's default as the page shows it: a switch's as true or false, as its
 *  allowed values say (the catalog gives 1 or 0). */
export function shownDefault(spec) {
  return spec.kind === "bool" ? String(spec.default !== 0) : `${spec.default}`;
}
