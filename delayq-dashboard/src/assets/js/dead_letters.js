// The queue page's dead letters: the oldest, with their reasons, and the
// actions that requeue or delete them.
const deadLettersSection = {
  total: 0,

  init(ctx) {
    if (READ_ONLY) return;
    $("dead-actions").hidden = false;
    $("requeue-dead").addEventListener("click", ctx.act($("requeue-dead"), "requeue-dead-letters", () => ({})));
    const deleteDead = ctx.act($("delete-dead"), "delete-dead-letters", () => ({}));
    $("delete-dead").addEventListener("click", () => {
      const button = $("delete-dead");
      if (button.dataset.armed === "1") {
        button.dataset.armed = "";
        button.textContent = "Delete dead letters";
        deleteDead();
      } else {
        button.dataset.armed = "1";
        button.textContent = `Really delete ${fmt(this.total)}? Press again`;
      }
    });
  },

  query() {
    return {};
  },

  render(data) {
    this.total = data.status.dead_letters;
    const dead = data.dead_letters.items.map((v) => {
      const tr = el("tr");
      tr.appendChild(withCodec(el("td", { class: `payload${v.decoded ? "" : " hex"}` }, visible(v.text)), v));
      tr.appendChild(el("td", { class: "reason muted" }, v.reason ? visible(v.reason) : "not recorded"));
      return tr;
    });
    if (dead.length === 0) dead.push(el("tr")), dead[0].appendChild(el("td", { colspan: 2, class: "muted" }, "none"));
    if (data.dead_letters.total > data.dead_letters.items.length) {
      const more = el("tr");
      more.appendChild(el("td", { colspan: 2, class: "muted" }, `… ${fmt(data.dead_letters.total - data.dead_letters.items.length)} more`));
      dead.push(more);
    }
    document.querySelector("#dead-table tbody").replaceChildren(...dead);
    $("delete-dead").disabled = this.total === 0;
    $("requeue-dead").disabled = this.total === 0;
  },
};
