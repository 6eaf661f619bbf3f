"""SillyTavern / RisuAI files from the web app (``omoide.interop``, as the CLI uses it).

The page sends the file's bytes as base64 (only strings cross the boundary); the import is
checked whole before anything is written, and the worker commits it in one transaction."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..errors import OmoideError
from ..interop import export_world_info, import_file
from .rpc import handler
from .session import session


@handler("tavern_import")
def tavern_import(data_base64: str, filename: str = "the file", character: str | None = None,
                  dry_run: bool = False, names: dict[str, str] | None = None
                  ) -> dict[str, Any]:
    """``names``: id -> display name of the app's characters (deleted ones too): a card
    whose name makes the id of another character goes to a new one (``target_character``)."""
    try:
        data = base64.b64decode(data_base64, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise OmoideError.of("INVALID_ARGUMENT", name="data_base64",
                             reason="not base64") from None
    return import_file(session().governor, data, str(filename), character=character or None,
                       dry_run=dry_run, names=names)


@handler("tavern_export")
def tavern_export(character: str, name: str | None = None) -> dict[str, Any]:
    return export_world_info(session().engine, character, name=name)
