// A payload as the pages show it: a Java object or JSON as a tree (one line
// folded, every field once opened), a Kryo POJO read without its schema as
// its class and why its fields are not shown, anything else as text. All of
// it is put in as text (el, visible): class names and values are data.

// Trees the operator opened, by the key of their row: a page redraws its
// rows on every refresh, and an open tree stays open.
const openTrees = new Set();
// Characters of a folded tree's one line (its fields are all there once opened).
const FOLDED = 240;

// JSON text parsed without losing a digit: numbers keep their text (a
// BigDecimal's 12.50, a long past 2^53; JSON.parse would round them), and
// object members their order. null for what is not JSON, or nests deeper
// than 64 (the tree is then not drawn; the text is shown).
function parseExact(text) {
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const LITERAL = /true|false|null/y;
  let at = 0;
  const fail = () => { throw new SyntaxError(`not JSON at ${at}`); };
  const space = () => { while (at < text.length && " \t\n\r".includes(text[at])) at++; };
  const string = () => {
    const start = at++;
    while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    if (at >= text.length) fail();
    at++;
    return JSON.parse(text.slice(start, at));
  };
  const sticky = (pattern, kind) => {
    pattern.lastIndex = at;
    const found = pattern.exec(text);
    if (!found) fail();
    at += found[0].length;
    return { kind, text: found[0] };
  };
  const value = (depth) => {
    if (depth > 64) fail();
    space();
    const c = text[at];
    if (c === "{" || c === "[") {
      const object = c === "{";
      const close = object ? "}" : "]";
      const members = [];
      at++;
      space();
      if (text[at] === close) { at++; return { kind: object ? "object" : "array", members }; }
      for (;;) {
        space();
        let key = null;
        if (object) {
          if (text[at] !== '"') fail();
          key = string();
          space();
          if (text[at++] !== ":") fail();
        }
        members.push([key, value(depth + 1)]);
        space();
        const next = text[at++];
        if (next === close) return { kind: object ? "object" : "array", members };
        if (next !== ",") fail();
      }
    }
    if (c === '"') return { kind: "string", text: string() };
    if (c === "-" || (c >= "0" && c <= "9")) return sticky(NUMBER, "number");
    return sticky(LITERAL, "literal");
  };
  try {
    const root = value(0);
    space();
    return at === text.length ? root : null;
  } catch (_) {
    return null;
  }
}

// One JSON value as nested lists: member names, then values as written
// (strings quoted, as JSON has them, so "12" and 12 differ).
function jsonNode(node) {
  if (node.kind === "object" || node.kind === "array") {
    if (node.members.length === 0) return el("span", { class: "j-empty" }, node.kind === "object" ? "{}" : "[]");
    const list = el("ul", { class: `j-${node.kind}` });
    node.members.forEach(([key, member], i) => {
      const item = el("li");
      item.appendChild(el("span", { class: "j-key" }, node.kind === "object" ? visible(key) : String(i)));
      item.appendChild(jsonNode(member));
      list.appendChild(item);
    });
    return list;
  }
  const shown = node.kind === "string" ? visible(JSON.stringify(node.text)) : node.text;
  return el("span", { class: `j-${node.kind}` }, shown);
}

// The value of a payload cell (or list item) `node`, decoded as `v` says;
// `key` names its row, so an open tree stays open across refreshes.
function fillPayload(node, v, key) {
  node.classList.add("payload");
  if (!v.decoded) node.classList.add("hex");
  if (v.class) node.appendChild(el("span", { class: "class-tag", title: "Java class" }, visible(v.class)));
  if (v.unread) {
    // Kryo writes a POJO's field values without names or types: without
    // the schema nothing honest can be shown of them.
    node.appendChild(el("span", { class: "unread" }, "fields need its schema (--kryo-schema)"));
    node.appendChild(el("span", { class: "hex-bytes" }, visible(v.text)));
    node.title = visible(v.unread);
    return withCodec(node, v);
  }
  const tree = v.decoded && v.json ? parseExact(v.text) : null;
  if (tree && tree.members !== undefined) {
    const details = el("details", { class: "tree" });
    // Folded, the JSON on one line; opened, how many fields it has.
    const summary = el("summary");
    const line = v.text.length > FOLDED ? `${v.text.slice(0, FOLDED)}…` : v.text;
    summary.appendChild(el("span", { class: "folded" }, visible(line)));
    const count = tree.members.length;
    const opened = tree.kind === "object" ? `${count} field${count === 1 ? "" : "s"}` : `${count} element${count === 1 ? "" : "s"}`;
    summary.appendChild(el("span", { class: "opened" }, opened));
    details.appendChild(summary);
    details.appendChild(jsonNode(tree));
    details.open = openTrees.has(key);
    details.addEventListener("toggle", () => (details.open ? openTrees.add(key) : openTrees.delete(key)));
    node.appendChild(details);
  } else {
    node.appendChild(document.createTextNode(visible(v.text)));
  }
  if (!v.decoded) node.title = `shown as hex: ${visible(v.error || "does not decode")}`;
  return withCodec(node, v);
}

// A table cell with a payload.
const payloadCell = (v, key) => fillPayload(el("td"), v, key);

// What a value was offered with beside its bytes (delayq only: a Java
// client never sees such a value), as one muted line under it: its TTL,
// "expires in 4m" (when, in the title), then its headers,
// `source=checkout · tenant=acme`, cut at the line's end with every header
// in the title. null when it has neither. Headers are the offerer's text:
// put in as text (el, visible, setAttribute), never as markup.
function offeredWith(v, now) {
  const parts = [];
  if (v.expires_at_ms !== null && v.expires_at_ms !== undefined) {
    const left = v.expires_at_ms - now;
    parts.push(el("span", {
      class: `expires${left < 0 ? " past" : ""}`,
      title: `TTL: ${left < 0 ? "expired" : "expires"} ${localTime(v.expires_at_ms)}; a consumer that takes it later does not get it`,
    }, left < 0 ? `expired ${relative(left)}` : `expires ${relative(left)}`));
  }
  const headers = Object.entries(v.headers || {});
  if (headers.length) {
    const all = headers.map(([key, value]) => `${visible(key)}=${visible(value)}`);
    const line = el("span", {
      class: "headers",
      title: `${headers.length} header${headers.length === 1 ? "" : "s"}:\n${all.join("\n")}`,
    });
    // The separators are drawn apart from the text (a value may hold " · " or "=").
    headers.forEach(([key, value], i) => {
      if (i) line.appendChild(el("span", { class: "sep" }, " · "));
      line.appendChild(el("span", { class: "h-key" }, visible(key)));
      line.appendChild(el("span", { class: "sep" }, "="));
      line.appendChild(el("span", { class: "h-value" }, visible(value)));
    });
    parts.push(line);
  }
  if (!parts.length) return null;
  const node = el("div", { class: "offered-with" });
  parts.forEach((part, i) => {
    if (i) node.appendChild(el("span", { class: "sep" }, " · "));
    node.appendChild(part);
  });
  return node;
}

// `node` (a payload cell or list item) with offeredWith's line under its value.
function withOffered(node, v, now) {
  const line = offeredWith(v, now);
  if (line) node.appendChild(line);
  return node;
}
