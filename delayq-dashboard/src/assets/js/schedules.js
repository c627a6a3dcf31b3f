// The queue's schedules: spec, next and last fire, counts, state, value;
// a badge says whether any process runs them (their heartbeats). A row's
// Fires opens its recent fires under it (on any dashboard); unless
// read-only, Run now, Edit (a form under the row), Pause or Resume and
// Remove (pressed twice). What is open under a row (fires, an edit being
// typed) stays open across each poll's redraw: the same nodes are put back,
// the focus and caret of a field being typed in with them.
const scheduleRows = { armed: null, last: null, fires: new Map(), editing: null };

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
  const names = new Set(schedules.items.map((s) => s.name));
  for (const name of [...scheduleRows.fires.keys()]) if (!names.has(name)) scheduleRows.fires.delete(name);
  if (scheduleRows.editing && !names.has(scheduleRows.editing.name)) scheduleRows.editing = null;
  const rows = [];
  for (const s of schedules.items) {
    const tr = el("tr", { "data-schedule": s.name });
    tr.appendChild(el("td", { class: "expand" })).appendChild(firesToggle(s));
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
    rows.push(tr);
    if (scheduleRows.editing && scheduleRows.editing.name === s.name) rows.push(scheduleRows.editing.row);
    const open = scheduleRows.fires.get(s.name);
    if (open) {
      rows.push(open.row);
      loadFires(s.name);
    }
  }
  const head = document.querySelector("#schedules-table thead tr");
  if (!READ_ONLY && !head.querySelector("th.row-actions")) {
    head.appendChild(el("th", { class: "row-actions" }, "actions"));
  }
  replaceKeepingFocus(document.querySelector("#schedules-table tbody"), rows);
}

const columns = () => document.querySelectorAll("#schedules-table thead th").length;

// "▸" opens the schedule's recent fires under its row; "▾" closes them.
function firesToggle(s) {
  const open = scheduleRows.fires.has(s.name);
  const button = el("button", { type: "button", class: "link schedule-fires", "aria-expanded": String(open),
    "aria-label": `recent fires of ${visible(s.name)}`,
    title: "The last 20 fires: when each was due and ran, on time or late, and which runner" }, open ? "▾" : "▸");
  button.addEventListener("click", () => {
    if (scheduleRows.fires.has(s.name)) {
      scheduleRows.fires.delete(s.name);
    } else {
      const cell = el("td", { class: "fires-cell", colspan: String(columns()) }, "reading the fires…");
      const row = el("tr", { class: "schedule-fires-row", "data-fires-of": s.name });
      row.appendChild(cell);
      scheduleRows.fires.set(s.name, { row, cell });
    }
    redraw();
  });
  return button;
}

function redraw() {
  const last = scheduleRows.last;
  if (last) schedulesSection(last.schedules, last.now);
}

const FIRE_KINDS = { on_time: "on time", late: "late", missed: "missed", by_hand: "by hand" };

// Reads one schedule's fires into its open row (each poll while open).
async function loadFires(name) {
  const open = scheduleRows.fires.get(name);
  if (!open || open.loading) return;
  open.loading = true;
  const queue = new URLSearchParams(location.search).get("name") || "";
  try {
    const body = await getJson(`/api/schedule-fires?${new URLSearchParams({ name: queue, schedule: name })}`);
    open.cell.replaceChildren(firesTable(body.fires));
  } catch (error) {
    open.cell.replaceChildren(el("span", { class: "form-error" }, visible(error.message)));
  } finally {
    open.loading = false;
  }
}

function firesTable(fires) {
  if (fires.length === 0) return el("span", { class: "muted" }, "no fire recorded yet (fires by delayq versions before the history do not show)");
  const table = el("table", { class: "fires" });
  const head = el("tr");
  for (const h of ["due", "ran", "after due", "kind", "offered", "missed", "runner", "host"]) head.appendChild(el("th", {}, h));
  table.appendChild(el("thead")).appendChild(head);
  const body = el("tbody");
  for (const f of fires) {
    const tr = el("tr", { class: `fire ${f.kind}` });
    tr.appendChild(el("td", { title: localTime(f.due_ms) }, `${localTime(f.due_ms).slice(0, 19)} ${zone(f.due_ms)}`));
    tr.appendChild(el("td", { title: localTime(f.fired_at_ms) }, localTime(f.fired_at_ms).slice(11, 23)));
    tr.appendChild(el("td", { class: "num" }, f.kind === "by_hand" ? "–" : span(f.late_by_ms)));
    tr.appendChild(el("td", { class: `kind ${f.kind}` }, FIRE_KINDS[f.kind] || visible(f.kind)));
    tr.appendChild(el("td", { class: "num" }, fmt(f.offered)));
    tr.appendChild(el("td", { class: `num${f.missed > 0 ? " hot" : ""}` }, fmt(f.missed)));
    tr.appendChild(el("td", {}, f.kind === "by_hand" ? `by hand · pid ${visible(f.runner)}` : visible(f.runner)));
    tr.appendChild(el("td", {}, visible(f.host)));
    body.appendChild(tr);
  }
  table.appendChild(body);
  return table;
}

