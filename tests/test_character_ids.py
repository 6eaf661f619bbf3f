"""One id rule for a character named in a card or in the app: Python's import
(``interop.parse.slug``), the app's new character (``web/store/characters.js`` ``newId``) and
the SillyTavern extension (``characterIdOf``) agree, also for names beyond the BMP: the two
JavaScript copies cut 40 UTF-16 units, so a name of astral characters looked for another
character (or an id ending in half a surrogate pair, which the engine refuses)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from omoide.interop.parse import slug

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["Seraphina", "Alice Liddell!", "ALICE", "Émilie Zola", "佐藤 花子", "𠮷" * 25,
         "a" + "𠮷" * 25, "😀 smile " * 8, "x" * 39 + "𠮷𠮷", "   ", "Ｓｅｒａ　ｐｈｉｎａ"]


def js_function(path: Path, name: str) -> str:
    source = path.read_text("utf-8")
    match = re.search(rf"(?:export )?function {name}\(.*?\n\}}\n", source, re.S)
    assert match, f"no function {name} in {path}"
    return match.group(0).removeprefix("export ")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_javascript_ids_are_pythons():
    script = "\n".join([
        js_function(ROOT / "integrations/sillytavern/index.js", "characterIdOf"),
        js_function(ROOT / "web/store/characters.js", "newId"),
        f"const names = {json.dumps(NAMES)};",
        "console.log(JSON.stringify(names.map((n) => [characterIdOf(n), "
        "newId(n.normalize('NFKC').trim() || n, new Set())])));",
    ])
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    for name, (extension, app) in zip(NAMES, json.loads(out.stdout), strict=True):
        assert extension == slug(name), name
        if name.strip():
            assert app == slug(name.strip()), name
