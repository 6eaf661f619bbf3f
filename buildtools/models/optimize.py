"""Graph optimization at build time, so the browser does not redo it at every model set-up.

onnxruntime optimizes a graph each time it creates a session (fusing MatMul + Add + scale,
LayerNorm + skip, dynamic quantization + MatMulInteger, ...). In the browser that took ~1.3 s
of the e5 q8 session's ~3 s on a 2-core box, at every page load (BENCHMARKS.md, issue 16).
We run the same "extended" level once here with onnxruntime's CPU execution provider and
publish the optimized graph; the embedding worker then creates its WebAssembly (CPU) session
with optimizations disabled. "extended" adds onnxruntime contrib ops (com.microsoft domain)
that the CPU provider, and so onnxruntime-web's WebAssembly build, implements; the "all" level
would add layout changes tied to this machine's CPU and is not used. A WebGPU session keeps
onnxruntime's default level and places what it cannot run on the CPU provider.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import Any

LEVEL = "extended"


def optimize_graph(path: Path) -> dict[str, Any]:
    """Replace the ONNX file at ``path`` with onnxruntime's extended-level optimization of it.

    Returns what the manifest records: the level, the onnxruntime version that did it and
    the node count before and after. Writes a sibling temporary file and renames it over the
    original only once onnxruntime has written it completely.
    """
    import onnx
    import onnxruntime as ort

    path = Path(path)
    tmp = path.with_name(path.name + ".optimizing")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(tmp)
    before = _node_count(path)
    try:
        ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        after = _node_count(tmp)
        onnx.checker.check_model(str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return {"level": LEVEL, "onnxruntime": ort.__version__, "nodes": [before, after]}


def _node_count(path: Path) -> int:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return len(model.graph.node)


def op_counts(path: Path) -> dict[str, int]:
    """``{"domain:op": count}`` of a graph's nodes (tests and the build log read it)."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return dict(
        collections.Counter(f"{n.domain or 'ai.onnx'}:{n.op_type}" for n in model.graph.node)
    )
