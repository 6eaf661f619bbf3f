"""The engine worker's rpc entry point: replies carry where the time went and whether the
call left anything to commit (the worker skips its commit call when not)."""

import json

import pytest

from omoide.browser import phases, rpc, session
from omoide.engine.listener import Change


@pytest.fixture
def verb():
    @rpc.handler("test_phased")
    def phased(n: int = 1) -> int:
        with phases.phase("embed"):
            sum(range(1000))
        phases.add("embed", 1.5)
        return n + 1

    yield "test_phased"
    rpc.HANDLERS.pop("test_phased")


def test_a_reply_carries_its_phases(verb):
    reply = json.loads(rpc.dispatch(verb, json.dumps({"n": 2})))
    assert reply["ok"] and reply["result"] == 3
    taken = reply["phases"]
    assert set(taken) == {"verb", "json", "embed"}
    assert taken["embed"] >= 1.5 and taken["verb"] >= taken["embed"] - 1.5
    # each call starts from nothing
    assert "embed" not in json.loads(rpc.dispatch("diagnostics", "{}"))["phases"]


def test_an_error_reply_carries_phases_too():
    reply = json.loads(rpc.dispatch("no_such_verb", "{}"))
    assert not reply["ok"] and reply["error"]["code"] == "INVALID_ARGUMENT"
    assert "verb" in reply["phases"]


def test_commit_follows_the_session_listeners(verb, monkeypatch):
    monkeypatch.setattr(session, "SESSION", None)
    assert json.loads(rpc.dispatch(verb, "{}"))["commit"] is False
    s = session.Session("omoide/all-MiniLM-L6-v2", "q8")
    monkeypatch.setattr(session, "SESSION", s)
    assert json.loads(rpc.dispatch(verb, "{}"))["commit"] is False
    s.listener.on_change(Change("purge", "alice", "m1"))
    assert json.loads(rpc.dispatch(verb, "{}"))["commit"] is True
    s.listener.discard()
    s.queue_store.save([])
    assert json.loads(rpc.dispatch(verb, "{}"))["commit"] is True


def test_without_commit_checks_every_call_commits(verb, monkeypatch):
    monkeypatch.setattr(rpc, "COMMIT_CHECKS", [])
    assert json.loads(rpc.dispatch(verb, "{}"))["commit"] is True
