// Recall playground: query, mode, k, threshold, RRF k and fusion. Every result shows its
// relevance (a bar, 0-100 %: the same meaning for every query and model) and when the memory
// happened; the raw scores (fused score, each ranker's score and rank) stay one click away for
// experts. Only the rankers the mode ran are shown: vector mode never claims full-text missed.
import { clear, field, formatAge, formatDate, formatNumber, h, options, tx } from "./dom.js";

const MODES = ["hybrid", "vector", "fulltext"];
// "" = the selected model's recommended fusion (registry: zscore for e5, adaptive for MiniLM)
const FUSIONS = ["", "adaptive", "zscore", "rrf"];

export function mountRecall(panel, ctx) {
  const t = (...args) => ctx.t(...args);
  const query = h("input", { type: "search", id: "recall-query", required: true,
    autocomplete: "off" });
  const mode = h("select", { id: "recall-mode" });
  // required: a blank field was Number("") = 0, refused as "k: 0" though nothing was typed
  const k = h("input", { type: "number", id: "recall-k", min: 1, max: 100, step: 1, value: "5",
    required: true });
  const threshold = h("input", { type: "number", id: "recall-threshold", min: 0, step: "any",
    value: "" });
  // Empty = the engine's default cut-off; 0 shows every hit, however weak.
  const minRelevance = h("input", { type: "number", id: "recall-min-relevance", min: 0, max: 100,
    step: 1, value: "" });
  const rrfK = h("input", { type: "number", id: "recall-rrf-k", min: 1, max: 1000, step: 1,
    value: "60", required: true });
  const fusion = h("select", { id: "recall-fusion" });
  const search = tx("button", "recall.search", { type: "submit", id: "recall-search" }, t);
  const fusionRows = [field(t, "recall.fusion", fusion).row, field(t, "recall.rrfK", rrfK,
    { hint: "recall.rrfHint" }).row];
  const form = h("form", { class: "stack", id: "recall-form", role: "search" },
    field(t, "recall.query", query).row,
    h("div", { class: "row" }, field(t, "recall.mode", mode).row, field(t, "recall.k", k).row,
      field(t, "recall.minRelevance", minRelevance, { hint: "recall.minRelevanceHint" }).row,
      field(t, "recall.threshold", threshold, { hint: "recall.thresholdHint" }).row,
      ...fusionRows),
    search);
  const status = h("p", { class: "muted", id: "recall-status", "aria-live": "polite" });
  const results = h("ol", { class: "results", id: "recall-results" });
  panel.append(tx("h2", "tab.recall", {}, t),
    tx("p", "recall.notCounted", { class: "muted", id: "recall-not-counted" }, t),
    form, status, results);
  let last = null;

  function renderOptions() {
    options(mode, MODES.map((m) => [m, t(`mode.${m}`)]), mode.value || "hybrid");
    options(fusion, FUSIONS.map((f) => [f, t(`fusion.${f || "model"}`)]), fusion.value);
  }
  mode.addEventListener("change", () => {
    for (const row of fusionRows) row.hidden = mode.value !== "hybrid";
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!ctx.character) {
      status.textContent = t("memories.pickCharacter");
      return;
    }
    // a preview: the memories' recall counts stay as they are (recall.notCounted)
    const params = { character: ctx.character, query: query.value, mode: mode.value,
      k: Number(k.value), count: false };
    if (threshold.value !== "") params.threshold = Number(threshold.value);
    if (minRelevance.value !== "") params.min_relevance = Number(minRelevance.value) / 100;
    if (mode.value === "hybrid") Object.assign(params, { rrf_k: Number(rrfK.value),
      fusion: fusion.value || null });
    status.textContent = t("recall.searching");
    results.replaceChildren();
    const started = performance.now();
    let error = null;
    const hits = await ctx.run(search, () => ctx.call("recall", params).catch((err) => {
      error = err;
      return null;
    }));
    if (error) {
      status.textContent = ctx.errorText(error);
      status.classList.add("error");
      panel.dataset.state = "error";
      return;
    }
    status.classList.remove("error");
    last = { hits, ms: performance.now() - started, mode: params.mode };
    render();
    panel.dataset.state = "done";
  });

  // A ranker that ran but did not put the memory in its own list has no rank (its score may
  // still be 0); a ranker the mode did not run is not shown at all.
  function component(label, score, rank, digits) {
    const absent = score === null || score === undefined || rank === null || rank === undefined;
    return h("span", { class: ["component", absent && "absent"] },
      h("span", { class: "label" }, label), " ",
      absent ? t("recall.notMatched")
        : t("recall.scoreRank", { score: formatNumber(score, digits), rank }));
  }

  function relevanceBar(value) {
    const percent = Math.round((value ?? 0) * 100);
    return h("span", { class: "relevance" },
      h("meter", { min: 0, max: 1, low: 0.5, optimum: 1, value: value ?? 0,
        "aria-label": t("recall.relevance") }),
      h("span", { class: "relevance-value" }, t("recall.relevanceValue", { percent })));
  }

  function rawScores(hit, mode) {
    const parts = [h("span", { class: "fused" },
      t("recall.fused", { score: formatNumber(hit.score, 4) }))];
    if (mode === "hybrid" && (hit.vector_cosine === null || hit.vector_cosine === undefined)) {
      // hybrid scores every candidate's cosine: none means the vector ranker was not asked
      // (the selected model does not read the query's language; full text answered alone)
      parts.push(h("span", { class: ["component", "absent"] },
        h("span", { class: "label" }, t("recall.vector")), " ", t("recall.notAsked")));
    } else if (mode !== "fulltext") {
      parts.push(component(t("recall.vector"), hit.vector_cosine, hit.vector_rank, 4));
    }
    if (mode !== "vector") {
      parts.push(component(t("recall.fulltext"), hit.bm25, hit.fulltext_rank, 3));
    }
    return h("details", { class: "raw" }, h("summary", {}, t("recall.rawScores")),
      h("div", { class: "scores" }, ...parts));
  }

  function when(memory) {
    const at = memory.created_at;
    return h("time", { datetime: new Date(at * 1000).toISOString(),
      title: formatAge(at, ctx.lang) }, formatDate(at, ctx.lang));
  }

  function render() {
    if (!last) return;
    status.textContent = t("recall.summary", { n: last.hits.length, ms: Math.round(last.ms),
      mode: t(`mode.${last.mode}`) });
    clear(results, last.hits.map((hit, index) => h("li", { class: "result",
      dataset: { id: hit.memory.id, rank: index + 1,
        relevance: (hit.relevance ?? 0).toFixed(3) } },
    h("p", { class: "text" }, hit.memory.text),
    h("div", { class: "scores" }, relevanceBar(hit.relevance), when(hit.memory),
      hit.in_timeframe ? h("span", { class: "chip in-timeframe" }, t("recall.inTimeframe"))
        : null),
    rawScores(hit, last.mode),
    h("div", { class: "meta" }, h("span", { class: "chip" }, t(`kind.${hit.memory.kind}`)),
      h("span", { class: "muted" }, hit.memory.id)))));
    if (!last.hits.length) results.append(h("li", { class: "empty" }, t("recall.none")));
  }

  renderOptions();
  ctx.on("lang", () => { renderOptions(); render(); });
  ctx.on("character", () => { last = null; results.replaceChildren(); status.textContent = ""; });
  return { shown: () => {} };
}
