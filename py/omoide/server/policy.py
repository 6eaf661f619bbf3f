"""Who may talk to the reference server: the key, the browser origins, the Host names.

Safe by default: a key is required (``no_key`` is an explicit choice that pins loopback), only
the app's own origins get CORS answers, and the Host header must name this machine's loopback
(or the bound address), so a web page cannot reach the server by DNS rebinding. A non-loopback
bind needs ``public=True`` AND a key.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import re
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from omoide.errors import OmoideError
from omoide.keys import checked_key

# The browser app's origin when served by `python3 build.py serve` (buildtools/serve.py).
APP_ORIGINS = ("http://127.0.0.1:8742", "http://localhost:8742")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_BODY = 4 * 1024 * 1024


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


# The ASCII host a browser's origin can name (lower case; punycode for a Unicode name)
_ORIGIN_HOST = re.compile(r"[a-z0-9._~!$&'()*+,;=-]+")
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(value: str) -> str:
    """``scheme://host[:port]`` as browsers send it in ``Origin`` (their origin
    serialisation): the scheme and host in lower case, a Unicode host in punycode, the
    scheme's default port dropped. What people copy (``HTTPS://Chat.Example:443/``,
    ``https://bücher.example``) is that origin; anything else (a path, a query, a user, a
    host no URL can hold) is refused naming the option."""
    text = value.strip()
    if text == "*":
        raise OmoideError.of("SERVER_CONFIG", reason="CORS origin '*' would let any web page "
                             "read the memories; list the app's origin instead")
    bad = OmoideError.of("SERVER_CONFIG", reason=f"--cors-origin {value!r} is not an http(s) "
                         "origin scheme://host[:port] (no path, query or user)")
    try:  # raises on a bracketed host that is no IP address, a port not in 0..65535
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError:
        raise bad from None
    if (parts.scheme not in DEFAULT_PORTS or not parts.hostname
            or parts.path not in ("", "/") or parts.query or parts.fragment
            or parts.username is not None):
        raise bad
    host = parts.hostname  # lower case, without an IPv6 literal's brackets
    if ":" in host:
        try:
            host = f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            raise bad from None
    else:
        host = _ascii_host(host)
        if host is None or not _ORIGIN_HOST.fullmatch(host):
            raise bad
    shown_port = "" if port is None or port == DEFAULT_PORTS[parts.scheme] else f":{port}"
    return f"{parts.scheme}://{host}{shown_port}"


def _ascii_host(host: str) -> str | None:
    """``host`` as a browser names it in an origin (UTS #46, as the ``idna`` package that
    the server's anyio brings maps it; Python's IDNA 2003 codec without it), None when it
    cannot be."""
    if host.isascii():
        return host
    try:
        import idna

        return idna.encode(host, uts46=True).decode("ascii").lower()
    except ImportError:  # pragma: no cover - anyio, a server dependency, requires idna
        pass
    except (idna.IDNAError, UnicodeError):
        return None
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None


def host_name(header: str) -> str:
    """The name part of a ``Host`` header: ``[::1]:8750`` -> ``::1``, ``a.b:80`` -> ``a.b``."""
    header = header.strip().lower()
    if header.startswith("["):  # an IPv6 literal: only ``:port`` may follow its bracket
        name, bracket, rest = header[1:].partition("]")
        port_only = rest == "" or (rest[:1] == ":" and rest[1:].isdigit())
        return name if bracket and port_only else ""
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass(frozen=True)
class ServerPolicy:
    """What the server accepts; built (and checked) by ``ServerPolicy.build``."""

    api_key: str | None = field(repr=False)  # never in a repr or a log line
    origins: frozenset[str]
    hosts: frozenset[str]
    max_body: int = MAX_BODY
    body_timeout: float = 30.0  # a request body must arrive within this (stalled uploads)

    def __repr__(self) -> str:
        return (f"ServerPolicy(key={'set' if self.api_key else 'none'}, "
                f"origins={sorted(self.origins)}, hosts={sorted(self.hosts)}, "
                f"max_body={self.max_body})")

    @classmethod
    def build(cls, host: str, *, api_key: str | None, no_key: bool = False, public: bool = False,
              origins: tuple[str, ...] | list[str] | None = None,
              allow_hosts: tuple[str, ...] | list[str] = (), max_body: int = MAX_BODY,
              body_timeout: float = 30.0, key_env: str = "OMOIDE_SERVER_KEY") -> ServerPolicy:
        if api_key is not None and not api_key.strip():
            raise OmoideError.of("SERVER_CONFIG", reason="the key is empty")
        api_key = checked_key(api_key, "key")
        if not api_key and not no_key:
            raise OmoideError.of("SERVER_CONFIG", reason=f"no key: set {key_env} or give "
                                 "--key-file (or --no-key for a keyless loopback-only server)")
        if api_key and no_key:
            raise OmoideError.of("SERVER_CONFIG", reason="a key and --no-key exclude each other")
        if not is_loopback(host):
            if no_key:
                raise OmoideError.of("SERVER_CONFIG", reason=f"--no-key serves loopback only, "
                                     f"not {host!r}")
            if not public:
                raise OmoideError.of("SERVER_CONFIG", reason=f"{host!r} is not loopback: other "
                                     "machines could reach the memories; confirm with --public")
        if max_body <= 0 or body_timeout <= 0:
            raise OmoideError.of("SERVER_CONFIG", reason="limits must be positive")
        allowed = {origin_of(o) for o in (APP_ORIGINS if origins is None else origins)}
        hosts = set(LOOPBACK_NAMES) | {host_name(h) for h in allow_hosts if h.strip()}
        if host not in ("0.0.0.0", "::", ""):
            hosts.add(host.strip("[]").lower())
        return cls(api_key=api_key or None, origins=frozenset(allowed), hosts=frozenset(hosts),
                   max_body=max_body, body_timeout=body_timeout)

    def host_allowed(self, header: str | None) -> bool:
        if not header:
            return False
        return host_name(header) in self.hosts

    def origin_allowed(self, origin: str) -> bool:
        return origin.lower() in self.origins

    def key_accepted(self, authorization: str | None) -> bool:
        """True when no key is set, or ``Authorization`` is exactly ``Bearer <key>``
        (compared in constant time)."""
        if self.api_key is None:
            return True
        given = (authorization or "").encode("latin-1", "replace")
        return hmac.compare_digest(given, f"Bearer {self.api_key}".encode())


def add_policy_arguments(parser: argparse.ArgumentParser, key_env: str) -> None:
    """The flags of a server's policy (the reference server and MCP over HTTP share them):
    --key-file / --key (else ``$key_env``), --no-key, --public, --allow-host."""
    parser.add_argument("--key-file", metavar="PATH",
                        help=f"a file holding the bearer key clients must send (${key_env})")
    parser.add_argument("--key", help="the bearer key (visible in the process list: prefer "
                        f"${key_env} or --key-file)")
    parser.add_argument("--no-key", action="store_true",
                        help="serve without a key (loopback only; any local program can read)")
    parser.add_argument("--public", action="store_true",
                        help="confirm a non-loopback --host (other machines can connect; the "
                        "key travels in clear text without a TLS proxy in front)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another name the server answers to in the Host header "
                        "(repeatable; loopback names and the bound address always)")


class BodyRefused(Exception):  # noqa: N818 - an HTTP answer, not an error of ours
    """A request body that cannot be read: late (408), too big (413), cut off (400)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


async def read_body(receive: Callable[[], Awaitable[dict[str, Any]]],
                    policy: ServerPolicy) -> bytes:
    """The whole body of an ASGI request, under the policy's body deadline and size limit
    (a client that declares a body and sends it slowly, or never, is cut at the deadline)."""
    import anyio

    chunks, size = [], 0
    try:
        with anyio.fail_after(policy.body_timeout):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    raise BodyRefused(400, "the client went away")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > policy.max_body:
                    raise BodyRefused(413, f"body over {policy.max_body} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        raise BodyRefused(408, f"the body did not arrive within {policy.body_timeout} s"
                          ) from None
