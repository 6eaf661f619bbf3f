"""Shared pieces of the benchmarks: paths, machine info, an on-disk embedding cache and an
embedder that serves precomputed vectors to ``MemoryEngine`` through its public API.

Run the benchmarks from the repository root with ``PYTHONPATH=py:.``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / ".cache" / "bench"  # git-ignored (/.cache/)


def bench_data_dir() -> Path:
    """``$OMOIDE_BENCH_DATA``, else ``../shared/bench-data`` next to the repository (never
    copied into the repository)."""
    env = os.environ.get("OMOIDE_BENCH_DATA")
    path = Path(env) if env else (ROOT / ".." / "shared" / "bench-data")
    path = path.resolve()
    if not path.is_dir():
        raise SystemExit(f"benchmark data not found at {path} (set OMOIDE_BENCH_DATA)")
    return path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except ImportError:
        return None


def machine_info() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_at_start": list(load) if load else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "onnxruntime": _version("onnxruntime"),
        "tokenizers": _version("tokenizers"),
        "thread_env": {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                  "MKL_NUM_THREADS") if k in os.environ},
    }


def write_results(name: str, payload: dict, markdown: str) -> tuple[Path, Path]:
    json_path = RESULTS / f"{name}.json"
    md_path = RESULTS / f"{name}.md"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    md_path.write_text(markdown)
    return json_path, md_path


def md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def percentile_ms(samples_s: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples_s) * 1000.0, q))


# -- models and the embedding cache -------------------------------------------------------

MODELS = {  # short name -> (model id, dtype)
    "e5-q8": ("omoide/multilingual-e5-small", "q8"),
    "minilm-q8": ("omoide/all-MiniLM-L6-v2", "q8"),
    "e5-fp32": ("omoide/multilingual-e5-small", "fp32"),
    "minilm-fp32": ("omoide/all-MiniLM-L6-v2", "fp32"),
}


class CachedModel:
    """A real ONNX model (loaded lazily) whose passage/query embeddings are cached on disk
    under ``.cache/bench/``, keyed by model stamp, model file, kind and the exact texts."""

    def __init__(self, name: str, *, threads: int | None = None) -> None:
        from omoide.embeddings.onnx_provider import find_model_dir
        from omoide.embeddings.registry import ONNX_FILES, get_model

        self.name = name
        self.model_id, self.dtype = MODELS[name]
        info = get_model(self.model_id)
        self.dimension = info.dimension
        self.stamp = info.stamp(self.dtype)
        model_dir = find_model_dir(self.model_id, self.dtype)
        if model_dir is None:
            raise SystemExit(f"{self.model_id} ({self.dtype}) is not built: python3 build.py")
        onnx = (model_dir / ONNX_FILES[self.dtype]).stat()
        self.fingerprint = f"{self.stamp}|{onnx.st_size}|{onnx.st_mtime_ns}"
        self.threads = threads
        self._embedder = None
        self.embed_seconds = {"passages": 0.0, "queries": 0.0}
        self.embedded = {"passages": 0, "queries": 0}
        self.cache_hits = 0
        self.cached_seconds = {"passages": 0.0, "queries": 0.0}
        self.cached = {"passages": 0, "queries": 0}

    @property
    def embedder(self):
        if self._embedder is None:
            from omoide.embeddings.onnx_provider import OnnxEmbedder

            self._embedder = OnnxEmbedder.from_model_id(self.model_id, self.dtype,
                                                        threads=self.threads)
        return self._embedder

    def embed(self, kind: str, texts: Sequence[str]) -> np.ndarray:
        """float32 [len(texts), dimension], L2-normalized; ``kind`` is passages or queries."""
        digest = hashlib.sha256(self.fingerprint.encode())
        digest.update(kind.encode())
        for text in texts:
            digest.update(text.encode())
            digest.update(b"\x00")
        path = CACHE / self.stamp.replace("/", "_").replace("#", "_") / (
            f"{kind}-{len(texts)}-{digest.hexdigest()[:24]}.npy"
        )
        sidecar = path.with_suffix(".json")
        if path.is_file():
            self.cache_hits += 1
            if sidecar.is_file():  # what computing it took, when it was computed
                self.cached_seconds[kind] += json.loads(sidecar.read_text())["seconds"]
                self.cached[kind] += len(texts)
            return np.load(path)
        embed = (self.embedder.embed_passages_array if kind == "passages"
                 else self.embedder.embed_queries_array)
        start = time.perf_counter()
        vectors = embed(list(texts))
        self.embed_seconds[kind] += time.perf_counter() - start
        self.embedded[kind] += len(texts)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)
        sidecar.write_text(json.dumps({"seconds": time.perf_counter() - start,
                                       "texts": len(texts), "date": machine_info()["date"]}))
        return vectors


class PrecomputedEmbedder:
    """The engine's ``Embedder`` protocol over vectors computed beforehand.

    ``stage(vectors)`` hands the next ``remember_many`` call its passage vectors (one row per
    item, in order), so the embedded text may differ from the stored memory text (the
    contextual variants); queries are looked up by their exact text.
    """

    def __init__(self, model_id: str, dtype: str, dimension: int, stamp: str) -> None:
        self.model_id = model_id
        self.dtype = dtype
        self.dimension = dimension
        self.stamp = stamp
        self.queries: dict[str, np.ndarray] = {}
        self._pending: np.ndarray | None = None

    def stage(self, vectors: np.ndarray) -> None:
        self._pending = vectors

    def add_queries(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.queries.update(zip(texts, vectors, strict=True))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        rows, self._pending = self._pending, None
        if rows is None or len(rows) != len(texts):
            raise RuntimeError("stage() the passage vectors before remember_many")
        return rows

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.queries[t] for t in texts])
