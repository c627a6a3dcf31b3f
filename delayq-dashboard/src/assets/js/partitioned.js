// A partitioned queue's page (/partitioned?name=Q): its stored layout
// (count, key hash, created), one row per partition (name, slot, the
// Cluster primary serving it, counts) linking to the partition's own queue
// page, and the sums. Read now on every poll; while Redis is unreachable the
// banner says so and the numbers stay greyed (never zeros).

function partitionedPage() {
  const name = new URLSearchParams(location.search).get("name") || "";
  $("queue-name").textContent = visible(name);
  document.title = `delayq · ${visible(name)} (partitioned)`;
  const load = async () => {
    let data;
    try {
      data = await getJson(`/api/partitioned?name=${encodeURIComponent(name)}`);
    } catch (error) {
      // Not a partitioned queue (or a bad name): say so, no table of zeros.
      if (!(error.body && error.body.redis) && error.body && error.body.error) {
        const unknown = $("unknown");
        unknown.textContent = visible(error.body.error);
        unknown.appendChild(document.createTextNode(" "));
        unknown.appendChild(el("a", { href: `/queue?name=${encodeURIComponent(name)}` }, "its page as an ordinary queue"));
        unknown.hidden = false;
        return;
      }
      throw error;
    }
    $("unknown").hidden = true;
    const badge = $("partitioned-badge");
    badge.textContent = `partitioned ×${data.count}`;
    badge.hidden = false;
    setCount("partition-count", data.count);
    setCount("pending", data.total.pending);
    setCount("ready", data.total.ready);
    setCount("in-flight", data.total.in_flight);
    setCount("dead-letters", data.total.dead_letters, true);
    $("layout").textContent = `${fmt(data.count)} partitions (generation ${fmt(data.generation ?? 1)}${data.retired_count ? `, ${fmt(data.retired_count)} retired still read` : ""}) · a key's partition: ${data.hash === "crc32" ? "CRC-32" : visible(data.hash)}(key bytes) mod ${data.count} · created ${data.created_ms ? localTime(data.created_ms) : "–"}`;
    const rows = data.partitions.map((p) => {
      const tr = el("tr", { "data-partition": p.index, class: p.retired ? "retired" : "" });
      tr.appendChild(el("td", { class: "num index" }, p.retired ? "–" : p.index));
      const cell = el("td", { class: "name" });
      cell.appendChild(el("a", { href: `/queue?name=${encodeURIComponent(p.name)}`, title: visible(p.name) }, visible(p.name)));
      if (p.retired) cell.appendChild(el("span", { class: "badge retired", title: "an old partition: no new offers; drained in place until `delayq partition retire` drops it" }, "retired"));
      if (p.paused && !p.retired) cell.appendChild(el("span", { class: "badge paused" }, pausedText(p, data.now_ms)));
      tr.appendChild(cell);
      tr.appendChild(el("td", { class: "num slot" }, p.slot));
      tr.appendChild(el("td", { class: "node" }, p.node ? visible(p.node) : "–"));
      for (const [key, cls] of [["ready", "ready"], ["pending", "pending"], ["in_flight", "in-flight"], ["dead_letters", "dead-letters"]]) {
        const hot = key === "dead_letters" && p[key] > 0;
        tr.appendChild(el("td", { class: `num ${cls}${hot ? " hot" : ""}`, "data-value": p[key] ?? "" }, fmt(p[key])));
      }
      return tr;
    });
    document.querySelector("#partitions tbody").replaceChildren(...rows);
    for (const [key, id] of [["ready", "sum-ready"], ["pending", "sum-pending"], ["in_flight", "sum-in-flight"], ["dead_letters", "sum-dead-letters"]]) {
      const cell = $(id);
      cell.textContent = fmt(data.total[key]);
      cell.dataset.value = String(data.total[key]);
    }
  };
  poll(load);
}