// Run now and Edit, Pause or Resume by its state, and Remove: the first
// press of Remove arms it (kept across each poll's redraw), the second removes.
function scheduleActions(s) {
  const td = el("td", { class: "row-actions" });
  const run = el("button", { type: "button", class: "schedule-run", title: "Offer its value once, now; its next fire stays" }, "Run now");
  run.addEventListener("click", () => scheduleAct(run, "schedule-run", s));
  const edit = el("button", { type: "button", class: "schedule-edit", title: "Change its spec, time zone or value" }, "Edit");
  edit.addEventListener("click", () => {
    scheduleRows.editing = scheduleRows.editing && scheduleRows.editing.name === s.name ? null : editForm(s);
    redraw();
  });
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
  td.append(run, edit, toggle, remove);
  return td;
}

// The edit form, under the schedule's row: what it holds now, sent back
// only where changed; the server's refusal is shown in the form.
function editForm(s) {
  const row = el("tr", { class: "schedule-edit-row", "data-edit-of": s.name });
  const cell = el("td", { colspan: String(columns()) });
  const form = el("form", { class: "schedule-edit" });
  const field = (label, input, hint) => {
    const wrap = el("label", {}, label);
    wrap.appendChild(input);
    if (hint) wrap.appendChild(el("span", { class: "muted" }, hint));
    return wrap;
  };
  const spec = el("input", { type: "text", name: "spec", value: s.expr, spellcheck: "false", size: "28" });
  const tz = el("input", { type: "text", name: "tz", value: s.time_zone || "", placeholder: "UTC", spellcheck: "false", size: "18" });
  const value = el("textarea", { name: "value", rows: "2", cols: "48", spellcheck: "false" });
  // A value shown cut short (or not decoded) is not put in the form: kept unless a new one is typed.
  const whole = s.value.decoded && !(s.value.text.length > 2000 && s.value.text.endsWith("…"));
  value.value = whole ? s.value.text : "";
  if (!whole) value.placeholder = s.value.decoded ? "too long to edit here: kept unless you type a new value" : "not decoded with this codec: kept unless you type a new value";
  const error = el("p", { class: "form-error", role: "alert" });
  error.hidden = true;
  const save = el("button", { type: "submit", class: "primary schedule-save" }, "Save");
  const cancel = el("button", { type: "button", class: "schedule-cancel" }, "Cancel");
  cancel.addEventListener("click", () => { scheduleRows.editing = null; redraw(); });
  form.append(
    field("spec ", spec, " cron (0 9 * * MON-FRI) or every 5m"),
    field("time zone ", tz, " for cron"),
    field("value ", value),
    save, cancel, error,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = new URLSearchParams(location.search).get("name") || "";
    const params = { name, schedule: s.name };
    const specChanged = spec.value.trim() !== s.expr;
    const tzChanged = tz.value.trim() !== (s.time_zone || "");
    if (specChanged) params.spec = spec.value.trim();
    // A new cron expression keeps the zone shown unless it is changed.
    if (tzChanged || (specChanged && tz.value.trim() && !spec.value.trim().startsWith("every"))) params.tz = tz.value.trim();
    if (whole ? value.value !== s.value.text : value.value !== "") params.value = value.value;
    if (Object.keys(params).length === 2) {
      error.textContent = "nothing changed";
      error.hidden = false;
      return;
    }
    save.disabled = true;
    try {
      const result = await post("schedule-edit", params);
      scheduleRows.editing = null;
      showFlash(result.message, false);
      redraw();
    } catch (failure) {
      error.textContent = visible(failure.message);
      error.hidden = false;
      if (failure.body && failure.body.redis) showFlash(failure.message, true, true);
    } finally {
      save.disabled = false;
    }
  });
  cell.appendChild(form);
  row.appendChild(cell);
  return { name: s.name, row };
}

function showFlash(message, isError, outage) {
  const flash = $("flash");
  flash.className = isError ? "flash error" : "flash";
  delete flash.dataset.outage;
  if (outage) flash.dataset.outage = "1";
  flash.textContent = visible(message);
  flash.hidden = false;
}

// Posts one schedule action, flashes its answer and redraws the section
// as it now is (the next poll confirms it).
async function scheduleAct(button, action, s) {
  const name = new URLSearchParams(location.search).get("name") || "";
  button.disabled = true;
  try {
    const result = await post(action, { name, schedule: s.name });
    showFlash(result.message, false);
    const last = scheduleRows.last;
    if (action !== "schedule-run") {
      const items = action === "schedule-remove"
        ? last.schedules.items.filter((other) => other.name !== s.name)
        : last.schedules.items.map((other) => (other.name === s.name ? { ...other, paused: action === "schedule-pause" } : other));
      schedulesSection({ ...last.schedules, items }, last.now);
    } else if (scheduleRows.fires.has(s.name)) {
      loadFires(s.name);
    }
  } catch (error) {
    showFlash(error.message, true, Boolean(error.body && error.body.redis));
  } finally {
    button.disabled = false;
  }
}
