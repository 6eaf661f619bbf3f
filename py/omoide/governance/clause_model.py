"""Second extraction stage, learned: a small classifier over the embedding model's clause
vectors, so that a phrasing nobody wrote a pattern for ("a good bowl of ramen fixes
everything", 「カラオケは拷問」) can still be caught.

The weights (``clause_weights.json``) were trained by ``bench/governance_train.py`` on the
training splits of the labelled extraction set only plus the prototype phrases of
``prototypes.py``: five classes (preference, decision, pattern, fact, none), one weight row
and bias per class, over the features directly (a softmax regression) or, where grouped
cross-validation chose it (round 15, e5), over one hidden layer of rectified units (a small
network: ``hidden``). A clause is accepted as the most probable kind when the quantity the
trainer chose for the clause's language (``accepted``: that kind's probability, which must
also beat ``none``, or the probability of any statement, 1 - p(none)) reaches that
language's threshold. Where the trainer chose them, a few 0/1 wording cues (``clause_cues``:
a recurrence, a plan, a stance, an attribute) are appended to the vector and weighed like its
components. The thresholds are chosen with a calibration round of negatives that reach the
stage (``calib``, never trained on).

The same probabilities can also veto a pattern-rule extraction: a clause a rule matched whose
``none`` probability reaches the language's veto level is dropped, since the rules were
written for phrasings, not for who is speaking. The trainer sets a level only where the veto
removed an out-of-fold false positive on the dev splits; absent or >= 1: no veto, and the
matched clauses are not embedded at all (most of the stage's cost).

Only clauses the pattern stage left open reach it (``extract_en.open_statement`` /
``extract_ja.open_statement`` refuse questions, requests, wishes, hearsay and clauses about
someone else first). Scoring is pure Python (a few dot products of d numbers per clause:
5, or the hidden layer's 64 and 5), so it runs in Pyodide as under CPython. A model without
trained weights falls back to the prototype stage (``classifier_for``).
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import mul
from pathlib import Path
from typing import Any

from omoide.embeddings.registry import MODELS
from omoide.governance.clause_cues import cue_values
from omoide.governance.keys import has_japanese
from omoide.governance.polarity import stance
from omoide.governance.prototypes import PrototypeClassifier, unit_vectors

WEIGHTS_FILE = Path(__file__).with_name("clause_weights.json")
KINDS = ("preference", "decision", "pattern", "fact")
NONE = "none"


@dataclass(frozen=True)
class ClauseWeights:
    """One model's trained classifier: ``weights[i]`` and ``bias[i]`` score ``labels[i]``
    over the clause's unit vector followed by its ``cues`` (``clause_cues``)."""

    model_id: str
    labels: tuple[str, ...]
    weights: tuple[tuple[float, ...], ...]
    bias: tuple[float, ...]
    thresholds: Mapping[str, float]  # per language ("en", "ja")
    vetoes: Mapping[str, float] = field(default_factory=dict)  # ``none`` level; absent: off
    # what the threshold bounds (``ACCEPT_RULES``): one rule, or one per language
    accept: str | Mapping[str, str] = "kind"
    cues: tuple[str, ...] = ()  # wording cues after the vector's components, in this order
    # a hidden layer of rectified units between the features and ``weights`` (empty: the
    # weights score the features directly, a softmax regression)
    hidden: tuple[tuple[float, ...], ...] = ()
    hidden_bias: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        # scoring multiplies rows by features without a length check per row (``_dot``):
        # every row of a layer is as long as the layer's input, checked once here
        inputs = len(self.hidden[0]) if self.hidden else None
        if self.hidden and (len(self.hidden_bias) != len(self.hidden)
                            or any(len(row) != inputs for row in self.hidden)
                            or any(len(row) != len(self.hidden) for row in self.weights)):
            raise ValueError(f"{self.model_id}: the hidden layer's shapes do not agree")
        if not self.hidden and len({len(row) for row in self.weights}) > 1:
            raise ValueError(f"{self.model_id}: weight rows of different lengths")

    @property
    def dimension(self) -> int:
        """The embedding dimension the weights expect (without the cues)."""
        first = self.hidden or self.weights
        return len(first[0]) - len(self.cues)

    def accept_in(self, lang: str) -> str:
        return self.accept if isinstance(self.accept, str) else self.accept.get(lang, "kind")

    def vetoes_in(self, lang: str) -> bool:
        return self.vetoes.get(lang, 1.0) < 1.0

    def probabilities(self, vector: Sequence[float], clause: str = "") -> dict[str, float]:
        """Class probabilities of a clause from its unit vector (and, for weights with cues,
        its text)."""
        features = [*vector, *cue_values(self.cues, clause)] if self.cues else list(vector)
        if len(features) != self.dimension + len(self.cues):
            raise ValueError(f"{len(features)} features for weights of "
                             f"{self.dimension + len(self.cues)}")
        if self.hidden:
            features = [max(0.0, b + _dot(row, features))
                        for row, b in zip(self.hidden, self.hidden_bias, strict=True)]
        logits = [b + _dot(row, features) for row, b in zip(self.weights, self.bias, strict=True)]
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return {label: e / total for label, e in zip(self.labels, exps, strict=True)}


