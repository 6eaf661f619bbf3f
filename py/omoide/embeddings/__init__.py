"""Embedding models and providers.

``registry`` (models, default), ``base`` (the :class:`Embedder` protocol), ``cache`` (LRU+TTL
in front of any embedder), ``remote`` (OpenAI-compatible HTTP) and ``matryoshka`` are pure
Python and import in Pyodide. ``onnx_provider`` needs CPython with numpy, onnxruntime and
tokenizers; ``auto`` imports it lazily.
"""

from .base import Embedder
from .registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID, MODELS, ModelInfo, get_model

__all__ = ["DEFAULT_DTYPE", "DEFAULT_MODEL_ID", "MODELS", "Embedder", "ModelInfo", "get_model"]
