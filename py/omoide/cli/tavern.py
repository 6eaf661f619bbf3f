"""``import-tavern`` and ``export-worldinfo``: SillyTavern / RisuAI files (``omoide.interop``).

The file is parsed and checked completely before the workspace is opened, so a malformed
file (or one for which no character can be chosen) writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from omoide.cli.context import Context, write_output
from omoide.engine import validate
from omoide.errors import OmoideError
from omoide.interop import apply_plan, export_world_info, parse_file
from omoide.interop.importer import target_character


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("import-tavern", parents=[common],
                       help="import a SillyTavern/RisuAI character card (JSON or PNG), chat "
                            "(.jsonl) or lorebook (World Info JSON)")
    p.add_argument("file", help="the file; - reads standard input")
    p.add_argument("--character", help="character id (default: from the card or chat; "
                                       "required for a lorebook)")
    p.add_argument("--dry-run", action="store_true", help="only show what would be stored")
    p.set_defaults(handler=import_tavern)

    p = sub.add_parser("export-worldinfo", parents=[common],
                       help="write a character's memories as SillyTavern World Info JSON")
    p.add_argument("character")
    p.add_argument("file", help="output file; - writes to standard output")
    p.add_argument("--name", help="the lorebook's name (default: the character id)")
    p.set_defaults(handler=export_worldinfo)


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise OmoideError.of("FILE_UNREADABLE", path=path, reason="no such file") from None
    except OSError as e:
        raise OmoideError.of("FILE_UNREADABLE", path=path, reason=e.strerror or str(e)) from None


def keep_card_name(ctx: Context, character: str, name: object) -> None:
    """The card's display name for a character that has none yet (as the web app keeps
    it); a name the one validator refuses (too long, control characters) is left out."""
    if not isinstance(name, str) or not name.strip():
        return
    try:
        shown = validate.character_name(name.strip())
    except OmoideError:
        return
    ctx.workspace.backend.add_character_names({character: shown})


def import_tavern(ctx: Context) -> int:
    a = ctx.args
    plan = parse_file(read_bytes(a.file), a.file)
    target_character(plan, a.character)  # before the workspace is opened (or created)
    ws = ctx.workspace

    def one_verb() -> dict[str, Any]:
        """The import as ONE verb (as ``import``): the facts, every day of the chat and
        the name commit together, so a failure half way (the model, Ctrl-C) writes nothing."""
        report = apply_plan(ws.governor, plan, character=a.character, dry_run=a.dry_run,
                            names=ws.backend.character_names())
        if not a.dry_run:
            keep_card_name(ctx, report["character"], report.get("name"))
        return report

    report = ws.engine.run_fresh(one_verb)
    if ctx.json:
        ctx.emit(report)
        return 0
    verb = "would store" if a.dry_run else "stored"
    line = (f"{report['format']} -> {report['character']}: {verb} {report['facts']} facts "
            f"({report['facts_skipped']} already held)")
    if report.get("disabled"):
        names = ", ".join(report["disabled_entries"][:5])
        more = ", ..." if report["disabled"] > 5 else ""
        line += (f"; {report['disabled']} disabled lorebook entries left out ({names}{more})")
    if report.get("disabled_trashed"):
        moved = "would move" if a.dry_run else "moved"
        line += (f"; {moved} {len(report['disabled_trashed'])} memories an earlier import made "
                 f"of them to the trash (restorable: {', '.join(report['disabled_trashed'])})")
    if report.get("enabled_again"):
        line += (f"; {len(report['enabled_again'])} lorebook entries switched on again: "
                 f"their memories' disabled mark cleared")
    if report["messages"]:
        line += (f"; {report['messages']} chat messages in {len(report['sessions'])} days: "
                 f"{verb} {report['stored']}, merged {report['merged']}, "
                 f"nothing to keep in {report['skipped']}")
        if report["undated"]:
            line += f" ({report['undated']} without a readable date)"
    if report.get("repaired"):
        line += (f"; {report['repaired']} broken characters (lone surrogates) replaced by "
                 f"U+FFFD")
    ctx.out(line)
    return 0


def export_worldinfo(ctx: Context) -> int:
    a = ctx.args
    data = export_world_info(ctx.existing_workspace.engine, a.character, name=a.name)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if not write_output(ctx, a.file, text):
        return 0
    if ctx.json:
        ctx.emit({"file": a.file, "entries": len(data["entries"])})
    else:
        ctx.out(f"wrote {len(data['entries'])} World Info entries of {a.character} to {a.file}")
    return 0
