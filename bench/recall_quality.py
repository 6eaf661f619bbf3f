"""Recall quality of ``MemoryEngine`` on LoCoMo and JSQuAD with the real embedding models.

    PYTHONPATH=py:. .venv/bin/python bench/recall_quality.py [--fp32] [--jsquad-limit N]

Protocol (see $OMOIDE_BENCH_DATA/README.md, default ../shared/bench-data):

- LoCoMo: every turn of one conversation is a memory of one character, text
  ``"{speaker}: {text}"``, time = its session's date; the questions of categories 1-4 are the
  queries. any@k = share of questions with at least one evidence turn in the top k, all@k =
  share with every evidence turn in the top k.
- JSQuAD: every paragraph ``context`` is a memory of one character; every question is a query;
  hit@k = share of questions whose paragraph is in the top k.

Modes: vector, fulltext (BM25), hybrid with each fusion (adaptive, zscore, rrf). Everything
goes through the public API (``remember_many``, ``recall(..., touch=False)``); embeddings are
computed once per model and cached under ``.cache/bench/``, and served to the engine by
``PrecomputedEmbedder``.

LoCoMo text variants (``--variants``); the stored memory text is always the protocol's
``"{speaker}: {text}"``, only what is embedded / indexed changes:

- ``plain``: embedded and BM25-indexed text = the memory text (the protocol as written).
- ``speaker``: speaker-aware embedding, ``"{speaker} said to {listener}: {text}"`` (names who
  "I" and "you" are); BM25 on the memory text.
- ``context``: neighbour context, the embedded text of turn i is the session date and turns
  i-1, i, i+1 of the same session, one per line; BM25 on the memory text.
- ``context-fulltext``: the same contextual text is also what BM25 indexes (through the
  engine's ``analyzer`` hook; queries are analyzed as usual).
- ``context-blend``: the vector is the normalized mean of the turn's own vector and its
  contextual vector; BM25 indexes the turn text followed by the contextual text (so the
  turn's own words count twice). The turn keeps its identity, its neighbours add recall.
- ``engine-context``: the engine's own feature, through the public API: each turn is
  remembered with ``context`` = the session date and turns i-1 and i+1; the engine embeds
  the normalized blend of text and context and indexes them as two BM25F fields (until
  session 7: the text twice + the context, one field).
- ``engine-context-preceding``: the same with the preceding turn only (what a turn added one
  at a time can have without re-indexing it when its successor arrives).
- ``ingest-context``: what conversation ingest does (``omoide.engine.context.turn_context``,
  the one rule every ingest path uses): ``context`` = the session date and turns i-1, i, i+1
  (the turn itself included), the session being the ingested batch; each turn also records
  the session as its ``conversation`` (the engine numbers the turns in order), so recall's
  neighbourhood evidence applies (``omoide.engine.neighbourhood``).
- ``ingest-context-preceding``: the same rule when each turn arrives alone after the earlier
  ones (its window ends at the turn; it is not re-indexed when its successor arrives).

Relevance cut-off (``cutoff`` rows, default recall = hybrid with the model's default fusion):
every question and each of the 200 unrelated queries of ``bench/data/unrelated_queries.json``
(100 EN, 100 JA) is asked of every character with the engine's default ``min_relevance``.
``reject`` = share of unrelated queries that return nothing; ``keep`` = share of the questions
whose first evidence is in the top 10 (no cut-off) that still return it with the cut-off.

Time: ranking rows ask with ``now`` = the day after the conversation's last session (LoCoMo)
and time-awareness on (the default); the ``time`` rows compare the LoCoMo temporal category
with it off and on (hybrid, the model's default fusion).

Ties: memory ids are ULIDs with random bits, and every ranking breaks score ties by id. For
reproducible numbers the benchmark draws those bits from a generator seeded afresh for each
corpus (``--seed``); the engine itself is unchanged.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.common import (
    MODELS,
    CachedModel,
    PrecomputedEmbedder,
    bench_data_dir,
    machine_info,
    md_table,
    write_results,
)
from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.context import turn_context, turn_line
from omoide.engine.validate import MAX_TEXT_LENGTH

KS = (1, 5, 10)
MODES = (  # (label, mode, fusion)
    ("vector", "vector", None),
    ("fulltext", "fulltext", None),
    ("hybrid adaptive", "hybrid", "adaptive"),
    ("hybrid zscore", "hybrid", "zscore"),
    ("hybrid rrf", "hybrid", "rrf"),
)
VARIANTS = ("plain", "speaker", "context", "context-fulltext", "context-blend", "engine-context",
            "engine-context-preceding", "ingest-context", "ingest-context-preceding")
CONTEXT_LIMIT = MAX_TEXT_LENGTH  # the engine's default text limit
SEED = 0  # set by --seed
ENGINE_OPTIONS: dict = {}  # set by --engine-option (probes; the published rows use defaults)
SELECTED_MODES: set[str] = set()  # set by --modes (empty: every mode)
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass
class Doc:
    label: str  # dia_id or paragraph number: what the gold labels refer to
    text: str  # the memory text (what recall shows)
    embed_text: str | tuple[str, ...]  # the vector is the normalized mean of their vectors
    index_text: str  # what BM25 indexes
    at: float
    context: str | None = None  # engine-context: the memory's index context
    conversation: str | None = None  # ingest-context: the batch it came in (turns in order)

@dataclass
class Query:
    text: str
    gold: frozenset[str]
    category: int | None = None


@dataclass
class Corpus:
    character: str
    kind: str
    docs: list[Doc] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    now: float | None = None  # when the questions are asked (None: the engine's clock)


UNRELATED = Path(__file__).resolve().parent / "data" / "unrelated_queries.json"


def unrelated_queries() -> list[str]:
    data = json.loads(UNRELATED.read_text())
    return data["en"] + data["ja"]


# -- datasets ------------------------------------------------------------------------------


def parse_locomo_date(value: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` -> aware datetime (UTC: the data has no zone)."""
    clean = re.sub(r"\s+", " ", value.strip())
    parsed = dt.datetime.strptime(clean, "%I:%M %p on %d %B, %Y")
    return parsed.replace(tzinfo=dt.UTC)


