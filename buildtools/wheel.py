"""Build the pure-Python ``omoide`` wheel that the engine worker loads into Pyodide.

A wheel of a pure package is a zip with three metadata files, so we write it directly: the
build is deterministic (fixed timestamps) and needs no network or build backend.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from .files import sha256_tree
from .paths import CACHE, DIST, PY

NAME = "omoide"
TAG = "py3-none-any"
EPOCH = (2020, 1, 1, 0, 0, 0)


def version() -> str:
    for line in (PY / NAME / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=")[1].strip().strip("\"'")
    raise SystemExit("py/omoide/__init__.py has no __version__")


def source_files() -> list[Path]:
    root = PY / NAME
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in {".py", ".json", ".typed"}
    )


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def metadata(ver: str) -> dict[str, bytes]:
    info = f"{NAME}-{ver}.dist-info"
    return {
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {ver}\n"
            "Summary: Local-first long-term memory engine for LLM characters\n"
            "Requires-Python: >=3.11\n"
        ).encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: omoide-build\nRoot-Is-Purelib: true\nTag: {TAG}\n"
        ).encode(),
    }


def write_wheel(path: Path, files: list[Path], ver: str) -> None:
    entries = {str(p.relative_to(PY)).replace("\\", "/"): p.read_bytes() for p in files}
    entries.update(metadata(ver))
    record = f"{NAME}-{ver}.dist-info/RECORD"
    lines = [record_line(n, d) for n, d in entries.items()] + [f"{record},,"]
    entries[record] = ("\n".join(lines) + "\n").encode()
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(zipfile.ZipInfo(name, EPOCH), data)
    tmp.replace(path)


def build_wheel(log=print) -> Path:
    """Write dist/wheels/omoide-<v>-py3-none-any.whl unless the sources are unchanged."""
    ver = version()
    out = DIST / "wheels" / f"{NAME}-{ver}-{TAG}.whl"
    files = source_files()
    key = sha256_tree(files, PY)
    stamp = CACHE / "stamps" / "wheel"
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        log(f"wheel: {out.name} unchanged")
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    for old in out.parent.glob(f"{NAME}-*.whl"):
        old.unlink()
    write_wheel(out, files, ver)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key)
    log(f"wheel: built {out.name} ({len(files)} files)")
    return out
