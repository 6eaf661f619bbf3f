"""The browser engine answers like the CPython engine, and a killed page loses no
acknowledged write and leaves no partial batch."""

from __future__ import annotations

import time

import pytest

from .conftest import cpython_engine, engine_call, open_with_model, wait_ready

MODEL = "omoide/all-MiniLM-L6-v2"
TEXTS = [
    "Mika prefers green tea to coffee in the morning.",
    "Mika decided to learn the violin this spring.",
    "Mika always commits before pushing.",
    "Mika does not like crowded trains.",
    "Mika's sister lives in Osaka near the river.",
    "Mika lost her umbrella on the Yamanote line.",
    "Mika is allergic to cats but loves them anyway.",
    "Mika plays chess with her grandfather every Sunday.",
    "Mika wants to climb Mount Fuji next summer.",
    "Mika bakes sourdough bread on Saturdays.",
    "ミカは朝に緑茶を飲むのが好きです。",
    "ミカは春からバイオリンを習うことにしました。",
    "ミカはいつもプッシュする前にコミットします。",
    "ミカは満員電車が好きではありません。",
    "ミカの妹は大阪の川の近くに住んでいます。",
    "ミカは日曜日に祖父とチェスをします。",
]
QUERIES = ["What does Mika drink in the morning?", "violin lessons", "Osaka sister",
           "チェス", "満員電車", "Mount Fuji climbing plans"]


def test_browser_recall_equals_cpython(launch, app_url, tmp_path):
    page = open_with_model(launch, app_url, tmp_path / "profile", MODEL)
    engine_call(page, "remember_many", {"character": "mika", "items": TEXTS})
    exported = engine_call(page, "export_data", {"with_vectors": True})
    engine = cpython_engine(exported)
    for query in QUERIES:
        for mode in ("vector", "fulltext", "hybrid"):
            browser = engine_call(page, "recall", {"character": "mika", "query": query,
                                                   "k": 8, "mode": mode})
            local = engine.recall("mika", query, k=8, mode=mode, touch=False)
            assert [h["memory"]["id"] for h in browser] == [h.memory.id for h in local], \
                (query, mode)
            for b, c in zip(browser, local, strict=True):
                assert b["score"] == pytest.approx(c.score, abs=1e-3), (query, mode)


@pytest.mark.parametrize("delay_ms", [0, 400, 1500])
def test_killed_page_keeps_acknowledged_writes_only(launch, app_url, tmp_path, delay_ms):
    profile = tmp_path / "profile"
    context = launch(profile)
    page = context.new_page()
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "select_model", {"model": MODEL, "dtype": "q8"})
    acknowledged = [f"acknowledged note {i}" for i in range(40)]
    engine_call(page, "remember_many", {"character": "kai", "items": acknowledged})
    batch = [f"in-flight note {i}" for i in range(200)]
    page.evaluate("(items) => { window.omoide.call('remember_many', "
                  "{character: 'kai', items}).catch(() => {}); }", batch)
    time.sleep(delay_ms / 1000)
    context.close()  # the browser dies with the batch in flight

    page = launch(profile).new_page()
    page.goto(app_url)
    wait_ready(page)
    texts = {m["text"] for m in engine_call(page, "memories", {"character": "kai"})}
    assert set(acknowledged) <= texts
    in_flight = texts - set(acknowledged)
    assert in_flight in (set(), set(batch)), f"partial batch: {len(in_flight)} of 200"
