// A raw onnxruntime-web session for bench/embed_browser.py: the same .onnx file, the same
// Transformers.js tokenizer call and the same mean pooling + L2 normalization (plain JS) as
// the embedding worker, so only the path to the session differs. Not used by the app.
import * as Comlink from "../vendor/comlink/comlink.mjs";
// The build Transformers.js bundles, on the same WebAssembly build as the embedding worker.
import * as ort from "../vendor/ort/ort.webgpu.bundle.min.mjs";
import { AutoTokenizer, env } from "../vendor/transformers/transformers.js";
import { pickRuntime, wasmPaths } from "../embed/runtime.js";

const base = new URL("../", import.meta.url);
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = new URL("models/", base).pathname;
env.useBrowserCache = false;
env.useWasmCache = false;
const runtime = await pickRuntime();
ort.env.wasm.wasmPaths = wasmPaths(base, runtime);
// The same thread count as the embedding worker (and the same `threads` URL override).
const askedThreads = Number(new URL(self.location.href).searchParams.get("threads")) || 0;
ort.env.wasm.numThreads = !self.crossOriginIsolated ? 1
  : askedThreads || Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2));
ort.env.wasm.proxy = false;

let current = null; // {session, tokenizer, info, output}

async function load({ model, dtype = "q8" }) {
  const started = performance.now();
  const registry = await (await fetch(new URL("models/registry.json", base))).json();
  const manifest = await (await fetch(new URL("models/manifest.json", base))).json();
  const info = registry.models.find((m) => m.id === model);
  if (!info) throw new Error(`unknown model ${model}`);
  const file = info.onnx_files[dtype];
  const response = await fetch(new URL(`models/${model}/${file}`, base));
  if (!response.ok) throw new Error(`${file}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const tokenizer = await AutoTokenizer.from_pretrained(model);
  await current?.session.release();
  // The options the embedding worker passes for device "wasm" (log level: warning; no
  // second optimization of a graph the build optimized).
  const optimized = manifest.models[model]?.graph_optimization?.[file];
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ["wasm"], logSeverityLevel: 2,
    ...(optimized ? { graphOptimizationLevel: "disabled" } : {}),
  });
  const output = session.outputNames.includes("last_hidden_state")
    ? "last_hidden_state" : session.outputNames[0];
  current = { session, tokenizer, info, output };
  return { model, dtype, inputs: session.inputNames, output, threads: ort.env.wasm.numThreads,
    runtime,
    ortVersion: ort.env.versions?.web, loadMs: Math.round(performance.now() - started) };
}

async function runBatch(texts) {
  const { session, tokenizer, output } = current;
  const enc = tokenizer(texts, { padding: true, truncation: true });
  const [batch, length] = enc.input_ids.dims;
  const feeds = {};
  for (const name of session.inputNames) {
    const t = enc[name];
    feeds[name] = t
      ? new ort.Tensor("int64", t.data, t.dims)
      : new ort.Tensor("int64", new BigInt64Array(batch * length), [batch, length]);
  }
  const hidden = (await session.run(feeds))[output];
  const dim = hidden.dims[2];
  const h = hidden.data;
  const mask = enc.attention_mask.data;
  const out = new Float32Array(batch * dim);
  for (let b = 0; b < batch; b++) {
    const row = out.subarray(b * dim, (b + 1) * dim);
    let count = 0;
    for (let l = 0; l < length; l++) {
      if (mask[b * length + l] === 0n) continue;
      count++;
      const off = (b * length + l) * dim;
      for (let d = 0; d < dim; d++) row[d] += h[off + d];
    }
    let norm = 0;
    for (let d = 0; d < dim; d++) {
      row[d] /= Math.max(count, 1);
      norm += row[d] * row[d];
    }
    norm = Math.max(Math.sqrt(norm), 1e-12);
    for (let d = 0; d < dim; d++) row[d] /= norm;
  }
  hidden.dispose?.();
  return out;
}

// Same signature and result as the embedding worker's embed.
async function embed(texts, { kind = "passage", batchSize = 16 } = {}) {
  if (!current) throw new Error("no model is loaded");
  const prefix = kind === "query" ? current.info.query_prefix : current.info.passage_prefix;
  const dim = current.info.dimension;
  const out = new Float32Array(texts.length * dim);
  for (let i = 0; i < texts.length; i += batchSize) {
    const batch = texts.slice(i, i + batchSize).map((t) => prefix + t);
    out.set(await runBatch(batch), i * dim);
  }
  return Comlink.transfer({ dims: [texts.length, dim], data: out }, [out.buffer]);
}

Comlink.expose({ load, embed });
