// One model-level download state from per-file progress events.
//
// The embedding worker downloads each model file itself, once, into the model cache before
// Transformers.js reads it from there, so it knows which files were cache hits: a cache hit
// is never shown as a download. Events use Transformers.js' shape ({status, file, loaded,
// total}).

export class ModelProgress {
  constructor(model, dtype, expectedFiles = {}) {
    this.model = model;
    this.dtype = dtype;
    // file -> {loaded, total, fromCache, done}; totals known up front from the build manifest.
    this.files = {};
    for (const [file, size] of Object.entries(expectedFiles)) {
      this.files[file] = { loaded: 0, total: size, fromCache: false, done: false };
    }
    this.error = null;
    this.ready = false;
    // Files are all here and the inference session is being created (seconds, no bytes).
    this.initialising = false;
  }

  file(name) {
    this.files[name] ??= { loaded: 0, total: 0, fromCache: false, done: false };
    return this.files[name];
  }

  markCacheHit(name) {
    const f = this.file(name);
    f.fromCache = true;
    f.done = true;
    f.loaded = f.total;
  }

  // Apply one progress event; returns true when the state changed.
  apply(event) {
    if (!event?.file) {
      if (event?.status === "ready") this.ready = true;
      return event?.status === "ready";
    }
    const f = this.file(event.file);
    if (event.status === "progress") {
      f.loaded = event.loaded ?? f.loaded;
      if (event.total) f.total = event.total;
    } else if (event.status === "done") {
      f.done = true;
      f.loaded = Math.max(f.loaded, f.total);
    } else if (event.status !== "initiate" && event.status !== "download") {
      return false;
    }
    return true;
  }

  fail(error) {
    this.error = String(error?.message ?? error);
  }

  snapshot() {
    const files = Object.entries(this.files).map(([name, f]) => ({ name, ...f }));
    const network = files.filter((f) => !f.fromCache);
    const sum = (list, key) => list.reduce((acc, f) => acc + (f[key] || 0), 0);
    return {
      model: this.model,
      dtype: this.dtype,
      files,
      bytesDone: sum(network, "loaded"),
      bytesTotal: sum(network, "total"),
      cachedBytes: sum(files.filter((f) => f.fromCache), "total"),
      downloading: network.some((f) => !f.done) && !this.error,
      fromNetwork: network.length,
      fromCache: files.length - network.length,
      done: this.ready || (files.length > 0 && files.every((f) => f.done)),
      initialising: this.initialising && !this.ready && !this.error,
      error: this.error,
    };
  }
}
