"""Second extraction stage for a model without trained weights: clauses no pattern matched,
classified by the loaded embedding model against labelled prototype phrases, so that a
paraphrase nobody wrote a pattern for can still be caught ("Cycling is what keeps me sane",
「サイクリングしてる時が一番幸せ」). Models with trained weights use ``clause_model`` instead
(``clause_model.classifier_for`` picks).

The phrases are data (``prototypes.json``, ~180, EN + JA, written for this stage, not taken
from the benchmark set). A clause is embedded once (one batch per ``extract`` call); each kind
scores the mean cosine of its ``TOP`` nearest prototypes, ``none`` (small talk, feelings of
the moment, reports, requests) included; the clause takes the best kind when it beats
``none`` by at least ``margin``. Pure Python (no numpy), so it runs in Pyodide as it does
under CPython.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omoide.governance.polarity import stance

TOP = 3
DEFAULT_MARGIN = 0.02
KINDS = ("preference", "decision", "pattern", "fact")

PROTOTYPES: dict[str, list[str]] = json.loads(
    Path(__file__).with_name("prototypes.json").read_text(encoding="utf-8"))["phrases"]
# The prototype vectors per model stamp: computed once per model, whatever wraps it.
_PROTOTYPE_VECTORS: dict[str, tuple[list[str], list[list[float]]]] = {}


def unit_vectors(embedder: Any, texts: Sequence[str]) -> list[list[float]]:
    """L2-normalized query vectors of ``texts`` (both sides of a clause comparison are
    "queries" for e5-style models)."""
    out = []
    for vector in embedder.embed_queries(list(texts)):
        values = [float(v) for v in vector]
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        out.append([v / norm for v in values])
    return out


@dataclass
class PrototypeClassifier:
    """Nearest-prototype kind of a clause, with the embedder the engine has loaded."""

    embedder: Any
    margin: float = DEFAULT_MARGIN
    via: str = field(default="prototype", init=False)
    _labels: list[str] = field(default_factory=list, init=False, repr=False)
    _vectors: list[list[float]] | None = field(default=None, init=False, repr=False)

    def _prototypes(self) -> tuple[list[str], list[list[float]]]:
        if self._vectors is None:
            stamp = getattr(self.embedder, "stamp", None)
            if stamp not in _PROTOTYPE_VECTORS:
                pairs = [(kind, phrase) for kind, phrases in PROTOTYPES.items()
                         for phrase in phrases]
                found = ([kind for kind, _ in pairs],
                         unit_vectors(self.embedder, [phrase for _, phrase in pairs]))
                if stamp is None:
                    self._labels, self._vectors = found
                    return found
                _PROTOTYPE_VECTORS[stamp] = found
            self._labels, self._vectors = _PROTOTYPE_VECTORS[stamp]
        return self._labels, self._vectors

    def scores(self, clauses: Sequence[str]) -> list[dict[str, float]]:
        """Per clause: each kind's (and ``none``'s) mean cosine to its TOP prototypes."""
        if not clauses:
            return []
        labels, prototypes = self._prototypes()
        out = []
        for vector in unit_vectors(self.embedder, clauses):
            by_kind: dict[str, list[float]] = {kind: [] for kind in PROTOTYPES}
            for label, prototype in zip(labels, prototypes, strict=True):
                by_kind[label].append(sum(a * b for a, b in zip(vector, prototype, strict=True)))
            out.append({kind: sum(sorted(values, reverse=True)[:TOP]) / min(TOP, len(values))
                        for kind, values in by_kind.items()})
        return out

    def classify(self, clauses: Sequence[str]) -> list[tuple[str, str] | None]:
        """(kind, polarity) per clause, or None where ``none`` wins or the margin is short."""
        out: list[tuple[str, str] | None] = []
        for clause, per_kind in zip(clauses, self.scores(clauses), strict=True):
            kind = max(KINDS, key=per_kind.__getitem__)
            if per_kind[kind] - per_kind["none"] < self.margin:
                out.append(None)
                continue
            out.append((kind, stance(clause)))
        return out
