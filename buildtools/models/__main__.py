"""``python -m buildtools.models OUT CACHE``: build (or confirm up to date) the models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import build_models


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m buildtools.models", description=__doc__)
    ap.add_argument("out", type=Path, help="output folder (e.g. dist/models)")
    ap.add_argument("cache", type=Path, help="download cache for the source wheels")
    args = ap.parse_args(argv)
    try:
        build_models(args.out, args.cache)
    except Exception as e:  # a build tool: one clear line, non-zero exit
        print(f"models: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
