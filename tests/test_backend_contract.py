"""The MemoryBackend contract: the SAME tests run against the SQLite backend and against the
HTTP backend talking to the reference server on loopback."""

from __future__ import annotations

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.backends.sqlite import SQLiteBackend
from omoide.errors import OmoideError
from tests.backend_fixtures import make_record, running_server

PORT = 27671


@pytest.fixture(params=["sqlite", "http"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        b = SQLiteBackend(tmp_path / "m.db")
        b.initialize()
        yield b
        b.shutdown()
        return
    with running_server(tmp_path / "server.db", PORT, api_key="s3cret"):
        yield HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key="s3cret", timeout=5))


def test_create_then_get_round_trips_every_field(backend):
    record = make_record("alice", "Alice loves green tea 緑茶", kind="preference",
                         key="drink", meta={"source": "chat"}, vector=[0.0, 0.0, -1.0])
    created = backend.create(record)
    assert created["id"] == record["id"]
    got = backend.get(record["id"], with_vector=True)
    assert got["text"] == "Alice loves green tea 緑茶"
    assert got["kind"] == "preference" and got["key"] == "drink"
    assert got["meta"] == {"source": "chat"}
    assert got["vector"] == [0.0, 0.0, -1.0]  # at length 1 already: kept exactly
    assert got["trashed_at"] is None
    assert backend.get(record["id"])["vector"] is None  # vectors only on request


def test_a_vector_of_another_length_is_stored_at_length_1(backend):
    """Every kernel scores by dot product: a client's row of another length would skew every
    score of its character once pulled into an engine (validate.unit_length)."""
    record = make_record("alice", "Alice loves green tea", vector=[0.5, 0.25, -1.0])
    backend.create(record)
    got = backend.get(record["id"], with_vector=True)["vector"]
    norm = (0.5**2 + 0.25**2 + 1.0) ** 0.5
    assert got == pytest.approx([0.5 / norm, 0.25 / norm, -1.0 / norm], abs=1e-7)
    with pytest.raises(OmoideError) as err:
        backend.create(make_record("alice", "no direction", vector=[0.0, 0.0, 0.0]))
    assert err.value.code in ("INVALID_RECORD", "BACKEND_HTTP")  # the server's 4xx
    assert "vector: is all zeros" in str(err.value)
    assert backend.health()["memories"] == 1


def test_create_refuses_a_taken_id_and_keeps_the_first(backend):
    record = make_record("alice", "first")
    backend.create(record)
    with pytest.raises(OmoideError) as err:
        backend.create(record | {"text": "second"})
    assert err.value.code == "BACKEND_CONFLICT"
    assert backend.get(record["id"])["text"] == "first"


def test_unknown_ids_are_none_and_false(backend):
    assert backend.get("01UNKNOWN0000000000000000") is None
    assert backend.update("01UNKNOWN0000000000000000", {"text": "x"}) is None
    assert backend.delete("01UNKNOWN0000000000000000") is False


def test_update_changes_only_given_fields_never_the_owner(backend):
    record = make_record("alice", "Alice likes tea", importance=0.3)
    backend.create(record)
    updated = backend.update(record["id"], {"importance": 0.9, "trashed_at": 5.0})
    assert updated["importance"] == 0.9 and updated["trashed_at"] == 5.0
    assert updated["text"] == "Alice likes tea"
    same = backend.update(record["id"], {"character_id": "alice", "importance": 0.8})
    assert (same["character_id"], same["importance"]) == ("alice", 0.8)


def test_an_update_naming_another_character_is_refused(backend):
    """Two workspaces can hold one id under two characters (an export edited and imported);
    their backup server took one's update of it over the other's memory (the character was
    dropped from the change)."""
    record = make_record("alice", "Alice keeps her spare key under the blue pot", importance=0.4)
    backend.create(record)
    with pytest.raises(OmoideError) as err:
        backend.update(record["id"], {"character_id": "bob", "text": "Bob: meeting on Friday",
                                      "vector": record["vector"], "importance": 0.1})
    assert err.value.code in ("MEMORY_OWNER_CONFLICT", "BACKEND_HTTP")
    assert err.value.code == "MEMORY_OWNER_CONFLICT" or err.value.fields["status"] == 409
    kept = backend.get(record["id"])
    assert (kept["character_id"], kept["text"], kept["importance"]) == (
        "alice", record["text"], record["importance"])


