// Side-by-side benchmark helpers (bench/orama_browser.py): Orama 3.x and Omoide's vector
// kernel on the same seeded synthetic data, in the app page. Not used by the app.
//
// Data: rows x 384 L2-normalized vectors (mulberry32 uniform, normalized), texts of 12-24
// Zipf-distributed words from a 5,000-word vocabulary whose top words are English stopwords
// (skewed posting lists, like bench/recall_latency.py); queries are noisy copies of stored
// vectors and 3-word texts.

const STOP = ["the", "and", "to", "of", "a", "i", "in", "was", "it", "that", "my", "you",
  "we", "is", "for", "on", "with", "at", "her", "he"];

function rng(seed) {
  let a = seed >>> 0;
  return () => { // mulberry32, in [0, 1)
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normalize(v, at, dim) {
  let s = 0;
  for (let j = 0; j < dim; j++) s += v[at + j] * v[at + j];
  s = Math.sqrt(s) || 1;
  for (let j = 0; j < dim; j++) v[at + j] /= s;
}

export function vocabulary(size = 5000) {
  const words = STOP.slice();
  const r = rng(7);
  const letters = "abcdefghijklmnopqrstuvwxyz";
  while (words.length < size) {
    let w = "";
    const n = 3 + Math.floor(r() * 7);
    for (let i = 0; i < n; i++) w += letters[Math.floor(r() * 26)];
    words.push(w);
  }
  return words;
}

/** {vectors: Float32Array rows*dim, texts: string[], ids: string[]} for rows [start, end). */
export function makeData(start, end, dim = 384, seed = 1) {
  const n = end - start;
  const vectors = new Float32Array(n * dim);
  const texts = new Array(n);
  const ids = new Array(n);
  const words = vocabulary();
  // Zipf(1) over the vocabulary by inverse CDF on a precomputed table
  const cdf = new Float64Array(words.length);
  let acc = 0;
  for (let i = 0; i < words.length; i++) { acc += 1 / (i + 1); cdf[i] = acc; }
  const pick = (u) => {
    const x = u * acc;
    let lo = 0, hi = cdf.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cdf[mid] < x) lo = mid + 1; else hi = mid; }
    return words[lo];
  };
  for (let i = 0; i < n; i++) {
    const r = rng(seed * 1_000_003 + start + i); // per-row seed: any range is reproducible
    for (let j = 0; j < dim; j++) vectors[i * dim + j] = r() * 2 - 1;
    normalize(vectors, i * dim, dim);
    const len = 12 + Math.floor(r() * 13);
    const t = [];
    for (let w = 0; w < len; w++) t.push(pick(r()));
    texts[i] = t.join(" ");
    ids[i] = `m${String(start + i).padStart(7, "0")}`;
  }
  return { vectors, texts, ids };
}

/** Queries: noisy copies of stored rows (of the first `rows`) and 3-word texts from them. */
export function makeQueries(count, rows, dim = 384, seed = 99) {
  const r = rng(seed);
  const vectors = new Float32Array(count * dim);
  const texts = [];
  for (let q = 0; q < count; q++) {
    const row = Math.floor(r() * rows);
    const { vectors: v, texts: t } = makeData(row, row + 1, dim);
    for (let j = 0; j < dim; j++) vectors[q * dim + j] = v[j] + (r() * 2 - 1) * 0.05;
    normalize(vectors, q * dim, dim);
    const words = t[0].split(" ").filter((w) => !STOP.includes(w));
    texts.push(words.slice(0, 3).join(" ") || t[0].split(" ").slice(0, 3).join(" "));
  }
  return { vectors, texts };
}

function percentiles(times) {
  const s = times.slice().sort((a, b) => a - b);
  return { p50_ms: s[s.length >> 1], p95_ms: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] };
}

/** Best (lowest p50) of `rounds` timing rounds over all queries. */
function timed(rounds, queries, fn) {
  let best = null;
  for (let round = 0; round < rounds; round++) {
    const times = [];
    for (let q = 0; q < queries; q++) {
      const t = performance.now();
      fn(q);
      times.push(performance.now() - t);
    }
    const p = percentiles(times);
    if (!best || p.p50_ms < best.p50_ms) best = p;
  }
  return best;
}

