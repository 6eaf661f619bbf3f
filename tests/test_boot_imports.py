"""What the browser engine's boot imports (web/engine-worker.js imports these modules before
"ready"): nothing that only extraction needs. Compiling the EN/JA rule patterns was most of
the governance import; they load on the first extraction instead, with the same results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PY = Path(__file__).resolve().parent.parent / "py"
sys.path.insert(0, str(PY))
from omoide.browser.preload import BOOT_MODULES  # noqa: E402

# The modules engine-worker.js imports before it reports "ready" (and before its snapshot).
BOOT = ", ".join(BOOT_MODULES)
JAVASCRIPT = {"js", "pyodide", "pyodide.ffi", "pyodide_js", "omoide_vectors", "omoide_host"}
RULES = ("omoide.governance.extract_en", "omoide.governance.extract_ja")


def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        cwd=PY, env={"PYTHONPATH": str(PY)}, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_boot_does_not_import_the_extraction_rules():
    loaded = loaded_after(f"import {BOOT}")
    assert "omoide.browser.session" in loaded
    assert "omoide.governance.governor" in loaded
    assert not loaded & set(RULES)


def test_the_first_extraction_imports_them_and_extracts():
    loaded = loaded_after(
        "from omoide.governance.extract import extract\n"
        "en = extract([{'role': 'user', 'content': 'I love green tea.'}])\n"
        "ja = extract([{'role': 'user', 'content': '緑茶が大好きです。'}])\n"
        "assert en and ja, (en, ja)")
    assert set(RULES) <= loaded


def test_the_snapshot_preload_imports_the_boot_modules_and_touches_no_javascript():
    """Only pure Python may run before Pyodide's memory snapshot (web/engine-worker.js
    startPython): importing the boot modules must not import a JS module."""
    loaded = loaded_after("import omoide.browser.preload as p\np.import_boot_modules()")
    assert set(BOOT_MODULES) <= loaded
    assert not loaded & JAVASCRIPT
    assert not loaded & set(RULES)


def test_after_restore_draws_a_fresh_random_state():
    out = subprocess.run(
        [sys.executable, "-c", "import random\nfrom omoide.browser.preload import after_restore\n"
         "random.seed(7)\nstate = random.getstate()\nafter_restore()\n"
         "print(random.getstate() != state)"],
        cwd=PY, env={"PYTHONPATH": str(PY)}, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
