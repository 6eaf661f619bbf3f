// Omoide's JS client: any web page (a chat app on another origin) uses the memories kept in
// Omoide's own origin, offline, through a hidden Omoide frame and postMessage. Nothing but
// the answers to its calls leaves Omoide's origin, and only for the characters the user
// allowed that page to see (maintenance tab, "Apps allowed to use Omoide").
//
//   import { connect } from "http://127.0.0.1:8742/client.js";
//   const omoide = await connect();          // the Omoide this module was loaded from
//   await omoide.ingest("alice", [{ role: "user", content: "I love green tea." }],
//                       { conversation: "chat-42" });          // the chat it continues
//   const { text } = await omoide.context("alice", "what should I drink?", { tokenBudget: 500 });
//
// A page of another *site* (localhost vs 127.0.0.1, or another domain) gets a partitioned,
// empty storage in the frame: then `omoide.needsWindow` is true and calls are refused with
// STORAGE_PARTITIONED until `omoide.openWindow()` (from a click) opens a small top-level
// Omoide window, which sees the user's real memories; calls then go through it.
// Dependency-free: copy this file into your app to keep working while Omoide's server is down.

const PROTOCOL = "omoide-client/1";
const DEFAULT_URL = new URL("./", import.meta.url).href;

export class OmoideError extends Error {
  constructor(code, message, fields = {}) {
    super(message);
    this.name = "OmoideError";
    this.code = code;
    this.fields = fields;
  }
}

function waitForReady(source, origin, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      removeEventListener("message", onMessage);
      reject(new OmoideError("TIMEOUT", `${what} did not answer within ${timeoutMs} ms.`));
    }, timeoutMs);
    function onMessage(event) {
      if (event.origin !== origin || event.source !== source()) return;
      if (event.data?.protocol !== PROTOCOL || event.data.type !== "ready") return;
      clearTimeout(timer);
      removeEventListener("message", onMessage);
      resolve(event.data);
    }
    addEventListener("message", onMessage);
  });
}

export class OmoideClient {
  constructor(base, frame, ready, timeoutMs) {
    this.base = base;
    this.origin = new URL(base).origin;
    this.frame = frame;
    this.partitioned = !!ready.partitioned;
    this.popup = null;
    this.timeoutMs = timeoutMs;
    this.pending = new Map();
    this.listeners = new Map();
    this.nextId = 1;
    this.firstReady = new Set(); // windows whose next "ready" is their first (openWindow)
    this.onMessage = (event) => this.receive(event);
    addEventListener("message", this.onMessage);
  }

  // True while calls cannot work: a partitioned frame and no Omoide window yet.
  get needsWindow() {
    return this.partitioned && (!this.popup || this.popup.closed);
  }

  target() {
    return this.popup && !this.popup.closed ? this.popup : this.frame.contentWindow;
  }

  receive(event) {
    const data = event.data;
    if (event.origin !== this.origin || data?.protocol !== PROTOCOL) return;
    if (event.source !== this.frame.contentWindow && event.source !== this.popup) return;
    if (data.type === "ready") {
      // a bridge that says "ready" again was reloaded: the calls it had are gone (they may
      // or may not have been done); they fail instead of waiting for ever
      if (this.firstReady.delete(event.source)) return;
      this.failAll("RELOADED", "The Omoide frame or window reloaded during the call; it " +
        "may or may not have been done: check, then call again.");
      return;
    }
    if (data.type === "event") {
      for (const fn of this.listeners.get(data.event?.type) ?? []) fn(data.event);
      for (const fn of this.listeners.get("*") ?? []) fn(data.event);
      return;
    }
    if (data.type !== "reply") return;
    const waiting = this.pending.get(data.id);
    if (!waiting) return;
    this.pending.delete(data.id);
    clearTimeout(waiting.timer);
    if (data.ok) waiting.resolve(data.result);
    else waiting.reject(new OmoideError(data.error.code, data.error.message, data.error.fields));
  }

  // Open the Omoide window that a cross-site page needs (call it from a click handler:
  // browsers block pop-ups opened without a user gesture).
  async openWindow({ timeoutMs = 30_000 } = {}) {
    if (this.popup && !this.popup.closed) return this.popup;
    const url = new URL("bridge.html", this.base);
    url.searchParams.set("window", "1");
    const popup = window.open(url.href, `omoide-${this.origin}`, "popup,width=480,height=360");
    if (!popup) {
      throw new OmoideError("POPUP_BLOCKED", "The browser blocked the Omoide window; call " +
        "openWindow() from a click.");
    }
    this.popup = popup;
    this.firstReady.add(popup);
    await waitForReady(() => popup, this.origin, timeoutMs, "The Omoide window");
    return popup;
  }

