"""A call whose parameters nest deeper than any verb takes (a meta 2,000 levels deep, as a
granted chat app may send) gets the same clear error as one 20 levels deep, never a call
that never answers; the engine answers the next call."""

from __future__ import annotations

import pytest

from .conftest import engine_call, wait_ready


@pytest.mark.parametrize("depth", [20, 2000, 20000])
def test_a_meta_nested_too_deep_is_refused_naming_it(launch, app_url, tmp_path, depth):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    code, message = page.evaluate("""(depth) => {
      let meta = {};
      for (let i = 0; i < depth; i++) meta = { a: meta };
      return Promise.race([
        window.omoide.call("remember", { character: "rin", text: "Rin likes tea", meta })
          .then(() => ["stored", ""], (e) => [e.name, e.message]),
        new Promise((ok) => setTimeout(() => ok(["no answer", ""]), 15000)),
      ]);
    }""", depth)
    if code == "RangeError":  # too deep for the page's own postMessage: it never left
        assert "postMessage" in message
    else:
        assert code == "INVALID_ARGUMENT" and ("meta" in message or "params" in message), (
            code, message)
    assert engine_call(page, "memories", {"character": "rin"}) == []
    engine_call(page, "remember", {"character": "rin", "text": "Rin likes tea"})


@pytest.mark.parametrize(("params", "field"), [
    ("{character: 'rin', text: 'Rin likes tea', conversation: 'c', turn: NaN}", "turn"),
    ("{character: 'rin', text: 'Rin likes tea', meta: {score: Infinity}}", "meta.score"),
    ("{character: 'rin', text: 'Rin likes tea', meta: new Map([['a', 1]])}", "meta"),
    ("{character: 'rin', text: 'Rin likes tea', meta: {d: new Date(0)}}", "meta.d"),
])
def test_what_json_cannot_say_is_refused_naming_it(launch, app_url, tmp_path, params, field):
    """NaN became null on the way (a turn of NaN was stored as the next turn), a Map {}."""
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    code, message = call_error_js(page, "remember", params)
    assert code == "INVALID_ARGUMENT" and f"Invalid {field}:" in message, (code, message)
    assert engine_call(page, "memories", {"character": "rin"}) == []


def call_error_js(page, method: str, params_js: str) -> tuple[str, str]:
    return page.evaluate(f"""() => window.omoide.call({method!r}, {params_js})
        .then(() => ["stored", ""], (e) => [e.name, e.message])""")
