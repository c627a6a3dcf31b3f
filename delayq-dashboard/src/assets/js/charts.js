
// Charts: SVG drawn from numbers the API gives, as text and attributes only.
// Each has a y axis labelled 0, half and the top (a round number at least
// the largest value), so a single element never looks like a pile: its bar
// reaches the top of an axis that reads 1. Bars carry their count in a
// title, and printed on them where there is room.

// The axis top: 1, 2 or 5 times a power of ten, at least `max` (so the
// half mark is a whole number too, past 1).
function niceMax(max) {
  if (max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

// Tick labels and grid lines at 0, half (when it is a whole count, or for
// times) and the top; `label` formats a value.
function yAxis(box, top, left, right, y, label, whole) {
  const marks = [0, top];
  if (!whole || (top / 2) % 1 === 0) marks.splice(1, 0, top / 2);
  for (const v of marks) {
    box.appendChild(svg("line", { x1: left, y1: y(v), x2: right, y2: y(v), class: v === 0 ? "axis" : "grid" }));
    box.appendChild(svg("text", { x: left - 4, y: y(v) + 3, "text-anchor": "end", class: "tick" }, label(v)));
  }
}

// Bars: overdue (red) then the twelve 5-minute buckets of the next hour.
// `small`: the overview's cell, no axis (its largest count goes beside it).
function hourBars(target, hour, width, height, small) {
  const box = svg("svg", small
    ? { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", class: "bars" }
    : { viewBox: `0 0 ${width} ${height}`, class: "bars" });
  if (!hour) { target.replaceChildren(box); return; }
  const values = [hour.overdue, ...hour.buckets];
  const max = Math.max(0, ...values);
  const title = (v, i) => (i === 0 ? `${fmt(v)} overdue` : `${fmt(v)} due in ${(i - 1) * 5}–${i * 5} min`);
  if (small) {
    const w = width / values.length;
    values.forEach((v, i) => {
      const h = v === 0 ? 0 : Math.max(1.5, (v / Math.max(1, max)) * (height - 2));
      const bar = svg("rect", { x: i * w + 0.5, y: height - h, width: Math.max(1, w - 1.5), height: h,
        class: i === 0 ? "bar overdue" : "bar" });
      bar.appendChild(svg("title", {}, title(v, i)));
      box.appendChild(bar);
    });
    target.replaceChildren(box);
    return;
  }
  const left = 46, top = 12, bottom = 14;
  const axisTop = niceMax(max);
  const y = (v) => height - bottom - (v / axisTop) * (height - bottom - top);
  yAxis(box, axisTop, left, width, y, fmt, true);
  if (max === 0) {
    box.appendChild(svg("text", { x: left + 8, y: height / 2 }, "nothing due in the next hour"));
  }
  const w = (width - left) / values.length;
  values.forEach((v, i) => {
    const h = v === 0 ? 0 : Math.max(1.5, y(0) - y(v));
    const x = left + i * w;
    const bar = svg("rect", { x: x + 0.5, y: y(0) - h, width: Math.max(1, w - 1.5), height: h,
      class: i === 0 ? "bar overdue" : "bar" });
    bar.appendChild(svg("title", {}, title(v, i)));
    box.appendChild(bar);
    // The count on its bar, when it fits (about 6 units a character).
    const text = compact(v);
    if (v > 0 && text.length * 6 <= w + 2) {
      box.appendChild(svg("text", { x: x + w / 2, y: Math.max(top - 2, y(0) - h - 2), "text-anchor": "middle", class: "count" }, text));
    }
  });
  box.appendChild(svg("text", { x: left, y: height - 2 }, "overdue"));
  box.appendChild(svg("text", { x: width, y: height - 2, "text-anchor": "end" }, "+60 min"));
  target.replaceChildren(box);
}

// The time axis under a history chart: first and last point, with the
// zone; with the day too when the chart spans more than most of a day.
function timeAxis(box, history, left, width, height) {
  if (history.length === 0) return;
  const first = history[0].minute_ms;
  const last = history[history.length - 1].minute_ms;
  const day = (ms) => { const d = new Date(ms); return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} `; };
  const when = (ms) => (last - first > 20 * 3600000 ? day(ms) : "") + clock(ms);
  box.appendChild(svg("text", { x: left, y: height - 2 }, when(first)));
  box.appendChild(svg("text", { x: width, y: height - 2, "text-anchor": "end" }, `${when(last)} ${zone(last)}`));
}

// Lines over the history minutes; series: [{key, color}].
function lines(target, history, series, unit) {
  const width = 400, height = 120, left = 46, bottom = 14, top = 12;
  const box = svg("svg", { viewBox: `0 0 ${width} ${height}` });
  const values = history.flatMap((m) => series.map((s) => m[s.key] || 0));
  // Times top at a round number of seconds (1 s at least: lag under a
  // second is no lag worth a chart's height).
  const max = unit === "ms" ? niceMax(Math.max(0, ...values) / 1000) * 1000
    : unit === "bytes" ? niceMax(Math.max(0, ...values) / 1048576) * 1048576 : niceMax(Math.max(0, ...values));
  const y = (v) => height - bottom - (v / max) * (height - bottom - top);
  const label = (v) => (v === 0 ? "0" : unit === "bytes" ? bytesText(v) : unit !== "ms" ? fmt(v) : v < 1000 ? `${Math.round(v)}ms` : span(v));
  yAxis(box, max, left, width, y, label, !unit);
  if (history.length === 0) {
    box.appendChild(svg("text", { x: left + 8, y: height / 2 }, "collecting… (one point per minute)"));
  }
  const x = (i) => left + (history.length <= 1 ? (width - left) / 2 : (i / (history.length - 1)) * (width - left - 4));
  for (const s of series) {
    const points = history.map((m, i) => `${x(i).toFixed(1)},${y(m[s.key] || 0).toFixed(1)}`);
    if (points.length === 1) {
      box.appendChild(svg("circle", { cx: x(0), cy: y(history[0][s.key] || 0), r: 3, fill: s.color }));
    } else if (points.length > 1) {
      box.appendChild(svg("polyline", { points: points.join(" "), class: "line", stroke: s.color }));
    }
  }
  // Each minute's values on hover.
  history.forEach((m, i) => {
    const hit = svg("rect", { x: x(i) - 3, y: top, width: 6, height: height - bottom - top, class: "hit" });
    const shown = (v) => (v === null || v === undefined ? "–" : unit === "ms" ? span(v) : label(v));
    hit.appendChild(svg("title", {}, `${localTime(m.minute_ms)}\n${series.map((s) => `${s.key.replace(/_(ms|bytes)$/, "").replace("lag_", "lag ").replace(/_/g, " ")}: ${shown(m[s.key])}`).join("\n")}`));
    box.appendChild(hit);
  });
  timeAxis(box, history, left, width, height);
  target.replaceChildren(box);
}
