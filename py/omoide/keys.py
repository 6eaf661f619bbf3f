"""Bearer keys from a flag, a file or an environment variable (flags show in the process
list, so files and the environment are the documented ways). A key never appears in an error."""

from __future__ import annotations

import os
from pathlib import Path

from omoide.errors import OmoideError


def read_key_file(path: str | Path) -> str:
    """The one key a file holds (surrounding whitespace and the final newline dropped)."""
    try:
        key = Path(path).read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or type(err).__name__
        raise OmoideError.of("FILE_UNREADABLE", path=str(path), reason=reason) from None
    if not key or any(c.isspace() for c in key):
        raise OmoideError.of("INVALID_ARGUMENT", name=f"key file {path}",
                             reason="it must hold one key, on one line, without spaces")
    return checked_key(key, f"key file {path}") or key


def _token(char: str) -> bool:
    """Printable ASCII: a header carries other characters as Latin-1 bytes (or not at all),
    so a key "clé…" never matched the server's UTF-8 copy (every request 401)."""
    return "!" <= char <= "~"


def checked_key(key: str | None, name: str = "api_key") -> str | None:
    """A bearer key as a header can carry it: surrounding whitespace (a pasted key, a line
    read with its newline) dropped; a key with a space, a line break or another control
    character inside is refused naming the field, never the key (an HTTP library's own
    error would print the whole header). "" or None: no key."""
    if key is None:
        return None
    if not isinstance(key, str):
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be a string")
    key = key.strip()
    if not all(_token(c) for c in key):
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason="a key is one token of printable ASCII: no spaces, line "
                                    "breaks, control or non-ASCII characters inside")
    return key or None


def resolve_key(flag: str | None, file: str | Path | None, env: str, *,
                option: str = "--key") -> str | None:
    """``--key`` or ``--key-file`` (not both), else ``$env``; None when none is set.
    ``option``: the flag's name in errors (the CLI's backup key is ``--backup-key``)."""
    if flag and file:
        raise OmoideError.of("INVALID_ARGUMENT", name=f"{option} / {option}-file",
                             reason="give the key or a key file, not both")
    if file:
        return read_key_file(file)
    if flag:
        return checked_key(flag, option)
    return checked_key(os.environ.get(env) or None, f"${env}")


def checked_endpoint(url: str, name: str = "base_url") -> str:
    """An endpoint's base URL, which is shown in full (errors, reprs, the provider line,
    settings): one holding a user or password, a query (``?key=``) or a fragment is refused
    naming the field, never the URL. None of them ever worked: urllib sends no userinfo, the
    browser's fetch refuses it, and the API path went after the query."""
    import urllib.parse

    if not isinstance(url, str):
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be a string")
    try:
        netloc = urllib.parse.urlsplit(url).netloc
    except ValueError:
        netloc = url
    if "@" in netloc:
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="it must hold no user or "
                             "password (give the key as the API key)")
    if "?" in url or "#" in url:
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="it must hold no query or "
                             "fragment (give the key as the API key)")
    return url
