"""``python -m omoide.server --db memories.db [--host 127.0.0.1] [--port 8750] [--key K]``"""

from __future__ import annotations

import argparse
import os
import sys

from omoide.server.app import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m omoide.server",
                                     description="Omoide reference memory server (REST + SQLite)")
    parser.add_argument("--db", default="omoide-server.db", help="SQLite file (created if new)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument("--port", type=int, default=8750)
    parser.add_argument("--key", default=os.environ.get("OMOIDE_SERVER_KEY"),
                        help="bearer key every request must send (or $OMOIDE_SERVER_KEY)")
    parser.add_argument("--cors-origin", default="*",
                        help="Access-Control-Allow-Origin (default *; e.g. http://127.0.0.1:8742)")
    args = parser.parse_args(argv)
    server = serve(args.db, args.host, args.port, api_key=args.key, cors_origin=args.cors_origin)
    auth = "bearer key required" if args.key else "no key (anyone on this address can read)"
    print(f"Omoide memory server on {server.url} ({args.db}; {auth})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