def evidence_ids(evidence: list[str]) -> frozenset[str]:
    """Evidence entries are dia_ids; a few hold several (``"D8:6; D9:17"``)."""
    return frozenset(p.strip() for e in evidence for p in re.split(r"[;,]", e) if p.strip())


def load_locomo(variant: str) -> list[Corpus]:
    corpora = []
    for path in sorted((bench_data_dir() / "locomo").glob("*.json")):
        conv = json.loads(path.read_text())
        speakers = (conv["speaker_a"], conv["speaker_b"])
        corpus = Corpus(character=path.stem, kind="diary")
        numbers = sorted(int(m.group(1)) for k in conv
                         if (m := re.fullmatch(r"session_(\d+)", k)))
        for n in numbers:
            turns = conv[f"session_{n}"]
            when = parse_locomo_date(conv[f"session_{n}_date_time"])
            date = f"{when.day} {when:%B %Y}"
            lines = [f"{t['speaker']}: {t['text']}" for t in turns]
            context_lines = [turn_line(t["speaker"], t["text"]) for t in turns]
            for i, turn in enumerate(turns):
                text = lines[i]
                embed_text = index_text = text
                if variant == "speaker":
                    listener = speakers[1] if turn["speaker"] == speakers[0] else speakers[0]
                    embed_text = f"{turn['speaker']} said to {listener}: {turn['text']}"
                elif variant.startswith("ingest-context"):  # the rule of conversation ingest
                    batch = (context_lines[: i + 1] if variant.endswith("preceding")
                             else context_lines)
                    context = turn_context(batch, i, when.timestamp(), limit=CONTEXT_LIMIT)
                    corpus.docs.append(Doc(turn["dia_id"], text, text, text, when.timestamp(),
                                           context, f"session {n}"))
                    continue
                elif variant.startswith("engine-context"):  # the engine's own context feature
                    around = (i - 1,) if variant.endswith("preceding") else (i - 1, i + 1)
                    neighbours = [lines[j] for j in around if 0 <= j < len(lines)]
                    context = "\n".join([f"On {date}:", *neighbours])
                    corpus.docs.append(Doc(turn["dia_id"], text, text, text, when.timestamp(),
                                           context))
                    continue
                elif variant.startswith("context"):
                    window = lines[max(i - 1, 0) : i + 2]
                    embed_text = "\n".join([f"On {date}:", *window])
                    if variant == "context-fulltext":
                        index_text = embed_text
                    elif variant == "context-blend":
                        index_text = f"{text}\n{embed_text}"
                        embed_text = (text, embed_text)
                corpus.docs.append(Doc(turn["dia_id"], text, embed_text, index_text,
                                       when.timestamp()))
        corpus.now = max(d.at for d in corpus.docs) + 86400.0
        for qa in conv["qa"]:
            if qa.get("category") in LOCOMO_CATEGORIES:
                corpus.queries.append(Query(qa["question"], evidence_ids(qa["evidence"]),
                                            qa["category"]))
        corpora.append(corpus)
    return corpora


