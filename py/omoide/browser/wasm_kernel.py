"""The browser's vector kernel: ``VectorKernel`` backed by WebAssembly (or JS) in the worker.

The engine worker loads ``kernel/vectors.js``, picks the best implementation ("wasm-simd",
"wasm" or "js") and registers the module for Python as ``omoide_vectors``
(``pyodide.registerJsModule``). ``WasmKernel`` drives its position-addressed store: the rows
live in the kernel's own WebAssembly memory and are copied there once, when added; a query
copies only the query vector in and k results out. Python keeps the id <-> position map (the
store removes by swapping the last row into the hole and says which row moved), so ids never
cross the boundary and ``ids()`` / ``in`` cost nothing.

Python buffers (``array('f')``, ``array('i')``) are handed to JavaScript as proxies that the
wrapper reads with ``getBuffer`` (a view on Pyodide's memory, no conversion).

Modes are those of ``NumpyKernel`` (its int8 path is the reference of this algorithm):
``"exact"`` scans float32 rows; ``"int8"`` scans the int8 copies, keeps
``max(rerank_factor * k, min_candidates)`` candidates and rescores them exactly, so returned
scores are always exact float32 cosines. mean/std describe the scanned scores (approximate
ones in int8 mode), like the numpy kernel.

This module imports under CPython too (the JavaScript module is looked up only when a kernel is
made); ``run_probe`` is plain Python so a test can run the same scenario against the pure
kernel in CPython and against this one in the browser (rpc verb ``kernel_probe``).
"""

from __future__ import annotations

import math
import random
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..kernels.base import KernelResult, Vector, VectorKernel
from .rpc import handler

JS_MODULE = "omoide_vectors"
MODES = ("exact", "int8", "auto")
# "auto" (the browser engine's mode): the int8 prefilter + exact rerank from this many scanned
# rows on, the exact scan below. Measured (BENCHMARKS.md "Browser vector kernel", Python in
# Pyodide, 384-d): equal at 1,000 rows (0.30 vs 0.29 ms), int8 ahead at 10,000 (0.82 vs 1.31)
# and 100,000 (6.6 vs 12.6).
INT8_FROM = 2_000


def js_vectors() -> Any:
    """The JavaScript module registered by the engine worker (ImportError elsewhere)."""
    import importlib

    try:
        return importlib.import_module(JS_MODULE)
    except ImportError as err:
        raise ImportError(
            f"{JS_MODULE} is not registered: WasmKernel runs only inside the engine worker"
        ) from err


def _float32(values: Vector, dimension: int) -> array:
    row = values if isinstance(values, array) and values.typecode == "f" else array("f", values)
    if len(row) != dimension:
        raise ValueError(f"expected a {dimension}-d vector, got {len(row)}")
    return row


def _floats(js_typed_array: Any) -> list[float]:
    return js_typed_array.to_py().tolist()


