// Omoide's vector kernel for the browser: brute-force top-k over L2-normalized float32 rows.
//
// Three implementations with one behaviour, picked once by loadKernel():
//   "wasm-simd"  kernel/topk.wasm         (C in kernel/topk.c, clang -msimd128)
//   "wasm"       kernel/topk-scalar.wasm  (same source without SIMD)
//   "js"         plain Float32Array loops (engines without WebAssembly)
// Each store holds one index in its own memory (a WebAssembly instance per store): rows are
// copied in once, queries copy only the query vector in and k results out.
//
// Two levels (plus a BM25 scorer, createTextScorer(): kernel/bm25.c over array postings):
//   createStore(dim)       rows addressed by position (0..count-1), swap-with-last removal;
//                          the Python kernel (omoide/browser/wasm_kernel.py) keeps its own id
//                          map and drives this level.
//   new VectorIndex(dim)   the same with string/number ids, for JavaScript callers.
//
// Vectors may be given as Float32Array, as arrays of numbers, or as Pyodide proxies of Python
// buffers (array('f') / memoryview): those are read through getBuffer() without a copy.

const SIMD_PROBE = new Uint8Array([
  // (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt))
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253,
  15, 253, 98, 11,
]);

export const IMPLEMENTATIONS = ["wasm-simd", "wasm", "js"];
const WASM_FILES = { "wasm-simd": "topk.wasm", wasm: "topk-scalar.wasm" };

