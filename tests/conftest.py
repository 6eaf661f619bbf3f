"""Fixtures shared across test files."""

from __future__ import annotations

from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[1] / "dist" / "models"


@pytest.fixture(scope="session")
def e5():
    """The real multilingual-e5-small (q8), loaded once per session; skips the test when the
    build has not produced dist/models or ONNX Runtime / tokenizers are not installed."""
    if not (MODELS / "manifest.json").exists():
        pytest.skip("dist/models/manifest.json missing: run `python3 build.py` to build the "
                    "models")
    pytest.importorskip("onnxruntime", reason="the e5 tests need ONNX Runtime (cpython extra)")
    pytest.importorskip("tokenizers", reason="the e5 tests need tokenizers (cpython extra)")
    from omoide.embeddings.onnx_provider import OnnxEmbedder

    return OnnxEmbedder.from_model_id("omoide/multilingual-e5-small", "q8", threads=1)
