"""The origin a user allows on the maintenance tab is kept as the browser names the origin of
a message (``event.origin``), the form the bridge compares with: what people copy from the
address bar (a trailing slash, capitals, the default port, a Unicode host) is that origin,
not an error (it was refused, or, had it been kept as typed, would never have matched). A
path, query, fragment or user is refused: a grant is for a whole origin."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.test_character_ids import ROOT, js_function

KEPT = {
    "https://chat.example": "https://chat.example",
    "https://chat.example/": "https://chat.example",
    "HTTPS://Chat.Example": "https://chat.example",
    "http://127.0.0.1:80": "http://127.0.0.1",
    "https://chat.example:443/": "https://chat.example",
    "http://localhost:8000": "http://localhost:8000",
    "https://bücher.example": "https://xn--bcher-kva.example",
}
REFUSED = ["https://chat.example/app", "https://chat.example/?x=1", "https://chat.example/#top",
           "https://user:pw@chat.example", "ftp://chat.example", "chat.example", "", "null",
           "file:///home/me/page.html", "javascript:alert(1)"]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_an_origin_is_kept_as_the_browser_names_it_and_a_page_is_refused():
    script = "\n".join([
        "function invalid(name, reason) { return Object.assign(new Error(reason), "
        "{ name: 'INVALID_ARGUMENT' }); }",
        js_function(ROOT / "web/store/origins.js", "checkOrigin"),
        f"const given = {json.dumps(list(KEPT) + REFUSED)};",
        "console.log(JSON.stringify(given.map((o) => { try { return checkOrigin(o); }"
        " catch (e) { return e.name; } })));",
    ])
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == list(KEPT.values()) + ["INVALID_ARGUMENT"] * len(REFUSED)
