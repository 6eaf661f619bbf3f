"""Out-of-fold errors of the whole extractor on the TRAINING splits only: what a new rule or
gate may be studied on. For each training round (``governance_train.TRAIN_SPLITS``), the
learned stage's probabilities come from the model trained without that round (grouped
cross-validation, as the trainer), at the model's shipped setting (L2, class weighting, cues,
acceptance rule, thresholds, veto from ``clause_weights.json``), or at the setting given.
Lists the statements missed and the negatives stored, with each clause's gate verdict and the
stage's probabilities. It never reads heldout, blind18, blind19 or calib (the
unseen measure and the calibration round): it refuses them.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=py:. .venv/bin/python bench/governance_extract_errors.py \
        [--model omoide/multilingual-e5-small] [--lang en] [--splits blind9 blind8]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT))

from bench import governance_train as gt  # noqa: E402
from omoide.governance.clause_model import WEIGHTS_FILE  # noqa: E402
from omoide.governance.extract import clauses, extract, has_japanese  # noqa: E402

UNSEEN = ("heldout", "blind18", "blind19", "calib")


class PerLanguage(gt.Lookup):
    """``gt.Lookup`` with the shipped per-language thresholds (the trainer's sweep holds one
    threshold per instance, one language at a time)."""

    def classify(self, texts):
        out = []
        for text in texts:
            lang = "ja" if has_japanese(text) else "en"
            one = gt.Lookup(self.probs, self.threshold[lang], accept=self.accept)
            out.extend(one.classify([text]))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="omoide/multilingual-e5-small")
    parser.add_argument("--dtype", default="q8")
    parser.add_argument("--lang", choices=gt.LANGS, default=None)
    parser.add_argument("--splits", nargs="+", default=gt.TRAIN_SPLITS)
    args = parser.parse_args()
    bad = [s for s in args.splits if s in UNSEEN or s not in gt.TRAIN_SPLITS]
    if bad:
        raise SystemExit(f"not a training split: {bad}")
    shipped = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))["models"][args.model]
    cues = tuple(shipped.get("cues", ()))
    rows = gt.dev_rows()
    data = gt.examples(rows)
    texts = [t for _, t, _ in data]
    x = gt.with_cues(gt.vectors_for(texts, args.model, args.dtype), texts, cues)
    y = np.array([gt.LABELS.index(label) for _, _, label in data])
    split_of = {r["id"]: r["split"] for r in rows}
    folds = np.array([gt.fold_of(g, split_of) for g, _, _ in data])
    oof: dict[str, np.ndarray] = {}
    for f in range(len(gt.TRAIN_SPLITS)):
        layers = gt.fit_network(x[folds != f], y[folds != f], len(shipped.get("hidden", {}).get(
            "bias", ())), shipped["l2"], shipped["balanced"], free=len(cues))
        for text, p in zip(np.array(texts, dtype=object)[folds == f],
                           gt.probabilities(x[folds == f], layers), strict=True):
            oof.setdefault(text, p)
    lookup = PerLanguage(oof, shipped["threshold"], shipped.get("veto") or {},
                       shipped["accept"])
    totals: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        if r["split"] not in args.splits or (args.lang and r["lang"] != args.lang):
            continue
        found, _ = extract([r["text"]], classifier=lookup)
        kinds = {c.kind for c in found}
        t = totals.setdefault((r["split"], r["lang"]), [0, 0, 0, 0])
        if r["kind"]:
            t[0] += 1
            ok = r["kind"] in kinds
            t[1] += ok
            label = f"MISS {r['kind']}"
        else:
            t[2] += 1
            ok = not found or (r["negative"] == "third" and kinds <= {"fact"})
            t[3] += not ok
            label = f"FP {r['negative']}"
        if ok:
            continue
        print(f"{r['split']} {r['lang']} {label}: {r['text']}")
        print(f"    found: {[f'{c.kind}/{c.via}' for c in found]}")
        for part in clauses(r["text"]):
            opened = gt.opened(part)
            p = oof.get(opened) if opened else None
            probs = (" ".join(f"{lab[:4]}={v:.2f}" for lab, v in zip(gt.LABELS, p, strict=True))
                     if p is not None else "-")
            lang = "ja" if has_japanese(part) else "en"
            print(f"    [{'open' if opened else 'shut'}] {part!r} {probs}"
                  + (f" (thr {shipped['threshold'][lang]})" if opened else ""))
    for (split, lang), (pos, hits, neg, fps) in sorted(totals.items()):
        print(f"{split} {lang}: recall {hits}/{pos}, false positives {fps}/{neg}")


if __name__ == "__main__":
    main()
