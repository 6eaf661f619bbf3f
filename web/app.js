// The page: starts the engine worker, shows boot progress, then the app.
import * as Comlink from "./vendor/comlink/comlink.mjs";
import { pickLanguage, translatePage } from "./i18n.js";
import { checkParams } from "./call-params.js";
import { leavingFlushesRecalls } from "./leaving.js";
import { packImportCall } from "./store/import-vectors.js";
import { createContext, setLanguage } from "./ui/shell.js";

const lang = pickLanguage();
// The UI's shared context; ctx.t follows the language switch.
const ctx = createContext({ call: (method, params) => window.omoide.call(method, params), lang });
const t = (...args) => ctx.t(...args);
document.documentElement.lang = lang;
translatePage(document, t);
const langSelect = document.getElementById("lang");
langSelect.value = lang;
langSelect.addEventListener("change", () => setLanguage(ctx, langSelect.value));

const bootSection = document.getElementById("boot");
const STAGES = ["runtime", "python", "engine", "ready"];

function showStage({ stage, detail }) {
  const reached = STAGES.indexOf(stage);
  for (const li of bootSection.querySelectorAll("[data-stage]")) {
    const index = STAGES.indexOf(li.dataset.stage);
    li.classList.toggle("done", index < reached || stage === "ready");
    li.classList.toggle("current", index === reached && stage !== "ready");
  }
  bootSection.dataset.bootState = stage;
  document.getElementById("boot-detail").textContent = detail ?? "";
}

async function registerServiceWorker() {
  if (!("serviceWorker" in navigator)) return null;
  try {
    return await navigator.serviceWorker.register("./sw.js", { scope: "./" });
  } catch (err) {
    console.warn("service worker not registered; the app will not work offline", err);
    return null;
  }
}

function addRow(list, label, value) {
  const dt = document.createElement("dt");
  dt.textContent = label;
  const dd = document.createElement("dd");
  dd.textContent = value;
  list.append(dt, dd);
}

async function showDiagnostics(engine) {
  const d = await engine.call("diagnostics");
  const list = document.getElementById("diagnostics");
  list.replaceChildren();
  addRow(list, t("about.runtime"), d.runtime);
  addRow(list, t("about.version"), d.omoide);
  addRow(list, t("about.offline"), navigator.serviceWorker?.controller ? t("yes") : t("no"));
  document.getElementById("about").hidden = false;
}

// The floating download indicator: visible only while model files come from the network
// (cache hits are never listed), per-file and total progress, errors with a retry.
let retryDownload = null;
function showDownload(state, retry = null) {
  const box = document.getElementById("downloads");
  // After the files, the model's inference session is created (seconds): said, not silent.
  box.hidden = !state.downloading && !state.error && !state.initialising;
  box.dataset.state = state.error ? "error" : state.downloading ? "downloading"
    : state.initialising ? "initialising" : "done";
  const pct = state.bytesTotal ? Math.floor((100 * state.bytesDone) / state.bytesTotal) : 0;
  const bar = box.querySelector("progress");
  if (state.initialising) bar.removeAttribute("value");
  else bar.value = pct;
  box.querySelector(".what").textContent = state.error
    ? t("download.error", { model: state.model, reason: state.error })
    : state.initialising ? t("download.initialising", state)
      : t("download.progress", {
        model: state.model, pct, done: mb(state.bytesDone), total: mb(state.bytesTotal),
      });
  const files = (state.files ?? []).filter((f) => !f.fromCache);
  box.querySelector(".files").replaceChildren(...files.map((f) => {
    const li = document.createElement("li");
    li.textContent = t("download.file", { name: f.name, done: mb(f.loaded ?? 0),
      total: mb(f.total ?? 0), state: f.done ? "✓" : "" });
    return li;
  }));
  if (retry) retryDownload = retry;
  const button = box.querySelector(".retry");
  button.hidden = !state.error || !retryDownload;
}

document.querySelector("#downloads .retry").addEventListener("click", () => {
  const retry = retryDownload;
  document.getElementById("downloads").hidden = true;
  retry?.()?.catch?.((err) => ctx.notify(ctx.errorText(err), { kind: "error" }));
});

const mb = (bytes) => (bytes / 1e6).toFixed(1);

function startEmbedder() {
  const worker = new Worker(new URL("./embed-worker.js", import.meta.url), { type: "module" });
  const embedder = Comlink.wrap(worker);
  const progressLog = [];
  let lastOptions = null;
  const loadModel = (options) => {
    lastOptions = options;
    return embedder.load(options, onProgress);
  };
  const onProgress = Comlink.proxy((state) => {
    progressLog.push(state);
    showDownload(state, () => loadModel(lastOptions));
  });
  return {
    embedder,
    progressLog,
    loadModel,
    // Files into the model cache only (offline use); the loaded model does not change.
    downloadModel: (options) => {
      lastOptions = options;
      return embedder.download(options, onProgress);
    },
    embed: (texts, options) => embedder.embed(texts, options),
  };
}

// Engine events (download progress of models the engine needs, re-vectorization progress,
// changes made by other tabs, notices) reach the page here and any onEvent listener.
const eventListeners = [];
function onEngineEvent(event) {
  if (event.type === "download") {
    window.omoide.progressLog.push(event.state);
    showDownload(event.state, () => window.omoide.call("select_model",
      { model: event.state.model, dtype: event.state.dtype }));
  }
  window.omoide.events.push(event);
  for (const fn of eventListeners) {
    try {
      fn(event);
    } catch (err) {
      console.error("omoide event listener failed", err);
    }
  }
  uiEvent(event);
}

