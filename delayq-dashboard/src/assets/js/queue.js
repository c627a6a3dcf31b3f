// The queue page: its counts, charts, schedules and whole-queue actions.
// The pending, dead-letter, events and groups sections (pending.js,
// dead_letters.js, events.js, groups.js) draw
// from the same poll: each has init(ctx) once, query() for the poll's
// parameters and render(data, ctx) for each answer. ctx carries the queue's
// name, refresh(), flash(ok, text) and act(button, action, params).
const SECTIONS = () => [pendingSection, deadLettersSection, eventsSection, groupsSection];

function queuePage() {
  const name = new URLSearchParams(location.search).get("name") || "";
  const ctx = { name, acting: false };
  $("queue-name").textContent = visible(name);
  document.querySelector("header .where").title = `queue ${visible(name)}`;
  $("workers-link").href = `/workers?queue=${encodeURIComponent(name)}`;
  $("job-search-name").value = name;
  document.title = `delayq · ${visible(name)}`;
  historyCharts({
    ranges: $("history-ranges"), step: $("history-step"), name,
    charts: { flow: $("chart-flow"), failures: $("chart-failures"), latency: $("chart-lag"), memory: $("chart-memory") },
  });

  const load = async () => {
    if (ctx.acting) return;
    const q = new URLSearchParams({ name });
    for (const section of SECTIONS()) {
      for (const [k, v] of Object.entries(section.query(ctx))) q.set(k, v);
    }
    const data = await getJson(`/api/queue?${q}`);
    // Redis answers: the actions work again (before the sections redraw,
    // which set the states they need).
    lockActions(false);
    // A section whose page went away under it (the queue shrank) asks again.
    if (SECTIONS().some((section) => section.stale && section.stale(data, ctx))) return load();
    unknownQueue(name, data);
    const s = data.status;
    setCount("pending", s.pending);
    setCount("ready", s.ready);
    priorityCount($("pending-priority"), s.priority_pending, "delayed");
    priorityCount($("ready-priority"), s.priority_ready, "ready");
    // Live ones first (what the concurrency limit counts), lapsed apart.
    setCount("in-flight", Math.max(0, s.in_flight - (s.lapsed || 0)));
    inFlightLimit(s.in_flight, s.lapsed, data.limits);
    setCount("dead-letters", s.dead_letters, true);
    setCount("quarantined", s.quarantined, true);
    $("next-due").textContent = s.next_due_ms ? `${relative(s.next_due_ms - data.now_ms)}` : "–";
    $("next-due").title = s.next_due_ms ? localTime(s.next_due_ms) : "";
    $("lag").textContent = s.paused ? `paused${s.lag_ms ? ` (head ${span(s.lag_ms)} overdue)` : ""}` : s.lag_ms ? span(s.lag_ms) : "none";
    $("lag").dataset.value = s.lag_ms;
    $("paused-badge").hidden = !s.paused;
    $("paused-badge").textContent = pausedText(s, data.now_ms);
    $("paused-badge").title = s.paused_since_ms ? `paused since ${localTime(s.paused_since_ms)}; delayq's transfers and reliable consumers wait, Java's do not know` : "delayq's transfers and reliable consumers wait; Java's do not know";
    oldestReady($("oldest-ready"), s);
    $("untaken-badge").hidden = !data.untaken;
    $("untaken-badge").title = UNTAKEN_TITLE;
    $("pause").hidden = s.paused;
    $("resume").hidden = !s.paused;
    limitsShown(data.limits);

    // In take order: the values with a priority first, each with its badge,
    // and under a value its TTL and headers when it has them.
    const ready = data.ready_head.map((v, i) =>
      withPriority(withOffered(fillPayload(el("li"), v, `ready:${i}`), v, data.now_ms), v.priority));
    if (ready.length === 0) ready.push(el("li", { class: "muted empty" }, "empty"));
    $("ready-list").replaceChildren(...ready);

    for (const section of SECTIONS()) section.render(data, ctx);

    hourBars($("chart-hour"), data.due_next_hour || { overdue: 0, buckets: new Array(12).fill(0) }, 400, 120);
    $("history-note").dataset.sampled = data.sampled;
    schedulesSection(data.schedules, data.now_ms);
    $("purge").disabled = $("purge-confirm").value !== name;
    // Purge and Migrate take the delayed queue's elements, not the delayed
    // values with a priority: their labels count what they take.
    ctx.counts = { due: (data.due_next_hour && data.due_next_hour.overdue) || 0, pending: plainPending(s) };
    for (const button of pressTwice.buttons) pressTwice.label(button, ctx);
  };
  // While live events cover the counts (events.js), the 2-second tick
  // loads only every EVENTS_FALLBACK_MS; an event (ctx.changed) or an
  // action (ctx.refresh) loads at once. After a load that failed (Redis
  // away) every tick loads until one succeeds: the events stream may be
  // back before the page's reads are, and must not hold an outage (or
  // the numbers from before it) on the page for the fallback's 15 s.
  let lastLoad = 0;
  let forced = false;
  let failed = false;
  const tick = poll(async () => {
    if (!forced && !failed && eventsSection.covers() && Date.now() - lastLoad < EVENTS_FALLBACK_MS) return;
    forced = false;
    lastLoad = Date.now();
    failed = true;
    await load();
    failed = false;
  });
  ctx.refresh = () => { forced = true; return tick(); };
  let soon = null;
  ctx.changed = () => {
    if (soon) return;
    soon = setTimeout(() => { soon = null; ctx.refresh(); }, 250);
  };
  ctx.flash = (ok, text) => {
    const node = $("flash");
    node.hidden = false;
    node.className = ok ? "flash" : "flash error";
    delete node.dataset.outage;
    node.textContent = visible(text);
  };
  // A click handler that posts an action, says what it answered (`say`
  // words an answer from its fields, e.g. a time in the page's zone) and redraws.
  ctx.act = (button, action, params, say) => async () => {
    ctx.acting = true;
    button.disabled = true;
    try {
      const result = await post(action, { name, ...params() });
      ctx.flash(true, say ? say(result) : result.message);
    } catch (error) {
      ctx.flash(false, error.message);
      if (error.body && error.body.redis) $("flash").dataset.outage = "1";
    } finally {
      ctx.acting = false;
      button.disabled = false;
      await ctx.refresh();
    }
  };
  for (const section of SECTIONS()) section.init(ctx);

  if (READ_ONLY) return;
  const act = ctx.act;
  $("actions").hidden = false;
  pressTwice.arm($("move-due"), ctx, (c) => c.due,
    (c) => `Move due now (${fmt(c.due)})`,
    (c) => `Really move the ${fmt(c.due)} due now? Press again`,
    act($("move-due"), "move-due", () => ({})));
  $("pause").addEventListener("click", act($("pause"), "pause", () => ({})));
  $("resume").addEventListener("click", act($("resume"), "resume", () => ({})));
  for (const id of LIMIT_FIELDS) {
    for (const kind of ["input", "change"]) $(id).addEventListener(kind, () => { $(id).dataset.edited = "1"; });
  }
  $("set-limits").addEventListener("click", act($("set-limits"), "limits", () => {
    // A number field holding what is not a number reads as empty, which
    // would post "no limit": refused here, nothing posted.
    for (const [id, what] of [["limit-max-size", "max size"], ["limit-max-payload", "max payload"], ["limit-concurrency", "concurrency"]]) {
      if ($(id).validity.badInput) throw new Error(`${what}: not a whole number; leave it empty for no limit. Nothing was changed.`);
    }
    const posted = {
      max_size: $("limit-max-size").value, max_payload: $("limit-max-payload").value,
      offers: $("limit-offers").value, takes: $("limit-takes").value,
      concurrency: $("limit-concurrency").value,
    };
    for (const id of LIMIT_FIELDS) $(id).dataset.edited = "";
    return posted;
  }));
  pressTwice.arm($("migrate"), ctx, (c) => c.pending,
    (c) => `Migrate ${fmt(c.pending)} pending`,
    (c) => `Really rewrite the ${fmt(c.pending)} pending as ${$("migrate-to").value}? Press again`,
    act($("migrate"), "migrate", () => ({ to: $("migrate-to").value })));
  $("migrate-to").addEventListener("change", () => pressTwice.disarm($("migrate"), ctx));
  const confirm = $("purge-confirm");
  confirm.addEventListener("input", () => { $("purge").disabled = confirm.value !== name; });
  pressTwice.buttons.push($("purge"));
  $("purge").addEventListener("click", act($("purge"), "purge", () => {
    const typed = confirm.value;
    confirm.value = "";
    return { confirm: typed };
  }));
}

