// The embedding worker: Transformers.js on our own converted models, WebGPU when it works,
// WebAssembly otherwise. Called by the page (and the engine) through Comlink.
import * as Comlink from "./vendor/comlink/comlink.mjs";
import * as transformers from "./vendor/transformers/transformers.js";
import * as modelFiles from "./embed/model-files.js";
import { ModelProgress } from "./embed/progress.js";
import { pickRuntime, wasmPaths } from "./embed/runtime.js";
import { buildTokenizer, compactTokenizer, tokenizerFromCompact } from "./embed/unigram.js";

const { AutoModel, env, FeatureExtractionPipeline, PreTrainedTokenizer } = transformers;

const base = new URL("./", import.meta.url);
const PROGRESS_EVERY_MS = 100;

// Never reach for a hub or CDN: models and the onnxruntime-web wasm come from our origin.
env.allowRemoteModels = false;
env.allowLocalModels = true;
// A path, not a URL: Transformers.js only probes local files (tokenizer_config.json) for paths.
env.localModelPath = new URL("models/", base).pathname;
env.useWasmCache = false;
// Transformers.js reads model files from the device's model store, which fetchModelFiles
// fills (web/embed/model-files.js).
env.useBrowserCache = false;
env.useCustomCache = true;
env.customCache = modelFiles.transformersCache(env.localModelPath);
// Multi-threaded WASM needs SharedArrayBuffer, which cross-origin isolation provides. Every
// core, up to 4: inference is > 95% of an embedding and the engine worker waits for it
// (2 threads on a 2-core box ran e5 at 58 texts/s vs 38 with one).
// A `threads` parameter on the worker's URL overrides it (the benchmark measures 1 vs n).
const askedThreads = Number(new URL(self.location.href).searchParams.get("threads")) || 0;
env.backends.onnx.wasm.numThreads = !self.crossOriginIsolated ? 1
  : askedThreads || Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2));

let registry = null;
let manifest = null;
// {extractor, model, dtype, device, reason, info, graph}; graph: where the model's graph was
// optimized, "build" (buildtools/models/optimize.py) or "session" (by onnxruntime, at set-up).
let current = null;

async function fetchJson(path) {
  const response = await fetch(new URL(path, base));
  if (!response.ok) throw new Error(`cannot read ${path}: HTTP ${response.status}`);
  return response.json();
}

async function catalogue() {
  registry ??= await fetchJson("models/registry.json");
  manifest ??= await fetchJson("models/manifest.json");
  return { registry, manifest };
}

function modelInfo(modelId) {
  const info = registry.models.find((m) => m.id === modelId);
  if (!info) throw new Error(`unknown model ${modelId}`);
  return info;
}

// The files Transformers.js will load for this dtype, with their sizes from the manifest.
function expectedFiles(modelId, dtype) {
  const files = manifest.models[modelId]?.files ?? {};
  const onnx = modelInfo(modelId).onnx_files[dtype];
  const wanted = ["config.json", "tokenizer.json", "tokenizer_config.json", onnx];
  return Object.fromEntries(wanted.filter((f) => f in files).map((f) => [f, files[f].size]));
}

// The onnxruntime-web build this worker runs (web/embed/runtime.js), chosen once before the
// first session: onnxruntime-web loads its WebAssembly once per worker.
let runtime = null;
async function startRuntime() {
  if (!runtime) {
    runtime = await pickRuntime();
    env.backends.onnx.wasm.wasmPaths = wasmPaths(base, runtime);
  }
  return runtime;
}

async function pickDevice(requested) {
  if (requested === "wasm") return { device: "wasm", reason: "WebAssembly was requested" };
  if (!("gpu" in navigator)) return { device: "wasm", reason: "WebGPU is not available here" };
  if (await startRuntime() !== "asyncify") {
    return { device: "wasm", reason: "no WebGPU adapter was found" };
  }
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  if (!adapter) return { device: "wasm", reason: "no WebGPU adapter was found" };
  return { device: "webgpu", reason: "WebGPU adapter found" };
}

// Read a response body with byte progress; one network download per file.
async function readWithProgress(response, file, progress, report) {
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    progress.apply({ status: "progress", file, loaded });
    report();
  }
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

