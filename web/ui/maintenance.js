// Maintenance: model picker and stamp, re-vectorize with progress, storage, trash, the audit
// (audit.js), summarization, export / import, the backup server and settings.
import { mountAudit } from "./audit.js";
import { touches } from "./memories.js";
import { progressLine } from "./progress.js";
import { clear, field, formatAge, formatBytes, formatDuration, formatNumber, h, options, tx }
  from "./dom.js";

const POLL_MS = 400;
const BACKENDS_POLL_MS = 2_000;

function section(t, key, id, ...children) {
  return h("section", { class: "box", id, "aria-labelledby": `${id}-title` },
    tx("h3", key, { id: `${id}-title` }, t), ...children);
}

// A report from the engine as a definition list: scalars as text, lists as counts.
function reportList(t, report) {
  const list = h("dl", { class: "report" });
  for (const [key, value] of Object.entries(report ?? {})) {
    let shown = value;
    if (key === "in_character_trash") shown = value.join(", ");
    else if (Array.isArray(value)) shown = String(value.length);
    else if (value && typeof value === "object") shown = JSON.stringify(value);
    else if (value === null || value === undefined) shown = "—";
    const label = t(`report.${key}`) === `report.${key}` ? key : t(`report.${key}`);
    list.append(h("dt", {}, label), h("dd", { dataset: { key } }, String(shown)));
  }
  return list;
}

