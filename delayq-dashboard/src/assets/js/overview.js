// The overview: every queue, filtered, sorted and paged.
function overviewPage() {
  const state = { offset: 0, limit: 50, filter: "", sort: "name", matching: 0 };
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
      const tr = el("tr", { "data-queue": queue.name });
      const name = el("td", { class: "name" });
      name.appendChild(el("a", { href: `/queue?name=${encodeURIComponent(queue.name)}` }, visible(queue.name)));
      if (queue.paused) name.appendChild(el("span", { class: "badge paused" }, "paused"));
      tr.appendChild(name);
      for (const [key, cls] of [["pending", "pending"], ["ready", "ready"], ["in_flight", "in-flight"],
        ["dead_letters", "dead-letters"], ["quarantined", "quarantined"]]) {
        const hot = (key === "dead_letters" || key === "quarantined") && queue[key] > 0;
        tr.appendChild(el("td", { class: `num ${cls}${hot ? " hot" : ""}`, "data-value": queue[key] ?? "" }, fmt(queue[key])));
      }
      tr.appendChild(el("td", { class: "next-due" }, queue.next_due_ms ? relative(queue.next_due_ms - data.now_ms) : "–"));
      // A paused queue's lag is deliberate: shown, never as an alarm.
      const lagClass = queue.paused ? " paused" : queue.lag_ms > 5000 ? " late" : "";
      tr.appendChild(el("td", { class: `lag${lagClass}`, "data-value": queue.lag_ms ?? "" },
        queue.lag_ms ? span(queue.lag_ms) : "–"));
      const chart = el("td", { class: "hour" });
      hourBars(chart, queue.due_next_hour, 130, 22);
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
      ? `${fmt(s.queues)} queues found by SCAN; every queue sampled every ${span(data.sample_interval_ms)} (last pass ${span(s.last_cycle_ms || 0)}).${s.error ? " " + visible(s.error) : ""}`
      : "discovering queues (SCAN)…";
  };
  const refresh = poll(load);
  $("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - state.limit); refresh(); });
  $("next").addEventListener("click", () => { state.offset += state.limit; refresh(); });
  $("filter").addEventListener("input", (e) => { state.filter = e.target.value; state.offset = 0; refresh(); });
  $("sort").addEventListener("change", (e) => { state.sort = e.target.value; state.offset = 0; refresh(); });
}