def test_bad_records_and_updates_are_refused_with_a_clear_error(backend):
    for bad in ({"id": "x", "character_id": "alice"},  # no text
                make_record("alice", "   "),
                make_record("alice", "ok", kind="gossip"),
                make_record("alice", "ok", vector=["a"])):
        with pytest.raises(OmoideError) as err:
            backend.create(bad)
        assert err.value.code in ("INVALID_RECORD", "BACKEND_HTTP")
        assert "text" in str(err.value) or "kind" in str(err.value) or "vector" in str(
            err.value)
    record = make_record("alice", "fine")
    backend.create(record)
    with pytest.raises(OmoideError):
        backend.update(record["id"], {"colour": "red"})
    assert backend.get(record["id"])["text"] == "fine"


def test_a_new_text_without_its_vector_is_refused(backend):
    """A PATCH of the text alone kept the vector of the old words: recall scored the memory
    as unrelated to what it now says (cosine 0.13 with its own text)."""
    record = make_record("alice", "Alice plays the violin")
    backend.create(record)
    with pytest.raises(OmoideError) as err:
        backend.update(record["id"], {"text": "Alice plays the cello"})
    assert "vector" in str(err.value)
    assert backend.get(record["id"])["text"] == "Alice plays the violin"
    new = make_record("alice", "Alice plays the cello")["vector"]
    changed = backend.update(record["id"], {"text": "Alice plays the cello", "vector": new})
    assert changed["text"] == "Alice plays the cello"
    assert backend.update(record["id"], {"text": "Alice plays the cello",  # the same words
                                         "importance": 0.8})["importance"] == 0.8


def test_delete_removes_for_good(backend):
    record = make_record("alice", "to delete")
    backend.create(record)
    assert backend.delete(record["id"]) is True
    assert backend.get(record["id"]) is None
    assert backend.delete(record["id"]) is False


def test_list_filters_pages_and_totals_per_kind(backend):
    for i in range(5):
        backend.create(make_record("alice", f"fact {i}"))
    backend.create(make_record("alice", "likes tea", kind="preference"))
    trashed = make_record("alice", "old", kind="diary", trashed_at=3.0)
    backend.create(trashed)
    backend.create(make_record("bob", "bob fact"))
    page = backend.list(character_id="alice", limit=2, offset=0)
    assert page["total"] == 6 and len(page["items"]) == 2
    assert page["totals_by_kind"] == {"fact": 5, "preference": 1}
    assert all(r["character_id"] == "alice" for r in page["items"])
    rest = backend.list(character_id="alice", limit=10, offset=2)
    ids = [r["id"] for r in page["items"] + rest["items"]]
    assert len(ids) == len(set(ids)) == 6
    prefs = backend.list(character_id="alice", kind="preference")
    assert [r["text"] for r in prefs["items"]] == ["likes tea"] and prefs["total"] == 1
    only_trash = backend.list(character_id="alice", trashed=True)
    assert [r["id"] for r in only_trash["items"]] == [trashed["id"]]
    everything = backend.list(trashed=None, limit=100)
    assert everything["total"] == 8
    with_vectors = backend.list(character_id="bob", with_vectors=True)
    assert with_vectors["items"][0]["vector"] == [1.0, 0.0, 0.0]


def test_search_stays_inside_one_character(backend):
    backend.create(make_record("alice", "Alice loves green tea"))
    backend.create(make_record("alice", "Alice went hiking on Sunday"))
    backend.create(make_record("bob", "Bob loves green tea too"))
    hits = backend.search("green tea", character_id="alice", k=5)
    assert [h["memory"]["text"] for h in hits] == ["Alice loves green tea"]
    assert hits[0]["score"] > 0 and "vector" not in hits[0]["memory"]
    assert backend.search("green tea", character_id="carol") == []


