"""A small deterministic embedder for engine tests: hashed character n-grams.

A legitimate (weak) embedding model: texts sharing character 2-/3-grams get close vectors,
which is enough to exercise ranking, thresholds and fusion without model files. ``seed``
changes the hash space, giving a different model with the same dimension.
"""

from __future__ import annotations

import math
import unicodedata
import zlib

import pytest


class HashingEmbedder:
    dtype = "f32"

    def __init__(self, dimension: int = 64, *, seed: int = 0, ngrams: tuple[int, ...] = (2, 3)):
        self.dimension = dimension
        self.seed = seed
        self.ngrams = ngrams
        self.model_id = f"test/hashing-ngram-s{seed}"
        self.stamp = f"{self.model_id}@{self.dtype}#{dimension}"
        self.calls: list[tuple[str, int]] = []  # (role, batch size), to test batching

    def _vector(self, text: str) -> list[float]:
        text = " " + unicodedata.normalize("NFKC", text).casefold() + " "
        vector = [0.0] * self.dimension
        for n in self.ngrams:
            for i in range(len(text) - n + 1):
                h = zlib.crc32(f"{self.seed}:{text[i : i + n]}".encode())
                vector[h % self.dimension] += 1.0 if (h >> 16) & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        if norm == 1.0 and not any(vector):
            vector[0] = 1.0
        return [x / norm for x in vector]

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("passage", len(texts)))
        return [self._vector(t) for t in texts]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("query", len(texts)))
        return [self._vector(t) for t in texts]


class NumpyRowsEmbedder(HashingEmbedder):
    """Same model, but answers with a 2-D float32 numpy array like the ONNX embedder."""

    def embed_passages(self, texts):
        import numpy as np

        return np.asarray(super().embed_passages(texts), dtype=np.float32)

    embed_queries = embed_passages


def test_vectors_are_normalized_and_deterministic():
    e = HashingEmbedder(32)
    a, b = e.embed_passages(["hello world", "hello world"])
    assert a == b
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-9)


def test_similar_texts_are_closer_than_unrelated():
    e = HashingEmbedder(128)
    base, near, far = e.embed_passages(["I like green tea", "I like green teas", "xyz 123 qqq"])
    dot = lambda u, v: sum(x * y for x, y in zip(u, v, strict=True))  # noqa: E731
    assert dot(base, near) > dot(base, far) + 0.3


@pytest.mark.parametrize("seed", [1, 2])
def test_seed_changes_the_space_not_the_dimension(seed):
    e0, e1 = HashingEmbedder(32), HashingEmbedder(32, seed=seed)
    assert e0.dimension == e1.dimension and e0.stamp != e1.stamp
    assert e0.embed_passages(["abc"]) != e1.embed_passages(["abc"])
