// Characters: list with counts, create, rename, delete (to trash) and restore.
import { clear, field, focusNear, h, keepingFocus, reconcile, tx } from "./dom.js";

export function mountCharacters(panel, ctx) {
  const t = (...args) => ctx.t(...args);
  const name = h("input", { type: "text", required: true, maxlength: 200, autocomplete: "off" });
  const create = tx("button", "characters.create", { type: "submit" }, t);
  const form = h("form", { class: "inline-form", id: "create-character" },
    field(t, "characters.name", name).row, create);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = name.value.trim();
    if (!value) return;
    const made = await ctx.run(create, () => ctx.call("create_character", { name: value }));
    if (!made) return;
    name.value = "";
    ctx.selectCharacter(made.id);
    await ctx.refreshCharacters();
    ctx.notify(t("characters.created", { name: made.name }));
  });

  const list = h("ul", { class: "cards", id: "character-list" });
  const trashedHeading = tx("h3", "characters.trashed", {}, t);
  const trashed = h("ul", { class: "cards", id: "trashed-characters" });
  const trashedBox = h("section", { hidden: true }, trashedHeading, trashed);
  panel.append(tx("h2", "tab.characters", {}, t), form, list, trashedBox);

  function row(character) {
    const title = h("button", { type: "button", class: "name link", on: {
      click: () => {
        ctx.selectCharacter(character.id);
        ctx.showTab("memories", { focus: true });
      },
    } }, ctx.characterLabel(character.id));
    const counts = h("span", { class: "muted" }, t("characters.count", { count: character.count }));
    const flags = [];
    if (character.id === ctx.character) flags.push(h("span", { class: "chip" }, t("characters.current")));
    if (character.mismatch) flags.push(h("span", { class: "chip warn" }, t("characters.mismatch")));
    const rename = h("button", { type: "button", "aria-label": t("characters.renameOf", { name: character.name }) },
      t("characters.rename"));
    const remove = h("button", { type: "button", class: "danger",
      "aria-label": t("characters.deleteOf", { name: character.name }) }, t("characters.delete"));
    const item = h("li", { class: "card", dataset: { id: character.id } },
      h("div", { class: "card-main" }, title, counts, ...flags),
      h("div", { class: "actions" }, rename, remove));
    rename.addEventListener("click", () => startRename(item, character));
    remove.addEventListener("click", async () => {
      const at = [...list.children].indexOf(item);
      const ok = await ctx.run(remove, () => ctx.call("delete_character", { character: character.id }));
      if (ok === undefined) return;
      await ctx.refreshCharacters();
      focusNear(list, at, name);
      ctx.notify(t("characters.deleted", { name: character.name }), {
        actionLabel: t("undo"),
        action: () => restore(character),
      });
    });
    return item;
  }

  function startRename(item, character) {
    const input = h("input", { type: "text", value: character.name, required: true });
    const save = tx("button", "save", { type: "submit" }, t);
    const cancel = tx("button", "cancel", { type: "button" }, t);
    const edit = h("form", { class: "inline-form rename" },
      field(t, "characters.newName", input).row, save, cancel);
    // closed (saved or not), focus goes back to the card's Rename button, not the body
    const close = () => {
      edit.remove();
      render();
      cardButton(character.id, 1)?.focus();
    };
    cancel.addEventListener("click", close);
    edit.addEventListener("submit", async (event) => {
      event.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      const done = await ctx.run(save, () =>
        ctx.call("rename_character", { character: character.id, name: value }));
      if (done === undefined) return;
      edit.remove();
      await ctx.refreshCharacters();
      cardButton(character.id, 1)?.focus();
    });
    item.replaceChildren(edit);
    input.focus();
    input.select();
  }

  // The n-th button of a character's card in the list (0: its name, 1: Rename).
  function cardButton(id, n) {
    const card = [...list.querySelectorAll("li.card")].find((li) => li.dataset.id === id);
    return card?.querySelectorAll("button")[n] ?? null;
  }

  async function restore(character) {
    const done = await ctx.run(null, () =>
      ctx.call("restore_character", { character: character.id }));
    if (done === undefined) return;
    await ctx.refreshCharacters();
    if (!document.activeElement || document.activeElement === document.body) {
      cardButton(character.id, 0)?.focus(); // restored from the trash list: its card now
    }
    ctx.notify(t("characters.restored", { name: character.name }));
  }

  function render() {
    const live = ctx.characters.filter((c) => c.deleted_at == null);
    const gone = ctx.characters.filter((c) => c.deleted_at != null);
    // a rename being typed keeps its form, focus and text when the list is drawn again (a
    // change in another tab, a language switch)
    const renaming = new Map([...list.querySelectorAll("li.card")]
      .filter((li) => li.querySelector("form.rename")).map((li) => [li.dataset.id, li]));
    keepingFocus(list, name, () => reconcile(list, live.length
      ? live.map((c) => renaming.get(c.id) ?? row(c))
      : [h("li", { class: "empty" }, t("characters.none"))]));
    trashedBox.hidden = gone.length === 0;
    clear(trashed, gone.map((character) => {
      const button = h("button", { type: "button",
        "aria-label": t("characters.restoreOf", { name: character.name }) }, t("restore"));
      button.addEventListener("click", () => restore(character));
      return h("li", { class: "card trashed", dataset: { id: character.id } },
        h("div", { class: "card-main" }, h("span", { class: "name" },
          ctx.characterLabel(character.id)),
          h("span", { class: "muted" }, t("characters.count", { count: character.count }))),
        h("div", { class: "actions" }, button));
    }));
  }

  ctx.on("characters", render);
  ctx.on("character", render);
  ctx.on("lang", render);
  return { shown: () => ctx.refreshCharacters().catch(() => {}) };
}
