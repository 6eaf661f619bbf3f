// Memories: the selected character's memories with kind, tier, importance, age and model
// stamp; filters; add, edit, forget; "paste a conversation" with an ingest preview first.
import { clear, field, focusNear, formatAge, formatDate, formatNumber, h, keepingFocus, options,
  reconcile, tx } from "./dom.js";
import { progressLine } from "./progress.js";

export const KINDS = ["preference", "pattern", "fact", "decision", "diary", "summary"];
// Does a "changed" event ({characters: [...]}, or none named: everything) touch this one?
export const touches = (event, character) => {
  const names = event?.characters ?? (event?.character ? [event.character] : null);
  return !names || names.includes(character);
};
export const tierOf = (memory) => (memory.meta?.tier === "hot" ? "hot" : "cold");

// "user: hi" lines (or a JSON array of {role, content}) -> [{role, content}].
export function parseConversation(text) {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (trimmed.startsWith("[")) {
    try {
      const data = JSON.parse(trimmed);
      if (Array.isArray(data)) {
        return data.filter((m) => m && typeof m.content === "string")
          .map((m) => ({ role: String(m.role ?? "user"), content: m.content }));
      }
    } catch { /* not JSON: read it as lines */ }
  }
  const ROLE = /^\s*(user|assistant|system|ユーザー|アシスタント|システム)\s*[:：]\s?(.*)$/i;
  const NAMES = { ユーザー: "user", アシスタント: "assistant", システム: "system" };
  const messages = [];
  for (const line of trimmed.split(/\r?\n/)) {
    const match = ROLE.exec(line);
    if (match) {
      messages.push({ role: NAMES[match[1]] ?? match[1].toLowerCase(), content: match[2] });
    } else if (messages.length) {
      messages.at(-1).content += `\n${line}`;
    } else {
      messages.push({ role: "user", content: line });
    }
  }
  return messages.map((m) => ({ ...m, content: m.content.trim() })).filter((m) => m.content);
}

// Rows per page: the list renders one page, whatever the character's size; the worker
// filters and orders (memories_page), so a change re-fetches one page, not every memory.
export const PAGE_SIZE = 50;

