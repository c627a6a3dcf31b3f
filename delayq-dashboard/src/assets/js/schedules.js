// The queue's schedules: spec, next and last fire, counts, state, value;
// a badge says whether any process runs them (their heartbeats); unless
// read-only, a row's Pause or Resume and Remove (pressed twice).
const scheduleRows = { armed: null, last: null };

function schedulesSection(schedules, now) {
  scheduleRows.last = { schedules, now };
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
    tr.appendChild(payloadCell(s.value, `schedule:${s.name}`));
    if (!READ_ONLY) tr.appendChild(scheduleActions(s));
    return tr;
  });
  const head = document.querySelector("#schedules-table thead tr");
  if (!READ_ONLY && !head.querySelector("th.row-actions")) {
    head.appendChild(el("th", { class: "row-actions" }, "actions"));
  }
  document.querySelector("#schedules-table tbody").replaceChildren(...rows);
}

// Pause or Resume by its state, and Remove: the first press arms it (kept
// across each poll's redraw), the second removes.
function scheduleActions(s) {
  const td = el("td", { class: "row-actions" });
  const toggle = s.paused
    ? el("button", { type: "button", class: "schedule-resume", title: "Fire again from its next occurrence" }, "Resume")
    : el("button", { type: "button", class: "schedule-pause", title: "Stop firing until resumed" }, "Pause");
  toggle.addEventListener("click", () => scheduleAct(toggle, s.paused ? "schedule-resume" : "schedule-pause", s));
  const armed = "Remove? Press again";
  const remove = el("button", { type: "button", class: "danger schedule-remove" }, scheduleRows.armed === s.name ? armed : "Remove");
  remove.addEventListener("click", () => {
    if (scheduleRows.armed === s.name) {
      scheduleRows.armed = null;
      remove.textContent = "Remove";
      scheduleAct(remove, "schedule-remove", s);
    } else {
      scheduleRows.armed = s.name;
      for (const other of document.querySelectorAll("#schedules-table button.schedule-remove")) other.textContent = "Remove";
      remove.textContent = armed;
    }
  });
  td.append(toggle, remove);
  return td;
}

// Posts one schedule action, flashes its answer and redraws the section
// as it now is (the next poll confirms it).
async function scheduleAct(button, action, s) {
  const name = new URLSearchParams(location.search).get("name") || "";
  const flash = $("flash");
  button.disabled = true;
  try {
    const result = await post(action, { name, schedule: s.name });
    flash.className = "flash";
    delete flash.dataset.outage;
    flash.textContent = visible(result.message);
    const last = scheduleRows.last;
    const items = action === "schedule-remove"
      ? last.schedules.items.filter((other) => other.name !== s.name)
      : last.schedules.items.map((other) => (other.name === s.name ? { ...other, paused: action === "schedule-pause" } : other));
    schedulesSection({ ...last.schedules, items }, last.now);
  } catch (error) {
    flash.className = "flash error";
    flash.textContent = visible(error.message);
    if (error.body && error.body.redis) flash.dataset.outage = "1";
  } finally {
    flash.hidden = false;
    button.disabled = false;
  }
}