  call(method, params = {}) {
    if (this.needsWindow) {
      return Promise.reject(new OmoideError("STORAGE_PARTITIONED", "This page is on another " +
        "site than Omoide, so the browser gives Omoide's frame a separate, empty storage. " +
        "Call openWindow() from a click to connect through an Omoide window."));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = this.timeoutMs ? setTimeout(() => {
        this.pending.delete(id);
        reject(new OmoideError("TIMEOUT", `${method} got no answer within ${this.timeoutMs} ms.`));
      }, this.timeoutMs) : null;
      this.pending.set(id, { resolve, reject, timer });
      if (this.popup) this.watchPopup();
      try {
        if (this.closed) throw new OmoideError("CLOSED", "The client was closed.");
        this.target().postMessage({ protocol: PROTOCOL, type: "request", id, method, params },
          this.origin);
      } catch (err) { // a value the browser cannot send (a function in meta): never pending
        clearTimeout(timer);
        this.pending.delete(id);
        reject(err instanceof OmoideError ? err : new OmoideError("INVALID_ARGUMENT",
          `Invalid params: ${err?.message ?? err} (only JSON data can be sent).`,
          { name: "params" }));
      }
    });
  }

  // Calls waiting on a window the user closed fail instead of hanging.
  watchPopup() {
    if (this.watch) return;
    this.watch = setInterval(() => {
      if (!this.popup?.closed && this.pending.size) return;
      clearInterval(this.watch);
      this.watch = null;
      if (!this.popup?.closed) return;
      this.failAll("WINDOW_CLOSED", "The Omoide window was closed; open it again.");
    }, 500);
  }

  failAll(code, message) {
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(new OmoideError(code, message));
    }
    this.pending.clear();
  }

  // -- verbs ---------------------------------------------------------------------------------
  /** The characters this page may see: [{id, name, count}]. */
  characters() {
    return this.call("characters");
  }

  /** Store one memory as it is: {id, text, kind, created_at, conversation, turn, ...}.
   *  `context`: words indexed with it, never shown; `conversation`: your chat's id, so that
   *  memories a few turns apart help each other at recall; `turn`: its place there (default:
   *  after the chat's last turn). */
  remember(character, text, options) {
    const { kind, importance, key, meta, context, conversation, turn } = options ?? {};
    return this.call("remember", { character, text, kind, importance, key, meta, context,
      conversation, turn });
  }

  /** Extract memories from messages ([{role, content}] or a text) with dedup, as the app does:
   *  {conversation, stored, merged, skipped, path, degraded}. `conversation`: your chat's id
   *  when you send one message at a time (new memories take the turns after its last one);
   *  without it a batch is a conversation of its own, named in the answer. `at`: when it was
   *  said (seconds since 1970, default now). */
  ingest(character, messages, options) {
    const { conversation, at } = options ?? {};
    return this.call("ingest", { character, messages, conversation, at });
  }

  /** Best memories for a query: [{id, text, kind, key, created_at, score}]. */
  recall(character, query, options) {
    const { k = 8, mode = "hybrid" } = options ?? {};
    return this.call("recall", { character, query, k, mode });
  }

  /** A prompt-ready block: {text, tokens, hot, recalled}; hot memories then recalled ones,
   *  one dated line each, deduplicated, never over tokenBudget (estimated tokens). */
  context(character, query, options) {
    const { tokenBudget = 800, k = 8 } = options ?? {};
    return this.call("context", { character, query, tokenBudget, k });
  }

  /** Move a memory to the trash (restorable in the app). */
  forget(character, id) {
    return this.call("forget", { character, id });
  }

  /** Listen to progress: "boot", "download" (model files), "revectorize"; "*" for all. */
  on(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(fn);
    return () => this.listeners.set(type, this.listeners.get(type).filter((f) => f !== fn));
  }

  close() {
    this.closed = true;
    removeEventListener("message", this.onMessage);
    this.failAll("CLOSED", "The client was closed.");
    this.frame.remove();
    if (this.popup && !this.popup.closed) this.popup.close();
  }
}

/** Load the Omoide frame and answer a client once it is there. `url`: where Omoide is served
 *  (default: where this module came from); `timeoutMs`: per call (0: none). */
export async function connect({ url = DEFAULT_URL, timeoutMs = 0, loadTimeoutMs = 30_000 } = {}) {
  const base = new URL("./", url).href;
  if (self.origin === "null") {
    // a sandboxed frame (or a data: page) has no origin to allow, and Omoide's frame under it
    // inherits the sandbox (its scripts cannot load): it would wait out loadTimeoutMs
    throw new OmoideError("ORIGIN_NOT_ALLOWED", "This page has no origin of its own (a " +
      "sandboxed frame without allow-same-origin, or a data: page), so it cannot be allowed to " +
      "use Omoide; load the app from an http(s) address.", { origin: "null" });
  }
  const frame = document.createElement("iframe");
  frame.src = new URL("bridge.html", base).href;
  frame.title = "Omoide";
  frame.hidden = true;
  frame.setAttribute("aria-hidden", "true");
  const ready = waitForReady(() => frame.contentWindow, new URL(base).origin, loadTimeoutMs,
    `Omoide at ${base}`);
  document.body.append(frame);
  try {
    return new OmoideClient(base, frame, await ready, timeoutMs);
  } catch (err) {
    frame.remove();
    throw err;
  }
}