def load_jsquad(limit: int) -> list[Corpus]:
    path = bench_data_dir() / "jsquad" / "jsquad-v1.3-test.json"
    data = json.loads(path.read_text())["data"]
    paragraphs = [p for article in data for p in article["paragraphs"]]
    if limit:
        paragraphs = paragraphs[:limit]
    corpus = Corpus(character="jsquad", kind="fact")
    for number, paragraph in enumerate(paragraphs):
        label = str(number)
        text = paragraph["context"]
        corpus.docs.append(Doc(label, text, text, text, 0.0))
        for qa in paragraph["qas"]:
            corpus.queries.append(Query(qa["question"], frozenset({label})))
    return [corpus]


# -- running -------------------------------------------------------------------------------


def mapped_analyzer(docs: list[Doc]) -> tuple[Callable[[str], list[str]], int]:
    """An analyzer that indexes a memory's ``index_text`` instead of its text (queries and
    unknown texts are analyzed as they are). Returns it and the number of memory texts that
    occur with two different index texts (the first one wins for those)."""
    mapping: dict[str, str] = {}
    collisions = 0
    for doc in docs:
        if mapping.setdefault(doc.text, doc.index_text) != doc.index_text:
            collisions += 1

    def analyzer(text: str) -> list[str]:
        return analyze(mapping.get(text, text))

    return analyzer, collisions


def build_engine(model: CachedModel, corpus: Corpus, vectors: np.ndarray,
                 query_vectors: np.ndarray,
                 unrelated: tuple[list[str], np.ndarray] | None = None,
                 ) -> tuple[MemoryEngine, dict[str, str], int]:
    embedder = PrecomputedEmbedder(model.model_id, model.dtype, model.dimension, model.stamp)
    embedder.add_queries([q.text for q in corpus.queries], query_vectors)
    if unrelated is not None:
        embedder.add_queries(*unrelated)
    collisions = 0
    kwargs = {}
    if any(d.index_text != d.text for d in corpus.docs):
        kwargs["analyzer"], collisions = mapped_analyzer(corpus.docs)
    engine = MemoryEngine(embedder, **kwargs, **ENGINE_OPTIONS)
    seeded_memory_ids(SEED)  # the same ids for the same corpus, whatever ran before
    embedder.stage(vectors)
    memories = engine.remember_many(
        corpus.character,
        [{"text": d.text, "at": d.at, "kind": corpus.kind, "meta": {"label": d.label}}
         | ({"context": d.context} if d.context else {})
         | ({"conversation": d.conversation} if d.conversation else {})
         for d in corpus.docs],
    )
    labels = {m.id: d.label for m, d in zip(memories, corpus.docs, strict=True)}
    return engine, labels, collisions


def run_mode(engine: MemoryEngine, labels: dict[str, str], corpus: Corpus, mode: str,
             fusion: str | None, *, min_relevance: float | None = 0.0,
             use_time: bool = True) -> tuple[list[list[str]], float]:
    """Rankings of every question (no cut-off unless ``min_relevance`` says otherwise)."""
    ranked = []
    start = time.perf_counter()
    for query in corpus.queries:
        hits = engine.recall(corpus.character, query.text, k=max(KS), mode=mode,
                             fusion=fusion, touch=False, min_relevance=min_relevance,
                             now=corpus.now, use_time=use_time)
        ranked.append([labels[h.memory.id] for h in hits])
    return ranked, time.perf_counter() - start


