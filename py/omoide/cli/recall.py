"""``recall``: the memories of a character most relevant to a query."""

from __future__ import annotations

import argparse

from omoide.cli.context import Context
from omoide.engine.memory import KINDS


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("recall", parents=[common],
                       help="find the memories most relevant to a query")
    p.add_argument("character")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="how many hits (default: 10)")
    p.add_argument("--mode", default="hybrid", choices=("hybrid", "vector", "fulltext"))
    p.add_argument("--kind", action="append", choices=KINDS, dest="kinds",
                   help="only this kind (repeatable)")
    p.add_argument("--threshold", type=float, default=None,
                   help="minimum cosine (vector, hybrid) or BM25 score (fulltext)")
    p.add_argument("--min-relevance", type=float, default=None, dest="min_relevance",
                   help="return nothing unless a hit reaches this relevance in [0, 1] "
                        "(default: the engine's cut-off; 0 shows every hit)")
    p.set_defaults(handler=recall)


def recall(ctx: Context) -> int:
    a = ctx.args
    ws = ctx.existing_workspace
    ws.engine.existing_store(a.character)
    args = {"k": a.k, "mode": a.mode, "kinds": a.kinds, "threshold": a.threshold,
            "min_relevance": a.min_relevance}
    if a.mode == "fulltext":  # no vector: nothing to compare with the trash
        hits, revived = ws.engine.recall(a.character, a.query, **args), []
    else:
        result = ws.governor.recall(a.character, a.query, **args)
        hits, revived = result.hits, result.revived
    if ctx.json:
        ctx.emit({
            "character": a.character, "query": a.query, "mode": a.mode, "revived": revived,
            "hits": [{"rank": rank, "id": h.memory.id, "score": h.score, "kind": h.memory.kind,
                      "text": h.memory.text} | h.to_dict() | {"revived": h.memory.id in revived}
                     for rank, h in enumerate(hits, 1)],
        })
        return 0
    for memory_id in revived:
        ctx.note(f"revived {memory_id} from the trash (it matched almost exactly)")
    if not hits:
        ctx.out("no good match: no memory is clearly related to this query")
    for rank, h in enumerate(hits, 1):
        ctx.out(f"{rank:>3}  {h.score:.4f}  {h.memory.id}  {h.memory.kind:<10}  "
                f"{h.relevance:4.0%}  {h.memory.text}")
    return 0