export function mountMaintenance(panel, ctx) {
  const t = (...args) => ctx.t(...args);
  let catalogue = null;

  // --- Model -------------------------------------------------------------------------------
  const modelSelect = h("select", { id: "model-select" });
  const dtypeSelect = h("select", { id: "dtype-select" });
  const modelApply = tx("button", "model.apply", { type: "submit", id: "model-apply" }, t);
  const modelCurrent = h("p", { id: "model-current" });
  const modelRuntime = h("p", { class: "muted", id: "model-runtime" });
  const modelDetails = h("p", { class: "muted", id: "model-details" });
  const modelOffline = h("p", { id: "model-offline" });
  const modelDownload = tx("button", "model.download", { type: "button", id: "model-download",
    hidden: true }, t);
  const modelForm = h("form", { class: "stack", id: "model-form" },
    h("div", { class: "row" }, field(t, "model.model", modelSelect).row,
      field(t, "model.dtype", dtypeSelect).row),
    modelDetails, modelOffline, h("div", { class: "actions" }, modelApply, modelDownload));
  // Which model builds are complete in this browser's model cache (usable offline).
  let available = {};
  const isAvailable = (model, dtype) => Boolean(available[`${model}@${dtype}`]?.cached);
  async function refreshAvailability() {
    available = await window.omoide.embedder.availability().catch(() => ({}));
    if (catalogue) renderDtypes(dtypeSelect.value);
  }
  const modelBox = section(t, "model.title", "model-box", modelCurrent, modelRuntime,
    modelForm);
  // Where embeddings run (WebGPU or WebAssembly) and why, as the embedding worker decided;
  // the worker's known reasons are translated, and the line follows the language switch.
  const REASONS = {
    "WebAssembly was requested": "model.reason.requested",
    "WebGPU is not available here": "model.reason.noWebgpu",
    "no WebGPU adapter was found": "model.reason.noAdapter",
    "WebGPU adapter found": "model.reason.adapter",
  };
  let runtimeInfo = null;
  function renderRuntime(info) {
    runtimeInfo = info;
    const reason = REASONS[info?.reason] ? t(REASONS[info.reason]) : info?.reason ?? "";
    clear(modelRuntime, info?.device
      ? t("model.runtime", { device: info.device === "webgpu" ? "WebGPU" : "WebAssembly",
        reason, threads: info.threads ?? 1, n: info.threads ?? 1 })
      : t("model.runtimeUnknown"));
  }
  ctx.on("lang", () => renderRuntime(runtimeInfo));
  window.omoide.onEvent((event) => {
    if (event.type === "embedder") renderRuntime(event);
  });
  ctx.call("embedder_status", {}).then(renderRuntime, () => renderRuntime(null));

  function modelLabel(m) {
    return `${m.display_name ?? m.id} · ${(m.languages ?? []).join("/")} · ${m.dimension}d`;
  }
  function renderModels() {
    if (!catalogue) return;
    const selected = ctx.modelState?.selected ?? catalogue.default;
    options(modelSelect, catalogue.models.map((m) => [m.id, modelLabel(m)]),
      modelSelect.value || selected?.model);
    renderDtypes(dtypeSelect.value || selected?.dtype);
    const state = ctx.modelState;
    clear(modelCurrent, t("model.current", {
      model: state?.selected?.model ?? "—", dtype: state?.selected?.dtype ?? "—",
    }), " ", h("code", { id: "model-stamp" }, state?.stamp ?? "—"));
    const mismatched = state?.mismatched ?? [];
    modelCurrent.append(" ", h("span", { class: ["chip", mismatched.length ? "warn" : "ok"] },
      mismatched.length ? t("model.mismatch", { n: mismatched.length }) : t("model.allMatch")));
  }
  function renderDtypes(preferred) {
    const model = catalogue.models.find((m) => m.id === modelSelect.value);
    if (!model) return;
    options(dtypeSelect, model.dtypes.map((d) => [d,
      (model.sizes?.[d] ? `${d} (${formatBytes(model.sizes[d])})` : d)
        + (isAvailable(model.id, d) ? " ✓" : "")]),
    model.dtypes.includes(preferred) ? preferred : model.dtypes[0]);
    clear(modelDetails, t("model.details", {
      languages: (model.languages ?? []).join(", "), dimension: model.dimension,
      size: formatBytes(model.sizes?.[dtypeSelect.value]), license: model.license ?? "—",
    }));
    const here = isAvailable(model.id, dtypeSelect.value);
    modelOffline.dataset.available = String(here);
    clear(modelOffline, here ? t("model.offlineYes")
      : t("model.offlineNo", { size: formatBytes(model.sizes?.[dtypeSelect.value]) }));
    modelDownload.hidden = here;
  }
  // The model's files, fetched (with the download panel's progress) before it is used; a
  // failure says what really failed (offline, HTTP status, checksum) and changes nothing.
  async function ensureDownloaded(choice) {
    if (isAvailable(choice.model, choice.dtype)) return true;
    try {
      await window.omoide.downloadModel(choice);
      return true;
    } catch (err) {
      const reason = navigator.onLine === false ? `offline (${err.message})` : err.message;
      ctx.notify(t("model.unavailable", { ...choice, reason }), { kind: "error" });
      return false;
    } finally {
      await refreshAvailability();
    }
  }
  modelDownload.addEventListener("click", async () => {
    const choice = { model: modelSelect.value, dtype: dtypeSelect.value };
    const ok = await ctx.run(modelDownload, () => ensureDownloaded(choice));
    if (ok) ctx.notify(t("model.downloaded", choice));
  });
  modelSelect.addEventListener("change", () => renderDtypes(dtypeSelect.value));
  dtypeSelect.addEventListener("change", () => renderDtypes(dtypeSelect.value));
  modelForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const choice = { model: modelSelect.value, dtype: dtypeSelect.value };
    modelBox.setAttribute("aria-busy", "true");
    // A model that cannot be had (offline, never downloaded) is refused here, before it
    // becomes the selected model and blocks every character's recall.
    const done = await ctx.run(modelApply, async () =>
      (await ensureDownloaded(choice)) ? ctx.call("select_model", choice) : undefined);
    modelBox.removeAttribute("aria-busy");
    if (done === undefined) return;
    await Promise.all([ctx.refreshModelState(), ctx.refreshCharacters()]);
    ctx.notify(t("model.switched", choice));
    panel.dataset.model = `${choice.model}:${choice.dtype}`;
  });

  // --- Re-vectorize ------------------------------------------------------------------------
  const revStart = tx("button", "revectorize.start", { type: "button", id: "revectorize-start" }, t);
  const revCancel = tx("button", "revectorize.cancel", { type: "button", id: "revectorize-cancel",
    disabled: true }, t);
  const revScope = h("select", { id: "revectorize-scope" });
  const revBar = h("progress", { id: "revectorize-progress", max: 1, value: 0 });
  const revText = h("p", { id: "revectorize-text", "aria-live": "polite" });
  revBar.setAttribute("aria-labelledby", "revectorize-box-title");
  const revBox = section(t, "revectorize.title", "revectorize-box",
    tx("p", "revectorize.explain", { class: "muted" }, t),
    h("div", { class: "row" }, field(t, "revectorize.scope", revScope).row),
    revBar, revText, h("div", { class: "actions" }, revStart, revCancel));
  let revStatus = null;
  let pollTimer = null;
  let lastState = null; // "finished" | "cancelled" | "failed" of the last run

  function renderScope() {
    options(revScope, [["", t("revectorize.all")],
      ...ctx.characters.filter((c) => c.deleted_at == null)
      .map((c) => [c.id, ctx.characterLabel(c.id)])], revScope.value);
  }
  function renderRevectorize(status) {
    revStatus = status ?? revStatus;
    const s = revStatus ?? { running: false, done: 0, total: 0 };
    revBar.max = Math.max(1, s.total || 0);
    revBar.value = s.done || 0;
    revBox.dataset.running = String(Boolean(s.running));
    revCancel.disabled = !s.running;
    revStart.disabled = Boolean(s.running);
    // a job of the selected model only: one left by a model switched away from is not what
    // the button would go on with
    const job = ctx.modelState?.jobs?.find((j) => j.stamp === ctx.modelState.stamp);
    const partial = !s.running && (Boolean(job) || lastState === "cancelled");
    revStart.textContent = t(partial ? "revectorize.resume" : "revectorize.start");
    if (!s.total && !s.running) {
      // after a reload the job is still there: said so, not "Nothing to do"
      revText.textContent = job ? t("revectorize.paused", { staged: job.staged })
        : t("revectorize.idle");
      return;
    }
    revText.textContent = t("revectorize.progress", {
      done: s.done ?? 0, total: s.total ?? 0,
      rate: s.rate ? formatNumber(s.rate, 1) : "—",
      eta: s.running ? formatDuration(s.eta_s, ctx.lang) : "—",
    }) + (s.running || !lastState ? "" : ` · ${t(`revectorize.${lastState}`)}`);
  }
  async function finishRevectorize(event) {
    clearTimeout(pollTimer);
    lastState = event.state;
    revBox.dataset.state = event.state;
    renderRevectorize({ running: false, done: event.done ?? revStatus?.done ?? 0,
      total: event.total ?? revStatus?.total ?? 0 });
    await Promise.all([ctx.refreshModelState(), ctx.refreshCharacters()]).catch(() => {});
    renderRevectorize();
    if (event.state === "finished") ctx.notify(t("revectorize.done", { n: event.done ?? 0 }));
    else if (event.state === "failed") {
      ctx.notify(t("revectorize.failedBecause", { reason: event.error ?? "?" }), { kind: "error" });
    }
    ctx.emit("changed", {});
  }
  async function pollRevectorize() {
    clearTimeout(pollTimer);
    const status = await ctx.call("revectorize_status", {}).catch(() => null);
    if (!status) return;
    if (status.running) {
      renderRevectorize(status);
      pollTimer = setTimeout(pollRevectorize, POLL_MS);
    } else if (!revStatus?.running) {
      renderRevectorize({ running: false, done: revStatus?.done ?? 0,
        total: revStatus?.total ?? 0 });
    }
  }
  revStart.addEventListener("click", async () => {
    const selected = ctx.modelState?.selected ?? catalogue?.default;
    const params = { model: selected?.model, dtype: selected?.dtype };
    if (revScope.value) params.character = revScope.value;
    lastState = null;
    delete revBox.dataset.state;
    const started = await ctx.run(revStart, () => ctx.call("revectorize_start", params));
    if (started === undefined) return;
    renderRevectorize(started && typeof started === "object" && "running" in started
      ? started : { ...(revStatus ?? {}), running: true });
    pollRevectorize();
  });
  revCancel.addEventListener("click", async () => {
    await ctx.run(revCancel, () => ctx.call("revectorize_cancel", {}));
    pollRevectorize();
  });

  // --- Storage -----------------------------------------------------------------------------
  const meter = h("meter", { id: "storage-meter", min: 0, max: 1, value: 0 });
  meter.setAttribute("aria-labelledby", "storage-box-title");
  const storageText = h("p", { id: "storage-text" });
  const storageRefresh = tx("button", "refresh", { type: "button" }, t);
  const persist = tx("button", "storage.persist", { type: "button", hidden: true }, t);
  const storageBox = section(t, "storage.title", "storage-box", meter, storageText,
    h("div", { class: "actions" }, storageRefresh, persist));
  async function loadStorage() {
    const s = await ctx.run(storageRefresh, () => ctx.call("storage", {}));
    if (!s) return;
    meter.max = s.quota || 1;
    meter.value = s.usage || 0;
    meter.high = 0.8 * (s.quota || 1);
    storageText.textContent = t("storage.used", {
      usage: formatBytes(s.usage), quota: formatBytes(s.quota),
      pct: s.quota ? formatNumber((100 * s.usage) / s.quota, 1) : "—",
    }) + " · " + t(s.persisted ? "storage.persisted" : "storage.notPersisted");
    persist.hidden = Boolean(s.persisted) || !navigator.storage?.persist;
  }
  storageRefresh.addEventListener("click", loadStorage);
  persist.addEventListener("click", async () => {
    const granted = await navigator.storage.persist().catch(() => false);
    ctx.notify(t(granted ? "storage.persistGranted" : "storage.persistDenied"));
    loadStorage();
  });

  // --- Trash -------------------------------------------------------------------------------
  const trashList = h("ul", { class: "memories", id: "trash-list" });
  const trashEmpty = tx("button", "trash.empty", { type: "button", class: "danger",
    id: "trash-empty" }, t);
  const trashConfirm = tx("button", "trash.confirm", { type: "button", class: "danger",
    id: "trash-confirm", hidden: true }, t);
  const trashKeep = tx("button", "cancel", { type: "button", hidden: true }, t);
  const trashNote = h("p", { class: "muted", id: "trash-note" });
  const trashBox = section(t, "trash.title", "trash-box", trashNote, trashList,
    h("div", { class: "actions" }, trashEmpty, trashConfirm, trashKeep));
  let trashed = [];
  async function loadTrash() {
    if (!ctx.character) {
      trashed = [];
      renderTrash();
      return;
    }
    trashed = (await ctx.run(null, () => ctx.call("trash", { character: ctx.character }))) ?? [];
    renderTrash();
  }
  function renderTrash() {
    trashNote.textContent = t("trash.count", { n: trashed.length, name: ctx.characterName() });
    trashEmpty.disabled = trashed.length === 0;
    clear(trashList, trashed.map(({ memory, trashed_at: at }) => {
      const restore = h("button", { type: "button",
        "aria-label": t("trash.restoreOf", { text: memory.text.slice(0, 40) }) }, t("restore"));
      restore.addEventListener("click", async () => {
        const done = await ctx.run(restore, () =>
          ctx.call("restore", { character: ctx.character, id: memory.id }));
        if (done === undefined) return;
        ctx.notify(t("trash.restored"));
        await loadTrash();
        if (auditView.loaded()) auditView.load();
        ctx.emit("changed", { character: ctx.character });
        ctx.refreshCharacters().catch(() => {});
      });
      // history (an edit's earlier text, a memory another replaced): restoring it undoes that
      const history = typeof memory.meta?.superseded_by === "string"
        ? h("span", { class: "chip history" }, t(memory.meta.superseded_reason === "edited"
          ? "trash.edited" : "trash.replaced")) : null;
      return h("li", { class: "memory", dataset: { id: memory.id } },
        h("p", { class: "text" }, memory.text),
        h("div", { class: "meta" }, h("span", { class: "chip" }, t(`kind.${memory.kind}`)),
          history,
          h("span", { class: "muted" }, t("trash.when", { age: formatAge(at, ctx.lang) }))),
        h("div", { class: "actions" }, restore));
    }));
  }
  const confirmMode = (on) => {
    trashEmpty.hidden = on;
    trashConfirm.hidden = !on;
    trashKeep.hidden = !on;
    (on ? trashConfirm : trashEmpty).focus();
  };
  trashEmpty.addEventListener("click", () => confirmMode(true));
  trashKeep.addEventListener("click", () => confirmMode(false));
  trashConfirm.addEventListener("click", async () => {
    const done = await ctx.run(trashConfirm, () =>
      ctx.call("purge_trash", { character: ctx.character }));
    confirmMode(false);
    if (done === undefined) return;
    ctx.notify(t("trash.emptied"));
    loadTrash();
  });

  // --- Audit (audit.js) ----------------------------------------------------------------------
  const auditView = mountAudit(ctx, section);

  // --- Summarize ---------------------------------------------------------------------------
  const sumPreview = tx("button", "summarize.preview", { type: "button", id: "summarize-preview" },
    t);
  const sumApply = tx("button", "summarize.apply", { type: "button", id: "summarize-apply",
    hidden: true }, t);
  const sumOut = h("div", { id: "summarize-out", "aria-live": "polite" });
  const sumProgress = progressLine(ctx, "summarize", "summarize-progress");
  const sumBox = section(t, "summarize.title", "summarize-box",
    tx("p", "summarize.explain", { class: "muted" }, t), h("div", { class: "actions" },
      sumPreview, sumApply), sumProgress.element, sumOut);
  function renderSummary(report, dryRun) {
    const groups = report.groups ?? [];
    clear(sumOut, h("p", { class: "strong" }, t(dryRun ? "summarize.previewTitle"
      : "summarize.appliedTitle", { groups: groups.length, n: report.candidates ?? 0,
      before: report.tokens_before ?? 0, after: report.tokens_after ?? 0 })),
    report.degraded ? h("p", { class: "muted" }, report.degraded) : null,
    groups.length ? h("ul", { class: "memories" }, groups.map((g) => h("li", { class: "memory" },
      h("p", { class: "text" }, g.text ?? ""),
      h("div", { class: "meta" }, h("span", { class: "chip" }, g.group ?? ""),
        h("span", { class: "muted" }, t("summarize.group", { n: g.source_ids?.length ?? 0,
          before: g.tokens_before ?? 0, after: g.tokens_after ?? 0 })),
        g.error ? h("span", { class: "error" }, g.error) : null))))
      : h("p", { class: "muted" }, t("summarize.nothing")));
    sumApply.hidden = !dryRun || groups.length === 0;
  }
  sumPreview.addEventListener("click", async () => {
    if (!ctx.character) return;
    const report = await ctx.run(sumPreview, () => sumProgress.track(() =>
      ctx.call("summarize", { character: ctx.character, dry_run: true })));
    if (report) renderSummary(report, true);
  });
  sumApply.addEventListener("click", async () => {
    const report = await ctx.run([sumApply, sumPreview], () => sumProgress.track(() =>
      ctx.call("summarize", { character: ctx.character, dry_run: false })));
    if (!report) return;
    renderSummary(report, false);
    ctx.emit("changed", { character: ctx.character });
    loadTrash();
  });

  // --- Export / import ---------------------------------------------------------------------
  const exportScope = h("select", { id: "export-scope" });
  const withVectors = h("input", { type: "checkbox", id: "export-vectors" });
  const exportButton = tx("button", "export.export", { type: "button", id: "export-button" }, t);
  const importFile = h("input", { type: "file", id: "import-file", accept: "application/json,.json" });
  const importButton = tx("button", "export.import", { type: "button", id: "import-button" }, t);
  const importOut = h("div", { id: "import-report", "aria-live": "polite" });
  const importProgress = progressLine(ctx, "import_data", "import-progress");
  const vectorsLabel = h("label", { for: "export-vectors", "data-i18n": "export.withVectors" },
    t("export.withVectors"));
  const exportBox = section(t, "export.title", "export-box",
    h("div", { class: "row" }, field(t, "export.scope", exportScope).row,
      h("div", { class: "field check" }, withVectors, vectorsLabel)),
    h("div", { class: "actions" }, exportButton),
    h("div", { class: "row" }, field(t, "export.file", importFile,
      { hint: "export.importHint" }).row),
    h("div", { class: "actions" }, importButton), importProgress.element, importOut);
  function renderExportScope() {
    options(exportScope, [["", t("export.all")],
      ...ctx.characters.filter((c) => c.deleted_at == null)
      .map((c) => [c.id, ctx.characterLabel(c.id)])], exportScope.value);
  }
  exportButton.addEventListener("click", async () => {
    // "All" is every character the app lists: one in the character trash is not exported
    // (its memories would come back as a live character on import); restore it first
    const live = ctx.characters.filter((c) => c.deleted_at == null);
    const params = { with_vectors: withVectors.checked,
      names: Object.fromEntries(live.map((c) => [c.id, c.name])),
      characters: exportScope.value ? [exportScope.value] : live.map((c) => c.id) };
    const data = await ctx.run(exportButton, () => ctx.call("export_data", params));
    if (!data) return;
    const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const who = exportScope.value ? ctx.characterName(exportScope.value) : "all";
    const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
    const link = h("a", { href: url, download: `omoide-${who}-${stamp}.json`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    ctx.notify(t("export.done", { size: formatBytes(blob.size) }));
  });
  importButton.addEventListener("click", async () => {
    const file = importFile.files?.[0];
    if (!file) {
      clear(importOut, h("p", { class: "error" }, t("export.noFile")));
      return;
    }
    let data;
    try {
      data = JSON.parse(await file.text());
    } catch (err) {
      clear(importOut, h("p", { class: "error" }, t("export.badJson", { reason: err.message })));
      return;
    }
    let failure = null;
    const report = await ctx.run(importButton, () => importProgress.track(() =>
      ctx.call("import_data", { data }).catch((err) => { failure = err; return null; })));
    if (failure) {
      clear(importOut, h("p", { class: "error" }, ctx.errorText(failure)));
      return;
    }
    clear(importOut, h("p", { class: "strong" }, t("export.imported")), reportList(t, report));
    importOut.dataset.state = "done";
    await Promise.all([ctx.refreshCharacters(), ctx.refreshModelState()]).catch(() => {});
    ctx.emit("changed", {});
    pollRevectorize();
  });

  // --- Backup server ---------------------------------------------------------------------
  // The user's own server (python -m omoide.server): every change is mirrored to it through
  // a queue kept in IndexedDB. Everything the server sends is shown as text only.
  const backupUrl = h("input", { type: "url", id: "backup-url", autocomplete: "off",
    placeholder: "http://127.0.0.1:8750" });
  const backupKey = h("input", { type: "password", id: "backup-key", autocomplete: "off" });
  const backupKeyNote = h("small", { class: "hint", id: "backup-key-note" });
  backupKey.setAttribute("aria-describedby", backupKeyNote.id);
  const backupSave = tx("button", "backup.save", { type: "submit", id: "backup-save" }, t);
  const backupForm = h("form", { class: "stack", id: "backup-form" },
    h("div", { class: "row" }, field(t, "backup.url", backupUrl).row,
      h("div", { class: "field" }, h("label", { for: backupKey.id, "data-i18n": "backup.key" },
        t("backup.key")), backupKey, backupKeyNote)),
    h("div", { class: "actions" }, backupSave));
  const backupCheck = tx("button", "backup.check", { type: "button", id: "backup-check" }, t);
  const backupNow = tx("button", "backup.now", { type: "button", id: "backup-now" }, t);
  const backupRestore = tx("button", "backup.restore", { type: "button",
    id: "backup-restore" }, t);
  const backupOut = h("p", { id: "backup-out", "aria-live": "polite" });
  const backendsBody = h("tbody", { id: "backends-body" });
  const backendsTable = h("table", { class: "grid", id: "backends-table" },
    h("thead", {}, h("tr", {}, ["backup.backend", "backup.role", "backup.state",
      "backup.lastError", "backup.queued"].map((key) => tx("th", key, { scope: "col" }, t)))),
    backendsBody);
  // Changes queued for a server that is no longer set wait for it (a "waiting" row); the
  // user may drop them, after this confirmation says what that means.
  const backupDropText = h("p", { id: "backup-drop-text" });
  const backupDropYes = tx("button", "backup.dropYes", { type: "button", class: "danger",
    id: "backup-drop-yes" }, t);
  const backupDropNo = tx("button", "cancel", { type: "button", id: "backup-drop-no" }, t);
  const backupDrop = h("div", { class: "stack", id: "backup-drop", role: "group",
    "aria-labelledby": backupDropText.id, hidden: true }, backupDropText,
  h("div", { class: "actions" }, backupDropYes, backupDropNo));
  const backupBox = section(t, "backup.title", "backup-box",
    tx("p", "backup.explain", { class: "muted" }, t), backupForm,
    h("div", { class: "actions" }, backupCheck, backupNow, backupRestore), backupOut,
    backendsTable, backupDrop);
  let backupSettings = null;
  let backends = null;
  let backupLast = null; // {key, fields, error} of the last result shown
  let dropping = null; // the server (its URL, no key) whose waiting changes may be dropped
  function renderBackupForm() {
    if (!backupSettings) return;
    if (document.activeElement !== backupUrl) backupUrl.value = backupSettings.backup_url ?? "";
    backupKey.value = "";
    renderBackupKeyNote();
    const configured = Boolean(backupSettings.backup_url);
    backupNow.disabled = !configured;
    backupRestore.disabled = !configured;
    backupCheck.disabled = !configured;
  }
  function renderBackupKeyNote() { // alone on a language switch: typed values stay
    if (!backupSettings) return;
    backupKeyNote.textContent = backupSettings.backup_key
      ? t("backup.keySet", { mask: backupSettings.backup_key }) : t("backup.keyNone");
  }
  function stateOf(b) {
    if (b.ok === true) return "ok";
    return b.ok === false ? "down" : "unknown";
  }
  // Changes queued while another server was set, waiting for that one: its URL (never a
  // key: the engine's `server`), how many, and a button to drop them.
  function waitingRow(b) {
    const server = String(b.server ?? b.name);
    const drop = tx("button", "backup.drop", { type: "button", class: "danger",
      "aria-label": t("backup.dropAria", { server }) }, t);
    drop.addEventListener("click", () => {
      dropping = server;
      renderDrop();
      backupDropNo.focus();
    });
    return h("tr", { dataset: { role: "waiting", state: "waiting", server } },
      h("td", { class: "text" }, server),
      h("td", {}, t("backup.waiting")),
      h("td", {}, h("span", { class: "chip warn" }, t("backup.notSet"))),
      h("td", { class: "text" }, b.last_error ?? "—"),
      h("td", { dataset: { queued: String(b.queued ?? 0) } }, String(b.queued ?? 0), " ", drop));
  }
  function renderDrop() {
    const row = dropping === null ? null : (backends ?? []).find((b) =>
      b.role === "waiting" && String(b.server ?? b.name) === dropping);
    if (!row) dropping = null;
    backupDrop.hidden = !row;
    backupDropText.textContent = row
      ? t("backup.dropQuestion", { server: dropping, count: row.queued ?? 0 }) : "";
  }
  function renderBackends() {
    if (!backends) return;
    clear(backendsBody, backends.map((b) => {
      if (b.role === "waiting") return waitingRow(b);
      const state = stateOf(b);
      return h("tr", { dataset: { name: b.name, role: b.role, state } },
        h("td", { class: "text" }, b.name),
        h("td", {}, t(`backup.${b.role}`)),
        h("td", {}, h("span", { class: ["chip", state === "ok" ? "ok" : state === "down"
          && "warn"] }, t(`backup.${state}`))),
        h("td", { class: "text" }, b.last_error ?? "—"),
        h("td", { dataset: { queued: String(b.queued ?? 0), refused: String(b.refused ?? 0) } },
          String(b.queued ?? 0), b.refused ? h("span", { class: "chip warn",
            title: b.refused_error ?? "" }, t("backup.refused", { count: b.refused })) : null));
    }));
    const set = backends.filter((b) => b.role !== "waiting");
    backupBox.dataset.state = set.some((b) => b.ok === false) ? "down"
      : set.every((b) => b.ok === true) ? "ok" : "unknown";
    renderDrop();
  }
  function renderBackupOut() {
    if (!backupLast) return;
    clear(backupOut, backupLast.error
      ? h("span", { class: "error" }, t("backup.failed", { reason: backupLast.error }))
      : t(backupLast.key, backupLast.fields));
  }
  async function loadBackends() {
    try {
      backends = await ctx.call("backends_status", {});
      renderBackends();
    } catch (err) {
      clear(backendsBody, h("tr", {}, h("td", { colspan: 5 }, ctx.errorText(err))));
    }
  }
  async function loadBackupSettings() {
    backupSettings = await ctx.call("settings", {}).catch(() => null);
    renderBackupForm();
  }
  backupForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const changes = { backup_url: backupUrl.value.trim() || null };
    if (backupKey.value) changes.backup_key = backupKey.value;
    const result = await ctx.run(backupSave, () => ctx.call("set_settings", changes));
    if (result === undefined) return;
    const before = backupSettings?.backup_url ?? null;
    backupSettings = result;
    renderBackupForm();
    ctx.notify(t("backup.saved"));
    if (result.backup_url && result.backup_url !== before) {
      // a new server holds none of what was changed before: only "Back up now" copies it
      backupLast = { key: "backup.switched", fields: {} };
      renderBackupOut();
      backupOut.dataset.state = "switched";
    }
    loadBackends();
  });
  backupDropNo.addEventListener("click", () => {
    dropping = null;
    renderDrop();
  });
  backupDropYes.addEventListener("click", async () => {
    const server = dropping;
    if (server === null) return;
    const result = await ctx.run([backupDropYes, backupDropNo],
      () => ctx.call("backends_drop_waiting", { server }));
    if (result === undefined) return;
    dropping = null;
    ctx.notify(t("backup.dropped", { server, count: result.dropped }));
    backends = result.backends;
    renderBackends();
  });
  backupCheck.addEventListener("click", async () => {
    const status = await ctx.run(backupCheck, () => ctx.call("backends_check", {}));
    if (status) {
      backends = status;
      renderBackends();
    }
  });
  async function backupAction(button, verb, doneKey) {
    let failure = null;
    backupBox.setAttribute("aria-busy", "true");
    const result = await ctx.run([button, backupNow, backupRestore],
      () => ctx.call(verb, {}).catch((err) => { failure = err; return null; }));
    backupBox.removeAttribute("aria-busy");
    backupLast = failure ? { error: ctx.errorText(failure) }
      : result ? { key: typeof doneKey === "function" ? doneKey(result) : doneKey,
        fields: { ...result, errors: undefined } } : null;
    renderBackupOut();
    backupOut.dataset.state = failure ? "failed" : "done";
    renderBackupForm();
    await loadBackends();
    return result;
  }
  backupNow.addEventListener("click", () => backupAction(backupNow, "backup_now",
    (result) => (result.deleted ? "backup.backedUpErased" : "backup.backedUp")));
  backupRestore.addEventListener("click", async () => {
    const result = await backupAction(backupRestore, "backup_restore", "backup.restored");
    if (!result) return;
    await Promise.all([ctx.refreshCharacters(), ctx.refreshModelState()]).catch(() => {});
    ctx.emit("changed", {});
  });
  let backendsTimer = null;
  let backendsLoading = false;
  async function pollBackends() { // one chain of refreshes while the tab is shown
    clearTimeout(backendsTimer);
    if (panel.hidden || backendsLoading) return;
    backendsLoading = true;
    try {
      await loadBackends();
    } finally {
      backendsLoading = false;
    }
    clearTimeout(backendsTimer);
    if (!panel.hidden) backendsTimer = setTimeout(pollBackends, BACKENDS_POLL_MS);
  }

  // --- Settings ----------------------------------------------------------------------------
  const settingsForm = h("form", { class: "stack", id: "settings-form" });
  const settingsBox = section(t, "settings.title", "settings-box", settingsForm);
  let settings = null;
  function settingControl(key, value) {
    const id = `setting-${key}`;
    if (typeof value === "boolean") return h("input", { type: "checkbox", id, checked: value });
    if (typeof value === "number") {
      return h("input", { type: "number", id, value: String(value), step: "any" });
    }
    return h("input", { type: key.includes("key") ? "password" : "text", id,
      value: value ?? "", autocomplete: "off" });
  }
  function renderSettings() {
    if (!settings) return;
    const save = tx("button", "save", { type: "submit", id: "settings-save" }, t);
    const rows = Object.entries(settings)
      .filter(([key]) => !key.startsWith("backup_")) // the backup server has its own box
      .filter(([, v]) => v === null || ["string", "number", "boolean"].includes(typeof v))
      .map(([key, value]) => {
        const control = settingControl(key, value);
        control.dataset.key = key;
        control.dataset.kind = value === null ? "string" : typeof value;
        // a label the catalogue has follows a language switch by itself: the form is not
        // drawn again then, so what was typed and not saved yet stays
        const known = t(`settings.${key}`) !== `settings.${key}`;
        const row = h("div", { class: ["field", typeof value === "boolean" && "check"] },
          h("label", { for: control.id, "data-i18n": known ? `settings.${key}` : null },
            known ? t(`settings.${key}`) : key), control);
        return row;
      });
    clear(settingsForm, h("div", { class: "row" }, rows), save);
  }
  settingsForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const changes = {};
    for (const control of settingsForm.querySelectorAll("[data-key]")) {
      const { key, kind } = control.dataset;
      let value = control.value;
      if (kind === "boolean") value = control.checked;
      else if (kind === "number") value = Number(control.value);
      else if (settings[key] === null && value === "") value = null;
      if (value !== settings[key]) changes[key] = value;
    }
    if (!Object.keys(changes).length) return;
    const save = settingsForm.querySelector("#settings-save");
    const result = await ctx.run(save, () => ctx.call("set_settings", changes));
    if (result === undefined) return;
    settings = result && typeof result === "object" ? result
      : await ctx.call("settings", {});
    renderSettings();
    ctx.notify(t("settings.saved"));
  });
  async function loadSettings() {
    try {
      settings = await ctx.call("settings", {});
      renderSettings();
    } catch (err) {
      clear(settingsForm, h("p", { class: "muted" },
        t("settings.unavailable", { reason: ctx.errorText(err) })));
    }
  }

  const about = document.getElementById("about");
  panel.append(tx("h2", "tab.maintenance", {}, t), modelBox, revBox, storageBox, trashBox,
    auditView.box, sumBox, exportBox, backupBox, settingsBox);
  if (about) panel.append(about);

  async function loadModels() {
    catalogue = await ctx.run(null, () => ctx.call("models", {}));
    renderModels();
    await refreshAvailability();
  }

  let loaded = false;
  function shown() {
    if (!loaded) {
      loaded = true;
      loadModels();
      loadSettings();
      loadBackupSettings();
    }
    pollBackends();
    loadStorage();
    loadTrash();
    pollRevectorize();
  }
  ctx.on("model", renderModels);
  ctx.on("characters", () => { renderScope(); renderExportScope(); });
  ctx.on("character", () => {
    loadTrash(); auditView.reset(); sumOut.replaceChildren(); sumApply.hidden = true;
  });
  ctx.on("changed", (event) => {
    if (touches(event, ctx.character) && !panel.hidden) loadTrash();
  });
  ctx.on("engine-event", (event) => {
    if (event.type === "backup" && event.state === "running") {
      clear(backupOut, t("backup.running", { kind: t(`backup.kind.${event.kind}`),
        done: event.done ?? 0, total: event.total ?? 0 }));
      backupOut.dataset.state = "running";
    }
    if (event.type === "backends" && event.backends) {
      backends = event.backends;
      renderBackends();
    }
    if (event.type !== "revectorize") return;
    if (event.state && event.state !== "running") {
      finishRevectorize(event);
    } else if (event.running) {
      renderRevectorize(event);
    }
  });
  ctx.on("lang", () => {
    renderModels(); renderScope(); renderExportScope(); renderRevectorize();
    renderTrash(); renderBackupKeyNote(); renderBackends(); renderBackupOut();
    auditView.render();
  });
  renderScope();
  renderExportScope();
  renderRevectorize(null);
  return { shown };
}
