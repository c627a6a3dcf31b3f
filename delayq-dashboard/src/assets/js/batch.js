// The batch page: a batch of jobs offered together (offer_batch), from
// /api/batch: its state, a bar of its members ended of its total in the
// three ways a member ends (handled, dead-lettered, cancelled), how many
// are offered while the offer runs, when it began and completed, and the
// queue its completion goes to. Every text from Redis goes in as text,
// escaped for sight.

const BATCH_STATES = {
  offering: "offering",
  open: "open",
  complete: "complete",
  delivered: "delivered",
};

// A link to a batch's page, from a member's job page and the live events.
function batchLink(queue, id) {
  return el("a", { class: "batch-link", href: `/batch?${new URLSearchParams({ name: queue, id: String(id) })}`, title: "this batch's state and counts" }, visible(id));
}

// How long ago, with the local time (and its zone) below it; UTC in the title.
function agoWithTime(node, ms, now) {
  if (ms === null || ms === undefined) {
    node.replaceChildren("–");
    node.title = "";
    return;
  }
  node.replaceChildren(relative(ms - now), el("span", { class: "abs" }, localTime(ms)));
  node.title = `${new Date(ms).toISOString().slice(0, 23).replace("T", " ")} UTC`;
}

// "33.3%" of a part of the total, for the bar's widths and its words.
function share(part, total) {
  return total > 0 ? `${Number(((100 * part) / total).toFixed(1))}%` : "0%";
}

// The bar and the counts beside it: handled, dead-lettered and cancelled
// side by side, each as wide as its share of the total, the rest empty.
function batchBar(b) {
  const parts = [["handled", b.handled], ["dead", b.dead_lettered], ["cancelled", b.cancelled]];
  const bar = $("batch-bar");
  for (const [cls, count] of parts) {
    const seg = bar.querySelector(`.seg.${cls}`);
    seg.style.width = share(count, b.total);
    seg.dataset.value = String(count);
  }
  const words = `${fmt(b.ended)} of ${fmt(b.total)} ended: ${fmt(b.handled)} handled, ${fmt(b.dead_lettered)} dead-lettered, ${fmt(b.cancelled)} cancelled`;
  bar.title = words;
  bar.setAttribute("aria-label", words);
  setCount("batch-handled", b.handled, false);
  setCount("batch-dead", b.dead_lettered, false);
  setCount("batch-cancelled", b.cancelled, false);
  setCount("batch-waiting", Math.max(0, b.total - b.ended), false);
  $("batch-percent").textContent = `${share(b.ended, b.total)} ended`;
  const offering = $("batch-offering");
  offering.hidden = b.state !== "offering";
  if (!offering.hidden) {
    offering.replaceChildren(
      el("progress", { max: String(Math.max(1, b.total)), value: String(b.offered), "aria-label": `offered ${share(b.offered, b.total)}` }),
      ` ${fmt(b.offered)} of ${fmt(b.total)} offered`,
    );
  }
}

// What the state means for this batch, in words.
function batchDetail(b, queue) {
  const target = b.target === null || b.target === undefined ? null : b.target;
  const parts = [];
  if (b.state === "offering") {
    parts.push(`Its offer has added ${fmt(b.offered)} of ${fmt(b.total)} members: it runs, or stopped half way (offering it again under its id with the same items resumes it). No completion until every member is offered.`);
  } else if (b.state === "open") {
    parts.push(`${fmt(b.total - b.ended)} of ${fmt(b.total)} members have not ended yet.`);
  } else if (b.state === "complete") {
    if (target === null) parts.push("Every member has ended.");
    else parts.push("Every member has ended: its completion is on its way to ", queueLink(target),
      " (a delayq client with a reliable handle or a worker on this queue offers it within 5 s).");
  } else if (b.state === "delivered") {
    if (target === null) parts.push("Every member has ended; it asked for no completion.");
    else parts.push("Every member has ended, and its completion was offered to ", queueLink(target), ".");
  }
  // The first and last members offered, links to their job pages.
  const last = Math.min(b.total, b.offered);
  if (last > 0) {
    parts.push(" Members: ", jobLink(queue, `${b.id}/1`));
    if (last > 1) parts.push(" … ", jobLink(queue, `${b.id}/${last}`));
    parts.push(".");
  }
  return parts;
}

function queueLink(name) {
  return el("a", { class: "queue-link", href: `/queue?${new URLSearchParams({ name: String(name) })}`, title: "that queue's page" }, visible(name));
}

function batchPage() {
  const params = new URLSearchParams(location.search);
  const name = params.get("name") || "";
  const id = params.get("id") || "";
  $("batch-id").textContent = visible(id);
  $("batch-queue").textContent = visible(name);
  $("batch-queue").href = `/queue?${new URLSearchParams({ name })}`;
  $("batch-search-name").value = name;
  $("batch-search-id").value = id;
  document.title = `delayq · batch ${visible(id)}`;
  const nothing = (why) => {
    $("batch-state").textContent = why;
    $("batch-state-card").className = "card";
    for (const card of ["batch-ended", "batch-created", "batch-completed", "batch-target"]) $(card).replaceChildren("–");
    $("batch-progress-section").hidden = true;
  };
  let drawn = "";
  const load = async () => {
    if (id === "") {
      nothing("–");
      $("batch-detail").textContent = "Type a batch id (as offer_batch returned it) to see its members' progress.";
      return;
    }
    let b;
    try {
      b = await getJson(`/api/batch?${new URLSearchParams({ name, id })}`);
    } catch (error) {
      // No such batch is an answer, not an outage: the page says so.
      if (!(error.body && error.body.found === false)) throw error;
      nothing("not found");
      $("batch-detail").textContent = `${visible(error.message)}.`;
      drawn = "";
      return;
    }
    $("batch-state").textContent = BATCH_STATES[b.state] || visible(b.state);
    $("batch-state-card").className = `card batch-state ${String(b.state).replace(/[^a-z]/g, "")}`;
    $("batch-ended").replaceChildren(fmt(b.ended), el("span", { class: "of" }, ` / ${fmt(b.total)}`));
    agoWithTime($("batch-created"), b.created_ms, b.now_ms);
    agoWithTime($("batch-completed"), b.completed_ms, b.now_ms);
    $("batch-target").replaceChildren(b.target === null ? el("span", { class: "muted" }, "none asked") : queueLink(b.target));
    $("batch-progress-section").hidden = false;
    batchBar(b);
    // The words and links are drawn again only when they changed.
    const key = JSON.stringify([b.state, b.ended, b.offered, b.target]);
    if (key !== drawn) {
      drawn = key;
      $("batch-detail").replaceChildren(...batchDetail(b, name));
    }
  };
  poll(load);
}
