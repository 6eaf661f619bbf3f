// The Omoide side of the JS client (web/client.js): this page runs in a hidden frame of a chat
// app (or, for a page of another site, in a small top-level window it opened) and answers the
// app's calls with the engine of this origin.
//
// Rules: a message is read only from the page that embeds or opened this one; its origin must
// be on the user's allow-list (IndexedDB, read at every request, so a removal works at once);
// a character outside that origin's grant is refused and never listed. The engine boots on
// the first allowed request, so an unknown page costs nothing. Answers go to that origin only.
import * as Comlink from "./vendor/comlink/comlink.mjs";
import { checkParams } from "./call-params.js";
import { leavingFlushesRecalls } from "./leaving.js";
import { allows, grantOf } from "./store/origins.js";
import { isDeleted } from "./store/characters.js";
import { openDatabase } from "./store/db.js";

const PROTOCOL = "omoide-client/1";
const asWindow = window.parent === window && !!window.opener;
const host = asWindow ? window.opener : window.parent;
const db = openDatabase();
let engine = null; // a promise of {call}
let eventOrigin = null; // the allowed origin progress events go to

// A frame under a page of another site gets partitioned storage (not the user's memories).
// Same host (any port) is the same site. For other hosts the browser decides: a site is a
// registrable domain, which needs the public suffix list (a.github.io and b.github.io are two
// sites, so are x.example.co.uk and y.other.co.uk), so a frame asks the browser whether it
// has its unpartitioned storage (the Storage Access API: true in a same-site frame, false in
// a cross-site one that was granted nothing; this page never asks for a grant). Without the
// API: partitioned. Wrongly "partitioned" costs a window; wrongly "not" would show an empty
// store and keep what the app writes where the user never sees it.
async function partitioned() {
  if (window.parent === window) return false;
  const ancestors = location.ancestorOrigins ? [...location.ancestorOrigins] : [];
  if (!ancestors.length) return true; // cannot tell: assume the worst, never show wrong data
  const here = new URL(location.origin);
  const sameHost = (origin) => {
    if (!URL.canParse(origin)) return false; // "null": under a sandboxed frame or a file
    const url = new URL(origin);
    return url.protocol === here.protocol && url.hostname === here.hostname;
  };
  if (ancestors.every(sameHost)) return false;
  try {
    return !(await document.hasStorageAccess?.());
  } catch {
    return true;
  }
}
const isPartitioned = await partitioned();

function error(code, message, fields = {}) {
  return Object.assign(new Error(message), { name: code, fields });
}

// Each connected frame runs an engine of its own (Pyodide and the model: ~0.5-0.9 GB). Nine
// frames of one app ran the browser out of memory and every call failed: a frame takes one
// of MAX_ENGINES slots (Web Locks, held until the frame goes) before it starts one.
const MAX_ENGINES = 3;

async function engineSlot() {
  if (!navigator.locks) return true;
  for (let n = 0; n < MAX_ENGINES; n++) {
    const got = await new Promise((resolve) => {
      navigator.locks.request(`omoide-bridge-engine-${n}`, { ifAvailable: true }, (lock) => {
        resolve(lock !== null);
        return lock ? new Promise(() => {}) : undefined; // held for this frame's life
      });
    });
    if (got) return true;
  }
  return false;
}

function startEngine() {
  const engineWorker = new Worker(new URL("./engine-worker.js", import.meta.url),
    { type: "module" });
  const embedWorker = new Worker(new URL("./embed-worker.js", import.meta.url),
    { type: "module" });
  const worker = Comlink.wrap(engineWorker);
  const embedder = Comlink.wrap(embedWorker);
  return (async () => {
    const { port1, port2 } = new MessageChannel();
    await embedder.connect(Comlink.transfer(port1, [port1]));
    await worker.connectEmbedder(Comlink.transfer(port2, [port2]));
    await worker.onEvent(Comlink.proxy((event) => {
      if (["download", "revectorize", "embedder"].includes(event.type)) forward(event);
    }));
    await worker.boot(Comlink.proxy((stage) => forward({ type: "boot", ...stage })));
    leavingFlushesRecalls((method, params) => worker.call(method, params));
    return { call: async (method, params) => worker.call(method, checkParams(params)) };
  })();
}

