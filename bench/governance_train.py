"""Train the learned second extraction stage (``omoide.governance.clause_model``).

Training data: the training splits of the labelled extraction set ONLY (``dev``, ``dev2``,
``dev3`` and, from round 10 on, the earlier blind splits ``blind`` .. ``blind8``, from round
11 on ``blind9`` too, from round 13 on ``blind10``, ``blind11`` and ``train13``, from round 14
on ``blind12``, ``blind13``, ``train14a`` and ``train14b``, from round 16 on ``blind14`` ..
``blind17``, ``train16a`` and ``train16b``, both languages; never ``heldout``, ``calib``,
``blind18`` or ``blind19``, the unseen measure), plus the prototype phrases
(``prototypes.json``) and the training-only phrases of
``bench/data/clause_training_phrases.json``. Each message is cut into clauses as ``extract``
cuts them;
every clause the open-statement gate lets through (what the stage will see) is an example,
labelled with its message's kind, or ``none`` for the negatives.

Model: multinomial logistic regression (softmax, L2) over the embedding model's query vectors,
or (round 15) the same softmax over one hidden layer of rectified units (``fit_network``),
standardized for training and folded back into the first layer's weights, so scoring
needs the raw unit vector only (followed by the wording cues of ``clause_cues``, where a cue
set is chosen). Chosen by grouped cross-validation on the same splits (``fold_of``): the L2
strength, class weighting, cue set and hidden units (none, 32, 64), then per language the
acceptance rule and threshold, by running the whole extractor
(patterns, then the stage with out-of-fold probabilities) and taking the best out-of-fold
recall of the stage whose false positives stay within ``--max-fp`` (the goal, 0.05) at 95 %
confidence: the one-sided Wilson upper bound of the out-of-fold false-positive count over
the language's dev negatives (~140: at most 2 of them), not the point estimate, since the
rules and the gate were written on these negatives and unseen phrasings leak more. The
threshold is per language.

Calibration (round 9, ``--choice``): the ~140 dev negatives per language are mostly
questions and requests the gate refuses; ~50 reach the stage, too few to bound what a new
author's small talk does (the dev-chosen English threshold stored 26 % of the calibration
round's negatives). The ``calib`` split (~160 negatives per language of the kinds that pass
the gate, 40 statements) is a round the stage is never trained on (unless
``--calib-in-training``): the threshold is chosen on the dev rounds' out-of-fold counts plus
the calibration round's, under the ceiling over the negatives that reach the stage and the
false positives the stage adds there (``within_bound``, ``gated``). Whether a chosen threshold
holds on a round it was not chosen on is reported per way of choosing
(``threshold_generalization``). The pattern veto is kept only where it removes an out-of-fold
false positive on these splits within its recall budget (a cost with no benefit shown on
dev is not paid: every vetoable clause is embedded). The final weights are trained on all
of it.

    OMOIDE_MODELS=... PYTHONPATH=py:. .venv/bin/python bench/governance_train.py \
        [--model omoide/multilingual-e5-small] [--dtype q8] [--write]

``--write`` stores the weights in ``py/omoide/governance/clause_weights.json`` (other models'
entries kept); without it the script only reports the cross-validation.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT))

from bench.common import machine_info, md_table, write_results  # noqa: E402
from omoide.governance import extract_en, extract_ja  # noqa: E402
from omoide.governance.clause_cues import CUES, cue_values  # noqa: E402
from omoide.governance.clause_model import (  # noqa: E402
    ACCEPT_RULES,
    KINDS,
    NONE,
    WEIGHTS_FILE,
    accepted,
)
from omoide.governance.extract import clauses, extract, has_japanese  # noqa: E402
from omoide.governance.polarity import stance  # noqa: E402
from omoide.governance.prototypes import PROTOTYPES, unit_vectors  # noqa: E402

DATA = ROOT / "bench" / "data"
# more phrases for the learned stage only (the prototype classifier keeps its own set)
TRAINING_PHRASES = DATA / "clause_training_phrases.json"
LABELS = (*KINDS, NONE)
# Each split is one round of one author (``fold_of``). blind .. blind8 were scored as unseen
# rounds when written (rounds 1-9); from round 10 on they are trained on: 524 statements and
# 252 negatives per language by eight authors, against 350 and 143 in dev .. dev3, which one
# author's phrasings dominate. Round 11 adds blind9 (a tenth author's round, scored unseen in
# round 10). Round 13 adds blind10 and blind11 (the unseen measure of rounds 11-12) and
# train13 (a new author's round written as training data, 128 statements + 70 negatives per
# language; the e5 weights trained on it were not shipped: they gained nothing on the unseen
# splits, BENCHMARKS round 13). Round 14 adds blind12 and blind13, then train14a and
# train14b (two new authors' training splits): blind14, blind15, blind16 and heldout are the
# unseen measure now; session 28 adds blind17 (unseen, never trained on). Round 16 (session
# 29) trains on blind14 .. blind17 and two new authors' train16a and train16b; heldout,
# blind18 and blind19 are the unseen measure.
TRAIN_SPLITS = ("dev", "dev2", "dev3", "blind", "blind2", "blind3", "blind4", "blind5",
                "blind6", "blind7", "blind8", "blind9", "blind10", "blind11", "train13",
                "blind12", "blind13", "train14a", "train14b", "blind14", "blind15", "blind16",
                "blind17", "train16a", "train16b")
# Written to choose the acceptance threshold only (round 9): never an example, its
# probabilities come from the model trained on every dev round (``calibration_probabilities``)
CALIB_SPLITS = ("calib",)
ROUNDS = (*TRAIN_SPLITS, *CALIB_SPLITS)
# What the false-positive ceiling bounds when choosing (``choose``): "all" the negatives of a
# language (rounds 5-8), or "gated" those the open-statement gate lets through to the stage,
# counting only the false positives the stage adds (``stage_false_positives``)
CRITERIA = ("all", "gated")
LANGS = ("en", "ja")
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)  # 100 since round 10: 2,307 examples, was 1,019
BALANCED = (False, True)  # weigh each class's examples to the same total (none is the rarest)
# rectified units of one hidden layer between the features and the classes; 0: none (a
# softmax regression, every round before 15). Round 15's grouped cross-validation gave the
# English stage 0.84 recall out of fold with 64 units against 0.76 without, within the same
# false-positive bound (BENCHMARKS round 15)
HIDDEN_GRID = (0, 32, 64)
HIDDEN_STEPS = 300  # full-batch Adam steps of the network (the regression keeps ``fit``'s 400)
# wording cues appended to the vector (``clause_cues``); () is the vector alone
CUE_SETS: tuple[tuple[str, ...], ...] = (
    (), ("recurrence",), ("recurrence", "plan"), ("recurrence_own",), ("recurrence_own", "plan"),
    ("recurrence_own", "stance", "attribute"), ("recurrence_own", "plan", "stance", "attribute"))
THRESHOLDS = (*(round(0.30 + 0.1 * i, 2) for i in range(7)), 0.95)  # 0.30 .. 0.90, 0.95
# No threshold keeps a language's false positives within the ceiling (a model that does not
# know the language, e.g. English-only MiniLM on Japanese): the stage is off there (>= 1).
OFF = {"threshold": 1.01, "accept": "kind", "en_stage_recall": 0.0, "ja_stage_recall": 0.0}
VETO_LEVELS = (0.99, 0.97, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5)  # strictest first
CONFIDENCE_Z = 1.645  # one-sided 95 %


def false_positive_bound(rate: float, negatives: int, z: float = CONFIDENCE_Z) -> float:
    """One-sided Wilson upper bound of a false-positive rate measured on ``negatives``
    messages: the rate the threshold may reach on unseen messages, at 95 % confidence."""
    if negatives <= 0:
        return 1.0
    n, z2 = negatives, z * z
    centre = rate + z2 / (2 * n)
    spread = z * (rate * (1 - rate) / n + z2 / (4 * n * n)) ** 0.5
    return min(1.0, max(rate, (centre + spread) / (1 + z2 / n)))  # float rounding at 0, 1


def dev_rows(splits: tuple[str, ...] = TRAIN_SPLITS) -> list[dict]:
    rows = []
    for lang in LANGS:
        for line in (DATA / f"extraction_{lang}.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            if row["split"] in splits:
                rows.append(row)
    return rows


def opened(clause: str) -> str | None:
    """The text the stage sees for a clause: an open statement, or one about the user's
    people (for a fact only)."""
    rules = extract_ja if has_japanese(clause) else extract_en
    return rules.open_person(clause) or rules.open_statement(clause)


@functools.cache
def opened_clauses(text: str) -> list[str]:
    """What the stage sees of a message (``opened`` of each clause, the refused left out)."""
    return [t for t in map(opened, clauses(text)) if t]


def about_person(text: str) -> bool:
    """An opened clause about the user's people: the stage may find a fact in it only."""
    rules = extract_ja if has_japanese(text) else extract_en
    return rules.open_person(text) is not None