export function simdSupported() {
  try {
    return typeof WebAssembly === "object" && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const loaded = new Map(); // implementation -> Promise<Kernel>
const ready = new Map(); // implementation -> Kernel, once compiled
let defaultKernel = null;

class Kernel {
  constructor(implementation, module = null) {
    this.implementation = implementation;
    this.module = module;
  }

  createStore(dimension) {
    return this.module ? new WasmStore(this.module, dimension, this.implementation)
      : new JsStore(dimension);
  }
}

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function compile(implementation, options) {
  if (implementation === "js") return new Kernel("js");
  if (typeof WebAssembly !== "object") throw new Error("WebAssembly is not available");
  if (implementation === "wasm-simd" && !simdSupported()) {
    throw new Error("this engine has no WebAssembly SIMD");
  }
  const bytes = options.bytes?.[implementation] ??
    await fetchBytes(new URL(WASM_FILES[implementation], options.baseUrl ?? import.meta.url));
  if (!WebAssembly.validate(bytes)) throw new Error(`${WASM_FILES[implementation]} is not valid here`);
  return new Kernel(implementation, await WebAssembly.compile(bytes));
}

/**
 * Loads (once) and returns a kernel. implementation: "auto" (default: wasm-simd when SIMD
 * validates, else wasm, else js), or one of IMPLEMENTATIONS to force it (tests, benchmarks).
 * options.baseUrl: where the .wasm files are (default: next to this module);
 * options.bytes: {"wasm-simd": ArrayBuffer, wasm: ArrayBuffer} instead of fetching.
 * The first successful "auto" load becomes the default kernel of createStore/VectorIndex.
 */
export async function loadKernel(implementation = "auto", options = {}) {
  if (implementation !== "auto" && !IMPLEMENTATIONS.includes(implementation)) {
    throw new Error(`unknown kernel implementation ${implementation}`);
  }
  const order = implementation === "auto"
    ? (simdSupported() ? IMPLEMENTATIONS : IMPLEMENTATIONS.slice(1)) : [implementation];
  let lastError = null;
  for (const name of order) {
    if (!loaded.has(name)) {
      const promise = compile(name, options);
      loaded.set(name, promise);
      promise.catch(() => loaded.delete(name));
    }
    try {
      const kernel = await loaded.get(name);
      ready.set(name, kernel);
      if (implementation === "auto" || !defaultKernel) defaultKernel = kernel;
      return kernel;
    } catch (err) {
      if (implementation !== "auto") throw err;
      console.warn(`vector kernel ${name} unavailable, trying the next one:`, err);
      lastError = err;
    }
  }
  throw lastError ?? new Error("no vector kernel available");
}

/** A kernel loadKernel() already compiled, synchronously (null when it was not loaded). */
export function loadedKernel(implementation) {
  return ready.get(implementation) ?? null;
}

/** The implementation createStore() uses now ("wasm-simd", "wasm", "js"), or null. */
export function activeImplementation() {
  return defaultKernel?.implementation ?? null;
}

/**
 * A BM25 scorer over array postings (kernel/bm25.c, its own WebAssembly instance), or null
 * when the kernel is plain JavaScript (the engine then scores in Python).
 */
export function createTextScorer(kernel = defaultKernel) {
  if (!kernel) throw new Error("no vector kernel loaded: await loadKernel() first");
  return kernel.module ? new WasmTextScorer(kernel.module) : null;
}

/** A position-addressed store on the default kernel (call loadKernel() first). */
export function createStore(dimension, kernel = defaultKernel) {
  if (!kernel) throw new Error("no vector kernel loaded: await loadKernel() first");
  return kernel.createStore(dimension);
}

// ---- input adapters -------------------------------------------------------------------------

function withTyped(value, Type, format, fn) {
  if (value instanceof Type) return fn(value);
  if (value && typeof value.getBuffer === "function") { // a Pyodide PyProxy of a buffer
    const buffer = value.getBuffer(format);
    try {
      if (!(buffer.data instanceof Type)) throw new TypeError(`expected a ${format} buffer`);
      return fn(buffer.data);
    } finally {
      buffer.release();
    }
  }
  if (value && (Array.isArray(value) || ArrayBuffer.isView(value))) return fn(Type.from(value));
  if (value && typeof value.toJs === "function") return fn(Type.from(value.toJs()));
  throw new TypeError(`expected a ${Type.name}`);
}

const withFloat32 = (value, fn) => withTyped(value, Float32Array, "f32", fn);
const withFloat64 = (value, fn) => withTyped(value, Float64Array, "f64", fn);
const withInt32 = (value, fn) => withTyped(value, Int32Array, "i32", fn);

function checkDimension(length, dimension, what) {
  if (length % dimension !== 0 || length === 0) {
    throw new RangeError(`${what}: ${length} floats is not a whole number of ${dimension}-d rows`);
  }
  return length / dimension;
}

function moments(sum, sumsq, count) {
  if (count <= 0) return { mean: 0, std: 0 };
  const mean = sum / count;
  return { mean, std: Math.sqrt(Math.max(sumsq / count - mean * mean, 0)) };
}

// ---- WebAssembly store --------------------------------------------------------------------

class WasmStore {
  constructor(module, dimension, implementation) {
    if (!Number.isInteger(dimension) || dimension <= 0) throw new RangeError("bad dimension");
    this.implementation = implementation;
    this.dimension = dimension;
    this.instance = new WebAssembly.Instance(module, {});
    this.x = this.instance.exports;
    this.memory = this.x.memory;
    if (this.x.vk_init(dimension) !== 0) throw new RangeError(`bad dimension ${dimension}`);
  }

  get count() { return this.x.vk_count(); }
  get capacity() { return this.x.vk_capacity(); }
  get memoryBytes() { return this.memory.buffer.byteLength; }

  // Views are made fresh after every call that may grow memory (growth detaches the buffer).
  f32(ptr, length) { return new Float32Array(this.memory.buffer, ptr >>> 0, length); }
  i32(ptr, length) { return new Int32Array(this.memory.buffer, ptr >>> 0, length); }

  reserve(rows) {
    if (this.x.vk_reserve(rows) !== 0) throw new RangeError(`out of memory reserving ${rows} rows`);
  }

  /** Appends rows (n x dim floats); returns the position of the first one. */
  append(rows) {
    return withFloat32(rows, (data) => {
      const n = checkDimension(data.length, this.dimension, "append");
      const first = this.count;
      const ptr = this.x.vk_append_ptr(n);
      if (ptr === 0) throw new RangeError(`out of memory adding ${n} rows`);
      this.f32(ptr, data.length).set(data);
      this.x.vk_commit(n);
      return first;
    });
  }

  set(position, row) {
    withFloat32(row, (data) => {
      if (data.length !== this.dimension) throw new RangeError("set: wrong dimension");
      const ptr = this.x.vk_append_ptr(1);
      if (ptr === 0) throw new RangeError("out of memory");
      this.f32(ptr, data.length).set(data);
      if (this.x.vk_set_row(position) !== 0) throw new RangeError(`no row ${position}`);
    });
  }

  /** Swap-with-last removal: returns the old position of the row moved into `position`, or -1
   *  when nothing moved (it was the last row). */
  remove(position) {
    const moved = this.x.vk_remove(position);
    if (moved === -2) throw new RangeError(`no row ${position}`);
    return moved;
  }

  clear() { this.x.vk_clear(); }

  row(position) {
    if (!(position >= 0 && position < this.count)) throw new RangeError(`no row ${position}`);
    const d = this.dimension;
    return this.f32(this.x.vk_rows_ptr() + position * d * 4, d).slice();
  }

  /** A copy of rows [start, end) as one Float32Array. */
  rows(start = 0, end = this.count) {
    const d = this.dimension;
    return this.f32(this.x.vk_rows_ptr() + start * d * 4, (end - start) * d).slice();
  }

  /** The int8 copy of a row: {scale, values} (values * scale ~ the float32 row). */
  quantized(position) {
    if (!(position >= 0 && position < this.count)) throw new RangeError(`no row ${position}`);
    const stride = (this.dimension + 15) & ~15;
    const at = (this.x.vk_int8_ptr() >>> 0) + position * stride;
    return {
      scale: this.f32(this.x.vk_scales_ptr() + position * 4, 1)[0],
      values: new Int8Array(this.memory.buffer, at, this.dimension).slice(),
    };
  }

  #prepare(k, candidates, n, query) {
    if (this.x.vk_prepare(k, candidates, n) !== 0) throw new RangeError("out of memory");
    withFloat32(query, (q) => {
      if (q.length !== this.dimension) {
        throw new RangeError(`expected a ${this.dimension}-d query, got ${q.length}`);
      }
      this.f32(this.x.vk_query_ptr(), q.length).set(q);
    });
  }

  /**
   * Top-k positions by dot product, best first. candidates 0: exact float32 scan;
   * candidates > 0: int8 scan keeping that many, then exact float32 rerank. subset: positions
   * to consider (null: all rows). Returns {positions: Int32Array, scores: Float32Array, mean,
   * std, count} where mean/std/count describe every scanned score.
   */
  search(query, k, candidates = 0, subset = null, threshold = -Infinity) {
    const run = (positions) => {
      const n = positions ? positions.length : 0;
      this.#prepare(k, candidates, n, query);
      if (positions) this.i32(this.x.vk_subset_ptr(), n).set(positions);
      const got = this.x.vk_search(k, candidates, positions ? n : -1, threshold);
      if (got < 0) throw new Error("vk_search failed");
      const stats = new Float64Array(this.memory.buffer, this.x.vk_stats_ptr() >>> 0, 4);
      return {
        positions: this.i32(this.x.vk_out_idx_ptr(), got).slice(),
        scores: this.f32(this.x.vk_out_score_ptr(), got).slice(),
        ...moments(stats[0], stats[1], stats[2]),
        count: stats[2],
      };
    };
    return subset == null ? run(null) : withInt32(subset, run);
  }

  /** Exact scores against the given positions, in their order. */
  scoreSubset(query, subset) {
    return withInt32(subset, (positions) => {
      const n = positions.length;
      const count = this.count;
      for (const p of positions) if (!(p >= 0 && p < count)) throw new RangeError(`no row ${p}`);
      this.#prepare(0, 0, n, query);
      this.i32(this.x.vk_subset_ptr(), n).set(positions);
      this.x.vk_score_subset(n);
      return this.f32(this.x.vk_out_score_ptr(), n).slice();
    });
  }
}

// ---- BM25 scorer ------------------------------------------------------------------------------

// Postings come as the engine keeps them (py/omoide/engine/bm25.py): one Int32Array of
// (ordinal, tf_text, tf_context) triples for all query terms, term t's starting at
// offsets[t] (in int32 words, offsets[terms] = the end), with idfs[t]; the documents' lengths
// of text and context as two per-ordinal Int32Arrays (at least `ordinals` long) and `table`,
// the number that names their contents (the same number: the same lengths at the same
// ordinals, maybe more appended); and the BM25F constants (engine Query.constants(): k1,
// textBase, textSlope, contextWeight, contextBase, contextSlope). The postings are copied in
// for each query; the length tables stay in WebAssembly memory, so a query copies only the
// ordinals added since the last one of the same table (all of them for another table, or
// when the tables had to move). The top (ties at the k-th place included) comes out; the
// loop over postings runs in kernel/bm25.c.
const POSTING_STRIDE = 3;

class WasmTextScorer {
  #table = null; // the table whose lengths are in WebAssembly memory ...
  #copied = 0; // ... for ordinals 0 .. #copied - 1 ...
  #lengthsAt = -1; // ... at this address

  constructor(module) {
    this.instance = new WebAssembly.Instance(module, {});
    this.x = this.instance.exports;
    this.memory = this.x.memory;
  }

  get memoryBytes() { return this.memory.buffer.byteLength; }

  #load(postings, offsets, idfs, tables, constants, ordinals, subset, k) {
    const terms = idfs.length;
    const [lengths, contextLengths, table] = tables;
    if (offsets.length !== terms + 1 || offsets[terms] !== postings.length ||
        postings.length % POSTING_STRIDE !== 0 || constants.length !== 6 ||
        lengths.length < ordinals || contextLengths.length < ordinals) {
      throw new RangeError("postings, offsets, idfs and lengths do not agree");
    }
    const n = subset ? subset.length : 0;
    if (this.x.bm_prepare(terms, postings.length, ordinals, n, k) !== 0) {
      throw new RangeError("out of memory scoring BM25");
    }
    const buffer = this.memory.buffer;
    const at = this.x.bm_lengths_ptr() >>> 0;
    const from = table === this.#table && at === this.#lengthsAt && this.#copied <= ordinals
      ? this.#copied : 0;
    if (from < ordinals) {
      const cap = this.x.bm_cap() >>> 0;
      new Int32Array(buffer, at + from * 4, ordinals - from).set(lengths.subarray(from, ordinals));
      new Int32Array(buffer, at + (cap + from) * 4, ordinals - from)
        .set(contextLengths.subarray(from, ordinals));
    }
    this.#table = table;
    this.#copied = Math.max(from, ordinals);
    this.#lengthsAt = at;
    new Float64Array(buffer, this.x.bm_idf_ptr() >>> 0, terms).set(idfs);
    new Int32Array(buffer, this.x.bm_offsets_ptr() >>> 0, terms + 1).set(offsets);
    new Int32Array(buffer, this.x.bm_postings_ptr() >>> 0, postings.length).set(postings);
    if (subset) new Int32Array(buffer, this.x.bm_subset_ptr() >>> 0, n).set(subset);
  }

  #inputs(postings, offsets, idfs, lengths, contextLengths, fn) {
    return withInt32(postings, (p) => withInt32(offsets, (o) => withFloat64(idfs,
      (f) => withInt32(lengths, (l) => withInt32(contextLengths, (c) => fn(p, o, f, l, c))))));
  }

  /** {ordinals: Int32Array, scores: Float64Array, total, totalSq}: see bm_top. lengths,
   *  contextLengths, table: the documents' length tables and their name (above); subset:
   *  null or the only ordinals to score; constants: the six BM25F constants, as numbers. */
  top(postings, offsets, idfs, lengths, contextLengths, table, ordinals, subset, k,
    ...constants) {
    return this.#inputs(postings, offsets, idfs, lengths, contextLengths, (p, o, f, l, c) => {
      const run = (s) => {
        this.#load(p, o, f, [l, c, table], constants, ordinals, s, k);
        const got = this.x.bm_top(f.length, ordinals, s ? s.length : -1, k, ...constants);
        if (got < 0) throw new Error("bm_top failed");
        const buffer = this.memory.buffer;
        const stats = new Float64Array(buffer, this.x.bm_stats_ptr() >>> 0, 2);
        return {
          ordinals: new Int32Array(buffer, this.x.bm_out_ord_ptr() >>> 0, got).slice(),
          scores: new Float64Array(buffer, this.x.bm_out_score_ptr() >>> 0, got).slice(),
          total: stats[0],
          totalSq: stats[1],
        };
      };
      return subset == null ? run(null) : withInt32(subset, run);
    });
  }

  /** Float64Array: the score of each ordinal of `wanted`, in its order (0: no match). */
  at(postings, offsets, idfs, lengths, contextLengths, table, ordinals, wanted, ...constants) {
    return this.#inputs(postings, offsets, idfs, lengths, contextLengths,
      (p, o, f, l, c) => withInt32(wanted, (w) => {
        this.#load(p, o, f, [l, c, table], constants, ordinals, w, 0);
        const got = this.x.bm_at(f.length, ordinals, w.length, ...constants);
        if (got < 0) throw new Error("bm_at failed");
        return new Float64Array(this.memory.buffer, this.x.bm_out_score_ptr() >>> 0, got)
          .slice();
      }));
  }
}