function forward(event) {
  if (eventOrigin) host.postMessage({ protocol: PROTOCOL, type: "event", event }, eventOrigin);
}

function need(params, name, type = "string") {
  const value = params?.[name];
  if (typeof value !== type) {
    throw error("INVALID_ARGUMENT", `Invalid ${name}: must be a ${type}.`, { name });
  }
  return value;
}

// A character in Omoide's character trash (deleted in the app) is out of reach of every app
// until it is restored there: neither read nor written, whatever the grant says.
async function granted(grant, character, origin) {
  if (!allows(grant, character)) {
    throw error("CHARACTER_NOT_ALLOWED", `${origin} may not use the character ` +
      `${JSON.stringify(character)}; allow it on Omoide's maintenance tab.`, { character });
  }
  if (isDeleted(await db.characters.get(character))) {
    throw error("CHARACTER_NOT_ALLOWED", `The character ${JSON.stringify(character)} is in ` +
      "Omoide's character trash; restore it there to use it again.", { character });
  }
  return character;
}

const memory = (m) => ({ id: m.id, text: m.text, kind: m.kind, key: m.key,
  importance: m.importance, created_at: m.created_at, meta: m.meta,
  conversation: m.conversation, turn: m.turn });

// Client verbs -> engine calls. Only these exist: the allow-list, settings (and their
// secrets), export and every other engine verb are out of reach of other origins.
const VERBS = {
  async characters(call, grant) {
    const all = await call("characters", {});
    return all.filter((c) => allows(grant, c.id))
      .map((c) => ({ id: c.id, name: c.name, count: c.count }));
  },
  async remember(call, grant, p, origin) {
    const character = await granted(grant, need(p, "character"), origin);
    const fields = Object.fromEntries(["kind", "importance", "key", "meta", "context",
      "conversation", "turn"]
      .filter((k) => p[k] !== undefined && p[k] !== null).map((k) => [k, p[k]]));
    return memory(await call("remember", { character, text: need(p, "text"), ...fields }));
  },
  async ingest(call, grant, p, origin) {
    const character = await granted(grant, need(p, "character"), origin);
    if (typeof p.messages !== "string" && !Array.isArray(p.messages)) {
      throw error("INVALID_ARGUMENT", "Invalid messages: a text or a list of {role, content}.",
        { name: "messages" });
    }
    // The engine validates these (its error names the field): passed only when given.
    const fields = Object.fromEntries(["conversation", "at"]
      .filter((k) => p[k] !== undefined && p[k] !== null).map((k) => [k, p[k]]));
    const report = await call("ingest", { character, messages: p.messages, dry_run: false,
      ...fields });
    return { conversation: report.conversation,
      stored: report.items.filter((i) => i.action === "stored"),
      merged: report.items.filter((i) => ["merged", "contradiction"].includes(i.action)),
      superseded: report.items.filter((i) => i.action === "superseded"),
      skipped: report.items.filter((i) => i.action === "skipped").length,
      path: report.path, degraded: report.degraded };
  },
  async recall(call, grant, p, origin) {
    const character = await granted(grant, need(p, "character"), origin);
    // another app's read never brings back what the user forgot (revive: false)
    const hits = await call("recall", { character, query: need(p, "query"), k: p.k ?? 8,
      mode: p.mode ?? "hybrid", revive: false });
    return hits.map((hit) => ({ ...memory(hit.memory), score: hit.score }));
  },
  async context(call, grant, p, origin) {
    const character = await granted(grant, need(p, "character"), origin);
    return call("prompt_context", { character, query: p.query ?? null,
      token_budget: p.tokenBudget ?? 800, k: p.k ?? 8 });
  },
  async forget(call, grant, p, origin) {
    const character = await granted(grant, need(p, "character"), origin);
    const entry = await call("forget", { character, id: need(p, "id") });
    return { ...memory(entry.memory), trashed_at: entry.trashed_at };
  },
};

