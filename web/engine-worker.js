// The engine worker: boots Pyodide, loads the omoide wheel, keeps the memory database in
// IndexedDB (Dexie) and answers the page's calls. It is a module worker because Pyodide's ES
// module build refuses classic workers.
import * as Comlink from "./vendor/comlink/comlink.mjs";
import { loadPyodide } from "./vendor/pyodide/pyodide.mjs";
import * as vectors from "./kernel/vectors.js";
import * as store from "./store/db.js";
import { characterVerbs, isDeleted } from "./store/characters.js";
import { PACKED, packVectors, receivedVectors } from "./store/import-vectors.js";
import { originVerbs } from "./store/origins.js";

const base = new URL("./", import.meta.url);
const DEFAULT_MODEL = { model: "omoide/multilingual-e5-small", dtype: "q8" };
const WRITE_LOCK = "omoide-engine";

let booting = null;
let dbOpening = null; // IndexedDB's open, started first thing at boot
let pyodide = null;
let py = null; // {dispatch, session}
let db = null;
let embedder = null; // Comlink link to the embedding worker
// The generation of each character (and of GLOBAL: settings, model) this worker's engine
// reflects; another tab's write moves one in IndexedDB, and only that character reloads.
let known = new Map();
const reloads = new Map(); // character -> reloads caused by other tabs (storage_info)
const loadTimes = new Map(); // character -> times of its last load (storage_info)
let listeners = [];
let revectorizing = null; // {model, dtype, cancel, done, total, started}
const channel = new BroadcastChannel("omoide-changes");
const emit = (event) => listeners.forEach((fn) => fn(event));

