"""``remember``, ``update``, ``forget``, ``restore``: one memory at a time."""

from __future__ import annotations

import argparse

from omoide.cli.context import Context
from omoide.engine.memory import KINDS, Memory
from omoide.engine.supersede import held_links
from omoide.errors import OmoideError


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("remember", parents=[common],
                       help="store one memory for a character")
    p.add_argument("character", help="character id")
    p.add_argument("text", help="the memory text")
    p.add_argument("--kind", default="fact", choices=KINDS, help="kind (default: fact)")
    p.add_argument("--importance", type=float, default=0.5, help="0..1 (default: 0.5)")
    p.add_argument("--key", default=None,
                   help="optional slot, e.g. favorite_drink: replaces the memory holding it "
                        "(kept in the trash, restorable)")
    p.add_argument("--context", default=None,
                   help="words indexed with the memory but never shown (e.g. the turns "
                        "around it and their date)")
    p.add_argument("--conversation", default=None,
                   help="id of the conversation the memory comes from: memories a few turns "
                        "apart share evidence at recall; without --turn it takes the next turn")
    p.add_argument("--turn", type=int, default=None,
                   help="its place in the conversation (0, 1, ...; needs --conversation)")
    p.set_defaults(handler=remember)

    p = sub.add_parser("update", parents=[common],
                       help="change a memory's text, kind, importance or key")
    p.add_argument("character")
    p.add_argument("id", help="memory id")
    p.add_argument("--text", default=None, help="new text (embedded again)")
    p.add_argument("--kind", default=None, choices=KINDS)
    p.add_argument("--importance", type=float, default=None, help="0..1")
    p.add_argument("--key", default=None, help="slot, e.g. favorite_drink ('' removes it)")
    p.set_defaults(handler=update)

    p = sub.add_parser("forget", parents=[common],
                       help="move a memory to the trash (restorable)")
    p.add_argument("character")
    p.add_argument("id", help="memory id")
    p.set_defaults(handler=forget)

    p = sub.add_parser("restore", parents=[common],
                       help="bring a trashed memory back")
    p.add_argument("character")
    p.add_argument("id", help="memory id")
    p.set_defaults(handler=restore)


def describe(memory: Memory) -> str:
    key = f" key={memory.key}" if memory.key else ""
    place = (f" conversation={memory.conversation} turn={memory.turn}"
             if memory.conversation is not None else "")
    return f"{memory.id}  {memory.kind}{key}{place}  {memory.text}"


def remember(ctx: Context) -> int:
    a = ctx.args
    memory = ctx.workspace.engine.remember(a.character, a.text, kind=a.kind,
                                           importance=a.importance, key=a.key,
                                           context=a.context, conversation=a.conversation,
                                           turn=a.turn)
    if ctx.json:
        ctx.emit(memory.to_dict())
    else:
        ctx.out(f"remembered {describe(memory)}")
        for old_id in held_links(memory.meta):
            ctx.out(f"superseded {old_id} (same key; in the trash, restore it with: "
                    f"python -m omoide restore {a.character} {old_id})")
    return 0


def update(ctx: Context) -> int:
    a = ctx.args
    engine = ctx.workspace.engine
    engine.existing_store(a.character)
    fields = {name: getattr(a, name) for name in ("text", "kind", "importance")
              if getattr(a, name) is not None}
    if a.key is not None:
        fields["key"] = a.key or None
    if not fields:
        raise OmoideError.of("INVALID_ARGUMENT", name="update",
                             reason="give --text, --kind, --importance or --key")
    memory = engine.update(a.character, a.id, **fields)
    if ctx.json:
        ctx.emit(memory.to_dict())
    else:
        ctx.out(f"updated {describe(memory)}")
    return 0


def forget(ctx: Context) -> int:
    engine = ctx.workspace.engine
    engine.existing_store(ctx.args.character)
    entry = engine.forget(ctx.args.character, ctx.args.id)
    if ctx.json:
        ctx.emit({"memory": entry.memory.to_dict(), "trashed_at": entry.trashed_at})
    else:
        ctx.out(f"forgot {describe(entry.memory)}")
        ctx.out(f"(restore it with: python -m omoide restore {ctx.args.character} "
                f"{entry.memory.id})")
    return 0


def restore(ctx: Context) -> int:
    engine = ctx.workspace.engine
    engine.existing_store(ctx.args.character)
    memory = engine.restore(ctx.args.character, ctx.args.id)
    if ctx.json:
        ctx.emit(memory.to_dict())
    else:
        ctx.out(f"restored {describe(memory)}")
    return 0
