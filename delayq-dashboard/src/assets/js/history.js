// Lasting history (GET /api/history): throughput, failures, latency and
// memory of one queue, or of the whole server on the overview, over 1h,
// 24h, 7d or 30d. Minutes for a day, hours for a month, kept in Redis by
// whichever dashboard samples, so a restarted one shows them too. The range
// stays in the address (?range=) so a reload keeps it; the points are read
// again every minute (a point is a finished minute or hour).
const RANGES = ["1h", "24h", "7d", "30d"];
const STEPS = { "1h": "1 minute", "24h": "12 minutes", "7d": "2 hours", "30d": "6 hours" };
const HISTORY_REFRESH_MS = 60000;

function bytesText(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = n, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v >= 10 || u === 0 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

// `charts`: { flow, failures, latency, memory } target elements; `ranges`:
// where the buttons go; `step`: where the resolution is said; `name`: the
// queue (none: the whole server).
function historyCharts({ ranges, step, charts, name }) {
  let range = new URLSearchParams(location.search).get("range");
  if (!RANGES.includes(range)) range = "1h";
  const buttons = RANGES.map((r) => el("button", { type: "button", class: "range", "data-range": r }, r));
  const mark = () => buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.range === range)));
  mark();
  ranges.replaceChildren(...buttons);
  let asked = 0;
  const load = async () => {
    const ask = ++asked;
    const query = new URLSearchParams({ range });
    if (name) query.set("name", name);
    const response = await fetch(`/api/history?${query}`, { credentials: "same-origin", headers: { accept: "application/json" } });
    const data = await response.json().catch(() => ({}));
    // A press meanwhile asked for another range: its answer draws.
    if (ask !== asked || !response.ok) return;
    const points = data.points.map((p) => ({ ...p, minute_ms: p.t_ms }));
    lines(charts.flow, points, [
      { key: "offered", color: "#7c3aed" }, { key: "transferred", color: "#2f6fde" }, { key: "acked", color: "#16a34a" },
      { key: "delivered", color: "#0891b2" },
    ]);
    lines(charts.failures, points, [
      { key: "failed", color: "#c2410c" }, { key: "dead_lettered", color: "#d92d20" }, { key: "timed_out", color: "#a16207" },
      { key: "cancelled", color: "#667085" },
    ]);
    lines(charts.latency, points, [{ key: "lag_p99_ms", color: "#c2410c" }, { key: "oldest_ready_ms", color: "#2f6fde" }], "ms");
    lines(charts.memory, points, [{ key: "memory_bytes", color: "#0f766e" }], "bytes");
    step.textContent = `one point per ${STEPS[range]}`;
    charts.flow.closest("section").dataset.range = range;
    charts.flow.closest("section").dataset.points = String(points.length);
  };
  for (const button of buttons) {
    button.addEventListener("click", () => {
      range = button.dataset.range;
      mark();
      const params = new URLSearchParams(location.search);
      params.set("range", range);
      history.replaceState(null, "", `?${params}`);
      load().catch(() => {});
    });
  }
  load().catch(() => {});
  setInterval(() => load().catch(() => {}), HISTORY_REFRESH_MS);
}