async function fetchWheel(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

function installWheel(bytes) {
  const purelib = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  pyodide.unpackArchive(bytes, "wheel", { extractDir: purelib });
}

// -- what Python calls (module omoide_host) -------------------------------------------------

// -- progress of long verbs ---------------------------------------------------------------
// Import, paste preview (ingest), summarize and chat-file import tell the page what they are
// doing: the stage, and count / total while they embed (per batch, from the embedding worker).
const PROGRESS_VERBS = new Set(["import_data", "ingest", "summarize", "tavern_import"]);
// A recall's query or a remember embeds a few texts: no progress channel for those.
const EMBED_PROGRESS_FROM = 17;
let activity = null; // the verb now running that reports progress
const progress = (stage, done = null, total = null) => {
  if (activity) emit({ type: "progress", verb: activity, stage, done, total });
};

async function withProgress(verb, fn) {
  if (!PROGRESS_VERBS.has(verb)) return fn();
  activity = verb;
  progress("working");
  try {
    return await fn();
  } finally {
    progress("finished");
    activity = null;
  }
}

let loadedModel = null;
let runtimeInfo = null; // where embeddings run (webgpu / wasm) and why, shown to the user
async function ensureModel(model, dtype) {
  if (!embedder) throw new Error("no embedding worker is connected");
  const key = `${model}@${dtype}`;
  if (loadedModel !== key) {
    progress("model");
    const loaded = await embedder.load({ model, dtype }, Comlink.proxy((state) =>
      emit({ type: "download", state })));
    loadedModel = key;
    runtimeInfo = { model, dtype, device: loaded.device, reason: loaded.reason,
      threads: loaded.threads };
    emit({ type: "embedder", ...runtimeInfo });
  }
}

// A failed IndexedDB write as the engine's own errors name it (omoide.browser.host).
function storageError(err) {
  const cause = err?.inner ?? err;
  const quota = cause?.name === "QuotaExceededError";
  return Object.assign(new Error(quota
    ? `The browser's storage quota is full; nothing was written. ${cause?.message ?? ""}`
    : `The browser's storage failed; nothing was written. ${cause?.message ?? err}`),
  { name: quota ? "QUOTA_EXCEEDED" : "STORAGE_FAILED" });
}

// Python waits for these with run_sync; it must get a plain Error (a DexieError rejected as
// is never settles the wait), named after the DOMException underneath (QuotaExceededError).
function plainErrors(functions) {
  return Object.fromEntries(Object.entries(functions).map(([name, fn]) => [name,
    async (...args) => {
      try {
        return await fn(...args);
      } catch (err) {
        const cause = err?.inner ?? err;
        throw new Error(`${cause?.name ?? "Error"}: ${cause?.message ?? err}`);
      }
    }]));
}

// Passages re-vectorization embedded ahead, outside the lock ("model@dtype\ntext" -> row):
// the step that follows finds its whole batch here. Emptied after every step.
const embeddedAhead = new Map();

function fromAhead(list, model, dtype) {
  if (!embeddedAhead.size || !list.length) return null;
  const rows = list.map((text) => embeddedAhead.get(`${model}@${dtype}\n${text}`));
  if (rows.some((row) => !row)) return null;
  const dim = rows[0].length;
  const data = new Float32Array(list.length * dim);
  rows.forEach((row, n) => data.set(row, n * dim));
  return { dims: [list.length, dim], data, device: runtimeInfo?.device ?? null, fellBack: null };
}

const host = plainErrors({
  async embed(texts, kind, model, dtype) {
    const list = texts.toJs ? texts.toJs() : texts;
    const ahead = kind === "passage" ? fromAhead(list, model, dtype) : null;
    if (ahead) return ahead;
    await ensureModel(model, dtype);
    const onBatch = activity && list.length >= EMBED_PROGRESS_FROM
      ? Comlink.proxy((done, total) => progress("embedding", done, total)) : undefined;
    if (onBatch) progress("embedding", 0, list.length);
    const reply = await embedder.embed(list, { kind, model, dtype }, onBatch);
    if (onBatch) progress("working");
    if (reply.fellBack) {
      // WebGPU failed mid-work and the embedding worker moved to WebAssembly: say so.
      runtimeInfo = { ...runtimeInfo, device: reply.device, reason: reply.fellBack };
      emit({ type: "embedder", ...runtimeInfo });
      emit({ type: "notice", key: "model.fellBack", message: reply.fellBack });
    }
    return reply;
  },
  async persist_many(changesJson, flat, queueJson) {
    const started = performance.now();
    const changes = JSON.parse(changesJson);
    const queue = typeof queueJson === "string" ? JSON.parse(queueJson) : undefined;
    const { inline, generations, packs } = await store.persistMany(db, changes,
      new Float32Array(flat), queue, importBlocks, known);
    importedPacks.push(...packs);
    for (const [character, g] of generations) known.set(character, g);
    for (const change of changes) {
      changedCharacters.add(change.character);
      if (change.op === "swap") looseVectors.set(change.character, 0);
      if (change.op === "purge") recallCounts.delete(recallKey(change.character, change.memory_id));
    }
    for (const [character, n] of inline) {
      looseVectors.set(character, (looseVectors.get(character) ?? 0) + n);
    }
    if (timing) timing.indexeddb_ms = performance.now() - started;
  },
  // Any request for Python (urllib has no network in Pyodide): the LLM client's POSTs and
  // HttpBackend's calls to the backup server; method, optional body, headers. The server must
  // answer CORS for this origin (the reference server does; so can llama.cpp, LM Studio...).
  // A request that cannot be idempotent-safely repeated is tried once; the others get one
  // more try on a network error (a kept-alive connection the server left unusable).
  async http_request(method, url, body, headersJson, timeoutS) {
    const signal = AbortSignal.timeout(Math.max(1, timeoutS * 1000));
    // redirect "error": never followed (omoide/transport.py), the key stays with its host
    const send = () => fetch(url, {
      method, body: body ?? undefined, headers: JSON.parse(headersJson), mode: "cors",
      cache: "no-store", redirect: "error", signal,
    });
    let response;
    try {
      response = await send();
    } catch (err) {
      if (err?.name !== "TypeError" || !["GET", "PATCH", "DELETE"].includes(method)) throw err;
      response = await send();
    }
    return JSON.stringify({ status: response.status, body: await response.text() });
  },
  // The mirror queue (omoide.browser.backends): read at the start of a call that uses it,
  // written at its end (with the call's memory changes, or alone here).
  async queue_load() {
    return JSON.stringify(await store.getSetting(db, store.MIRROR_QUEUE, []));
  },
  // The display names by id, and when each deleted character was deleted (a ``name``
  // mirror op sends the ones of the character it names).
  async character_names() {
    return JSON.stringify(characterStates(await db.characters.toArray()));
  },
  // The ids of the memories purged here (a backup or restore starts: store.forgottenIds).
  async forgotten_ids() {
    return JSON.stringify(await store.forgottenIds(db));
  },
  async queue_save(json) {
    await store.setSetting(db, store.MIRROR_QUEUE, JSON.parse(json));
  },
  // The rows of an import's packed vectors that Python reuses (``rows``: their indexes in
  // the character's pack), gathered into one block that goes to the kernel and, at the
  // commit, into IndexedDB (omoide.browser.importer).
  async import_rows(character, rows) {
    const pack = importPacks.get(character);
    if (!pack) throw new Error(`no packed vectors of ${character}`);
    const d = pack.dimension;
    const block = new Float32Array(rows.length * d);
    for (let n = 0; n < rows.length; n++) {
      block.set(pack.flat.subarray(rows[n] * d, (rows[n] + 1) * d), n * d);
    }
    importBlocks.set(character, block);
    return block;
  },
  // Vectors of a running re-vectorization: ids and texts as JSON, the rows in one array.
  async stage(json, flat) {
    const { stamp, dimension, items } = JSON.parse(json);
    const rows = new Float32Array(flat);
    await db.staging.bulkPut(items.map((item, n) => ({ stamp, ...item, dimension,
      vector: rows.slice(n * dimension, (n + 1) * dimension) })));
  },
});

// An import's vectors, kept binary: each character's ``vectors`` of the file in one
// Float32Array before the call (``importPacks``), and the rows Python reuses, gathered
// (``importBlocks``); both live for the duration of one import_data call.
const importPacks = new Map(); // character -> {ids, dimension, flat}
const importBlocks = new Map(); // character -> Float32Array
// the record packs the import's commit wrote: its memories are grouped by them for the
// full-text pass, which then makes one postings block per pack (text_blocks.group_written),
// so the next start absorbs blocks instead of analyzing every text the import brought
const importedPacks = [];

function groupImported() {
  try {
    py.textBlocks.group_written(JSON.stringify(importedPacks));
  } catch (err) { // committed already: without groups its texts are analyzed one by one
    console.warn("imported packs not grouped for full text", err);
  }
}

// Take each character's vectors out of an import file into one Float32Array: packed by the
// page (its buffer transferred: ``import-vectors.js``) or, for a file sent as it is, here.
function packImport(data) {
  const packed = {};
  if (!data || typeof data !== "object" || !Array.isArray(data.characters)) {
    return { data, packed };
  }
  const characters = data.characters.map((c) => {
    if (!c || typeof c !== "object" || typeof c.id !== "string") return c;
    if (importPacks.has(c.id)) return unpacked(c); // a second entry: Python names it
    const pack = receivedVectors(c) ?? packVectors(c.vectors);
    if (!pack) return c;
    importPacks.set(c.id, pack);
    packed[c.id] = { ids: pack.ids, dimension: pack.dimension };
    const { vectors: _, [PACKED]: __, ...rest } = c;
    return rest;
  });
  return { data: { ...data, characters }, packed };
}

// A character as the file had it (its packed vectors, if any, back to id -> numbers).
function unpacked(c) {
  const pack = receivedVectors(c);
  if (!pack) return c;
  const { [PACKED]: _, ...rest } = c;
  const { ids, dimension: d, flat } = pack;
  return { ...rest, vectors: Object.fromEntries(ids.map((id, n) =>
    [id, Array.from(flat.subarray(n * d, (n + 1) * d))])) };
}

// Characters written by the current call (their generation was bumped with the write); at
// its end (still under the lock) other tabs are told and inline vectors are compacted.
const changedCharacters = new Set();
// Inline (not yet compacted) vectors per character, counted here so that a write never has
// to scan a character's records to decide whether to compact.
const looseVectors = new Map();
async function finishWrites() {
  for (const character of changedCharacters) {
    const loose = looseVectors.get(character) ?? 0;
    if (loose < store.SEGMENT_ROWS) continue;
    looseVectors.set(character, loose - (await store.compact(db, character)));
  }
}

// -- loading the database into the engine ---------------------------------------------------

// -- recall counts: counted in memory by Python, added to IndexedDB in batches -------------

const RECALL_FLUSH_MS = 2_000;
const RECALL_FLUSH_ROWS = 1_000;
const recallCounts = new Map(); // "character\nid" -> {character, id, count, last}
let recallTimer = null;
const recallKey = (character, id) => `${character}\n${id}`;

function countRecalls(hits) {
  for (const { memory } of hits) {
    const character = memory.character_id;
    const key = recallKey(character, memory.id);
    const row = recallCounts.get(key) ?? { character, id: memory.id, count: 0, last: 0 };
    row.count += 1;
    row.last = Math.max(row.last, memory.last_recalled_at ?? 0);
    recallCounts.set(key, row);
  }
  if (recallCounts.size >= RECALL_FLUSH_ROWS) flushRecallsLocked();
  else recallTimer ??= setTimeout(flushRecallsLocked, RECALL_FLUSH_MS);
}

// Under the engine lock, like every write: it never lands between a call and its commit.
const flushRecallsLocked = () => navigator.locks.request(WRITE_LOCK, flushRecalls);

// The page is hidden or going away (closed, navigated away): its worker may be ended any
// moment, and a closing page's worker is never granted a Web Lock (the counts were lost
// whenever the flush waited for one, and often when it did not: the additive write reads
// first). So they are journaled at once: one blind put of a settings row of this worker's
// own, without the lock; the next flush or load of any tab (under the lock) adds them to the
// ``recalls`` table. They leave ``recallCounts`` first: nothing writes them twice.
const journalId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
let journalWrites = 0;
async function flushRecallsLeaving() {
  clearTimeout(recallTimer);
  recallTimer = null;
  if (!recallCounts.size) return;
  const rows = [...recallCounts.values()];
  recallCounts.clear();
  try {
    await store.journalRecalls(db, `${journalId}:${journalWrites++}`, rows);
  } catch (err) {
    keepRecalls(rows);
  }
}

function keepRecalls(rows) { // a write that failed: kept for the next try
  for (const row of rows) {
    const key = recallKey(row.character, row.id);
    const later = recallCounts.get(key);
    recallCounts.set(key, later ? { ...row, count: row.count + later.count,
      last: Math.max(row.last, later.last) } : row);
  }
  recallTimer ??= setTimeout(flushRecallsLocked, RECALL_FLUSH_MS * 5);
}

// One additive transaction on the recalls table (with the journals of pages gone since); no
// generation moves, no tab is told. The caller holds the engine lock. Returns the characters
// whose counts it wrote.
async function flushRecalls() {
  clearTimeout(recallTimer);
  recallTimer = null;
  const rows = [...recallCounts.values()];
  recallCounts.clear();
  try {
    return await store.addRecalls(db, rows);
  } catch (err) {
    keepRecalls(rows);
    return new Set();
  }
}

// -- loading the database into the engine ---------------------------------------------------

// Rebuild one character from IndexedDB (or from ``placed``: its read ahead, vectors already
// in kernel stores); returns a notice when something had to be repaired.
async function loadOne(id, placed = null) {
  const data = placed ? await store.settleCharacter(db, placed, { ahead: true })
    : await store.loadCharacter(db, id, (d) => vectors.createStore(d));
  if (!data) {
    py.dropCharacter(id);
    return [];
  }
  looseVectors.set(id, data.loose);
  const started = performance.now();
  // records in slices (omoide.browser.restore): the header of what the records say (the ids
  // they call trashed, the recall counts), each record pack's text as stored, then the
  // override rows; Python never holds the JSON and the dicts of every record at once. Then
  // what the placement of the vectors found.
  py.restore.begin(JSON.stringify(store.recordsHeader(data)));
  for (const [bytes, skip, format, crc, pack] of store.recordSlices(data)) {
    py.restore.add_records(id, bytes, skip.length ? JSON.stringify(skip) : "", format, crc,
      pack);
  }
  const recordsDone = performance.now();
  const result = (await py.restore.finish.callPromising(id, data.live, data.trash,
    JSON.stringify(data.placement))).toJs({ dict_converter: Object.fromEntries });
  loadTimes.set(id, { ...data.timing, ahead: Boolean(placed),
    python_ms: performance.now() - started, records_ms: recordsDone - started,
    rows: data.placement.live_ids.length + data.placement.trash_ids.length,
    trusted: result.trusted, quarantined: result.quarantined });
  wantTextBlocks(id); // then the lazy pass
  const notices = [];
  if (result.repaired || result.corrupt_segments) {
    notices.push(`${id}: ${result.corrupt_segments} damaged vector segment(s); ` +
      `${result.repaired} memories re-embedded, none lost`);
  }
  if (result.quarantined) {
    notices.push(`${id}: ${result.quarantined} invalid stored record(s) skipped and kept ` +
      "as they are (listed by audit)");
  }
  return notices;
}

// Full-text postings blocks (web/store/db.js ``text_postings``, omoide/browser/text_blocks.py):
// after ready (and after a reload) each loaded character's blocks are read and absorbed, one
// block per short step under the lock; the lazy pass below starts after them, so it analyzes
// only what no block covers (and makes a block of each pack it analyzes: ``saveTextBlocks``).
// A recall waits for the blocks (``textBlocksAbsorbed``) before it asks for the lock, so its
// search completes the index from them instead of analyzing every text; it is never wrong
// either way (a search completes the index first).
let booted = false;
const textBlocksWanted = new Set(); // characters loaded whose blocks are not read yet
let textBlocksAbsorbed = Promise.resolve();
let bootBlocksDone = () => {};
const textBlockTimes = {}; // storage_info.text_blocks: the last pass's read and absorb

function wantTextBlocks(character) {
  textBlocksWanted.add(character);
  if (booted) absorbTextBlocks();
}

function absorbTextBlocks() {
  const characters = [...textBlocksWanted];
  textBlocksWanted.clear();
  const absorbing = (async () => {
    const started = performance.now();
    let read = 0;
    let absorbed = 0;
    let blocks = 0;
    let lock = 0;
    let python = 0;
    for (const character of characters) {
      const readStarted = performance.now();
      const rows = await store.readTextBlocks(db, character).catch(() => []);
      read += performance.now() - readStarted;
      blocks += rows.length;
      for (const { pack, data } of rows) {
        const asked = performance.now();
        absorbed += await navigator.locks.request(WRITE_LOCK, () => {
          const held = performance.now();
          lock += held - asked;
          const ok = py.textBlocks.absorb(character, pack, data);
          python += performance.now() - held;
          return ok ? 1 : 0;
        }).catch(() => 0);
      }
    }
    Object.assign(textBlockTimes, { blocks, absorbed, read_ms: Math.round(read),
      lock_ms: Math.round(lock), python_ms: Math.round(python),
      total_ms: Math.round(performance.now() - started),
      started_at: Math.round(started), done_at: Math.round(performance.now()) });
  })();
  textBlocksAbsorbed = Promise.all([textBlocksAbsorbed, absorbing]);
  absorbing.finally(scheduleTextIndexing);
  return absorbing;
}

// Blocks the lazy pass (or a search that completed an index) made, written while their packs
// still hold the text they were made from (derived data: no generation moves, no tab is told).
let textBlocksSaving = Promise.resolve();
function saveTextBlocks() {
  const made = py.textBlocks.take();
  const blocks = made.toJs();
  made.destroy();
  if (!blocks.length) return;
  textBlocksSaving = textBlocksSaving.then(() => store.writeTextBlocks(db, blocks))
    .catch((err) => console.warn("full-text postings not saved", err));
}

// Full-text indexes are completed after boot, in small steps under the lock (boot analyzes
// no text; a full-text query before the end completes the index first, so it is never wrong).
// A step lasts about TEXT_STEP_BUDGET_MS, then gives the lock up: a call that arrived meanwhile
// is granted it first (locks are granted in request order), so it waits one short step at
// most (steps of 2,000 texts held calls up ~30 ms at 100,000 memories).
const TEXT_STEP_MS = 0;
const TEXT_STEP_BUDGET_MS = 15;
let textTimer = null;
function scheduleTextIndexing() {
  textTimer ??= setTimeout(async () => {
    let left = 0;
    try {
      left = await navigator.locks.request(WRITE_LOCK, async () => {
        const rest = await callPython("index_text_step", { budget_ms: TEXT_STEP_BUDGET_MS });
        saveTextBlocks();
        return rest;
      });
    } catch (err) {
      left = 0; // the next load schedules it again
    }
    textTimer = null;
    if (left > 0) scheduleTextIndexing();
  }, TEXT_STEP_MS);
}

// Before a call: reload what other tabs changed since this engine last looked (only the
// characters whose generation moved; everything when settings or the model did).
async function catchUp() {
  const current = await store.generations(db);
  if ((current.get(store.GLOBAL) ?? 0) !== (known.get(store.GLOBAL) ?? 0)) {
    await loadEverything(); // which writes the recall counts first
    return;
  }
  for (const [character, g] of current) {
    if (known.get(character) === g) continue;
    await flushRecalls();
    const notices = await loadOne(character);
    known.set(character, g);
    reloads.set(character, (reloads.get(character) ?? 0) + 1);
    for (const message of notices) emit({ type: "notice", message });
  }
}

// The stored settings, applied at boot. One that this version refuses (a backup URL holding
// a token, stored by an older one) is left out and named; the others still apply (all of
// them were ignored with it). IndexedDB keeps them all as they were.
async function applyStoredSettings(values) {
  const ignored = [];
  for (;;) {
    try {
      await callPython("apply_settings", { values });
      break;
    } catch (err) {
      ignored.push(err.message);
      const name = err.fields?.name;
      if (!Object.hasOwn(values, name)) break; // names no stored setting: none applied
      values = Object.fromEntries(Object.entries(values).filter(([k]) => k !== name));
    }
  }
  if (ignored.length) {
    emit({ type: "notice", message: `stored settings ignored: ${ignored.join("; ")}` });
  }
}

// ``ahead``: boot's read ahead (``readAhead``); a character's read is used only when its
// generation and the global one are still those read with it (else it is read again).
async function loadEverything(ahead = null) {
  // this worker's counts and the journals of pages gone, read below; a character whose
  // counts they changed is read again (the read ahead was made before them, and a recall
  // count moves no generation: a tab closed with counts pending showed them one load late)
  const counted = await flushRecalls();
  known = await store.generations(db);
  const current = (character) => ahead && !counted.has(character)
    && (ahead.generations.get(store.GLOBAL) ?? 0) === (known.get(store.GLOBAL) ?? 0)
    && (ahead.generations.get(character) ?? 0) === (known.get(character) ?? 0);
  const selected = await store.getSetting(db, "model", DEFAULT_MODEL);
  py.session.start(selected.model, selected.dtype);
  const userSettings = await store.getSetting(db, "user_settings", {});
  backupConfigured = Boolean(userSettings.backup_url);
  await applyStoredSettings(userSettings);
  const notices = [];
  for (const { id } of await store.listCharacters(db)) {
    const placed = current(id) ? ahead.placed.get(id) : undefined;
    if (placed === null) { // no index when read ahead, and nothing changed since
      py.dropCharacter(id);
      continue;
    }
    notices.push(...await loadOne(id, placed));
  }
  const target = await store.getSetting(db, "revectorize_target", null);
  if (target) {
    const stamp = `${target.model}@${target.dtype}#${target.dimension}`;
    const staged = await db.staging.where("[stamp+character]")
      .between([stamp, ""], [stamp, "\uffff"]).toArray();
    const rows = new Float32Array(staged.length * target.dimension);
    staged.forEach(({ vector }, n) => rows.set(vector, n * target.dimension));
    py.loadStaged(stamp, JSON.stringify(staged.map(({ character, id, text }) => ({
      character, id, text }))), rows);
  }
  for (const message of notices) emit({ type: "notice", message });
  return notices;
}

// Starting Pyodide's interpreter (its own init and stdlib imports) and importing the engine
// are most of the boot; a memory snapshot of the interpreter taken right after the engine's
// boot modules were imported restores in a fraction of that (node, same Pyodide: 3.6 s vs
// 18.4 s for the bare interpreter on the loaded 2-core box). The first boot of a build takes
// one (only pure Python has run: before any JS module is registered, as Pyodide requires) and
// keeps it in Cache Storage under the Pyodide version and the wheel's hash; later boots start
// from it. The snapshot holds memory, not files: the wheel is unpacked again after a restore
// (lazy imports and package data read it). A snapshot Pyodide refuses is dropped and the
// interpreter starts afresh.
const SNAPSHOT_CACHE = "omoide-pyodide-snapshot";
const PRELOAD = "omoide.browser.preload";

async function startPython(info, wheelLoading, started) {
  const indexURL = new URL("vendor/pyodide/", base).href;
  const key = new URL(`pyodide-snapshot/${info.vendor.pyodide}/${info.wheel_sha256}`, base)
    .href;
  const cache = await caches.open(SNAPSHOT_CACHE).catch(() => null);
  const stored = await cache?.match(key).catch(() => null);
  if (stored) {
    try {
      const snapshot = new Uint8Array(await stored.arrayBuffer());
      pyodide = await loadPyodide({ indexURL, _loadSnapshot: snapshot });
      started();
      installWheel(await wheelLoading);
      pyodide.runPython(`import ${PRELOAD}; ${PRELOAD}.after_restore()`);
      bootTimes.snapshot = "restored";
      return;
    } catch (err) {
      console.warn("Pyodide snapshot not usable; starting the interpreter afresh", err);
      await cache.delete(key).catch(() => {});
    }
  }
  pyodide = await loadPyodide({ indexURL, _makeSnapshot: Boolean(cache) });
  started();
  installWheel(await wheelLoading);
  pyodide.runPython(`import ${PRELOAD}; ${PRELOAD}.import_boot_modules()`);
  if (!cache) return;
  try {
    const snapshot = pyodide.makeMemorySnapshot();
    // one snapshot per origin: those of other builds go
    cache.keys().then((keys) => Promise.all(keys.filter((r) => r.url !== key)
      .map((r) => cache.delete(r)))).then(() => cache.put(key, new Response(snapshot)))
      .catch((err) => console.warn("Pyodide snapshot not stored", err));
    bootTimes.snapshot = "taken";
  } catch (err) {
    console.warn("no Pyodide snapshot taken", err);
  }
}

// Boot reads every character ahead, while Pyodide starts: one read-only transaction, then
// the vectors placed in kernel stores as soon as the kernel is compiled. No lock is held (no
// write happens here); ``loadEverything`` keeps a character's read only when its generation
// has not moved since. Null when the read failed (boot then reads under the lock as usual).
// (Tried and measured at 100,000, both slower or no faster, as the restore is bound by the 2
// cores together: handing each character's records to Python while the vectors were still
// being read (the read's delivery needs this thread too), and the read on a worker of its own
// with the segments' CRC checked there (it took CPU from Python's start).)
async function readAhead(kernelLoading) {
  try {
    await dbOpening;
    const { generations, reads } = await store.readEverything(db);
    bootMark("read");
    await kernelLoading;
    const placed = new Map();
    for (const [id, read] of reads) {
      placed.set(id, read && store.placeCharacter(read, (d) => vectors.createStore(d)));
      reads.set(id, null); // each read's rows go once placed
    }
    bootMark("placed");
    return { generations, placed };
  } catch (err) {
    console.warn("read ahead failed; reading under the engine lock", err);
    return null;
  }
}

// Where each boot went (storage_info.boot): ms after this worker's time origin, which is given
// too (epoch ms), so a benchmark can put them on the page's clock.
const bootTimes = { origin: performance.timeOrigin };
const bootMark = (name) => { bootTimes[name] = Math.round(performance.now()); };

async function boot(onProgress) {
  // Each stage's report carries the stored model once it is read, so the page can start the
  // model's warm-up at the stage it picks without a call: a call waits while Python's start
  // holds this worker's thread (the warm-up began ~0.5 s after "python" that way).
  let model;
  const report = (stage, detail = "") => {
    bootMark(stage);
    onProgress?.({ stage, detail, model });
  };
  bootMark("start");
  // IndexedDB opens first, and the stored model is read from it while Pyodide loads.
  db = store.openDatabase();
  dbOpening = db.open();
  dbOpening.catch(() => {}); // awaited below; no unhandled rejection meanwhile
  dbOpening.then(() => store.getSetting(db, "model", DEFAULT_MODEL))
    .then((stored) => { model = stored; }, () => {});
  const info = await (await fetch(new URL("build-info.json", base))).json();
  report("runtime", `Pyodide ${info.vendor.pyodide}`);
  // While Pyodide boots: the kernel compiles, the wheel downloads and IndexedDB opens.
  const kernelLoading = vectors.loadKernel("auto");
  const wheelLoading = fetchWheel(new URL(info.wheel, base).href);
  const reading = readAhead(kernelLoading);
  // "python" is reported as soon as the interpreter runs: the page starts the model's
  // warm-up then, while the wheel and the engine's modules load (or come with the snapshot).
  await startPython(info, wheelLoading,
    () => report("python", pyodide.runPython("import sys; sys.version.split()[0]")));
  bootMark("wheel");
  // The vector kernel (WebAssembly SIMD, scalar WebAssembly or JS): Python reaches it as the
  // module omoide_vectors through omoide.browser.wasm_kernel, which registers its rpc verbs.
  await kernelLoading;
  pyodide.registerJsModule("omoide_vectors", vectors);
  pyodide.registerJsModule("omoide_host", host);
  pyodide.runPython("import omoide.browser.wasm_kernel");
  bootMark("import_kernel");
  // rpc verbs of their own modules: the JS client's, import, SillyTavern / RisuAI files
  pyodide.runPython("import omoide.browser.client, omoide.browser.importer, " +
    "omoide.browser.tavern");
  bootMark("import_verbs");
  const session = pyodide.pyimport("omoide.browser.session");
  py = {
    dispatch: pyodide.pyimport("omoide.browser.rpc").dispatch,
    session,
    restore: pyodide.pyimport("omoide.browser.restore"),
    textBlocks: pyodide.pyimport("omoide.browser.text_blocks"),
    dropCharacter: session.drop_character,
    loadStaged: session.load_staged,
  };
  report("engine", `omoide ${info.omoide}`);
  await dbOpening;
  bootMark("database");
  const ahead = await reading;
  bootMark("read_ahead");
  // a recall that arrives before ready waits for the blocks as one after ready does
  textBlocksAbsorbed = new Promise((resolve) => { bootBlocksDone = resolve; });
  const notices = await navigator.locks.request(WRITE_LOCK, async () => {
    changedCharacters.clear();
    const found = await loadEverything(ahead);
    if (changedCharacters.size) await finishWrites();
    return found;
  });
  setInterval(backendsTick, PUMP_MS);
  // When Pyodide's files arrived (ms on this worker's clock): the rest of "python" is
  // compiling the interpreter and starting it.
  bootTimes.fetched = Object.fromEntries(performance.getEntriesByType("resource")
    .filter((e) => e.name.includes("/vendor/pyodide/") || e.name.includes("/wheels/"))
    .map((e) => [e.name.split("/").at(-1), Math.round(e.responseEnd)]));
  report("ready");
  booted = true;
  absorbTextBlocks().finally(bootBlocksDone);
  return { omoide: info.omoide, vendor: info.vendor, notices };
}

// -- calls ----------------------------------------------------------------------------------

function replyValue(reply) {
  if (reply.ok) return reply.result;
  const error = new Error(reply.error.message);
  error.name = reply.error.code;
  error.fields = reply.error.fields ?? {}; // the field it names: apps switch on it
  throw error;
}

// An error crosses to the page (and the bridge) with its ``fields`` too: Comlink's own
// handler sends message, name and stack only (every field an error named was lost).
const throwing = Comlink.transferHandlers.get("throw");
Comlink.transferHandlers.set("throw", {
  canHandle: throwing.canHandle,
  serialize({ value }) {
    if (!(value instanceof Error)) return throwing.serialize({ value });
    return [{ isError: true, value: { message: value.message, name: value.name,
      stack: value.stack, fields: value.fields ?? {} } }, []];
  },
  deserialize: throwing.deserialize,
});

// One engine call, then the commit of everything it changed (one IndexedDB transaction).
// A refused commit leaves the database as it was; the engine is then reloaded from it, so the
// caller gets the error and memory and disk still agree. A call that fails commits nothing:
// what it changed is dropped and the characters it touched are read again from the disk.
async function callPython(method, params) {
  const started = performance.now();
  const reply = JSON.parse(await py.dispatch.callPromising(method, JSON.stringify(params)));
  const ran = performance.now();
  if (!reply.ok && reply.commit !== false) {
    const dropped = JSON.parse(await py.dispatch.callPromising("discard", "{}"));
    for (const character of dropped.result ?? []) await loadOne(character);
    return replyValue(reply);
  }
  if (reply.commit !== false) progress("saving");
  const committed = reply.commit === false ? { ok: true }
    : JSON.parse(await py.dispatch.callPromising("flush", "{}"));
  if (timing) {
    Object.assign(timing, { python_ms: ran - started, phases: reply.phases,
      commit_ms: performance.now() - ran });
  }
  if (!committed.ok) {
    await loadEverything();
    replyValue(committed);
  }
  return replyValue(reply);
}

// Where the time of the last engine calls went (benchmarks: `call_timings`, and the last of
// each verb in `storage_info.calls`): waiting for the lock, catching up with other tabs,
// Python (with its own phases: the verb, its JSON reply, the query embedding), the commit
// (`indexeddb_ms` of it in the transaction), compaction and the post to other tabs
// (`finish_ms`); `total_ms` is from the worker's receipt to its reply.
const CALL_TIMINGS = 500;
const callTimings = [];
let timing = null; // the timing of the call that holds the lock (one at a time)

function newTiming(method) {
  const entry = { method };
  callTimings.push(entry);
  if (callTimings.length > CALL_TIMINGS) callTimings.shift();
  return entry;
}

// Every engine call holds the cross-tab lock: one writer at a time over the whole origin.
// If another tab wrote since this engine last looked, it reloads from IndexedDB first.
async function locked(fn, callTiming = null) {
  const asked = performance.now();
  return navigator.locks.request(WRITE_LOCK, async () => {
    changedCharacters.clear();
    const held = performance.now();
    timing = callTiming;
    try {
      await catchUp();
      if (timing) Object.assign(timing, { lock_ms: held - asked,
        catch_up_ms: performance.now() - held });
      return await fn();
    } finally {
      const finishing = performance.now();
      if (changedCharacters.size) {
        await finishWrites();
        const characters = [...changedCharacters];
        channel.postMessage({ characters });
        emit({ type: "changed", characters });
      }
      if (timing) timing.finish_ms = performance.now() - finishing;
      timing = null;
    }
  });
}

// A change that is not one character's (settings, the model): every other tab reloads.
async function changedGlobally() {
  const bumped = await store.bumpGeneration(db, store.GLOBAL);
  known.set(store.GLOBAL, bumped.get(store.GLOBAL));
}

channel.onmessage = ({ data }) => emit({ type: "changed", characters: data.characters,
  remote: true });

const jsVerbs = {
  ...characterVerbs(() => db, callPython, locked),
  ...originVerbs(() => db),
  async models() {
    return (await fetch(new URL("models/registry.json", base))).json();
  },
  async storage() {
    const estimate = await navigator.storage.estimate();
    const persisted = await navigator.storage.persisted?.();
    return { usage: estimate.usage, quota: estimate.quota, persisted: !!persisted };
  },
  async select_model({ model, dtype }) {
    if (revectorizing && (revectorizing.model !== model || revectorizing.dtype !== dtype)) {
      // selecting another model abandons the job, and its next step would stage again
      throw Object.assign(new Error(`A re-vectorization to ${revectorizing.model} is ` +
        "running: cancel it before selecting another model."), { name: "BUSY" });
    }
    const state = await locked(async () => {
      const previous = await store.getSetting(db, "model", DEFAULT_MODEL);
      const answer = await callPython("select_model", { model, dtype });
      try {
        await store.selectModel(db, model, dtype, answer.stamp);
      } catch (err) {
        // not stored: the engine goes back to the stored model (it had switched, stamping
        // new characters with a model the next start would not select)
        await callPython("select_model", previous);
        throw storageError(err);
      }
      await changedGlobally();
      return answer;
    });
    ensureModel(model, dtype).catch((err) => emit({ type: "notice", message: err.message }));
    return state;
  },
  revectorize_start({ model, dtype, character = null, step = null, ahead = true } = {}) {
    if (revectorizing) return revectorizeStatus();
    revectorizing = { model, dtype, character, cancel: false, done: 0, total: 0,
      started: performance.now(), startDone: null, error: null,
      step: Number.isInteger(step) && step > 0 ? Math.min(step, 1_024) : null,
      ahead: ahead !== false };
    runRevectorize(revectorizing);
    return revectorizeStatus();
  },
  revectorize_cancel() {
    if (revectorizing) revectorizing.cancel = true;
    return revectorizeStatus();
  },
  revectorize_status: () => revectorizeStatus(),
  // An import carries display names: characters new to this browser get theirs (a name
  // already here is kept), characters without memories included, in the import's own
  // transaction (``name`` changes of omoide.browser.importer).
  async import_data(params) {
    const received = performance.now();
    const callTiming = newTiming("import_data");
    const report = await locked(() => withProgress("import_data", async () => {
      let report;
      try {
        report = await callPython("import_data", packImport(params.data));
        if (importedPacks.length) groupImported();
      } finally {
        importPacks.clear();
        importBlocks.clear();
        importedPacks.length = 0;
      }
      scheduleTextIndexing(); // BM25 analysis of the imported texts, after the call
      // a character the user deleted (in the character trash) keeps what was imported into
      // it out of sight until restored there: the report says so instead of only "imported"
      const trashed = [];
      for (const id of report?.characters ?? []) {
        if (isDeleted(await db.characters.get(id))) trashed.push(id);
      }
      if (trashed.length) report.in_character_trash = trashed;
      return report;
    }), callTiming);
    callTiming.total_ms = performance.now() - received;
    return report;
  },
  settings: () => locked(() => callPython("settings", {})),
  embedder_status: () => runtimeInfo ?? { device: null },
  async set_settings(changes) {
    return locked(async () => {
      const previous = await callPython("apply_settings", { values: {} }); // in full
      const applied = await callPython("apply_settings", { values: changes });
      try {
        await store.setSetting(db, "user_settings", applied); // in full (secrets too)
      } catch (err) {
        await callPython("apply_settings", { values: previous }); // not stored: not applied
        throw storageError(err);
      }
      await changedGlobally();
      changedCharacters.add("*settings*");
      backupConfigured = Boolean(applied.backup_url);
      lastHealth = 0; // check a new server at the next tick
      return callPython("settings", {}); // what the page sees: secrets masked
    });
  },
  // Backup server: the whole local store up to the server, or back from it, in steps (each
  // one an engine call under the lock), with progress events.
  // The display names live here (IndexedDB ``characters``), not in Python: they go along,
  // read at each step under the lock (the last step sends them: a rename made while the
  // backup ran is the name sent, never the one read at its start).
  backup_now: async () => backupJob("backup", "backup_step", async () =>
    characterStates(await db.characters.toArray())),
  backup_restore: ({ characters = null } = {}) =>
    backupJob("restore", "restore_step", async () => (characters ? { characters } : {})),
  backup_status: () => backupRunning ?? { running: false },
  // What this tab's engine reflects: generations, reloads caused by other tabs, recall
  // counts not yet written.
  storage_info: () => ({ generations: Object.fromEntries(known),
    reloads: Object.fromEntries(reloads), pending_recalls: recallCounts.size,
    loads: Object.fromEntries(loadTimes),
    calls: Object.fromEntries(callTimings.map((entry) => [entry.method, entry])),
    boot: bootTimes, text_blocks: textBlockTimes,
    pyodide_heap_bytes: pyodide?._module?.HEAPU8?.byteLength ?? null }),
  // The full-text index: texts left to index, and the stored postings blocks (once the ones
  // read after the last load are absorbed and the ones made since are written).
  async text_index_status() {
    await textBlocksAbsorbed;
    await textBlocksSaving;
    const left = await locked(() => callPython("index_text_step", { batch: 0 }));
    return { left, ...textBlockTimes };
  },
  // the timings of the last calls of `method` (all methods without one), oldest first
  call_timings: ({ method = null, last = CALL_TIMINGS } = {}) =>
    callTimings.filter((t) => !method || t.method === method).slice(-last),
  // ``leaving``: the page is hidden or going away (web/app.js, web/bridge.js)
  flush_recalls: ({ leaving = false } = {}) => (leaving ? flushRecallsLeaving()
    : flushRecallsLocked()).then(() => ({ pending_recalls: recallCounts.size })),
};

// -- backup server: mirror pump, health checks, backup / restore ------------------------------

const PUMP_MS = 2_000;
const HEALTH_MS = 30_000;
let backupConfigured = false;
let backendsBusy = false; // one timer run at a time
let lastHealth = 0;
let backupRunning = null; // {running, kind, done, total}

async function backendsTick() {
  if (!py || !db || backendsBusy || !backupConfigured) return;
  backendsBusy = true;
  try {
    if (Date.now() - lastHealth >= HEALTH_MS) {
      lastHealth = Date.now();
      await locked(() => callPython("backends_check", {}));
    }
    const pumped = await locked(() => callPython("backends_pump", {}));
    if (pumped.mirrored) emit({ type: "backends", backends: pumped.backends });
  } catch (err) {
    // the state of each backend (and its last error) is in backends_status
  } finally {
    backendsBusy = false;
  }
}

// ``params``: a step's parameters, read under the lock before each step.
// IndexedDB ``characters`` as the backup server holds them: names by id, and when the user
// deleted each deleted one (its memories kept: a restore must not bring it back live).
function characterStates(rows) {
  return { names: Object.fromEntries(rows.map((c) => [c.id, c.name])),
    deleted: Object.fromEntries(rows.filter(isDeleted).map((c) => [c.id, c.deleted_at])) };
}

async function backupJob(kind, stepVerb, params) {
  if (backupRunning) {
    throw Object.assign(new Error(`A ${backupRunning.kind} is already running.`),
      { name: "BUSY" });
  }
  backupRunning = { running: true, kind, done: 0, total: 0 };
  try {
    for (let cursor = 0; ;) {
      const step = await locked(async () => callPython(stepVerb,
        { ...(await params()), cursor }));
      Object.assign(backupRunning, { done: step.done, total: step.total });
      emit({ type: "backup", kind, state: step.finished ? "finished" : "running", ...step });
      if (step.finished) return step;
      cursor = step.done;
    }
  } catch (err) {
    emit({ type: "backup", kind, state: "failed", error: err.message });
    throw err;
  } finally {
    backupRunning = null;
  }
}

function revectorizeStatus() {
  const r = revectorizing;
  if (!r) return { running: false };
  const seconds = (performance.now() - r.started) / 1000;
  const rate = seconds > 0 && r.startDone !== null ? (r.done - r.startDone) / seconds : 0;
  const eta = rate > 0 ? (r.total - r.done) / rate : null;
  return { running: true, model: r.model, dtype: r.dtype, done: r.done, total: r.total,
    rate, eta_s: eta, cancelling: r.cancel };
}

// Re-vectorization runs in steps of REVECTORIZE_STEP memories. Each step's texts are embedded
// first, outside the lock (sorted by length into batches by the embedding worker); the
// engine call under the lock then only stages them (IndexedDB) and moves the job on, so
// recall and writes go on between and during steps. Staged vectors are in IndexedDB: a
// reload resumes. `step` overrides the size (the benchmark compares sizes).
const REVECTORIZE_STEP = 64;
async function runRevectorize(job) {
  const size = job.step ?? REVECTORIZE_STEP;
  const ahead = job.ahead ?? true;
  const where = { model: job.model, dtype: job.dtype, character: job.character };
  const registry = await jsVerbs.models();
  const info = registry.models.find((m) => m.id === job.model);
  await store.setSetting(db, "revectorize_target",
    { model: job.model, dtype: job.dtype, dimension: info?.dimension ?? 384 });
  let event = { type: "revectorize", state: "running" };
  const cancelled = () => ({ type: "revectorize", state: "cancelled", done: job.done,
    total: job.total });
  try {
    for (;;) {
      if (job.cancel) {
        event = cancelled();
        break;
      }
      if (ahead) {
        const texts = await locked(() => callPython("revectorize_upcoming",
          { ...where, limit: size }));
        if (texts.length) {
          await ensureModel(job.model, job.dtype);
          const reply = await embedder.embed(texts, { kind: "passage", model: job.model,
            dtype: job.dtype });
          const dim = reply.dims[1];
          texts.forEach((text, n) => embeddedAhead.set(`${job.model}@${job.dtype}\n${text}`,
            reply.data.subarray(n * dim, (n + 1) * dim)));
        }
        if (job.cancel) { // asked while embedding: nothing of this step is staged
          embeddedAhead.clear();
          event = cancelled();
          break;
        }
      }
      const step = await locked(() => callPython("revectorize_step",
        { ...where, batch_size: size })).finally(() => embeddedAhead.clear());
      job.startDone ??= step.done;
      job.done = step.done;
      job.total = step.total;
      emit({ type: "revectorize", ...revectorizeStatus() });
      if (step.finished) {
        await store.setSetting(db, "model", { model: job.model, dtype: job.dtype });
        await store.setSetting(db, "revectorize_target", null);
        await changedGlobally();
        event = { type: "revectorize", state: "finished", done: job.total, total: job.total };
        break;
      }
    }
  } catch (err) {
    event = { type: "revectorize", state: "failed", error: err.message };
  } finally {
    revectorizing = null;
    emit(event);
  }
}

async function call(method, params = {}) {
  if (!py) throw new Error("the engine is not ready yet");
  if (method in jsVerbs) return jsVerbs[method](params);
  const received = performance.now();
  const callTiming = newTiming(method);
  if (method === "recall") {
    await textBlocksAbsorbed; // the full-text index from the stored blocks, not re-analyzed
    callTiming.text_blocks_wait_ms = performance.now() - received;
  }
  const result = await locked(async () => {
    const answer = await withProgress(method, () => callPython(method, params));
    saveTextBlocks(); // a search that completed an index made its packs' blocks
    return answer;
  }, callTiming);
  if (method === "recall" && params.count !== false) countRecalls(result);
  callTiming.total_ms = performance.now() - received;
  return result;
}

Comlink.expose({
  boot(onProgress) {
    booting ??= boot(onProgress);
    return booting;
  },
  call,
  // The model the engine will embed with (the stored setting), known as soon as IndexedDB is
  // open, before the engine is: the page warms it up meanwhile. Call after boot().
  async storedModel() {
    if (!dbOpening) throw new Error("the engine is not booting");
    await dbOpening;
    return store.getSetting(db, "model", DEFAULT_MODEL);
  },
  // The page hands over a port to the embedding worker, so embeddings never pass the page.
  connectEmbedder(port) {
    embedder = Comlink.wrap(port);
  },
  onEvent(fn) {
    listeners.push(fn);
  },
});
