"""Second extraction stage: clauses no pattern matched, classified by the loaded embedding
model against labelled prototype phrases, so that a paraphrase nobody wrote a pattern for
can still be caught ("Cycling is what keeps me sane", 「サイクリングしてる時が一番幸せ」).

Only clauses the pattern stage left open reach it: questions, requests, wishes, hearsay and
clauses about someone else are refused before (``extract_en.open_statement`` /
``extract_ja.open_statement``). A clause is embedded once (one batch per ``extract`` call);
each kind scores the mean cosine of its ``TOP`` nearest prototypes, ``none`` (small talk,
feelings of the moment, reports, requests) included; the clause takes the best kind when it
beats ``none`` by at least ``margin``. Without a model nothing changes: the stage is off.
Pure Python (no numpy), so it runs in Pyodide as it does under CPython.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

TOP = 3
DEFAULT_MARGIN = 0.02

# Written for this stage, not taken from the benchmark set: everyday ways to state each kind.
PROTOTYPES: dict[str, list[str]] = {
    "preference": [
        "I really like this", "this is my favourite thing", "I enjoy doing this a lot",
        "I can't stand it", "I'm not into that kind of thing", "nothing beats this for me",
        "I'm a huge fan of it", "it always makes me happy", "I'd choose this over anything",
        "that's not my taste at all", "I find it boring and avoid it",
        "I get excited every time I see it", "it's the thing I love most",
        "これが一番好き", "これには目がない", "あれはどうも苦手", "これにハマってる",
        "これが好きでたまらない", "あれは好みじゃない", "これをしている時が一番幸せ",
        "あれは嫌いです", "断然こっち派", "これなら何時間でもできる",
    ],
    "decision": [
        "I've made up my mind to do it", "starting next month I will do this",
        "I just signed up for it", "I'm going to quit doing that", "I bought one today",
        "we chose this option", "from now on I'll do it differently", "I'm giving it up",
        "I handed in my resignation", "I booked it for next week", "I'm switching to a new one",
        "this year I'm finally doing it", "I cancelled it", "I'm committing to this plan",
        "やることに決めた", "来月から始めます", "申し込みました", "これはもうやめる",
        "今日買いました", "こっちに乗り換える", "これからはこうする", "予約した",
        "やめることにしました", "新しく始めたところ",
    ],
    "pattern": [
        "I do this every morning", "I usually do it after work", "it's part of my routine",
        "I always end up doing this", "I do it twice a week", "every night before bed I do it",
        "most days I skip it", "I never do that on weekends", "it's a daily habit of mine",
        "on Sundays I always do this", "I tend to do it late at night",
        "毎朝これをする", "いつもこうしている", "週に二回やっている", "これが日課です",
        "寝る前に必ずやる", "休みの日はだいたいこうしてる", "ついやってしまう",
        "毎週日曜にやっている", "習慣になっている",
    ],
    "fact": [
        "my name is something", "I live in a city", "I work as something",
        "I have two children", "I'm thirty years old", "I grew up in a small town",
        "my wife is a teacher", "we have a dog", "I'm from another country",
        "I studied at university", "I was born in spring", "I have an allergy",
        "名前はこうです", "東京に住んでいます", "会社員として働いています", "子供が二人います",
        "三十歳です", "田舎で育ちました", "犬を飼っています", "大学で勉強しました",
        "夫は会社員です", "アレルギーがあります",
    ],
    "none": [
        "hello", "good morning", "thanks a lot", "ok sounds good", "haha that's funny",
        "I'm tired right now", "it's so hot today", "what do you think", "tell me a story",
        "my friend likes that", "he said he would come", "they decided to go",
        "I'm not sure", "I agree with you", "that's interesting", "see you tomorrow",
        "I'm hungry", "I just got home", "oh no", "never mind", "I was joking",
        "could you help me", "I wish I could", "maybe someday",
        "こんにちは", "ありがとう", "おやすみ", "なるほど", "今日は暑いね", "今疲れてる",
        "どう思う？", "話して", "友達はあれが好きらしい", "彼がそう言ってた", "わからない",
        "そうなんだ", "冗談だよ", "お腹すいた", "いいね", "今帰った", "できたらいいな",
    ],
}
KINDS = ("preference", "decision", "pattern", "fact")

_NEGATION = re.compile(
    r"\b(?:not|n't|never|no longer|avoid|hate|refuse|can't|quit|stop|stopped|give up|"
    r"giving up)\b|ない|ません|嫌|苦手|無理|やめ|辞め|消し", re.IGNORECASE)


@dataclass
class PrototypeClassifier:
    """Nearest-prototype kind of a clause, with the embedder the engine has loaded."""

    embedder: Any
    margin: float = DEFAULT_MARGIN
    _labels: list[str] = field(default_factory=list, init=False, repr=False)
    _vectors: list[list[float]] | None = field(default=None, init=False, repr=False)

    def _prototypes(self) -> tuple[list[str], list[list[float]]]:
        if self._vectors is None:
            labels, texts = [], []
            for kind, phrases in PROTOTYPES.items():
                labels += [kind] * len(phrases)
                texts += phrases
            self._labels, self._vectors = labels, self._embed(texts)
        return self._labels, self._vectors

    def _embed(self, texts: list[str]) -> list[list[float]]:
        # symmetric comparison: both sides are "queries" for e5-style models
        out = []
        for vector in self.embedder.embed_queries(texts):
            values = [float(v) for v in vector]
            norm = math.sqrt(sum(v * v for v in values)) or 1.0
            out.append([v / norm for v in values])
        return out

    def scores(self, clauses: Sequence[str]) -> list[dict[str, float]]:
        """Per clause: each kind's (and ``none``'s) mean cosine to its TOP prototypes."""
        if not clauses:
            return []
        labels, prototypes = self._prototypes()
        out = []
        for vector in self._embed(list(clauses)):
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
            polarity = "dislike" if _NEGATION.search(clause) else "like"
            out.append((kind, polarity))
        return out


_CLASSIFIERS: weakref.WeakKeyDictionary[Any, PrototypeClassifier] = weakref.WeakKeyDictionary()


def classifier_for(embedder: Any) -> PrototypeClassifier:
    """The classifier of a loaded embedder, its prototype vectors computed once."""
    try:
        return _CLASSIFIERS[embedder]
    except KeyError:
        classifier = _CLASSIFIERS[embedder] = PrototypeClassifier(embedder)
        return classifier
    except TypeError:  # an embedder that cannot be weakly referenced: no cache
        return PrototypeClassifier(embedder)
