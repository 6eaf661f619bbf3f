"""``export`` and ``import``: the web app's maintenance-tab JSON (``omoide.engine.exchange``).

Import checks the whole file first (format, every record, every reused vector), so a bad
file changes nothing; ids already in the workspace are skipped, so running an interrupted
import again finishes it.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from omoide.backends.base import check_record, record_of
from omoide.cli.context import Context, read_input
from omoide.cli.progress import ProgressEmbedder, WriteCounter
from omoide.engine import exchange, validate
from omoide.engine.memory import KIND_TYPES, Memory
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
    engine = ctx.workspace.engine
    for c in a.characters or []:
        engine.existing_store(c)
    data = exchange.export_data(engine, a.characters, with_vectors=a.with_vectors)
    text = json.dumps(data, ensure_ascii=False, indent=1 if not a.with_vectors else None)
    counts = {"characters": len(data["characters"]),
              "memories": sum(len(c["memories"]) for c in data["characters"]),
              "trashed": sum(len(c["trash"]) for c in data["characters"])}
    if a.file == "-":
        ctx.out(text)
        return 0
    path = Path(a.file)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OmoideError.of("FILE_UNWRITABLE", path=a.file, reason=e.strerror or str(e)) from None
    if ctx.json:
        ctx.emit({"file": a.file, **counts, "with_vectors": a.with_vectors})
    else:
        ctx.out(f"exported {counts['memories']} memories ({counts['trashed']} trashed) of "
                f"{counts['characters']} characters to {a.file}")
    return 0


def parse_export(text: str, path: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise OmoideError.of("MALFORMED_IMPORT", reason=f"{path} is not JSON (line {e.lineno} "
                             f"column {e.colno}: {e.msg})") from None


def preflight(ctx: Context, data: Any) -> int:
    """Check everything ``exchange.import_data`` will write; answers the memories to embed."""
    engine = ctx.workspace.engine
    stamp, dimension = engine.embedder.stamp, engine.embedder.dimension

    def bad(reason: str) -> OmoideError:
        return OmoideError.of("MALFORMED_IMPORT", reason=reason)

    to_embed = 0
    seen: set[str] = set()
    owner = {i: s.character_id for s in engine.stores.values()
             for i in (*s.records, *s.trash)}
    for c in exchange.check_import(data):
        try:
            character = validate.character_id(c["id"])
        except OmoideError as e:
            raise bad(str(e).rstrip(".")) from None
        store = engine.stores.get(character)
        if store is not None:
            engine.check_model(store)
        existing = set(store.records) | set(store.trash) if store else set()
        vectors = c.get("vectors")
        reuse = c.get("stamp") == stamp and isinstance(vectors, dict)
        for m in c.get("memories", []):
            if m["id"] in seen:
                raise bad(f"memory id {m['id']!r} appears twice")
            seen.add(m["id"])
            if m["id"] in existing:
                continue
            if m["id"] in owner:
                raise bad(f"memory id {m['id']!r} already belongs to {owner[m['id']]!r}")
            if not m["text"].strip():
                raise bad(f"memory {m['id']!r} of {character!r} has an empty text")
            if m.get("kind", "fact") not in KIND_TYPES:
                raise bad(f"memory {m['id']!r} has an unknown kind {m.get('kind')!r}")
            try:
                memory = Memory.from_dict(m | {"character_id": character, "model": stamp})
                vector = vectors.get(m["id"]) if reuse else None
                check_record(record_of(memory, vector))
            except (TypeError, OmoideError) as e:
                raise bad(f"memory {m['id']!r} of {character!r}: {e}") from None
            if vector is None:
                to_embed += 1
            elif len(vector) != dimension or not all(math.isfinite(x) for x in vector):
                raise bad(f"the vector of {m['id']!r} has {len(vector)} numbers, "
                          f"{dimension} expected")
    return to_embed


def import_(ctx: Context) -> int:
    a = ctx.args
    data = parse_export(read_input(a.file), a.file)
    exchange.check_import(data)  # before the workspace is even opened (or created)
    ws = ctx.workspace
    engine = ws.engine
    to_embed = preflight(ctx, data)
    total = sum(len(c.get("memories", [])) for c in data["characters"])
    plain = engine.embedder
    with ctx.bar("embedding", total=to_embed, show=to_embed > 0) as embed_bar, \
            ctx.bar("importing", total=total, unit="memory") as write_bar:
        counter = WriteCounter(write_bar)
        engine.embedder = ProgressEmbedder(plain, embed_bar)
        engine.add_listener(counter)
        try:
            report = exchange.import_data(engine, data)
        finally:
            engine.remove_listener(counter)
            engine.embedder = plain
    if ctx.json:
        ctx.emit(report)
    else:
        ctx.out(f"imported {report['imported']} memories ({report['reembedded']} embedded "
                f"again, {report['skipped']} already present) for "
                f"{', '.join(report['characters']) or 'no characters'}")
    return 0
