"""The wheel the browser loads carries bytecode of Pyodide's own Python, so Pyodide does not
compile every module at every boot (BENCHMARKS.md, issue 16): one .pyc per module, tagged
for the interpreter in dist/vendor/pyodide, hash-based and unchecked (the loader never
compares it with the source's timestamp, which unpacking the wheel does not keep)."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

DIST = Path(__file__).resolve().parent.parent / "dist"
UNCHECKED_HASH = 0b01  # PEP 552 flags: hash-based, check_source off


@pytest.fixture(scope="module")
def wheel() -> zipfile.ZipFile:
    found = sorted((DIST / "wheels").glob("omoide-*.whl"))
    if not found:
        pytest.skip("no built dist/ (python3 build.py build)")
    with zipfile.ZipFile(found[-1]) as zf:
        yield zf


def pyodide_tag() -> str:
    info = json.loads((DIST / "vendor" / "pyodide" / "pyodide-lock.json").read_text())["info"]
    major, minor = info["python"].split(".")[:2]
    return f"cpython-{major}{minor}"


def test_every_module_has_pyodide_bytecode(wheel):
    names = set(wheel.namelist())
    sources = [n for n in names if n.endswith(".py")]
    assert "omoide/browser/session.py" in sources
    tag = pyodide_tag()
    for source in sources:
        folder, _, file = source.rpartition("/")
        assert f"{folder}/__pycache__/{file[:-3]}.{tag}.pyc" in names, source
    assert not [n for n in names if n.endswith(".pyc") and f".{tag}." not in n]


def test_bytecode_is_unchecked_hash_based(wheel):
    pycs = [n for n in wheel.namelist() if n.endswith(".pyc")]
    assert pycs
    for name in pycs:
        header = wheel.read(name)[:16]
        assert int.from_bytes(header[4:8], "little") == UNCHECKED_HASH, name


def test_the_record_lists_the_bytecode(wheel):
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    listed = {line.split(",")[0] for line in wheel.read(record).decode().splitlines()}
    assert {n for n in wheel.namelist() if n.endswith(".pyc")} <= listed


# Pyodide (under node) unpacks the wheel as the engine worker does, a module's source is then
# made unparsable: the import still works only if Pyodide runs the wheel's bytecode.
NODE_CHECK = """
import { loadPyodide } from "%(pyodide)s/pyodide.mjs";
import { readFileSync } from "node:fs";
const py = await loadPyodide({ indexURL: "%(pyodide)s/" });
const purelib = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
py.unpackArchive(new Uint8Array(readFileSync(%(wheel)r)), "zip", { extractDir: purelib });
console.log(py.runPython(`
import sysconfig
with open(sysconfig.get_paths()["purelib"] + "/omoide/errors.py", "w") as f:
    f.write("this is not python (")
import omoide.errors, omoide.browser.rpc
omoide.errors.__spec__.cached
`));
"""


def test_pyodide_imports_the_bytecode_not_the_source(wheel, tmp_path):
    node = shutil.which("node")
    pyodide = DIST.parent / "node_modules" / "pyodide"
    if not node or not pyodide.exists():
        pytest.skip("no node or no Pyodide package")
    script = tmp_path / "check.mjs"
    script.write_text(NODE_CHECK % {"pyodide": pyodide, "wheel": wheel.filename})
    out = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith(f"omoide/__pycache__/errors.{pyodide_tag()}.pyc")
