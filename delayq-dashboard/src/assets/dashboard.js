// delayq dashboard: polls the JSON API and draws the pages. No framework,
// no build step; embedded in the binary.
"use strict";

const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
const CSRF = meta("delayq-csrf");
const READ_ONLY = meta("delayq-read-only") === "true";
const REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// A payload cell's content: the detected codec (with --codec auto) as a tag, then the value.
function withCodec(node, v) {
  if (v.codec) node.prepend(el("span", { class: "codec-tag" }, v.codec));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Data is only ever put in as text (textContent, setAttribute), never as
// markup. Shown text has its control characters (C0, DEL, C1) and
// bidirectional overrides as escapes, as the CLI shows them: what is there,
// nothing hidden or reordered.
const UNSEEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const ESCAPES = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const visible = (text) =>
  String(text).replace(UNSEEN, (c) => ESCAPES[c] || `\\u{${c.codePointAt(0).toString(16)}}`);

const fmt = (n) => (n === undefined || n === null ? "–" : Number(n).toLocaleString("en-US"));

// 192000 -> "3m12s"
function span(ms) {
  let s = Math.round(Math.abs(ms) / 1000);
  if (s === 0) return Math.abs(ms) < 1000 ? `${Math.round(Math.abs(ms))}ms` : "0s";
  const d = Math.floor(s / 86400); s %= 86400;
  const h = Math.floor(s / 3600); s %= 3600;
  const m = Math.floor(s / 60); s %= 60;
  const parts = [];
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m && !d) parts.push(`${m}m`);
  if (s && !d && !h) parts.push(`${s}s`);
  return parts.join("");
}
const relative = (ms) => (ms >= 0 ? `in ${span(ms)}` : `${span(ms)} ago`);
const localTime = (ms) => {
  const d = new Date(ms);
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
};

async function getJson(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw failure(body, `${response.status} ${response.statusText}`);
  return body;
}

// An error carrying the answer's body (a 503 says how long Redis has been away).
function failure(body, fallback) {
  const error = new Error(body.error || fallback);
  error.body = body;
  return error;
}

async function post(action, params) {
  const response = await fetch(`/api/actions/${action}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-csrf-token": CSRF },
    body: new URLSearchParams(params),
  });
  const body = await response.json().catch(async () => ({ error: await response.text() }));
  if (!response.ok || !body.ok) throw failure(body, `${response.status}`);
  return body;
}

function live(ok, text) {
  const node = $("live");
  node.className = `live ${ok ? "ok" : "err"}`;
  node.textContent = visible(text);
}

function setCount(id, value, warn) {
  const node = $(id);
  node.textContent = fmt(value);
  node.dataset.value = value === undefined ? "" : String(value);
  if (warn) node.classList.toggle("nonzero", Number(value) > 0);
}

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

// While Redis is unreachable: a banner saying since when, and how old the
// numbers still on the page are (they stay, greyed).
function outage(error, lastOk) {
  const redis = (error.body && error.body.redis) || {};
  const node = $("outage");
  const down = redis.up === false;
  node.querySelector("strong").textContent = down ? "Redis is unreachable" : "Redis is slow";
  node.querySelector(".what").textContent = down
    ? `since ${localTime(redis.since_ms)} (${span(redis.now_ms - redis.since_ms)} ago): ${visible(redis.error || "no reply")}.`
    : `${visible(error.message)}.`;
  node.querySelector(".age").textContent = lastOk
    ? `The numbers below are from ${localTime(lastOk)}, ${span(Date.now() - lastOk)} old.`
    : "No numbers yet: they appear once Redis answers.";
  node.hidden = false;
  document.body.classList.add("stale");
  live(false, down ? "Redis unreachable" : "Redis slow");
}

function poll(load) {
  let busy = false;
  let lastOk = null;
  const run = async () => {
    if (busy) return;
    busy = true;
    try {
      await load();
      lastOk = Date.now();
      $("outage").hidden = true;
      // An action's answer that was the outage is over too.
      const flash = $("flash");
      if (flash && flash.dataset.outage) { flash.hidden = true; delete flash.dataset.outage; }
      document.body.classList.remove("stale");
      live(true, `live · ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (error.body && error.body.redis) outage(error, lastOk);
      else live(false, `error: ${error.message}`);
    } finally {
      busy = false;
    }
  };
  run();
  setInterval(run, REFRESH_MS);
  return run;
}

