// Audit (maintenance tab): superseded memories and contradictions with restore from history,
// near-duplicates, stale and hot memories of the selected character. Read-only except for
// "restore". Memory text is rendered as text only (dom.js never parses HTML).
import { clear, formatNumber, h, tx } from "./dom.js";

const SHOWN = 20; // per list; the audit itself lists up to 100

// One list of the report: a heading with its count, the rows, or a "none" line.
function group(t, id, key, rows, noneKey) {
  return h("div", { class: "audit-group", id },
    h("h4", {}, t(key, { n: rows.length })),
    rows.length ? h("ul", { class: "memories" }, rows.slice(0, SHOWN))
      : h("p", { class: "muted" }, t(noneKey)));
}

export function mountAudit(ctx, section) {
  const t = (...args) => ctx.t(...args);
  const refresh = tx("button", "audit.refresh", { type: "button", id: "audit-refresh" }, t);
  const out = h("div", { id: "audit-out", "aria-live": "polite" });
  const box = section(t, "audit.title", "audit-box",
    tx("p", "audit.explain", { class: "muted" }, t), h("div", { class: "actions" }, refresh),
    out);
  let report = null;

  function supersededRow(pair) {
    const restore = h("button", { type: "button", class: "audit-restore",
      "aria-label": t("audit.restoreOf", { text: pair.old.text.slice(0, 40) }) },
    t("audit.restore"));
    restore.addEventListener("click", async () => {
      const done = await ctx.run(restore, () =>
        ctx.call("restore", { character: ctx.character, id: pair.old.id }));
      if (done === undefined) return;
      ctx.notify(t("audit.restored"));
      ctx.emit("changed", { character: ctx.character });
      await load();
    });
    return h("li", { class: "memory", dataset: { id: pair.old.id, action: "superseded" } },
      h("p", { class: "text old" }, h("s", {}, pair.old.text)),
      h("p", { class: "text" }, "→ ", pair.new.text ?? t("audit.gone")),
      h("div", { class: "meta" },
        pair.contradiction ? h("span", { class: "chip action-superseded" },
          t("audit.contradiction")) : h("span", { class: "chip" }, t("audit.replaced")),
        pair.old.key ? h("span", { class: "chip" }, pair.old.key) : null,
        h("span", { class: "muted" }, pair.reason ?? "")),
      h("div", { class: "actions" }, restore));
  }

  function render() {
    if (!report) {
      out.replaceChildren();
      return;
    }
    const c = report.counts ?? {};
    const superseded = report.superseded ?? [];
    const legacy = (report.contradictions ?? []).flatMap((m) => (m.history ?? []).map((old) =>
      h("li", { class: "memory" }, h("p", { class: "text old" }, h("s", {}, old.text ?? "")),
        h("div", { class: "meta" }, h("span", { class: "chip" }, m.key ?? ""),
          h("span", { class: "muted" }, `${old.polarity ?? ""} → ${m.polarity ?? ""}`)))));
    const duplicates = (report.duplicates ?? []).map((d) => h("li", { class: "memory" },
      ...(d.texts ?? d.ids).map((text) => h("p", { class: "text" }, text)),
      h("div", { class: "meta" }, h("span", { class: "chip" }, d.reason),
        d.cosine !== null && d.cosine !== undefined
          ? h("span", { class: "muted" }, `cos ${formatNumber(d.cosine)}`) : null)));
    const stale = (report.stale ?? []).map((s) => h("li", { class: "memory" },
      h("p", { class: "text" }, s.text ?? s.id),
      h("div", { class: "meta" }, h("span", { class: "chip" }, t(`kind.${s.kind}`)),
        h("span", { class: "muted" }, t("audit.staleDays", { days: Math.round(s.days_since_use) })))));
    const hot = (report.hot ?? []).map((e) => h("li", { class: "memory" },
      h("p", { class: "text" }, e.text),
      h("div", { class: "meta" }, h("span", { class: "chip" }, e.plan),
        h("span", { class: "muted" }, e.reason))));
    clear(out,
      h("p", { class: "strong", id: "audit-summary" }, t("audit.summary", {
        live: c.live ?? 0, trashed: c.trashed ?? 0, hot: report.hot_chars ?? 0,
        budget: report.budget_chars ?? 0 })),
      group(t, "audit-superseded", "audit.superseded",
        [...superseded.map(supersededRow), ...legacy], "audit.supersededNone"),
      group(t, "audit-duplicates", "audit.duplicates", duplicates, "audit.none"),
      group(t, "audit-stale", "audit.stale", stale, "audit.none"),
      group(t, "audit-hot", "audit.hot", hot, "audit.none"));
  }

  async function load() {
    if (!ctx.character) {
      report = null;
      render();
      return;
    }
    const character = ctx.character;
    const got = await ctx.run(refresh, () => ctx.call("audit", { character }));
    if (got === undefined || character !== ctx.character) return;
    report = got;
    render();
  }
  refresh.addEventListener("click", load);
  const reset = () => { report = null; render(); };
  return { box, load, reset, render, loaded: () => report !== null };
}
