"""The recall tab with the English-only MiniLM selected: a Japanese query is answered by full
text alone (engine/recall.py, embeddings/scripts.py), and the raw scores say the vector
ranker was not asked instead of claiming it ran and missed; an English query still shows
both rankers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import E5, engine_call, module_server, open_app_offline, tab

MINILM = "omoide/all-MiniLM-L6-v2"
CHARACTER = "ren"
MEMORIES = ["レンは毎朝コーヒーを飲む", "レンは京都に住んでいる", "Ren plays the violin on Sundays",
            "Ren is allergic to cats"]


server = module_server(31637)


@pytest.fixture(scope="module")
def page(browser_type, server, module_profile) -> Iterator[Page]:
    context, page = open_app_offline(browser_type, server, module_profile,
                                     models=(E5, MINILM))
    engine_call(page, "select_model", {"model": MINILM, "dtype": "q8"})
    engine_call(page, "create_character", {"name": "Ren", "id": CHARACTER})
    for text in MEMORIES:
        engine_call(page, "remember", {"character": CHARACTER, "text": text})
    page.reload()
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    yield page
    context.close()


def raw_scores_of_first_hit(page: Page, query: str, holds: str) -> Locator:
    """Ask ``query`` in the recall tab (hybrid, no cut-off); the first hit's raw scores."""
    tab(page, "recall")
    page.select_option("#current-character", CHARACTER)
    page.fill("#recall-min-relevance", "0")
    page.fill("#recall-query", query)
    page.select_option("#recall-mode", "hybrid")
    page.click("#recall-search")
    first = page.locator("#recall-results li.result").first
    expect(first).to_contain_text(holds)
    first.locator("details.raw summary").click()
    return first.locator("details.raw .scores")


def test_a_query_the_model_cannot_read_says_the_vector_ranker_was_not_asked(page: Page) -> None:
    scores = raw_scores_of_first_hit(page, "コーヒーを飲む", "コーヒー")
    vector = scores.locator(".component", has_text="vector")
    expect(vector).to_contain_text("not asked")
    expect(vector).not_to_contain_text("not matched")
    expect(scores.locator(".component", has_text="full-text")).to_contain_text("(#1)")
    hits = engine_call(page, "recall", {"character": CHARACTER, "query": "コーヒーを飲む",
                                        "min_relevance": 0})
    assert hits and all(h["vector_cosine"] is None for h in hits)


def test_a_query_the_model_reads_shows_both_rankers(page: Page) -> None:
    scores = raw_scores_of_first_hit(page, "violin on Sundays", "violin")
    expect(scores.locator(".component", has_text="vector")).to_contain_text("(#")
    expect(scores).not_to_contain_text("not asked")
