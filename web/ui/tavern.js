// Maintenance box "SillyTavern / RisuAI": import character cards (JSON or PNG), chats (.jsonl,
// RisuAI JSON) and lorebooks (World Info JSON); export a character's memories as World Info.
// The engine (omoide.interop, as the CLI) checks the whole file before writing anything.
import { CATALOGUES } from "../i18n.js";
import { clear, field, h, options, tx } from "./dom.js";
import { progressLine } from "./progress.js";

Object.assign(CATALOGUES.en, {
  "tavern.title": "SillyTavern / RisuAI",
  "tavern.file": "Character card (JSON or PNG), chat (.jsonl) or lorebook (World Info JSON)",
  "tavern.character": "Into",
  "tavern.fromFile": "the character the file names (new if needed)",
  "tavern.import": "Import",
  "tavern.export": "Export this character as World Info",
  "tavern.noFile": "Choose a file first.",
  "tavern.imported": "{format} → {character}: {facts} facts stored ({skipped} already " +
    "held); {messages} chat messages, {stored} memories stored, {merged} merged.",
  "tavern.exported": "World Info with {n} entries saved.",
  "tavern.disabled": "{n} lorebook entries switched off in the file were left out ({entries}).",
  "tavern.disabledTrashed": "{n} memories an earlier import made of them went to the trash " +
    "(restorable there).",
  "tavern.enabledAgain": "{n} lorebook entries switched on again: their memories' disabled " +
    "mark cleared.",
});
Object.assign(CATALOGUES.ja, {
  "tavern.title": "SillyTavern / RisuAI",
  "tavern.file": "キャラクターカード（JSON か PNG）、チャット（.jsonl）、ロアブック（World Info JSON）",
  "tavern.character": "取り込み先",
  "tavern.fromFile": "ファイルが示すキャラクター（なければ作成）",
  "tavern.import": "インポート",
  "tavern.export": "このキャラクターを World Info でエクスポート",
  "tavern.noFile": "ファイルを選んでください。",
  "tavern.imported": "{format} → {character}：事実 {facts} 件を保存（既存 {skipped} 件）；" +
    "チャット {messages} 件から記憶 {stored} 件を保存、{merged} 件を統合。",
  "tavern.exported": "{n} 項目の World Info を保存しました。",
  "tavern.disabled": "ファイルで無効になっているロアブック項目 {n} 件は取り込みませんでした（{entries}）。",
  "tavern.disabledTrashed": "以前の取り込みでそれらから作られた記憶 {n} 件をゴミ箱に移しました" +
    "（ゴミ箱から復元できます）。",
  "tavern.enabledAgain": "再び有効になったロアブック項目 {n} 件：記憶の無効の印を外しました。",
});

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

function download(name, data) {
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function mountTavern(ctx) {
  const t = (...args) => ctx.t(...args);
  const file = h("input", { type: "file", id: "tavern-file",
    accept: ".json,.jsonl,.png,application/json,image/png" });
  const target = h("select", { id: "tavern-character" });
  const importButton = tx("button", "tavern.import", { type: "button", id: "tavern-import" }, t);
  const exportButton = tx("button", "tavern.export", { type: "button", id: "tavern-export" }, t);
  const out = h("div", { id: "tavern-report", "aria-live": "polite" });
  const tavernProgress = progressLine(ctx, "tavern_import", "tavern-progress");
  const box = h("section", { class: "box", id: "tavern-box", "aria-labelledby": "tavern-title" },
    tx("h3", "tavern.title", { id: "tavern-title" }, t),
    h("div", { class: "row" }, field(t, "tavern.file", file).row,
      field(t, "tavern.character", target).row),
    h("div", { class: "actions" }, importButton, exportButton), tavernProgress.element, out);

  function renderTargets() {
    options(target, [["", t("tavern.fromFile")],
      ...ctx.characters.filter((c) => c.deleted_at == null)
      .map((c) => [c.id, ctx.characterLabel(c.id)])], target.value);
  }

  importButton.addEventListener("click", async () => {
    const chosen = file.files?.[0];
    if (!chosen) {
      clear(out, h("p", { class: "error" }, t("tavern.noFile")));
      return;
    }
    const data = base64(await chosen.arrayBuffer());
    let failure = null;
    const report = await ctx.run(importButton, () => tavernProgress.track(() =>
      ctx.call("tavern_import", {
        data_base64: data, filename: chosen.name, character: target.value || null,
        // "Aqua" and "AQUA!" make one id: a card never lands in another character's
        names: Object.fromEntries(ctx.characters.map((c) => [c.id, c.name])),
      }).catch((err) => { failure = err; return null; })));
    if (!report) {
      clear(out, h("p", { class: "error" }, ctx.errorText(failure)));
      out.dataset.state = "failed";
      return;
    }
    await ctx.refreshCharacters();
    // A character the import created is named after its id; the card knows the real name.
    const row = ctx.characters.find((c) => c.id === report.character);
    if (report.name && row && row.name === row.id && row.name !== report.name) {
      await ctx.run(null, () => ctx.call("rename_character",
        { character: report.character, name: report.name }));
      await ctx.refreshCharacters();
    }
    clear(out, h("p", { class: "strong" }, t("tavern.imported", {
      format: report.format, character: ctx.characterName?.(report.character) ?? report.character,
      facts: report.facts, skipped: report.facts_skipped, messages: report.messages,
      stored: report.stored, merged: report.merged })));
    if (report.disabled) {
      out.append(h("p", {}, t("tavern.disabled", {
        n: report.disabled, entries: report.disabled_entries.slice(0, 5).join(", ") })));
    }
    if (report.disabled_trashed?.length) {
      out.append(h("p", {}, t("tavern.disabledTrashed", { n: report.disabled_trashed.length })));
    }
    if (report.enabled_again?.length) {
      out.append(h("p", {}, t("tavern.enabledAgain", { n: report.enabled_again.length })));
    }
    out.dataset.state = "done";
    ctx.emit("changed", { characters: [report.character] });
  });

  exportButton.addEventListener("click", async () => {
    if (!ctx.character) return;
    const name = ctx.characterName?.(ctx.character) ?? ctx.character;
    const data = await ctx.run(exportButton, () => ctx.call("tavern_export",
      { character: ctx.character, name }));
    if (!data) return;
    download(`${name}-worldinfo.json`, data);
    ctx.notify(t("tavern.exported", { n: Object.keys(data.entries).length }));
  });

  ctx.on("characters", renderTargets);
  ctx.on("lang", renderTargets);
  renderTargets();
  return box;
}
