// Line charts on a canvas: time on x (0 to the run's duration), one y axis with "nice"
// ticks, solid or dashed series, vertical markers for parameter changes, and optional
// bars on a second axis (drops). Drawn at the screen's pixel ratio; a chart redraws only
// when asked, and the page asks at most once per animation frame.

// Ten hues chosen to stay apart from each other (Tableau 10's), so that flow k and flow
// k + 1 never look alike; flow 10 takes flow 0's again.
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#5f5f5f"];

export function flowColor(i) {
  return PALETTE[i % PALETTE.length];
}

/** About `count` round tick values covering [lo, hi]. */
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const ticks = [];
  const top = Math.ceil(hi / step - 1e-9) * step;
  for (let v = Math.ceil(lo / step) * step; v <= top + step * 1e-9; v += step) ticks.push(+v.toFixed(10));
  return { ticks, step };
}

/** A parameter's value with its unit, as a change marker labels it: six significant
 *  digits, so a tiny value stays itself (1e-9, not 0), and the unit the algorithm gives
 *  ("100 ms"). Switches are true or false. */
export function valueText(v, unit) {
  if (typeof v !== "number") return String(v);
  const text = String(Number(v.toPrecision(6)));
  return unit ? `${text} ${unit}` : text;
}

function fmt(v) {
  if (Math.abs(v) >= 1000) return `${(v / 1000).toFixed(v % 1000 === 0 ? 0 : 1)}k`;
  return `${+v.toFixed(2)}`;
}

/** Height of a legend row, and the most rows a legend takes (one more where the series
 *  that are not flows need it on a narrow chart). */
const LEGEND_ROW = 13;
const LEGEND_ROWS = 2;

export class Chart {
  constructor(canvas, { title, yLabel, y2Label }) {
    this.canvas = canvas;
    this.title = title;
    this.yLabel = yLabel;
    this.y2Label = y2Label;
    this.xMax = 1;
    this.series = [];
    this.markers = [];
    this.bars = null;
    this.pad = { l: 48, r: 12, t: 40, b: 30 };
  }

  /** The top of the plot: under the title and the legend's rows. */
  top(rows) {
    return this.pad.t + LEGEND_ROW * (rows - 1);
  }

  /** series: [{name, color, points: [[t, y], ...], dash, width}] */
  set(data) {
    Object.assign(this, data);
  }

