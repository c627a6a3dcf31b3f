// The job page: where a job offered with an id is now (pending, ready, in
// flight, dead-lettered, handled, cancelled) and its last attempts, each
// with its worker, times, outcome, error, source chain and backtrace; a
// cancel asked, the last progress its handler reported and the result it
// returned (/api/job); Cancel job for one that has not ended. Every text
// from Redis goes in as text, escaped for sight.

// A link to a job's page, from the pending and dead-letter rows.
function jobLink(queue, id) {
  return el("a", { class: "job-link", href: `/job?${new URLSearchParams({ name: queue, id })}`, title: "this job's history" }, visible(id));
}

const JOB_STATES = {
  pending: "pending",
  ready: "ready",
  in_flight: "in flight",
  dead_lettered: "dead-lettered",
  handled: "handled",
  deleted: "deleted (its dead letter)",
  removed: "removed while pending",
  cancelled: "cancelled",
  unknown: "unknown",
};

// A time as the other pages write one: local, with its zone, and how long
// ago (or until) below it.
function whenCell(tag, ms, now) {
  const node = el(tag, { class: "when" }, localTime(ms));
  node.appendChild(el("span", { class: "ago" }, relative(ms - now)));
  node.title = `${new Date(ms).toISOString().slice(0, 23).replace("T", " ")} UTC`;
  return node;
}

// Requeue and Delete for the dead letter a job page describes: the
// dead-letter page's own actions (POST, the page's token), naming the
// value by its key as its row does, so they act on that value only; Delete
// takes a second press. Reads the key of the last poll at each press.
// An action's answer above the cards.
function jobFlash(ok, text) {
  const node = $("flash");
  node.hidden = false;
  node.className = ok ? "flash" : "flash error";
  delete node.dataset.outage;
  node.textContent = visible(text);
}

function jobActions(name, reload) {
  const flash = jobFlash;
  const act = (button, action) => async () => {
    const key = $("job-actions").dataset.key;
    if (!key) return;
    button.disabled = true;
    try {
      const result = await post(action, { name, keys: key });
      flash(true, result.message);
    } catch (error) {
      flash(false, error.message);
      if (error.body && error.body.redis) $("flash").dataset.outage = "1";
    } finally {
      button.disabled = false;
      await reload();
    }
  };
  $("job-requeue").addEventListener("click", act($("job-requeue"), "requeue-dead-letter-keys"));
  const remove = act($("job-delete"), "delete-dead-letter-keys");
  $("job-delete").addEventListener("click", () => {
    if ($("job-delete").dataset.armed === "1") {
      $("job-delete").dataset.armed = "";
      $("job-delete").textContent = "Delete";
      remove();
    } else {
      $("job-delete").dataset.armed = "1";
      $("job-delete").textContent = "Delete? Press again";
    }
  });
}

// Cancel job (POST cancel-job, the page's token): the first press asks,
// the second cancels; the answer says what it did (removed while pending,
// will not run, its worker told, already ended, not found).
function jobCancel(name, id, reload) {
  const button = $("job-cancel");
  const disarm = () => { button.dataset.armed = ""; button.textContent = "Cancel job"; };
  button.addEventListener("click", async () => {
    if (button.dataset.armed !== "1") {
      button.dataset.armed = "1";
      button.textContent = "Cancel job? Press again";
      return;
    }
    disarm();
    button.disabled = true;
    try {
      const result = await post("cancel-job", { name, id });
      jobFlash(result.outcome !== "unknown", result.message);
    } catch (error) {
      jobFlash(false, error.message);
      if (error.body && error.body.redis) $("flash").dataset.outage = "1";
    } finally {
      button.disabled = false;
      await reload();
    }
  });
}

// "reported 3s ago · 2026-11-30 14:05:26.123 UTC+01:00", title in UTC.
function reportedAt(node, verb, ms, now, extra) {
  node.textContent = [`${verb} ${relative(ms - now)}`, localTime(ms), ...extra].join(" · ");
  node.title = `${new Date(ms).toISOString().slice(0, 23).replace("T", " ")} UTC`;
}

// JSON text as the page shows it: each line's unseen characters escaped
// (the JSON's own escapes stay as they are), in a <pre>, as text.
function jsonBlock(text) {
  return el("pre", { class: "json" }, String(text).split("\n").map(visible).join("\n"));
}

