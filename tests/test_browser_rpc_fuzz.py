"""The browser's rpc verbs (``omoide.browser.rpc.dispatch``, the engine worker's Python, under
CPython) given arguments of any shape: a refused call names what is wrong (never the
"INTERNAL" of an exception nobody caught) and leaves nothing to commit, the engine as it was.
The worker commits whatever a call left pending, even when the call failed, so a verb that
wrote before it refused would persist half a call. (Found this way: ``ingest`` with a number
among its messages.)"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.browser import rpc, session
from tests.test_conversation_paths import browser_session

# each verb's own parameters (each present or not, of any shape) and one of any name
VERBS = {
    "remember": ["text", "kind", "key", "importance", "meta", "context", "conversation",
                 "turn"],
    "remember_many": ["items", "conversation"],
    "update": ["id", "text", "kind", "key", "importance", "meta", "context"],
    "forget": ["id"], "restore": ["id"],
    "ingest": ["messages", "dry_run", "at", "conversation"],
    "summarize": ["older_than_days", "dry_run"],
    "purge_trash": [],
    "apply_settings": ["values"],
    "recall": ["query", "k", "mode", "threshold", "rrf_k", "fusion", "kinds", "count",
               "min_relevance", "now"],
    "prompt_context": ["query", "token_budget", "k"],
    "memories_page": ["offset", "limit", "kind", "tier", "text"],
    "memories": [], "hot_context": [], "audit": [], "stats": [], "trash": [],
    "get": ["id"], "memory_info": [], "export_data": ["characters", "with_vectors"],
}
WRITE_VERBS = ["remember", "remember_many", "update", "forget", "restore", "ingest",
               "summarize", "purge_trash", "apply_settings"]
READ_VERBS = sorted(set(VERBS) - set(WRITE_VERBS))
NAMES = sorted({name for names in VERBS.values() for name in names} | {"character"})
FIELDS = ["text", "kind", "key", "importance", "meta", "context", "conversation", "turn",
          "role", "content", "at", "id"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**10),
                    st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.text(max_size=12),
                    st.sampled_from(["aoi", "fact", "preference", "k1", "c1", "", " "]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4)),
    max_leaves=10)
objects = st.dictionaries(st.sampled_from(FIELDS), values, max_size=4)
sentences = st.sampled_from(["I always drink green tea in the morning.", "Aoi likes tea",
                             "私は猫を二匹飼っています。", "x", "  "])
# what each parameter usually is, so that a call gets past its other parameters
PLAUSIBLE = {
    "text": sentences, "query": sentences, "kind": st.sampled_from(["fact", "preference"]),
    "key": st.sampled_from([None, "k1", "k2"]), "importance": st.floats(0, 1),
    "meta": st.sampled_from([{}, {"note": 1}]), "context": st.none() | sentences,
    "conversation": st.sampled_from([None, "c1"]), "turn": st.none() | st.integers(0, 5),
    "dry_run": st.booleans(), "at": st.sampled_from([None, 1.7e9]),
    "messages": st.lists(st.one_of(
        sentences, st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                          "content": sentences})), max_size=3),
    "items": st.lists(st.fixed_dictionaries({"text": sentences}, optional={
        "kind": st.sampled_from(["fact", "habit"]), "key": st.sampled_from([None, "k1"])}),
        max_size=3),
    "k": st.integers(1, 20), "mode": st.sampled_from(["hybrid", "vector", "fulltext"]),
    "offset": st.integers(0, 3), "limit": st.integers(1, 50),
}
# the list arguments also get lists of what their items may be
LISTS = {"messages": st.lists(st.one_of(sentences, objects, scalars), max_size=3),
         "items": st.lists(st.one_of(objects, scalars), max_size=3)}


def argument(name: str) -> st.SearchStrategy:
    return st.one_of(PLAUSIBLE.get(name, values), LISTS.get(name, values), values)


def calls(verbs: list[str]) -> st.SearchStrategy:
    """(verb, params): each of the verb's own parameters absent, usual or of any shape, and
    now and then one parameter of any name."""
    return st.sampled_from(verbs).flatmap(lambda verb: st.tuples(
        st.just(verb),
        st.fixed_dictionaries({}, optional={n: argument(n) for n in VERBS[verb]}),
        st.one_of(st.just({}), st.just({}), st.just({}),
                  st.dictionaries(st.sampled_from(NAMES), values, min_size=1, max_size=1))))


def state(engine) -> dict:
    return {c: (sorted((m.id, m.text, m.kind, m.key, m.importance, json.dumps(m.meta),
                        m.context, m.conversation, m.turn) for m in engine.memories(c)),
                sorted(t.memory.id for t in engine.trash(c)))
            for c in engine.characters()}


def check(verb: str, given: dict, data: st.DataObject) -> None:
    params = dict(given)
    fake = browser_session()
    session.SESSION = fake
    try:
        kept = fake.engine.remember("aoi", "Aoi likes tea", key="k1", conversation="c1")
        fake.engine.forget("aoi", fake.engine.remember("aoi", "gone").id)
        fake.listener.discard()
        params.setdefault("character", "aoi")
        if "id" not in params and data.draw(st.booleans()):
            params["id"] = kept.id
        before = state(fake.engine)
        reply = json.loads(rpc.dispatch(verb, json.dumps(params)))
        if not reply["ok"]:
            assert reply["error"]["code"] != "INTERNAL", reply["error"]
            assert fake.listener.pending == [], "a refused call left changes to commit"
            assert state(fake.engine) == before
    finally:
        session.SESSION = None


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(calls(WRITE_VERBS), st.data())
def test_a_refused_write_names_its_reason_and_leaves_nothing_to_commit(call, data):
    verb, own, extra = call
    check(verb, {**extra, **own}, data)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(calls(READ_VERBS), st.data())
def test_a_read_never_fails_with_an_internal_error(call, data):
    verb, own, extra = call
    check(verb, {**extra, **own}, data)
