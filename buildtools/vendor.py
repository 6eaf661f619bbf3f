"""Copy the pinned runtime assets from node_modules into dist/vendor.

Everything the browser loads comes from here, served from our own origin: nothing is ever
fetched from a CDN. The list is explicit so an upgrade that moves a file fails the build.
"""

from __future__ import annotations

import json
from pathlib import Path

from .files import copy_if_changed, write_if_changed
from .paths import DIST, NODE_MODULES

# (package folder in node_modules, file inside it, destination under dist/vendor)
ASSETS: list[tuple[str, str, str]] = [
    ("pyodide", "pyodide.mjs", "pyodide/pyodide.mjs"),
    ("pyodide", "pyodide.asm.mjs", "pyodide/pyodide.asm.mjs"),
    ("pyodide", "pyodide.asm.wasm", "pyodide/pyodide.asm.wasm"),
    ("pyodide", "python_stdlib.zip", "pyodide/python_stdlib.zip"),
    ("pyodide", "pyodide-lock.json", "pyodide/pyodide-lock.json"),
    ("comlink", "dist/esm/comlink.mjs", "comlink/comlink.mjs"),
    ("dexie", "dist/dexie.mjs", "dexie/dexie.mjs"),
    ("@huggingface/transformers", "dist/transformers.js", "transformers/transformers.js"),
    # The exact onnxruntime-web release that this Transformers.js release pins, in two
    # builds (web/embed/runtime.js picks one per worker): asyncify (WASM and WebGPU in one
    # binary) where a WebGPU adapter exists, the plain WASM build elsewhere.
    ("onnxruntime-web", "dist/ort-wasm-simd-threaded.mjs", "ort/ort-wasm-simd-threaded.mjs"),
    ("onnxruntime-web", "dist/ort-wasm-simd-threaded.wasm", "ort/ort-wasm-simd-threaded.wasm"),
    ("onnxruntime-web", "dist/ort-wasm-simd-threaded.asyncify.mjs",
     "ort/ort-wasm-simd-threaded.asyncify.mjs"),
    ("onnxruntime-web", "dist/ort-wasm-simd-threaded.asyncify.wasm",
     "ort/ort-wasm-simd-threaded.asyncify.wasm"),
    # onnxruntime-web's own API, for the raw-session side of bench/embed_browser.py only: the
    # build Transformers.js bundles, on the same WebAssembly build as the embedding worker.
    ("onnxruntime-web", "dist/ort.webgpu.bundle.min.mjs", "ort/ort.webgpu.bundle.min.mjs"),
    # Orama, for the side-by-side browser benchmark only (bench/orama_browser.py): the npm
    # package ships no single-file bundle, so its browser ESM folder (relative imports only)
    # is copied whole, *.js files only.
    ("@orama/orama", "dist/browser", "orama"),
]


# Exact-text fixes applied to a vendored file (destination under dist/vendor). Each `old` must
# occur exactly once, so an upgrade that changes the code fails the build instead of silently
# shipping without the fix.
PATCHES: dict[str, list[tuple[str, str]]] = {
    # Transformers.js serializes sessions and runs on promise chains; a rejected run (e.g. a
    # lost WebGPU device) left the chain rejected, so every later run in the worker failed with
    # that same error, even on a fresh WebAssembly session. Later runs must still run.
    "transformers/transformers.js": [
        ("webInitChain = webInitChain.then(load)",
         "webInitChain = webInitChain.catch(() => {}).then(load)"),
        ("webInferenceChain = webInferenceChain.then(run)",
         "webInferenceChain = webInferenceChain.catch(() => {}).then(run)"),
    ],
}


def patched(source: Path, dst: str) -> bytes:
    text = source.read_text(encoding="utf-8")
    for old, new in PATCHES[dst]:
        if text.count(old) != 1:
            raise SystemExit(f"vendor patch for {dst} no longer applies: {old!r}")
        text = text.replace(old, new)
    return text.encode("utf-8")


def package_version(package: str) -> str:
    return json.loads((NODE_MODULES / package / "package.json").read_text())["version"]


def check_ort_pin() -> None:
    """Transformers.js only works with the onnxruntime-web build it was released with."""
    tjs = json.loads((NODE_MODULES / "@huggingface/transformers/package.json").read_text())
    wanted = tjs["dependencies"]["onnxruntime-web"]
    have = package_version("onnxruntime-web")
    if wanted != have:
        raise SystemExit(f"onnxruntime-web {have} installed, Transformers.js wants {wanted}")


def asset_files(source: Path, dst: str) -> list[tuple[Path, Path]]:
    """(source, destination) pairs of one ASSETS entry; a folder entry means its *.js files."""
    target = DIST / "vendor" / dst
    if not source.is_dir():
        return [(source, target)]
    return [(f, target / f.relative_to(source)) for f in sorted(source.rglob("*.js"))]


def vendor_assets(log=print) -> dict[str, str]:
    """Copy every asset; return {package: version} for the build info."""
    check_ort_pin()
    copied = total = 0
    for package, src, dst in ASSETS:
        source = NODE_MODULES / package / src
        if not source.exists():
            raise SystemExit(f"missing {source}: run npm ci (the lock file pins it)")
        for a, b in asset_files(source, dst):
            if dst in PATCHES:
                copied += write_if_changed(b, patched(a, dst))
            else:
                copied += copy_if_changed(a, b)
            total += 1
    log(f"vendor: {copied} file(s) copied, {total - copied} unchanged")
    packages = sorted({p for p, _, _ in ASSETS})
    return {p: package_version(p) for p in packages}


def vendored_paths() -> list[Path]:
    return [b for package, src, dst in ASSETS
            for _, b in asset_files(NODE_MODULES / package / src, dst)]