def examples(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(group, text, label): every gated-open clause of the dev messages, then the
    prototype phrases (each its own group, always in training). Only what the gate lets
    through: the refused clauses of the negatives as ``none`` too (tried in round 7) raised
    the out-of-fold false positives at every threshold (they pull ``none`` towards
    questions and requests, away from the small talk that reaches the stage)."""
    out = []
    for row in rows:
        for part in clauses(row["text"]):
            text = opened(part)
            if text:
                out.append((row["id"], text, row["kind"] or NONE))
    for label, phrases in PROTOTYPES.items():
        out += [(f"proto:{label}:{i}", phrase, label) for i, phrase in enumerate(phrases)]
    extra = json.loads(TRAINING_PHRASES.read_text(encoding="utf-8"))["phrases"]
    for label, phrases in extra.items():
        out += [(f"proto:extra:{label}:{i}", phrase, label) for i, phrase in enumerate(phrases)]
    return out


def fold_of(group: str, split_of: dict[str, str],
            rounds: tuple[str, ...] = TRAIN_SPLITS) -> int:
    """THE CROSS-VALIDATION RULE: folds are groups of authorship, never random rows. A
    message's fold is its dev split (each split is one round, written by one author at one
    time), so every out-of-fold figure is how the stage fares on a round whose phrasings it
    never saw, as on a new author's blind split. Random message folds put one author's
    phrasings on both sides and made the dev false-positive estimate optimistic (0.014
    where held-out rounds gave 0.035 for e5 JA at 0.3, round 5). Prototype and training-only
    phrases (``proto:``) are always in training."""
    if group.startswith("proto:"):
        return -1  # training only
    return rounds.index(split_of[group])


def _standardized(x: np.ndarray, y: np.ndarray, balanced: bool) -> tuple[np.ndarray, ...]:
    """What both fits start from: the features' mean and spread, the standardized features,
    the labels one-hot, and each example's weight (``balanced``: each class the same total,
    ``none`` being the rarest)."""
    mean, std = x.mean(0), x.std(0) + 1e-6
    n, k = len(y), len(LABELS)
    counts = np.bincount(y, minlength=k)
    sample = (n / (k * counts[y]))[:, None] if balanced else np.ones((n, 1))
    return mean, std, (x - mean) / std, np.eye(k)[y], sample


def fit(x: np.ndarray, y: np.ndarray, l2: float, balanced: bool = False,
        steps: int = 400, free: int = 0) -> tuple[np.ndarray, ...]:
    """Softmax regression on standardized features; returns (W, b) for the RAW features.
    The last ``free`` columns (the wording cues) are not penalized, like the bias: the L2
    tames 384 correlated vector components, and a cue's handful of weights is what the cue
    is there to learn."""
    mean, std, z, onehot, sample = _standardized(x, y, balanced)
    n, d = z.shape
    k = len(LABELS)
    w = np.zeros((d, k))
    b = np.zeros(k)
    penalized = np.ones((d, 1))
    if free:
        penalized[d - free:] = 0.0
    # Adam on the mean cross-entropy + l2/n * |W|^2 (full batch: ~1,200 rows)
    m_w, v_w, m_b, v_b = (np.zeros_like(w), np.zeros_like(w), np.zeros_like(b),
                          np.zeros_like(b))
    lr, beta1, beta2 = 0.05, 0.9, 0.999
    for t in range(1, steps + 1):
        logits = z @ w + b
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        g = sample * (p - onehot) / n
        gw = z.T @ g + 2 * l2 / n * (w * penalized)
        gb = g.sum(0)
        m_w = beta1 * m_w + (1 - beta1) * gw
        v_w = beta2 * v_w + (1 - beta2) * gw * gw
        m_b = beta1 * m_b + (1 - beta1) * gb
        v_b = beta2 * v_b + (1 - beta2) * gb * gb
        w -= lr * (m_w / (1 - beta1 ** t)) / (np.sqrt(v_w / (1 - beta2 ** t)) + 1e-8)
        b -= lr * (m_b / (1 - beta1 ** t)) / (np.sqrt(v_b / (1 - beta2 ** t)) + 1e-8)
    raw_w = w / std[:, None]
    raw_b = b - mean @ raw_w
    return raw_w, raw_b


def fit_network(x: np.ndarray, y: np.ndarray, hidden: int, l2: float, balanced: bool = False,
                steps: int = HIDDEN_STEPS, seed: int = 0, free: int = 0
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The classifier's layers, each (W, b) for its RAW input: ``fit``'s softmax regression
    when ``hidden`` is 0, else one hidden layer of ``hidden`` rectified units trained on
    standardized features (He initialization from a fixed seed: the same data gives the
    same weights), the standardization folded into the first layer. ``l2`` penalizes both
    layers' weights as ``fit`` does its one (the cues too: ``free`` is for the regression)."""
    if hidden == 0:
        return [fit(x, y, l2, balanced, free=free)]
    rng = np.random.default_rng(seed)
    mean, std, z, onehot, sample = _standardized(x, y, balanced)
    n, d = z.shape
    k = len(LABELS)
    params = {"w1": rng.normal(0.0, (2.0 / d) ** 0.5, (d, hidden)), "b1": np.zeros(hidden),
              "w2": rng.normal(0.0, (2.0 / hidden) ** 0.5, (hidden, k)), "b2": np.zeros(k)}
    first = {key: np.zeros_like(v) for key, v in params.items()}
    second = {key: np.zeros_like(v) for key, v in params.items()}
    lr, beta1, beta2 = 0.01, 0.9, 0.999
    for t in range(1, steps + 1):
        pre = z @ params["w1"] + params["b1"]
        units = np.maximum(pre, 0.0)
        logits = units @ params["w2"] + params["b2"]
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        g = sample * (p - onehot) / n
        back = (g @ params["w2"].T) * (pre > 0)
        grads = {"w2": units.T @ g + 2 * l2 / n * params["w2"], "b2": g.sum(0),
                 "w1": z.T @ back + 2 * l2 / n * params["w1"], "b1": back.sum(0)}
        for key, grad in grads.items():
            first[key] = beta1 * first[key] + (1 - beta1) * grad
            second[key] = beta2 * second[key] + (1 - beta2) * grad * grad
            params[key] -= lr * (first[key] / (1 - beta1 ** t)) / (
                np.sqrt(second[key] / (1 - beta2 ** t)) + 1e-8)
    raw_w1 = params["w1"] / std[:, None]
    return [(raw_w1, params["b1"] - mean @ raw_w1), (params["w2"], params["b2"])]


