"""An LRU cache with a time-to-live in front of any ``Embedder`` (pure Python).

Keys are ``(stamp, kind, text)``: the stamp names model id, dtype and dimension, so one cache
may be shared by several embedders and switching models can never return a stale vector.
Recall re-embeds the same queries often (typing, paging); passages are re-embedded on edits.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import OmoideError
from .base import Embedder, check_texts, checked_rows

Key = tuple[str, str, str]


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0  # dropped because the cache was full (least recently used first)
    expirations: int = 0  # dropped because older than the TTL

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class EmbeddingCache:
    """Thread-safe LRU + TTL map from ``(stamp, kind, text)`` to a vector."""

    def __init__(
        self,
        max_entries: int = 1000,
        ttl_seconds: float = 300.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or not ttl_seconds > 0:
            raise OmoideError.of(
                "INVALID_ARGUMENT",
                name="cache settings",
                reason=f"max_entries={max_entries}, ttl_seconds={ttl_seconds} (both must be > 0)",
            )
        self.max_entries = int(max_entries)
        self.ttl_seconds = float(ttl_seconds)
        self._clock = clock
        self._data: OrderedDict[Key, tuple[float, list[float]]] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = CacheStats()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Key) -> list[float] | None:
        with self._lock:
            item = self._data.get(key)
            if item is not None and self._clock() - item[0] >= self.ttl_seconds:
                del self._data[key]
                self.stats.expirations += 1
                item = None
            if item is None:
                self.stats.misses += 1
                return None
            self._data.move_to_end(key)
            self.stats.hits += 1
            return list(item[1])  # a copy: callers may mutate what they get

    def put(self, key: Key, vector: list[float]) -> None:
        with self._lock:
            self._data[key] = (self._clock(), [float(x) for x in vector])
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)
                self.stats.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class CachedEmbedder:
    """Wraps an ``Embedder``; same protocol, identical vectors, fewer model calls."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None = None) -> None:
        self.inner = inner
        self.cache = cache if cache is not None else EmbeddingCache()
        self.model_id = inner.model_id
        self.dtype = inner.dtype
        self.dimension = inner.dimension
        self.stamp = inner.stamp

    @property
    def stats(self) -> CacheStats:
        return self.cache.stats

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._embed("passage", check_texts(texts), self.inner.embed_passages)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._embed("query", check_texts(texts), self.inner.embed_queries)

    def _embed(
        self, kind: str, texts: list[str], compute: Callable[[list[str]], object]
    ) -> list[list[float]]:
        out: list[list[float] | None] = [self.cache.get((self.stamp, kind, t)) for t in texts]
        # One inner call for all misses, each distinct text once.
        missing = list(dict.fromkeys(t for t, v in zip(texts, out, strict=True) if v is None))
        if missing:
            # checked before they are kept: a refused answer (NaN, wrong size) was cached
            # and served again for the TTL after the provider had recovered
            answer = checked_rows(self, missing, compute(missing))
            rows = [[float(x) for x in row] for row in answer]
            fresh = dict(zip(missing, rows, strict=True))
            for t, row in fresh.items():
                self.cache.put((self.stamp, kind, t), row)
            out = [v if v is not None else list(fresh[t]) for t, v in zip(texts, out, strict=True)]
        return out  # type: ignore[return-value]
