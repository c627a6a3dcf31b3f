// The queue page's pending elements: a page of them in due order, a jump to
// a page or a due time, search by id or text, and actions on one element.
// Each element carries its packed bytes (raw, hex): the actions name it by
// them, so an element a transfer took meanwhile is never mistaken for another.

// What the table lists: the delayed queue's elements (Redisson's keys). A
// status's pending count holds the delayed values with a priority or a
// group key too (delayq's own sets), which the table does not list and
// Purge and Migrate do not take.
const plainPending = (s) => Math.max(0, (s.pending || 0) - (s.priority_pending || 0) - (s.grouped_pending || 0));

// "10m", "1h30m", "90s": a delay the server reads as one.
const DELAY = /^\s*(\d+\s*(ms|s|m|h|d)\s*)+$/;

// This browser's zone, as the due-time inputs read it: the offset as every
// time on the page writes it, and the zone's name once: "UTC+05:30 (Asia/Kolkata)".
function zoneLabel() {
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return name && !/^(Etc\/)?(UTC|GMT)$/.test(name) ? `${zone()} (${name})` : zone();
}

const pendingSection = {
  offset: 0,
  limit: 50,
  total: 0,
  // Rows of the page by element (raw bytes, due time, id): kept across
  // polls so that a row being worked on (an armed delete, an open
  // reschedule) stays as it is while the page refreshes.
  rows: new Map(),
  order: "",
  armed: null,
  search: null,
  typed: false,

  init(ctx) {
    this.ctx = ctx;
    // Read-only: no actions column, and no word on actions there are not.
    if (READ_ONLY) {
      document.querySelectorAll("#pending-section th.act").forEach((th) => th.remove());
      $("pending-actions-note").hidden = true;
    }
    const go = (offset) => { this.offset = Math.max(0, offset); this.typed = false; ctx.refresh(); };
    // A page number typed (and not gone to yet) is not overwritten by a refresh.
    for (const event of ["input", "change"]) $("page-no").addEventListener(event, () => { this.typed = true; });
    $("prev").addEventListener("click", () => go(this.offset - this.limit));
    $("next").addEventListener("click", () => go(this.offset + this.limit));
    $("page-go").addEventListener("click", () => {
      const page = Math.floor(Number($("page-no").value));
      if (!(page >= 1)) return ctx.flash(false, "a page number is 1 or more");
      go(Math.min((page - 1) * this.limit, Math.max(0, this.total - 1)));
    });
    $("page-no").addEventListener("keydown", (event) => { if (event.key === "Enter") $("page-go").click(); });
    $("jump-zone").textContent = zoneLabel();
    $("jump-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const at = new Date($("jump-at").value).getTime();
      if (Number.isNaN(at)) return ctx.flash(false, "pick a date and time to jump to");
      try {
        const found = await getJson(`/api/pending/jump?${new URLSearchParams({ name: ctx.name, at_ms: at })}`);
        ctx.flash(true, found.offset >= found.total
          ? `nothing is due at ${localTime(at)} or later; showing the last page`
          : `first element due at ${localTime(at)} or later: #${fmt(found.offset + 1)} of ${fmt(found.total)}`);
        go(found.offset);
      } catch (error) {
        ctx.flash(false, error.message);
      }
    });
    $("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.find({ id: $("search-q").value });
    });
    $("search-text").addEventListener("click", () => this.find({ text: $("search-q").value, from: 0 }));
    $("search-more").addEventListener("click", () => this.search && this.find(this.search, { more: true }));
    $("search-close").addEventListener("click", () => { this.search = null; this.runs = (this.runs || 0) + 1; $("search-results").hidden = true; });
    // Arrived from the search page: find the element it linked to again.
    const url = new URLSearchParams(location.search);
    const find = url.get("find");
    if (find) {
      $("search-q").value = find;
      Promise.resolve(this.find(url.get("by") === "id" ? { id: find } : { text: find, from: 0 }))
        .then(() => $("search-results").scrollIntoView({ block: "center" }));
    }
  },

  // Runs a search (and again after an action on one of its rows). A text
  // search keeps its matches across presses of Continue: each press looks
  // further and adds what it finds. One press goes on by itself for a few
  // requests while they are quick (each request is capped by the server).
  async find(params, { more = false, until = 0 } = {}) {
    const ctx = this.ctx;
    const what = params.id !== undefined ? params.id : params.text;
    if (!what) return ctx.flash(false, "type an id or a text to search for");
    this.search = params;
    // A newer search (or press) takes over from one still going on by itself.
    const run = (this.runs = (this.runs || 0) + 1);
    const body = document.querySelector("#search-table tbody");
    const started = Date.now();
    let from = more ? this.searched.to : 0;
    if (!more) {
      this.matches = 0;
      body.replaceChildren();
    }
    $("search-more").disabled = true;
    try {
      for (;;) {
        const query = params.id !== undefined ? params : { text: params.text, from };
        const found = await getJson(`/api/pending/search?${new URLSearchParams({ name: ctx.name, ...query })}`);
        if (run !== this.runs) return;
        const now = Date.now();
        body.querySelectorAll("tr.none").forEach((tr) => tr.remove());
        body.append(...found.matches.map((e) => this.row(e, now, false, true)));
        this.matches += found.matches.length;
        this.searched = found;
        if (params.id !== undefined) {
          $("search-info").textContent = visible(found.message);
          // Not pending: the job's page says where it went (ready, in
          // flight, dead-lettered, handled), when the queue keeps history.
          if (found.matches.length === 0) {
            $("search-info").append(" · ", el("a", {
              class: "job-link", href: `/job?${new URLSearchParams({ name: ctx.name, id: params.id })}`,
            }, "where it went (its job page)"));
          }
        } else {
          this.searchInfo(found);
        }
        $("search-results").hidden = false;
        const done = found.complete !== false || found.to <= from;
        $("search-more").hidden = done;
        // Quick answers go on by themselves (up to 3 s a press); a re-run
        // after an action goes back as far as the search had looked.
        if (done || !(found.to < until || Date.now() - started < 3000)) break;
        from = found.to;
      }
      if (this.matches === 0) {
        const tr = el("tr", { class: "none" });
        tr.appendChild(el("td", { colspan: 7, class: "muted" }, "no match"));
        body.appendChild(tr);
      }
    } catch (error) {
      ctx.flash(false, error.message);
    } finally {
      if (run === this.runs) $("search-more").disabled = false;
    }
  },

  // "3 matches so far; looked at elements 1–60,000 of 200,000; continue from there".
  searchInfo(found) {
    const n = this.matches;
    const count = n === 0 ? "no match" : n === 1 ? "1 match" : `${fmt(n)} matches`;
    const complete = found.complete !== false;
    const looked = found.to > 0
      ? `looked at elements 1–${fmt(found.to)} of ${fmt(found.total)}`
      : `nothing to look at of ${fmt(found.total)}`;
    $("search-info").textContent = `${count}${complete || n === 0 ? "" : " so far"}; ${looked}${complete ? "" : "; continue from there"}`;
  },

  query() {
    return { offset: this.offset, limit: this.limit };
  },

  // The queue shrank under this page: go to its last page.
  stale(data) {
    const pending = plainPending(data.status);
    if (this.offset > 0 && this.offset >= pending) {
      this.offset = Math.max(0, Math.floor((pending - 1) / this.limit) * this.limit);
      return true;
    }
    return false;
  },

  // One element's row; `ranked` adds its place in due order (search results).
  row(e, now, paused, ranked) {
    const tr = el("tr", { "data-raw": e.raw });
    if (ranked) {
      // Its place in due order, a link to the page that starts there.
      const cell = el("td", { class: "num rank" });
      const show = el("button", { type: "button", class: "link", title: "show it in the list" }, `#${fmt(e.rank + 1)}`);
      show.addEventListener("click", () => { this.offset = e.rank; this.ctx.refresh(); });
      cell.appendChild(show);
      tr.appendChild(cell);
    }
    tr.appendChild(el("td", { class: "due" }, localTime(e.due_ms)));
    tr.appendChild(el("td", { class: "when" }));
    this.when(tr, e, now, paused);
    const idCell = el("td", { class: "id" }, e.id === null || e.id === undefined ? "–" : null);
    if (e.id !== null && e.id !== undefined) idCell.appendChild(jobLink(this.ctx.name, e.id));
    tr.appendChild(idCell);
    tr.appendChild(el("td", { class: "format" }, e.format));
    tr.appendChild(payloadCell(e, `pending:${e.raw}`));
    if (!READ_ONLY) {
      const cell = el("td", { class: "act" });
      this.actions(cell, e, ranked);
      tr.appendChild(cell);
    }
    return tr;
  },

  when(tr, e, now, paused) {
    const cell = tr.querySelector("td.when");
    cell.textContent = relative(e.due_ms - now);
    cell.className = `when${e.due_ms < now && !paused ? " late" : ""}`;
  },

  // Cancel / Delete (press twice), Run now, Reschedule (a delay or a date).
  actions(cell, e, inSearch) {
    const ctx = this.ctx;
    const element = { element: e.raw };
    const after = (handler) => async () => {
      await handler();
      if (inSearch && this.search) await this.find(this.search, { until: this.searched.to });
    };
    const label = e.id === null || e.id === undefined ? "Delete" : "Cancel";
    const remove = el("button", { type: "button", class: "danger del" }, label);
    const post = after(ctx.act(remove, "element-delete", () => element));
    remove.addEventListener("click", () => {
      if (this.armed === remove) {
        this.armed = null;
        remove.textContent = label;
        post();
      } else {
        if (this.armed) this.armed.textContent = this.armed.dataset.label;
        this.armed = remove;
        remove.dataset.label = label;
        remove.textContent = `${label}? Press again`;
      }
    });
    const run = el("button", { type: "button", class: "run" }, "Run now");
    run.addEventListener("click", after(ctx.act(run, "element-run", () => element)));
    const open = el("button", { type: "button", class: "resched" }, "Reschedule");
    const input = el("input", { type: "text", class: "resched-to", placeholder: "10m or 2026-01-31 09:00", "aria-label": "new due time" });
    const ok = el("button", { type: "button", class: "resched-ok" }, "OK");
    const cancel = el("button", { type: "button", class: "resched-cancel", title: "keep the due time" }, "×");
    const editor = [input, ok, cancel];
    const show = (editing) => {
      for (const node of editor) node.hidden = !editing;
      for (const node of [remove, run, open]) node.hidden = editing;
      if (editing) input.focus();
    };
    show(false);
    open.addEventListener("click", () => show(true));
    cancel.addEventListener("click", () => show(false));
    const send = after(ctx.act(ok, "element-reschedule", () => {
      const typed = input.value.trim();
      if (DELAY.test(typed)) return { ...element, delay: typed };
      const at = new Date(typed.replace(" ", "T")).getTime();
      return { ...element, at_ms: Number.isNaN(at) ? "" : at };
    }, (done) => `rescheduled the element: due ${localTime(done.due_ms)} (${relative(done.due_ms - Date.now())})`));
    ok.addEventListener("click", async () => {
      const typed = input.value.trim();
      if (!DELAY.test(typed) && Number.isNaN(new Date(typed.replace(" ", "T")).getTime())) {
        return ctx.flash(false, `${visible(typed) || "nothing"} is neither a delay (10m, 1h30m) nor a date and time`);
      }
      await send();
      show(false);
    });
    input.addEventListener("keydown", (event) => { if (event.key === "Enter") ok.click(); });
    cell.append(remove, run, open, ...editor);
  },

  render(data) {
    const s = data.status;
    // The table lists the delayed queue's elements: delayed values with a
    // priority (delayq's own set) are counted in s.pending, not listed.
    const pending = plainPending(s);
    this.total = pending;
    const keyOf = (e) => `${e.raw}:${e.due_ms}:${e.id}`;
    const rows = data.pending.elements.map((e) => {
      const key = keyOf(e);
      let tr = this.rows.get(key);
      if (tr) this.when(tr, e, data.now_ms, s.paused);
      else tr = this.row(e, data.now_ms, s.paused, false);
      return [key, tr];
    });
    this.rows = new Map(rows);
    const order = rows.map(([key]) => key).join(",");
    if (rows.length === 0) {
      const empty = el("tr");
      empty.appendChild(el("td", { colspan: 6, class: "muted" }, "nothing pending"));
      document.querySelector("#pending-table tbody").replaceChildren(empty);
    } else if (order !== this.order) {
      replaceKeepingFocus(document.querySelector("#pending-table tbody"), rows.map(([, tr]) => tr));
    }
    this.order = order;
    const last = Math.min(this.offset + this.limit, pending);
    const unlisted = (s.priority_pending ? `; ${fmt(s.priority_pending)} delayq-only (priority, TTL or headers) not listed` : "")
      + (s.grouped_pending ? `; ${fmt(s.grouped_pending)} grouped not listed` : "");
    $("page-info").textContent = pending ? `${fmt(this.offset + 1)}–${fmt(last)} of ${fmt(pending)}, in due order${unlisted}` : unlisted.slice(2);
    const pages = Math.max(1, Math.ceil(pending / this.limit));
    $("page-count").textContent = fmt(pages);
    if (!this.typed) $("page-no").value = Math.floor(this.offset / this.limit) + 1;
    $("page-no").max = pages;
    $("prev").disabled = this.offset === 0;
    $("next").disabled = last >= pending;
  },
};