class WasmKernel:
    """``VectorKernel`` over the JavaScript/WebAssembly store of ``kernel/vectors.js``."""

    def __init__(
        self,
        dimension: int,
        *,
        mode: str = "exact",
        rerank_factor: int = 8,
        min_candidates: int = 64,
        implementation: str | None = None,
        store: Any = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if dimension <= 0:
            raise ValueError(f"dimension must be positive, got {dimension}")
        self.dimension = dimension
        self.mode = mode
        self.rerank_factor = rerank_factor
        self.min_candidates = min_candidates
        if store is not None:  # rows already loaded in bulk by the worker (``adopt``)
            self._store = store
        elif implementation is None:
            vectors = js_vectors()
            self._store = vectors.createStore(dimension)
        else:  # a kernel that was loaded before (loadKernel caches them by name)
            vectors = js_vectors()
            kernel = vectors.loadedKernel(implementation)
            if kernel is None:
                raise ValueError(f"kernel implementation {implementation!r} is not loaded")
            self._store = vectors.createStore(dimension, kernel)
        self._slot_of: dict[str, int] = {}
        self._id_at: list[str] = []

    @classmethod
    def adopt(cls, store: Any, ids: Sequence[str], **options: Any) -> WasmKernel:
        """A kernel around a store of ``kernel/vectors.js`` whose rows the worker appended in
        bulk (IndexedDB segment bytes straight into WebAssembly memory): row n is ``ids[n]``.
        Python gets the ids only, never a list per vector."""
        kernel = cls(int(store.dimension), store=store, **options)
        if int(store.count) != len(ids):
            raise ValueError(f"the store holds {int(store.count)} rows, not {len(ids)}")
        kernel._id_at = list(ids)
        kernel._slot_of = {row_id: n for n, row_id in enumerate(kernel._id_at)}
        if len(kernel._slot_of) != len(kernel._id_at):
            raise ValueError("repeated ids in a bulk load")
        return kernel

    @property
    def implementation(self) -> str:
        """"wasm-simd", "wasm" or "js"."""
        return str(self._store.implementation)

    @property
    def memory_bytes(self) -> int:
        return int(self._store.memoryBytes)

    def __len__(self) -> int:
        return len(self._id_at)

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._slot_of

    # -- writes ---------------------------------------------------------------------------

    def add(self, ids: Sequence[str], vectors: Iterable[Vector]) -> None:
        ids = list(ids)
        rows = list(vectors)
        if len(rows) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(rows)} vectors")
        fresh = array("f")
        fresh_at: dict[str, int] = {}  # new id -> its row in `fresh` (repeats: last wins)
        updates: dict[str, array] = {}
        for row_id, vector in zip(ids, rows, strict=True):
            row = _float32(vector, self.dimension)
            if row_id in self._slot_of:
                updates[row_id] = row
            elif row_id in fresh_at:
                at = fresh_at[row_id] * self.dimension
                fresh[at : at + self.dimension] = row
            else:
                fresh_at[row_id] = len(fresh_at)
                fresh.extend(row)
        if fresh_at:
            first = int(self._store.append(fresh))
            for row_id, offset in fresh_at.items():
                self._slot_of[row_id] = first + offset
                self._id_at.append(row_id)
        for row_id, row in updates.items():
            self._store.set(self._slot_of[row_id], row)

    def add_rows(self, ids: Sequence[str], rows: Any) -> None:
        """Append rows the worker holds as one Float32Array (``len(ids)`` x dimension) for
        ids new to this kernel: the bytes go from JavaScript into WebAssembly memory, never
        through a Python list."""
        ids = list(ids)
        if len(set(ids)) != len(ids) or any(i in self._slot_of for i in ids):
            raise ValueError("add_rows takes ids new to the kernel, each once")
        if int(rows.length) != len(ids) * self.dimension:
            raise ValueError(f"{int(rows.length)} floats for {len(ids)} rows of "
                             f"{self.dimension}")
        if not ids:
            return
        first = int(self._store.append(rows))
        for n, row_id in enumerate(ids):
            self._slot_of[row_id] = first + n
        self._id_at.extend(ids)

    def remove(self, ids: Iterable[str]) -> None:
        for row_id in ids:
            slot = self._slot_of.pop(row_id, None)
            if slot is None:
                continue
            moved = int(self._store.remove(slot))
            last_id = self._id_at.pop()
            if moved >= 0:  # the last row now lives in `slot`
                self._id_at[slot] = last_id
                self._slot_of[last_id] = slot

    def clear(self) -> None:
        self._store.clear()
        self._slot_of.clear()
        self._id_at.clear()

    # -- reads ----------------------------------------------------------------------------

    def ids(self) -> list[str]:
        return list(self._id_at)

    def vector(self, row_id: str) -> list[float]:
        return _floats(self._store.row(self._slot_of[row_id]))

    def scores(self, query: Vector, ids: Sequence[str]) -> list[float]:
        q = _float32(query, self.dimension)
        slots = array("i", [self._slot_of[row_id] for row_id in ids])
        if not slots:
            return []
        return _floats(self._store.scoreSubset(q, slots))

    def top_k(self, query: Vector, k: int, allowed: Iterable[str] | None = None) -> KernelResult:
        q = _float32(query, self.dimension)
        if allowed is None:
            subset = None
            count = len(self._id_at)
        else:
            subset = array("i", [self._slot_of[i] for i in dict.fromkeys(allowed)
                                 if i in self._slot_of])
            count = len(subset)
        k = min(k, count)
        if k <= 0:
            return KernelResult([], [], 0.0, 0.0, count)
        candidates = 0
        if self.mode == "int8" or (self.mode == "auto" and count >= INT8_FROM):
            candidates = max(self.rerank_factor * k, self.min_candidates, k)
        found = self._store.search(q, k, candidates, subset, -math.inf)
        slots = found.positions.to_py().tolist()
        scores = _floats(found.scores)
        mean, std = float(found.mean), float(found.std)
        id_at = self._id_at
        return KernelResult([id_at[s] for s in slots], scores, mean, std, count)

    def export_float32(self) -> tuple[list[str], bytes]:
        data = self._store.rows(0, len(self._id_at)).to_bytes()
        if sys.byteorder != "little":  # pragma: no cover - WebAssembly is little-endian
            swapped = array("f", data)
            swapped.byteswap()
            data = swapped.tobytes()
        return list(self._id_at), data