// A progress value as a bar when it is a number from 0 to 1 (a fraction)
// or up to 100 (a percentage); anything else as its JSON.
function progressView(p) {
  const v = p.value;
  if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 100) {
    const fraction = v <= 1 ? v : v / 100;
    const percent = `${Number((fraction * 100).toFixed(1))}%`;
    const bar = el("progress", { max: "1", value: String(fraction), title: `reported ${v}` });
    bar.setAttribute("aria-label", `progress ${percent}`);
    return [bar, el("span", { class: "percent" }, percent)];
  }
  return [jsonBlock(p.pretty)];
}

// Results longer than this fold away (a <details> the reader opens).
const RESULT_FOLD_LINES = 12;
const RESULT_FOLD_CHARS = 1200;

function resultView(r) {
  const lines = r.pretty.split("\n").length;
  if (lines <= RESULT_FOLD_LINES && r.pretty.length <= RESULT_FOLD_CHARS) return [jsonBlock(r.pretty)];
  const more = el("details", {});
  more.appendChild(el("summary", {}, `${fmt(lines)} lines, ${fmt(r.bytes)} bytes of JSON: show`));
  more.appendChild(jsonBlock(r.pretty));
  return [more];
}

// The cancel badge, Cancel job, progress and result of one answer. The
// progress and result are drawn again only when they changed, so an
// opened result stays open through the polls.
function jobReports(data, drawn) {
  const asked = data.cancel_requested_ms;
  const badge = $("job-cancel-badge");
  badge.hidden = asked === null || asked === undefined;
  if (!badge.hidden) {
    badge.textContent = `cancel requested ${relative(asked - data.now_ms)}`;
    badge.title = `asked ${localTime(asked)}: a ready job is dropped by the take that reaches it, a running one's worker tells its handler`;
  }
  const live = !data.finished && data.state.name !== "unknown";
  $("job-cancel-actions").hidden = READ_ONLY || !live;

  const p = data.progress;
  $("job-progress-section").hidden = !p;
  if (p) {
    reportedAt($("job-progress-at"), "reported", p.at_ms, data.now_ms, [`delivery ${visible(p.delivery)}`]);
    const key = JSON.stringify([p.value, p.at_ms]);
    if (drawn.progress !== key) {
      drawn.progress = key;
      $("job-progress").replaceChildren(...progressView(p));
    }
  }
  const r = data.result;
  $("job-result-section").hidden = !r;
  if (r) {
    reportedAt($("job-result-at"), "kept", r.at_ms, data.now_ms, [`${fmt(r.bytes)} bytes`]);
    const key = JSON.stringify([r.pretty, r.at_ms]);
    if (drawn.result !== key) {
      drawn.result = key;
      $("job-result").replaceChildren(...resultView(r));
    }
  }
}

// A member of a batch (its id <batch>/<n>, its batch found): "member 7 of
// 20 in batch B", the batch a link to its page, and how far it is. Drawn
// again only when it changed.
function jobBatch(queue, b, drawn) {
  const node = $("job-batch");
  node.hidden = !b;
  if (!b) {
    drawn.batch = "";
    return;
  }
  const key = JSON.stringify([b.member, b.total, b.state, b.ended]);
  if (drawn.batch === key) return;
  drawn.batch = key;
  node.replaceChildren(
    `member ${fmt(b.member)} of ${fmt(b.total)} in batch `,
    batchLink(queue, b.id),
    ` · ${visible(b.state)} · ${fmt(b.ended)} of ${fmt(b.total)} ended`,
  );
}

