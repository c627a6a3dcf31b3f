document.addEventListener("DOMContentLoaded", () => {
  theme.init();
  keys.init();
  if (READ_ONLY) document.querySelector("header .where").appendChild(el("span", { class: "badge", id: "read-only" }, "read-only"));
  if (document.body.dataset.page === "overview") overviewPage();
  else if (document.body.dataset.page === "workers") workersPage();
  else if (document.body.dataset.page === "job") jobPage();
  else if (document.body.dataset.page === "batch") batchPage();
  else if (document.body.dataset.page === "search") searchPage();
  else if (document.body.dataset.page === "partitioned") partitionedPage();
  else queuePage();
});