// ---------- overview ----------
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
    const next = el("td", { class: `next${!s.paused && s.next_ms && s.next_ms < now - 30000 ? " late" : ""}` },
      s.paused ? "–" : s.next_ms ? relative(s.next_ms - now) : "never");
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

// ---------- queue ----------
function queuePage() {
  const name = new URLSearchParams(location.search).get("name") || "";
  const state = { offset: 0, limit: 50, total: 0, dead: 0, acting: false };
  $("queue-name").textContent = visible(name);
  document.title = `delayq · ${visible(name)}`;

  const load = async () => {
    if (state.acting) return;
    const q = new URLSearchParams({ name, offset: state.offset, limit: state.limit });
    const data = await getJson(`/api/queue?${q}`);
    const s = data.status;
    if (state.offset > 0 && state.offset >= s.pending) {
      // The queue shrank under this page: go to its last page.
      state.offset = Math.max(0, Math.floor((s.pending - 1) / state.limit) * state.limit);
      return load();
    }
    state.total = s.pending;
    state.dead = s.dead_letters;
    setCount("pending", s.pending);
    setCount("ready", s.ready);
    setCount("in-flight", s.in_flight);
    setCount("dead-letters", s.dead_letters, true);
    setCount("quarantined", s.quarantined, true);
    $("next-due").textContent = s.next_due_ms ? `${relative(s.next_due_ms - data.now_ms)}` : "–";
    $("next-due").title = s.next_due_ms ? localTime(s.next_due_ms) : "";
    $("lag").textContent = s.paused ? `paused${s.lag_ms ? ` (head ${span(s.lag_ms)} overdue)` : ""}` : s.lag_ms ? span(s.lag_ms) : "none";
    $("lag").dataset.value = s.lag_ms;
    $("paused-badge").hidden = !s.paused;
    $("pause").hidden = s.paused;
    $("resume").hidden = !s.paused;

    const rows = data.pending.elements.map((e) => {
      const tr = el("tr");
      tr.appendChild(el("td", { class: "due" }, localTime(e.due_ms)));
      tr.appendChild(el("td", { class: `when${e.due_ms < data.now_ms && !s.paused ? " late" : ""}` }, relative(e.due_ms - data.now_ms)));
      tr.appendChild(el("td", { class: "format" }, e.format));
      const payload = el("td", { class: `payload${e.decoded ? "" : " hex"}` }, visible(e.text));
      if (!e.decoded) payload.title = `shown as hex: ${visible(e.error || "does not decode")}`;
      tr.appendChild(withCodec(payload, e));
      return tr;
    });
    if (rows.length === 0) rows.push(el("tr", {}, "")), rows[0].appendChild(el("td", { colspan: 4, class: "muted" }, "nothing pending"));
    document.querySelector("#pending-table tbody").replaceChildren(...rows);
    const last = Math.min(state.offset + state.limit, s.pending);
    $("page-info").textContent = s.pending ? `${fmt(state.offset + 1)}–${fmt(last)} of ${fmt(s.pending)}, in due order` : "";
    $("prev").disabled = state.offset === 0;
    $("next").disabled = last >= s.pending;

    const ready = data.ready_head.map((v) => withCodec(el("li", { class: v.decoded ? "" : "hex" }, visible(v.text)), v));
    if (ready.length === 0) ready.push(el("li", { class: "muted empty" }, "empty"));
    $("ready-list").replaceChildren(...ready);

    const dead = data.dead_letters.items.map((v) => {
      const tr = el("tr");
      tr.appendChild(withCodec(el("td", { class: `payload${v.decoded ? "" : " hex"}` }, visible(v.text)), v));
      tr.appendChild(el("td", { class: "reason muted" }, v.reason ? visible(v.reason) : "not recorded"));
      return tr;
    });
    if (dead.length === 0) dead.push(el("tr")), dead[0].appendChild(el("td", { colspan: 2, class: "muted" }, "none"));
    if (data.dead_letters.total > data.dead_letters.items.length) {
      const more = el("tr");
      more.appendChild(el("td", { colspan: 2, class: "muted" }, `… ${fmt(data.dead_letters.total - data.dead_letters.items.length)} more`));
      dead.push(more);
    }
    document.querySelector("#dead-table tbody").replaceChildren(...dead);

    hourBars($("chart-hour"), data.due_next_hour || { overdue: 0, buckets: new Array(12).fill(0) }, 400, 110);
    groupedBars($("chart-flow"), data.history, [
      { key: "transferred", color: "#2f6fde" }, { key: "delivered", color: "#16a34a" }, { key: "dead_lettered", color: "#d92d20" },
    ]);
    lines($("chart-lag"), data.history, [{ key: "lag_p50_ms", color: "#2f6fde" }, { key: "lag_p99_ms", color: "#c2410c" }], "ms");
    $("history-note").dataset.sampled = data.sampled;
    schedulesSection(data.schedules, data.now_ms);
    $("delete-dead").disabled = state.dead === 0;
    $("requeue-dead").disabled = state.dead === 0;
    $("purge").disabled = $("purge-confirm").value !== name;
  };
  const refresh = poll(load);
  $("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - state.limit); refresh(); });
  $("next").addEventListener("click", () => { state.offset += state.limit; refresh(); });

  if (READ_ONLY) return;
  $("actions").hidden = false;
  const flash = (ok, text) => {
    const node = $("flash");
    node.hidden = false;
    node.className = ok ? "flash" : "flash error";
    delete node.dataset.outage;
    node.textContent = visible(text);
  };
  const act = (button, action, params) => async () => {
    state.acting = true;
    button.disabled = true;
    try {
      const result = await post(action, { name, ...params() });
      flash(true, result.message);
    } catch (error) {
      flash(false, error.message);
      if (error.body && error.body.redis) $("flash").dataset.outage = "1";
    } finally {
      state.acting = false;
      button.disabled = false;
      await refresh();
    }
  };
  $("move-due").addEventListener("click", act($("move-due"), "move-due", () => ({})));
  $("pause").addEventListener("click", act($("pause"), "pause", () => ({})));
  $("resume").addEventListener("click", act($("resume"), "resume", () => ({})));
  $("requeue-dead").addEventListener("click", act($("requeue-dead"), "requeue-dead-letters", () => ({})));
  const deleteDead = act($("delete-dead"), "delete-dead-letters", () => ({}));
  $("delete-dead").addEventListener("click", () => {
    const button = $("delete-dead");
    if (button.dataset.armed === "1") {
      button.dataset.armed = "";
      button.textContent = "Delete dead letters";
      deleteDead();
    } else {
      button.dataset.armed = "1";
      button.textContent = `Really delete ${fmt(state.dead)}? Press again`;
    }
  });
  $("migrate").addEventListener("click", act($("migrate"), "migrate", () => ({ to: $("migrate-to").value })));
  const confirm = $("purge-confirm");
  confirm.addEventListener("input", () => { $("purge").disabled = confirm.value !== name; });
  $("purge").addEventListener("click", act($("purge"), "purge", () => {
    const typed = confirm.value;
    confirm.value = "";
    return { confirm: typed };
  }));
}

document.addEventListener("DOMContentLoaded", () => {
  if (READ_ONLY) document.querySelector("header .where").appendChild(el("span", { class: "badge", id: "read-only" }, "read-only"));
  if (document.body.dataset.page === "overview") overviewPage();
  else queuePage();
});
