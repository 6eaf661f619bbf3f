// Omoide memory for SillyTavern: long-term memory kept by Omoide (in its own origin, on this
// device), used through Omoide's JS client.
// - every message the user sends (or edits) is ingested (extraction + dedup in Omoide) into the
//   memories of the character it was said to; in a group chat, of every member;
// - before each generation, context(character, last user message, {tokenBudget}) is injected
//   as an extension prompt for the character about to speak.
// SillyTavern API used (and nothing else): SillyTavern.getContext() -> {eventSource,
// event_types.{MESSAGE_SENT, MESSAGE_EDITED, CHAT_CHANGED, CHARACTER_RENAMED,
// CHARACTER_DELETED}, chat, chatId, characterId, characters, groupId, groups,
// setExtensionPrompt, extensionSettings, saveSettingsDebounced}, the manifest's
// generate_interceptor, and the #extensions_settings container for the settings panel.
//
// Which Omoide character an ST character uses: SillyTavern's own key for a character is its
// avatar file (two cards may share a name; "Alice" and "ALICE" share a slug), so the extension
// keeps a link per avatar in its settings. An avatar met for the first time takes its name's
// slug (what Omoide's import of the card creates) unless another ST character holds it, then
// the slug's next free form with an underscore (alice_2, alice_3, ...): no name's slug has
// one (a slug is letters, digits and dashes), so it is never a character Omoide already holds
// for another card ("Alice 2" is alice-2), whatever the grant lets this page see.
// A rename moves the link (CHARACTER_RENAMED); a deleted ST character's Omoide character is
// never handed to another automatically (a new card of the same name does not inherit its
// memories); the settings panel shows the link and may change it.

const KEY = "omoide";
const IN_PROMPT = 0; // extension_prompt_types.IN_PROMPT
const DEFAULTS = { url: "http://127.0.0.1:8742/", tokenBudget: 600, enabled: true };

const st = () => globalThis.SillyTavern.getContext();
let client = null; // a promise of the Omoide client
let lastError = null;

function settings() {
  const all = st().extensionSettings;
  all[KEY] = { ...DEFAULTS, ...(all[KEY] ?? {}) };
  all[KEY].characters ??= {}; // avatar -> Omoide character id
  all[KEY].retired ??= []; // ids of deleted ST characters, never handed out again
  all[KEY].pending ??= []; // ingests that failed for a while: [{character, messages, ...}]
  return all[KEY];
}

// Omoide's id rule for a character named in a card: NFKC, lower case, dashes.
export function characterIdOf(name) {
  return String(name).normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "").match(/^.{0,40}/u)[0] || "character"; // 40 code points
}

// ST's key of a character: its avatar file (a character without one, by name).
const avatarOf = (character) => character.avatar || `name:${character.name}`;

// The Omoide character an ST character uses: its link, or a new one (see the head).
export function linkOf(character) {
  const s = settings();
  const avatar = avatarOf(character);
  if (Object.hasOwn(s.characters, avatar)) return s.characters[avatar];
  const taken = new Set([...Object.values(s.characters), ...s.retired]);
  const slug = characterIdOf(character.name);
  let id = slug;
  for (let n = 2; taken.has(id); n++) id = `${slug}_${n}`;
  s.characters[avatar] = id;
  st().saveSettingsDebounced();
  return id;
}

function currentCharacter() {
  const ctx = st();
  const character = ctx.characters?.[ctx.characterId];
  return character?.name ? linkOf(character) : null;
}

