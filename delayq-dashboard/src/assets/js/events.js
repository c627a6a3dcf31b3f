// The queue page's live events: GET /api/events (Server-Sent Events) shows
// the last EVENTS_KEEP events, newest first, and tells the page when the
// queue changed, so its counts refresh on events instead of every 2 s while
// the queue's events are on (covers()); queue.js then polls only every
// EVENTS_FALLBACK_MS, for what writes no event (Java's operations, the
// reaper). Everything shown is put in as text (el, visible).
const EVENTS_KEEP = 100;
const EVENTS_FALLBACK_MS = 15000;

const eventsSection = {
  source: null,
  open: false,      // the stream answers (its state event came, no error since)
  enabled: false,   // the queue's events are on
  paused: false,    // the list is paused (events are held, not dropped)
  held: [],
  lastId: "",       // to read on after a reconnect we open ourselves
  retryMs: 5000,

  init(ctx) {
    this.ctx = ctx;
    $("events-pause").addEventListener("click", () => this.pause(!this.paused));
    $("events-kind").addEventListener("change", () => this.filter());
    $("events-find").addEventListener("input", () => this.filter());
    this.empty();
    this.connect();
  },
  query() { return {}; },
  render() {},

  // Whether events stand for the counts' 2-second poll now.
  covers() { return this.open && this.enabled; },

  connect() {
    const q = new URLSearchParams({ queue: this.ctx.name });
    if (this.lastId) q.set("after", this.lastId);
    const source = new EventSource(`/api/events?${q}`);
    this.source = source;
    source.addEventListener("enabled", (e) => {
      const d = JSON.parse(e.data);
      this.setOpen(true, true);
      this.retryMs = 5000;
      this.state("on", [`events on: the counts refresh on each event, and every ${EVENTS_FALLBACK_MS / 1000} s for Java's operations, which write none (the stream keeps about ${fmt(d.max_len)})`]);
    });
    source.addEventListener("disabled", () => {
      this.setOpen(true, false);
      this.retryMs = 5000;
      this.state("off", ["events are off for this queue — ", el("code", {}, `delayq events enable ${visible(this.ctx.name)}`),
        " turns them on; the counts refresh every 2 s"]);
    });
    source.addEventListener("error", (e) => {
      this.setOpen(false, this.enabled);
      if (e.data) { // the server's: Redis went away, or a read failed; the stream goes on
        let why = "";
        try { why = JSON.parse(e.data).error; } catch (_) { why = e.data; }
        this.state("err", [`live events: ${visible(why)}; retrying (the counts refresh every 2 s meanwhile)`]);
        return;
      }
      // The connection's: the browser reconnects by itself (with
      // Last-Event-ID) unless the answer was not a stream (404, 503).
      if (source.readyState === EventSource.CLOSED) {
        this.state("err", [`live events unavailable; trying again in ${span(this.retryMs)}`]);
        setTimeout(() => { if (this.source === source) this.connect(); }, this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 60000);
      } else {
        this.state("err", ["live events: connection lost; reconnecting…"]);
      }
    });
    source.onmessage = (e) => {
      let event;
      try { event = JSON.parse(e.data); } catch (_) { return; }
      this.lastId = e.lastEventId || event.stream_id;
      if (this.paused) {
        this.held.push(event);
        if (this.held.length > EVENTS_KEEP) this.held.shift();
        this.info();
      } else {
        this.add([event]);
      }
      this.ctx.changed();
    };
  },

  setOpen(open, enabled) {
    const covered = this.covers();
    this.open = open;
    this.enabled = enabled;
    // No longer covered: poll at once (and every 2 s again).
    if (covered && !this.covers()) this.ctx.refresh();
  },

  state(cls, parts) {
    const node = $("events-state");
    node.className = `events-state ${cls}`;
    node.replaceChildren(...parts.map((p) => (typeof p === "string" ? document.createTextNode(p) : p)));
  },

  pause(paused) {
    this.paused = paused;
    const button = $("events-pause");
    button.setAttribute("aria-pressed", String(paused));
    button.textContent = paused ? "Resume list" : "Pause list";
    if (!paused && this.held.length) {
      const held = this.held;
      this.held = [];
      this.add(held);
    }
    this.info();
  },

  info() {
    const rows = $("events-table").tBodies[0].querySelectorAll("tr.event");
    const shown = [...rows].filter((row) => !row.hidden).length;
    const held = this.held.length ? ` · ${fmt(this.held.length)} new while paused` : "";
    const of = shown === rows.length ? "" : ` of the last ${fmt(rows.length)}`;
    $("events-info").textContent = this.paused ? `paused${held}` : rows.length ? `${fmt(shown)}${of} shown` : "";
    this.hint(shown, rows.length);
  },

  // The text filter looks among the last EVENTS_KEEP events only: for an
  // id, the job's page has its whole history, so the filter points there
  // (louder when it found nothing).
  hint(shown, kept) {
    const find = $("events-find").value.trim();
    const node = $("events-hint");
    node.hidden = find === "";
    if (node.hidden) return;
    const link = el("a", { class: "job-link", href: `/job?${new URLSearchParams({ name: this.ctx.name, id: find })}` },
      `job ${visible(find)}'s page`);
    node.replaceChildren(
      shown === 0 ? `No event among the last ${fmt(kept)} mentions “${visible(find)}”. If it is a job's id, ` :
        `Only the last ${fmt(kept)} events are searched here. If “${visible(find)}” is a job's id, `,
      link,
      " has its whole history.",
    );
  },

  // Whether a row passes the kind and text filters (text: any of the
  // event's own fields contains it, any case).
  passes(row) {
    const kind = $("events-kind").value;
    const find = $("events-find").value.trim().toLowerCase();
    return (!kind || row.dataset.kind === kind) && (!find || row.dataset.text.includes(find));
  },

  filter() {
    for (const row of $("events-table").tBodies[0].querySelectorAll("tr.event")) row.hidden = !this.passes(row);
    this.info();
  },

  empty() {
    const row = el("tr", { class: "empty" });
    row.append(el("td", { colspan: "4" }, "no events yet: they appear here as they happen"));
    $("events-table").tBodies[0].replaceChildren(row);
  },

  // Oldest first in, newest first shown; at most EVENTS_KEEP rows.
  add(events) {
    const body = $("events-table").tBodies[0];
    const empty = body.querySelector("tr.empty");
    if (empty) empty.remove();
    for (const event of events) {
      // A reconnect that started over (no id to resume from) sends the kept events again.
      if (body.querySelector(`tr[data-id="${CSS.escape(String(event.stream_id))}"]`)) continue;
      body.prepend(this.row(event));
    }
    while (body.rows.length > EVENTS_KEEP) body.lastElementChild.remove();
    this.info();
  },

  row(event) {
    const kind = eventKind(event);
    const row = el("tr", { class: "event" });
    row.dataset.id = event.stream_id;
    row.dataset.kind = kind;
    row.dataset.text = searchText(event);
    row.hidden = !this.passes(row);
    row.append(
      el("td", { class: "time" }, localTime(event.time_ms)),
      el("td", { class: `kind ${kind.replace(/[^a-z_]/g, "")}` }, visible(kind)),
      el("td", { class: "sid" }, visible(event.stream_id)),
      Object.hasOwn(JOB_EVENTS, kind) ? jobEventDetails(event, kind, this.ctx.name) : eventDetails(event),
    );
    return row;
  },
};