  resize() {
    const r = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(r.width * dpr));
    const h = Math.max(1, Math.round(r.height * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    return { w: r.width, h: r.height, dpr };
  }

  yRange() {
    let hi = 0;
    for (const s of this.series) for (const p of s.points) if (p[1] > hi && Number.isFinite(p[1])) hi = p[1];
    return niceTicks(0, hi > 0 ? hi * 1.05 : 1);
  }

  draw() {
    const { w, h, dpr } = this.resize();
    const g = this.canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const legend = this.layoutLegend(g, w);
    const top = this.top(legend.rows);
    const box = { x: this.pad.l, y: top, w: w - this.pad.l - this.pad.r, h: h - top - this.pad.b };
    const { ticks } = this.yRange();
    const yMax = ticks[ticks.length - 1] || 1;
    const X = (t) => box.x + (t / this.xMax) * box.w;
    const Y = (v) => box.y + box.h - (v / yMax) * box.h;
    this.drawFrame(g, box, ticks, X, Y);
    if (this.bars) this.drawBars(g, box, X);
    this.drawMarkers(g, box, X);
    g.save();
    g.beginPath();
    g.rect(box.x, box.y - 1, box.w, box.h + 2);
    g.clip();
    for (const s of this.series) this.drawSeries(g, s, X, Y);
    g.restore();
    this.drawLegend(g, legend);
  }

  drawFrame(g, box, ticks, X, Y) {
    g.font = "600 12px system-ui, sans-serif";
    g.fillStyle = "#1d2433";
    g.textBaseline = "alphabetic";
    g.fillText(this.title, box.x, 15);
    g.font = "11px system-ui, sans-serif";
    g.strokeStyle = "#eef1f5";
    g.fillStyle = "#667085";
    g.lineWidth = 1;
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (const v of ticks) {
      const y = Math.round(Y(v)) + 0.5;
      g.beginPath(); g.moveTo(box.x, y); g.lineTo(box.x + box.w, y); g.stroke();
      g.fillText(fmt(v), box.x - 6, y);
    }
    g.textAlign = "center";
    g.textBaseline = "top";
    for (const t of niceTicks(0, this.xMax, 6).ticks) {
      if (t > this.xMax) continue;
      g.fillText(fmt(t), X(t), box.y + box.h + 5);
    }
    g.fillText("time (s)", box.x + box.w / 2, box.y + box.h + 17);
    g.save();
    g.translate(11, box.y + box.h / 2);
    g.rotate(-Math.PI / 2);
    g.textBaseline = "middle";
    g.fillText(this.yLabel, 0, 0);
    g.restore();
    g.strokeStyle = "#c9d1dd";
    g.strokeRect(box.x + 0.5, box.y + 0.5, box.w, box.h);
  }

  drawSeries(g, s, X, Y) {
    if (!s.points.length) return;
    g.strokeStyle = s.color;
    g.lineWidth = s.width || 1.5;
    g.setLineDash(s.dash || []);
    g.globalAlpha = s.alpha || 1;
    g.beginPath();
    let pen = false;
    for (const [t, v] of s.points) {
      if (v === null || !Number.isFinite(v)) { pen = false; continue; }
      const x = X(t), y = Y(v);
      if (pen) g.lineTo(x, y); else g.moveTo(x, y);
      pen = true;
    }
    g.stroke();
    g.setLineDash([]);
    g.globalAlpha = 1;
  }

  /** The top of the bars' own axis. */
  barsTop() {
    let hi = 0;
    for (const [, v] of this.bars.points) hi = Math.max(hi, v);
    const { ticks } = niceTicks(0, hi > 0 ? hi : 1, 3);
    return ticks[ticks.length - 1] || 1;
  }

  drawBars(g, box, X) {
    const { points, color } = this.bars;
    const top = this.barsTop();
    const bw = Math.max(1, box.w / Math.max(points.length, 200));
    g.fillStyle = color;
    g.globalAlpha = 0.8;
    for (const [t, v] of points) {
      if (v <= 0) continue;
      const hgt = (v / top) * box.h * 0.35;
      g.fillRect(X(t) - bw / 2, box.y + box.h - hgt, bw, hgt);
    }
    g.globalAlpha = 1;
  }

  /** Dashed lines at parameter changes, each labelled at the top. A label that would
   *  run into the one before goes a line lower (up to four lines); one with no room on
   *  any is left out (its line stays; `unlabelled` counts them), and one that would pass
   *  the right edge is set to the left of its line. */
  drawMarkers(g, box, X) {
    g.font = "10px system-ui, sans-serif";
    g.textBaseline = "top";
    const lineEnds = []; // per label line, the x where its last label ends
    this.unlabelled = 0;
    for (const m of [...this.markers].sort((a, b) => a.t - b.t)) {
      const x = Math.round(X(m.t)) + 0.5;
      g.strokeStyle = m.color || "#98a2b3";
      g.setLineDash([3, 3]);
      g.beginPath(); g.moveTo(x, box.y); g.lineTo(x, box.y + box.h); g.stroke();
      g.setLineDash([]);
      const wText = g.measureText(m.label).width;
      const right = x + 3 + wText > box.x + box.w;
      const left = right ? x - 3 - wText : x + 3;
      let line = lineEnds.findIndex((end) => end < left);
      if (line < 0 && lineEnds.length < 4) line = lineEnds.length;
      if (line < 0) { this.unlabelled += 1; continue; }
      lineEnds[line] = left + wText + 4;
      g.textAlign = "left";
      g.fillStyle = m.color || "#475467";
      g.fillText(m.label, left, box.y + 3 + line * 12);
    }
  }

  /** Lays the legend out on its rows under the title. Series that are not a flow's
   *  (the queue, ssthresh, W(t), W_max) are always named, taking more rows if they
   *  need them; flows are named while the rows have room, and "+N more" counts the flows
   *  left out (the table below the charts names every flow with its colour). The bars'
   *  caption (drops) ends the first row, where the title cannot run into it. */
  layoutLegend(g, w) {
    g.font = "11px system-ui, sans-serif";
    const shown = this.series.filter((s) => s.legend !== false);
    const named = [...shown.filter((s) => s.pin), ...shown.filter((s) => !s.pin && !s.flow)];
    const flows = shown.filter((s) => !s.pin && s.flow);
    const left = this.pad.l;
    const right = w - this.pad.r;
    const caption = this.bars
      ? { text: `${this.bars.label} (bars, max ${fmt(this.barsTop())})`, color: this.bars.color } : null;
    const ends = [caption ? right - g.measureText(caption.text).width - 16 : right, right, right];
    const width = (s) => g.measureText(s.name).width + 30;
    const placed = [];
    let row = 0;
    let x = left;
    // Past the row's end, the next row (while there is one); the first row's end is the
    // caption's start, so even a first name too long for it moves down, not over it. The
    // series that are not flows may take one more row, on a narrow chart, so that none
    // is cut off (the queue and its testbed overlay beside the drops caption).
    const newRowFor = (w, rows = LEGEND_ROWS) => x + w - 8 > ends[row] && row + 1 < rows;
    for (const s of named) {
      if (newRowFor(width(s), LEGEND_ROWS + 1)) { row += 1; x = left; }
      placed.push({ s, x, row });
      x += width(s);
    }
    const moreWidth = (n) => (n > 0 ? g.measureText(`+${n} more`).width + 8 : 0);
    let drawn = 0;
    for (const s of flows) {
      const need = width(s) + moreWidth(flows.length - drawn - 1);
      if (newRowFor(need)) { row += 1; x = left; }
      if (x + need - 8 > ends[row]) break;
      placed.push({ s, x, row });
      x += width(s);
      drawn += 1;
    }
    // "+N more" where it fits: after the names, or at the start of a row of its own.
    const leftOut = flows.length - drawn;
    if (leftOut > 0 && newRowFor(moreWidth(leftOut))) { row += 1; x = left; }
    return { placed, caption, right, more: { count: leftOut, x, row }, rows: row + 1 };
  }

  drawLegend(g, legend) {
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    const y = (row) => 28 + row * LEGEND_ROW;
    if (legend.caption) {
      g.fillStyle = legend.caption.color;
      g.textAlign = "right";
      g.fillText(legend.caption.text, legend.right, y(0));
    }
    g.textAlign = "left";
    for (const { s, x, row } of legend.placed) {
      g.strokeStyle = s.color;
      g.lineWidth = 2;
      g.setLineDash(s.dash || []);
      g.beginPath(); g.moveTo(x, y(row)); g.lineTo(x + 14, y(row)); g.stroke();
      g.setLineDash([]);
      g.fillStyle = "#475467";
      g.fillText(s.name, x + 17, y(row));
    }
    // What the legend shows, for the curious and for the browser test.
    this.legendShown = legend.placed.map((p) => p.s.name);
    this.legendLeftOut = legend.more.count;
    if (legend.more.count > 0) {
      g.fillStyle = "#667085";
      g.fillText(`+${legend.more.count} more`, legend.more.x, y(legend.more.row));
    }
  }
}
