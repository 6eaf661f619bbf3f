"""``BrowserEmbedder``: the ``Embedder`` protocol over the embedding worker (Transformers.js).

The engine worker holds a Comlink link to the embedding worker; Python waits for its answer
through ``host.wait`` (JSPI), so the engine calls it exactly like ``OnnxEmbedder`` in CPython.
The worker adds the model's query/passage prefixes and L2-normalizes, like ``OnnxEmbedder``.
"""

from __future__ import annotations

from ..embeddings.registry import check_dtype, get_model, parse_stamp, vector_stamp
from ..errors import OmoideError
from .host import floats_from_js, host, wait
from .phases import phase

__all__ = ["BrowserEmbedder", "parse_stamp"]


class BrowserEmbedder:
    def __init__(self, model_id: str, dtype: str) -> None:
        info = get_model(model_id)
        self.model_id = info.id
        self.dtype = check_dtype(info, dtype)
        self.dimension = info.dimension
        self.stamp = vector_stamp(info.id, self.dtype, info.dimension)

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        if not texts:
            return []
        with phase("embed"):  # the embedding worker's round trip (recall timings leave it out)
            reply = wait(host().embed(texts, kind, self.model_id, self.dtype), self._failed)
            flat = floats_from_js(reply.data)
        d = self.dimension
        return [flat[i * d : (i + 1) * d].tolist() for i in range(len(texts))]

    def _failed(self, err: Exception) -> OmoideError:
        return OmoideError.of("EMBEDDING_FAILED", provider=self.model_id, reason=str(err))

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._embed(list(texts), "passage")

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._embed(list(texts), "query")