// An event's kind: the library's name for it, or, for a kind it has no
// variant for (serialized as kind "unknown" with the name read and the
// fields as written), that name.
function eventKind(event) {
  if (event.kind === "unknown" && typeof event.name === "string" && event.name !== "") return event.name;
  return String(event.kind);
}

// An event's own fields: those an unknown kind carries in `fields` (all
// text), or the event itself.
function eventFields(event) {
  return event.kind === "unknown" && event.fields && typeof event.fields === "object" ? event.fields : event;
}

// What the text filter looks in: the event's own string fields (ids,
// deliveries, reason, schedule), lower-cased.
function searchText(event) {
  const parts = [];
  for (const [key, value] of Object.entries(event)) {
    if (["queue", "stream_id", "time_ms", "kind"].includes(key)) continue;
    if (Array.isArray(value)) parts.push(...value.map(String));
    else if (value && typeof value === "object") parts.push(...Object.entries(value).flat().map(String));
    else if (typeof value === "string") parts.push(value);
  }
  return parts.join("\n").toLowerCase();
}

// An event's own fields as "count 2 · id order-42": deliveries cut to the
// first three (all in the title), times in the page's zone.
function eventDetails(event) {
  const cell = el("td", { class: "details" });
  const parts = [];
  let title = "";
  for (const [key, value] of Object.entries(event)) {
    if (["queue", "stream_id", "time_ms", "kind"].includes(key)) continue;
    if (key === "quarantined" && !value) continue; // a transfer's usual case
    if (Array.isArray(value)) {
      const more = value.length > 3 ? ` +${fmt(value.length - 3)} more` : "";
      parts.push(`${key} ${value.slice(0, 3).map(visible).join(" ")}${more}`);
      title = `${key}: ${value.map(visible).join(" ")}`;
    } else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) parts.push(`${visible(k)} ${visible(v)}`);
    } else if (key === "due_ms") {
      parts.push(`due ${localTime(value)}`);
    } else if (key === "delay_ms") {
      parts.push(`delay ${span(value)}`);
    } else {
      parts.push(`${key} ${typeof value === "number" ? fmt(value) : visible(value)}`);
    }
  }
  cell.textContent = parts.join(" · ");
  if (title) cell.title = title;
  return cell;
}