// Make sure every file of the model is on this device (web/embed/model-files.js): current
// files are not downloaded again, downloads are checked against the build manifest's sha256
// before they are stored. Returns the files used from an older build: kept, and used as they
// are, when no download is possible (offline); replaced when it is.
async function fetchModelFiles(modelId, dtype, progress, onProgress) {
  const meta = manifest.models[modelId].files;
  let last = 0;
  const report = (force = false) => {
    const now = performance.now();
    if (force || now - last >= PROGRESS_EVERY_MS) {
      last = now;
      onProgress?.(progress.snapshot());
    }
  };
  const stale = [];
  for (const file of Object.keys(expectedFiles(modelId, dtype))) {
    const url = new URL(`${env.localModelPath}${modelId}/${file}`, base).href;
    const path = `${modelId}/${file}`;
    const state = await modelFiles.state(path, meta[file].sha256, url);
    if (state === "current") {
      progress.markCacheHit(file);
      continue;
    }
    progress.apply({ status: "download", file });
    report(true);
    let bytes;
    try {
      const response = await fetch(url, { cache: "no-store" });
      if (!response.ok) throw new Error(`${file}: HTTP ${response.status}`);
      bytes = await readWithProgress(response, file, progress, report);
    } catch (err) {
      if (state === "missing") throw err;
      stale.push(file);
      progress.markCacheHit(file);
      continue;
    }
    const digest = await modelFiles.sha256(bytes);
    if (digest !== meta[file].sha256) throw new Error(`${file}: checksum mismatch, not stored`);
    await modelFiles.write(path, bytes, digest);
    if (file.startsWith("tokenizer") && tokenizer?.modelId === modelId) tokenizer = null;
    progress.apply({ status: "done", file });
    report(true);
  }
  return { stale };
}

// Which model builds are complete on this device, i.e. usable offline, with their sizes.
async function availability() {
  await catalogue();
  const out = {};
  for (const info of registry.models) {
    for (const dtype of info.dtypes) {
      const files = expectedFiles(info.id, dtype);
      const hits = await Promise.all(Object.keys(files).map((file) => modelFiles.has(
        `${info.id}/${file}`, new URL(`${env.localModelPath}${info.id}/${file}`, base).href)));
      out[`${info.id}@${dtype}`] = {
        cached: hits.length > 0 && hits.every(Boolean),
        bytes: Object.values(files).reduce((a, b) => a + b, 0),
      };
    }
  }
  return out;
}

// Download a model's files to this device without making it the loaded model (the
// "download for offline use" button, and the check before a model switch).
async function download({ model, dtype = "q8" } = {}, onProgress) {
  await catalogue();
  const { progress } = await downloadFiles(model, dtype, onProgress);
  progress.ready = true;
  onProgress?.(progress.snapshot());
  return { model, dtype, cached: true };
}

// The model's files to this device with progress; a failure is reported, then thrown.
async function downloadFiles(model, dtype, onProgress) {
  const progress = new ModelProgress(model, dtype, expectedFiles(model, dtype));
  let stale;
  try {
    ({ stale } = await fetchModelFiles(model, dtype, progress, onProgress));
  } catch (err) {
    progress.fail(err);
    onProgress?.(progress.snapshot());
    throw new Error(`Download of ${model} (${dtype}) failed: ${err.message}`);
  }
  return { progress, stale };
}

// The graph the build already optimized (buildtools/models/optimize.py) is not optimized
// again on WebAssembly: that took ~1.3 s of every e5 set-up. A WebGPU session keeps
// onnxruntime's default, and so does a file from an older build still on this device.
// Returns where the graph's optimization happens: "build" or "session".
function graphOptimization(modelId, dtype, device, stale) {
  const file = modelInfo(modelId).onnx_files[dtype];
  const optimized = manifest.models[modelId]?.graph_optimization?.[file];
  return device === "wasm" && optimized && !stale.includes(file) ? "build" : "session";
}

// Also returns when (ms after the call) the tokenizer and the session were ready.
async function createExtractor(modelId, dtype, device, stale = []) {
  const started = performance.now();
  const since = () => Math.round(performance.now() - started);
  const graph = graphOptimization(modelId, dtype, device, stale);
  const sessionOptions = graph === "build" ? { graphOptimizationLevel: "disabled" } : {};
  const times = {};
  const [tokenizer, model] = await Promise.all([
    tokenizerFor(modelId).then((t) => {
      times.tokenizer = since();
      times.tokenizer_from = tokenizerSource();
      return t;
    }),
    AutoModel.from_pretrained(modelId, { dtype, device, session_options: sessionOptions })
      .then((m) => { times.session = since(); return m; })]);
  const extractor = new FeatureExtractionPipeline({ task: "feature-extraction", model, tokenizer });
  // The first run of a new session took 2-4x a later one (measured in the app: 0.7-1.4 s vs
  // 0.2-0.5 s for a remember's embedding at load 10): one short run here moves that cost into
  // the set-up, so the first remember after the warm-up does not pay it.
  await runBatch(extractor, [(modelInfo(modelId).passage_prefix ?? "") + "warm-up"]);
  times.first_run = since();
  return { extractor, graph, times };
}