def cutoff_row(dataset: str, model: CachedModel, variant: str, engines: list,
               unrelated: list[str]) -> dict:
    """The default cut-off on each character: unrelated queries rejected, evidence kept."""
    per_character = {}
    for engine, labels, corpus in engines:
        full, _ = run_mode(engine, labels, corpus, "hybrid", None, min_relevance=0.0)
        cut, _ = run_mode(engine, labels, corpus, "hybrid", None, min_relevance=None)
        found = [(q, c) for q, f, c in zip(corpus.queries, full, cut, strict=True)
                 if q.gold & set(f)]
        kept = sum(bool(q.gold & set(c)) for q, c in found)
        rejected = sum(not engine.recall(corpus.character, text, touch=False, now=corpus.now)
                       for text in unrelated)
        per_character[corpus.character] = {
            "questions_with_evidence_in_top10": len(found), "kept": kept,
            "keep": kept / max(len(found), 1), "unrelated": len(unrelated),
            "rejected": rejected, "reject": rejected / len(unrelated)}
    return {"dataset": dataset, "model": model.name, "model_stamp": model.stamp,
            "variant": variant, "kind": "cutoff", "characters": per_character}


def time_row(model: CachedModel, variant: str, engines: list) -> dict:
    """LoCoMo temporal questions (category 2), hybrid default: time-awareness off vs on."""
    out = {"dataset": "locomo", "model": model.name, "variant": variant, "kind": "time"}
    for use_time in (False, True):
        queries, ranked = [], []
        for engine, labels, corpus in engines:
            r, _ = run_mode(engine, labels, corpus, "hybrid", None, use_time=use_time)
            queries += corpus.queries
            ranked += r
        for category in (2, None):
            pairs = [(q, r) for q, r in zip(queries, ranked, strict=True)
                     if category is None or q.category == category]
            qs, rs = zip(*pairs, strict=True)
            key = f"{'temporal' if category else 'all'}_{'time' if use_time else 'no_time'}"
            out[key] = score(list(qs), list(rs))
    return out


def score(queries: list[Query], ranked: list[list[str]]) -> dict[str, float]:
    n = len(queries)
    out = {}
    for k in KS:
        out[f"any@{k}"] = sum(bool(q.gold & set(r[:k])) for q, r in zip(queries, ranked,
                                                                        strict=True)) / n
        out[f"all@{k}"] = sum(q.gold <= set(r[:k]) for q, r in zip(queries, ranked,
                                                                   strict=True)) / n
    return out


def by_category(queries: list[Query], ranked: list[list[str]]) -> dict[str, dict]:
    out = {}
    for category, name in LOCOMO_CATEGORIES.items():
        pairs = [(q, r) for q, r in zip(queries, ranked, strict=True) if q.category == category]
        if pairs:
            qs, rs = zip(*pairs, strict=True)
            metrics = score(list(qs), list(rs))
            out[name] = {"questions": len(pairs), "any@10": metrics["any@10"],
                         "all@10": metrics["all@10"]}
    return out


def passage_vectors(model: CachedModel, docs: list[Doc]) -> np.ndarray:
    """One vector per doc: the normalized mean of the vectors of its embedded texts."""
    parts = [d.embed_text if isinstance(d.embed_text, tuple) else (d.embed_text,) for d in docs]
    width = max(len(p) for p in parts)
    total = np.zeros((len(docs), model.dimension), dtype=np.float32)
    for j in range(width):
        rows = [i for i, p in enumerate(parts) if len(p) > j]
        total[rows] += model.embed("passages", [parts[i][j] for i in rows])
    return total / np.maximum(np.linalg.norm(total, axis=1, keepdims=True), 1e-12)


def seeded_memory_ids(seed: int) -> None:
    """Reproducible tie-breaking: the ULIDs' 80 random bits come from a seeded generator."""
    import random

    from omoide.engine import remember as remember_module
    from omoide.engine.memory import _CROCKFORD

    rng = random.Random(seed)

    def new_memory_id(at_seconds: float) -> str:
        value = (int(at_seconds * 1000) & ((1 << 48) - 1)) << 80 | rng.getrandbits(80)
        return "".join(_CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))

    remember_module.new_memory_id = new_memory_id