// ---- plain JavaScript store ---------------------------------------------------------------

// A bounded min-heap of (score, position) whose root is the worst kept entry; ties keep the
// lower position, like the C kernel.
class TopK {
  constructor(k) {
    this.k = k;
    this.score = new Float64Array(k);
    this.pos = new Int32Array(k);
    this.size = 0;
  }

  static worse(sa, ia, sb, ib) { return sa < sb || (sa === sb && ia > ib); }

  offer(s, x) {
    const { score, pos } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!TopK.worse(s, x, score[p], pos[p])) break;
        score[i] = score[p]; pos[i] = pos[p]; i = p;
      }
      score[i] = s; pos[i] = x;
    } else if (this.k > 0 && TopK.worse(score[0], pos[0], s, x)) {
      this.#siftDown(s, x);
    }
  }

  #siftDown(s, x) {
    const { score, pos, size } = this;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && TopK.worse(score[c + 1], pos[c + 1], score[c], pos[c])) c++;
      if (!TopK.worse(score[c], pos[c], s, x)) break;
      score[i] = score[c]; pos[i] = pos[c]; i = c;
    }
    score[i] = s; pos[i] = x;
  }

  drain() {
    const n = this.size;
    const positions = new Int32Array(n);
    const scores = new Float32Array(n);
    while (this.size > 0) {
      const at = this.size - 1;
      positions[at] = this.pos[0];
      scores[at] = this.score[0];
      this.size--;
      if (this.size > 0) this.#siftDown(this.score[this.size], this.pos[this.size]);
    }
    return { positions, scores };
  }
}

