// The page: starts the engine worker, shows boot progress, then the app.
import * as Comlink from "./vendor/comlink/comlink.mjs";
import { pickLanguage, translatePage, translator } from "./i18n.js";

const lang = pickLanguage();
const t = translator(lang);
document.documentElement.lang = lang;
translatePage(document, t);

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

// The floating download indicator: visible only while model files come from the network.
function showDownload(state) {
  const box = document.getElementById("downloads");
  box.hidden = !state.downloading && !state.error;
  const pct = state.bytesTotal ? Math.floor((100 * state.bytesDone) / state.bytesTotal) : 0;
  box.querySelector("progress").value = pct;
  box.querySelector(".what").textContent = state.error
    ? t("download.error", { model: state.model, reason: state.error })
    : t("download.progress", {
      model: state.model, pct, done: mb(state.bytesDone), total: mb(state.bytesTotal),
    });
}

const mb = (bytes) => (bytes / 1e6).toFixed(1);

function startEmbedder() {
  const worker = new Worker(new URL("./embed-worker.js", import.meta.url), { type: "module" });
  const embedder = Comlink.wrap(worker);
  const progressLog = [];
  const onProgress = Comlink.proxy((state) => {
    progressLog.push(state);
    showDownload(state);
  });
  return {
    embedder,
    progressLog,
    loadModel: (options) => embedder.load(options, onProgress),
    embed: (texts, options) => embedder.embed(texts, options),
  };
}

async function start() {
  registerServiceWorker();
  navigator.storage?.persist?.().catch(() => {});
  const worker = new Worker(new URL("./engine-worker.js", import.meta.url), { type: "module" });
  const engine = Comlink.wrap(worker);
  // Exposed for embedding apps and tests: omoide.call(method, params) -> plain data.
  window.omoide = { call: (method, params) => engine.call(method, params), engine,
    ...startEmbedder() };
  try {
    await engine.boot(Comlink.proxy(showStage));
    await showDiagnostics(engine);
  } catch (err) {
    bootSection.dataset.bootState = "failed";
    document.getElementById("boot-detail").textContent = t("boot.failed", { reason: err.message });
  }
}

start();
