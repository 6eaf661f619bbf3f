"""A lone surrogate (U+D800..U+DFFF, what JSON's "\\ud800" or undecodable bytes read with
``surrogateescape`` make) is refused with an error naming the field before anything is
written; before, the check passed it, SQLite failed on it mid-import and left half the file
written. A row already stored keeps loading (``stored=True``)."""

from __future__ import annotations

import io
import json
import sqlite3
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.cli import main
from omoide.engine import MemoryEngine, exchange, validate
from omoide.errors import OmoideError
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_exchange import factory

LONE = "\ud800"


def record(**fields):
    return {"id": "m1", "character_id": "rin", "text": "Rin likes tea"} | fields


@pytest.mark.parametrize("fields, named", [
    ({"text": f"tea {LONE}"}, "text"),
    ({"key": f"drink{LONE}"}, "key"),
    ({"context": f"said at breakfast {LONE}"}, "context"),
    ({"conversation": f"chat-{LONE}"}, "conversation"),
    ({"meta": {"note": f"x{LONE}"}}, "meta"),
    ({"meta": {f"k{LONE}": 1}}, "meta"),
    ({"meta": {"deep": [{"a": LONE}]}}, "meta"),
])
def test_a_new_record_with_a_lone_surrogate_is_refused_naming_the_field(fields, named):
    with pytest.raises(OmoideError) as caught:
        validate.record(record(**fields))
    assert caught.value.code == "INVALID_RECORD"
    assert caught.value.fields["field"] == named
    checked = validate.record(record(**fields), stored=True)  # a stored row still loads
    assert checked["id"] == "m1"


def test_a_pair_that_makes_one_character_is_text():
    assert validate.record(record(text="tea \ud83c\udf75".encode("utf-16", "surrogatepass")
                                  .decode("utf-16")))["text"] == "tea 🍵"


def test_remember_and_update_refuse_it_and_write_nothing(tmp_path):
    ws = open_workspace(tmp_path / "w.db", embedder=HashingEmbedder())
    try:
        kept = ws.engine.remember("rin", "Rin likes tea")
        for call in (lambda: ws.engine.remember("rin", f"Rin {LONE}"),
                     lambda: ws.engine.remember("rin", "Rin likes jam", key=LONE),
                     lambda: ws.engine.update("rin", kept.id, text=f"Rin {LONE}")):
            with pytest.raises(OmoideError) as caught:
                call()
            assert caught.value.code in ("INVALID_ARGUMENT", "INVALID_RECORD")
        assert [(m.id, m.text) for m in ws.engine.memories("rin")] == [(kept.id, kept.text)]
        assert ws.engine.trash("rin") == []
    finally:
        ws.close()


def _cli(db, *argv, stdin=None):
    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(db), *argv], embedder_factory=factory, stdout=out, stderr=err)
    return code, err.getvalue()


def _export_with_a_lone_surrogate(tmp_path):
    db = tmp_path / "src.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        for text in ("one", "two", "three"):
            ws.engine.remember("rin", f"Rin note {text}")
    finally:
        ws.close()
    path = tmp_path / "e.json"
    assert _cli(db, "export", str(path))[0] == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    data["characters"][0]["memories"][2]["text"] = f"Rin note {LONE}"
    return json.dumps(data)  # ASCII JSON: the surrogate as the escape "\ud800"


def _rows(db):
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM memories").fetchone()[0]


def test_an_import_holding_one_stores_the_replacement_character_and_says_so(tmp_path):
    """A browser export may hold one (IndexedDB keeps such strings and the app exports them
    as escapes): refusing the file would make the backup unusable over one broken
    character, and writing it crashed SQLite halfway. It is replaced by U+FFFD, counted."""
    path = tmp_path / "e.json"
    path.write_text(_export_with_a_lone_surrogate(tmp_path), encoding="utf-8")
    db = tmp_path / "dst.db"
    out = io.StringIO()
    code = main(["--db", str(db), "import", str(path)], embedder_factory=factory,
                stdout=out, stderr=io.StringIO())
    assert code == 0 and "1 broken characters (lone surrogates) replaced" in out.getvalue()
    assert _rows(db) == 3
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        assert "Rin note \ufffd" in {m.text for m in ws.engine.memories("rin")}
    finally:
        ws.close()


