"""One rule for a character's display name: the app's ``checkName`` (web/store/characters.js)
and Python's ``validate.character_name`` (what an export's import checks) accept and refuse
the same names. The app took "👩‍🚀 Astronaut" (a zero-width joiner), a no-break space, a soft
hyphen or a tab; the import refused each (``isprintable``), so a whole-origin backup holding
one could not be restored. A name in a file that breaks the rule is repaired, not refused."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from omoide.engine import exchange, validate
from omoide.engine.core import MemoryEngine
from omoide.errors import OmoideError
from tests.test_character_ids import ROOT, js_function
from tests.test_engine_embedder import HashingEmbedder

ACCEPTED = ["Seraphina", "👩\u200d🚀 Astronaut", "Kei\u00a0San", "soft\u00adhyphen",
            "zero\u200bwidth", "佐藤 花子", "🌸", "𠮷" * 80, "Émilie", "a\ufe0fb"]
REFUSED = ["tab\there", "new\nline", "nul\x00", "del\x7f", "c1\x85", "sep\u2028", "para\u2029",
           "lone\ud800", "𠮷" * 81, "", "   ", " padded "]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_app_and_the_import_accept_the_same_names():
    source = (ROOT / "web/store/characters.js").read_text("utf-8")
    rule = next(line for line in source.splitlines() if line.startswith("const NOT_IN_A_NAME"))
    script = "\n".join([
        "const MAX_NAME = 80;", rule, js_function(ROOT / "web/store/characters.js", "checkName"),
        f"const names = {json.dumps(ACCEPTED + REFUSED)};",
        "console.log(JSON.stringify(names.map((n) => { try { return checkName(n) === n; }"
        " catch { return false; } })));",
    ])
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    in_js = json.loads(out.stdout)

    def in_python(name: str) -> bool:
        try:
            return validate.character_name(name) == name
        except OmoideError:
            return False

    assert in_js == [in_python(n) for n in ACCEPTED + REFUSED]
    assert in_js == [True] * len(ACCEPTED) + [False] * len(REFUSED)


def test_an_export_of_such_names_imports_them_as_they_are():
    source = MemoryEngine(HashingEmbedder())
    for n in range(len(ACCEPTED)):
        source.remember(f"c{n}", f"memory of character {n}")
    names = {f"c{n}": name for n, name in enumerate(ACCEPTED)}
    data = json.loads(json.dumps(exchange.export_data(source, names=names)))
    target = MemoryEngine(HashingEmbedder())
    report = exchange.import_data(target, data)
    assert report["names"] == names


def test_a_name_that_breaks_the_rule_is_repaired_not_refused():
    source = MemoryEngine(HashingEmbedder())
    source.remember("kei", "Kei likes tea")
    data = json.loads(json.dumps(exchange.export_data(source, names={"kei": "Kei"})))
    for given, repaired in [("Kei\tSan", "Kei San"), ("Kei\ud800", "Kei\ufffd"),
                            ("\n\t", "kei"), ("x" * 90, "x" * 80)]:
        data["characters"][0]["name"] = given
        report = exchange.import_data(MemoryEngine(HashingEmbedder()), data)
        assert report["names"] == {"kei": repaired}