class JsStore {
  constructor(dimension) {
    if (!Number.isInteger(dimension) || dimension <= 0) throw new RangeError("bad dimension");
    this.implementation = "js";
    this.dimension = dimension;
    this.data = new Float32Array(16 * dimension);
    this.count = 0;
  }

  get capacity() { return this.data.length / this.dimension; }
  get memoryBytes() { return this.data.byteLength; }

  reserve(rows) { // the growth rule of topk.c's vk_reserve
    if (rows <= this.capacity) return;
    let cap = this.count === 0 ? rows : this.capacity;
    while (cap < rows) cap += cap < 65536 ? cap : cap >> 2;
    const grown = new Float32Array(cap * this.dimension);
    grown.set(this.data.subarray(0, this.count * this.dimension));
    this.data = grown;
  }

  append(rows) {
    return withFloat32(rows, (data) => {
      const n = checkDimension(data.length, this.dimension, "append");
      const first = this.count;
      this.reserve(first + n);
      this.data.set(data, first * this.dimension);
      this.count += n;
      return first;
    });
  }

  set(position, row) {
    withFloat32(row, (data) => {
      if (data.length !== this.dimension) throw new RangeError("set: wrong dimension");
      if (!(position >= 0 && position < this.count)) throw new RangeError(`no row ${position}`);
      this.data.set(data, position * this.dimension);
    });
  }