def test_search_japanese_and_by_vector(backend):
    backend.create(make_record("alice", "アリスは緑茶が好きです", vector=[0.0, 1.0, 0.0]))
    backend.create(make_record("alice", "アリスは日曜日に山へ行った", vector=[1.0, 0.0, 0.0]))
    hits = backend.search("緑茶", character_id="alice")
    assert hits[0]["memory"]["text"] == "アリスは緑茶が好きです"
    by_vector = backend.search("", character_id="alice", vector=[0.1, 0.9, 0.0],
                               model="test@f32#3", k=1)
    assert [h["memory"]["text"] for h in by_vector] == ["アリスは緑茶が好きです"]


def test_a_query_vector_meets_only_its_own_models_vectors(backend):
    """Two models of the same dimension never mix: records stamped with another model are
    not compared, and a vector without its model is refused."""
    backend.create(make_record("alice", "from model A", vector=[1.0, 0.0, 0.0]))
    backend.create(make_record("alice", "from model B", vector=[1.0, 0.0, 0.0],
                               model="other@f32#3"))
    hits = backend.search("", character_id="alice", vector=[1.0, 0.0, 0.0], model="other@f32#3")
    assert [h["memory"]["text"] for h in hits] == ["from model B"]
    with pytest.raises(OmoideError) as err:
        backend.search("", character_id="alice", vector=[1.0, 0.0, 0.0])
    assert "model" in str(err.value)


def test_search_skips_trashed_and_filters_kinds(backend):
    backend.create(make_record("alice", "tea in the trash", trashed_at=2.0))
    backend.create(make_record("alice", "tea preference", kind="preference"))
    backend.create(make_record("alice", "tea fact"))
    hits = backend.search("tea", character_id="alice", kinds=["preference"])
    assert [h["memory"]["text"] for h in hits] == ["tea preference"]


def test_health_reports_ok(backend):
    backend.create(make_record("alice", "one"))
    health = backend.health()
    assert health["ok"] is True and health["memories"] == 1
    assert health["latency_ms"] >= 0


def test_sqlite_search_sees_writes_of_another_connection(tmp_path):
    """SQLiteBackend keeps each character's BM25 index between searches; a write through
    this backend or through another connection to the file (the CLI while the reference
    server runs) must show in the next search."""
    server_side = SQLiteBackend(tmp_path / "shared.db")
    cli_side = SQLiteBackend(tmp_path / "shared.db")
    server_side.create(make_record("alice", "Alice loves green tea"))
    assert len(server_side.search("tea", character_id="alice")) == 1
    cli_side.create(make_record("alice", "Alice drinks tea at night"))
    assert len(server_side.search("tea", character_id="alice")) == 2
    gone = server_side.search("green", character_id="alice")[0]["memory"]["id"]
    server_side.update(gone, {"trashed_at": 1.0})
    assert [h["memory"]["text"] for h in server_side.search("tea", character_id="alice")] == [
        "Alice drinks tea at night"]
    hit = server_side.search("night", character_id="alice")[0]
    hit["memory"]["text"] = "mutated by a caller"
    assert server_side.search("night", character_id="alice")[0]["memory"]["text"] == (
        "Alice drinks tea at night")


def test_what_would_be_silently_ignored_is_refused_naming_the_field(backend):
    """A new id in an update (dropped: 200 and the record unchanged), an unknown kind as a
    filter (an empty page) and a query vector of another length than its model's (no
    results) each looked like an answer."""
    record = make_record("alice", "Alice likes tea", importance=0.4)
    backend.create(record)
    checks = [
        (lambda: backend.update(record["id"], {"id": "other", "importance": 0.9}), "id"),
        (lambda: backend.list(character_id="alice", kind="bogus"), "kind"),
        (lambda: backend.search("", character_id="alice", vector=[1.0, 2.0],
                                model="test@f32#3"), "vector"),
    ]
    for call, field in checks:
        with pytest.raises(OmoideError) as err:
            call()
        assert field in str(err.value)
        assert err.value.code != "BACKEND_HTTP" or err.value.fields["status"] == 400
    assert backend.get(record["id"])["importance"] == record["importance"]
