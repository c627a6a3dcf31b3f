// Charts: SVG drawn from numbers the API gives, as text and attributes only.

// Bars: overdue (red) then the buckets.
function hourBars(target, hour, width, height) {
  const box = svg("svg", { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", class: "bars" });
  if (!hour) { target.replaceChildren(box); return; }
  if (hour.overdue === 0 && hour.buckets.every((v) => v === 0) && width > 200) {
    box.appendChild(svg("text", { x: 8, y: height / 2 }, "nothing due in the next hour"));
  }
  const values = [hour.overdue, ...hour.buckets];
  const max = Math.max(1, ...values);
  const w = width / values.length;
  values.forEach((v, i) => {
    const h = v === 0 ? 0 : Math.max(1.5, (v / max) * (height - 2));
    const bar = svg("rect", { x: i * w + 0.5, y: height - h, width: Math.max(1, w - 1.5), height: h,
      class: i === 0 ? "bar overdue" : "bar" });
    bar.appendChild(svg("title", {}, i === 0 ? `${v} overdue` : `${v} due in ${(i - 1) * 5}–${i * 5} min`));
    box.appendChild(bar);
  });
  target.replaceChildren(box);
}

// Lines over the history minutes; series: [{key, color}].
function lines(target, history, series, unit) {
  const width = 400, height = 120, left = 34, bottom = 14;
  const box = svg("svg", { viewBox: `0 0 ${width} ${height}` });
  const values = history.flatMap((m) => series.map((s) => m[s.key] || 0));
  const max = Math.max(1, ...values);
  box.appendChild(svg("line", { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: "axis" }));
  box.appendChild(svg("text", { x: 2, y: 10 }, unit === "ms" ? span(max) : fmt(max)));
  box.appendChild(svg("text", { x: 2, y: height - bottom }, "0"));
  if (history.length === 0) {
    box.appendChild(svg("text", { x: left + 8, y: height / 2 }, "collecting… (one point per minute)"));
  }
  const x = (i) => left + (history.length <= 1 ? (width - left) / 2 : (i / (history.length - 1)) * (width - left - 4));
  const y = (v) => height - bottom - (v / max) * (height - bottom - 12);
  for (const s of series) {
    const points = history.map((m, i) => `${x(i).toFixed(1)},${y(m[s.key] || 0).toFixed(1)}`);
    if (points.length === 1) {
      box.appendChild(svg("circle", { cx: x(0), cy: y(history[0][s.key] || 0), r: 3, fill: s.color }));
    } else if (points.length > 1) {
      box.appendChild(svg("polyline", { points: points.join(" "), class: "line", stroke: s.color }));
    }
  }
  if (history.length > 0) {
    box.appendChild(svg("text", { x: left, y: height - 2 }, new Date(history[0].minute_ms).toTimeString().slice(0, 5)));
    box.appendChild(svg("text", { x: width - 30, y: height - 2 }, new Date(history[history.length - 1].minute_ms).toTimeString().slice(0, 5)));
  }
  target.replaceChildren(box);
}

// Grouped bars, one group per history minute; series: [{key, color}].
function groupedBars(target, history, series) {
  const width = 400, height = 120, left = 34, bottom = 14;
  const box = svg("svg", { viewBox: `0 0 ${width} ${height}` });
  const max = Math.max(1, ...history.flatMap((m) => series.map((s) => m[s.key] || 0)));
  box.appendChild(svg("line", { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: "axis" }));
  box.appendChild(svg("text", { x: 2, y: 10 }, fmt(max)));
  box.appendChild(svg("text", { x: 2, y: height - bottom }, "0"));
  if (history.length === 0) {
    box.appendChild(svg("text", { x: left + 8, y: height / 2 }, "collecting… (one group per minute)"));
  }
  const slots = Math.max(history.length, 10);
  const group = (width - left - 4) / slots;
  const bar = Math.max(1, (group - 2) / series.length);
  history.forEach((m, i) => {
    series.forEach((s, j) => {
      const v = m[s.key] || 0;
      const h = v === 0 ? 0 : Math.max(1.5, (v / max) * (height - bottom - 12));
      const rect = svg("rect", { x: left + i * group + j * bar, y: height - bottom - h, width: Math.max(1, bar - 0.5), height: h, fill: s.color });
      rect.appendChild(svg("title", {}, `${new Date(m.minute_ms).toTimeString().slice(0, 5)} ${s.key.replace("_", " ")}: ${v}`));
      box.appendChild(rect);
    });
  });
  if (history.length > 0) {
    box.appendChild(svg("text", { x: left, y: height - 2 }, new Date(history[0].minute_ms).toTimeString().slice(0, 5)));
  }
  target.replaceChildren(box);
}

