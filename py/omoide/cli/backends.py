"""``backends`` (state of the workspace file and the backup server) and ``backup`` (copy
every memory to the backup server). The server is given by the global ``--backup URL``
(``$OMOIDE_BACKUP_URL``) and ``--backup-key`` (``$OMOIDE_BACKUP_KEY``)."""

from __future__ import annotations

import argparse

from omoide.backends.sync import copy_all
from omoide.cli.context import Context
from omoide.errors import OmoideError


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("backends", parents=[common],
                       help="health of the workspace file and the backup server")
    p.add_argument("--drop-waiting", action="store_true",
                   help="drop the changes queued for a backup server not given with "
                        "--backup in this run (one gone for good); every memory stays here")
    p.set_defaults(handler=backends)
    p = sub.add_parser("backup", parents=[common],
                       help="copy every memory (with its vector) to the backup server")
    p.add_argument("--character", default=None, help="only this character")
    p.set_defaults(handler=backup)


def backends(ctx: Context) -> int:
    ws = ctx.workspace
    if ctx.args.drop_waiting:
        if ws.manager is None:
            raise OmoideError.of("BACKEND_CONFIG", reason="--drop-waiting needs the backup "
                                 "server that stays: give --backup URL")
        for name, count in ws.manager.drop_waiting().items():
            ctx.note(f"dropped {count} change(s) queued for {name}")
        for s in ws.manager.status():
            if s["role"] == "waiting":  # another process runs with that server: kept
                ctx.note(f"kept {s['queued']} change(s) queued for {s['name']}: another "
                         f"process on this workspace sends them there")
    if ws.manager is None:
        states = [{"name": ws.backend.name, "role": "primary", **ws.backend.health()}]
    else:
        states = ws.manager.check_health()
    if ctx.json:
        ctx.emit(states)
    for s in [] if ctx.json else states:
        state = {True: "ok", False: "down", None: "unknown"}[s.get("ok")]
        state = "not set" if s["role"] == "waiting" else state  # ops wait for this server
        queued = f"  queued {s['queued']}" if s.get("queued") else ""
        error = f"  ({s['last_error']})" if s.get("last_error") else ""
        if s.get("refused"):  # kept, holding nothing up: `backup` sends them again
            error += f"  refused {s['refused']} ({s['refused_error']})"
        ctx.out(f"{s['role']:<8}  {state:<7}  {s['name']}{queued}{error}")
    return 0 if all(s.get("ok") and not s.get("refused") for s in states) else 2


def backup(ctx: Context) -> int:
    ws = ctx.workspace
    if ws.manager is None:
        raise OmoideError.of("BACKEND_CONFIG", reason="no backup server: give --backup URL "
                             "(or set OMOIDE_BACKUP_URL)")
    target = ws.manager.fallbacks[0]
    with ctx.bar("backup", unit="memory") as bar:
        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        counts = copy_all(ws.backend, target, character_id=ctx.args.character,
                          progress=progress)
    ws.manager.retry()  # the changes the server refused are sent again (still queued)
    if ctx.json:
        ctx.emit(counts | {"target": target.name})
    else:
        erased = (f", {counts['deleted']} forgotten here for good erased"
                  if counts["deleted"] else "")
        ctx.out(f"{counts['created']} created, {counts['updated']} updated{erased} on "
                f"{target.name}")
    if counts["invalid"]:
        ctx.note(f"{len(counts['invalid'])} invalid stored record(s) left out (kept in the "
                 f"workspace untouched): see audit")
    return 0
