// The queue page's pending elements: a page of them in due order.
const pendingSection = {
  offset: 0,
  limit: 50,
  total: 0,

  init(ctx) {
    $("prev").addEventListener("click", () => { this.offset = Math.max(0, this.offset - this.limit); ctx.refresh(); });
    $("next").addEventListener("click", () => { this.offset += this.limit; ctx.refresh(); });
  },

  query() {
    return { offset: this.offset, limit: this.limit };
  },

  // The queue shrank under this page: go to its last page.
  stale(data) {
    const pending = data.status.pending;
    if (this.offset > 0 && this.offset >= pending) {
      this.offset = Math.max(0, Math.floor((pending - 1) / this.limit) * this.limit);
      return true;
    }
    return false;
  },

  render(data) {
    const s = data.status;
    this.total = s.pending;
    const rows = data.pending.elements.map((e) => {
      const tr = el("tr");
      tr.appendChild(el("td", { class: "due" }, localTime(e.due_ms)));
      tr.appendChild(el("td", { class: `when${e.due_ms < data.now_ms && !s.paused ? " late" : ""}` }, relative(e.due_ms - data.now_ms)));
      tr.appendChild(el("td", { class: "format" }, e.format));
      const payload = el("td", { class: `payload${e.decoded ? "" : " hex"}` }, visible(e.text));
      if (!e.decoded) payload.title = `shown as hex: ${visible(e.error || "does not decode")}`;
      tr.appendChild(withCodec(payload, e));
      return tr;
    });
    if (rows.length === 0) rows.push(el("tr", {}, "")), rows[0].appendChild(el("td", { colspan: 4, class: "muted" }, "nothing pending"));
    document.querySelector("#pending-table tbody").replaceChildren(...rows);
    const last = Math.min(this.offset + this.limit, s.pending);
    $("page-info").textContent = s.pending ? `${fmt(this.offset + 1)}–${fmt(last)} of ${fmt(s.pending)}, in due order` : "";
    $("prev").disabled = this.offset === 0;
    $("next").disabled = last >= s.pending;
  },
};
