// Omoide service worker: precache the app shell, cache model files on first use.
// build.py fills in VERSION (a hash of every precached file) and the lists below.
const VERSION = "__VERSION__";
const SHELL_CACHE = `omoide-shell-${VERSION}`;
const MODEL_CACHE = "omoide-models-v1";
const PRECACHE = __PRECACHE__;
const RUNTIME_DIRS = __RUNTIME_DIRS__;

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

// Model files are large: stored the first time they are fetched, then served from the cache.
async function fromModelCache(request) {
  const cache = await caches.open(MODEL_CACHE);
  const hit = await cache.match(request, { ignoreSearch: true });
  if (hit) return hit;
  const response = await fetch(request);
  if (response.ok && response.status === 200) await cache.put(request, response.clone());
  return response;
}

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  const path = scopePath(url);
  if (path === "sw.js") return;
  if (RUNTIME_DIRS.some((dir) => path.startsWith(dir))) {
    event.respondWith(fromModelCache(event.request));
  } else {
    event.respondWith(fromShell(event.request));
  }
});

self.addEventListener("message", (event) => {
  if (event.data === "omoide:version") event.source?.postMessage({ version: VERSION });
});