def evaluate(model: CachedModel, dataset: str, variant: str, corpora: list[Corpus],
             fulltext_memo: dict, log: Callable[[str], None]) -> list[dict]:
    if variant.startswith(("engine-context", "ingest-context")):
        # raw rows: every text, then every context (the engine blends them itself, in
        # remember_many's one embedding call per corpus)
        passages = None
        raw = {id(c): np.vstack([model.embed("passages", [d.text for d in c.docs]),
                                 model.embed("passages", [d.context for d in c.docs])])
               for c in corpora}
    else:
        passages = passage_vectors(model, [d for c in corpora for d in c.docs])
    queries = model.embed("queries", [q.text for c in corpora for q in c.queries])
    unrelated = unrelated_queries()
    unrelated_vectors = model.embed("queries", unrelated)
    engines = []
    p_at = q_at = 0
    collisions = 0
    for corpus in corpora:
        n_d, n_q = len(corpus.docs), len(corpus.queries)
        rows = raw[id(corpus)] if passages is None else passages[p_at : p_at + n_d]
        engine, labels, clash = build_engine(model, corpus, rows,
                                             queries[q_at : q_at + n_q],
                                             (unrelated, unrelated_vectors))
        engines.append((engine, labels, corpus))
        collisions += clash
        p_at, q_at = p_at + n_d, q_at + n_q
    all_queries = [q for c in corpora for q in c.queries]
    index_kind = {"context-fulltext": "context", "context-blend": "turn+context",
                  "engine-context": "engine context",
                  "engine-context-preceding": "engine context (preceding)",
                  "ingest-context": "ingest context",
                  "ingest-context-preceding": "ingest context (preceding)"}.get(
        variant, "turn")
    rows = []
    for label, mode, fusion in MODES:
        if SELECTED_MODES and label not in SELECTED_MODES:
            continue
        memo_key = (dataset, index_kind)
        if mode == "fulltext" and memo_key in fulltext_memo:
            ranked, seconds = fulltext_memo[memo_key]  # BM25 does not depend on the model
        else:
            ranked, seconds = [], 0.0
            for engine, labels, corpus in engines:
                r, s = run_mode(engine, labels, corpus, mode, fusion)
                ranked += r
                seconds += s
            if mode == "fulltext":
                fulltext_memo[memo_key] = (ranked, seconds)
        metrics = score(all_queries, ranked)
        row = {
            "dataset": dataset, "model": model.name, "model_stamp": model.stamp,
            "variant": variant, "mode": mode, "fusion": fusion, "label": label,
            "questions": len(all_queries), "memories": sum(len(c.docs) for c in corpora),
            "metrics": metrics,
            "recall_ms_mean": 1000.0 * seconds / max(len(all_queries), 1),
        }
        if dataset == "locomo":
            row["by_category"] = by_category(all_queries, ranked)
            row["bm25_index_collisions"] = collisions
        rows.append(row)
        shown = "  ".join(f"{k}={v:.3f}" for k, v in metrics.items()
                          if dataset == "locomo" or k.startswith("any"))
        log(f"{dataset:7} {model.name:11} {variant:16} {label:16} {shown}")
    row = cutoff_row(dataset, model, variant, engines, unrelated)
    rows.append(row)
    for character, c in row["characters"].items():
        log(f"{dataset:7} {model.name:11} {variant:16} cut-off {character:9} "
            f"keep {c['kept']}/{c['questions_with_evidence_in_top10']} = {c['keep']:.3f}  "
            f"reject {c['rejected']}/{c['unrelated']} = {c['reject']:.3f}")
    if dataset == "locomo":
        row = time_row(model, variant, engines)
        rows.append(row)
        log(f"locomo  {model.name:11} {variant:16} temporal any@10 no time "
            f"{row['temporal_no_time']['any@10']:.3f} -> time {row['temporal_time']['any@10']:.3f}"
            f"; all questions {row['all_no_time']['any@10']:.3f} -> "
            f"{row['all_time']['any@10']:.3f}")
    return rows


