"""Argument parsing and the run loop: global options, one subcommand, errors as messages."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from omoide.cli import backends, exchange, ingest, recall, remember, report, revectorize, tavern
from omoide.cli.context import Context, EmbedderFactory
from omoide.errors import OmoideError
from omoide.workspace import default_path

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

EPILOG = """examples:
  python -m omoide remember alice "Alice loves green tea" --kind preference
  python -m omoide recall alice "what does alice drink" --json
  python -m omoide update alice 01HF7YAT00KY70X8DPQ5G8VVAF --importance 0.9
  python -m omoide ingest alice chat.txt --dry-run
  python -m omoide export backup.json --with-vectors
  python -m omoide --db other.db import backup.json
  python -m omoide import-tavern Seraphina.png
  python -m omoide export-worldinfo seraphina lore.json
  python -m omoide revectorize --model omoide/all-MiniLM-L6-v2 --dtype q8
  python -m omoide --backup http://127.0.0.1:8750 --backup-key-file ~/.omoide-key backup
"""


def add_global_options(parser: argparse.ArgumentParser, suppress: str | None, *,
                       model: bool = True) -> None:
    def default(value: object) -> object:
        return suppress if suppress is not None else value

    parser.add_argument("--db", default=default(None),
                        help=f"workspace file (default: {default_path()})")
    if model:
        parser.add_argument("--model", default=default(None),
                            help="embedding model of a NEW workspace (an existing one keeps "
                                 "its own; switch with revectorize)")
        parser.add_argument("--dtype", default=default(None), help="model weights: fp32 or q8")
    parser.add_argument("--backup", default=default(os.environ.get("OMOIDE_BACKUP_URL")),
                        metavar="URL", help="backup server (python -m omoide.server) that "
                        "mirrors every change; $OMOIDE_BACKUP_URL")
    parser.add_argument("--backup-key", default=default(None), metavar="KEY",
                        help="its bearer key (visible in the process list: prefer "
                        "$OMOIDE_BACKUP_KEY or --backup-key-file)")
    parser.add_argument("--backup-key-file", default=default(None), metavar="PATH",
                        help="a file holding the backup server's key")
    parser.add_argument("--json", action="store_true", default=default(False),
                        help="machine-readable JSON on stdout")
    parser.add_argument("--progress", choices=("auto", "on", "off"), default=default("auto"),
                        help="progress bars on stderr (auto: when stderr is a terminal and "
                             "without --json)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m omoide",
        description="Omoide: local long-term memory for characters, in a SQLite workspace.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_global_options(parser, None)
    # the same options after the command (`recall alice tea --json`); SUPPRESS keeps a value
    # given before the command when the option is not repeated after it
    common = argparse.ArgumentParser(add_help=False)
    add_global_options(common, argparse.SUPPRESS)
    common_io = argparse.ArgumentParser(add_help=False)  # revectorize has its own --model
    add_global_options(common_io, argparse.SUPPRESS, model=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (remember, recall, ingest, report, exchange, backends, tavern):
        module.add_parsers(sub, common)
    revectorize.add_parsers(sub, common_io)
    return parser


def main(argv: list[str] | None = None, *, embedder_factory: EmbedderFactory | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run one command; answers the exit code (0 ok, 2 error or bad usage, 130 interrupted).
    ``embedder_factory(model_id, dtype)`` replaces the model lookup (tests)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2), already printed
        return int(e.code or 0)
    if args.db is None:
        args.db = str(default_path())
    if stdout is None and stderr is None:
        console_never_fails()
    ctx = Context(args, embedder_factory, stdout, stderr)
    try:
        return int(args.handler(ctx))
    except OmoideError as e:
        ctx.note(f"error: {ctx.translate(e)}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=ctx.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `... | head`
        return 0
    finally:
        ctx.close()


def console_never_fails() -> None:
    """A console or pipe whose encoding cannot show a memory's text (PYTHONIOENCODING=ascii,
    a Windows pipe in cp1252) shows it escaped (\\u732b): printing it raised
    UnicodeEncodeError, a traceback after the command had already written."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def run() -> None:
    sys.exit(main())