async function timedAsync(rounds, queries, fn) {
  let best = null;
  const p50s = [];
  for (let round = 0; round < rounds; round++) {
    const times = [];
    for (let q = 0; q < queries; q++) {
      const t = performance.now();
      await fn(q);
      times.push(performance.now() - t);
    }
    const p = percentiles(times);
    p50s.push(p.p50_ms);
    if (!best || p.p50_ms < best.p50_ms) best = p;
  }
  return { ...best, round_p50s: p50s };
}

function heapUsed() {
  if (globalThis.gc) { globalThis.gc(); globalThis.gc(); }
  return performance.memory ? performance.memory.usedJSHeapSize : null;
}

const cache = new Map(); // rows -> data (built once, shared by both sides)
export function data(rows) {
  if (!cache.has(rows)) { cache.clear(); cache.set(rows, makeData(0, rows)); }
  return cache.get(rows);
}

/** Orama: insert, vector and hybrid search, heap, save/load (in memory, no IndexedDB). */
export async function orama(rows, { queries = 30, rounds = 3, similarity = 0 } = {}) {
  const O = await import("../vendor/orama/index.js");
  const dim = 384;
  const d = data(rows);
  const qs = makeQueries(queries, rows);
  const heapBefore = heapUsed();
  let t = performance.now();
  const db = O.create({ schema: { id: "string", text: "string", embedding: `vector[${dim}]` } });
  const docs = new Array(rows);
  for (let i = 0; i < rows; i++) {
    docs[i] = { id: d.ids[i], text: d.texts[i],
                embedding: Array.from(d.vectors.subarray(i * dim, (i + 1) * dim)) };
  }
  const prepMs = performance.now() - t;
  t = performance.now();
  await O.insertMultiple(db, docs, 1000);
  const insertMs = performance.now() - t;
  docs.length = 0;
  const heapAfter = heapUsed();
  const vec = (q) => Array.from(qs.vectors.subarray(q * dim, (q + 1) * dim));
  const qv = Array.from({ length: queries }, (_, q) => vec(q));
  // warm-up
  O.search(db, { mode: "vector", vector: { value: qv[0], property: "embedding" }, similarity,
                 limit: 10 });
  let hits = 0;
  const vector = timed(rounds, queries, (q) => {
    const r = O.search(db, { mode: "vector", vector: { value: qv[q], property: "embedding" },
                             similarity, limit: 10 });
    hits += r.hits.length;
  });
  const hybrid = timed(rounds, queries, (q) => {
    O.search(db, { mode: "hybrid", term: qs.texts[q], properties: ["text"],
                   vector: { value: qv[q], property: "embedding" }, similarity, limit: 10 });
  });
  const fulltext = timed(rounds, queries, (q) => {
    O.search(db, { term: qs.texts[q], properties: ["text"], limit: 10 });
  });
  // persistence: Orama's own save()/load() of the raw index, through JSON (what a page would
  // write to IndexedDB); the IndexedDB write itself is not timed. At 100k the JSON is larger
  // than V8's longest string: then load() is timed from a structuredClone of the raw object.
  t = performance.now();
  const raw = O.save(db);
  const saveMs = performance.now() - t;
  let json = null, jsonError = null, jsonMs = null;
  t = performance.now();
  try { json = JSON.stringify(raw); jsonMs = performance.now() - t; } catch (err) {
    jsonError = String(err);
  }
  const source = json ? null : structuredClone(raw);
  t = performance.now();
  const restored = O.create({ schema: { id: "string", text: "string",
                                        embedding: `vector[${dim}]` } });
  O.load(restored, json ? JSON.parse(json) : source);
  const loadMs = performance.now() - t;
  const restoredCount = O.count(restored);
  const jsonBytes = json ? json.length : null;
  json = null;
  t = performance.now();
  await O.insert(db, { id: "extra", text: "one more memory",
                       embedding: Array.from(d.vectors.subarray(0, dim)) });
  const insertOneMs = performance.now() - t;
  const out = {
    engine: "orama", rows, prep_ms: prepMs, insert_ms: insertMs,
    vector, hybrid, fulltext, mean_vector_hits: hits / (queries * rounds),
    heap_bytes: heapBefore != null ? heapAfter - heapBefore : null,
    save_ms: saveMs, json_ms: jsonMs, json_bytes: jsonBytes, json_error: jsonError,
    load_ms: loadMs, load_from: jsonBytes ? "JSON" : "structuredClone",
    restored_count: restoredCount, insert_one_ms: insertOneMs, similarity,
  };
  return out;
}