export function mountMemories(panel, ctx) {
  const t = (...args) => ctx.t(...args);
  let page = { items: [], offset: 0, matched: 0, total: 0 };
  let offset = 0;
  let loadedFor = null;
  let stale = false; // changed while the tab was hidden: fetched when it is shown
  let reloads = 0; // reload requests made; each answer knows whether a newer one was asked
  let textTimer = null;

  // Filters
  const kindFilter = h("select", { id: "filter-kind" });
  const tierFilter = h("select", { id: "filter-tier" });
  const textFilter = h("input", { type: "search", id: "filter-text", autocomplete: "off" });
  const summary = h("p", { class: "muted", id: "memory-count", "aria-live": "polite" });
  const firstPage = () => { offset = 0; reload(); };
  for (const input of [kindFilter, tierFilter]) input.addEventListener("change", firstPage);
  textFilter.addEventListener("input", () => {
    clearTimeout(textTimer);
    textTimer = setTimeout(firstPage, 150);
  });
  const filters = h("form", { class: "filters", role: "search", on: {
    submit: (event) => event.preventDefault() } },
  field(t, "memories.filterKind", kindFilter).row, field(t, "memories.filterTier", tierFilter).row,
  field(t, "memories.filterText", textFilter).row);

  // Add
  const addText = h("textarea", { rows: 3, required: true, id: "add-text" });
  const addKind = h("select", { id: "add-kind" });
  // required: a blank field was Number("") = 0, saved without a word
  const addImportance = h("input", { type: "number", min: 0, max: 1, step: 0.05, value: "0.5",
    id: "add-importance", required: true });
  const addKey = h("input", { type: "text", id: "add-key", autocomplete: "off" });
  const addButton = tx("button", "memories.add", { type: "submit" }, t);
  const addForm = h("form", { class: "stack", id: "add-memory" },
    field(t, "memories.text", addText).row,
    h("div", { class: "row" }, field(t, "memories.kind", addKind).row,
      field(t, "memories.importance", addImportance).row,
      field(t, "memories.key", addKey, { hint: "memories.keyHint" }).row),
    addButton);
  // The character the text in Add was typed for: when another tab deletes it meanwhile the
  // picker moves to another one, and the text was added there, only the heading changed.
  let typedFor = null;
  addText.addEventListener("input", () => {
    typedFor = addText.value.trim() ? typedFor ?? ctx.character : null;
  });
  addForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = addText.value.trim();
    if (!text || !ctx.character) return;
    const gone = typedFor && !ctx.characters.some((c) => c.id === typedFor && c.deleted_at == null);
    if (gone) {
      ctx.notify(t("memories.characterGone", { name: ctx.characterName(typedFor) }),
        { kind: "error" });
      typedFor = ctx.character; // kept: the next Add is for the character shown
      return;
    }
    const params = { character: ctx.character, text, kind: addKind.value,
      importance: Number(addImportance.value) };
    if (addKey.value.trim()) params.key = addKey.value.trim();
    const made = await ctx.run(addButton, () => ctx.call("remember", params));
    if (!made) return;
    // what was typed while it saved (the next memory) stays in the form
    if (addText.value.trim() === text) {
      addText.value = "";
      typedFor = null;
    }
    if (addKey.value.trim() === (params.key ?? "")) addKey.value = "";
    ctx.notify(t(made.meta?.supersedes?.length ? "memories.replaced" : "memories.added"));
    await reload();
    ctx.refreshCharacters().catch(() => {});
  });
  const addBox = h("details", { class: "box", id: "add-box" },
    tx("summary", "memories.addTitle", {}, t), addForm);

  // Paste a conversation -> ingest dry run -> save
  const paste = h("textarea", { rows: 6, id: "paste-text", spellcheck: false });
  const previewButton = tx("button", "memories.preview", { type: "submit" }, t);
  const saveButton = tx("button", "memories.saveIngest", { type: "button", hidden: true,
    id: "ingest-save" }, t);
  const cancelButton = tx("button", "cancel", { type: "button", hidden: true }, t);
  const preview = h("div", { id: "ingest-preview", "aria-live": "polite" });
  const ingestProgress = progressLine(ctx, "ingest", "ingest-progress");
  let pending = null;
  const pasteForm = h("form", { class: "stack", id: "paste-form" },
    field(t, "memories.pasteLabel", paste, { hint: "memories.pasteHint" }).row,
    h("div", { class: "actions" }, previewButton, saveButton, cancelButton),
    ingestProgress.element, preview);
  paste.addEventListener("input", () => resetPreview());
  pasteForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const messages = parseConversation(paste.value);
    if (!messages.length || !ctx.character) {
      clear(preview, h("p", { class: "error" }, t("memories.pasteEmpty")));
      return;
    }
    const report = await ctx.run(previewButton, () => ingestProgress.track(() =>
      ctx.call("ingest", { character: ctx.character, messages, dry_run: true })));
    if (!report) return;
    pending = { character: ctx.character, messages };
    showReport(report, true, messages);
    saveButton.hidden = false;
    cancelButton.hidden = false;
    saveButton.disabled = !report.items.some((i) => i.action !== "skipped");
  });
  saveButton.addEventListener("click", async () => {
    if (!pending) return;
    const sent = pending; // typing while it saves starts a new conversation: kept
    const report = await ctx.run([saveButton, previewButton], () => ingestProgress.track(() =>
      ctx.call("ingest", { ...sent, dry_run: false })));
    if (!report) return;
    showReport(report, false, sent.messages);
    if (pending === sent) {
      resetPreview();
      paste.value = "";
    }
    await reload();
    ctx.refreshCharacters().catch(() => {});
  });
  cancelButton.addEventListener("click", () => resetPreview(true));
  function resetPreview(clearPreview = false) {
    pending = null;
    saveButton.hidden = true;
    cancelButton.hidden = true;
    if (clearPreview) preview.replaceChildren();
  }
  function showReport(report, dryRun, messages) {
    const counts = ["stored", "merged", "superseded", "skipped"].map((action) =>
      t(`ingest.count.${action}`, { n: report.items.filter((i) => i.action === action).length }));
    const rows = report.items.map((item) => h("tr", { dataset: { action: item.action } },
      h("td", {}, h("span", { class: `chip action-${item.action}` },
        t(`ingest.action.${item.action}`) === `ingest.action.${item.action}`
          ? item.action : t(`ingest.action.${item.action}`))),
      h("td", { class: "text" }, item.text ?? item.memory?.text
        ?? (messages[item.source] ? h("q", { class: "muted" }, messages[item.source].content)
          : "")),
      h("td", {}, item.kind ?? ""),
      h("td", {}, item.key ?? ""),
      h("td", { class: "muted" }, item.reason ?? "")));
    clear(preview,
      h("p", { class: "strong" }, t(dryRun ? "ingest.previewTitle" : "ingest.savedTitle"), " ",
        counts.join(" · ")),
      report.degraded ? h("p", { class: "muted" }, t("ingest.degraded", { reason: report.degraded }))
        : null,
      rows.length ? h("table", { class: "grid" },
        h("caption", { class: "sr-only" }, t("ingest.caption")),
        h("thead", {}, h("tr", {}, ["ingest.col.action", "memories.text", "memories.kind",
          "memories.key", "ingest.col.reason"].map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", {}, rows)) : h("p", { class: "muted" }, t("ingest.nothing")));
  }
  const pasteBox = h("details", { class: "box", id: "paste-box" },
    tx("summary", "memories.pasteTitle", {}, t), pasteForm);

  const list = h("ul", { class: "memories", id: "memory-list" });
  const heading = h("h2", { tabindex: "-1" }); // focus lands here when the list empties
  const empty = h("p", { class: "muted", hidden: true });
  const newer = h("button", { type: "button", id: "memory-newer" });
  const older = h("button", { type: "button", id: "memory-older" });
  const where = h("span", { class: "muted", id: "memory-page" });
  const pager = h("nav", { class: "pager", id: "memory-pager", hidden: true },
    newer, where, older);
  newer.addEventListener("click", () => { offset = Math.max(0, offset - PAGE_SIZE); reload(); });
  older.addEventListener("click", () => { offset += PAGE_SIZE; reload(); });
  panel.append(heading, addBox, pasteBox, filters, summary, list, pager, empty);

  function renderOptions() {
    options(kindFilter, [["", t("all")], ...KINDS.map((k) => [k, t(`kind.${k}`)])],
      kindFilter.value);
    options(tierFilter, [["", t("all")], ["hot", t("tier.hot")], ["cold", t("tier.cold")]],
      tierFilter.value);
    options(addKind, KINDS.map((k) => [k, t(`kind.${k}`)]), addKind.value || "fact");
    // an edit left open keeps its choice, in the new language (it kept the old one)
    for (const kind of list.querySelectorAll("form.edit select.kind")) {
      options(kind, KINDS.map((k) => [k, t(`kind.${k}`)]), kind.value);
    }
  }

  function renderList() {
    heading.textContent = ctx.character
      ? t("memories.title", { name: ctx.characterLabel(ctx.character) }) : t("tab.memories");
    summary.textContent = t("memories.showing", { shown: page.matched, total: page.total });
    empty.hidden = Boolean(ctx.character);
    empty.textContent = t("memories.pickCharacter");
    pager.hidden = page.matched <= PAGE_SIZE;
    newer.textContent = t("memories.prev");
    older.textContent = t("memories.next");
    newer.disabled = page.offset === 0;
    older.disabled = page.offset + page.items.length >= page.matched;
    where.textContent = t("memories.page", { from: page.items.length ? page.offset + 1 : 0,
      to: page.offset + page.items.length, matched: page.matched, total: page.total });
    // a memory being edited keeps its form, focus and typed text when the page is fetched
    // again (another tab's change), in place; one no longer on the page (forgotten there)
    // stays first, so that Save says what became of it instead of the text vanishing. Only
    // the shown character's: another character's memory is never shown in this list.
    const editing = new Map([...list.querySelectorAll("li.memory")]
      .filter((li) => li.querySelector("form.edit") && li.dataset.character === loadedFor)
      .map((li) => [li.dataset.id, li]));
    const shown = new Set(page.items.map((memory) => memory.id));
    keepingFocus(list, heading, () => reconcile(list, [
      ...[...editing].filter(([id]) => !shown.has(id)).map(([, li]) => li),
      ...page.items.map((memory) => editing.get(memory.id) ?? item(memory))]));
  }

  function item(memory) {
    const tier = tierOf(memory);
    const stampMismatch = ctx.modelState?.stamp && memory.model
      && memory.model !== ctx.modelState.stamp;
    const edit = h("button", { type: "button" }, t("edit"));
    const forget = h("button", { type: "button", class: "danger" }, t("memories.forget"));
    const li = h("li", { class: "memory", dataset: { id: memory.id, kind: memory.kind, tier,
      character: memory.character_id } },
      h("p", { class: "text" }, memory.text),
      h("div", { class: "meta" },
        h("span", { class: "chip", title: t("memories.kind") }, t(`kind.${memory.kind}`)),
        h("span", { class: `chip tier-${tier}`, title: t("memories.tier") }, t(`tier.${tier}`)),
        h("span", { class: "chip" }, t("memories.importanceValue",
          { value: formatNumber(memory.importance, 2) })),
        memory.key ? h("span", { class: "chip key" }, t("memories.keyValue", { key: memory.key }))
          : null,
        h("time", { datetime: new Date(memory.created_at * 1000).toISOString(),
          title: formatDate(memory.created_at, ctx.lang) }, formatAge(memory.created_at, ctx.lang)),
        h("span", { class: ["stamp", stampMismatch && "warn"], title: t("memories.stamp") },
          memory.model || "—")),
      h("div", { class: "actions" }, edit, forget));
    edit.setAttribute("aria-label", t("memories.editOf", { text: memory.text.slice(0, 40) }));
    forget.setAttribute("aria-label", t("memories.forgetOf", { text: memory.text.slice(0, 40) }));
    edit.addEventListener("click", () => startEdit(li, memory));
    forget.addEventListener("click", async () => {
      const character = memory.character_id; // the row's, whatever the picker says now
      const at = [...list.children].indexOf(li);
      const done = await ctx.run(forget, () => ctx.call("forget", { character, id: memory.id }));
      if (done === undefined) return;
      await reload();
      if (!document.activeElement || document.activeElement === document.body) {
        focusNear(list, at, heading);
      }
      ctx.refreshCharacters().catch(() => {});
      ctx.notify(t("memories.forgotten"), { actionLabel: t("undo"), action: async () => {
        await ctx.run(null, () => ctx.call("restore", { character, id: memory.id }));
        await reload();
      } });
    });
    return li;
  }

  function startEdit(li, memory) {
    const text = h("textarea", { rows: 3, value: memory.text, required: true });
    const kind = options(h("select", { class: "kind" }), KINDS.map((k) => [k, t(`kind.${k}`)]),
      memory.kind);
    const importance = h("input", { type: "number", min: 0, max: 1, step: 0.05,
      value: String(memory.importance), required: true });
    const key = h("input", { type: "text", value: memory.key ?? "" });
    const save = tx("button", "save", { type: "submit" }, t);
    const cancel = tx("button", "cancel", { type: "button" }, t);
    const form = h("form", { class: "stack edit" }, field(t, "memories.text", text).row,
      h("div", { class: "row" }, field(t, "memories.kind", kind).row,
        field(t, "memories.importance", importance).row, field(t, "memories.key", key).row),
      h("div", { class: "actions" }, save, cancel));
    // done editing (saved or not): focus goes back to the row's Edit button, not the body
    const closeWith = (memory) => {
      const row = item(memory);
      li.replaceWith(row);
      row.querySelector(".actions button")?.focus();
    };
    cancel.addEventListener("click", () => closeWith(memory));
    // what the fields showed: a textarea turns "\r\n" into "\n", and the text may be
    // padded; comparing the stored text with what the form sends rewrote (and re-embedded,
    // with a history copy) a memory whose importance alone was changed
    const shownText = text.value;
    const shownKey = key.value;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const changes = {};
      if (text.value !== shownText) changes.text = text.value.trim();
      if (kind.value !== memory.kind) changes.kind = kind.value;
      if (Number(importance.value) !== memory.importance) changes.importance = Number(importance.value);
      if (key.value !== shownKey) changes.key = key.value.trim() || null;
      let shown = memory;
      if (Object.keys(changes).length) {
        const done = await ctx.run(save, () =>
          ctx.call("update", { character: memory.character_id, id: memory.id, ...changes }));
        if (done === undefined) return;
        shown = done;
        ctx.notify(t("memories.updated"));
      }
      // done editing: the row shows what was saved at once, whatever reload is in flight
      closeWith(shown);
      await reload();
    });
    li.replaceChildren(form);
    text.focus();
  }

  // One page of the selected character with the current filters (the page's rows only).
  async function reload() {
    const character = ctx.character;
    const asked = ++reloads; // only the newest reload renders: an older answer is stale
    stale = false;
    if (!character) {
      page = { items: [], offset: 0, matched: 0, total: 0 };
      loadedFor = null;
      renderList();
      return;
    }
    const params = { character, offset, limit: PAGE_SIZE, kind: kindFilter.value || null,
      tier: tierFilter.value || null, text: textFilter.value.trim() || null };
    list.setAttribute("aria-busy", "true");
    const loaded = await ctx.run(null, () => ctx.call("memories_page", params));
    if (asked !== reloads) return;
    list.removeAttribute("aria-busy");
    if (character !== ctx.character || !loaded) return;
    if (loaded.items.length === 0 && loaded.offset > 0) { // the last page emptied
      offset = Math.max(0, loaded.matched - PAGE_SIZE);
      return reload();
    }
    page = loaded;
    loadedFor = character;
    renderList();
    panel.dataset.loaded = `${character}:${page.total}`;
  }
  // A hidden tab does no work: a change only marks the list stale until it is shown.
  const reloadIfVisible = () => { if (panel.hidden) stale = true; else reload(); };

  renderOptions();
  ctx.on("character", () => { resetPreview(true); offset = 0; reloadIfVisible(); });
  ctx.on("lang", () => { renderOptions(); renderList(); });
  ctx.on("model", renderList);
  ctx.on("changed", (event) => { if (touches(event, ctx.character)) reloadIfVisible(); });
  return { shown: () => { if (stale || loadedFor !== ctx.character) reload(); }, reload };
}
