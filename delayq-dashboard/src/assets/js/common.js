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

// Puts `nodes` in `parent` in place of its children. Nodes kept from the
// last draw (an edit form, an open list) are moved, and moving a node out of
// the document blurs what has the focus in it: the field being typed in and
// its caret are given back, or the next keys would go nowhere.
function replaceKeepingFocus(parent, nodes) {
  const active = document.activeElement;
  const typing = active && active !== document.body && parent.contains(active) ? active : null;
  const caret = typing && typeof typing.selectionStart === "number"
    ? [typing.selectionStart, typing.selectionEnd, typing.selectionDirection] : null;
  parent.replaceChildren(...nodes);
  if (typing && typing.isConnected && document.activeElement !== typing) {
    typing.focus({ preventScroll: true });
    if (caret) typing.setSelectionRange(...caret);
  }
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
// 200000 -> "200k", 1500000 -> "1.5M": for labels where room is short (the exact count is in the title).
function compact(n) {
  const v = Number(n);
  for (const [unit, size] of [["G", 1e9], ["M", 1e6], ["k", 1e3]]) {
    if (Math.abs(v) >= size) return `${Number((v / size).toFixed(v / size < 10 ? 1 : 0))}${unit}`;
  }
  return String(v);
}

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
const pad = (n, w = 2) => String(n).padStart(w, "0");
// The browser's zone at `ms` as an offset: "UTC+01:00" (a zone's offset
// changes with daylight saving, so it is worked out per time).
function zone(ms) {
  const off = -new Date(ms === undefined ? Date.now() : ms).getTimezoneOffset();
  return `UTC${off < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}
// Every absolute time says its zone: "2026-11-26 21:05:26.123 UTC+01:00".
const localTime = (ms) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${zone(ms)}`;
};
// "21:05", for chart axes; the header and the axis's last label name the zone.
const clock = (ms) => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}`; };

// The header's account of which Redis this is: address (never a password:
// the server leaves it out), db, mode, version, memory, uptime; or that it
// is unreachable.
function serverHeader(redis) {
  const node = $("server");
  if (!node || !redis || !redis.server) return;
  const s = redis.server;
  const at = s.connected.length ? ` at ${s.connected.map(visible).join(", ")}` : "";
  const mode = s.mode === "sentinel" ? `Sentinel (master ${visible(s.master || "?")}${at})`
    : s.mode === "cluster" ? `Cluster (${s.reconnecting ? "reconnecting" : `${fmt(s.connected.length)} masters`})` : "standalone";
  const parts = [`${s.addresses.map(visible).join(", ")} · db ${s.db}`, mode];
  if (s.version) parts.push(`Redis ${visible(s.version)}`);
  if (s.used_memory_human) {
    const max = s.maxmemory ? visible(s.maxmemory_human) : "no maxmemory";
    parts.push(`${visible(s.used_memory_human)} / ${max}`);
  }
  // INFO counts whole seconds: 0 is "under a second", not "0ms".
  if (s.uptime_seconds !== null && s.uptime_seconds !== undefined) parts.push(`up ${s.uptime_seconds < 1 ? "<1s" : span(s.uptime_seconds * 1000)}`);
  if (redis.up === false) parts.push("unreachable");
  node.textContent = parts.join(" · ");
  node.classList.toggle("down", redis.up === false);
  node.title = s.error ? `INFO failed: ${visible(s.error)}` : s.read_at_ms ? `INFO read ${localTime(s.read_at_ms)}` : "";
  $("zone").textContent = `times in ${zone()}`;
}

async function getJson(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  serverHeader(body.redis);
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

// The buttons (and the purge's input) that change a queue: disabled while
// Redis is unreachable, as they could only fail. Unlocked, a button gets
// back the state it had (a section then sets its own, e.g. "none selected").
const ACTION_CONTROLS = "#actions button, #actions input, #actions select, #groups-form button, #groups-form input, #groups-form select, #dead-actions button, td.act button, td.act input, td.row-actions button, #job-actions button, #job-cancel-actions button";
function lockActions(locked) {
  document.body.classList.toggle("actions-locked", locked);
  for (const node of document.querySelectorAll(ACTION_CONTROLS)) {
    if (locked && !node.disabled) {
      node.disabled = true;
      node.dataset.locked = "1";
    } else if (!locked && node.dataset.locked) {
      node.disabled = false;
      delete node.dataset.locked;
    }
  }
}

// While Redis is unreachable: a banner saying since when, and how old the
// numbers still on the page are (they stay, greyed), and no actions.
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
  lockActions(true);
  live(false, down ? "Redis unreachable" : "Redis slow");
}

// How long a poll may take before the page says it is checking rather
// than live: three times the slowest of the last answers, from 750 ms to
// 2.5 s. Sooner than the server's 3 s PING says Redis is gone, and a
// loaded machine whose answers all take long does not flap between the two.
const LATE_MIN_MS = 750;
const LATE_MAX_MS = 2500;
function lateAfter(took) {
  return Math.min(LATE_MAX_MS, Math.max(LATE_MIN_MS, 3 * Math.max(0, ...took)));
}

// A poll that is late: the numbers on the page may be old. Stays until an
// answer comes (live again) or the outage banner takes over.
function checking(lastOk) {
  const node = $("live");
  if (node.classList.contains("err")) return;
  node.className = "live late";
  node.textContent = lastOk ? `checking… (last answer ${clock(lastOk)}:${pad(new Date(lastOk).getSeconds())})` : "checking…";
  node.title = "the last request for these numbers has not been answered yet";
}

function poll(load) {
  let busy = false;
  let lastOk = null;
  // How long the last answers took (at most 5).
  const took = [];
  const run = async () => {
    if (busy) return;
    busy = true;
    const started = Date.now();
    const late = setTimeout(() => checking(lastOk), lateAfter(took));
    try {
      await load();
      took.push(Date.now() - started);
      if (took.length > 5) took.shift();
      lastOk = Date.now();
      $("outage").hidden = true;
      // An action's answer that was the outage is over too.
      const flash = $("flash");
      if (flash && flash.dataset.outage) { flash.hidden = true; delete flash.dataset.outage; }
      document.body.classList.remove("stale");
      live(true, `live · ${clock(Date.now())}:${pad(new Date().getSeconds())}`);
      $("live").title = "";
    } catch (error) {
      if (error.body && error.body.redis) outage(error, lastOk);
      else live(false, `error: ${error.message}`);
    } finally {
      clearTimeout(late);
      busy = false;
    }
  };
  run();
  setInterval(run, REFRESH_MS);
  return run;
}


// The oldest ready value's wait: "–" with none ready, "unknown" where no
// transfer recorded its due time (never a guess). Fills `node`.
function oldestReady(node, s) {
  const known = s.oldest_ready_age_ms !== null && s.oldest_ready_age_ms !== undefined;
  node.textContent = !s.ready ? "–" : known ? span(s.oldest_ready_age_ms) : "unknown";
  node.dataset.value = known ? s.oldest_ready_age_ms : "";
  node.classList.toggle("late", known && !s.paused && s.oldest_ready_age_ms > 5000);
  node.title = !s.ready ? "no ready value"
    : known ? "how long the oldest ready value has waited since it fell due"
      : "no transfer recorded when the oldest ready value fell due (offered straight to the ready list, or moved while no delayq worker tracked lateness)";
}
// A paused queue's badge: its age once older than an hour (a forgotten pause).
function pausedText(s, now) {
  const age = s.paused_since_ms ? now - s.paused_since_ms : 0;
  return age > 3600000 ? `paused ${span(age)}` : "paused";
}
const UNTAKEN_TITLE = "ready values, no live delayq worker, and none left the ready list since the last sample: no consumer takes them";