/** Omoide's kernel alone (web/kernel/vectors.js VectorIndex), exact and int8. */
export async function kernel(rows, { queries = 30, rounds = 3 } = {}) {
  const V = await import("../kernel/vectors.js");
  const dim = 384;
  const d = data(rows);
  const qs = makeQueries(queries, rows);
  const out = [];
  for (const mode of ["exact", "int8"]) {
    const index = await V.VectorIndex.create(dim, { implementation: "wasm-simd" });
    let t = performance.now();
    index.load(d.vectors, d.ids);
    const loadMs = performance.now() - t;
    for (let i = 0; i < 5; i++) index.search(qs.vectors.subarray(0, dim), 10, { mode });
    const p = timed(rounds, queries, (q) => {
      index.search(qs.vectors.subarray(q * dim, (q + 1) * dim), 10, { mode });
    });
    out.push({ engine: "omoide-kernel", implementation: index.implementation, mode, rows,
               load_ms: loadMs, ...p, memory_bytes: index.memoryBytes });
    index.clear();
  }
  return out;
}

/** An Omoide export (import_data) of rows [start, end), with vectors, for `stamp`. */
export function exportChunk(character, stamp, start, end) {
  const dim = 384;
  const d = makeData(start, end, dim);
  const now = 1_700_000_000;
  const memories = [];
  const vectors = {};
  for (let i = 0; i < end - start; i++) {
    const id = d.ids[i];
    memories.push({ id, text: d.texts[i], kind: "fact", type: "factual", key: null,
                    importance: 0.5, created_at: now + start + i, updated_at: now + start + i });
    vectors[id] = Array.from(d.vectors.subarray(i * dim, (i + 1) * dim),
                             (x) => Math.round(x * 1e6) / 1e6);
  }
  return { format: "omoide-export", version: 1,
           characters: [{ id: character, stamp, memories, vectors }] };
}

/** Fill the engine's `character` up to `rows` (import_data in chunks): ms spent in the
 * import calls (`ms`: the page's packing, the worker, IndexedDB) and in making the chunks
 * (`prep_ms`: the bench's own data, left out as Orama's `insert_ms` leaves out its docs'). */
export async function engineFill(character, stamp, from, rows, chunk = 10000) {
  let ms = 0;
  let prep = 0;
  for (let at = from; at < rows; at += chunk) {
    let t = performance.now();
    const data = exportChunk(character, stamp, at, Math.min(rows, at + chunk));
    prep += performance.now() - t;
    t = performance.now();
    await window.omoide.call("import_data", { data });
    ms += performance.now() - t;
  }
  return { ms, prep_ms: prep };
}

/** Real engine recall through window.omoide.call (query embedding, Python, kernel, touch). */
export async function engineRecall(character, rows, { queries = 20, rounds = 2 } = {}) {
  const qs = makeQueries(queries * rounds * 3, rows);
  const out = {};
  let n = 0;
  for (const mode of ["vector", "hybrid", "fulltext"]) {
    await window.omoide.call("recall", { character, query: "warm up " + mode, k: 10, mode });
    out[mode] = await timedAsync(rounds, queries, async () => {
      // a fresh text every time: no query-embedding cache can help
      await window.omoide.call("recall", { character, query: `${qs.texts[n]} ${n++}`, k: 10,
                                           mode });
    });
  }
  return out;
}

export async function measureMemory() {
  if (!performance.measureUserAgentSpecificMemory) return null;
  try {
    const m = await performance.measureUserAgentSpecificMemory();
    const parts = m.breakdown.filter((b) => b.bytes > 0).map((b) => ({
      bytes: b.bytes, types: b.types,
      scopes: b.attribution.map((a) => `${a.scope}:${(a.url || "").split("/").pop()}`),
    }));
    return { bytes: m.bytes, breakdown: parts };
  } catch (err) {
    return { error: String(err) };
  }
}
