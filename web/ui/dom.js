// Tiny DOM helpers. Everything is built with createElement and textContent: memory text comes
// from users and LLMs and is never parsed as HTML (no innerHTML anywhere in the UI).

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "open",
  "textContent", "type", "min", "max", "step", "name", "required", "multiple"]);

// h("button", {class: "x", on: {click}, "aria-label": "..."}, "text", child, [children])
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "on") {
      for (const [event, fn] of Object.entries(value)) el.addEventListener(event, fn);
    } else if (key === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "text") {
      el.textContent = String(value);
    } else if (PROPERTIES.has(key)) {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// An element whose text comes from the catalogue and follows language switches.
export function tx(tag, key, props = {}, t) {
  const el = h(tag, { ...props, "data-i18n": key });
  el.textContent = t(key);
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// ``el``'s children made ``nodes``, in order, moving none that is already in place: a node
// the user is typing in keeps its focus and caret (``replaceChildren`` took it out of the
// page and back, and the next keys went nowhere).
export function reconcile(el, nodes) {
  const wanted = new Set(nodes);
  for (const child of [...el.childNodes]) if (!wanted.has(child)) child.remove();
  let ref = el.firstChild;
  for (const node of nodes) {
    if (node === ref) ref = ref.nextSibling;
    else el.insertBefore(node, ref);
  }
}

let uid = 0;
export const nextId = (prefix) => `${prefix}-${++uid}`;

// Keyboard focus after a list item was removed (a memory forgotten, a character deleted):
// the first button of the item now at its place (or of the new last item), else
// ``fallback``. Left alone, focus fell to the page body: a keyboard user started over.
export function focusNear(list, index, fallback) {
  const items = [...list.children].filter((el) => el.querySelector("button"));
  const target = items[Math.min(index, items.length - 1)]?.querySelector("button");
  (target ?? fallback)?.focus();
}

const CONTROLS = "button, input, select, textarea, a[href]";

// Drawing a list again makes its rows anew (``render``): keyboard focus on a row's control fell
// to the page body whenever a change (this tab's or another's) redrew the list. The same
// control of the same row (by ``data-id``) gets it back; a row gone hands it to the row now at
// its place (``focusNear``). Rows kept as they are (one being edited) keep their focus.
export function keepingFocus(list, fallback, render) {
  const active = document.activeElement;
  const row = active && list.contains(active) ? active.closest("li") : null;
  if (!row || row.parentElement !== list) return render();
  const { id } = row.dataset;
  const which = [...row.querySelectorAll(CONTROLS)].indexOf(active);
  const at = [...list.children].indexOf(row);
  const out = render();
  if (document.activeElement && document.activeElement !== document.body) return out;
  const again = id && [...list.children].find((li) => li.dataset.id === id);
  const target = again?.querySelectorAll(CONTROLS)[which];
  if (target) target.focus();
  else focusNear(list, at, fallback);
  return out;
}

// A labelled form control: returns {row, input}. The label text follows language switches.
export function field(t, key, control, { hint } = {}) {
  control.id ||= nextId("f");
  const label = h("label", { for: control.id, "data-i18n": key });
  label.textContent = t(key);
  const row = h("div", { class: "field" }, label, control);
  if (hint) {
    const note = h("small", { id: `${control.id}-hint`, class: "hint", "data-i18n": hint });
    note.textContent = t(hint);
    control.setAttribute("aria-describedby", note.id);
    row.append(note);
  }
  return { row, input: control };
}

export function options(select, items, selected) {
  select.replaceChildren(...items.map(([value, label]) =>
    h("option", { value, selected: String(value) === String(selected) }, label)));
  return select;
}

export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(bytes)) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatNumber(value, digits = 3) {
  if (value === null || value === undefined) return "—";
  return Number(value).toFixed(digits);
}

// "3 days ago" in the page's language, from seconds since the epoch.
export function formatAge(seconds, lang) {
  if (!seconds) return "—";
  const diff = seconds - Date.now() / 1000;
  const abs = Math.abs(diff);
  const rtf = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  for (const [unit, size] of [["year", 31536000], ["month", 2592000], ["week", 604800],
    ["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (abs >= size) return rtf.format(Math.round(diff / size), unit);
  }
  return rtf.format(Math.round(diff), "second");
}

export function formatDate(seconds, lang) {
  return seconds ? new Date(seconds * 1000).toLocaleString(lang) : "—";
}

export function formatDuration(seconds, lang) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const s = Math.max(0, Math.round(seconds));
  const parts = [];
  if (s >= 3600) parts.push([Math.floor(s / 3600), "hour"]);
  if (s >= 60) parts.push([Math.floor((s % 3600) / 60), "minute"]);
  parts.push([s % 60, "second"]);
  return parts.map(([n, unit]) =>
    new Intl.NumberFormat(lang, { style: "unit", unit, unitDisplay: "short" }).format(n))
    .join(" ");
}
