"""``python -m buildtools build|serve|test`` (build.py calls this inside .venv)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from . import kernel, site, vendor, wheel
from .files import sha256_file
from .paths import CACHE, DEFAULT_PORT, DIST, ROOT


def build_models(log=print) -> dict:
    from .models import build_models as build

    return build(DIST / "models", CACHE / "models", log=log)


def build(log=print) -> dict:
    """Every stage; each one skips itself when its inputs did not change."""
    started = time.perf_counter()
    DIST.mkdir(exist_ok=True)
    versions = vendor.vendor_assets(log)
    whl = wheel.build_wheel(log)
    models = build_models(log)
    kernel.build_kernel(log)
    site.copy_web(log)
    info = {
        "omoide": wheel.version(),
        "wheel": f"wheels/{whl.name}",
        # The engine worker's Python snapshot holds the wheel's modules, imported: a new
        # wheel must not start from an old snapshot (web/engine-worker.js startPython).
        "wheel_sha256": sha256_file(whl),
        "vendor": versions,
        "models": sorted(models.get("models", {})) if isinstance(models, dict) else [],
    }
    site.write_build_info(info)
    info["sw_version"] = site.write_service_worker(log)
    log(f"build: done in {time.perf_counter() - started:.1f} s -> {DIST}")
    return info


def run_tests(pytest_args: list[str]) -> int:
    print("+ ruff check", flush=True)
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "py", "buildtools", "tests",
                           "bench", "build.py"], cwd=ROOT)
    if lint.returncode != 0:
        return lint.returncode
    env = dict(os.environ, OMOIDE_DIST=str(DIST))
    code = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT,
                          env=env).returncode
    if code == 5:
        print("pytest collected no tests: that is a failure, not a pass", file=sys.stderr)
        return 1
    return code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build.py")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build")
    serve = sub.add_parser("serve")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve.add_argument("--host", default="127.0.0.1")
    sub.add_parser("test", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "test":
        parser.error(f"unknown arguments: {' '.join(rest)}")
    build()
    if args.command == "serve":
        from .serve import serve_forever

        serve_forever(args.host, args.port)
    elif args.command == "test":
        return run_tests(rest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
