// The search page: values by id or by text across every queue (or one),
// in their pending elements, ready values and dead letters. Each request
// looks at a bounded number of values and says how far it got; Continue
// goes on from there and adds to the matches shown.
function searchPage() {
  const url = new URLSearchParams(location.search);
  const form = { text: url.get("text") || "", state: url.get("state") || "", queue: url.get("queue") || "" };
  $("find-text").value = form.text;
  $("find-state").value = form.state;
  $("find-queue").value = form.queue;
  const body = document.querySelector("#found tbody");
  let next = null;
  let runs = 0;
  // Where a match is shown: its queue's page, at the section that lists it
  // (a pending element found again there by its id, or by the text).
  const link = (m) => {
    const q = new URLSearchParams({ name: m.queue });
    if (m.state === "pending") {
      q.set("find", m.id || form.text);
      if (m.id) q.set("by", "id");
      return `/queue?${q}#pending-section`;
    }
    return m.state === "dead" ? `/queue?${q}#dead-letters-section` : `/queue?${q}`;
  };
  const row = (m, now) => {
    const tr = el("tr", { "data-queue": m.queue, "data-state": m.state });
    const name = el("td", { class: "name" });
    name.appendChild(el("a", { href: link(m), title: visible(m.queue) }, visible(m.queue)));
    tr.appendChild(name);
    tr.appendChild(el("td", { class: `state ${m.state}` }, m.state === "dead" ? "dead letter" : m.state));
    tr.appendChild(el("td", { class: "num" }, `${fmt(m.position + 1)}`));
    const when = m.due_ms !== null ? (m.due_ms >= now ? `due in ${span(m.due_ms - now)}` : `due ${span(now - m.due_ms)} ago`)
      : m.reason ? `why: ${visible(m.reason)}` : "–";
    tr.appendChild(el("td", { class: "when" }, when));
    // An id opens its job's page: where it is now and its attempts.
    const id = el("td", { class: "id" }, m.id === null ? "–" : null);
    if (m.id !== null) id.appendChild(jobLink(m.queue, m.id));
    if (m.by_id) id.appendChild(el("span", { class: "badge", title: "found through the id index" }, "id"));
    tr.appendChild(id);
    tr.appendChild(withCodec(el("td", { class: `payload${m.decoded ? "" : " hex"}`, title: m.error || "" }, visible(m.text)), m));
    return tr;
  };
  const run = async (more) => {
    const mine = ++runs;
    if (!more) {
      body.replaceChildren();
      next = null;
      $("found").hidden = true;
      $("found-more").hidden = true;
    }
    if (!form.text) {
      $("found-info").textContent = "type an id, or text in the values";
      return;
    }
    $("found-more").disabled = true;
    $("found-info").textContent = "searching…";
    const q = new URLSearchParams({ text: form.text, state: form.state, queue: form.queue });
    if (more && next) q.set("from", next);
    try {
      const data = await getJson(`/api/search?${q}`);
      if (mine !== runs) return;
      live(true, "live");
      for (const m of data.matches) body.appendChild(row(m, data.now_ms));
      next = data.next;
      $("found-info").textContent = data.message;
      $("found-more").hidden = data.complete;
      $("found").hidden = body.children.length === 0;
    } catch (e) {
      if (mine === runs) $("found-info").textContent = visible(e.message || String(e));
    } finally {
      $("found-more").disabled = false;
    }
  };
  $("find-form").addEventListener("submit", (event) => {
    event.preventDefault();
    form.text = $("find-text").value;
    form.state = $("find-state").value;
    form.queue = $("find-queue").value.trim();
    const q = new URLSearchParams();
    for (const key of ["text", "state", "queue"]) if (form[key]) q.set(key, form[key]);
    history.replaceState(null, "", `?${q}`);
    run(false);
  });
  $("found-more").addEventListener("click", () => run(true));
  run(false);
}
