"""The recall tab with the English-only MiniLM selected: a Japanese query is answered by full
text alone (engine/recall.py, embeddings/scripts.py), and the raw scores say the vector
ranker was not asked instead of claiming it ran and missed; an English query still shows
both rankers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from buildtools.serve import AppServer

from .conftest import DIST, E5, engine_call, open_app_offline, tab

MINILM = "omoide/all-MiniLM-L6-v2"
CHARACTER = "ren"
MEMORIES = ["レンは毎朝コーヒーを飲む", "レンは京都に住んでいる", "Ren plays the violin on Sundays",
            "Ren is allergic to cats"]


@pytest.fixture(scope="module")
def server() -> Iterator[AppServer]:
    server = AppServer(DIST, port=31637).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def page(browser_type, server, tmp_path_factory) -> Iterator[Page]:
    context, page = open_app_offline(browser_type, server, tmp_path_factory.mktemp("profile"),
                                     models=(E5, MINILM))
    engine_call(page, "select_model", {"model": MINILM, "dtype": "q8"})
    engine_call(page, "create_character", {"name": "Ren", "id": CHARACTER})
    for text in MEMORIES:
        engine_call(page, "remember", {"character": CHARACTER, "text": text})
    page.reload()
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    yield page
    context.close()


def ask(page: Page, query: str) -> None:
    tab(page, "recall")
    page.select_option("#current-character", CHARACTER)
    page.fill("#recall-min-relevance", "0")
    page.fill("#recall-query", query)
    page.select_option("#recall-mode", "hybrid")
    page.click("#recall-search")


def test_a_query_the_model_cannot_read_says_the_vector_ranker_was_not_asked(page: Page) -> None:
    ask(page, "コーヒーを飲む")
    first = page.locator("#recall-results li.result").first
    expect(first).to_contain_text("コーヒー")
    first.locator("details.raw summary").click()
    scores = first.locator("details.raw .scores")
    vector = scores.locator(".component", has_text="vector")
    expect(vector).to_contain_text("not asked")
    expect(vector).not_to_contain_text("not matched")
    expect(scores.locator(".component", has_text="full-text")).to_contain_text("(#1)")
    hits = engine_call(page, "recall", {"character": CHARACTER, "query": "コーヒーを飲む",
                                        "min_relevance": 0})
    assert hits and all(h["vector_cosine"] is None for h in hits)


def test_a_query_the_model_reads_shows_both_rankers(page: Page) -> None:
    ask(page, "violin on Sundays")
    first = page.locator("#recall-results li.result").first
    expect(first).to_contain_text("violin")
    first.locator("details.raw summary").click()
    scores = first.locator("details.raw .scores")
    expect(scores.locator(".component", has_text="vector")).to_contain_text("(#")
    expect(scores).not_to_contain_text("not asked")