def test_the_replacement_walks_every_string_of_a_record():
    fixed, count = validate.without_lone_surrogates(
        {"text": f"a{LONE}b", "meta": {f"k{LONE}": ["x", LONE], "deep": [{"z": LONE}]}})
    assert count == 4
    assert fixed == {"text": "a\ufffdb", "meta": {"k\ufffd": ["x", "\ufffd"],
                                                   "deep": [{"z": "\ufffd"}]}}
    clean = {"text": "お茶", "meta": {}}
    assert validate.without_lone_surrogates(clean) == (clean, 0)


def test_standard_input_that_is_not_utf8_is_refused(tmp_path, monkeypatch):
    """stdin decodes with ``surrogateescape``: a damaged byte became a lone surrogate and
    the import wrote the rows before it. Now it is refused as the same file by path is."""
    text = _export_with_a_lone_surrogate(tmp_path).replace("\\ud800", "ok")
    damaged = text.encode("utf-8").replace(b"Rin note ok", b"Rin note \xff", 1)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(damaged),
                                                       errors="surrogateescape"))
    db = tmp_path / "dst.db"
    code, err = _cli(db, "import", "-")
    assert code == 2 and "not UTF-8" in err
    assert not db.exists() or _rows(db) == 0


@pytest.mark.parametrize("messages, named", [
    ([{"role": "user", "content": f"I love coffee {LONE} a lot."}], "messages[0].content"),
    (["I love tea.", f"I love coffee {LONE}."], "messages[1]"),
    ([{"role": "user", "content": [{"type": "text", "text": f"I love {LONE}"}]}],
     "messages[0].content"),
])
def test_ingest_refuses_a_message_holding_one_naming_it(tmp_path, messages, named):
    """It reached the tokenizer, whose TypeError was a traceback."""
    ws = open_workspace(tmp_path / "w.db", embedder=HashingEmbedder())
    try:
        with pytest.raises(OmoideError) as caught:
            ws.governor.ingest("rin", messages)
        assert caught.value.code == "INVALID_ARGUMENT"
        assert caught.value.fields["name"] == named
        assert ws.engine.characters() == []
    finally:
        ws.close()


def test_a_chat_file_holding_one_is_imported_whole_with_the_replacement(tmp_path, capsys):
    """Day 2's message crashed the embedder after day 1 was written; a chat is the user's,
    so the broken character is replaced (as an export's import does) and said."""
    lines = [json.dumps({"user_name": "User", "character_name": "Seraphina",
                         "create_date": "2024-05-01@10h00m00s"})]
    for day, text in [(1, "I love green tea."), (1, "I live in Osaka."),
                      (2, f"I love coffee {LONE} a lot.")]:
        lines.append(json.dumps({"name": "User", "is_user": True, "mes": text,
                                 "send_date": f"May {day}, 2024 12:30pm"}))
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(lines) + "\n")
    db = tmp_path / "w.db"
    code = main(["--db", str(db), "import-tavern", str(chat), "--json"],
                embedder_factory=factory)
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads(out)
    assert report["repaired"] == 1 and len(report["sessions"]) == 2
    con = sqlite3.connect(db)
    texts = [json.loads(r[0])["text"] for r in con.execute("SELECT record FROM memories")]
    con.close()
    assert any("coffee \ufffd" in t for t in texts), texts


@pytest.mark.parametrize("text", ["\u200b\u200b", "\ufeff", " \u200d\u2060 ", "\u3164"])
def test_a_text_no_one_can_see_is_empty(text):
    """Zero-width and filler characters only: a memory no one could read or find."""
    from omoide.engine import MemoryEngine
    from tests.test_engine_embedder import HashingEmbedder

    engine = MemoryEngine(HashingEmbedder())
    with pytest.raises(OmoideError) as err:
        engine.remember("a", text)
    assert err.value.code == "EMPTY_TEXT"
    with pytest.raises(OmoideError) as err:
        engine.remember("a", 12345)  # type: ignore[arg-type]
    assert err.value.code == "INVALID_ARGUMENT" and "text" in str(err.value)
    assert engine.remember("a", "\u200bhello").text == "\u200bhello"  # visible: kept