def wasm_kernel_factory(**options: Any) -> Callable[[int], VectorKernel]:
    """A ``KernelFactory`` for ``MemoryEngine(kernel=...)``, e.g. ``mode="int8"``."""

    def make(dimension: int) -> VectorKernel:
        return WasmKernel(dimension, **options)

    return make


# -- self-test scenario (rpc ``kernel_probe``), identical under CPython and Pyodide -------------


def _unit_vectors(rng: random.Random, count: int, dimension: int) -> list[array]:
    out = []
    for _ in range(count):
        v = [rng.random() * 2.0 - 1.0 for _ in range(dimension)]
        norm = math.sqrt(math.fsum(x * x for x in v))
        out.append(array("f", [x / norm for x in v]))
    return out


def _result(r: KernelResult) -> dict[str, Any]:
    return {"ids": r.ids, "scores": r.scores, "mean": r.mean, "std": r.std, "count": r.count}


def run_probe(
    factory: Callable[[int], VectorKernel],
    *,
    dimension: int = 48,
    rows: int = 600,
    seed: int = 7,
    queries: int = 6,
    k: int = 10,
) -> dict[str, Any]:
    """Exercise every protocol method on a kernel made by ``factory``; return what it said.

    The data comes from ``random.Random(seed)`` (uniform draws, normalized with a correctly
    rounded sqrt), so CPython and Pyodide build the same float32 vectors.
    """
    rng = random.Random(seed)
    ids = [f"m{i}" for i in range(rows)]
    vectors = _unit_vectors(rng, rows, dimension)
    kernel = factory(dimension)
    half = rows // 2
    kernel.add(ids[:half], vectors[:half])
    kernel.add(ids[half:], iter(vectors[half:]))  # any iterable
    # overwrite some rows, twice in one batch for one id (the last vector wins)
    replaced = _unit_vectors(rng, 12, dimension)
    kernel.add([ids[3], ids[50], ids[3], ids[rows - 1]], replaced[:4])
    # remove every 7th row, an unknown id, and the row that is last in storage
    removed = ids[::7] + ["no-such-id", kernel.ids()[-1]]
    kernel.remove(removed)
    kernel.add(["late-a", "late-b"], replaced[4:6])
    queries_v = _unit_vectors(rng, queries, dimension)
    present = kernel.ids()
    allowed = sorted(present)[::5] + ["no-such-id"]  # not storage order: kernels differ there
    out: dict[str, Any] = {
        "len": len(kernel),
        "ids": sorted(present),
        "contains": [i in kernel for i in (ids[0], ids[1], ids[3], "late-a", "no-such-id")],
        "vector": {i: kernel.vector(i) for i in (ids[3], ids[50], "late-b")},
        "top": [_result(kernel.top_k(q, k)) for q in queries_v],
        "top_allowed": [_result(kernel.top_k(q, k, allowed)) for q in queries_v],
        "top_all": _result(kernel.top_k(queries_v[0], len(present) + 5)),
        "top_empty": _result(kernel.top_k(queries_v[0], 5, [])),
        "scores": kernel.scores(queries_v[1], [ids[1], "late-a", ids[3]]),
    }
    try:
        kernel.vector("no-such-id")
        out["vector_missing"] = "no error"
    except KeyError:
        out["vector_missing"] = "KeyError"
    try:
        kernel.scores(queries_v[0], ["no-such-id"])
        out["scores_missing"] = "no error"
    except KeyError:
        out["scores_missing"] = "KeyError"
    export_ids, blob = kernel.export_float32()
    exported = array("f", blob)
    out["export"] = {
        i: exported[n * dimension : (n + 1) * dimension].tolist()
        for n, i in enumerate(export_ids) if i in (ids[1], ids[3], "late-a")
    }
    out["export_len"] = len(export_ids)
    kernel.remove(kernel.ids())
    out["len_after_clear"] = len(kernel)
    out["top_after_clear"] = _result(kernel.top_k(queries_v[0], 3))
    return out


