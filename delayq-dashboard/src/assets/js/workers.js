// The Workers page: every running delayq Worker of one queue (?queue=N, read
// now) or of every queue (as the sampler last read them), from their
// heartbeats: host, process, version, settings, counts, what each runs now
// and its lease. A worker that missed its last beats is flagged silent.

function workersPage() {
  const queue = new URLSearchParams(location.search).get("queue");
  if (queue !== null) {
    $("workers-scope").replaceChildren("of ", el("a", { href: `/queue?name=${encodeURIComponent(queue)}` }, visible(queue)));
    $("all-workers").hidden = false;
  }
  const queueCell = (name) => {
    const td = el("td", { class: "name" });
    td.appendChild(el("a", { href: `/workers?queue=${encodeURIComponent(name)}`, title: visible(name) }, visible(name)));
    return td;
  };
  const load = async () => {
    const data = await getJson(queue === null ? "/api/workers" : `/api/workers?queue=${encodeURIComponent(queue)}`);
    const rows = [];
    const running = [];
    let alive = 0, silent = 0, busy = 0, slots = 0;
    for (const q of data.queues) {
      alive += q.alive; silent += q.silent; busy += q.busy; slots += q.slots;
      for (const w of q.workers) {
        const tr = el("tr", { "data-worker": w.id, class: w.silent ? "silent" : "" });
        tr.appendChild(queueCell(q.queue));
        tr.appendChild(el("td", { class: "id" }, visible(w.id)));
        tr.appendChild(el("td", { class: "host" }, visible(w.host || "–")));
        tr.appendChild(el("td", { class: "num" }, w.pid));
        tr.appendChild(el("td", {}, visible(w.version)));
        const state = el("td", { class: "state" });
        state.appendChild(w.silent
          ? el("span", { class: "badge silent", title: `no beat for ${span(data.now_ms - w.last_beat_ms)} (it beats every ${span(w.heartbeat_ms)}): its process died, hangs, or lost Redis` }, "silent")
          : el("span", { class: "badge alive" }, "alive"));
        tr.appendChild(state);
        tr.appendChild(el("td", { title: localTime(w.started_at_ms) }, relative(w.started_at_ms - data.now_ms)));
        tr.appendChild(el("td", { class: w.silent ? "late" : "", title: localTime(w.last_beat_ms) }, relative(w.last_beat_ms - data.now_ms)));
        tr.appendChild(el("td", { class: "num busy" }, `${fmt(w.busy)} / ${fmt(w.concurrency)}`));
        tr.appendChild(el("td", { class: "num" }, fmt(w.prefetch)));
        tr.appendChild(el("td", {}, w.rate_limit ? `${fmt(w.rate_limit.limit)} per ${span(w.rate_limit.per_ms)}${w.rate_limit.burst > 1 ? ` (burst ${w.rate_limit.burst})` : ""}` : "–"));
        tr.appendChild(el("td", { class: "num" }, fmt(w.handled)));
        tr.appendChild(el("td", { class: `num${w.failed > 0 ? " hot" : ""}` }, fmt(w.failed)));
        rows.push(tr);
        for (const r of w.running) {
          const rt = el("tr", { "data-delivery": r.delivery });
          rt.appendChild(queueCell(q.queue));
          rt.appendChild(el("td", { class: "id" }, visible(w.id)));
          rt.appendChild(el("td", { class: "delivery" }, visible(r.delivery)));
          rt.appendChild(el("td", { class: "num" }, r.attempt));
          rt.appendChild(el("td", { title: localTime(r.since_ms) }, `${span(data.now_ms - r.since_ms)} ago`));
          rt.appendChild(el("td", { class: r.lease_expires_ms < data.now_ms ? "late" : "", title: localTime(r.lease_expires_ms) }, relative(r.lease_expires_ms - data.now_ms)));
          running.push(rt);
        }
      }
    }
    setCount("workers-alive", alive);
    setCount("workers-silent", silent, true);
    setCount("workers-busy", busy);
    setCount("workers-slots", slots);
    document.querySelector("#workers tbody").replaceChildren(...(rows.length ? rows
      : [el("tr", {}, null)].map((tr) => { tr.appendChild(el("td", { colspan: 13, class: "muted" }, "no workers")); return tr; })));
    document.querySelector("#running tbody").replaceChildren(...(running.length ? running
      : [el("tr", {}, null)].map((tr) => { tr.appendChild(el("td", { colspan: 6, class: "muted" }, "no handler runs")); return tr; })));
    $("workers-note").textContent = queue === null
      ? `Every queue's workers as the last sampling pass read them (every ${span(data.sample_interval_ms)}). Each delayq Worker beats in its queue's keys; a silent one missed its last 3 beats. Java consumers do not beat.`
      : "Read now from the queue's worker heartbeats; a silent worker missed its last 3 beats. Java consumers do not beat.";
  };
  poll(load);
}
