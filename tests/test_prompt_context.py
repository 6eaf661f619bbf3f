"""``prompt_context`` (what the JS client's ``context`` returns): hot memories then recalled
ones, deduplicated, dated, never over the token budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from omoide.governance import Governor
from omoide.governance.prompt import estimate_tokens, prompt_context
from tests.test_engine_embedder import HashingEmbedder

MAY_1 = 1_714_521_600.0  # 2024-05-01 00:00 UTC


def governor() -> Governor:
    return Governor(MemoryEngine(HashingEmbedder(), clock=lambda: MAY_1))


def test_hot_then_recalled_dated_and_deduplicated():
    gov = governor()
    rule = gov.engine.remember("rin", "Rin never eats meat", kind="pattern", importance=0.9)
    gov.promote("rin", rule.id, pin=True)
    gov.engine.remember("rin", "Rin loves green tea", kind="preference", at=MAY_1 - 86_400)
    gov.engine.remember("rin", "Rin's cat is called Mochi")
    block = prompt_context(gov, "rin", "what tea does Rin drink?", 200)
    lines = block["text"].splitlines()
    assert lines[0] == "- (2024-05-01, pattern) Rin never eats meat"
    assert "- (2024-04-30, preference) Rin loves green tea" in lines
    assert [m["id"] for m in block["hot"]] == [rule.id]
    assert rule.id not in [m["id"] for m in block["recalled"]]  # once only
    assert len(lines) == len(block["hot"]) + len(block["recalled"])
    assert block["tokens"] == sum(estimate_tokens(x) + 1 for x in lines)


def test_unknown_character_gives_an_empty_block():
    assert prompt_context(governor(), "nobody", "tea", 100) == {
        "text": "", "tokens": 0, "hot": [], "recalled": []}


@pytest.mark.parametrize("budget", [0, -1, True, 1.5, 10**9, "100"])
def test_bad_budgets_are_refused(budget):
    with pytest.raises(OmoideError) as e:
        prompt_context(governor(), "rin", "tea", budget)
    assert e.value.fields["name"] == "tokenBudget"


def test_token_estimate():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("緑茶が好き") == 5
    assert estimate_tokens("tea 緑茶") == 1 + 2


@given(st.lists(st.text(alphabet=st.sampled_from("ab 緑茶.x"), min_size=1, max_size=80)
                .filter(str.strip), min_size=1, max_size=12),
       st.integers(min_value=1, max_value=120))
@settings(max_examples=60, deadline=None)
def test_never_over_the_budget(texts, budget):
    gov = governor()
    gov.engine.remember_many("rin", texts)
    block = prompt_context(gov, "rin", texts[0], budget)
    assert block["tokens"] <= budget
    assert sum(estimate_tokens(x) + 1 for x in block["text"].splitlines()) == block["tokens"]
    ids = [m["id"] for m in block["hot"] + block["recalled"]]
    assert len(ids) == len(set(ids))
