// The colour theme: the system's (prefers-color-scheme, followed as it
// changes) unless the header's toggle chose one, kept in this browser's
// localStorage. Set on <html> as data-theme; dashboard.css holds the colours.
const theme = {
  KEY: "delayq-theme",
  media: window.matchMedia("(prefers-color-scheme: dark)"),

  chosen() {
    try { return localStorage.getItem(this.KEY); } catch (_) { return null; }
  },

  current() {
    const chosen = this.chosen();
    return chosen === "dark" || chosen === "light" ? chosen : this.media.matches ? "dark" : "light";
  },

  apply() {
    const now = this.current();
    document.documentElement.dataset.theme = now;
    const button = $("theme");
    if (button) {
      button.textContent = now === "dark" ? "☀ light" : "☾ dark";
      button.title = `colours: ${now}${this.chosen() ? " (chosen here)" : " (the system's)"}; press to switch (t)`;
    }
  },

  toggle() {
    try { localStorage.setItem(this.KEY, this.current() === "dark" ? "light" : "dark"); } catch (_) { /* private mode: this page only */ }
    this.apply();
  },

  // The header's button; the theme itself is set as this script loads.
  init() {
    const button = el("button", { id: "theme", type: "button", class: "theme" });
    button.addEventListener("click", () => this.toggle());
    document.querySelector("header").appendChild(button);
    this.apply();
  },
};
theme.apply();
theme.media.addEventListener("change", () => theme.apply());
