"""``export`` and ``import``: the web app's maintenance-tab JSON (``omoide.engine.exchange``).

Import checks the whole file first (``exchange.check_import``: format, every record through
the one record schema, every reused vector), so a bad file changes nothing; ids already in the
workspace are skipped, so running an interrupted import again finishes it. Display names go
to the workspace's ``characters`` table (a name already there is kept).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from omoide import json_input
from omoide.cli.context import Context, read_input, write_output
from omoide.cli.progress import ProgressEmbedder, WriteCounter
from omoide.engine import exchange
from omoide.errors import OmoideError


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common],
                       help="write memories as JSON (the web app's export format)")
    p.add_argument("file", help="output file; - writes to standard output")
    p.add_argument("--character", action="append", dest="characters",
                   help="only this character (repeatable; default: all)")
    p.add_argument("--with-vectors", action="store_true",
                   help="include the vectors (an import with the same model skips embedding)")
    p.set_defaults(handler=export)

    p = sub.add_parser("import", parents=[common],
                       help="read an export (from the web app or the CLI)")
    p.add_argument("file", help="export JSON; - reads standard input")
    p.set_defaults(handler=import_)


def export(ctx: Context) -> int:
    a = ctx.args
    engine = ctx.existing_workspace.engine
    data = exchange.export_data(engine, a.characters, with_vectors=a.with_vectors,
                                names=ctx.workspace.backend.character_names())
    text = json.dumps(data, ensure_ascii=False, allow_nan=False,
                      indent=1 if not a.with_vectors else None)
    counts = {"characters": len(data["characters"]),
              "memories": sum(len(c["memories"]) for c in data["characters"]),
              "trashed": sum(len(c["trash"]) for c in data["characters"])}
    exported = {c["id"] for c in data["characters"]}
    left_out = sorted(q["id"] for q in engine.quarantine.values()
                      if q["character_id"] in exported or not a.characters)
    if left_out:  # an export taken as a full backup: it must say what it does not hold
        ctx.note(f"{len(left_out)} invalid stored record(s) left out of the export "
                 f"(kept in the workspace untouched): see audit")
    if not write_output(ctx, a.file, text):
        return 0
    if ctx.json:
        ctx.emit({"file": a.file, **counts, "with_vectors": a.with_vectors,
                  "invalid": left_out})
    else:
        ctx.out(f"exported {counts['memories']} memories ({counts['trashed']} trashed) of "
                f"{counts['characters']} characters to {a.file}")
    return 0


def parse_export(text: str, path: str) -> Any:
    try:
        return json_input.loads(text)
    except json.JSONDecodeError as e:
        raise OmoideError.of("MALFORMED_IMPORT", reason=f"{path} is not JSON (line {e.lineno} "
                             f"column {e.colno}: {e.msg})") from None


def import_(ctx: Context) -> int:
    a = ctx.args
    data = parse_export(read_input(a.file), a.file)
    exchange.check_format(data)  # before the workspace is even opened (or created)
    ws = ctx.workspace
    engine = ws.engine

    def one_verb() -> dict[str, Any]:
        """The import as ONE verb: its writes (a replaced version's copy, the new version,
        the retire; the names) commit together and its backup ops are queued before that
        commit, so a kill leaves nothing half done; run again on fresh state if another
        process wrote the workspace meanwhile."""
        plan = exchange.check_import(engine, data)  # the whole file, before any write
        to_embed = plan.to_embed
        total = sum(len(c.records) for c in plan.characters)
        plain = engine.embedder
        with ctx.bar("embedding", total=to_embed, show=to_embed > 0) as embed_bar, \
                ctx.bar("importing", total=total, unit="memory") as write_bar:
            counter = WriteCounter(write_bar)
            engine.embedder = ProgressEmbedder(plain, embed_bar)
            engine.add_listener(counter)
            try:
                report = exchange.import_data(engine, data, plan)
            finally:
                engine.remove_listener(counter)
                engine.embedder = plain
        ws.backend.add_character_names(report["names"])
        return report

    report = engine.run_fresh(one_verb)
    if ctx.json:
        ctx.emit(report)
    else:
        finished = (f", {report['finished']} moved to the trash that an interrupted import "
                    f"had left live" if report.get("finished") else "")
        if report.get("repaired"):
            finished += (f", {report['repaired']} broken characters (lone surrogates) "
                         f"replaced by U+FFFD")
        if report.get("updated"):
            finished += (f", {report['updated']} replaced by the file's newer version (the "
                         f"one here kept as history in the trash)")
        if report.get("superseded"):
            finished += (f", {report['superseded']} older holders of a key kept as history "
                         f"in the trash")
        ctx.out(f"imported {report['imported']} memories ({report['trashed']} to the trash, "
                f"{report['reembedded']} embedded again, {report['skipped']} already present"
                f"{finished}) for {', '.join(report['characters']) or 'no characters'}")
    return 0