async function answer(origin, method, params) {
  if (origin === "null") {
    throw error("ORIGIN_NOT_ALLOWED", "A page without an origin of its own (a sandboxed " +
      "frame, a file) cannot be allowed to use Omoide; load the app from an http(s) address.",
    { origin });
  }
  if (isPartitioned) {
    throw error("STORAGE_PARTITIONED", "This frame is under a page of another site and only " +
      "sees a separate, empty storage; connect through an Omoide window (openWindow()).");
  }
  const grant = await grantOf(db, origin);
  if (!grant) {
    throw error("ORIGIN_NOT_ALLOWED", `${origin} is not allowed to use Omoide. Add it on ` +
      "Omoide's maintenance tab (Apps allowed to use Omoide), with the characters it may see.",
    { origin });
  }
  if (!Object.hasOwn(VERBS, method)) {
    throw error("INVALID_ARGUMENT", `Invalid method: unknown ${JSON.stringify(method)}.`,
      { name: "method" });
  }
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw error("INVALID_ARGUMENT", "Invalid params: not an object.", { name: "params" });
  }
  eventOrigin = origin;
  if (asWindow) document.getElementById("bridge-text").textContent = `Connected to ${origin}.`;
  engine ??= engineSlot().then((got) => {
    if (got) return startEngine();
    engine = null; // a later call tries again (another frame may have gone)
    throw error("TOO_MANY_CONNECTIONS", `Omoide already serves ${MAX_ENGINES} connections ` +
      "of apps in this browser (each runs its own engine); close one, then try again.");
  });
  const { call } = await engine;
  // the grant may have changed while the engine booted: read it again (revoked: refused)
  const current = await grantOf(db, origin);
  if (!current) {
    throw error("ORIGIN_NOT_ALLOWED", `${origin} is no longer allowed to use Omoide.`,
      { origin });
  }
  return VERBS[method](call, current, params, origin);
}

addEventListener("message", async (event) => {
  const data = event.data;
  if (event.source !== host || data?.protocol !== PROTOCOL || data.type !== "request") return;
  const reply = { protocol: PROTOCOL, type: "reply", id: data.id };
  try {
    reply.result = await answer(event.origin, data.method, data.params);
    reply.ok = true;
  } catch (err) {
    reply.ok = false;
    const code = /^[A-Z_]+$/.test(err?.name) ? err.name : "INTERNAL";
    // an internal failure's text (a Python traceback: paths, source lines) stays in this
    // page's console; the other origin gets what failed, not how
    if (code === "INTERNAL") console.error("omoide bridge:", err);
    reply.error = { code, fields: code === "INTERNAL" ? {} : err?.fields ?? {},
      message: code === "INTERNAL" ? "Omoide failed inside (an internal error); the " +
        "details are in the console of Omoide's page." : String(err?.message ?? err) };
  }
  // A sandboxed frame's origin is opaque ("null"): no target names it, so its refusal (no
  // data: every call of such a page is refused above) goes to the window that asked, "*";
  // without it the app waited for its timeout, or forever.
  const opaque = event.origin === "null";
  if (!opaque || !reply.ok) host.postMessage(reply, opaque ? "*" : event.origin);
});

if (asWindow) {
  document.getElementById("bridge-status").hidden = false;
  document.getElementById("bridge-text").textContent =
    "Connected to the page that opened this window.";
}
// "ready" says only that Omoide is here and whether this frame is partitioned: no data.
host?.postMessage({ protocol: PROTOCOL, type: "ready", partitioned: isPartitioned,
  window: asWindow }, "*");
