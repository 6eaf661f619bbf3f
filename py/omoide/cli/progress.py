"""Progress for long work: an embedder wrapper that embeds in batches and advances a bar,
and a listener that counts written memories."""

from __future__ import annotations

from typing import Any

from omoide.engine.listener import Change

BATCH = 32


def _rows(rows: Any) -> list[list[float]]:
    return [row.tolist() if hasattr(row, "tolist") else list(row) for row in rows]


class ProgressEmbedder:
    """The same model (same stamp, same vectors), called ``BATCH`` texts at a time so that a
    bar can move; queries pass straight through."""

    def __init__(self, inner: Any, bar: Any, *, grow: bool = False) -> None:
        self.inner = inner
        self.bar = bar
        self.grow = grow
        self.model_id = inner.model_id
        self.dtype = inner.dtype
        self.dimension = inner.dimension
        self.stamp = inner.stamp

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        texts = list(texts)
        if self.grow:  # the caller did not know the count up front (ingest)
            self.bar.total = (self.bar.total or 0) + len(texts)
            self.bar.refresh()
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = texts[start:start + BATCH]
            out.extend(_rows(self.inner.embed_passages(batch)))
            self.bar.update(len(batch))
        return out

    def embed_queries(self, texts: list[str]) -> Any:
        return self.inner.embed_queries(texts)


class WriteCounter:
    """A change listener advancing a bar by one per memory written."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self.count = 0

    def on_change(self, change: Change) -> None:
        if change.op == "put":
            self.count += 1
            self.bar.update(1)
