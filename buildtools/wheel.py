"""Build the pure-Python ``omoide`` wheel that the engine worker loads into Pyodide.

A wheel of a pure package is a zip with three metadata files, so we write it directly: the
build is deterministic (fixed timestamps) and needs no network or build backend.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from .files import sha256_tree
from .paths import CACHE, DIST, NODE_MODULES, PY, ROOT

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


def pyodide_bytecode(files: list[Path], log=print) -> dict[str, bytes]:
    """The sources' .pyc as Pyodide's own Python compiles them (buildtools/pyc.mjs under node),
    by wheel path. Without them Pyodide compiles every module from source at every boot;
    with them the engine's imports took about half the time (BENCHMARKS.md, issue 16). No
    node or no Pyodide package: an empty dict (the wheel still works, from source)."""
    node = shutil.which("node")
    pyodide = NODE_MODULES / "pyodide"
    if not node or not (pyodide / "pyodide.asm.wasm").exists():
        log("wheel: no node or Pyodide here; the wheel carries no bytecode")
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            if f.suffix == ".py":
                target = Path(tmp) / f.relative_to(PY)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target)
        subprocess.run([node, str(ROOT / "buildtools" / "pyc.mjs"), f"{pyodide}/", tmp],
                       check=True, capture_output=True, text=True, timeout=300)
        return {str(p.relative_to(tmp)).replace("\\", "/"): p.read_bytes()
                for p in sorted(Path(tmp).rglob("*.pyc"))}


def write_wheel(path: Path, files: list[Path], ver: str,
                bytecode: dict[str, bytes] | None = None) -> None:
    entries = {str(p.relative_to(PY)).replace("\\", "/"): p.read_bytes() for p in files}
    entries.update(bytecode or {})
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
    # The bytecode step and Pyodide's version are inputs too (its .pyc are in the wheel).
    compiler = [ROOT / "buildtools" / "pyc.mjs", NODE_MODULES / "pyodide" / "package.json"]
    key = sha256_tree(files, PY) + sha256_tree([c for c in compiler if c.exists()], ROOT)
    stamp = CACHE / "stamps" / "wheel"
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        log(f"wheel: {out.name} unchanged")
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    for old in out.parent.glob(f"{NAME}-*.whl"):
        old.unlink()
    bytecode = pyodide_bytecode(files, log)
    write_wheel(out, files, ver, bytecode)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key)
    log(f"wheel: built {out.name} ({len(files)} files, {len(bytecode)} .pyc)")
    return out