def with_cues(x: np.ndarray, texts: list[str], cues: tuple[str, ...]) -> np.ndarray:
    """The vectors followed by each text's 0/1 wording cues (``clause_cues``), as scored."""
    if not cues:
        return x
    return np.hstack([x, np.array([cue_values(cues, t) for t in texts], dtype=np.float64)])


def rule_in(accept: str | dict[str, str], lang: str) -> str:
    return accept if isinstance(accept, str) else accept[lang]


def probabilities(x: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Class probabilities of the rows of ``x`` (``fit_network``'s layers: rectified between
    them, a softmax after the last), as ``ClauseWeights.probabilities`` scores one clause."""
    for w, b in layers[:-1]:
        x = np.maximum(x @ w + b, 0.0)
    w, b = layers[-1]
    logits = x @ w + b
    logits -= logits.max(1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(1, keepdims=True)


class Lookup:
    """A reviewing ClauseClassifier answering from precomputed probabilities (out-of-fold):
    ``threshold`` accepts an open clause, ``veto`` (per language, absent: off) drops a
    pattern match whose ``none`` probability reaches it."""

    via = "learned"

    def __init__(self, probs: dict[str, np.ndarray], threshold: float,
                 veto: dict[str, float] | None = None,
                 accept: str | dict[str, str] = "kind") -> None:
        self.probs, self.threshold, self.veto = probs, threshold, veto or {}
        self.accept = accept

    def classify(self, texts):
        out = []
        for text in texts:
            p = self.probs.get(text)
            if p is None:
                out.append(None)
                continue
            kind = accepted(dict(zip(LABELS, map(float, p), strict=True)), self.threshold,
                            rule_in(self.accept, "ja" if has_japanese(text) else "en"))
            out.append((kind, stance(text)) if kind else None)
        return out

    def review(self, open_texts, matched_texts):
        vetoed = []
        for text in matched_texts:
            p = self.probs.get(text)
            level = self.veto.get("ja" if has_japanese(text) else "en", 1.0)
            vetoed.append(p is not None and float(p[len(KINDS)]) >= level)
        return self.classify(open_texts), vetoed


class _Recorder:
    """A second stage that finds nothing and remembers which clauses ``extract`` asked it
    about (``stage_inputs``)."""

    via = "learned"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def classify(self, texts):
        self.asked.extend(texts)
        return [None] * len(texts)

    def review(self, open_texts, matched_texts):
        return self.classify(open_texts), [False] * len(matched_texts)


_ASKED: dict[str, tuple[str, ...]] = {}
_FOUND: dict[tuple, list] = {}


def extract_with(text: str, classifier) -> list:
    """``extract([text], classifier=classifier)``'s candidates, computed once per distinct
    set of verdicts: without a veto, what the extractor returns depends on the stage only
    through its verdicts on the clauses it asks about, so the threshold sweep re-runs the
    rules only where a verdict changed (the sweep's cost was the rules, run again for each
    of ~400 settings)."""
    if classifier is None or getattr(classifier, "veto", None):
        return extract([text], classifier=classifier)[0]
    if text not in _ASKED:
        recorder = _Recorder()
        extract([text], classifier=recorder)
        _ASKED[text] = tuple(recorder.asked)
    key = (text, classifier.via, tuple(classifier.classify(list(_ASKED[text]))))
    if key not in _FOUND:
        _FOUND[key] = extract([text], classifier=classifier)[0]
    return _FOUND[key]


def pipeline_counts(rows: list[dict], classifier) -> dict[str, dict[str, int]]:
    """Per language: positives, negatives, hits (the whole extractor), stage_hits (the stage
    by itself on every open clause), false_positives, and the negatives the gate lets
    through to the stage (``gated_negatives``) with the false positives the stage adds
    (``stage_false_positives``: a learned candidate on a negative the patterns alone leave
    clean)."""
    out = {}
    for lang in LANGS:
        part = [r for r in rows if r["lang"] == lang]
        c = dict.fromkeys(("positives", "negatives", "hits", "stage_hits", "false_positives",
                           "gated_negatives", "stage_false_positives"), 0)
        for r in part:
            found = extract_with(r["text"], classifier)
            kinds = {c.kind for c in found}
            texts = opened_clauses(r["text"])
            if r["kind"]:
                c["positives"] += 1
                c["hits"] += r["kind"] in kinds
                if classifier is not None:  # the stage by itself, on every open clause
                    c["stage_hits"] += any(v and v[0] == r["kind"] and (
                        v[0] == "fact" or not about_person(t))
                        for t, v in zip(texts, classifier.classify(texts), strict=True))
                continue
            c["negatives"] += 1
            c["gated_negatives"] += bool(texts)
            wrong = [x for x in found if not (r["negative"] == "third" and x.kind == "fact")]
            if found and not (r["negative"] == "third" and kinds <= {"fact"}):
                c["false_positives"] += 1
                c["stage_false_positives"] += all(x.via != "pattern" for x in wrong)
        out[lang] = c
    return out


def rates(c: dict[str, int]) -> dict[str, float]:
    """Counts (``pipeline_counts``, or their sum over rounds) as the reported rates."""
    return {"recall": c["hits"] / c["positives"] if c["positives"] else float("nan"),
            "false_positive_rate": c["false_positives"] / c["negatives"]
            if c["negatives"] else float("nan"),
            "stage_recall": c["stage_hits"] / c["positives"] if c["positives"] else float("nan"),
            "negatives": c["negatives"]}


def pipeline_score(rows: list[dict], classifier) -> dict[str, dict[str, float]]:
    return {lang: rates(c) for lang, c in pipeline_counts(rows, classifier).items()
            if c["positives"] and c["negatives"]}


def summed(per_round: dict[str, dict[str, dict[str, int]]], rounds, lang: str
           ) -> dict[str, int]:
    total: dict[str, int] = {}
    for name in rounds:
        for key, value in per_round[name][lang].items():
            total[key] = total.get(key, 0) + value
    return total


def within_bound(c: dict[str, int], max_fp: float, criterion: str) -> bool:
    """The false-positive ceiling at 95 % confidence (``false_positive_bound``) over all the
    negatives (``all``) or over those that reach the stage, counting the stage's own false
    positives (``gated``)."""
    if criterion == "gated":
        n = c["gated_negatives"]
        return false_positive_bound(c["stage_false_positives"] / n if n else 0.0, n) <= max_fp
    n = c["negatives"]
    return false_positive_bound(c["false_positives"] / n if n else 0.0, n) <= max_fp


def false_positives(rows: list[dict], classifier) -> list[dict]:
    """The dev negatives the extractor stores something for (out-of-fold probabilities), with
    which stage found it: what a new rule or gate may be studied on (dev only)."""
    out = []
    for r in rows:
        if r["kind"]:
            continue
        found, _ = extract([r["text"]], classifier=classifier)
        if found and not (r["negative"] == "third" and {c.kind for c in found} <= {"fact"}):
            out.append({"lang": r["lang"], "split": r["split"], "negative": r["negative"],
                        "text": r["text"],
                        "found": [f"{c.kind}/{c.via}" for c in found]})
    return out


def config_of(setting: dict) -> tuple:
    """A swept setting's classifier: (l2, balanced, cues, hidden units)."""
    return (setting["l2"], setting["balanced"], tuple(setting.get("cues", ())),
            setting.get("hidden", 0))


def choose(sweep: list[dict], max_fp: float, rounds: tuple[str, ...] = TRAIN_SPLITS,
           criterion: str = "all") -> dict:
    """L2, class weighting and cue set, then an acceptance rule and threshold per language (a
    message is in one language, so each language's scores depend on its own rule and
    threshold only; the rule was one for both languages before round 8): the best out-of-fold recall
    of the stage alone whose false positives are within ``max_fp`` at 95 % confidence
    (``false_positive_bound``). The patterns were written on these
    splits (recall ~0.99 with or without the stage), so the stage's own recall on unseen
    messages is what the choice follows."""
    configs: dict[tuple, list[dict]] = {}
    for s in sweep:
        configs.setdefault(config_of(s), []).append(s)

    def per_language(rows: list[dict]) -> dict[str, dict]:
        chosen = {}
        for lang in LANGS:
            scored = [(s, summed(s["counts"], rounds, lang)) for s in rows]
            ok = [(s, c) for s, c in scored if within_bound(c, max_fp, criterion)]
            if ok:
                s, c = max(ok, key=lambda sc: (sc[1]["stage_hits"], sc[1]["hits"],
                                               sc[0]["threshold"]))
                chosen[lang] = {"accept": s["accept"], "threshold": s["threshold"],
                                **{f"{lang}_{m}": v for m, v in rates(c).items()}}
            else:
                chosen[lang] = OFF | {f"{lang}_{m}": float("nan") for m in (
                    "recall", "false_positive_rate")}
        return chosen

    (l2, balanced, cues, hidden), chosen = max(
        ((cfg, per_language(rows)) for cfg, rows in configs.items()),
        key=lambda item: sum(item[1][lang][f"{lang}_stage_recall"] for lang in LANGS))
    return {"l2": l2, "balanced": balanced, "cues": list(cues), "hidden": hidden,
            "criterion": criterion,
            "rounds": list(rounds),
            "accept": {lang: chosen[lang]["accept"] for lang in LANGS},
            "threshold": {lang: chosen[lang]["threshold"] for lang in LANGS},
            **{f"{lang}_{m}": chosen[lang][f"{lang}_{m}"] for lang in LANGS
               for m in ("recall", "false_positive_rate", "stage_recall")}}


def choose_veto(rows: list[dict], probs: dict[str, np.ndarray], thresholds: dict[str, float],
                budget: float, accept: str | dict[str, str] = "kind"
                ) -> tuple[dict[str, float], list[dict]]:
    """Per language, the lowest ``none`` level at which vetoing pattern matches costs at most
    ``budget`` of the out-of-fold recall (the whole extractor, thresholds as chosen) and
    removes at least one false positive; none of them: no veto (the language's matches are
    not embedded, which is most of the stage's cost). The rules were written on these
    splits, so their false positives here are few: a veto that saves nothing here is not
    kept on the hope that it saves something elsewhere."""
    sweep = []
    chosen: dict[str, float] = {}
    for lang in LANGS:
        if thresholds[lang] >= 1.0:
            continue  # the stage does not know this language
        part = [r for r in rows if r["lang"] == lang]
        base = pipeline_score(part, Lookup(probs, thresholds[lang], accept=accept))[lang]
        for level in VETO_LEVELS:
            got = pipeline_score(part, Lookup(probs, thresholds[lang], {lang: level},
                                              accept))[lang]
            sweep.append({"lang": lang, "veto": level, **got,
                          "recall_without": base["recall"],
                          "false_positive_rate_without": base["false_positive_rate"]})
            if (got["recall"] >= base["recall"] - budget
                    and got["false_positive_rate"] < base["false_positive_rate"]):
                chosen[lang] = level
    return chosen, sweep


# What a threshold may be chosen on: the dev rounds' out-of-fold counts with every negative
# under the ceiling (rounds 5-8), or with the calibration round too, under the ceiling over
# all negatives or over those that reach the stage.
CHOICE_ROUNDS = {"dev-all": TRAIN_SPLITS, "calib-all": ROUNDS, "calib-gated": ROUNDS,
                 "dev-gated": TRAIN_SPLITS}
CHOICE_CRITERION = {"dev-all": "all", "calib-all": "all", "calib-gated": "gated",
                    "dev-gated": "gated"}


def threshold_generalization(sweep: list[dict], max_fp: float,
                             patterns_only: dict[str, dict[str, dict[str, int]]]
                             ) -> list[dict]:
    """Does a chosen threshold hold on a round it was not chosen on? For each way of
    choosing (``CHOICE_ROUNDS``) and each round (dev .. blind9, calib) held out in turn:
    the setting chosen without that round, scored on it (grouped by authorship, as the
    cross-validation; the held-out dev round's probabilities are out of fold, the
    calibration round's come from the model trained on every dev round, or out of fold
    with ``--calib-in-training``)."""
    out = []
    for choice, rounds in CHOICE_ROUNDS.items():
        for held in ROUNDS:
            best = choose(sweep, max_fp, tuple(r for r in rounds if r != held),
                          CHOICE_CRITERION[choice])
            for lang in LANGS:
                entry = next((s for s in sweep if config_of(s) == config_of(best)
                              and s["accept"] == best["accept"][lang]
                              and s["threshold"] == best["threshold"][lang]), None)
                c = (entry["counts"][held][lang] if entry is not None
                     else patterns_only[held][lang])  # the stage off
                out.append({"choice": choice, "held_out": held, "lang": lang,
                            "accept": best["accept"][lang],
                            "threshold": best["threshold"][lang], **c})
    return out


def vectors_for(texts: list[str], model: str, dtype: str) -> np.ndarray:
    from omoide.embeddings.onnx_provider import OnnxEmbedder

    cache_path = ROOT / ".cache" / f"clause_vectors_{model.replace('/', '_')}_{dtype}.json"
    cache: dict[str, list[float]] = {}
    if cache_path.is_file():
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        embedder = OnnxEmbedder.from_model_id(model, dtype)
        cache.update(zip(missing, unit_vectors(embedder, missing), strict=True))
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        cache_path.write_text(json.dumps(cache), encoding="utf-8")
    return np.array([cache[t] for t in texts], dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="omoide/multilingual-e5-small")
    parser.add_argument("--dtype", default="q8")
    parser.add_argument("--max-fp", type=float, default=0.05,
                        help="false-positive ceiling per language at 95 %% confidence when "
                             "choosing (the goal)")
    parser.add_argument("--veto-budget", type=float, default=0.005,
                        help="out-of-fold recall the pattern veto may cost per language "
                             "(negative: no veto)")
    parser.add_argument("--name", default=None, help="results name (default per model)")
    parser.add_argument("--no-cues", dest="cue_sets", action="store_const", const=((),),
                        default=CUE_SETS, help="sweep the vector alone (no wording cues)")
    parser.add_argument("--cue-set", nargs="+", choices=tuple(CUES), default=None,
                        help="sweep this one cue set only (default: the seven of CUE_SETS)")
    parser.add_argument("--choice", choices=tuple(CHOICE_ROUNDS), default="calib-gated",
                        help="what the threshold is chosen on (``CHOICES``)")
    parser.add_argument("--calib-in-training", action="store_true",
                        help="train on the calibration round too, as one more round of the "
                             "grouped cross-validation")
    parser.add_argument("--l2", type=float, nargs="+", default=L2_GRID,
                        help="the L2 strengths swept (default: the grid)")
    parser.add_argument("--balanced", type=lambda v: v == "true", nargs="+",
                        default=BALANCED, help="class weighting swept: true / false")
    parser.add_argument("--hidden", type=int, nargs="+", default=HIDDEN_GRID,
                        help="hidden units swept, 0 for none (default: the grid)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.cue_set:
        args.cue_sets = (tuple(args.cue_set),)

    started = time.perf_counter()
    rows = dev_rows()
    calib = dev_rows(CALIB_SPLITS)
    # the calibration round as one more training round (its probabilities out of fold)
    trained_rounds = ROUNDS if args.calib_in_training else TRAIN_SPLITS
    data = examples([*rows, *calib] if args.calib_in_training else rows)
    texts = [t for _, t, _ in data]
    calib_texts = list(dict.fromkeys(
        t for r in calib for t in map(opened, clauses(r["text"])) if t))
    vectors = vectors_for([*texts, *calib_texts], args.model, args.dtype)
    x, x_calib = vectors[:len(texts)], vectors[len(texts):]
    y = np.array([LABELS.index(label) for _, _, label in data])
    split_of = {r["id"]: r["split"] for r in (*rows, *calib)}
    folds = np.array([fold_of(g, split_of, trained_rounds) for g, _, _ in data])
    n_folds = len(trained_rounds)

    sweep = []
    oof_by_config: dict[tuple, dict[str, np.ndarray]] = {}
    calib_by_config: dict[tuple, dict[str, np.ndarray]] = {}
    for l2, balanced, cues, hidden in [(a, c, q, h) for q in args.cue_sets for h in args.hidden
                                       for a in args.l2 for c in args.balanced]:
        xc = with_cues(x, texts, cues)
        oof: dict[str, np.ndarray] = oof_by_config.setdefault((l2, balanced, cues, hidden), {})
        for f in range(n_folds):
            train, test = folds != f, folds == f
            layers = fit_network(xc[train], y[train], hidden, l2, balanced, free=len(cues))
            for text, p in zip(np.array(texts, dtype=object)[test],
                               probabilities(xc[test], layers), strict=True):
                oof.setdefault(text, p)
        # the calibration round: probabilities of the model trained on every dev round
        # (or, trained on as a round of its own, out of fold like the others)
        calibration = oof
        if not args.calib_in_training:
            layers = fit_network(xc, y, hidden, l2, balanced, free=len(cues))
            calibration = dict(zip(calib_texts, probabilities(
                with_cues(x_calib, calib_texts, cues), layers), strict=True))
        calib_by_config[(l2, balanced, cues, hidden)] = calibration
        for accept in ACCEPT_RULES:
            for threshold in THRESHOLDS:
                counts = {name: pipeline_counts(
                    [r for r in rows if r["split"] == name],
                    Lookup(oof, threshold, accept=accept)) for name in TRAIN_SPLITS}
                counts |= {name: pipeline_counts(
                    [r for r in calib if r["split"] == name],
                    Lookup(calibration, threshold, accept=accept)) for name in CALIB_SPLITS}
                dev = {lang: rates(summed(counts, TRAIN_SPLITS, lang)) for lang in LANGS}
                cal = {lang: rates(summed(counts, CALIB_SPLITS, lang)) for lang in LANGS}
                sweep.append({"l2": l2, "balanced": balanced, "cues": list(cues),
                              "hidden": hidden,
                              "accept": accept, "threshold": threshold, "counts": counts,
                              **{f"{lang}_{m}": dev[lang][m] for lang in LANGS
                                 for m in ("recall", "false_positive_rate", "stage_recall",
                                           "negatives")},
                              **{f"{lang}_calib_{m}": cal[lang][m] for lang in LANGS
                                 for m in ("false_positive_rate", "stage_recall")}})
                print({k: v for k, v in sweep[-1].items() if k != "counts"}, flush=True)
    patterns_by_round = {name: pipeline_counts(
        [r for r in (*rows, *calib) if r["split"] == name], None) for name in ROUNDS}
    generalization = threshold_generalization(sweep, args.max_fp, patterns_by_round)
    for g in generalization:
        print("held-out round:", g)
    best = choose(sweep, args.max_fp, CHOICE_ROUNDS[args.choice],
                  CHOICE_CRITERION[args.choice])
    veto, veto_sweep = ({}, []) if args.veto_budget < 0 else choose_veto(
        rows, oof_by_config[config_of(best)],
        best["threshold"],
        args.veto_budget, best["accept"])
    best["veto"] = veto
    patterns_only = pipeline_score(rows, None)
    chosen_probs = oof_by_config[config_of(best)]
    oof_fps = [fp for lang in LANGS for fp in false_positives(
        [r for r in rows if r["lang"] == lang],
        Lookup(chosen_probs, best["threshold"][lang], veto, best["accept"]))]
    for fp in oof_fps:
        print("out-of-fold false positive:", fp)
    layers = fit_network(with_cues(x, texts, tuple(best["cues"])), y, best["hidden"],
                         best["l2"], best["balanced"], free=len(best["cues"]))
    w, b = layers[-1]
    seconds = time.perf_counter() - started
    summary = {
        "model": args.model, "dtype": args.dtype, "examples": len(data),
        "by_label": {label: int((y == i).sum()) for i, label in enumerate(LABELS)},
        "chosen": best, "patterns_only_dev": patterns_only, "max_fp": args.max_fp,
        "out_of_fold_false_positives": oof_fps, "choice": args.choice,
        "threshold_generalization": generalization,
    }
    print(json.dumps(summary, indent=1))
    if args.write:
        stored = (json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
                  if WEIGHTS_FILE.is_file() else {"models": {}})
        stored["comment"] = ("Learned second extraction stage (omoide.governance.clause_model),"
                             " written by bench/governance_train.py: trained on the"
                             f" {', '.join(trained_rounds)} splits of"
                             " bench/data/extraction_*.jsonl and the prototype phrases only.")
        stored["models"][args.model] = {
            "dtype": args.dtype, "labels": list(LABELS),
            "weights": [[round(float(v), 5) for v in row] for row in w.T],
            "bias": [round(float(v), 5) for v in b],
            "threshold": best["threshold"], "accept": best["accept"], "veto": best["veto"],
            "cues": best["cues"],
            **({"hidden": {"weights": [[float(f"{v:.5g}") for v in row]
                                       for row in layers[0][0].T],
                           "bias": [float(f"{v:.5g}") for v in layers[0][1]]}}
               if best["hidden"] else {}),
            "l2": best["l2"],
            "balanced": best["balanced"],
            "examples": len(data),
            "trained_on": list(trained_rounds),
            "threshold_chosen_on": list(CHOICE_ROUNDS[args.choice]),
            "false_positives_bounded_over": CHOICE_CRITERION[args.choice],
        }
        WEIGHTS_FILE.write_text(json.dumps(stored, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS_FILE}")
    markdown = (
        f"# Learned clause classifier: cross-validation on {', '.join(trained_rounds)}\n\n"
        f"model {args.model} ({args.dtype}), {len(data)} examples, {n_folds} folds over "
        f"dev splits (one round held out per fold), {seconds:.1f} s. Chosen on "
        f"{args.choice} ({', '.join(CHOICE_ROUNDS[args.choice])}; false positives bounded "
        f"over {CHOICE_CRITERION[args.choice]} negatives): l2 "
        f"{best['l2']}, balanced {best['balanced']}, cues {best['cues'] or 'none'}, "
        f"hidden units {best['hidden'] or 'none'}, "
        f"acceptance rule {best['accept']}, "
        f"thresholds {best['threshold']} "
        f"(best out-of-fold recall of the stage alone with false positives <= "
        f"{args.max_fp} at 95 % confidence, one-sided Wilson bound, per language). Patterns "
        f"alone on the same splits: EN {patterns_only['en']['recall']:.3f} / JA "
        f"{patterns_only['ja']['recall']:.3f} recall.\n\n"
        + md_table(["l2", "balanced", "cues", "hidden", "accept", "threshold", "en recall",
                    "en stage alone", "en false pos.", "en calib stage", "en calib false pos.",
                    "ja recall", "ja stage alone", "ja false pos.", "ja calib stage",
                    "ja calib false pos."],
                   [[s["l2"], s["balanced"], "+".join(s["cues"]) or "-", s["hidden"],
                     s["accept"],
                     s["threshold"], s["en_recall"],
                     s["en_stage_recall"],
                     s["en_false_positive_rate"], s["en_calib_stage_recall"],
                     s["en_calib_false_positive_rate"], s["ja_recall"], s["ja_stage_recall"],
                     s["ja_false_positive_rate"], s["ja_calib_stage_recall"],
                     s["ja_calib_false_positive_rate"]] for s in sweep])
        + f"\n## Does the chosen threshold hold on a round it was not chosen on? (chosen: "
        f"{args.choice})\n\nEach round held out in turn, the setting chosen on the others "
        f"(`threshold_generalization`); false positives of the whole extractor over the "
        f"round's negatives, the stage's own over those that reach it.\n\n"
        + md_table(["choice", "held out", "lang", "accept", "threshold", "stage recall",
                    "recall", "false pos.", "stage false pos. / reaching it"],
                   [[g["choice"], g["held_out"], g["lang"], g["accept"], g["threshold"],
                     f"{g['stage_hits']}/{g['positives']}", f"{g['hits']}/{g['positives']}",
                     f"{g['false_positives']}/{g['negatives']}",
                     f"{g['stage_false_positives']}/{g['gated_negatives']}"]
                    for g in generalization])
        + "\n## Out-of-fold false positives at the chosen setting (dev negatives)\n\n"
        + md_table(["lang", "split", "negative", "text", "found (kind/stage)"],
                   [[f["lang"], f["split"], f["negative"], f["text"], ", ".join(f["found"])]
                    for f in oof_fps])
        + f"\n## Pattern veto (chosen: {best['veto']}; budget {args.veto_budget} of recall)\n\n"
        + md_table(["lang", "veto at none >=", "recall", "recall without", "false pos.",
                    "false pos. without"],
                   [[v["lang"], v["veto"], v["recall"], v["recall_without"],
                     v["false_positive_rate"], v["false_positive_rate_without"]]
                    for v in veto_sweep]))
    name = args.name or f"governance_train_{args.model.split('/')[-1]}"
    # each setting's rates, not its per-split counts: with them a full sweep's file was
    # 10 MB (1,120 settings x 15 splits), the rates are what the table and the choice use
    swept = [{k: v for k, v in row.items() if k != "counts"} for row in sweep]
    write_results(name, {"benchmark": "governance_train", "machine": machine_info(),
                         **summary, "sweep": swept, "veto_sweep": veto_sweep,
                         "seconds": round(seconds, 2)}, markdown)


if __name__ == "__main__":
    main()
