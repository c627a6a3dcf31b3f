// The queue's schedules: spec, next and last fire, counts, state, value;
// a badge says whether any process runs them (their heartbeats).
function schedulesSection(schedules, now) {
  $("schedules").hidden = schedules.items.length === 0;
  const badge = $("schedule-runners");
  const latest = schedules.runners[0];
  badge.className = `badge runners ${schedules.alive ? "alive" : "none"}`;
  badge.textContent = schedules.alive
    ? `${fmt(schedules.runners.length)} runner${schedules.runners.length === 1 ? "" : "s"} alive · beat ${span(Math.max(0, now - latest.last_beat_ms))} ago`
    : "no runner alive";
  badge.title = schedules.runners.map((r) => `${visible(r.id)}: beat ${localTime(r.last_beat_ms)}`).join("\n")
    || "no process running these schedules beat within 30 s: they do not fire";
  const rows = schedules.items.map((s) => {
    const tr = el("tr", { "data-schedule": s.name });
    tr.appendChild(el("td", { class: "name" }, visible(s.name)));
    tr.appendChild(el("td", { class: "spec", title: `misfire: ${s.misfire}` }, visible(s.spec)));
    // How soon, and when: "in 3d9h · 2026-11-30 03:00 UTC+05:30".
    const at = (ms) => `${relative(ms - now)} · ${localTime(ms).slice(0, 16)} ${zone(ms)}`;
    const next = el("td", { class: `next${!s.paused && s.next_ms && s.next_ms < now - 30000 ? " late" : ""}` },
      s.paused ? "–" : s.next_ms ? at(s.next_ms) : "never");
    if (s.next_ms) next.title = localTime(s.next_ms);
    tr.appendChild(next);
    const last = el("td", { class: "last" }, s.last_fired_ms ? relative(s.last_fired_ms - now) : "never");
    if (s.last_fired_ms) last.title = localTime(s.last_fired_ms);
    tr.appendChild(last);
    tr.appendChild(el("td", { class: "num fired" }, fmt(s.fired)));
    tr.appendChild(el("td", { class: `num missed${s.missed > 0 ? " hot" : ""}` }, fmt(s.missed)));
    const [state, cls] = s.paused ? ["paused", "paused"] : schedules.alive ? ["running", "running"] : ["no runner", "idle"];
    tr.appendChild(el("td", { class: `state ${cls}` }, state));
    tr.appendChild(withCodec(el("td", { class: `payload${s.value.decoded ? "" : " hex"}` }, visible(s.value.text)), s.value));
    return tr;
  });
  document.querySelector("#schedules-table tbody").replaceChildren(...rows);
}

