// Maintenance box "Apps allowed to use Omoide": the origins whose pages may use the JS client
// (web/client.js), each with the characters it may see. Nothing is allowed by default; a
// removal takes effect at the app's next call. Origins are shown as text only.
import { CATALOGUES } from "../i18n.js";
import { clear, field, h, tx } from "./dom.js";

Object.assign(CATALOGUES.en, {
  "clients.title": "Apps allowed to use Omoide",
  "clients.intro": "Chat pages on other origins can use these memories through Omoide's JS " +
    "client, only if you allow them here, and only for the characters you tick.",
  "clients.origin": "App origin (e.g. http://127.0.0.1:8743)",
  "clients.all": "Every character, including future ones",
  "clients.characters": "Characters it may see",
  "clients.allow": "Allow",
  "clients.revoke": "Remove",
  "clients.none": "No app is allowed.",
  "clients.allCharacters": "every character",
  "clients.allowed": "{origin} may now use: {characters}.",
});
Object.assign(CATALOGUES.ja, {
  "clients.title": "Omoide を使えるアプリ",
  "clients.intro": "別オリジンのチャットページは、ここで許可した場合に限り、選んだキャラクターの" +
    "記憶だけを JS クライアントで使えます。",
  "clients.origin": "アプリのオリジン（例: http://127.0.0.1:8743）",
  "clients.all": "すべてのキャラクター（今後のものも含む）",
  "clients.characters": "見せるキャラクター",
  "clients.allow": "許可",
  "clients.revoke": "削除",
  "clients.none": "許可したアプリはありません。",
  "clients.allCharacters": "すべてのキャラクター",
  "clients.allowed": "{origin} が使えるもの：{characters}",
});

export function mountClients(ctx) {
  const t = (...args) => ctx.t(...args);
  const origin = h("input", { type: "url", id: "client-origin", autocomplete: "off",
    placeholder: "http://127.0.0.1:8743" });
  const all = h("input", { type: "checkbox", id: "client-all" });
  const picks = h("div", { class: "checks", id: "client-characters" });
  const allow = tx("button", "clients.allow", { type: "submit", id: "client-allow" }, t);
  const list = h("ul", { id: "clients-list", class: "list" });
  const form = h("form", { class: "stack", id: "clients-form" },
    field(t, "clients.origin", origin).row,
    h("div", { class: "field check" }, all,
      h("label", { for: all.id, "data-i18n": "clients.all" }, t("clients.all"))),
    h("fieldset", {}, tx("legend", "clients.characters", {}, t), picks), allow);
  const box = h("section", { class: "box", id: "clients-box", "aria-labelledby": "clients-title" },
    tx("h3", "clients.title", { id: "clients-title" }, t),
    tx("p", "clients.intro", { class: "muted" }, t), list, form);
  let grants = [];

  // a name two characters share is shown with the id: a grant is of one of them
  const nameOf = (id) => ctx.characterLabel(id);
  const describe = (grant) => grant.characters === "*" ? t("clients.allCharacters")
    : grant.characters.map(nameOf).join(", ");

  function renderPicks() {
    const ticked = new Set([...picks.querySelectorAll("input:checked")].map((i) => i.value));
    clear(picks, ctx.characters.filter((c) => c.deleted_at == null).map((c) => {
      const input = h("input", { type: "checkbox", value: c.id, id: `client-pick-${c.id}`,
        checked: ticked.has(c.id), disabled: all.checked });
      return h("label", { class: "check", for: input.id }, input, " ", nameOf(c.id));
    }));
  }
  function renderList() {
    if (!grants.length) {
      clear(list, tx("li", "clients.none", { class: "muted" }, t));
      return;
    }
    clear(list, grants.map((grant) => h("li", { dataset: { origin: grant.origin } },
      h("code", {}, grant.origin), " — ", h("span", { class: "who" }, describe(grant)), " ",
      h("button", { type: "button", class: "revoke", on: { click: () => revoke(grant.origin) } },
        t("clients.revoke")))));
  }
  async function load() {
    grants = (await ctx.run(null, () => ctx.call("client_origins", {}))) ?? grants;
    renderList();
  }
  async function revoke(value) {
    if (await ctx.run(null, () => ctx.call("revoke_origin", { origin: value }))) await load();
  }
  all.addEventListener("change", renderPicks);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const characters = all.checked ? "*"
      : [...picks.querySelectorAll("input:checked")].map((i) => i.value);
    const grant = await ctx.run(allow, () => ctx.call("allow_origin",
      { origin: origin.value.trim().replace(/\/+$/, ""), characters }));
    if (!grant) return;
    ctx.notify(t("clients.allowed", { origin: grant.origin, characters: describe(grant) }));
    origin.value = "";
    await load();
  });
  ctx.on("characters", () => { renderPicks(); renderList(); });
  ctx.on("lang", renderList);
  renderPicks();
  load();
  return box;
}
