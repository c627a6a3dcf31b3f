// The overview: every queue, filtered, sorted (what needs attention first,
// by default) and paged. Sort, filter and page live in the URL, so a link
// or a reload shows the same view.
const SORTS = ["attention", "name", "pending", "ready", "dead", "lag"];

function overviewPage() {
  const url = new URLSearchParams(location.search);
  const state = {
    offset: Math.max(0, parseInt(url.get("offset"), 10) || 0),
    limit: 50,
    filter: url.get("filter") || "",
    sort: SORTS.includes(url.get("sort")) ? url.get("sort") : "attention",
    matching: 0,
  };
  $("filter").value = state.filter;
  $("sort").value = state.sort;
  historyCharts({
    ranges: $("history-ranges"), step: $("history-step"),
    charts: { flow: $("chart-flow"), failures: $("chart-failures"), latency: $("chart-lag"), memory: $("chart-memory") },
  });
  // The view in the address bar, without a history entry per keystroke.
  const remember = () => {
    const q = new URLSearchParams();
    if (state.sort !== "attention") q.set("sort", state.sort);
    if (state.filter) q.set("filter", state.filter);
    if (state.offset) q.set("offset", state.offset);
    const range = new URLSearchParams(location.search).get("range");
    if (range) q.set("range", range);
    const search = q.toString();
    history.replaceState(null, "", search ? `?${search}` : location.pathname);
  };
  const load = async () => {
    const q = new URLSearchParams({ offset: state.offset, limit: state.limit, filter: state.filter, sort: state.sort });
    const data = await getJson(`/api/overview?${q}`);
    state.matching = data.matching;
    setCount("total-queues", data.sampler.queues);
    setCount("total-pending", data.totals.pending);
    setCount("total-ready", data.totals.ready);
    setCount("total-in-flight", data.totals.in_flight);
    setCount("total-dead-letters", data.totals.dead_letters, true);
    setCount("total-quarantined", data.totals.quarantined, true);
    const rows = data.queues.map((queue) => {
      // A partitioned queue is one row, its partitions' counts added up
      // (null until every partition is sampled); its page lists them.
      const parts = queue.partitioned;
      const page = parts ? "/partitioned" : "/queue";
      const tr = el("tr", { "data-queue": queue.name, class: parts ? "partitioned" : "" });
      const name = el("td", { class: "name" });
      name.appendChild(el("a", { href: `${page}?name=${encodeURIComponent(queue.name)}`, title: visible(queue.name) }, visible(queue.name)));
      if (parts) {
        name.appendChild(el("span", {
          class: "badge partitioned",
          title: `one queue over ${parts.count} ordinary queues (its partitions): the counts are theirs added up${parts.sampled < parts.count ? `; ${parts.sampled} of ${parts.count} sampled so far` : ""}`,
        }, `partitioned ×${parts.count}`));
      }
      if (queue.paused) {
        name.appendChild(el("span", { class: "badge paused", title: queue.paused_since_ms ? `paused since ${localTime(queue.paused_since_ms)}` : "" }, pausedText(queue, data.now_ms)));
      }
      if (queue.untaken) name.appendChild(el("span", { class: "badge untaken", title: UNTAKEN_TITLE }, "nobody takes"));
      // Schedules nothing fires: no runner beat within 30 s.
      if (queue.schedules && !queue.schedules.alive) {
        name.appendChild(el("span", { class: "badge runners none", title: "this queue has schedules and no process running them beat within 30 s: they do not fire" }, "no schedule runner"));
      }
      tr.appendChild(name);
      for (const [key, cls] of [["pending", "pending"], ["ready", "ready"], ["in_flight", "in-flight"],
        ["dead_letters", "dead-letters"], ["quarantined", "quarantined"]]) {
        const hot = (key === "dead_letters" || key === "quarantined") && queue[key] > 0;
        const cell = el("td", { class: `num ${cls}${hot ? " hot" : ""}`, "data-value": queue[key] ?? "" }, fmt(queue[key]));
        if (key === "in_flight") inFlightAgainstLimit(cell, queue);
        tr.appendChild(cell);
      }
      // Workers beating, busy of their slots; silent ones flagged (their process died or hangs).
      const w = queue.workers || { alive: 0, silent: 0, busy: 0, slots: 0 };
      const workers = el("td", { class: "workers", "data-value": w.alive });
      if (w.alive || w.silent) {
        // A partitioned queue's workers are counted per process (one
        // partitioned worker beats in every partition); its page lists the partitions.
        const href = parts ? `/partitioned?name=${encodeURIComponent(queue.name)}` : `/workers?queue=${encodeURIComponent(queue.name)}`;
        const title = `${w.alive} live${parts ? " (processes)" : ""}, ${w.busy} of ${w.slots} handler slots busy`;
        workers.appendChild(el("a", { href, title }, `${fmt(w.alive)} · ${fmt(w.busy)}/${fmt(w.slots)}`));
        if (w.silent) workers.appendChild(el("span", { class: "silent", title: "workers that missed their last beats: died, hang, or lost Redis" }, `${fmt(w.silent)} silent`));
      } else workers.textContent = "–";
      tr.appendChild(workers);
      tr.appendChild(el("td", { class: "next-due" }, queue.next_due_ms ? relative(queue.next_due_ms - data.now_ms) : "–"));
      // A paused queue's lag is deliberate: shown, never as an alarm.
      const lagClass = queue.paused ? " paused" : queue.lag_ms > 5000 ? " late" : "";
      tr.appendChild(el("td", { class: `lag${lagClass}`, "data-value": queue.lag_ms ?? "" },
        queue.lag_ms ? span(queue.lag_ms) : "–"));
      const waiting = el("td", { class: "waiting" });
      oldestReady(waiting, queue);
      tr.appendChild(waiting);
      const chart = el("td", { class: "hour" });
      const hour = queue.due_next_hour;
      hourBars(chart, hour, 130, 22, true);
      // The tallest bar's count beside the bars: one element never looks like many.
      if (hour) {
        const peak = Math.max(hour.overdue, ...hour.buckets);
        const total = hour.overdue + hour.buckets.reduce((a, b) => a + b, 0);
        chart.appendChild(el("span", { class: "peak", "data-value": peak }, peak ? compact(peak) : "0"));
        chart.title = `next hour: ${fmt(total)} due (${fmt(hour.overdue)} overdue now); the tallest bar is ${fmt(peak)}`;
      }
      tr.appendChild(chart);
      if (queue.error) tr.title = visible(queue.error);
      return tr;
    });
    document.querySelector("#queues tbody").replaceChildren(...rows);
    const last = Math.min(state.offset + state.limit, data.matching);
    $("page-info").textContent = data.matching ? `${fmt(state.offset + 1)}–${fmt(last)} of ${fmt(data.matching)}` : "no queue";
    $("prev").disabled = state.offset === 0;
    $("next").disabled = last >= data.matching;
    const s = data.sampler;
    $("sampler-note").textContent = s.discovered
      ? `${fmt(s.queues)} ${s.queues === 1 ? "queue" : "queues"} found by SCAN and delayq's registry${s.partitioned ? ` (${fmt(s.partitioned)} partitioned: one row each, over ${fmt(s.partitions)} partitions)` : ""}; every queue sampled every ${span(data.sample_interval_ms)} (last pass ${span(s.last_cycle_ms || 0)}).${s.error ? " " + visible(s.error) : ""}`
      : "discovering queues (SCAN and delayq's registry)…";
  };
  const refresh = poll(load);
  const change = (update) => () => { update(); remember(); refresh(); };
  $("prev").addEventListener("click", change(() => { state.offset = Math.max(0, state.offset - state.limit); }));
  $("next").addEventListener("click", change(() => { state.offset += state.limit; }));
  $("filter").addEventListener("input", change(() => { state.filter = $("filter").value; state.offset = 0; }));
  $("sort").addEventListener("change", change(() => { state.sort = $("sort").value; state.offset = 0; }));
}

// A queue's in-flight cell against its concurrency limit: the live ones
// (those past their visibility timeout do not count) "/ LIMIT", marked
// once reached; "+N lapsed" when some are past their timeout.
function inFlightAgainstLimit(cell, queue) {
  const limit = queue.concurrency_limit;
  const lapsed = Number(queue.lapsed || 0);
  if ((limit === undefined || limit === null) && !lapsed) return;
  const live = Math.max(0, Number(queue.in_flight || 0) - lapsed);
  const limited = limit !== undefined && limit !== null;
  cell.textContent = limited ? `${fmt(live)} / ${fmt(limit)}` : fmt(queue.in_flight);
  if (lapsed) cell.appendChild(el("span", { class: "lapsed" }, ` +${fmt(lapsed)} lapsed`));
  if (limited && live >= Number(limit)) cell.classList.add("full");
  cell.title = [
    limited ? `${fmt(live)} live of a concurrency limit of ${fmt(limit)}${live >= Number(limit) ? ": reached, reliable takes and workers wait for room" : ""}` : "",
    lapsed ? `${fmt(lapsed)} past their visibility timeout, not counted, returned when a reliable consumer's reaper runs` : "",
  ].filter(Boolean).join("; ");
}
