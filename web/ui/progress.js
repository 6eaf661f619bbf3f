// A progress line for one long engine verb (import, paste preview, summarize, chat files):
// what the engine is doing and, while it embeds, count / total and time left. It is shown
// next to the control that started the call and only reflects the engine's own progress
// events (web/engine-worker.js `progress`), never a guess.
import { h } from "./dom.js";

const STAGES = ["working", "model", "embedding", "saving"];

export function progressLine(ctx, verb, id) {
  const bar = h("progress", { max: 1 });
  const text = h("span", { class: "what" });
  const line = h("p", { class: "progress-line", id, role: "status", "aria-live": "polite",
    hidden: true }, bar, " ", text);
  let active = false;
  let embedding = null; // {total, started, from}: the rate of the current embedding run

  function show({ stage, done, total }) {
    if (!STAGES.includes(stage)) return;
    line.hidden = false;
    line.dataset.stage = stage;
    if (stage === "embedding" && total) {
      if (!embedding || embedding.total !== total || done < embedding.from) {
        embedding = { total, started: performance.now(), from: done };
      }
      bar.max = total;
      bar.value = done;
      line.dataset.done = String(done);
      line.dataset.total = String(total);
      const seconds = (performance.now() - embedding.started) / 1000;
      const rate = done > embedding.from && seconds > 0 ? (done - embedding.from) / seconds : 0;
      text.textContent = rate > 0
        ? ctx.t("progress.embeddingEta", { done, total, s: Math.ceil((total - done) / rate) })
        : ctx.t("progress.embedding", { done, total });
    } else {
      bar.removeAttribute("value"); // indeterminate
      text.textContent = ctx.t(`progress.${stage}`);
    }
  }

  ctx.on("engine-event", (event) => {
    if (active && event.type === "progress" && event.verb === verb) show(event);
  });

  return {
    element: line,
    // Run `fn` (the engine call) with the line following its progress.
    async track(fn) {
      active = true;
      embedding = null;
      show({ stage: "working" });
      try {
        return await fn();
      } finally {
        active = false;
        line.hidden = true;
      }
    },
  };
}