# -- report --------------------------------------------------------------------------------


def markdown(payload: dict) -> str:
    rows = payload["results"]
    meta = payload["meta"]
    defaults = {name: p.default for name, p in inspect.signature(MemoryEngine).parameters.items()
                if name.startswith("bm25_") and isinstance(p.default, float)}
    bm25 = ", ".join(f"{name.removeprefix('bm25_')} {value}" for name, value in
                     (defaults | payload.get("engine_options", {})).items())
    probe = (f" **Probe, not the defaults**: {payload['engine_options']}."
             if payload.get("engine_options") else "")
    out = ["# Recall quality (bench/recall_quality.py)\n\n",
           f"{meta['date']}, {meta['cpu']} ({meta['cpus']} CPUs), git {meta['git_commit']}, "
           f"load average {meta['load_average_at_start']} at start, "
           f"{meta.get('load_average_at_end')} at end. BM25F {bm25}; hybrid candidate depth "
           f"50, rrf_k 60.{probe}\n"]
    ranked_rows = [r for r in rows if "metrics" in r]
    locomo = [r for r in ranked_rows if r["dataset"] == "locomo"]
    if locomo:
        n = locomo[0]["questions"]
        out.append(f"\n## LoCoMo: {locomo[0]['memories']} turns in 3 conversations, "
                   f"{n} questions (categories 1-4)\n\n")
        header = ["model", "variant", "mode", *(f"any@{k}" for k in KS),
                  *(f"all@{k}" for k in KS), "ms/query"]
        table = [[r["model"], r["variant"], r["label"],
                  *(r["metrics"][f"any@{k}"] for k in KS),
                  *(r["metrics"][f"all@{k}"] for k in KS), f"{r['recall_ms_mean']:.1f}"]
                 for r in locomo]
        out.append(md_table(header, table))
        out.append("\nany@10 by question category (hybrid adaptive):\n\n")
        cats = list(LOCOMO_CATEGORIES.values())
        table = [[r["model"], r["variant"],
                  *(f"{r['by_category'][c]['any@10']:.3f}" for c in cats)]
                 for r in locomo if r["fusion"] == "adaptive"]
        counts = locomo[0]["by_category"]
        out.append(md_table(["model", "variant", *(f"{c} ({counts[c]['questions']})"
                                                  for c in cats)], table))
    jsquad = [r for r in ranked_rows if r["dataset"] == "jsquad"]
    if jsquad:
        out.append(f"\n## JSQuAD: {jsquad[0]['memories']} paragraphs, "
                   f"{jsquad[0]['questions']} questions ({payload['jsquad_subset']})\n\n")
        header = ["model", "mode", *(f"hit@{k}" for k in KS), "ms/query"]
        table = [[r["model"], r["label"], *(r["metrics"][f"any@{k}"] for k in KS),
                  f"{r['recall_ms_mean']:.1f}"] for r in jsquad]
        out.append(md_table(header, table))
    cutoffs = [r for r in rows if r.get("kind") == "cutoff"]
    if cutoffs:
        out.append("\n## Relevance cut-off (default recall, default min_relevance)\n\n"
                   "keep = questions whose first evidence is in the top 10 that still return "
                   "it; reject = unrelated queries (200, EN + JA) that return nothing.\n\n")
        out.append(md_table(
            ["dataset", "model", "variant", "character", "keep", "reject"],
            [[r["dataset"], r["model"], r["variant"], name,
              f"{c['keep']:.3f} ({c['kept']}/{c['questions_with_evidence_in_top10']})",
              f"{c['reject']:.3f} ({c['rejected']}/{c['unrelated']})"]
             for r in cutoffs for name, c in r["characters"].items()]))
    times = [r for r in rows if r.get("kind") == "time"]
    if times:
        out.append("\n## Time-aware recall (LoCoMo, hybrid, the model's default fusion)\n\n")
        out.append(md_table(
            ["model", "variant", "temporal any@10 off", "on", "temporal all@10 off", "on",
             "all any@10 off", "on"],
            [[r["model"], r["variant"], r["temporal_no_time"]["any@10"],
              r["temporal_time"]["any@10"], r["temporal_no_time"]["all@10"],
              r["temporal_time"]["all@10"], r["all_no_time"]["any@10"],
              r["all_time"]["any@10"]] for r in times]))
    out.append("\nEmbedding computed in this run (ONNX Runtime on this CPU; each distinct text "
               "list once per model, the rest served from .cache/bench):\n\n")
    out.append(md_table(
        ["model", "passages", "s", "passages/s", "queries", "s", "cache hits (lists)"],
        [[m, e["embedded"]["passages"], f"{e['seconds']['passages']:.1f}",
          f"{e['embedded']['passages'] / max(e['seconds']['passages'], 1e-9):.0f}"
          if e["embedded"]["passages"] else "-",
          e["embedded"]["queries"], f"{e['seconds']['queries']:.1f}", e["cache_hits"]]
         for m, e in payload["embedding"].items()]))
    return "".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["e5-q8", "minilm-q8"],
                        choices=sorted(MODELS))
    parser.add_argument("--fp32", action="store_true", help="also run the fp32 models")
    parser.add_argument("--datasets", nargs="+", default=["locomo", "jsquad"],
                        choices=["locomo", "jsquad"])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS,
                        help="LoCoMo text variants (JSQuAD is always plain)")
    parser.add_argument("--jsquad-limit", type=int, default=0,
                        help="only the first N paragraphs (and their questions); 0 = all")
    parser.add_argument("--threads", type=int, default=None, help="ONNX Runtime threads")
    parser.add_argument("--name", default="recall_quality", help="results file name")
    parser.add_argument("--seed", type=int, default=0, help="seed of the memory ids' bits")
    parser.add_argument("--modes", nargs="+", default=[], choices=[m[0] for m in MODES],
                        help="only these rows (default: every mode)")
    parser.add_argument("--engine-option", action="append", default=[], metavar="NAME=NUMBER",
                        help="a MemoryEngine keyword for a probe (e.g. bm25_b=0.3); the "
                             "published figures use the defaults")
    args = parser.parse_args(argv)
    global SEED
    SEED = args.seed
    SELECTED_MODES.update(args.modes)
    for option in args.engine_option:
        name, _, value = option.partition("=")
        ENGINE_OPTIONS[name.strip()] = float(value)
    models = list(args.models)
    if args.fp32:
        models += [m.replace("-q8", "-fp32") for m in args.models if m.endswith("-q8")]

    def log(line: str) -> None:
        print(line, flush=True)

    meta = machine_info()
    started = time.perf_counter()
    results: list[dict] = []
    fulltext_memo: dict = {}
    embedding = {}
    for name in dict.fromkeys(models):
        model = CachedModel(name, threads=args.threads)
        if "locomo" in args.datasets:
            for variant in args.variants:
                results += evaluate(model, "locomo", variant, load_locomo(variant),
                                    fulltext_memo, log)
        if "jsquad" in args.datasets:
            results += evaluate(model, "jsquad", "plain", load_jsquad(args.jsquad_limit),
                                fulltext_memo, log)
        embedding[name] = {"stamp": model.stamp, "embedded": model.embedded,
                           "seconds": model.embed_seconds, "cache_hits": model.cache_hits,
                           "cached": model.cached, "cached_seconds": model.cached_seconds}
    meta["wall_seconds"] = round(time.perf_counter() - started, 1)
    meta["load_average_at_end"] = list(os.getloadavg())
    payload = {
        "meta": meta,
        "protocol": "bench-data README: LoCoMo any@k/all@k (categories 1-4), JSQuAD hit@k "
                    "(reported as any@k); k = 1, 5, 10",
        "seed": args.seed,
        "engine_options": ENGINE_OPTIONS,
        "variants": __doc__[__doc__.index("LoCoMo text variants"):__doc__.index("Ties:")],
        "jsquad_subset": (f"first {args.jsquad_limit} paragraphs" if args.jsquad_limit
                          else "full test set"),
        "embedding": embedding,
        "results": results,
    }
    json_path, md_path = write_results(args.name, payload, markdown(payload))
    print(f"wrote {json_path} and {md_path} in {meta['wall_seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