// The job events (a cancel asked, jobs cancelled, progress, results, a
// batch completed) as a sentence, each job or batch id a link to its page
// (as text).
const JOB_EVENTS = {
  cancel_requested: (e) => ["cancel asked for job ", { id: e.id }, ` (it was ${visible(e.state)})`],
  job_cancelled: (e) => [
    `${fmt(e.count)} ${e.count === 1 ? "job" : "jobs"} ${e.running ? "stopped while running, settled as cancelled" : "dropped before running"}`,
    ...jobList(e.jobs, e.count),
  ],
  progress: (e) => ["job ", { id: e.job }, ` reported progress (delivery ${visible(e.delivery)})`],
  result: (e) => [`${fmt(e.count)} ${e.count === 1 ? "result" : "results"} kept`, ...jobList(e.jobs, e.count)],
  // Written by the script that counts a batch's last member: its counts
  // are text (the library reads the event as a kind it does not know).
  batch_completed: (e) => {
    const f = eventFields(e);
    return ["batch ", { batch: f.batch },
      ` completed: ${fmt(f.handled)} handled, ${fmt(f.dead_lettered)} dead-lettered, ${fmt(f.cancelled)} cancelled`];
  },
};

// ": a, b, c +2 more" of an event's job ids (it names the first 32).
function jobList(jobs, count) {
  const ids = Array.isArray(jobs) ? jobs : [];
  if (ids.length === 0) return [];
  const shown = ids.slice(0, 3);
  const parts = [": "];
  shown.forEach((id, i) => { if (i) parts.push(" "); parts.push({ id }); });
  const more = Math.max(count, ids.length) - shown.length;
  if (more > 0) parts.push(` +${fmt(more)} more`);
  return parts;
}

function jobEventDetails(event, kind, queue) {
  const cell = el("td", { class: "details job-event" });
  const link = (id) => el("a", { class: "job-link", href: `/job?${new URLSearchParams({ name: queue, id: String(id) })}` }, visible(id));
  for (const part of JOB_EVENTS[kind](event)) {
    if (part && typeof part === "object" && "batch" in part) cell.append(batchLink(queue, part.batch === undefined ? "" : part.batch));
    else if (part && typeof part === "object") cell.append(link(part.id));
    else if (typeof part === "string") cell.append(part);
  }
  if (Array.isArray(event.jobs) && event.jobs.length > 3) cell.title = `jobs: ${event.jobs.map(visible).join(" ")}`;
  return cell;
}
