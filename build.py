#!/usr/bin/env python3
"""Omoide's one entry point: ``python3 build.py serve`` and ``python3 build.py test``.

This file uses only the standard library so it runs on a fresh machine. It prepares the
tool chain (a local virtualenv from the pinned requirements, ``npm ci`` from the lock file),
each step skipped when its inputs did not change, then hands over to ``buildtools`` inside the
virtualenv, which vendors the runtime assets, builds the wheel, the models and the kernel, and
serves or tests the app.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMPS = ROOT / ".cache" / "stamps"
USAGE = """usage: python3 build.py COMMAND [options]

commands:
  serve [--port N] [--host H]   build what changed, then serve the app (default port 8742)
  test [pytest args...]         build what changed, then run every test
  build                         build what changed into dist/
"""


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes())
    h.update(sys.version.encode())
    return h.hexdigest()


def stamped(name: str, value: str) -> bool:
    """True when step ``name`` already ran with inputs hashing to ``value``."""
    stamp = STAMPS / name
    return stamp.exists() and stamp.read_text() == value


def stamp(name: str, value: str) -> None:
    STAMPS.mkdir(parents=True, exist_ok=True)
    (STAMPS / name).write_text(value)


def run(cmd: list[str], **kwargs: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT, **kwargs)  # type: ignore[call-overload]


def ensure_venv(requirements: Path) -> None:
    """Create ./.venv and install the pinned requirements, once per requirements change."""
    key = digest(requirements, ROOT / "requirements" / "build.txt")
    if venv_python().exists() and stamped(f"venv-{requirements.stem}", key):
        link_sources()
        return
    if not venv_python().exists():
        print(f"Creating virtualenv {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    # Twice quiet: errors only. Once quiet still printed a warning per package for every
    # missing find-links folder on CI, ahead of the test output CI keeps.
    run([str(venv_python()), "-m", "pip", "install", "-qq", "--disable-pip-version-check",
         "-r", str(requirements)])
    stamp(f"venv-{requirements.stem}", key)
    link_sources()


def link_sources() -> None:
    """Put py/ on the venv's path (a .pth file), so `.venv/bin/python -m omoide` (CLI),
    `-m omoide.server` and `-m omoide.mcp` run from the checkout without installing."""
    purelib = subprocess.run(
        [str(venv_python()), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True).stdout.strip()
    pth = Path(purelib) / "omoide-checkout.pth"
    line = str(ROOT / "py") + "\n"
    if not pth.exists() or pth.read_text() != line:
        pth.write_text(line)


def ensure_node_modules() -> None:
    """``npm ci`` from package-lock.json; scripts are off (onnxruntime-node would download)."""
    lock = ROOT / "package-lock.json"
    key = digest(lock)
    if (ROOT / "node_modules").is_dir() and stamped("npm", key):
        return
    if shutil.which("npm") is None:
        sys.exit("npm is required (Node.js 20+): install nodejs and npm first.")
    run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"])
    stamp("npm", key)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"serve", "test", "build"}:
        print(USAGE)
        return 2
    if sys.version_info < (3, 11):  # noqa: UP036 - build.py runs on any system python3
        sys.exit("Python 3.11 or newer is required.")
    dev = argv[0] == "test"
    ensure_venv(ROOT / "requirements" / ("dev.txt" if dev else "build.txt"))
    ensure_node_modules()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "py")]))
    cmd = [str(venv_python()), "-m", "buildtools", *argv]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
