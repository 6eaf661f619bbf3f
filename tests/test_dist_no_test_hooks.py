"""The production build ships no test hook: write-failure injection lives in
tests/browser/faults.py and is injected into the engine worker by the browser tests only."""

from __future__ import annotations

import os
from pathlib import Path

from tests.browser.faults import HOOK_NAMES

ROOT = Path(__file__).resolve().parents[1]
DIST = Path(os.environ.get("OMOIDE_DIST", ROOT / "dist"))
# Our own code and what the page loads with it; model weights are binary, not scanned.
TEXT_SUFFIXES = {".js", ".mjs", ".html", ".json", ".css"}


def shipped_text_files() -> list[Path]:
    return [p for p in DIST.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
            and "models" not in p.relative_to(DIST).parts]


def test_production_dist_holds_no_hook_name() -> None:
    files = shipped_text_files()
    # the build is there (build.py test builds first): a missing dist/ must fail, not pass
    assert DIST / "engine-worker.js" in files and DIST / "store" / "db.js" in files
    found = [(p.relative_to(DIST).as_posix(), name) for p in files
             for name in HOOK_NAMES if name in p.read_text(errors="replace")]
    assert found == []


def test_the_sources_hold_no_hook_name_either() -> None:
    # web/ is what dist/ is built from: a hook added there would ship with the next build
    web = ROOT / "web"
    found = [(p.relative_to(web).as_posix(), name) for p in web.rglob("*.js")
             for name in HOOK_NAMES if name in p.read_text(errors="replace")]
    assert found == []