// Who hears a message: the chat's character, or every member of a group chat (a muted member
// is still in the room).
function listeners() {
  const ctx = st();
  if (ctx.groupId === undefined || ctx.groupId === null) {
    const one = currentCharacter();
    return one ? [one] : [];
  }
  const group = ctx.groups?.find((g) => g.id === ctx.groupId);
  const members = (group?.members ?? [])
    .map((avatar) => ctx.characters?.find((c) => c.avatar === avatar))
    .filter((c) => c?.name);
  return [...new Set(members.map(linkOf))];
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

// A message the user sent, or edited (the edit may say something new; what it already
// said is merged by Omoide's dedup, a changed value supersedes the old one, kept as history).
// SillyTavern awaits its listeners before it shows the message and generates: the ingest
// runs after the handler returns, one message after another (their order kept).
let ingesting = Promise.resolve();

function onUserMessage(index) {
  const ctx = st();
  const message = ctx.chat?.[index];
  if (!settings().enabled || !message?.is_user || !message.mes) return;
  const characters = listeners();
  if (!characters.length) return;
  // The message it answers goes along as its index context (only user turns are extracted).
  const before = ctx.chat?.[index - 1];
  const previous = before && !before.is_user && before.mes
    ? [{ role: "assistant", content: before.mes }] : [];
  const messages = [...previous, { role: "user", content: message.mes }];
  // The chat's own id: its turns join one conversation in Omoide, which recall uses.
  const conversation = ctx.chatId ? `sillytavern:${ctx.chatId}`.slice(0, 256) : undefined;
  ingesting = ingesting.then(() => ingestInto(characters, messages, conversation));
}

// Each member on its own: one refused (outside the grant) keeps none of the others from it.
// A failure that passes (Omoide re-vectorizing that character, its tab reloading, too many
// connections, Omoide not reachable) keeps the message in `pending`, in the settings, with
// when it was said: it is ingested again, in order, before the next message and every
// minute, until it is stored. Refusals that stay (outside the grant, an invalid message)
// are reported and dropped.
const PASSING = new Set(["MODEL_MISMATCH", "TIMEOUT", "CLOSED", "RELOADED", "WINDOW_CLOSED",
  "TOO_MANY_CONNECTIONS", "NOT_READY", "STORAGE_FAILED", "QUOTA_EXCEEDED", "EMBEDDING_FAILED",
  "INTERNAL", "POPUP_BLOCKED"]);
const MAX_PENDING = 500;
function passing(err) {
  // a client closed (or its window): the next call connects again
  if (err?.code === "CLOSED" || err?.code === "WINDOW_CLOSED") client = null;
  return !err?.code || PASSING.has(err.code);
}

async function ingestInto(characters, messages, conversation) {
  const failures = [];
  const at = Date.now() / 1000;
  const pending = await retryPending();
  for (const character of characters) {
    const entry = { character, messages, conversation, at };
    if (pending) { // the ones before it first: their order kept
      keep(entry);
      continue;
    }
    try {
      await (await omoide()).ingest(character, messages, { conversation, at });
    } catch (err) {
      failures.push(err);
      if (passing(err)) keep(entry);
    }
  }
  if (!pending) report(failures[0] ?? null); // else what stops the waiting ones is shown
}

function keep(entry) {
  const s = settings();
  if (s.pending.length >= MAX_PENDING) {
    report({ code: "PENDING_FULL", message: `${MAX_PENDING} messages wait for Omoide; this ` +
      "one was not kept. Open Omoide to see what stops it." });
    return;
  }
  s.pending.push(entry);
  st().saveSettingsDebounced();
}

// Ingest what waits, in order; true when some of it still waits (a failure that passes).
async function retryPending() {
  const s = settings();
  while (s.pending.length) {
    const { character, messages, conversation, at } = s.pending[0];
    try {
      await (await omoide()).ingest(character, messages, { conversation, at });
    } catch (err) {
      if (passing(err)) {
        report(err);
        return true;
      }
      report(err); // refused for good (outside the grant now): dropped, said
    }
    s.pending.shift();
    st().saveSettingsDebounced();
  }
  return false;
}

setInterval(() => {
  if (settings().pending.length) ingesting = ingesting.then(retryPending);
}, 60_000);

function onRenamed(oldAvatar, newAvatar) {
  const s = settings();
  if (!Object.hasOwn(s.characters, oldAvatar) || oldAvatar === newAvatar) return;
  s.characters[newAvatar] = s.characters[oldAvatar];
  delete s.characters[oldAvatar];
  st().saveSettingsDebounced();
}

function onDeleted(event) {
  const s = settings();
  const avatar = event?.character ? avatarOf(event.character) : null;
  if (!avatar || !Object.hasOwn(s.characters, avatar)) return;
  const id = s.characters[avatar];
  delete s.characters[avatar];
  if (!s.retired.includes(id)) s.retired.push(id);
  st().saveSettingsDebounced();
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
      { tokenBudget: budgetOf(settings().tokenBudget) });
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

// The memory budget in tokens: a whole number in 50..8000 (what Omoide accepts and more than
// a prompt should spend), the default when not a number.
export function budgetOf(value) {
  const n = Math.round(Number(value));
  return Number.isFinite(n) && String(value).trim() !== ""
    ? Math.min(8000, Math.max(50, n)) : DEFAULTS.tokenBudget;
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
  const link = row("Omoide character of this chat", Object.assign(
    document.createElement("input"), { type: "text", id: "omoide_link", maxLength: 128 }));
  const connectWindow = Object.assign(document.createElement("button"),
    { type: "button", textContent: "Open the Omoide window (other site)" });
  const status = Object.assign(document.createElement("small"), { id: "omoide_status" });
  panel.append(connectWindow, " ", status);
  const save = () => {
    budget.value = budgetOf(budget.value); // a typed 50000 turned memories off
    Object.assign(settings(), { enabled: enabled.checked, url: url.value,
      tokenBudget: Number(budget.value) });
    client?.then((c) => c.close(), () => {});
    client = null;
    st().saveSettingsDebounced();
  };
  for (const input of [enabled, url, budget]) input.addEventListener("change", save);
  link.addEventListener("change", () => {
    const character = st().characters?.[st().characterId];
    const refused = character ? relink(character, link.value.trim()) : null;
    if (refused) report(refused);
    showLink();
  });
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
  showLink();
}

// The link of the open chat's character in the panel (a group chat: its members', read only).
function showLink() {
  const input = document.getElementById("omoide_link");
  if (!input) return;
  const ctx = st();
  const group = ctx.groupId !== undefined && ctx.groupId !== null;
  const character = ctx.characters?.[ctx.characterId];
  input.disabled = group || !character?.name;
  input.value = group ? listeners().join(", ") : character?.name ? linkOf(character) : "";
}

// Link an ST character to another Omoide character (e.g. back to a deleted card's memories).
// Refused when another ST character holds that id: two characters never share memories.
function relink(character, id) {
  const s = settings();
  const avatar = avatarOf(character);
  if (!id || s.characters[avatar] === id) return null;
  const holder = Object.entries(s.characters).find(([a, linked]) => linked === id && a !== avatar);
  if (holder) {
    const name = st().characters?.find((c) => avatarOf(c) === holder[0])?.name ?? holder[0];
    return Object.assign(new Error(`${JSON.stringify(id)} holds the memories of ${name}.`),
      { code: "CHARACTER_TAKEN" });
  }
  s.characters[avatar] = id;
  s.retired = s.retired.filter((r) => r !== id);
  st().saveSettingsDebounced();
  return null;
}

globalThis.omoideGenerateInterceptor = generateInterceptor;
const { eventSource, event_types: events } = st();
eventSource.on(events.MESSAGE_SENT, onUserMessage);
if (events.MESSAGE_EDITED) eventSource.on(events.MESSAGE_EDITED, onUserMessage);
if (events.CHARACTER_RENAMED) eventSource.on(events.CHARACTER_RENAMED, onRenamed);
if (events.CHARACTER_DELETED) eventSource.on(events.CHARACTER_DELETED, onDeleted);
if (events.CHAT_CHANGED) eventSource.on(events.CHAT_CHANGED, showLink);
settingsPanel();
if (!events.CHARACTER_RENAMED || !events.CHARACTER_DELETED) {
  // an older SillyTavern does not say when a card is renamed or deleted: a rename would cut
  // the character off from its memories
  report(Object.assign(new Error("This SillyTavern does not announce renamed or deleted " +
    "characters; update it before renaming a character."), { code: "OLD_SILLYTAVERN" }));
}
// `settled()`: the ingests queued so far are done (for tests and tools)
// `retry()`: ingest what waits now, instead of at the next message or minute
export const state = { get lastError() { return lastError; }, omoide, settled: () => ingesting,
  get pending() { return settings().pending.length; },
  retry: () => (ingesting = ingesting.then(retryPending)) };
