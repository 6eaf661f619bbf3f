// A page that hosts an engine worker (the app, the chat-app bridge) hands it the recall
// counts it still holds when it is hidden or goes away (closed, navigated away, discarded):
// they are written in batches every 2 s, and the worker ends with the page.
export function leavingFlushesRecalls(call) {
  const flush = () => call("flush_recalls", { leaving: true }).catch(() => {});
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") flush();
  });
  // also when the page goes while hidden (a background tab closed): the counts made since
  addEventListener("pagehide", flush);
}
