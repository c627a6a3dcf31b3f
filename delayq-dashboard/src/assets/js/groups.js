// The queue page's groups (values offered with a group key, delayq only):
// under the pending and ready counts how many are grouped, and the Groups
// card: the settings every key shares, the keys runnable and held (with the
// next one freed), and the editor of the settings. The card shows once the
// queue has used groups. A group key is the offerer's text: put in as text.

function groupedCount(node, n, where) {
  node.hidden = !(n > 0);
  node.textContent = n > 0 ? `(${fmt(n)} grouped)` : "";
  node.title = n > 0 ? `${fmt(n)} ${where} values offered with a group key: delayq's reliable consumers take them in their key's order; Java does not see them` : "";
}

const GROUP_FIELDS = ["group-concurrency", "group-rate", "group-per", "group-on-failure"];

const groupsSection = {
  init(ctx) {
    // A poll never overwrites what the operator is typing.
    for (const id of GROUP_FIELDS) {
      for (const kind of ["input", "change"]) $(id).addEventListener(kind, () => { $(id).dataset.edited = "1"; });
    }
    if (READ_ONLY) return;
    $("groups-form").hidden = false;
    $("set-groups").addEventListener("click", ctx.act($("set-groups"), "group-limits", () => {
      // A number field holding what is not a number reads as empty, which
      // would post the default: refused here, nothing posted.
      for (const [id, what] of [["group-concurrency", "concurrency"], ["group-rate", "rate"]]) {
        if ($(id).validity.badInput) throw new Error(`${what}: not a whole number. Nothing was changed.`);
      }
      const posted = {
        concurrency: $("group-concurrency").value, rate: $("group-rate").value,
        per: $("group-per").value, on_failure: $("group-on-failure").value,
      };
      for (const id of GROUP_FIELDS) $(id).dataset.edited = "";
      return posted;
    }));
  },

  query() {
    return {};
  },

  render(data) {
    const s = data.status;
    groupedCount($("pending-grouped"), s.grouped_pending, "delayed");
    groupedCount($("ready-grouped"), s.grouped_ready, "ready");
    const g = data.groups;
    const used = !!g && (g.used || s.grouped_pending > 0 || s.grouped_ready > 0);
    $("groups").hidden = !used;
    if (!used) return;
    $("groups-settings").textContent = g.text;
    setCount("groups-runnable", g.runnable);
    setCount("groups-held", g.held);
    const next = $("groups-next");
    if (g.next_freed) {
      const at = g.next_freed.at_ms;
      const when = at === null || at === undefined ? "" : at <= data.now_ms ? "now" : relative(at - data.now_ms);
      next.textContent = `next freed ${when}: ${visible(g.next_freed.key)}`;
      next.title = at ? `key ${visible(g.next_freed.key)} may run again at ${localTime(at)}` : "";
    } else {
      next.textContent = "";
      next.title = "";
    }
    const values = {
      "group-concurrency": g.concurrency,
      "group-rate": g.rate ? g.rate.count : "",
      "group-per": g.rate ? g.rate.per : "",
      "group-on-failure": g.on_failure,
    };
    for (const id of GROUP_FIELDS) {
      if ($(id).dataset.edited !== "1") $(id).value = String(values[id]);
    }
  },
};
