"""``python -m omoide.server --db memories.db`` with the key in ``$OMOIDE_SERVER_KEY`` (or
``--key-file PATH``): the reference REST server, safe by default (see policy.py)."""

from __future__ import annotations

import argparse
import sys

from omoide.errors import OmoideError
from omoide.keys import resolve_key
from omoide.server.policy import APP_ORIGINS, MAX_BODY, add_policy_arguments
from omoide.server.runner import DEFAULT_PORT, serve

MIN_KEY_LENGTH = 16


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m omoide.server",
                                description="Omoide reference memory server (REST + SQLite). "
                                "Needs a key: $OMOIDE_SERVER_KEY or --key-file.")
    p.add_argument("--db", default="omoide-server.db", help="SQLite file (created if new)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback; "
                   "any other address needs --public and a key)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    add_policy_arguments(p, "OMOIDE_SERVER_KEY")
    p.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                   help="a web app origin allowed to call the server (repeatable; default "
                   f"{' and '.join(APP_ORIGINS)})")
    p.add_argument("--max-body", type=int, default=MAX_BODY, help="largest request body, bytes")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        key = resolve_key(args.key, args.key_file, "OMOIDE_SERVER_KEY")
        if key and len(key) < MIN_KEY_LENGTH:
            print(f"omoide.server: warning: the key is shorter than {MIN_KEY_LENGTH} characters"
                  " (e.g. `openssl rand -hex 16` makes a good one)", file=sys.stderr)
        server = serve(args.db, args.host, args.port, api_key=key, no_key=args.no_key,
                       public=args.public, origins=args.cors_origin,
                       allow_hosts=args.allow_host, max_body=args.max_body)
    except OmoideError as err:
        print(f"omoide.server: {err.code}: {err}", file=sys.stderr)
        return 2
    auth = "bearer key required" if key else "NO KEY (loopback only)"
    origins = ", ".join(sorted(server.policy.origins)) or "none"
    print(f"Omoide memory server on {server.url} ({args.db}; {auth}; browser origins: "
          f"{origins})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