# JSON values whose strings may hold anything, lone surrogates and pairs included
_STRINGS = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None),
                   max_size=6) | st.sampled_from([LONE, "\udfff", "a\ud83c", "\\ud800",
                                                   "\ud83c\udf75", "お茶"])
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | _STRINGS,
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(_STRINGS, inner, max_size=4), max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_JSON, st.booleans())
def test_a_json_text_said_free_of_lone_surrogates_decodes_to_none(value, ascii_only):
    """The import's one pass over its JSON text never passes a file the walk would repair:
    whatever it calls free decodes to values without any lone surrogate."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    decoded = json.loads(text)
    if validate.json_text_holds_no_lone_surrogate(text):
        assert validate.without_lone_surrogates(decoded)[1] == 0
    if validate.without_lone_surrogates(decoded)[1] == 0 and "\\" not in text \
            and (text.isascii() or not any("\ud800" <= c <= "\udfff" for c in text)):
        assert validate.json_text_holds_no_lone_surrogate(text)  # it skips the common file


@pytest.mark.parametrize("text, free", [
    ('{"text": "tea"}', True),
    ('{"text": "お茶 \\u3042"}', True),
    ('{"text": "tea \\ud800"}', False),
    ('{"text": "tea \\uDFFF"}', False),
    ('{"text": "tea \\ud83c\\udf75"}', False),  # a pair by escapes: walked, then kept
    ('{"text": "tea \\\\ud800"}', False),  # a backslash, then text: walked, nothing found
    ('{"text": "tea \ud800"}', False),
])
def test_the_text_check_names_what_may_hold_one(text, free):
    assert validate.json_text_holds_no_lone_surrogate(text) is free


def test_the_rpc_call_tells_its_handler_what_its_own_payload_holds():
    from omoide.browser import rpc

    seen = []

    @rpc.handler("_surrogate_probe")
    def probe(text: str, inner: str | None = None) -> bool:
        if inner is not None:  # a call run while this one waits leaves this one's answer
            rpc.dispatch("_surrogate_probe", json.dumps({"text": inner}))
        seen.append(rpc.payload_holds_no_lone_surrogate())
        return seen[-1]

    try:
        for text, free in (("tea", True), (LONE, False), ("お茶", True)):
            reply = json.loads(rpc.dispatch("_surrogate_probe", json.dumps({"text": text})))
            assert reply["result"] is free
        reply = json.loads(rpc.dispatch("_surrogate_probe",
                                        json.dumps({"text": LONE, "inner": "tea"})))
        assert reply["result"] is False and seen[-2:] == [True, False]
        assert rpc.payload_holds_no_lone_surrogate()  # no call: nothing held
    finally:
        del rpc.HANDLERS["_surrogate_probe"]


def test_an_import_that_skips_the_walk_repairs_the_same_file_as_one_that_walks(tmp_path):
    """``surrogate_free`` comes from the file's text: a file holding one gets False and is
    repaired; a clean one is checked to the same plan either way."""
    text = _export_with_a_lone_surrogate(tmp_path)
    assert not validate.json_text_holds_no_lone_surrogate(text)
    engine = MemoryEngine(HashingEmbedder())
    plan = exchange.check_import(engine, json.loads(text),
                                 surrogate_free=validate.json_text_holds_no_lone_surrogate(text))
    assert plan.characters[0].repaired == 1
    clean = text.replace("\\ud800", "ok")
    assert validate.json_text_holds_no_lone_surrogate(clean)
    walked = exchange.check_import(engine, json.loads(clean))
    skipped = exchange.check_import(engine, json.loads(clean), surrogate_free=True)
    assert [c.records for c in walked.characters] == [c.records for c in skipped.characters]
    assert skipped.characters[0].repaired == 0