function jobPage() {
  const params = new URLSearchParams(location.search);
  const name = params.get("name") || "";
  const id = params.get("id") || "";
  $("job-id").textContent = visible(id);
  $("job-queue").textContent = visible(name);
  $("job-queue").href = `/queue?name=${encodeURIComponent(name)}`;
  $("job-search-name").value = name;
  $("job-search-id").value = id;
  document.title = `delayq · job ${visible(id)}`;
  const drawn = {};
  const load = async () => {
    if (id === "") {
      $("job-state").textContent = "–";
      $("job-detail").textContent = "Type a job id (as given to offer_with_id) to see its history.";
      return;
    }
    const data = await getJson(`/api/job?${new URLSearchParams({ name, id })}`);
    const state = data.state;
    $("job-state").textContent = JOB_STATES[state.name] || state.name;
    $("job-state").parentElement.classList.toggle("warn", state.name === "dead_lettered" || state.name === "cancelled");
    if (state.at_ms === null) $("job-since").replaceChildren("–");
    else $("job-since").replaceChildren(relative(state.at_ms - data.now_ms), el("span", { class: "abs" }, localTime(state.at_ms)));
    $("job-since").title = state.at_ms === null ? "" : `${new Date(state.at_ms).toISOString().slice(0, 23).replace("T", " ")} UTC`;
    $("job-attempts").textContent = fmt(data.attempts_total);
    const detail = [];
    if (state.name === "dead_lettered") detail.push(`why: ${visible(state.reason)}`);
    if (state.name === "in_flight") detail.push(`delivery ${visible(state.delivery)}`);
    if (state.name === "pending") detail.push(`due ${localTime(state.at_ms)}`);
    if (state.name === "cancelled") detail.push(visible(state.how || "cancelled"));
    const off = !(data.history && data.history.on);
    if (state.name === "unknown" && off) detail.push("No such id pending.");
    else if (state.name === "unknown") detail.push("No such id pending and no history: never offered with this id, taken by a consumer that keeps none (Java, a plain take), or its history expired.");
    if (off) detail.push("This queue keeps no job history (turn it on: delayq job QUEUE --history on): only pending jobs are found.");
    if (data.attempts_total > data.attempts.length) detail.push(`the last ${data.attempts.length} of ${fmt(data.attempts_total)} attempts are kept`);
    const dead = data.dead_letter;
    if (state.name === "dead_lettered" && !dead) detail.push(`its dead letter is not among the ${fmt(data.dead_letters_looked)} most recent`);
    $("job-detail").textContent = detail.join(" · ");
    // Its dead letter: a link to its row, and its row's actions.
    $("job-actions").hidden = !dead;
    $("job-actions").dataset.key = dead ? dead.key : "";
    if (dead) {
      $("job-dead-row").textContent = `#${fmt(dead.index + 1)} in the dead letters`;
      $("job-dead-row").href = `/queue?${new URLSearchParams({ name, dead: dead.index + 1 })}#dead-letters-section`;
    }
    for (const button of [$("job-requeue"), $("job-delete")]) button.hidden = READ_ONLY;
    jobBatch(name, data.batch, drawn);
    jobReports(data, drawn);
    const first = data.attempts_total - data.attempts.length + 1;
    const rows = [];
    data.attempts.forEach((a, i) => {
      const tr = el("tr", { class: a.outcome && a.outcome !== "ok" ? "failed" : "" });
      tr.appendChild(el("td", { class: "num" }, fmt(first + i)));
      tr.appendChild(whenCell("td", a.started_ms, data.now_ms));
      tr.appendChild(el("td", {}, a.ended_ms === null ? "running" : span(a.ended_ms - a.started_ms)));
      tr.appendChild(el("td", { class: "worker" }, visible(a.worker || "–")));
      tr.appendChild(el("td", { class: "delivery" }, visible(a.delivery || "–")));
      tr.appendChild(el("td", { class: "outcome" }, a.outcome === null ? "running" : visible(a.outcome)));
      const error = el("td", { class: "error" }, a.error === null ? "–" : visible(a.error));
      if (a.chain.length > 0 || a.backtrace !== null) {
        const more = el("details", {});
        more.appendChild(el("summary", {}, a.backtrace !== null ? "chain and backtrace" : "caused by"));
        for (const cause of a.chain) more.appendChild(el("div", { class: "cause" }, `caused by: ${visible(cause)}`));
        if (a.backtrace !== null) more.appendChild(el("pre", { class: "backtrace" }, a.backtrace.split("\n").map(visible).join("\n")));
        error.appendChild(more);
      }
      tr.appendChild(error);
      rows.push(tr);
    });
    document.querySelector("#job-table tbody").replaceChildren(...(rows.length ? rows
      : [el("tr", {}, null)].map((tr) => { tr.appendChild(el("td", { colspan: 7, class: "muted" }, "no attempts yet")); return tr; })));
  };
  const reload = poll(load);
  if (!READ_ONLY) {
    jobActions(name, reload);
    jobCancel(name, id, reload);
  }
}
