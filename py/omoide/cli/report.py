"""``characters``, ``stats``, ``audit``: read-only views of the workspace."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from omoide.cli.context import Context, model_label

# ``omoide.governance`` re-exports the function ``audit`` under the submodule's name, which
# breaks ``Governor.audit``; call the submodule with the governor's configuration instead.
audit_module = importlib.import_module("omoide.governance.audit")


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("characters", parents=[common],
                       help="list the characters with memories")
    p.set_defaults(handler=characters)

    p = sub.add_parser("stats", parents=[common],
                       help="counts per character (or of one character)")
    p.add_argument("character", nargs="?", default=None)
    p.set_defaults(handler=stats)

    p = sub.add_parser("audit", parents=[common],
                       help="governance report: tiers, duplicates, stale memories")
    p.add_argument("character")
    p.set_defaults(handler=audit)


def characters(ctx: Context) -> int:
    engine = ctx.existing_workspace.engine
    names = ctx.workspace.backend.character_names()  # named by an import, maybe empty
    rows = [engine.stats(c) if c in engine.stores else
            {"character_id": c, "memories": 0, "trashed": 0, "model": None,
             "model_mismatch": False}
            for c in sorted(set(engine.characters()) | set(names))]
    if ctx.json:
        ctx.emit([{"id": r["character_id"], "name": names.get(r["character_id"],
                                                              r["character_id"]),
                   "memories": r["memories"], "trashed": r["trashed"],
                   "model": r["model"], "model_mismatch": r["model_mismatch"]} for r in rows])
        return 0
    if not rows:
        ctx.out("no characters yet")
    for r in rows:
        flag = "  (needs revectorize)" if r["model_mismatch"] else ""
        name = names.get(r["character_id"])
        shown = f"{r['character_id']} ({name})" if name and name != r["character_id"] else \
            r["character_id"]
        ctx.out(f"{shown}  {r['memories']} memories, {r['trashed']} trashed{flag}")
    if engine.quarantine:
        ctx.out(f"{len(engine.quarantine)} invalid stored record(s) quarantined: see audit")
    return 0


def stats(ctx: Context) -> int:
    engine = ctx.existing_workspace.engine
    if ctx.args.character is not None:
        data: Any = engine.stats(ctx.args.character)
    else:
        per = [engine.stats(c) for c in engine.characters()]
        data = {
            "path": str(ctx.path), "model": ctx.model_id, "dtype": ctx.dtype,
            "stamp": engine.embedder.stamp,
            "characters": len(per), "memories": sum(s["memories"] for s in per),
            "trashed": sum(s["trashed"] for s in per),
            "mismatched": engine.mismatched_characters(), "per_character": per,
            "quarantined": sorted(engine.quarantine.values(), key=lambda q: q["id"]),
        }
    if ctx.json:
        ctx.emit(data)
        return 0
    if ctx.args.character is not None:
        show_character(ctx, data)
        return 0
    ctx.out(f"workspace  {data['path']}")
    ctx.out(f"model      {model_label(data['model'], data['dtype'])}  [{data['stamp']}]")
    ctx.out(f"characters {data['characters']}, memories {data['memories']}, "
            f"trashed {data['trashed']}")
    if data["mismatched"]:
        ctx.out(f"on another model (run revectorize): {', '.join(data['mismatched'])}")
    for q in data["quarantined"]:
        ctx.out(f"quarantined (skipped, kept on disk): {q['reason']}")
    for s in data["per_character"]:
        ctx.out("")
        show_character(ctx, s)
    return 0


def show_character(ctx: Context, s: dict[str, Any]) -> None:
    kinds = ", ".join(f"{k} {n}" for k, n in s["by_kind"].items()) or "none"
    ctx.out(f"{s['character_id']}: {s['memories']} memories ({kinds}), {s['trashed']} trashed")
    ctx.out(f"  model {s['model']}" + ("  (differs from the workspace's: run revectorize)"
                                       if s["model_mismatch"] else ""))


def audit(ctx: Context) -> int:
    ws = ctx.existing_workspace
    ws.engine.existing_store(ctx.args.character)
    g = ws.governor
    report = audit_module.audit(ws.engine, ctx.args.character, policy=g.policy,
                                dedup_threshold=g.dedup_threshold, log=g.log)
    data = report.to_dict()
    if ctx.json:
        ctx.emit(data)
        return 0
    ctx.out(f"audit of {data['character']}")
    counts = data["counts"]
    ctx.out("  counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()
                                      if not isinstance(v, dict)))
    for name, value in counts.items():
        if isinstance(value, dict) and value:
            ctx.out(f"    {name}: " + ", ".join(f"{k} {v}" for k, v in value.items()))
    ctx.out(f"  hot context: {data['hot_chars']} of {data['budget_chars']} characters "
            f"({data['hot_state']}), {len(data['hot'])} memories")
    for entry in data["hot"]:
        if not entry["plan"].startswith("keep"):
            ctx.out(f"    {entry['plan']:<8} {entry['id']}  {entry['text']}  ({entry['reason']})")
    if data["cold"]:
        ctx.out(f"  cold: {data['cold'].get('entries')} entries ({data['cold'].get('state')})")
    for title, rows in (("duplicates", data["duplicates"]), ("stale", data["stale"]),
                        ("contradictions", data["contradictions"])):
        ctx.out(f"  {title}: {len(rows)}")
        for row in rows[:20]:
            ctx.out(f"    {summary(row)}")
    ctx.out(f"  superseded (history, restorable): {len(data['superseded'])}")
    for row in data["superseded"][:20]:
        ctx.out(f"    {row['old']['id']}  {row['old']['text']}  -> {row['new']['id']}  "
                f"({row['reason']}; restore: python -m omoide restore {data['character']} "
                f"{row['old']['id']})")
    ctx.out(f"  summarizable episodic memories: {data['summarizable']}")
    if data["model"]:
        ctx.out("  model: " + ", ".join(f"{k} {v}" for k, v in data["model"].items()))
    ctx.out(f"  quarantined stored records (skipped, kept on disk): {len(data['quarantined'])}")
    for q in data["quarantined"][:20]:
        ctx.out(f"    {q['reason']}")
    return 0


def summary(row: dict[str, Any]) -> str:
    parts = []
    for k, v in row.items():
        if isinstance(v, str | int | float) or v is None:
            parts.append(f"{k}={v}")
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            parts.append(f"{k}={','.join(v)}")
    return "  ".join(parts)
