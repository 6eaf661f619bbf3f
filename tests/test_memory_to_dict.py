"""``Memory.to_dict`` / ``Hit.to_dict`` give exactly what ``dataclasses.asdict`` gave (the
recall replies of the browser, the MCP server and the CLI are built from them), and a caller
that edits the returned data never edits the stored memory."""

from dataclasses import asdict

from hypothesis import given
from hypothesis import strategies as st

from omoide.engine.memory import Hit, Memory

json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                          max_leaves=12)
memories = st.builds(
    Memory, id=st.text(min_size=1, max_size=8), character_id=st.just("c"), text=st.text(),
    kind=st.sampled_from(["fact", "preference"]), type=st.just("factual"),
    key=st.none() | st.text(max_size=5), importance=st.floats(0, 1),
    created_at=st.floats(0, 2e9), updated_at=st.floats(0, 2e9),
    last_recalled_at=st.none() | st.floats(0, 2e9), recall_count=st.integers(0, 9),
    meta=st.dictionaries(st.text(max_size=5), json_value, max_size=4),
    context=st.none() | st.text(max_size=9), conversation=st.none() | st.text(max_size=4),
    turn=st.none() | st.integers(0, 99))


@given(memories)
def test_memory_to_dict_is_asdict(memory):
    assert memory.to_dict() == asdict(memory)
    assert list(memory.to_dict()) == list(asdict(memory))


@given(memories, st.floats(allow_nan=False), st.none() | st.floats(allow_nan=False),
       st.none() | st.integers(1, 50), st.floats(0, 1), st.none() | st.booleans())
def test_hit_to_dict_is_asdict(memory, score, bm25, rank, relevance, in_frame):
    hit = Hit(memory, score, score, bm25, rank, None, relevance, in_frame)
    assert hit.to_dict() == asdict(hit)
    assert list(hit.to_dict()) == list(asdict(hit))


def test_returned_meta_is_a_copy():
    memory = Memory("m1", "c", "text", "fact", "factual", None, 0.5, 1.0, 1.0,
                    meta={"source": {"tags": ["a"]}})
    data = memory.to_dict()
    data["meta"]["source"]["tags"].append("b")
    data["meta"]["new"] = 1
    assert memory.meta == {"source": {"tags": ["a"]}}
    Hit(memory, 1.0, 1.0, None, 1, None).to_dict()["memory"]["meta"]["source"]["x"] = 2
    assert memory.meta == {"source": {"tags": ["a"]}}
