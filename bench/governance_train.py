"""Train the learned second extraction stage (``omoide.governance.clause_model``).

Training data: the development splits of the labelled extraction set ONLY (``dev``, ``dev2``,
``dev3``, both languages; never ``heldout`` or ``blind`` .. ``blind6``), plus the prototype
phrases (``prototypes.json``) and the training-only phrases of
``bench/data/clause_training_phrases.json``. Each message is cut into clauses as ``extract``
cuts them;
every clause the open-statement gate lets through (what the stage will see) is an example,
labelled with its message's kind, or ``none`` for the negatives.

Model: multinomial logistic regression (softmax, L2) over the embedding model's query vectors,
standardized for training and folded back into one weight row + bias per class, so scoring
needs the raw unit vector only (followed by the wording cues of ``clause_cues``, where a cue
set is chosen). Chosen by grouped cross-validation on the same splits (``fold_of``): the L2
strength, class weighting and cue set, then per language the acceptance rule and threshold,
by running the whole extractor
(patterns, then the stage with out-of-fold probabilities) and taking the best out-of-fold
recall of the stage whose false positives stay within ``--max-fp`` (the goal, 0.05) at 95 %
confidence: the one-sided Wilson upper bound of the out-of-fold false-positive count over
the language's dev negatives (~140: at most 2 of them), not the point estimate, since the
rules and the gate were written on these negatives and unseen phrasings leak more. The
threshold is per language. The pattern veto is kept only where it removes an out-of-fold
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
from omoide.governance.clause_cues import cue_values  # noqa: E402
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
TRAIN_SPLITS = ("dev", "dev2", "dev3")
LANGS = ("en", "ja")
L2_GRID = (1.0, 3.0, 10.0, 30.0)
BALANCED = (False, True)  # weigh each class's examples to the same total (none is the rarest)
# wording cues appended to the vector (``clause_cues``); () is the vector alone
CUE_SETS: tuple[tuple[str, ...], ...] = ((), ("recurrence",), ("recurrence", "plan"))
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


def dev_rows() -> list[dict]:
    rows = []
    for lang in LANGS:
        for line in (DATA / f"extraction_{lang}.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            if row["split"] in TRAIN_SPLITS:
                rows.append(row)
    return rows


def opened(clause: str) -> str | None:
    """The text the stage sees for a clause: an open statement, or one about the user's
    people (for a fact only)."""
    rules = extract_ja if has_japanese(clause) else extract_en
    return rules.open_person(clause) or rules.open_statement(clause)


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


def fold_of(group: str, split_of: dict[str, str]) -> int:
    """THE CROSS-VALIDATION RULE: folds are groups of authorship, never random rows. A
    message's fold is its dev split (each split is one round, written by one author at one
    time), so every out-of-fold figure is how the stage fares on a round whose phrasings it
    never saw, as on a new author's blind split. Random message folds put one author's
    phrasings on both sides and made the dev false-positive estimate optimistic (0.014
    where held-out rounds gave 0.035 for e5 JA at 0.3, round 5). Prototype and training-only
    phrases (``proto:``) are always in training."""
    if group.startswith("proto:"):
        return -1  # training only
    return TRAIN_SPLITS.index(split_of[group])


def fit(x: np.ndarray, y: np.ndarray, l2: float, balanced: bool = False,
        steps: int = 400, free: int = 0) -> tuple[np.ndarray, ...]:
    """Softmax regression on standardized features; returns (W, b) for the RAW features.
    The last ``free`` columns (the wording cues) are not penalized, like the bias: the L2
    tames 384 correlated vector components, and a cue's handful of weights is what the cue
    is there to learn."""
    mean, std = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / std
    n, d = z.shape
    k = len(LABELS)
    onehot = np.eye(k)[y]
    counts = np.bincount(y, minlength=k)
    sample = (n / (k * counts[y]))[:, None] if balanced else np.ones((n, 1))
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


def with_cues(x: np.ndarray, texts: list[str], cues: tuple[str, ...]) -> np.ndarray:
    """The vectors followed by each text's 0/1 wording cues (``clause_cues``), as scored."""
    if not cues:
        return x
    return np.hstack([x, np.array([cue_values(cues, t) for t in texts], dtype=np.float64)])


