// Which build of onnxruntime-web's WebAssembly a worker loads (the embedding worker and the
// raw-session benchmark page alike). One release ships two builds that matter here: the
// asyncify build runs WebAssembly and WebGPU, the plain build WebAssembly only, with half the
// bytes to compile (14 vs 27 MB) and faster kernels: model set-up ~2x and inference ~1.5x
// faster on this 2-core box, identical vectors (BENCHMARKS.md, issue 16). A worker loads
// one of them once, at its first session: the plain build unless a WebGPU adapter exists.

const FILES = {
  plain: "ort-wasm-simd-threaded",
  asyncify: "ort-wasm-simd-threaded.asyncify",
};

// "plain" or "asyncify": the build this machine needs, or the one a worker's URL asks for
// (`?runtime=`, the benchmark compares them).
export async function pickRuntime() {
  const asked = new URL(self.location.href).searchParams.get("runtime");
  if (asked in FILES) return asked;
  if (!("gpu" in navigator)) return "plain";
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  return adapter ? "asyncify" : "plain";
}

// onnxruntime-web's `env.wasm.wasmPaths` for that build, from our own origin.
export function wasmPaths(base, runtime) {
  const name = FILES[runtime];
  if (!name) throw new Error(`unknown onnxruntime-web build ${runtime}`);
  return {
    mjs: new URL(`vendor/ort/${name}.mjs`, base).href,
    wasm: new URL(`vendor/ort/${name}.wasm`, base).href,
  };
}