// The tokenizer of one model, built once and kept (the last model asked for). e5's (250,000
// pieces) took ~1.7 s of JavaScript in Transformers.js's own construction, as long as its
// session; web/embed/unigram.js builds it without the character trie that cost that.
let tokenizer = null; // {modelId, promise, from: "compact" | "json" once built}
function tokenizerFor(modelId) {
  if (tokenizer?.modelId !== modelId) {
    const holder = { modelId, from: null };
    const promise = loadTokenizer(modelId).then(({ built, from }) => {
      holder.from = from;
      return built;
    });
    holder.promise = promise;
    tokenizer = holder;
    promise.catch(() => {
      if (tokenizer?.promise === promise) tokenizer = null;
    });
  }
  return tokenizer.promise;
}

// Where the loaded tokenizer was built from: "compact" or "json".
const tokenizerSource = () => tokenizer?.from ?? null;

// The tokenizer class comes from tokenizer_config.json, as AutoTokenizer picks it. A Unigram
// vocabulary is read from its compact form when this device made one from the same
// tokenizer.json (web/embed/unigram.js; ~0.3 s of e5's set-up less); otherwise tokenizer.json
// is parsed and the compact form written once the set-up is done.
async function loadTokenizer(modelId) {
  const config = await readModelJson(modelId, "tokenizer_config.json");
  const name = config.tokenizer_class?.replace(/Fast$/, "");
  const TokenizerClass = (name && transformers[name]) || PreTrainedTokenizer;
  const source = await modelFiles.digest(`${modelId}/tokenizer.json`);
  const compactPath = `${modelId}/${COMPACT_TOKENIZER}`;
  const compact = source && await modelFiles.readChecked(compactPath);
  const fromCompact = compact && tokenizerFromCompact(TokenizerClass, compact, config, source);
  if (fromCompact) return { built: fromCompact, from: "compact" };
  const json = await readModelJson(modelId, "tokenizer.json");
  const built = buildTokenizer(TokenizerClass, json, config);
  if (source) afterSetup = () => writeCompactTokenizer(compactPath, json, source);
  return { built, from: "json" };
}

// Derived from tokenizer.json on this device, beside the model's files (never downloaded).
const COMPACT_TOKENIZER = "tokenizer.compact";
let afterSetup = null; // work left for when the set-up is done (the compact form's write)

async function writeCompactTokenizer(path, json, source) {
  const bytes = compactTokenizer(json, source);
  if (bytes) await modelFiles.write(path, bytes, await modelFiles.sha256(bytes));
}

async function readModelJson(modelId, file) {
  const bytes = await modelFiles.read(`${modelId}/${file}`);
  if (!bytes) throw new Error(`${modelId}: ${file} is not on this device`);
  return JSON.parse(new TextDecoder().decode(bytes));
}

// Loads are serialized: the page and the engine may both ask for a model at once.
let loading = Promise.resolve();
// The page's background warm-up after ready: {model, dtype, cancelled} until it settles.
// Cancelling it drops the model it was creating; a load asked for meanwhile (the engine's
// first remember) takes it over instead, so nobody waits twice.
let warming = null;
function load(options, onProgress) {
  if (warming && warming.model === options?.model && warming.dtype === (options?.dtype ?? "q8")) {
    warming.cancelled = false;
  }
  const run = loading.then(() => loadNow(options, onProgress));
  loading = run.catch(() => {});
  return run;
}

function warm({ model, dtype = "q8" } = {}) {
  const job = { model, dtype, cancelled: false };
  warming = job;
  const run = loading.then(() => loadNow({ model, dtype }, null, job));
  loading = run.catch(() => {});
  return run.finally(() => {
    if (warming === job) warming = null;
  });
}

function cancelWarm() {
  if (!warming) return { cancelled: false };
  warming.cancelled = true;
  return { cancelled: true };
}

const cancelledError = () => Object.assign(new Error("model set-up cancelled"),
  { name: "CANCELLED" });

