"""What every command gets: the parsed arguments, the workspace (opened on demand with the
workspace's model), output helpers and progress bars."""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.embeddings.registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID
from omoide.engine.embedding import Embedder
from omoide.errors import OmoideError
from omoide.keys import resolve_key
from omoide.workspace import Workspace, open_workspace, save_model, stored_model

EmbedderFactory = Callable[[str, str], Embedder]


def default_factory(model_id: str, dtype: str) -> Embedder:
    from omoide.embeddings.auto import choose_embedder

    return choose_embedder(model_id, dtype).embedder


def model_label(model_id: str, dtype: str) -> str:
    return f"{model_id} ({dtype})"


class Context:
    def __init__(self, args: argparse.Namespace, factory: EmbedderFactory | None,
                 stdout: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.args = args
        self.factory = factory or default_factory
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.path = Path(args.db)
        self.model_id = DEFAULT_MODEL_ID
        self.dtype = DEFAULT_DTYPE
        self._workspace: Workspace | None = None

    # -- the workspace ---------------------------------------------------------------------

    def resolve_model(self) -> tuple[str, str, bool]:
        """(model id, dtype, already recorded) for this run: the workspace's own model; a
        different --model/--dtype is refused (switching is ``revectorize``'s job)."""
        stored = stored_model(self.path)
        wanted_model, wanted_dtype = self.args.model, self.args.dtype
        if stored is None:
            return wanted_model or DEFAULT_MODEL_ID, wanted_dtype or DEFAULT_DTYPE, False
        model_id, dtype = stored
        target_model = wanted_model or model_id
        target_dtype = wanted_dtype or (dtype if target_model == model_id else DEFAULT_DTYPE)
        if (target_model, target_dtype) != (model_id, dtype):
            raise OmoideError.of(
                "WORKSPACE_MODEL_MISMATCH", path=str(self.path),
                stored=model_label(model_id, dtype),
                selected=model_label(target_model, target_dtype),
                model=target_model, dtype=target_dtype,
            )
        return model_id, dtype, True

    def open(self, model_id: str | None = None, dtype: str | None = None, *,
             record: bool = True) -> Workspace:
        """Open the workspace with its model (or the one given); record the model in a new
        workspace."""
        if self._workspace is not None:
            return self._workspace
        recorded = True
        if model_id is None or dtype is None:
            model_id, dtype, recorded = self.resolve_model()
        embedder = self.factory(model_id, dtype)
        self.model_id, self.dtype = model_id, dtype
        ws = open_workspace(self.path, embedder=embedder, model_id=model_id, dtype=dtype,
                            fallbacks=self.fallbacks())
        self._workspace = ws
        if record and not recorded:
            save_model(ws.backend, model_id, dtype)
        for state in ws.manager.status() if ws.manager is not None else []:
            if state["role"] == "waiting":  # queued while another server was named
                url = state["name"].removeprefix("backup ")
                self.note(f"{state['queued']} change(s) wait for {state['name']}, which is "
                          f"not the backup server of this run: they go only there (give "
                          f"--backup {url} to send them)")
        return ws

    def fallbacks(self) -> list[HttpBackend]:
        url = getattr(self.args, "backup", None)
        if not url:
            return []
        key = resolve_key(getattr(self.args, "backup_key", None),
                          getattr(self.args, "backup_key_file", None), "OMOIDE_BACKUP_KEY",
                          option="--backup-key")
        return [HttpBackend(HttpConfig(url, api_key=key), name=f"backup {url}")]

    @property
    def workspace(self) -> Workspace:
        return self.open()

    @property
    def existing_workspace(self) -> Workspace:
        """The workspace for a command that only reads: a path with none (a mistyped --db)
        is an error, never a new workspace stamped with the default model."""
        self.check_exists()
        return self.open()

    def check_exists(self) -> None:
        if self._workspace is None and not self.path.exists():
            raise OmoideError.of("FILE_UNREADABLE", path=str(self.path),
                                 reason="there is no workspace there (a command that "
                                        "writes, such as remember or import, creates one)")

    def close(self) -> None:
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None

    def translate(self, error: OmoideError) -> OmoideError:
        """The engine's MODEL_MISMATCH speaks of the web app; on the CLI, name the command.
        A long-running process (the MCP server) whose workspace another command switched
        meanwhile is told to restart: it advised re-embedding everything back."""
        if error.code == "MODEL_MISMATCH":
            switched = self.switched_since()
            if switched is not None:
                return OmoideError.of(
                    "WORKSPACE_SWITCHED", path=str(self.path), stored=switched,
                    running=f"{self.model_id} ({self.dtype})")
            return OmoideError.of(
                "STORE_MODEL_MISMATCH", character=error.fields.get("character"),
                stored=error.fields.get("stored"), selected=error.fields.get("selected"),
                model=self.model_id, dtype=self.dtype,
            )
        return error

    def switched_since(self) -> str | None:
        """The model the workspace file records now when it is not the one this process
        runs ("model (dtype)"), else None."""
        try:
            recorded = stored_model(self.path)
        except OmoideError:
            return None
        if recorded is None or recorded == (self.model_id, self.dtype):
            return None
        return f"{recorded[0]} ({recorded[1]})"

    # -- output ------------------------------------------------------------------------------

    @property
    def json(self) -> bool:
        return bool(self.args.json)

    def out(self, line: str = "") -> None:
        print(shown(line), file=self.stdout)

    def note(self, line: str) -> None:
        """A remark for a person (stderr, so stdout stays clean for pipes)."""
        print(shown(line), file=self.stderr)

    def emit(self, data: Any) -> None:
        json.dump(data, self.stdout, ensure_ascii=False, indent=2)
        self.stdout.write("\n")

    def progress_enabled(self) -> bool:
        mode = self.args.progress
        if mode == "on":
            return True
        if mode == "off" or self.json:
            return False
        return bool(getattr(self.stderr, "isatty", lambda: False)())

    @contextmanager
    def bar(self, description: str, total: int | None = None, unit: str = "text", *,
            show: bool = True) -> Iterator[Any]:
        """A tqdm bar on stderr (a silent one when progress is off)."""
        from tqdm import tqdm

        bar = tqdm(total=total, desc=description, unit=unit, file=self.stderr,
                   disable=not (show and self.progress_enabled()), leave=True,
                   dynamic_ncols=True)
        try:
            yield bar
        finally:
            bar.close()


def read_input(path: str) -> str:
    """The text of ``path`` (``-``: standard input), as UTF-8 without the byte order mark an
    editor may put first (Notepad: a conversation file was refused as not starting with
    ``user:``, a backup as not JSON)."""
    try:
        if path == "-":
            return _stdin_text()
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise OmoideError.of("FILE_UNREADABLE", path=path, reason="no such file") from None
    except UnicodeDecodeError as e:
        raise OmoideError.of("FILE_UNREADABLE", path=path, reason=f"not UTF-8 text ({e.reason} "
                             f"at byte {e.start})") from None
    except OSError as e:
        raise OmoideError.of("FILE_UNREADABLE", path=path, reason=e.strerror or str(e)) from None


def _stdin_text() -> str:
    """Standard input decoded strictly: Python's own stdin turns bytes that are not UTF-8
    into lone surrogates (``surrogateescape``) instead of refusing them."""
    raw = getattr(sys.stdin, "buffer", None)
    return sys.stdin.read() if raw is None else raw.read().decode("utf-8-sig")


# Control characters other than a line break or a tab: memory text is untrusted (a card's
# lorebook, an import, an MCP agent), and ESC [2J clears the screen, OSC 52 writes the
# clipboard; the bidirectional embeddings, overrides and isolates (U+202E) reorder what the
# terminal shows after them, so a memory could print as something else (marks such as U+200F
# stay: Arabic and Hebrew text needs them). Shown escaped; JSON output escapes what JSON must.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown(line: str) -> str:
    """``line`` for a terminal: control characters as ``\\xNN`` (``\\uNNNN`` above 0xff)."""
    return _CONTROL.sub(lambda m: escaped(m.group()), line)


def escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def write_output(ctx: Context, path: str, text: str) -> bool:
    """Write ``text`` to ``path`` atomically (a temporary file, then a rename), or to standard
    output for ``-``; True when it went to a file."""
    if path == "-":
        print(text, file=ctx.stdout)  # data for a program, as it is (never ``shown``)
        return False
    target = Path(path)
    workspace = ctx.path.resolve()
    if target.resolve() in (workspace, *(workspace.with_name(workspace.name + suffix)
                                         for suffix in ("-wal", "-shm", "-journal"))):
        raise OmoideError.of("FILE_UNWRITABLE", path=path,
                             reason="it is the workspace itself (--db); name another file")
    tmp: Path | None = None
    try:
        # every memory and the trash: private (0600) as the workspace, or the mode the user
        # gave the file before (a rename over it would otherwise widen it to the umask's)
        mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o600
        # a new temporary file of a name no one could have made before (never a link or a
        # file left there: O_EXCL), created 0600
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.parent)
        tmp = Path(name)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        tmp.replace(target)
    except OSError as e:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise OmoideError.of("FILE_UNWRITABLE", path=path, reason=e.strerror or str(e)) from None
    return True