  remove(position) {
    if (!(position >= 0 && position < this.count)) throw new RangeError(`no row ${position}`);
    const last = --this.count;
    if (position === last) return -1;
    const d = this.dimension;
    this.data.copyWithin(position * d, last * d, last * d + d);
    return last;
  }

  clear() { this.count = 0; }

  quantized() { return null; } // the JS store keeps no int8 copy

  row(position) {
    if (!(position >= 0 && position < this.count)) throw new RangeError(`no row ${position}`);
    return this.data.slice(position * this.dimension, (position + 1) * this.dimension);
  }

  rows(start = 0, end = this.count) {
    return this.data.slice(start * this.dimension, end * this.dimension);
  }

  #dot(q, position) {
    const { data, dimension: d } = this;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    let o = position * d, j = 0;
    for (; j + 4 <= d; j += 4, o += 4) {
      s0 += q[j] * data[o]; s1 += q[j + 1] * data[o + 1];
      s2 += q[j + 2] * data[o + 2]; s3 += q[j + 3] * data[o + 3];
    }
    for (; j < d; j++, o++) s0 += q[j] * data[o];
    return Math.fround((s0 + s1) + (s2 + s3));
  }

  #query(query) {
    return withFloat32(query, (q) => {
      if (q.length !== this.dimension) {
        throw new RangeError(`expected a ${this.dimension}-d query, got ${q.length}`);
      }
      return Float32Array.from(q);
    });
  }

  // int8 prefiltering does not pay off in plain JS (an Int8Array loop is slower than the
  // float32 one), so `candidates` is ignored: the JS store always returns the exact top-k.
  search(query, k, candidates = 0, subset = null, threshold = -Infinity) {
    const q = this.#query(query);
    const top = new TopK(k);
    let sum = 0, sumsq = 0, seen = 0;
    const visit = (p) => {
      const s = this.#dot(q, p);
      sum += s; sumsq += s * s; seen++;
      if (s >= threshold) top.offer(s, p);
    };
    if (subset == null) {
      for (let p = 0; p < this.count; p++) visit(p);
    } else {
      withInt32(subset, (positions) => {
        for (const p of positions) if (p >= 0 && p < this.count) visit(p);
      });
    }
    return { ...top.drain(), ...moments(sum, sumsq, seen), count: seen };
  }

  scoreSubset(query, subset) {
    const q = this.#query(query);
    return withInt32(subset, (positions) => {
      const out = new Float32Array(positions.length);
      positions.forEach((p, t) => {
        if (!(p >= 0 && p < this.count)) throw new RangeError(`no row ${p}`);
        out[t] = this.#dot(q, p);
      });
      return out;
    });
  }
}

