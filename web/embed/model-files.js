// The model files on this device: the origin private file system (OPFS), read in the
// embedding worker with a synchronous access handle. Reading e5's 118 MB from Cache Storage
// took 0.45-0.93 s on a loaded 2-core box, from OPFS 0.12-0.19 s (BENCHMARKS.md, issue 16),
// and the model's set-up reads it at every page load.
//
// Layout: omoide-models/<model id>/<file> holds the bytes, <file>.sha256 the sha256 they were
// checked against (the build manifest's). A file is written as <file>.part, then its digest
// is removed, the part moved over the file, and the digest written: a file without a
// digest (a write cut short after the move, or a file stored before digests) is hashed once
// and tagged; a digest never names bytes it was not computed from.
//
// Files of earlier versions lived in Cache Storage "omoide-models-v1"; the first look at a
// file there moves it here (checked against the same digest rules), so nothing downloaded
// before is downloaded again.

const ROOT = "omoide-models";
export const LEGACY_CACHE = "omoide-models-v1";

const hex = (buffer) =>
  Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

export async function sha256(bytes) {
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

// One operation per file at a time: OPFS grants one synchronous access handle per file,
// across the whole origin. Another tab's embedding worker reading or writing the same file
// made this one's access fail ("Access Handles cannot be created if there is another open
// Access Handle": a remember failed while the other tab downloaded the model), so the
// origin-wide Web Lock of the file is held too; within this worker the queue below keeps
// the order.
const busy = new Map();
const originLock = (path, job) => (globalThis.navigator?.locks
  ? navigator.locks.request(`omoide-model-file:${path}`, () => job()) : job());
function exclusive(path, job) {
  const run = (busy.get(path) ?? Promise.resolve()).then(() => originLock(path, job));
  const settled = run.catch(() => {});
  busy.set(path, settled);
  settled.then(() => {
    if (busy.get(path) === settled) busy.delete(path);
  });
  return run;
}

const missing = (err) => err?.name === "NotFoundError" || err?.name === "TypeMismatchError";

// The directory holding `path` ("omoide/multilingual-e5-small/onnx/model.onnx") and the file's
// name; null when a directory is missing and `create` is false.
async function locate(path, create) {
  const parts = path.split("/");
  const name = parts.pop();
  try {
    let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(ROOT, { create });
    for (const part of parts) dir = await dir.getDirectoryHandle(part, { create });
    return { dir, name };
  } catch (err) {
    if (missing(err)) return null;
    throw err;
  }
}

async function fileHandle(dir, name, create = false) {
  try {
    return await dir.getFileHandle(name, { create });
  } catch (err) {
    if (missing(err)) return null;
    throw err;
  }
}

async function readAll(handle) {
  const access = await handle.createSyncAccessHandle();
  try {
    const bytes = new Uint8Array(access.getSize());
    access.read(bytes, { at: 0 });
    return bytes;
  } finally {
    access.close();
  }
}

async function writeAll(handle, bytes) {
  const access = await handle.createSyncAccessHandle();
  try {
    access.truncate(0);
    let at = 0;
    while (at < bytes.length) at += access.write(bytes.subarray(at), { at });
    access.flush();
  } finally {
    access.close();
  }
}

async function readDigest(dir, name) {
  const handle = await fileHandle(dir, `${name}.sha256`);
  if (!handle) return null;
  return new TextDecoder().decode(await readAll(handle)).trim() || null;
}

async function writeDigest(dir, name, digest) {
  await writeAll(await fileHandle(dir, `${name}.sha256`, true), new TextEncoder().encode(digest));
}

async function remove(dir, name) {
  await dir.removeEntry(name).catch((err) => {
    if (!missing(err)) throw err;
  });
}

// The file's bytes, or null when it is not here.
export function read(path) {
  return exclusive(path, async () => {
    const where = await locate(path, false);
    const handle = where && await fileHandle(where.dir, where.name);
    return handle ? readAll(handle) : null;
  });
}

// The sha256 the stored file was checked against (its tag), or null.
export function digest(path) {
  return exclusive(path, async () => {
    const where = await locate(path, false);
    return where ? readDigest(where.dir, where.name) : null;
  });
}

// The file's bytes when they still hash to the digest stored with them, else null: for a
// file this device derived (no manifest to check it against), read back before it is used.
export function readChecked(path) {
  return exclusive(path, async () => {
    const where = await locate(path, false);
    const handle = where && await fileHandle(where.dir, where.name);
    const tag = handle && await readDigest(where.dir, where.name);
    if (!tag) return null;
    const bytes = await readAll(handle);
    return await sha256(bytes) === tag ? bytes : null;
  });
}

// Whether the file is here (any build of it): usable offline.
export async function has(path, legacyUrl) {
  const where = await locate(path, false);
  if (where && await fileHandle(where.dir, where.name)) return true;
  return Boolean(legacyUrl && await (await legacyCache()).match(legacyUrl));
}

// Cache Storage of earlier versions, opened once per worker (entries are moved out of it,
// the cache itself is never deleted).
let legacy = null;
function legacyCache() {
  legacy ??= caches.open(LEGACY_CACHE).catch((err) => {
    legacy = null;
    throw err;
  });
  return legacy;
}

// Store checked bytes under their digest (see the layout above for the order of steps).
export function write(path, bytes, digest) {
  return exclusive(path, () => writeNow(path, bytes, digest));
}

async function writeNow(path, bytes, digest) {
  const { dir, name } = await locate(path, true);
  const part = await fileHandle(dir, `${name}.part`, true);
  await writeAll(part, bytes);
  await remove(dir, `${name}.sha256`);
  await part.move(dir, name);
  await writeDigest(dir, name, digest);
}

// "current" (this build's bytes), "stale" (another build's) or "missing". A file from
// Cache Storage (`legacyUrl`, earlier versions) is moved here first.
export function state(path, expected, legacyUrl) {
  return exclusive(path, async () => {
    let where = await locate(path, false);
    let handle = where && await fileHandle(where.dir, where.name);
    if (!handle && legacyUrl) {
      if (!await adoptLegacy(path, legacyUrl)) return "missing";
      where = await locate(path, false);
      handle = await fileHandle(where.dir, where.name);
    }
    if (!handle) return "missing";
    const tag = await readDigest(where.dir, where.name);
    if (tag) return tag === expected ? "current" : "stale";
    const digest = await sha256(await readAll(handle));
    await writeDigest(where.dir, where.name, digest);
    return digest === expected ? "current" : "stale";
  });
}

// Move one file from Cache Storage into OPFS with its digest, then drop the entry. Returns
// whether there was one.
async function adoptLegacy(path, url) {
  const cache = await legacyCache();
  const hit = await cache.match(url);
  if (!hit) return false;
  const bytes = new Uint8Array(await hit.arrayBuffer());
  const digest = await sha256(bytes);
  await writeNow(path, bytes, digest);
  await cache.delete(url);
  return true;
}

// Transformers.js's custom cache (`env.customCache`): it reads the model's files from here.
// The embedding worker fetches, checks and stores every file before a model loads, so
// Transformers.js never has to store one: `put` keeps nothing.
export function transformersCache(localModelPath) {
  const pathOf = (key) => {
    const text = typeof key === "string" ? key : key.url;
    const local = new URL(localModelPath, self.location.href).pathname;
    const pathname = new URL(text, self.location.href).pathname;
    return pathname.startsWith(local) ? decodeURIComponent(pathname.slice(local.length)) : null;
  };
  return {
    async match(key) {
      const path = pathOf(key);
      const bytes = path && await read(path);
      return bytes ? fileResponse(bytes) : undefined;
    },
    async put() {},
  };
}

// A cached file as Transformers.js reads it (the shape of its own FileResponse): the bytes
// themselves, not a Response built from them. Building a Response from e5's 118 MB and
// reading it back cost ~0.5 s (a copy into the body and one out; idle box, probe), on the
// path of every model set-up.
function fileResponse(bytes) {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return {
    ok: true,
    status: 200,
    statusText: "OK",
    headers: new Headers({ "content-length": String(bytes.length) }),
    get body() {
      return new ReadableStream({ start(controller) {
        controller.enqueue(bytes);
        controller.close();
      } });
    },
    arrayBuffer: async () => (whole ? bytes.buffer : bytes.slice().buffer),
    text: async () => new TextDecoder().decode(bytes),
    json: async () => JSON.parse(new TextDecoder().decode(bytes)),
    clone: () => fileResponse(bytes),
  };
}
