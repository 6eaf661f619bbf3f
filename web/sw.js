// Omoide service worker: precache the app shell and serve it cache-first.
// build.py fills in VERSION (a hash of every precached file) and the list below.
// Model weights are not precached (hundreds of MB): the embedding worker stores each file in
// the origin private file system the first time it loads it (web/embed/model-files.js), so
// they pass through here untouched and are never stored twice.
const VERSION = "__VERSION__";
const SHELL_CACHE = `omoide-shell-${VERSION}`;
const PRECACHE = __PRECACHE__;

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(SHELL_CACHE);
    // cache: "reload" bypasses the HTTP cache so a new version never precaches stale bytes.
    await cache.addAll(PRECACHE.map((path) => new Request(path, { cache: "reload" })));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("omoide-shell-") && name !== SHELL_CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

function scopePath(url) {
  const scope = new URL(self.registration.scope).pathname;
  return url.pathname.startsWith(scope) ? url.pathname.slice(scope.length) : url.pathname;
}

async function fromShell(request) {
  const cache = await caches.open(SHELL_CACHE);
  const hit = await cache.match(request, { ignoreSearch: true });
  return hit ?? fetch(request);
}

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  const path = scopePath(url);
  if (path === "sw.js" || path.startsWith("models/omoide/")) return;
  event.respondWith(fromShell(event.request));
});

self.addEventListener("message", (event) => {
  if (event.data === "omoide:version") event.source?.postMessage({ version: VERSION });
});