// ---- id-addressed index for JavaScript callers ----------------------------------------------

export class VectorIndex {
  #store;
  #ids = []; // position -> id
  #position = new Map(); // id -> position

  /** new VectorIndex(dimension, {kernel}) after loadKernel(); or await VectorIndex.create(). */
  constructor(dimension, { kernel = defaultKernel } = {}) {
    this.#store = createStore(dimension, kernel);
  }

  static async create(dimension, { implementation = "auto", ...options } = {}) {
    return new VectorIndex(dimension, { kernel: await loadKernel(implementation, options) });
  }

  get implementation() { return this.#store.implementation; }
  get dimension() { return this.#store.dimension; }
  get count() { return this.#ids.length; }
  get memoryBytes() { return this.#store.memoryBytes; }

  has(id) { return this.#position.has(id); }
  ids() { return this.#ids.slice(); }

  /** Inserts rows, overwriting the vector of ids already present. vectors: n x dim floats. */
  add(ids, vectors) {
    withFloat32(vectors, (data) => {
      const d = this.dimension;
      const n = ids.length;
      if (data.length !== n * d) {
        throw new RangeError(`expected ${n} x ${d} floats, got ${data.length}`);
      }
      const fresh = []; // rows of `data` to append (ids not in the index yet)
      const freshAt = new Map(); // new id -> index into fresh (a repeated id: last row wins)
      const updates = new Map(); // id already present -> its last row in `data`
      for (let r = 0; r < n; r++) {
        const id = ids[r];
        if (this.#position.has(id)) updates.set(id, r);
        else if (freshAt.has(id)) fresh[freshAt.get(id)] = r;
        else { freshAt.set(id, fresh.length); fresh.push(r); }
      }
      if (fresh.length) {
        let block = data;
        if (fresh.length !== n) {
          block = new Float32Array(fresh.length * d);
          fresh.forEach((r, t) => block.set(data.subarray(r * d, r * d + d), t * d));
        }
        const first = this.#store.append(block);
        fresh.forEach((r, t) => {
          this.#ids.push(ids[r]);
          this.#position.set(ids[r], first + t);
        });
      }
      for (const [id, r] of updates) {
        this.#store.set(this.#position.get(id), data.subarray(r * d, r * d + d));
      }
    });
  }

  /** Bulk load (e.g. from IndexedDB segments): rows is ids.length x dim floats. */
  load(rows, ids) {
    if (this.count === 0) this.#store.reserve(ids.length);
    this.add(ids, rows);
  }

  /** Removes one id; false when it was not there. */
  remove(id) {
    const position = this.#position.get(id);
    if (position === undefined) return false;
    this.#position.delete(id);
    const moved = this.#store.remove(position);
    const lastId = this.#ids.pop();
    if (moved >= 0) {
      this.#ids[position] = lastId;
      this.#position.set(lastId, position);
    }
    return true;
  }

  clear() {
    this.#store.clear();
    this.#ids = [];
    this.#position.clear();
  }

  vector(id) {
    const position = this.#position.get(id);
    if (position === undefined) throw new RangeError(`unknown id ${id}`);
    return this.#store.row(position);
  }

  /** The int8 copy of a row as {scale, values}; null for the JS implementation. */
  quantized(id) {
    const position = this.#position.get(id);
    if (position === undefined) throw new RangeError(`unknown id ${id}`);
    return this.#store.quantized(position);
  }

  /** {ids, rows}: every row, in storage order (for snapshots). */
  export() { return { ids: this.ids(), rows: this.#store.rows() }; }

  /**
   * The k best rows by cosine, best first: {ids, scores, mean, std, count}.
   * mode "exact" (float32 scan) or "int8" (int8 scan of max(rerankFactor*k, minCandidates)
   * candidates, exact float32 rerank: scores are always exact). threshold: minimum score.
   * allowed: ids to restrict the candidates to.
   */
  search(query, k, { mode = "exact", threshold = -Infinity, allowed = null, rerankFactor = 8,
    minCandidates = 64 } = {}) {
    if (mode !== "exact" && mode !== "int8") throw new RangeError(`unknown mode ${mode}`);
    let subset = null;
    if (allowed != null) {
      const positions = [];
      for (const id of new Set(allowed)) {
        const p = this.#position.get(id);
        if (p !== undefined) positions.push(p);
      }
      subset = Int32Array.from(positions);
    }
    const eligible = subset ? subset.length : this.count;
    k = Math.max(0, Math.min(k, eligible));
    const candidates = mode === "int8" ? Math.max(rerankFactor * k, minCandidates, k) : 0;
    const r = this.#store.search(query, k, candidates, subset, threshold);
    return {
      ids: Array.from(r.positions, (p) => this.#ids[p]),
      scores: r.scores,
      mean: r.mean,
      std: r.std,
      count: eligible,
    };
  }

  /** Exact scores of the query against the given ids, in their order. */
  scores(query, ids) {
    const positions = Int32Array.from(ids, (id) => {
      const p = this.#position.get(id);
      if (p === undefined) throw new RangeError(`unknown id ${id}`);
      return p;
    });
    return this.#store.scoreSubset(query, positions);
  }
}
