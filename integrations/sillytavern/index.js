// Omoide memory for SillyTavern: long-term memory kept by Omoide (in its own origin, on this
// device), used through Omoide's JS client.
// - every message the user sends is ingested (extraction + dedup in Omoide);
// - before each generation, context(character, last user message, {tokenBudget}) is injected
//   as an extension prompt.
// SillyTavern API used (and nothing else): SillyTavern.getContext() -> {eventSource,
// event_types.MESSAGE_SENT, chat, characterId, characters, setExtensionPrompt,
// extensionSettings, saveSettingsDebounced}, the manifest's generate_interceptor, and the
// #extensions_settings container for the settings panel.
// The ST character is the Omoide character whose id is its name's slug (what Omoide's import
// of the character card creates); allow SillyTavern's origin for it on Omoide's maintenance tab.

const KEY = "omoide";
const IN_PROMPT = 0; // extension_prompt_types.IN_PROMPT
const DEFAULTS = { url: "http://127.0.0.1:8742/", tokenBudget: 600, enabled: true };

const st = () => globalThis.SillyTavern.getContext();
let client = null; // a promise of the Omoide client
let lastError = null;

function settings() {
  const all = st().extensionSettings;
  all[KEY] = { ...DEFAULTS, ...(all[KEY] ?? {}) };
  return all[KEY];
}

// Omoide's id rule for a character named in a card: NFKC, lower case, dashes.
export function characterIdOf(name) {
  return String(name).normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "").match(/^.{0,40}/u)[0] || "character"; // 40 code points
}

function currentCharacter() {
  const ctx = st();
  const character = ctx.characters?.[ctx.characterId];
  return character?.name ? characterIdOf(character.name) : null;
}

function omoide() {
  client ??= (async () => {
    const url = new URL("./", settings().url).href;
    const { connect } = await import(new URL("client.js", url).href);
    return connect({ url, timeoutMs: 120_000 });
  })().catch((err) => {
    client = null;
    throw err;
  });
  return client;
}

function report(err) {
  lastError = err;
  const status = document.getElementById("omoide_status");
  if (status) status.textContent = err ? `${err.code ?? "ERROR"}: ${err.message}` : "OK";
  if (err) console.warn("[Omoide]", err);
}

async function onMessageSent(index) {
  const message = st().chat?.[index];
  const character = currentCharacter();
  if (!settings().enabled || !message?.is_user || !message.mes || !character) return;
  try {
    // The message it answers goes along as its index context (only user turns are extracted).
    const before = st().chat?.[index - 1];
    const previous = before && !before.is_user && before.mes
      ? [{ role: "assistant", content: before.mes }] : [];
    await (await omoide()).ingest(character, [...previous, { role: "user", content: message.mes }]);
    report(null);
  } catch (err) {
    report(err);
  }
}

// Called by SillyTavern before each generation (manifest generate_interceptor).
// The newest generation's number: an answer that comes back after another generation
// started (the user opened another character's chat meanwhile) is dropped, never put in
// the prompt another character's generation reads.
let generation = 0;

async function generateInterceptor(chat) {
  const ctx = st();
  const character = currentCharacter();
  const mine = ++generation;
  ctx.setExtensionPrompt(KEY, "", IN_PROMPT, 0);
  if (!settings().enabled || !character) return;
  const query = [...chat].reverse().find((m) => m.is_user && m.mes)?.mes ?? "";
  try {
    const block = await (await omoide()).context(character, query,
      { tokenBudget: Number(settings().tokenBudget) || DEFAULTS.tokenBudget });
    if (mine !== generation || currentCharacter() !== character) return;
    if (block.text) {
      ctx.setExtensionPrompt(KEY, `[What {{char}} remembers (date, kind, memory):\n` +
        `${block.text}]`, IN_PROMPT, 0);
    }
    report(null);
  } catch (err) {
    report(err); // generation goes on without memories
  }
}

function settingsPanel() {
  const host = document.getElementById("extensions_settings");
  if (!host) return;
  const s = settings();
  const panel = document.createElement("div");
  panel.id = "omoide_settings";
  const row = (label, input) => {
    const l = document.createElement("label");
    l.append(label, " ", input);
    panel.append(l, document.createElement("br"));
    return input;
  };
  const title = document.createElement("b");
  title.textContent = "Omoide memory";
  panel.append(title, document.createElement("br"));
  const enabled = row("Enabled", Object.assign(document.createElement("input"),
    { type: "checkbox", checked: s.enabled }));
  const url = row("Omoide URL", Object.assign(document.createElement("input"),
    { type: "url", value: s.url }));
  const budget = row("Memory budget (tokens)", Object.assign(document.createElement("input"),
    { type: "number", min: 50, max: 8000, value: s.tokenBudget }));
  const connectWindow = Object.assign(document.createElement("button"),
    { type: "button", textContent: "Open the Omoide window (other site)" });
  const status = Object.assign(document.createElement("small"), { id: "omoide_status" });
  panel.append(connectWindow, " ", status);
  const save = () => {
    Object.assign(settings(), { enabled: enabled.checked, url: url.value,
      tokenBudget: Number(budget.value) });
    client?.then((c) => c.close(), () => {});
    client = null;
    st().saveSettingsDebounced();
  };
  for (const input of [enabled, url, budget]) input.addEventListener("change", save);
  connectWindow.addEventListener("click", async () => {
    try {
      const c = await omoide();
      if (c.needsWindow) await c.openWindow();
      report(null);
    } catch (err) {
      report(err);
    }
  });
  host.append(panel);
}

globalThis.omoideGenerateInterceptor = generateInterceptor;
const { eventSource, event_types: events } = st();
eventSource.on(events.MESSAGE_SENT, onMessageSent);
settingsPanel();
export const state = { get lastError() { return lastError; }, omoide };
