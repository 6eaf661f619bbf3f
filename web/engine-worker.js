// The engine worker: boots Pyodide, loads the omoide wheel and answers the page's calls.
// It is a module worker because Pyodide's ES module build refuses classic workers.
import * as Comlink from "./vendor/comlink/comlink.mjs";
import { loadPyodide } from "./vendor/pyodide/pyodide.mjs";
import * as vectors from "./kernel/vectors.js";

const base = new URL("./", import.meta.url);
let booting = null;
let dispatch = null;

async function loadWheel(pyodide, url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  const purelib = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  pyodide.unpackArchive(await response.arrayBuffer(), "wheel", { extractDir: purelib });
}

async function boot(onProgress) {
  const report = (stage, detail = "") => onProgress?.({ stage, detail });
  const info = await (await fetch(new URL("build-info.json", base))).json();
  report("runtime", `Pyodide ${info.vendor.pyodide}`);
  const kernelLoading = vectors.loadKernel("auto"); // compiles while Pyodide boots
  const pyodide = await loadPyodide({ indexURL: new URL("vendor/pyodide/", base).href });
  report("python", pyodide.runPython("import sys; sys.version.split()[0]"));
  await loadWheel(pyodide, new URL(info.wheel, base).href);
  // The vector kernel (WebAssembly SIMD, scalar WebAssembly or JS): Python reaches it as the
  // module omoide_vectors through omoide.browser.wasm_kernel, which registers its rpc verbs.
  await kernelLoading;
  pyodide.registerJsModule("omoide_vectors", vectors);
  pyodide.runPython("import omoide.browser.wasm_kernel");
  report("engine", `omoide ${info.omoide}`);
  dispatch = pyodide.pyimport("omoide.browser.rpc").dispatch;
  report("ready");
  return { omoide: info.omoide, vendor: info.vendor };
}

// Every engine call crosses the boundary as JSON text: no proxies to leak, and the page gets
// plain data. Errors come back as {code, message} and are thrown here as Error objects.
function call(method, params = {}) {
  if (!dispatch) throw new Error("the engine is not ready yet");
  const reply = JSON.parse(dispatch(method, JSON.stringify(params)));
  if (reply.ok) return reply.result;
  const error = new Error(reply.error.message);
  error.name = reply.error.code;
  throw error;
}

Comlink.expose({
  boot(onProgress) {
    booting ??= boot(onProgress);
    return booting;
  },
  call,
});
