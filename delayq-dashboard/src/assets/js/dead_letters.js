// The queue page's dead letters: a page of them (or their counts by
// reason), each with when it died and why, and the actions that requeue or
// delete all of them, one, or those ticked. The section reads its own
// endpoints (/api/dead-letters, /api/dead-letters/reasons) on each poll.
// A value is named to the server by its key (index as read, length and a
// digest of its bytes and reason), so an action takes that value only.
const deadLettersSection = {
  total: 0,
  offset: 0,
  limit: 50,
  view: "list",
  // Only this reason, or reasons of this shape (from the by-reason view),
  // and the offsets of the pages before this one (a filtered page ends
  // where its last match is).
  reason: null,
  shape: null,
  trail: [],
  // Ticked values of this page: key as ticked -> key as last read (see keep()).
  selected: new Map(),
  // The key of the row whose Delete was pressed once.
  armed: null,
  loading: false,
  // A read was asked for while one ran.
  again: false,

  init(ctx) {
    this.ctx = ctx;
    // `?dead=N` (a job page's link): open at the page holding #N and mark it.
    const wanted = Math.floor(Number(new URLSearchParams(location.search).get("dead")));
    if (wanted >= 1) {
      this.offset = Math.floor((wanted - 1) / this.limit) * this.limit;
      this.target = wanted - 1;
    }
    const reload = () => this.load(ctx);
    // Ticks are per page: another page starts with none.
    const page = (offset) => { this.offset = Math.max(0, offset); this.selected.clear(); reload(); };
    $("dead-view-list").addEventListener("click", () => this.show("list", ctx));
    $("dead-view-reasons").addEventListener("click", () => this.show("reasons", ctx));
    $("dead-prev").addEventListener("click", () => {
      if (!this.filtered()) page(this.offset - this.limit); else page(this.trail.pop() || 0);
    });
    $("dead-next").addEventListener("click", () => {
      if (!this.filtered()) return page(this.offset + this.limit);
      this.trail.push(this.offset);
      page(this.page.next_offset);
    });
    $("dead-filter-clear").addEventListener("click", () => this.filter(null, ctx));
    $("dead-page").addEventListener("change", () => {
      const wanted = Math.max(1, Math.floor(Number($("dead-page").value) || 1));
      page((wanted - 1) * this.limit);
    });
    $("dead-limit").addEventListener("change", () => {
      this.limit = Number($("dead-limit").value);
      page(Math.floor(this.offset / this.limit) * this.limit);
    });
    if (READ_ONLY) return;
    $("dead-actions").hidden = false;
    $("dead-all").hidden = false;
    this.bulk($("requeue-dead"), "requeue", "requeue-dead-letters");
    this.bulk($("delete-dead"), "delete", "delete-dead-letters");
    const requeueSelected = ctx.act($("requeue-selected"), "requeue-dead-letter-keys", () => ({ keys: this.keys() }));
    $("requeue-selected").addEventListener("click", () => this.clearing(requeueSelected));
    const deleteSelected = ctx.act($("delete-selected"), "delete-dead-letter-keys", () => ({ keys: this.keys() }));
    this.pressAgain($("delete-selected"), "Delete selected", () => `Really delete ${fmt(this.selected.size)}? Press again`,
      () => this.clearing(deleteSelected));
    $("dead-all").addEventListener("change", () => {
      for (const v of (this.page && this.page.items) || []) {
        if ($("dead-all").checked) this.selected.set(v.key, v.key); else this.untick(v.key);
      }
      this.draw();
    });
  },

  // A dangerous button: the first press arms it, the second acts.
  pressAgain(button, label, armed, run) {
    button.addEventListener("click", () => {
      if (button.dataset.armed === "1") {
        button.dataset.armed = "";
        button.textContent = label;
        run();
      } else {
        button.dataset.armed = "1";
        button.textContent = armed();
      }
    });
  },

  filtered() {
    return this.reason !== null || this.shape !== null;
  },

  // What Requeue all and Delete all act on now: what the list shows (with
  // a reason or a shape picked, only the dead letters it takes, among the
  // most recent the server counts) and how many that is (null: not
  // counted yet). The server matches them again as it acts, and does
  // nothing if that count changed meanwhile.
  bulkTarget() {
    if (!this.filtered()) return { reason: null, shape: null, count: this.total };
    const page = this.page;
    const same = page && (page.reason ?? null) === this.reason && (page.shape ?? null) === this.shape;
    return { reason: this.reason, shape: this.shape, count: same ? page.matching : null };
  },

  // A bulk button: its label says how many it would take; the first press
  // arms it with that count and filter, the second posts them, and the
  // server acts on exactly those (or refuses if they changed meanwhile).
  bulk(button, verb, action) {
    let confirmed = null;
    const run = this.ctx.act(button, action, () => {
      const form = { count: confirmed.count };
      if (confirmed.reason !== null) form.reason = confirmed.reason;
      if (confirmed.shape !== null) form.shape = confirmed.shape;
      return form;
    });
    button.addEventListener("click", () => {
      if (button.dataset.armed === "1") {
        confirmed = button.target;
        this.disarm(button);
        run();
        return;
      }
      const target = this.bulkTarget();
      if (!target.count) return;
      button.target = target;
      button.dataset.armed = "1";
      button.textContent = target.shape !== null
        ? `Really ${verb} the ${fmt(target.count)} whose reason looks like this? Press again`
        : target.reason === null
          ? `Really ${verb} all ${fmt(target.count)}? Press again`
          : `Really ${verb} the ${fmt(target.count)} with this reason? Press again`;
    });
    button.dataset.verb = verb;
  },

  disarm(button) {
    button.dataset.armed = "";
    button.target = null;
  },

  // Runs an action on the ticked values; they are unticked after it,
  // whatever it answered (the list is read again).
  async clearing(action) {
    await action();
    this.selected.clear();
    this.draw();
  },

  untick(key) {
    for (const [was, now] of this.selected) if (now === key) this.selected.delete(was);
  },

  keys() {
    return [...this.selected.values()].join(",");
  },

  // Lists only the dead letters `pick` takes ({ reason } exactly, or
  // { shape }; null: all), from the oldest.
  filter(pick, ctx) {
    this.reason = pick && pick.reason !== undefined ? pick.reason : null;
    this.shape = pick && pick.shape !== undefined ? pick.shape : null;
    // An armed bulk button was armed for another filter.
    for (const button of [$("requeue-dead"), $("delete-dead")]) this.disarm(button);
    this.offset = 0;
    this.trail = [];
    this.selected.clear();
    this.show("list", ctx);
  },

  show(view, ctx) {
    this.view = view;
    $("dead-view-list").classList.toggle("on", view === "list");
    $("dead-view-reasons").classList.toggle("on", view === "reasons");
    this.load(ctx);
  },

  query() {
    return {};
  },

  render(data, ctx) {
    this.total = data.status.dead_letters;
    this.load(ctx);
  },

  // What a read asks for: a reply read for anything else is stale.
  asking() {
    return JSON.stringify([this.view, this.offset, this.limit, this.reason, this.shape]);
  },

  // One read at a time. A call that comes while one runs (a poll, a
  // filter, a page) reads again once it ends, and a reply read for a view
  // the operator has since left is dropped: it is never drawn under the
  // new filter or page.
  async load(ctx) {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    this.again = false;
    try {
      const q = new URLSearchParams({ name: ctx.name });
      let asked = this.asking();
      if (this.view === "reasons") {
        const reasons = await getJson(`/api/dead-letters/reasons?${q}`);
        if (this.asking() !== asked) { this.again = true; return; }
        this.reasons = reasons;
      } else {
        q.set("offset", this.offset);
        q.set("limit", this.limit);
        if (this.reason !== null) q.set("reason", this.reason);
        if (this.shape !== null) q.set("shape", this.shape);
        let page = await getJson(`/api/dead-letters?${q}`);
        if (this.asking() !== asked) { this.again = true; return; }
        // The list shrank under this page: show its last page (the first, filtered).
        if (this.offset > 0 && this.offset >= page.total) {
          this.offset = !this.filtered() ? Math.max(0, Math.floor((page.total - 1) / this.limit) * this.limit) : 0;
          this.trail = [];
          q.set("offset", this.offset);
          asked = this.asking();
          page = await getJson(`/api/dead-letters?${q}`);
          if (this.asking() !== asked) { this.again = true; return; }
        }
        this.page = page;
        this.total = page.total;
      }
      this.draw();
    } catch (error) {
      $("dead-info").textContent = `(${visible(error.message)})`;
    } finally {
      this.loading = false;
      if (this.again) this.load(ctx);
    }
  },

  // Keeps ticks on the values ticked though their index moved: each ticked
  // key goes to the row with the same length and digest at or nearest below
  // its index (as the server looks for it), and takes that row's key.
  keep(items) {
    const ticked = new Set();
    for (const [was, key] of [...this.selected.entries()]) {
      const [index, ...rest] = key.split(":");
      const same = rest.join(":");
      const row = items
        .filter((v) => !ticked.has(v.key) && v.key.slice(v.key.indexOf(":") + 1) === same && v.index <= Number(index))
        .sort((a, b) => b.index - a.index)[0];
      if (row) {
        ticked.add(row.key);
        this.selected.set(was, row.key);
      } else {
        // Gone (requeued or deleted by its row's button, or by someone else).
        this.selected.delete(was);
      }
    }
    return ticked;
  },

  draw() {
    const list = this.view === "list";
    $("dead-table").hidden = !list;
    $("dead-paging").hidden = !list;
    $("dead-reasons").hidden = list;
    $("dead-reasons-note").hidden = list;
    $("dead-filter").hidden = !list || !this.filtered();
    $("dead-filter-label").textContent = this.shape !== null ? "reason like:" : "reason:";
    $("dead-filter-text").textContent = this.shape !== null ? visible(this.shape) : this.reason === null ? "" : visible(this.reason);
    $("dead-jump").hidden = this.filtered();
    if (list && this.page) this.drawList(this.page);
    if (!list && this.reasons) this.drawReasons(this.reasons);
    this.controls();
  },

  // The buttons and the count that follow the ticks.
  controls() {
    const target = this.bulkTarget();
    for (const button of [$("requeue-dead"), $("delete-dead")]) {
      button.disabled = !target.count;
      if (button.dataset.armed === "1") continue;
      const verb = button.dataset.verb === "delete" ? "Delete" : "Requeue";
      const like = target.shape !== null;
      button.textContent = !this.filtered() ? `${verb} all ${fmt(target.count)}`
        : target.count === null ? `${verb} those ${like ? "like this" : "with this reason"}`
        : `${verb} ${fmt(target.count)} ${like ? "like this" : "with this reason"}`;
      button.title = !this.filtered() ? ""
        : `The dead letters whose reason ${like ? "has this shape" : "is this one"}, among the ${fmt((this.page && this.page.matching_among) || 0)} most recent`;
    }
    $("requeue-selected").disabled = this.selected.size === 0;
    $("delete-selected").disabled = this.selected.size === 0;
    $("dead-selected").textContent = this.selected.size ? `${fmt(this.selected.size)} selected` : "";
  },

  drawList(page) {
    const ticked = this.keep(page.items);
    const rows = page.items.map((v) => {
      const tr = el("tr", { "data-index": v.index });
      const pick = el("td", { class: "pick" });
      if (!READ_ONLY) {
        const box = el("input", { type: "checkbox", title: `Select #${v.index + 1}` });
        box.checked = ticked.has(v.key);
        tr.classList.toggle("selected", box.checked);
        box.addEventListener("change", () => {
          if (box.checked) this.selected.set(v.key, v.key); else this.untick(v.key);
          tr.classList.toggle("selected", box.checked);
          const boxes = [...document.querySelectorAll("#dead-table td.pick input")];
          $("dead-all").checked = boxes.every((b) => b.checked);
          this.controls();
        });
        pick.appendChild(box);
      }
      tr.appendChild(pick);
      tr.appendChild(el("td", { class: "num" }, fmt(v.index + 1)));
      tr.appendChild(this.died(v.at_ms, page.now_ms));
      tr.appendChild(withOffered(payloadCell(v, `dead:${v.key}`), v, page.now_ms));
      const why = el("td", { class: "reason muted" }, v.reason ? visible(v.reason) : "not recorded");
      if (v.job !== null && v.job !== undefined) {
        why.prepend(jobLink(this.ctx.name, v.job), " ");
      }
      tr.appendChild(why);
      const actions = el("td", { class: "row-actions" });
      if (!READ_ONLY) {
        const requeue = el("button", { type: "button", class: "requeue-one", title: "Back to the queue's tail" }, "Requeue");
        requeue.addEventListener("click", this.ctxAct(requeue, "requeue-dead-letter-keys", v.key));
        // Two presses, as every delete: the first arms it (kept across the
        // redraw of each poll), the second deletes.
        const armed = "Delete? Press again";
        const del = el("button", { type: "button", class: "danger delete-one" }, this.armed === v.key ? armed : "Delete");
        const remove = this.ctxAct(del, "delete-dead-letter-keys", v.key);
        del.addEventListener("click", () => {
          if (this.armed === v.key) {
            this.armed = null;
            del.textContent = "Delete";
            remove();
          } else {
            this.armed = v.key;
            for (const other of document.querySelectorAll("#dead-table button.delete-one")) other.textContent = "Delete";
            del.textContent = armed;
          }
        });
        actions.append(requeue, del);
      }
      tr.appendChild(actions);
      return tr;
    });
    if (rows.length === 0) rows.push(el("tr")), rows[0].appendChild(el("td", { colspan: 6, class: "muted" }, "none"));
    document.querySelector("#dead-table tbody").replaceChildren(...rows);
    const target = this.target === undefined ? null : document.querySelector(`#dead-table tr[data-index="${this.target}"]`);
    if (target) {
      target.classList.add("target");
      // Once: later polls leave the scroll where the operator put it.
      if (!this.scrolled) target.scrollIntoView({ block: "center" });
      this.scrolled = true;
    }
    const boxes = [...document.querySelectorAll("#dead-table td.pick input")];
    $("dead-all").checked = boxes.length > 0 && boxes.every((b) => b.checked);
    const pages = Math.max(1, Math.ceil(page.total / this.limit));
    const at = Math.floor(page.offset / this.limit) + 1;
    if (document.activeElement !== $("dead-page")) $("dead-page").value = at;
    $("dead-page").max = pages;
    $("dead-pages").textContent = fmt(pages);
    if (this.filtered()) {
      const looked = page.next_offset > page.offset ? `#${fmt(page.offset + 1)}–#${fmt(page.next_offset)}` : "none";
      $("dead-info").textContent = `${fmt(page.items.length)} found among ${looked} of ${fmt(page.total)}`;
      $("dead-prev").disabled = this.trail.length === 0;
      $("dead-next").disabled = page.next_offset >= page.total;
      return;
    }
    const last = Math.min(page.offset + page.items.length, page.total);
    $("dead-info").textContent = page.total ? `${fmt(page.offset + 1)}–${fmt(last)} of ${fmt(page.total)}` : "";
    $("dead-prev").disabled = page.offset === 0;
    $("dead-next").disabled = last >= page.total;
  },

  // One row per shape of reason (ids and numbers folded, as the server
  // groups them): a shape with one reason shows it as it is and picks it
  // exactly; one with several shows the shape, how many reasons and one of
  // them, and picks them all.
  drawReasons(counted) {
    const groups = counted.shapes || counted.groups.map((g) => ({ shape: g.reason, count: g.count, reasons: 1, example: g.reason, last_at_ms: g.last_at_ms }));
    const rows = groups.map((g) => {
      const tr = el("tr");
      const reason = el("td", { class: `reason${g.shape === null ? " muted" : ""}` }, g.shape === null ? "not recorded" : "");
      if (g.shape !== null) {
        const several = g.reasons > 1;
        const show = el("a", {
          class: `reason-filter${several ? " shape" : ""}`,
          title: several ? "List the dead letters whose reason looks like this" : "List the dead letters with this reason",
        }, visible(several ? g.shape : g.example));
        show.addEventListener("click", () => this.filter(several ? { shape: g.shape } : { reason: g.example }, this.ctx));
        reason.appendChild(show);
        if (several) {
          reason.appendChild(el("span", { class: "shape-note muted" }, ` ${fmt(g.reasons)} different reasons, e.g. “${visible(g.example)}”`));
        }
      }
      tr.appendChild(reason);
      tr.appendChild(el("td", { class: "num" }, fmt(g.count)));
      tr.appendChild(this.died(g.last_at_ms, counted.now_ms));
      return tr;
    });
    if (rows.length === 0) rows.push(el("tr")), rows[0].appendChild(el("td", { colspan: 3, class: "muted" }, "none"));
    document.querySelector("#dead-reasons tbody").replaceChildren(...rows);
    $("dead-info").textContent = counted.total ? `${fmt(groups.length)} kind(s) of reason` : "";
    $("dead-reasons-note").textContent = counted.looked < counted.total
      ? `Counted over the ${fmt(counted.looked)} most recent of ${fmt(counted.total)} dead letters (at most ${fmt(counted.most)} are read).`
      : `All ${fmt(counted.total)} dead letters counted.`;
  },

  // When it died: the local time with its zone, and how long ago below
  // (the time in UTC as the title).
  died(ms, now) {
    const td = el("td", { class: "died" });
    if (ms === null || ms === undefined) {
      td.classList.add("muted");
      td.textContent = "not recorded";
      return td;
    }
    // The zone as every time on the page writes it ("UTC+05:30").
    td.textContent = `${localTime(ms).slice(0, 19)} ${zone(ms)}`;
    td.appendChild(el("span", { class: "ago" }, relative(ms - now)));
    td.title = `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
    return td;
  },

  ctxAct(button, action, key) {
    return this.ctx.act(button, action, () => ({ keys: key }));
  },
};
