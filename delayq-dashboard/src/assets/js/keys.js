// Keyboard shortcuts for the common moves, ignored while typing in a field:
// / the page's search, o the overview, w the workers (of this queue on a
// queue page), t the colour theme, ? this list. Escape leaves a field.
const SHORTCUTS = [
  ["/", "search or filter on this page"],
  ["o", "the overview"],
  ["w", "the workers (of this queue, on a queue page)"],
  ["t", "switch between light and dark"],
  ["?", "show or hide this list"],
  ["Esc", "leave the field being typed in"],
];

const keys = {
  init() {
    document.addEventListener("keydown", (e) => this.press(e));
  },

  typing(target) {
    return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));
  },

  press(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (this.typing(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    const go = (href) => { location.href = href; };
    const action = {
      "/": () => { const field = $("filter") || $("search-q"); if (field) field.focus(); },
      o: () => go("/"),
      w: () => {
        const queue = new URLSearchParams(location.search).get("name");
        go(document.body.dataset.page === "queue" && queue !== null ? `/workers?queue=${encodeURIComponent(queue)}` : "/workers");
      },
      t: () => theme.toggle(),
      "?": () => this.help(),
      Escape: () => { const help = $("shortcuts"); if (help) help.hidden = true; },
    }[e.key];
    if (!action) return;
    e.preventDefault();
    action();
  },

  help() {
    let panel = $("shortcuts");
    if (!panel) {
      panel = el("div", { id: "shortcuts", class: "shortcuts", role: "dialog", "aria-label": "keyboard shortcuts" });
      panel.append(el("strong", {}, "Keyboard shortcuts"));
      const list = el("dl");
      for (const [key, what] of SHORTCUTS) list.append(el("dt", {}, key), el("dd", {}, what));
      panel.append(list);
      document.body.append(panel);
      panel.hidden = true;
    }
    panel.hidden = !panel.hidden;
  },
};