// What the screens do with engine events: refresh what changed, show notices and progress.
function uiEvent(event) {
  ctx.emit("engine-event", event);
  if (event.type === "changed") {
    ctx.emit("changed", event);
    if (ctx.ready) ctx.refreshCharacters().catch(() => {});
  } else if (event.type === "notice") {
    ctx.notify(event.key ? t(event.key, { reason: event.message }) : event.message);
  }
}

// The engine worker talks to the embedding worker over its own channel. Nothing here waits
// for the embedding worker (its module, Transformers.js, takes a while to evaluate): a port
// keeps the engine's messages until that side listens. Calls to one worker keep their
// order, so the engine has its listener and its embedder before boot() runs.
function connectWorkers(engine, embedder) {
  const { port1, port2 } = new MessageChannel();
  return Promise.all([
    embedder.connect(Comlink.transfer(port1, [port1])),
    engine.connectEmbedder(Comlink.transfer(port2, [port2])),
    engine.onEvent(Comlink.proxy(onEngineEvent)),
  ]);
}

// The screens (every tab's module) load while the workers boot, not before they start.
let screens = null;

// The engine worker's boot stages, in order (web/engine-worker.js `boot`).
const BOOT_STAGES = ["runtime", "python", "engine", "ready"];
// The stage at which the model's background set-up starts. "python": once the interpreter
// runs; "runtime": as soon as the engine worker has opened IndexedDB (both WebAssembly
// runtimes then compile and start at once). A `warm` parameter on the page's URL overrides it
// (bench/boot_browser.py --warm-at compares them in one run).
const WARM_AT = "python";
function warmStage() {
  const asked = new URLSearchParams(location.search).get("warm");
  return BOOT_STAGES.includes(asked) ? asked : WARM_AT;
}

async function start() {
  registerServiceWorker();
  navigator.storage?.persist?.().catch(() => {});
  const worker = new Worker(new URL("./engine-worker.js", import.meta.url), { type: "module" });
  const engine = Comlink.wrap(worker);
  // Exposed for embedding apps and tests: omoide.call(method, params) -> plain data.
  // An import's vectors go to the worker as one transferred Float32Array per character.
  const call = async (method, params) => {
    if (method !== "import_data") return engine.call(method, checkParams(params));
    const packed = packImportCall(params); // its vectors in typed arrays: not walked
    checkParams(packed.params);
    return engine.call(method, Comlink.transfer(packed.params, packed.transfer));
  };
  window.omoide = { call, engine,
    ...startEmbedder(), events: [], onEvent: (fn) => eventListeners.push(fn), ui: ctx };
  screens = import("./ui/index.js");
  try {
    const connecting = connectWorkers(engine, window.omoide.embedder);
    // The selected model initialises while the engine loads (seconds each, in two workers),
    // so the first remember or recall after ready does not wait for it. It starts at the
    // boot stage WARM_AT names (BENCHMARKS.md, issue 16, measures the choices).
    let warming = false;
    const warmAt = warmStage();
    const booting = engine.boot(Comlink.proxy((progress) => {
      showStage(progress);
      if (warming || BOOT_STAGES.indexOf(progress.stage) < BOOT_STAGES.indexOf(warmAt)) return;
      warming = true;
      // The stage's report names the stored model once the worker has read it; asking for
      // it would wait until Python's start lets the worker answer.
      const selected = progress.model ? Promise.resolve(progress.model) : engine.storedModel();
      selected.then(warmModel, (err) => console.warn("no model warm-up", err));
    }));
    await Promise.all([connecting, booting]);
  } catch (err) {
    bootSection.dataset.bootState = "failed";
    document.getElementById("boot-detail").textContent = t("boot.failed", { reason: err.message });
    return;
  }
  // Recall counts are written in batches; a tab hidden or going away writes what it still
  // holds, at once (the worker may be ended right after).
  leavingFlushesRecalls((method, params) => engine.call(method, params));
  await showDiagnostics(engine).catch((err) => console.warn("diagnostics failed", err));
  ctx.on("lang", () => showDiagnostics(engine).catch(() => {}));
  const { startUI } = await screens;
  await startUI(ctx);
}

// From the "python" boot stage on, the selected model initialises in the background when its
// files are already here (a reload, or offline), so the first remember or recall does not
// wait for it. A model never downloaded is left for the user to fetch (it can be hundreds of MB). The
// warm-up can be cancelled (a busy machine, a model about to be switched); the next remember
// or recall then loads the model itself.
async function warmModel(selected) {
  const line = document.getElementById("model-warm");
  const show = (state, key, fields, ...extra) => {
    line.dataset.state = state;
    line.replaceChildren(t(key, fields), ...extra);
    line.hidden = false;
  };
  try {
    if (!selected?.model) return;
    const available = await window.omoide.embedder.availability();
    if (!available[`${selected.model}@${selected.dtype}`]?.cached) {
      show("absent", "model.warmAbsent", selected);
      return;
    }
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.id = "model-warm-cancel";
    cancel.textContent = t("model.warmCancel");
    cancel.addEventListener("click", () => {
      cancel.disabled = true;
      window.omoide.embedder.cancelWarm();
    });
    show("loading", "model.warming", selected, cancel);
    const started = performance.now();
    await window.omoide.embedder.warm(selected);
    show("ready", "model.warmReady", { ...selected,
      ms: Math.round(performance.now() - started) });
  } catch (err) {
    if (err?.name === "CANCELLED" || /set-up cancelled/.test(err?.message)) {
      show("cancelled", "model.warmCancelled", {});
    } else {
      show("failed", "model.warmFailed", { reason: err.message });
    }
  }
}

start();
