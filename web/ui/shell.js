// The app around the screens: shared state, tabs with roving focus, language switch, the
// character picker, the model-mismatch banner and the notice line.
import { CATALOGUES, translatePage, translator } from "../i18n.js";
import { h, options } from "./dom.js";

export const TABS = ["characters", "memories", "recall", "maintenance"];

export function createContext({ call, lang }) {
  const bus = new EventTarget();
  const ctx = {
    call,
    lang,
    t: translator(lang),
    character: localStorage.getItem("omoide.character") || null,
    characters: [],
    modelState: null,
    on(name, fn) {
      bus.addEventListener(name, (event) => fn(event.detail));
    },
    emit(name, detail) {
      bus.dispatchEvent(new CustomEvent(name, { detail }));
    },
    // Human text for an engine error: the code, then the engine's own message.
    errorText(err) {
      const code = err?.name && err.name !== "Error" ? err.name : null;
      const known = code && ctx.t(`error.${code}`) !== `error.${code}` ? ctx.t(`error.${code}`)
        : null;
      return [known ?? code, err?.message].filter(Boolean).join(": ");
    },
    notify(message, { kind = "info", actionLabel, action } = {}) {
      showNotice(ctx, message, kind, actionLabel, action);
    },
    // Run an engine call for a control: busy while it runs, errors shown instead of thrown.
    async run(control, fn, { quiet = false } = {}) {
      const controls = [control].flat().filter(Boolean);
      for (const c of controls) {
        c.disabled = true;
        c.setAttribute("aria-busy", "true");
      }
      try {
        return await fn();
      } catch (err) {
        if (!quiet) ctx.notify(ctx.errorText(err), { kind: "error" });
        console.warn(err);
        return undefined;
      } finally {
        for (const c of controls) {
          c.disabled = false;
          c.removeAttribute("aria-busy");
        }
      }
    },
    selectCharacter(id) {
      ctx.character = id || null;
      if (id) localStorage.setItem("omoide.character", id);
      else localStorage.removeItem("omoide.character");
      const picker = document.getElementById("current-character");
      if (picker.value !== (id ?? "")) picker.value = id ?? "";
      ctx.emit("character", id);
    },
    characterName(id = ctx.character) {
      return ctx.characters.find((c) => c.id === id)?.name ?? id ?? "";
    },
    // The name as lists and pickers show it: with the id when another character has the
    // same name (two "Yui" were one line each, told apart by nothing).
    characterLabel(id) {
      const name = ctx.characterName(id);
      const shared = ctx.characters.filter((c) => c.name === name).length > 1;
      return shared ? `${name} (${id})` : name;
    },
    async refreshCharacters() {
      ctx.characters = await ctx.call("characters", { include_deleted: true });
      const live = ctx.characters.filter((c) => c.deleted_at == null);
      if (ctx.character && !live.some((c) => c.id === ctx.character)) {
        ctx.selectCharacter(live[0]?.id ?? null);
      } else if (!ctx.character && live.length) {
        ctx.selectCharacter(live[0].id);
      }
      renderPicker(ctx);
      ctx.emit("characters", ctx.characters);
      return ctx.characters;
    },
    async refreshModelState() {
      ctx.modelState = await ctx.call("model_state", {});
      renderBanner(ctx);
      ctx.emit("model", ctx.modelState);
      return ctx.modelState;
    },
    showTab(name, { focus = false } = {}) {
      selectTab(name, focus);
    },
  };
  return ctx;
}

function renderPicker(ctx) {
  const picker = document.getElementById("current-character");
  const live = ctx.characters.filter((c) => c.deleted_at == null);
  const items = live.map((c) => [c.id, `${ctx.characterLabel(c.id)} (${c.count})`]);
  if (!items.length) items.push(["", ctx.t("app.noCharacters")]);
  options(picker, items, ctx.character ?? "");
  picker.disabled = !live.length;
}

function renderBanner(ctx) {
  const banner = document.getElementById("mismatch-banner");
  const state = ctx.modelState;
  const mismatched = state?.mismatched ?? [];
  banner.hidden = mismatched.length === 0;
  if (!mismatched.length) return;
  const names = mismatched.map((id) => ctx.characterName(id)).join(", ");
  const selected = state.selected ? `${state.selected.model} (${state.selected.dtype})` : "";
  const go = h("button", { type: "button", class: "link", on: {
    click: () => {
      ctx.showTab("maintenance", { focus: true });
      document.getElementById("revectorize-start")?.focus();
    },
  } }, ctx.t("banner.action"));
  banner.replaceChildren(
    h("strong", {}, ctx.t("banner.title")), " ",
    h("span", {}, ctx.t("banner.body", { names, model: selected })), " ", go);
}

let noticeTimer = null;
function showNotice(ctx, message, kind, actionLabel, action) {
  const box = document.getElementById("notice");
  box.dataset.kind = kind;
  box.setAttribute("role", kind === "error" ? "alert" : "status");
  box.querySelector(".text").textContent = message;
  const button = box.querySelector(".action");
  button.hidden = !action;
  button.textContent = actionLabel ?? "";
  button.onclick = action ? () => { box.hidden = true; action(); } : null;
  box.hidden = false;
  clearTimeout(noticeTimer);
  // A notice that offers an action stays until used or closed; others go by themselves
  // (errors stay longer, and remain in the console).
  if (!action) {
    noticeTimer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 15000 : 8000);
  }
}

// WAI-ARIA tabs: one tab in the tab order, arrows/Home/End move between tabs.
let tabChange = () => {};
function selectTab(name, focus) {
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const on = tab.dataset.tab === name;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    if (on && focus) tab.focus();
    document.getElementById(tab.getAttribute("aria-controls")).hidden = !on;
  }
  document.getElementById("app").dataset.tab = name;
  tabChange(name);
}

export function setupShell(ctx, screens) {
  const tabs = [...document.querySelectorAll("[role=tab]")];
  tabChange = (name) => screens[name]?.shown?.();
  for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab.dataset.tab, true));
    tab.addEventListener("keydown", (event) => {
      const index = tabs.indexOf(tab);
      const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[
        event.key];
      if (next === undefined) return;
      event.preventDefault();
      selectTab(tabs[(next + tabs.length) % tabs.length].dataset.tab, true);
    });
  }
  document.getElementById("current-character").addEventListener("change", (event) => {
    ctx.selectCharacter(event.target.value);
  });
  document.querySelector("#notice .close").addEventListener("click", () => {
    document.getElementById("notice").hidden = true;
  });
  const lang = document.getElementById("lang");
  options(lang, Object.keys(CATALOGUES).map((code) => [code, CATALOGUES[code]["lang.name"]]),
    ctx.lang);
  lang.addEventListener("change", () => setLanguage(ctx, lang.value));
  const initial = TABS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "characters";
  selectTab(initial, false);
  document.getElementById("app").hidden = false;
}

export function setLanguage(ctx, lang) {
  localStorage.setItem("omoide.lang", lang);
  ctx.lang = lang;
  ctx.t = translator(lang);
  document.documentElement.lang = lang;
  document.getElementById("lang").value = lang;
  translatePage(document, ctx.t);
  renderPicker(ctx);
  renderBanner(ctx);
  ctx.emit("lang", lang);
}