async function loadNow({ model, dtype = "q8", device = "auto" } = {}, onProgress, job = null) {
  if (job?.cancelled) throw cancelledError();
  await catalogue();
  if (current && current.model === model && current.dtype === dtype && device === "auto") {
    return { ...status(), dimension: current.info.dimension, loadMs: 0, progress: null };
  }
  const info = modelInfo(model);
  if (!info.dtypes.includes(dtype)) throw new Error(`${model} has no ${dtype} build`);
  const started = performance.now();
  await startRuntime();
  const picked = await pickDevice(device);
  const { progress, stale } = await downloadFiles(model, dtype, onProgress);
  if (job?.cancelled) throw cancelledError();
  progress.initialising = true;
  onProgress?.(progress.snapshot());
  const filesMs = Math.round(performance.now() - started);
  let extractor;
  let graph;
  let times;
  try {
    ({ extractor, graph, times } = await createExtractor(model, dtype, picked.device, stale));
  } catch (err) {
    if (picked.device !== "webgpu") throw err;
    picked.device = "wasm";
    picked.reason = `WebGPU failed to start (${err.message}); using WebAssembly`;
    ({ extractor, graph, times } = await createExtractor(model, dtype, "wasm", stale));
  }
  if (job?.cancelled) {
    await extractor.dispose?.().catch?.(() => {}); // its memory goes back now
    throw cancelledError();
  }
  progress.ready = true;
  onProgress?.(progress.snapshot());
  const leftover = afterSetup;
  afterSetup = null;
  leftover?.().catch((err) => console.warn("compact tokenizer not stored", err));
  // Where the set-up went (ms): files checked, then tokenizer and session (in parallel).
  const setup = { files: filesMs, ...times, total: Math.round(performance.now() - started) };
  current = { extractor, model, dtype, info, graph, setup, ...picked };
  return {
    model, dtype, device: current.device, reason: current.reason, graph,
    dimension: info.dimension, threads: env.backends.onnx.wasm.numThreads, runtime,
    loadMs: Math.round(performance.now() - started), progress: progress.snapshot(),
  };
}

async function runBatch(extractor, texts) {
  const output = await extractor(texts, { pooling: "mean", normalize: true });
  return output.data;
}

// onnxruntime's errors carry a C++ location and status before the browser's own words.
function shortReason(err) {
  const text = String(err?.message ?? err);
  return (text.match(/message: (.*)$/s)?.[1] ?? text).trim().slice(0, 200);
}

// Indices of texts ordered by length, so a batch pads its texts to a similar length
// (unsorted dialogue batches of 16 padded 61-82% extra tokens). Characters stand in for tokens.
function lengthOrder(texts) {
  return texts.map((t, i) => i).sort((a, b) => texts[a].length - texts[b].length || a - b);
}

// Embed texts in batches; kind "query" or "passage" picks the model's prefix (e5 needs them).
// Batches are cut from the texts sorted by length; rows come back in the caller's order.
// A caller that names the model gets that model's vectors, even if another caller loaded
// a different one in between (the page's warm-up or retry, the engine's re-vectorization).
// `onBatch(done, total)`, when given, hears after each batch (the engine's progress events).
async function embed(texts, { kind = "passage", batchSize = 16, model, dtype } = {}, onBatch) {
  if (model && (current?.model !== model || current?.dtype !== dtype)) {
    await load({ model, dtype });
  }
  if (!current) throw new Error("no embedding model is loaded");
  // Every batch runs on the model this call started with, whatever loads meanwhile.
  let active = current;
  const prefix = kind === "query" ? active.info.query_prefix : active.info.passage_prefix;
  const dim = active.info.dimension;
  const out = new Float32Array(texts.length * dim);
  const order = lengthOrder(texts);
  let fellBack = null;
  for (let i = 0; i < texts.length; i += batchSize) {
    const rows = order.slice(i, i + batchSize);
    const batch = rows.map((r) => prefix + texts[r]);
    let data;
    try {
      data = await runBatch(active.extractor, batch);
    } catch (err) {
      if (active.device !== "webgpu") throw err;
      // A lost GPU device or a failing WebGPU session: reload on WebAssembly and redo this
      // batch (no text is skipped), with the reason surfaced to the caller.
      await loadNow({ model: active.model, dtype: active.dtype, device: "wasm" });
      current.reason = `WebGPU failed (${shortReason(err)}); using WebAssembly`;
      fellBack = current.reason;
      active = current;
      data = await runBatch(active.extractor, batch);
    }
    rows.forEach((row, j) => out.set(data.subarray(j * dim, (j + 1) * dim), row * dim));
    // Not awaited: progress never holds up the embedding.
    onBatch?.(Math.min(i + batchSize, texts.length), texts.length)?.catch?.(() => {});
  }
  return Comlink.transfer({ dims: [texts.length, dim], data: out, device: active.device,
    fellBack }, [out.buffer]);
}

function status() {
  const warmingUp = Boolean(warming);
  const tokenizerOf = tokenizer?.modelId ?? null; // built or being built
  if (!current) return { loaded: false, warming: warmingUp, tokenizer: tokenizerOf };
  const { model, dtype, device, reason, graph, setup } = current;
  return { loaded: true, model, dtype, device, reason, graph, setup, warming: warmingUp,
    tokenizer: tokenizerOf,
    threads: env.backends.onnx.wasm.numThreads, runtime };
}

const api = {
  catalogue, load, warm, cancelWarm, embed, status, availability, download,
  // A second caller (the engine worker) gets its own channel to the same loaded model.
  connect(port) {
    Comlink.expose(api, port);
  },
};
Comlink.expose(api);
