"""``HttpBackend``: memories kept by any server that speaks a small REST contract.

Default contract (every path and parameter name is configurable, see ``HttpConfig``):

    POST   /memories               body: record           -> 201 record      (409: id taken)
    GET    /memories/{id}                                  -> 200 record      (404: unknown)
    PATCH  /memories/{id}          body: fields            -> 200 record      (404: unknown)
    DELETE /memories/{id}                                  -> 204             (404: unknown)
    GET    /memories?character_id=&kind=&trashed=&limit=&offset=&vectors=
                                              -> 200 {"items", "total", "totals_by_kind"}
    POST   /memories/search        body: {"query", "character_id", "k", "vector", "model", "kinds"}
                                              -> 200 {"results": [{"memory", "score"}]}
    GET    /health                                         -> 200 {"ok": true, ...}
    GET    /characters                     -> 200 {"names": {id: name}, "deleted": {id: time}}
    PUT    /characters/{id}        body: {"name", "deleted_at"?}   -> 200 {"id", "name", ...}

404 on a memory's own URL answers None/False; on any other route, and any other non-2xx
(a redirect too: never followed), raises BACKEND_HTTP with the status and body. The
transport is the package's one seam (``omoide.transport``): urllib under CPython, the engine
worker's ``fetch`` in the browser (``omoide.browser.http``).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from omoide.backends.base import DEFAULT_PAGE, KEEP, Keep
from omoide.engine import validate
from omoide.errors import OmoideError
from omoide.keys import checked_key
from omoide.transport import Transport, mask_secret, reply_detail, urllib_transport


@dataclass(frozen=True)
class HttpConfig:
    base_url: str
    # secrets: never in a repr (logs, tracebacks, error reports); headers may carry keys too
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = 30.0
    memories_path: str = "/memories"
    memory_path: str = "/memories/{id}"
    search_path: str = "/memories/search"
    health_path: str = "/health"
    characters_path: str = "/characters"  # display names of characters
    character_path: str = "/characters/{id}"
    params: Mapping[str, str] = field(default_factory=dict)  # our name -> the server's name

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_key", checked_key(self.api_key))
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https"):
            raise OmoideError.of("BACKEND_CONFIG", reason="base_url must be http(s)://...")
        if "@" in parts.netloc:  # shown in status, errors and the queue file: never a secret
            raise OmoideError.of("BACKEND_CONFIG", reason="base_url must hold no user or "
                                 "password (give a key: --backup-key-file)")
        if "?" in self.base_url or "#" in self.base_url:
            # a ?token=... was shown the same way, and every path went after it (all 404)
            raise OmoideError.of("BACKEND_CONFIG", reason="base_url must hold no query or "
                                 "fragment (give a key: --backup-key-file)")
        if "{id}" not in self.memory_path or "{id}" not in self.character_path:
            raise OmoideError.of("BACKEND_CONFIG", reason="memory_path and character_path "
                                 "need an {id} part")
        if not self.timeout > 0:
            raise OmoideError.of("BACKEND_CONFIG", reason="timeout must be positive")

    def param(self, name: str) -> str:
        return self.params.get(name, name)


class HttpBackend:
    # a character live on the server is live in the app it backs up (never deleted, or
    # restored from the character trash since): ``sync.deleted_at``
    has_character_trash = True

    def __init__(self, config: HttpConfig, *, transport: Transport | None = None,
                 name: str | None = None) -> None:
        self.config = config
        self.transport = transport or urllib_transport
        self.name = name or f"http:{config.base_url}"

    def initialize(self) -> None:  # stateless: nothing to open
        pass

    def shutdown(self) -> None:
        pass

    # -- plumbing ----------------------------------------------------------------------------

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        url = self.config.base_url.rstrip("/") + path
        if query:
            pairs = {self.config.param(k): v for k, v in query.items() if v is not None}
            url += "?" + urllib.parse.urlencode(pairs)
        return url

    def memory_url(self, memory_id: str) -> str:
        # an empty id made "/memories/", which a server may read as the listing
        quoted = urllib.parse.quote(validate.memory_id(memory_id), safe="")
        return self.url(self.config.memory_path.replace("{id}", quoted))

    def request(self, method: str, url: str, payload: Any = None, *,
                missing_ok: bool = False) -> tuple[int, Any]:
        """``missing_ok``: a 404 answers None (a memory's own URL: no such memory); on any
        other route it is an error (a wrong prefix: nothing there was stored)."""
        headers = {"Accept": "application/json", **self.config.headers}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        body = None
        if payload is not None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        try:
            status, raw, _ = self.transport(method, url, headers, body, self.config.timeout)
        except TimeoutError:
            raise OmoideError.of("BACKEND_TIMEOUT", url=url, timeout=self.config.timeout) from None
        except OSError as err:
            raise OmoideError.of("BACKEND_UNREACHABLE", url=url, reason=str(err)) from None
        if status == 404 and missing_ok:
            return status, None
        if not 200 <= status < 300:
            raise OmoideError.of("BACKEND_HTTP", url=url, status=status,
                                 body=self._detail(raw, 500))
        text = raw.decode("utf-8", "replace")
        try:
            return status, json.loads(text) if text.strip() else None
        except ValueError:
            raise OmoideError.of("BACKEND_HTTP", url=url, status=status,
                                 body="not JSON: " + self._detail(raw, 200)) from None

    def _detail(self, raw: bytes, limit: int) -> str:
        """A reply for an error message, with the key and every configured header value
        masked (a server that echoes the request puts them in its body, also with a 200)."""
        text = reply_detail(raw, self.config.api_key, len(raw) + 1)
        for value in self.config.headers.values():
            if len(value) >= 8:
                text = mask_secret(text, value)
        return text[:limit]

    # -- verbs -------------------------------------------------------------------------------

    def create(self, record: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.request("POST", self.url(self.config.memories_path), record)[1]
        except OmoideError as err:
            if err.fields.get("status") == 409:
                raise OmoideError.of("BACKEND_CONFLICT", backend=self.name,
                                     memory_id=record.get("id")) from None
            raise

    def get(self, memory_id: str, *, with_vector: bool = False) -> dict[str, Any] | None:
        url = self.memory_url(memory_id)
        if with_vector:
            url += "?" + urllib.parse.urlencode({self.config.param("vectors"): 1})
        return self.request("GET", url, missing_ok=True)[1]

    def update(self, memory_id: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        return self.request("PATCH", self.memory_url(memory_id), fields, missing_ok=True)[1]

    def delete(self, memory_id: str) -> bool:
        return self.request("DELETE", self.memory_url(memory_id), missing_ok=True)[0] != 404

    def list(self, *, character_id: str | None = None, kind: str | None = None,
             trashed: bool | None = False, limit: int = DEFAULT_PAGE, offset: int = 0,
             with_vectors: bool = False) -> dict[str, Any]:
        query = {"character_id": character_id, "kind": kind, "limit": limit, "offset": offset,
                 "trashed": {None: "any", True: "1", False: "0"}[trashed],
                 "vectors": 1 if with_vectors else None}
        url = self.url(self.config.memories_path, query)
        page = self.request("GET", url)[1]
        # the server's answer is input: a page that is not one (a list, a text total, an
        # item that is no object) is refused here, not met as a crash half way through
        items = page.get("items") if isinstance(page, dict) else None
        total = page.get("total") if isinstance(page, dict) else None
        if (not isinstance(items, list) or not all(isinstance(i, dict) for i in items)
                or not isinstance(total, int) or isinstance(total, bool)):
            raise OmoideError.of("BACKEND_HTTP", url=url, status=200,
                                 body="not a page of memories ({items: [objects], total: "
                                      "integer})")
        return page

    def search(self, query: str, *, character_id: str, k: int = 10,
               vector: list[float] | None = None, model: str | None = None,
               kinds: list[str] | None = None) -> list[dict[str, Any]]:
        body = {"query": query, "character_id": character_id, "k": k, "vector": vector,
                "model": model, "kinds": kinds}
        answer = self.request("POST", self.url(self.config.search_path), body)[1]
        return (answer or {}).get("results", [])

    def character_names(self) -> dict[str, str]:
        """Display names the server holds, by character id; none from a server that keeps
        no names (``names_route``)."""
        return self._characters("names")

    def deleted_characters(self) -> dict[str, Any]:
        """When each character the user deleted was deleted, by id; none from a server that
        keeps no names or no deletions (one written before ``deleted`` was added)."""
        return self._characters("deleted")

    def _characters(self, part: str) -> dict[str, Any]:
        url = self.url(self.config.characters_path)
        with names_route():
            answer = self.request("GET", url)[1] or {}
            found = answer.get(part, {} if part == "deleted" else None)
            if not isinstance(found, dict):
                raise OmoideError.of("BACKEND_HTTP", url=url, status=200,
                                     body=f"no {part} object")
            return found
        return {}

    def set_character_name(self, character: str, name: str,
                           deleted_at: float | None | Keep = KEEP) -> dict[str, Any] | None:
        """The name given to the server, and whether the character is deleted (sent only
        when given); None when it keeps no names (``names_route``)."""
        quoted = urllib.parse.quote(validate.character_id(character), safe="")
        url = self.url(self.config.character_path.replace("{id}", quoted))
        body: dict[str, Any] = {"name": validate.character_name(name)}
        if not isinstance(deleted_at, Keep):
            body["deleted_at"] = validate.optional_timestamp(deleted_at, "deleted_at")
        with names_route():
            return self.request("PUT", url, body)[1]
        return None

    def health(self) -> dict[str, Any]:
        started = time.perf_counter()
        answer = self.request("GET", self.url(self.config.health_path))[1]
        if not isinstance(answer, dict):
            raise OmoideError.of("BACKEND_HTTP", url=self.url(self.config.health_path),
                                 status=200, body="no health object")
        latency = round((time.perf_counter() - started) * 1000, 3)
        return {"backend": self.name, **answer, "latency_ms": latency}


def server_key(name: str) -> str:
    """The server a backend's name points at, for its queued mirror ops: the http(s) URL in
    the name (``backup http://Host:80/`` and ``http:http://host`` are one server), scheme
    and host in lower case, without the default port or a trailing slash. A name without a
    URL is its own key. Never holds a key (``HttpConfig`` refuses one in the URL)."""
    found = re.search(r"https?://\S+", name, re.IGNORECASE)
    if found is None:
        return name
    parts = urllib.parse.urlsplit(found.group())
    try:
        port = parts.port
    except ValueError:  # not a port: the URL as written
        return found.group()
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    scheme = parts.scheme.lower()
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host += f":{port}"
    return f"{scheme}://{host}{parts.path.rstrip('/')}"


NO_ROUTE = (404, 405, 501)


@contextmanager
def names_route() -> Iterator[None]:
    """A server without the names routes (one written to the contract before they were
    added) keeps no names: its 404 / 405 / 501 there is not an error, or every backup to it
    failed at its end and a queued name op held up every later change. The memories'
    routes stay strict (a 404 there is a wrong prefix)."""
    try:
        yield
    except OmoideError as err:
        if err.code != "BACKEND_HTTP" or err.fields.get("status") not in NO_ROUTE:
            raise