@handler("kernel_info")
def kernel_info() -> dict[str, Any]:
    """Which vector kernel the browser engine uses ("wasm-simd", "wasm" or "js")."""
    vectors = js_vectors()
    return {"implementation": str(vectors.activeImplementation()),
            "simd": bool(vectors.simdSupported())}


@handler("kernel_probe")
def kernel_probe(implementation: str | None = None, mode: str = "exact",
                 **spec: Any) -> dict[str, Any]:
    """Run ``run_probe`` against ``WasmKernel`` here, in the worker (used by browser tests)."""

    def factory(dimension: int) -> VectorKernel:
        return WasmKernel(dimension, mode=mode, implementation=implementation)

    result = run_probe(factory, **spec)
    result["implementation"] = WasmKernel(4, implementation=implementation).implementation
    return result


@handler("kernel_bench")
def kernel_bench(rows: int = 10_000, dimension: int = 384, queries: int = 30, k: int = 10,
                 mode: str = "exact", seed: int = 1) -> dict[str, Any]:
    """Time ``WasmKernel.top_k`` called from Python (the engine's real path), in ms/query.

    Rows are random (not normalized: timing only), added in batches of 10,000.
    """
    import time

    rng = random.Random(seed)
    kernel = WasmKernel(dimension, mode=mode)
    started = time.perf_counter()
    batch = 10_000
    for at in range(0, rows, batch):
        n = min(batch, rows - at)
        block = array("f", array("b", rng.randbytes(n * dimension)))
        kernel.add([f"m{at + i}" for i in range(n)],
                   [block[i * dimension : (i + 1) * dimension] for i in range(n)])
    load_ms = (time.perf_counter() - started) * 1000
    probes = [array("f", array("b", rng.randbytes(dimension))) for _ in range(queries)]
    kernel.top_k(probes[0], k)  # warm up
    times = []
    for q in probes:
        t = time.perf_counter()
        kernel.top_k(q, k)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {"implementation": kernel.implementation, "rows": rows, "mode": mode,
            "load_ms": load_ms, "p50_ms": times[len(times) // 2],
            "p95_ms": times[min(len(times) - 1, int(len(times) * 0.95))],
            "memory_bytes": kernel.memory_bytes}