// Priorities (levels 1-9, delayq only): a badge before such a value, and
// under a count how many of it have one. A Java client sees neither.
const priorityTitle = (level) =>
  `priority ${level}: taken before lower levels and the plain list; Java does not see it`;
function withPriority(node, level) {
  if (level > 0) node.prepend(el("span", { class: "badge priority", title: priorityTitle(level) }, `P${level}`));
  return node;
}
function priorityCount(node, n, where) {
  node.hidden = !(n > 0);
  node.textContent = n > 0 ? `(${fmt(n)} delayq-only)` : "";
  node.title = n > 0 ? `${fmt(n)} ${where} values offered with a priority, a TTL or headers: delayq's consumers take them before the plain list's; Java does not see them` : "";
}

// The queue's limits: shown to everyone, and the form's fields filled with
// them unless the operator is editing one (a poll never overwrites typing).
const LIMIT_FIELDS = ["limit-max-size", "limit-max-payload", "limit-offers", "limit-takes", "limit-concurrency"];
function limitsShown(limits) {
  if (!limits) return;
  $("limits").textContent = limits.text;
  const values = {
    "limit-max-size": limits.max_size ?? "", "limit-max-payload": limits.max_payload ?? "",
    "limit-offers": limits.offers ? "on" : "off", "limit-takes": limits.takes ? "on" : "off",
    "limit-concurrency": limits.concurrency ?? "",
  };
  for (const id of LIMIT_FIELDS) {
    if ($(id).dataset.edited !== "1") $(id).value = String(values[id]);
  }
}