def _dot(row: Sequence[float], features: Sequence[float]) -> float:
    # lengths agree (``ClauseWeights.__post_init__`` and the feature count in
    # ``probabilities``); ``map(mul)`` runs the products in C, a hidden layer is 64 rows
    return sum(map(mul, row, features))


# What the acceptance threshold is compared with (``accepted``):
# - "kind": the best kind's probability (the first rule; it also has to beat ``none``);
# - "statement": the probability that the clause states something at all, 1 - p(none). The
#   kind is still the most probable one, but a clause whose mass is split between two kinds
#   (「経理の仕事をしてます」: fact 0.54, pattern 0.3, none 0.08) is not refused for it: on
#   the dev rounds held out one at a time, such splits were most of the Japanese clauses the
#   stage had the right kind for and refused (40 of 333).
ACCEPT_RULES = ("kind", "statement")


def accepted(p: Mapping[str, float], threshold: float, rule: str = "kind") -> str | None:
    """The kind a clause with class probabilities ``p`` is accepted as, or None."""
    kind = max(KINDS, key=p.__getitem__)
    if rule == "statement":
        return kind if 1.0 - p[NONE] >= threshold and p[kind] > 0.0 else None
    if rule != "kind":
        raise ValueError(f"unknown acceptance rule {rule!r}")
    return kind if p[kind] >= threshold and p[kind] > p[NONE] else None


@cache
def _all_weights() -> dict[str, ClauseWeights]:
    if not WEIGHTS_FILE.is_file():
        return {}
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    return {
        model_id: ClauseWeights(
            model_id=model_id, labels=tuple(entry["labels"]),
            weights=tuple(tuple(row) for row in entry["weights"]),
            bias=tuple(entry["bias"]),
            thresholds={lang: float(t) for lang, t in entry["threshold"].items()},
            vetoes={lang: float(t) for lang, t in entry.get("veto", {}).items()},
            accept=entry.get("accept", "kind"), cues=tuple(entry.get("cues", ())),
            hidden=tuple(tuple(row) for row in entry.get("hidden", {}).get("weights", ())),
            hidden_bias=tuple(entry.get("hidden", {}).get("bias", ())))
        for model_id, entry in data["models"].items()
    }


def weights_for(model_id: str) -> ClauseWeights | None:
    """The trained classifier of an embedding model, or None when none was trained."""
    return _all_weights().get(model_id)


@dataclass
class LearnedClauseClassifier:
    """Kind of a clause from its vector under the loaded embedder's trained weights."""

    embedder: Any
    weights: ClauseWeights
    via: str = field(default="learned", init=False)

    def probabilities(self, clauses: Sequence[str]) -> list[dict[str, float]]:
        if not clauses:
            return []
        return [self.weights.probabilities(v, clause) for v, clause in
                zip(unit_vectors(self.embedder, clauses), clauses, strict=True)]

    def classify(self, clauses: Sequence[str]) -> list[tuple[str, str] | None]:
        """(kind, polarity) per clause, or None where ``none`` wins or the best kind is
        below the threshold of the clause's language."""
        return self.review(clauses, [])[0]

    def review(self, open_clauses: Sequence[str], matched_clauses: Sequence[str]
               ) -> tuple[list[tuple[str, str] | None], list[bool]]:
        """``classify`` of the open clauses and, for the clauses a pattern rule matched, whether
        the stage vetoes them (``none`` at or above the language's veto level), in one
        embedding batch. Matched clauses of a language without a veto are not embedded."""
        checked = [i for i, clause in enumerate(matched_clauses)
                   if self.weights.vetoes_in(_lang(clause))]
        probs = self.probabilities([*open_clauses, *(matched_clauses[i] for i in checked)])
        verdicts: list[tuple[str, str] | None] = []
        for clause, p in zip(open_clauses, probs, strict=False):
            lang = _lang(clause)
            kind = accepted(p, self.weights.thresholds[lang], self.weights.accept_in(lang))
            verdicts.append((kind, stance(clause)) if kind else None)
        vetoed = [False] * len(matched_clauses)
        for i, p in zip(checked, probs[len(open_clauses):], strict=True):
            vetoed[i] = p[NONE] >= self.weights.vetoes[_lang(matched_clauses[i])]
        return verdicts, vetoed


def _lang(clause: str) -> str:
    return "ja" if has_japanese(clause) else "en"


def classifier_for(embedder: Any) -> LearnedClauseClassifier | PrototypeClassifier | None:
    """The second stage for a loaded embedder: its trained weights when there are some, else
    the prototype classifier for a registered sentence model, else None (an unknown model,
    e.g. a test's hashing embedder, gives vectors with no meaning to classify by)."""
    model_id = str(getattr(embedder, "model_id", ""))
    trained = weights_for(model_id)
    if trained is not None and getattr(embedder, "dimension", None) == trained.dimension:
        return LearnedClauseClassifier(embedder, trained)
    if model_id in MODELS:
        return PrototypeClassifier(embedder)
    return None