def rule_in(accept: str | dict[str, str], lang: str) -> str:
    return accept if isinstance(accept, str) else accept[lang]


def probabilities(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
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


def pipeline_score(rows: list[dict], classifier) -> dict[str, dict[str, float]]:
    out = {}
    for lang in LANGS:
        part = [r for r in rows if r["lang"] == lang]
        pos = [r for r in part if r["kind"]]
        neg = [r for r in part if not r["kind"]]
        if not pos or not neg:
            continue
        hit = fp = alone = 0
        for r in part:
            found, _ = extract([r["text"]], classifier=classifier)
            kinds = {c.kind for c in found}
            if r["kind"]:
                hit += r["kind"] in kinds
                if classifier is not None:  # the stage by itself, on every open clause
                    texts = [t for t in map(opened, clauses(r["text"])) if t]
                    alone += any(v and v[0] == r["kind"] and (
                        v[0] == "fact" or not about_person(t))
                        for t, v in zip(texts, classifier.classify(texts), strict=True))
            elif found and not (r["negative"] == "third" and kinds <= {"fact"}):
                fp += 1
        out[lang] = {"recall": hit / len(pos), "false_positive_rate": fp / len(neg),
                     "stage_recall": alone / len(pos), "negatives": len(neg)}
    return out


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


def choose(sweep: list[dict], max_fp: float) -> dict:
    """L2, class weighting and cue set, then an acceptance rule and threshold per language (a
    message is in one language, so each language's scores depend on its own rule and
    threshold only; the rule was one for both languages before round 8): the best out-of-fold recall
    of the stage alone whose false positives are within ``max_fp`` at 95 % confidence
    (``false_positive_bound``). The patterns were written on these
    splits (recall ~0.99 with or without the stage), so the stage's own recall on unseen
    messages is what the choice follows."""
    configs: dict[tuple, list[dict]] = {}
    for s in sweep:
        configs.setdefault((s["l2"], s["balanced"], tuple(s.get("cues", ()))), []).append(s)

    def per_language(rows: list[dict]) -> dict[str, dict]:
        chosen = {}
        for lang in LANGS:
            ok = [s for s in rows if false_positive_bound(
                s[f"{lang}_false_positive_rate"], s[f"{lang}_negatives"]) <= max_fp]
            chosen[lang] = max(ok, key=lambda s: (s[f"{lang}_stage_recall"],
                                                  s[f"{lang}_recall"], s["threshold"])
                               ) if ok else OFF | {f"{lang}_{m}": float("nan") for m in (
                                   "recall", "false_positive_rate")}
        return chosen

    (l2, balanced, cues), chosen = max(
        ((cfg, per_language(rows)) for cfg, rows in configs.items()),
        key=lambda item: sum(item[1][lang][f"{lang}_stage_recall"] for lang in LANGS))
    return {"l2": l2, "balanced": balanced, "cues": list(cues),
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
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    started = time.perf_counter()
    rows = dev_rows()
    data = examples(rows)
    texts = [t for _, t, _ in data]
    x = vectors_for(texts, args.model, args.dtype)
    y = np.array([LABELS.index(label) for _, _, label in data])
    split_of = {r["id"]: r["split"] for r in rows}
    folds = np.array([fold_of(g, split_of) for g, _, _ in data])
    n_folds = len(TRAIN_SPLITS)

    sweep = []
    oof_by_config: dict[tuple, dict[str, np.ndarray]] = {}
    for l2, balanced, cues in [(a, c, q) for q in args.cue_sets for a in L2_GRID
                               for c in BALANCED]:
        xc = with_cues(x, texts, cues)
        oof: dict[str, np.ndarray] = oof_by_config.setdefault((l2, balanced, cues), {})
        for f in range(n_folds):
            train, test = folds != f, folds == f
            w, b = fit(xc[train], y[train], l2, balanced, free=len(cues))
            for text, p in zip(np.array(texts, dtype=object)[test],
                               probabilities(xc[test], w, b), strict=True):
                oof.setdefault(text, p)
        for accept in ACCEPT_RULES:
            for threshold in THRESHOLDS:
                scores = pipeline_score(rows, Lookup(oof, threshold, accept=accept))
                sweep.append({"l2": l2, "balanced": balanced, "cues": list(cues),
                              "accept": accept,
                              "threshold": threshold, **{
                                  f"{lang}_{m}": scores[lang][m] for lang in LANGS
                                  for m in ("recall", "false_positive_rate", "stage_recall",
                                            "negatives")}})
                print(sweep[-1], flush=True)
    best = choose(sweep, args.max_fp)
    veto, veto_sweep = ({}, []) if args.veto_budget < 0 else choose_veto(
        rows, oof_by_config[(best["l2"], best["balanced"], tuple(best["cues"]))],
        best["threshold"],
        args.veto_budget, best["accept"])
    best["veto"] = veto
    patterns_only = pipeline_score(rows, None)
    chosen_probs = oof_by_config[(best["l2"], best["balanced"], tuple(best["cues"]))]
    oof_fps = [fp for lang in LANGS for fp in false_positives(
        [r for r in rows if r["lang"] == lang],
        Lookup(chosen_probs, best["threshold"][lang], veto, best["accept"]))]
    for fp in oof_fps:
        print("out-of-fold false positive:", fp)
    w, b = fit(with_cues(x, texts, tuple(best["cues"])), y, best["l2"], best["balanced"],
               free=len(best["cues"]))
    seconds = time.perf_counter() - started
    summary = {
        "model": args.model, "dtype": args.dtype, "examples": len(data),
        "by_label": {label: int((y == i).sum()) for i, label in enumerate(LABELS)},
        "chosen": best, "patterns_only_dev": patterns_only, "max_fp": args.max_fp,
        "out_of_fold_false_positives": oof_fps,
    }
    print(json.dumps(summary, indent=1))
    if args.write:
        stored = (json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
                  if WEIGHTS_FILE.is_file() else {"models": {}})
        stored["comment"] = ("Learned second extraction stage (omoide.governance.clause_model),"
                             " written by bench/governance_train.py: trained on the dev, dev2"
                             " and dev3 splits of bench/data/extraction_*.jsonl and the"
                             " prototype phrases only.")
        stored["models"][args.model] = {
            "dtype": args.dtype, "labels": list(LABELS),
            "weights": [[round(float(v), 5) for v in row] for row in w.T],
            "bias": [round(float(v), 5) for v in b],
            "threshold": best["threshold"], "accept": best["accept"], "veto": best["veto"],
            "cues": best["cues"],
            "l2": best["l2"],
            "balanced": best["balanced"],
            "examples": len(data),
            "trained_on": list(TRAIN_SPLITS),
        }
        WEIGHTS_FILE.write_text(json.dumps(stored, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS_FILE}")
    markdown = (
        f"# Learned clause classifier: cross-validation on {', '.join(TRAIN_SPLITS)}\n\n"
        f"model {args.model} ({args.dtype}), {len(data)} examples, {n_folds} folds over "
        f"dev splits (one round held out per fold), {seconds:.1f} s. Chosen: l2 "
        f"{best['l2']}, balanced {best['balanced']}, cues {best['cues'] or 'none'}, "
        f"acceptance rule {best['accept']}, "
        f"thresholds {best['threshold']} "
        f"(best out-of-fold recall of the stage alone with false positives <= "
        f"{args.max_fp} at 95 % confidence, one-sided Wilson bound, per language). Patterns "
        f"alone on the same splits: EN {patterns_only['en']['recall']:.3f} / JA "
        f"{patterns_only['ja']['recall']:.3f} recall.\n\n"
        + md_table(["l2", "balanced", "cues", "accept", "threshold", "en recall",
                    "en stage alone", "en false pos.", "ja recall", "ja stage alone",
                    "ja false pos."],
                   [[s["l2"], s["balanced"], "+".join(s["cues"]) or "-", s["accept"],
                     s["threshold"], s["en_recall"],
                     s["en_stage_recall"],
                     s["en_false_positive_rate"], s["ja_recall"], s["ja_stage_recall"],
                     s["ja_false_positive_rate"]] for s in sweep])
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
    write_results(name, {"benchmark": "governance_train", "machine": machine_info(),
                         **summary, "sweep": sweep, "veto_sweep": veto_sweep,
                         "seconds": round(seconds, 2)}, markdown)


if __name__ == "__main__":
    main()