// With a concurrency limit the in-flight card reads "N / LIMIT", N the
// live deliveries (those past their visibility timeout do not count), in
// the warning colour while the limit is reached or passed (reliable takes
// and workers then wait).
function inFlightLimit(inFlight, lapsed, limits) {
  const node = $("in-flight-limit");
  const limit = limits ? limits.concurrency : null;
  const limited = limit !== undefined && limit !== null;
  const live = Math.max(0, Number(inFlight) - Number(lapsed || 0));
  const full = limited && live >= Number(limit);
  const over = limited && live > Number(limit);
  node.hidden = !limited && !lapsed;
  node.textContent = (limited ? ` / ${fmt(limit)}` : "") + (lapsed ? ` +${fmt(lapsed)} lapsed` : "");
  $("in-flight-card").classList.toggle("full", full);
  const state = over ? `; over it by ${fmt(live - Number(limit))}: reliable takes and workers wait until ${fmt(live - Number(limit) + 1)} settle`
    : full ? "; reached: reliable takes and workers wait for a settle" : "";
  const lapsedNote = lapsed ? `${fmt(lapsed)} past their visibility timeout, not counted, returned when a reliable consumer's reaper runs` : "";
  $("in-flight-card").title = [
    limited ? `concurrency limit: at most ${fmt(limit)} delayq deliveries in flight across every process${state} (Java's consumers neither read nor count against it)` : "",
    lapsedNote,
  ].filter(Boolean).join("; ");
}

// Whole-queue actions say how many they take, and act on a second press:
// the first arms the button with the count the page shows (for ARMED_MS),
// the second acts; with a count of 0 the first acts. Purge waits for the
// typed name instead; its label counts.
const ARMED_MS = 10000;
const pressTwice = {
  buttons: [],
  labels: new Map(),

  arm(button, ctx, count, idle, question, run) {
    this.buttons.push(button);
    this.labels.set(button, { idle, question });
    button.addEventListener("click", () => {
      // Nothing to take (as last read): nothing to confirm either.
      if (button.dataset.armed === "1" || !count(ctx.counts || { due: 0, pending: 0 })) {
        this.disarm(button, ctx);
        run();
        return;
      }
      button.dataset.armed = "1";
      button.textContent = question(ctx.counts || { due: 0, pending: 0 });
      clearTimeout(button.disarmAt);
      button.disarmAt = setTimeout(() => this.disarm(button, ctx), ARMED_MS);
    });
  },

  disarm(button, ctx) {
    clearTimeout(button.disarmAt);
    button.dataset.armed = "";
    this.label(button, ctx);
  },

  // The idle label with the latest counts; an armed button keeps the count
  // it was armed with.
  label(button, ctx) {
    const counts = ctx.counts || { due: 0, pending: 0 };
    if (button.id === "purge") {
      button.textContent = `Purge ${fmt(counts.pending)} pending`;
      return;
    }
    if (button.dataset.armed === "1") return;
    button.textContent = this.labels.get(button).idle(counts);
  },
};

// A name delayq does not know (no key, schedule nor registration; most
// likely mistyped): a banner naming the closest known queues, and no
// actions, rather than what looks like a healthy empty queue.
function unknownQueue(name, data) {
  const unknown = data.known === false;
  document.body.classList.toggle("unknown-queue", unknown);
  const node = $("unknown");
  node.hidden = !unknown;
  if (!unknown) return;
  const parts = [el("strong", {}, `no queue \`${visible(name)}\``),
    document.createTextNode(": delayq knows no key, schedule or registration of that name.")];
  const close = data.did_you_mean || [];
  close.forEach((other, i) => {
    parts.push(document.createTextNode(i === 0 ? " Did you mean " : i === close.length - 1 ? " or " : ", "));
    parts.push(el("a", { href: `/queue?${new URLSearchParams({ name: other })}` }, `\`${visible(other)}\``));
  });
  if (close.length) parts.push(document.createTextNode("?"));
  node.replaceChildren(...parts);
}
