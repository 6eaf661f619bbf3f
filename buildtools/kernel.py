"""Compile the kernel (kernel/topk.c: vectors, kernel/bm25.c: BM25 over array postings) to
WebAssembly with Debian clang + wasm-ld, both sources into one module.

Two variants land in dist/kernel/: ``topk.wasm`` (SIMD, ``-msimd128``) and
``topk-scalar.wasm`` (the same source without SIMD, for engines that lack it; the JS wrapper
web/kernel/vectors.js falls back to plain JavaScript when even that fails). No libc, no
Emscripten: the kernel manages its own linear memory. The stage is skipped when the sources,
the flags and the compiler version are unchanged and both outputs are still there.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from .files import write_if_changed
from .paths import CACHE, DIST, ROOT

SOURCES = [ROOT / "kernel" / "topk.c", ROOT / "kernel" / "bm25.c"]
OUT = DIST / "kernel"
COMMON_FLAGS = [
    "--target=wasm32",
    "-O3",
    "-mbulk-memory",
    "-nostdlib",
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Wl,--no-entry",
    "-Wl,--export-dynamic",
    "-Wl,--strip-all",
]
VARIANTS = {
    "topk.wasm": ["-msimd128"],
    "topk-scalar.wasm": [],
}
INSTALL_HINT = (
    "the vector kernel needs clang and wasm-ld (LLVM's WebAssembly linker): "
    "install them with `sudo apt-get install clang lld`"
)
WASM_MAGIC = b"\0asm\x01\0\0\0"


class KernelBuildError(SystemExit):
    """Stops the build with a readable message (no traceback)."""


def find_tools() -> tuple[str, str]:
    clang = shutil.which("clang")
    wasm_ld = shutil.which("wasm-ld")
    missing = [name for name, path in (("clang", clang), ("wasm-ld", wasm_ld)) if path is None]
    if missing:
        raise KernelBuildError(f"{', '.join(missing)} not found: {INSTALL_HINT}")
    assert clang is not None and wasm_ld is not None
    return clang, wasm_ld


def tool_version(tool: str) -> str:
    result = subprocess.run([tool, "--version"], capture_output=True, text=True)
    return result.stdout.strip()


def flags_for(variant: str) -> list[str]:
    return [*COMMON_FLAGS, *VARIANTS[variant]]


def build_key(clang: str, wasm_ld: str) -> str:
    h = hashlib.sha256()
    for src in SOURCES:
        h.update(src.name.encode())
        h.update(src.read_bytes())
    for variant in sorted(VARIANTS):
        h.update(variant.encode())
        h.update(" ".join(flags_for(variant)).encode())
    h.update(tool_version(clang).encode())
    h.update(tool_version(wasm_ld).encode())
    return h.hexdigest()


def compile_variant(clang: str, variant: str, out: Path) -> bytes:
    tmp = CACHE / "kernel" / variant
    tmp.parent.mkdir(parents=True, exist_ok=True)
    cmd = [clang, *flags_for(variant), "-o", str(tmp), *map(str, SOURCES)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        hint = f"\n{INSTALL_HINT}" if "wasm-ld" in detail or "wasm32" in detail else ""
        raise KernelBuildError(f"compiling {variant} failed:\n$ {' '.join(cmd)}\n{detail}{hint}")
    data = tmp.read_bytes()
    if not data.startswith(WASM_MAGIC):
        raise KernelBuildError(f"{variant}: clang did not produce a WebAssembly module")
    write_if_changed(out / variant, data)
    return data


def build_kernel(log=print) -> dict:
    """Write dist/kernel/topk.wasm and topk-scalar.wasm unless nothing changed."""
    clang, wasm_ld = find_tools()
    key = build_key(clang, wasm_ld)
    stamp = CACHE / "stamps" / "kernel"
    outputs = [OUT / variant for variant in VARIANTS]
    if stamp.exists() and stamp.read_text() == key and all(p.exists() for p in outputs):
        log("kernel: unchanged")
        return {variant: hashlib.sha256((OUT / variant).read_bytes()).hexdigest()
                for variant in VARIANTS}
    OUT.mkdir(parents=True, exist_ok=True)
    built = {}
    for variant in VARIANTS:
        data = compile_variant(clang, variant, OUT)
        built[variant] = hashlib.sha256(data).hexdigest()
        log(f"kernel: built {variant} ({len(data):,} bytes)")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key)
    return built
