"""SillyTavern / RisuAI data in and out (``omoide.interop``): cards (JSON, PNG), chats,
lorebooks, the World Info export read back, malformed files refused with nothing written,
and the CLI commands."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from omoide.governance import Governor
from omoide.interop import apply_plan, export_world_info, import_file, parse_file
from omoide.interop.parse import parse_date, split_paragraphs
from tests import tavern_samples as s
from tests.test_cli import Cli, rows
from tests.test_engine_embedder import HashingEmbedder


@pytest.fixture
def gov() -> Governor:
    return Governor(MemoryEngine(HashingEmbedder(), clock=lambda: 1_800_000_000.0))


def texts(gov: Governor, character: str) -> list[str]:
    return sorted(m.text for m in gov.engine.memories(character))


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


# -- character cards ---------------------------------------------------------------------------


def test_card_v2_json_makes_the_character_and_its_facts(gov):
    report = import_file(gov, s.as_json(s.CARD_V2), "seraphina.json")
    assert (report["format"], report["character"], report["name"]) == (
        "card-v2", "seraphina", "Seraphina")
    memories = {m.key: m for m in gov.engine.memories("seraphina")}
    assert memories["card:description"].text.startswith("Seraphina is a guardian")  # {{char}}
    assert "{{user}}" in memories["card:scenario"].text  # the user's name is not known here
    assert memories["card:personality"].kind == "fact"
    tea = next(m for m in memories.values() if "Moonpetal" in m.text)
    assert tea.meta["keys"] == ["moonpetal"] and tea.meta["secondary_keys"] == ["tea"]
    assert tea.key == "lore:moonpetal" and tea.meta["comment"] == "moonpetal"
    assert report["facts"] == 5
    # the same card again adds nothing
    again = import_file(gov, s.as_json(s.CARD_V2), "seraphina.json")
    assert (again["facts"], again["facts_skipped"]) == (0, 5)
    assert len(gov.engine.memories("seraphina")) == 5


def test_char_in_the_cards_lorebook_is_the_characters_name(gov):
    """``{{char}}`` was replaced in the card's fields but kept in its embedded lorebook's
    entries: recall and prompts said "{{char}} fears the sea"."""
    book = {"entries": [
        {"keys": ["sea"], "content": "{{char}} fears the sea since {{user}} fell in.",
         "enabled": True},
        {"keys": ["lamp"], "content": "<BOT> trims the lamp at dusk.", "enabled": True}]}
    card = {"spec": "chara_card_v2", "data": {"name": "Kaito", "description": "{{char}} "
                                              "keeps a lighthouse.", "character_book": book}}
    import_file(gov, s.as_json(card), "kaito.json")
    assert texts(gov, "kaito") == ["Kaito fears the sea since {{user}} fell in.",
                                   "Kaito keeps a lighthouse.",
                                   "Kaito trims the lamp at dusk."]
    # a lorebook alone names no character: its text is kept as written
    import_file(gov, s.as_json(book), "book.json", character="other")
    assert "{{char}} fears the sea since {{user}} fell in." in texts(gov, "other")


@pytest.mark.parametrize("name", ["Dr\\d", "A\\1", "Rin\\n", "\\g<0>"])
def test_a_name_with_a_backslash_is_written_as_it_is(gov, name):
    """The name was a regex template: "Dr\\d" crashed the import (re.error, a traceback),
    "Rin\\n" became "Rin" and a line break in every fact."""
    card = {"name": name, "description": "{{char}} is here.",
            "character_book": {"entries": [{"keys": ["a"], "content": "<BOT> waves."}]}}
    report = import_file(gov, s.as_json(card), "card.json")
    assert texts(gov, report["character"]) == [f"{name} is here.", f"{name} waves."]


@pytest.mark.parametrize(("card", "keyword", "fmt", "character"), [
    (s.CARD_V2, "chara", "card-v2", "seraphina"),
    (s.CARD_V3, "ccv3", "card-v3", "kaito"),
])
def test_png_card(gov, card, keyword, fmt, character):
    report = import_file(gov, s.card_png(card, keyword), "card.png")
    assert (report["format"], report["character"]) == (fmt, character)
    assert any(card["data"]["description"].replace("{{char}}", card["data"]["name"])
               .split("\n")[0] in t for t in texts(gov, character))


def test_long_card_fields_are_split_into_paragraph_facts(gov):
    long = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(6))
    card = {"name": "Long", "description": long, "first_mes": "hi"}
    import_file(gov, s.as_json(card), "long.json")
    parts = [m for m in gov.engine.memories("long") if m.key.startswith("card:description")]
    assert len(parts) > 1 and all(len(m.text) <= 1000 for m in parts)
    assert {m.key for m in parts} >= {"card:description", "card:description#2"}


@given(st.text(alphabet=st.sampled_from("ab .。\n"), max_size=3000),
       st.integers(min_value=20, max_value=400))
@settings(max_examples=150, deadline=None)
def test_split_paragraphs_keeps_every_character_within_the_limit(text, limit):
    parts = split_paragraphs(text, limit)
    assert all(0 < len(p) <= limit for p in parts)
    assert "".join("".join(parts).split()) == "".join(text.split())


# -- lorebooks ---------------------------------------------------------------------------------


def test_world_info_entries_become_facts_with_their_keys(gov):
    report = import_file(gov, s.as_json(s.WORLD_INFO), "minato.json", character="kaito")
    assert report["format"] == "st-worldinfo" and report["facts"] == 2  # the blank one skipped
    by_text = {m.text: m for m in gov.engine.memories("kaito")}
    harbor = by_text["The harbor town of Minato trades in salt and dried fish."]
    assert harbor.meta["keys"] == ["Harbor", "port"] and harbor.key == "lore:harbor,port"
    lamp = by_text["The lighthouse lamp has not failed in forty years."]
    assert lamp.meta["constant"] is True and lamp.meta["secondary_keys"] == ["storm"]


def test_disabled_lorebook_entries_are_left_out_and_named(gov, cli, tmp_path):
    """An entry the user switched off (ST ``disable: true``, a card book's ``enabled:
    false``) was stored as a live memory with ``meta.disabled``, which nothing reads: text
    the app never puts in a prompt came back in recall. It is left out, and said so."""
    lore = {"entries": {
        "0": {"key": ["door"], "content": "The secret door is behind the red curtain.",
              "disable": True},
        "1": {"key": ["dragon"], "content": "The blue dragon sleeps under the mountain.",
              "disable": False},
    }}
    report = import_file(gov, s.as_json(lore), "wi.json", character="kaito")
    assert texts(gov, "kaito") == ["The blue dragon sleeps under the mountain."]
    assert (report["facts"], report["disabled"], report["disabled_entries"]) == (
        1, 1, ["entry 0"])
    assert all("door" not in h.memory.text for h in gov.engine.recall("kaito", "secret door"))
    book = s.CARD_V2["data"]["character_book"]
    off = {"keys": ["wolf"], "content": "A grey wolf follows Seraphina.", "enabled": False}
    card = {**s.CARD_V2, "data": {**s.CARD_V2["data"],
                                  "character_book": {**book, "entries": [*book["entries"], off]}}}
    report = import_file(gov, s.as_json(card), "seraphina.json")
    assert report["disabled_entries"] == ["entry 2"] and report["facts"] == 5
    assert not any("wolf" in t for t in texts(gov, "seraphina"))
    # an Omoide memory whose meta says "disabled" still makes the round trip
    gov.engine.remember("rin", "Rin hides a spare key", meta={"disabled": True})
    exported = export_world_info(gov.engine, "rin")
    assert exported["entries"]["0"]["disable"] is True
    back = import_file(gov, json.dumps(exported).encode(), "wi.json", character="rin-2")
    assert texts(gov, "rin-2") == ["Rin hides a spare key"] and back["disabled"] == 0
    path = tmp_path / "wi.json"
    path.write_bytes(s.as_json(lore))
    assert "1 disabled lorebook entries left out (entry 0)" in cli.ok(
        "import-tavern", str(path), "--character", "kaito")


DOOR = "The secret door is behind the red curtain."


def old_import_of_the_door(gov: Governor, character: str = "kaito") -> str:
    """The live memory a version before disabled entries were left out made of one."""
    return gov.engine.remember(character, DOOR, key="lore:door", meta={
        "source": "st-worldinfo", "keys": ["door"], "disabled": True}).id


def test_reimport_trashes_what_an_older_version_made_of_a_disabled_entry(gov, cli, tmp_path):
    """A memory an earlier version imported from a switched-off entry (live, ``meta.disabled``)
    stayed live when the file came again with the entry still off: text the user switched
    off came back in recall. It goes to the trash, restorable, and the report says so."""
    old = old_import_of_the_door(gov)
    own = gov.engine.remember("kaito", DOOR, meta={"disabled": True}).id  # the user's: kept
    lore = {"entries": {"0": {"key": ["door"], "content": DOOR, "disable": True}}}
    dry = import_file(gov, s.as_json(lore), "wi.json", character="kaito", dry_run=True)
    assert old in {m.id for m in gov.engine.memories("kaito")}
    report = import_file(gov, s.as_json(lore), "wi.json", character="kaito")
    assert [m.id for m in gov.engine.memories("kaito")] == [own]
    assert all(h.memory.id != old for h in gov.engine.recall("kaito", "secret door"))
    assert report["disabled_trashed"] == dry["disabled_trashed"] == [old]
    (entry,) = gov.engine.trash("kaito")
    assert entry.memory.id == old and entry.memory.meta["switched_off"] is True
    assert import_file(gov, s.as_json(lore), "wi.json", character="kaito")[
        "disabled_trashed"] == []
    gov.engine.restore("kaito", old)  # restorable
    assert old in {m.id for m in gov.engine.memories("kaito")}
    # switched on in SillyTavern: imported again, though an import trashed it once
    gov.engine.forget("kaito", old)
    gov.engine.forget("kaito", own)
    lore["entries"]["0"]["disable"] = False
    report = import_file(gov, s.as_json(lore), "wi.json", character="kaito")
    assert report["facts"] == 1 and any(
        m.meta.get("source") == "st-worldinfo" for m in gov.engine.memories("kaito"))
    # the CLI says so (the older version's memory brought by a World Info export of it)
    lore["entries"]["0"]["disable"] = True
    exported = {"entries": {"0": {
        **lore["entries"]["0"], "extensions": {"omoide": {
            "kind": "fact", "key": "lore:door",
            "meta": {"source": "st-worldinfo", "keys": ["door"], "disabled": True}}}}}}
    path = tmp_path / "wi.json"
    path.write_bytes(s.as_json(exported))
    cli.ok("import-tavern", str(path), "--character", "rin")
    path.write_bytes(s.as_json(lore))
    out = cli.ok("import-tavern", str(path), "--character", "rin")
    assert "1 disabled lorebook entries left out (entry 0)" in out
    assert "moved 1 memories an earlier import made of them to the trash (restorable: " in out
    assert json.loads(cli.ok("export-worldinfo", "rin", "-"))["entries"] == {}


def test_an_entry_switched_on_again_clears_the_disabled_mark(gov, cli, tmp_path):
    """An entry switched back on in SillyTavern, imported again, left Omoide's
    ``meta.disabled`` on the memory it matches (skipped as already held), so the World
    Info export wrote it switched off again. The mark is cleared; the memory is the same."""
    old = old_import_of_the_door(gov)
    lore = {"entries": {"0": {"key": ["door"], "content": DOOR, "disable": False}}}
    report = import_file(gov, s.as_json(lore), "wi.json", character="kaito")
    (memory,) = gov.engine.memories("kaito")
    assert memory.id == old and "disabled" not in memory.meta
    assert report["enabled_again"] == [old] and report["facts_skipped"] == 1
    # an Omoide memory exported switched off, switched on in SillyTavern
    rin = gov.engine.remember("rin", "Rin hides a spare key", meta={"disabled": True}).id
    exported = export_world_info(gov.engine, "rin")
    back = import_file(gov, json.dumps(exported).encode(), "wi.json", character="rin")
    assert gov.engine.get("rin", rin).meta["disabled"] is True and back["enabled_again"] == []
    exported["entries"]["0"]["disable"] = False
    back = import_file(gov, json.dumps(exported).encode(), "wi.json", character="rin")
    assert "disabled" not in gov.engine.get("rin", rin).meta and back["enabled_again"] == [rin]
    copy = import_file(gov, json.dumps(exported).encode(), "wi.json", character="rin-2")
    assert copy["facts"] == 1 and not gov.engine.memories("rin-2")[0].meta.get("disabled")
    path = tmp_path / "wi.json"
    path.write_bytes(json.dumps(exported | {"entries": {"0": {
        **exported["entries"]["0"], "disable": True}}}).encode())
    cli.ok("import-tavern", str(path), "--character", "rin")
    path.write_bytes(json.dumps(exported).encode())
    assert "1 lorebook entries switched on again" in cli.ok(
        "import-tavern", str(path), "--character", "rin")


def test_risu_lorebook(gov):
    import_file(gov, s.as_json(s.RISU_LOREBOOK), "risu.json", character="guild")
    (memory,) = gov.engine.memories("guild")
    assert memory.meta["keys"] == ["guild", "adventurers"]


def test_a_lorebook_needs_a_character(gov):
    with pytest.raises(OmoideError) as e:
        import_file(gov, s.as_json(s.WORLD_INFO), "minato.json")
    assert e.value.code == "INVALID_ARGUMENT" and e.value.fields["name"] == "character"
    assert gov.engine.characters() == []


def test_world_info_export_reimports(gov):
    import_file(gov, s.as_json(s.CARD_V2), "seraphina.json")
    gov.ingest("seraphina", ["I love green tea."])
    exported = export_world_info(gov.engine, "seraphina", name="Seraphina")
    assert exported["name"] == "Seraphina" and len(exported["entries"]) == 6
    entry = next(e for e in exported["entries"].values() if e["content"] == "I love green tea.")
    assert entry["key"] == ["green tea"]  # from the memory's key preference:green_tea
    assert entry["extensions"]["omoide"]["kind"] == "preference"
    data = json.dumps(exported).encode()
    # into another character: every memory, with its kind, key, importance and date
    import_file(gov, data, "lore.json", character="copy")
    original = {m.text: m for m in gov.engine.memories("seraphina")}
    copied = {m.text: m for m in gov.engine.memories("copy")}
    assert copied.keys() == original.keys()
    for text, m in copied.items():
        o = original[text]
        assert (m.kind, m.key, m.importance, m.created_at) == (o.kind, o.key, o.importance,
                                                               o.created_at)
        assert m.meta == o.meta  # the entry's generated keys and title are not added
    # into the same character: nothing new
    assert import_file(gov, data, "lore.json", character="seraphina")["facts"] == 0


# -- chats -------------------------------------------------------------------------------------


def test_sillytavern_chat_is_ingested_with_its_dates(gov):
    report = import_file(gov, s.st_chat(), "Seraphina - 2024-05-01.jsonl")
    assert (report["format"], report["character"], report["messages"]) == ("st-chat",
                                                                           "seraphina", 3)
    assert [x["day"] for x in report["sessions"]] == ["2024-05-01", "2024-06-03"]
    memories = {m.text: m for m in gov.engine.memories("seraphina")}
    tea = next(m for t, m in memories.items() if "green tea" in t)
    assert tea.kind == "preference" and tea.created_at == at("2024-05-01T12:31:00")
    assert tea.meta["session"] == "2024-05-01" and tea.meta["source"] == "st-chat"
    ts = next(m for t, m in memories.items() if "TypeScript" in t)
    assert ts.created_at == at("2024-06-03T09:05:00")
    assert not any("narrator" in t or "feeling" in t for t in memories)  # system, character
    assert gov.engine.now() == 1_800_000_000.0  # the clock is given back


def test_importing_the_same_chat_again_changes_nothing(gov):
    """A chat imported twice (a user's second try, a synced folder) is the same messages,
    not repeats: no merge is counted, no memory changes, the report says they were held."""
    first = import_file(gov, s.st_chat(), "Seraphina - 2024-05-01.jsonl")
    before = {m.id: m.to_dict() for m in gov.engine.memories("seraphina")}
    again = import_file(gov, s.st_chat(), "Seraphina - 2024-05-01.jsonl")
    assert {m.id: m.to_dict() for m in gov.engine.memories("seraphina")} == before
    assert again["stored"] == again["merged"] == 0
    assert again["skipped"] == first["stored"] > 0
    assert gov.engine.trash("seraphina") == []


def test_what_the_user_forgot_stays_forgotten_when_the_file_comes_again(gov):
    """The user forgot a memory a chat (or a card) brought; importing the same file again
    stored it anew, live, beside the forgotten one in the trash: the forget undone."""
    import_file(gov, s.st_chat(), "Seraphina - 2024-05-01.jsonl")
    tea = next(m for m in gov.engine.memories("seraphina") if "green tea" in m.text)
    gov.engine.forget("seraphina", tea.id)
    again = import_file(gov, s.st_chat(), "Seraphina - 2024-05-01.jsonl")
    assert "I love green tea." not in texts(gov, "seraphina")
    assert again["stored"] == 0 and again["skipped"] == 3
    assert [e.memory.id for e in gov.engine.trash("seraphina")] == [tea.id]  # restorable
    card = import_file(gov, s.as_json(s.CARD_V2), "seraphina.json")
    fact = gov.engine.memories(card["character"])[0]
    gov.engine.forget(card["character"], fact.id)
    again = import_file(gov, s.as_json(s.CARD_V2), "seraphina.json")
    assert again["facts"] == 0 and fact.text not in texts(gov, card["character"])


def test_the_same_words_in_another_session_still_count_as_a_repeat(gov):
    messages = [{**m, "send_date": "May 2, 2024 8:00am"} for m in s.CHAT_MESSAGES[:2]]
    import_file(gov, s.st_chat(), "a.jsonl")
    report = import_file(gov, s.st_chat(messages=messages), "b.jsonl")
    assert report["merged"] == 2  # the tea and the walk, said again a day later
    tea = next(m for m in gov.engine.memories("seraphina") if "green tea" in m.text)
    assert tea.meta["merges"] == 1


def test_history_a_chat_replaced_is_kept_the_grace_period_from_the_import(gov):
    """The chat ran under the engine's clock set to its day, so the fact a later day
    replaced went to the trash dated June 2024: ``purge_expired`` erased it at once, not 30
    days after the import. The memories keep their own dates; the trash has this machine's."""
    messages = [dict(s.CHAT_MESSAGES[1], mes="I work as a nurse."),
                dict(s.CHAT_MESSAGES[3], mes="I work as a doctor.")]
    report = import_file(gov, s.st_chat(messages=messages), "c.jsonl")
    assert [x["day"] for x in report["sessions"]] == ["2024-05-01", "2024-06-03"]
    [entry] = gov.engine.trash("seraphina")
    assert entry.memory.text == "I work as a nurse."
    assert entry.memory.created_at == at("2024-05-01T12:31:00")
    assert entry.trashed_at == gov.engine.now() == 1_800_000_000.0
    [doctor] = gov.engine.memories("seraphina")
    assert doctor.created_at == at("2024-06-03T09:05:00")
    assert gov.purge_expired("seraphina") == []
    assert [e.memory.id for e in gov.engine.trash("seraphina")] == [entry.memory.id]
    assert all(e.at == gov.engine.now() for e in gov.log.events())  # the log's time too


def test_risu_chat(gov):
    report = import_file(gov, s.as_json(s.RISU_CHAT), "chat.json", character="risu")
    assert report["format"] == "risu-chat" and report["stored"] == 1
    (memory,) = gov.engine.memories("risu")
    assert "spicy" in memory.text and memory.created_at == 1714566660.0


def test_dry_run_writes_nothing(gov):
    report = import_file(gov, s.st_chat(), "chat.jsonl", dry_run=True)
    assert report["stored"] == 3 and gov.engine.characters() == []
    report = import_file(gov, s.as_json(s.CARD_V2), "card.json", dry_run=True)
    assert report["facts"] == 5 and gov.engine.characters() == []


def test_dry_run_of_a_chat_of_several_days_says_what_the_import_does(gov):
    """Each day was previewed against the store alone: the same sentences on two days
    previewed "would store 4, merged 0", the import stored 2 and merged 2. The preview is
    now the import itself, on a throw-away copy of the character."""
    import_file(gov, s.as_json(s.CARD_V2), "seraphina.json")
    gov.engine.remember("seraphina", "I work as a nurse.", key="fact:job")
    before = {m.id: m.to_dict() for m in gov.engine.memories("seraphina")}
    messages = [*s.CHAT_MESSAGES[:2], dict(s.CHAT_MESSAGES[1], send_date="May 2, 2024 8:00am"),
                dict(s.CHAT_MESSAGES[1], send_date="May 3, 2024 8:00am",
                     mes="I work as a doctor.")]
    events = len(gov.log)
    preview = import_file(gov, s.st_chat(messages=messages), "c.jsonl", dry_run=True)
    assert {m.id: m.to_dict() for m in gov.engine.memories("seraphina")} == before
    assert gov.engine.trash("seraphina") == [] and len(gov.log) == events
    assert (preview["stored"], preview["merged"]) == (2, 2)
    done = import_file(gov, s.st_chat(messages=messages), "c.jsonl")
    assert preview == done | {"dry_run": True}


def test_cli_dry_run_of_a_chat_writes_nothing_to_the_workspace(cli, tmp_path):
    card = tmp_path / "card.json"
    card.write_bytes(s.as_json(s.CARD_V2))
    cli.ok("import-tavern", str(card))
    before = rows(cli.db)
    messages = [s.CHAT_MESSAGES[1], dict(s.CHAT_MESSAGES[1], send_date="May 2, 2024 8:00am")]
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(s.st_chat(messages=messages))
    out = cli.ok("import-tavern", str(chat), "--dry-run")
    assert "would store 2, merged 2" in out and rows(cli.db) == before
    assert cli.json("import-tavern", str(chat))["merged"] == 2 and len(rows(cli.db)) == 7


@pytest.mark.parametrize(("value", "expected"), [
    ("May 1, 2024 12:30pm", "2024-05-01T12:30:00"),
    ("June 3, 2024 9:05am", "2024-06-03T09:05:00"),
    ("2024-05-01@12h30m15s", "2024-05-01T12:30:15"),
    ("2024-05-01T12:30:00Z", "2024-05-01T12:30:00"),
    (1714566600000, "2024-05-01T12:30:00"),
])
def test_dates_as_the_apps_write_them(value, expected):
    assert parse_date(value) == at(expected)


@pytest.mark.parametrize("value", ["yesterday", "", None, True, -5, "13/45/2024",
                                   "1900-01-01T00:00:00Z", "January 1, 1900 1:00am",
                                   "1969-12-31T23:00:00Z", "9999-12-31T23:59:59-14:00"])
def test_unreadable_dates_are_none(value):
    assert parse_date(value) is None


def test_a_date_no_memory_can_have_is_an_undated_message(gov):
    """It failed the import after the chat's first day was written (1900), or crashed it
    with a ValueError (year 9999 east of UTC)."""
    for n, when in enumerate(["1900-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00"]):
        messages = [s.CHAT_MESSAGES[1], dict(s.CHAT_MESSAGES[3], send_date=when)]
        report = import_file(gov, s.st_chat(messages=messages), f"{n}.jsonl")
        assert report["undated"] == 1 and [x["day"] for x in report["sessions"]] == [
            "2024-05-01"]
    ts = next(m for m in gov.engine.memories("seraphina") if "TypeScript" in m.text)
    assert ts.created_at == at("2024-05-01T12:31:00")


def test_undated_messages_take_the_previous_date(gov):
    messages = [dict(s.CHAT_MESSAGES[1]), dict(s.CHAT_MESSAGES[3], send_date="whenever")]
    report = import_file(gov, s.st_chat(messages=messages), "chat.jsonl")
    assert report["undated"] == 1 and [x["day"] for x in report["sessions"]] == ["2024-05-01"]


# -- malformed files: a clear error, nothing written ---------------------------------------------

BROKEN_PNG = s.card_png(s.CARD_V2)[:-20] + b"\0" * 20
MALFORMED = [
    (b"", "empty"),
    (b"{not json", "not JSON (line 1 column 2"),
    (s.as_json([1, 2]), "the JSON is not an object"),
    (s.as_json({"hello": "world"}), "not a character card, chat or lorebook"),
    (s.as_json({"spec": "chara_card_v9", "data": {}}), "unknown spec 'chara_card_v9'"),
    (s.as_json({"spec": "chara_card_v2", "data": {"description": "x"}}), "no 'name'"),
    (s.as_json({"spec": "chara_card_v2", "data": {"name": "A", "personality": 3}}),
     "'personality' must be text"),
    (s.tiny_png(), "no 'chara' or 'ccv3' text chunk"),
    (BROKEN_PNG, "bad CRC"),
    (s.card_png(s.CARD_V2)[:60], "truncated"),
    (s.tiny_png()[:-12] + b"\0\0\0\x05tEXtchara" + b"\0" * 8, "'tEXt' has a bad CRC"),
    (s.st_chat()[:-2] + b"\n\n{oops\n", "line 5 is not JSON"),
    (s.st_chat(messages=[{"name": "You", "is_user": True}]), "line 2 has no text 'mes'"),
    (s.st_chat(head={"name": "x", "mes": "hi"}), "line 1 must be the chat's metadata"),
    (s.st_chat(messages=[]) + b'{"mes": ""}\n', "it holds no messages"),
    (s.as_json({"entries": {"0": {"key": ["a"], "content": 5}}}), "entry 0 has no text"),
    (s.as_json({"entries": {"0": {"key": "a", "content": "x"}, "1": {"key": [1],
                                                                      "content": "y"}}}),
     "entry 1: keys must be a list of text"),
    (s.as_json({"type": "risuChat", "data": {"message": [{"role": "bot", "data": "x"}]}}),
     "role 'bot'"),
    ("\xff".encode("latin-1"), "not UTF-8"),
    # a speaker the file does not say plainly: "false" made the character's line the user's
    (s.st_chat(messages=[dict(s.CHAT_MESSAGES[0], mes="I love snakes.", is_user="false")]),
     "line 2: 'is_user' must be true or false, not \"false\""),
    (s.st_chat(messages=[dict(s.CHAT_MESSAGES[1], is_system="false")]),  # it was dropped
     "line 2: 'is_system' must be true or false, not \"false\""),
    # a lorebook flag as text: "false" switched the entry off, or to always on
    (s.as_json({"entries": {"0": {"key": ["a"], "content": "x", "disable": "false"}}}),
     "entry 0: 'disable' must be true or false, not \"false\""),
    (s.as_json({"entries": {"0": {"key": ["a"], "content": "x", "constant": "false"}}}),
     "entry 0: 'constant' must be true or false, not \"false\""),
    (s.as_json({"entries": [{"keys": ["a"], "content": "x", "enabled": 0}]}),
     "entry 0: 'enabled' must be true or false, not 0"),
    (s.as_json({"type": "risu", "data": [{"key": "a", "content": "x",
                                          "alwaysActive": "true"}]}),
     "entry 0: 'alwaysActive' must be true or false"),
    # longer than ingest takes: refused whole (the days before it were written)
    (s.st_chat(messages=[s.CHAT_MESSAGES[1], dict(s.CHAT_MESSAGES[3], mes="x" * 100_001)]),
     "line 3 is 100001 characters, the limit is 100000"),
    (s.as_json({"type": "risuChat", "data": {"message": [
        {"role": "user", "data": "I hate spicy food.", "time": 1714566660000},
        {"role": "user", "data": "x" * 100_001, "time": 1814566660000}]}}),
     "message 1 is 100001 characters"),
]


@pytest.mark.parametrize(("data", "reason"), MALFORMED)
def test_malformed_files_are_refused(gov, data, reason):
    gov.engine.remember("kaito", "already here")
    with pytest.raises(OmoideError) as e:
        import_file(gov, data, "bad.file", character="kaito")
    assert e.value.code == "MALFORMED_CHAT_DATA", e.value
    assert reason in str(e.value) and str(e.value).startswith("bad.file: not a valid")
    assert texts(gov, "kaito") == ["already here"]


def test_one_bad_entry_refuses_the_whole_lorebook(gov):
    book = {"entries": {"0": {"key": ["ok"], "content": "A fine entry."},
                        "1": {"key": ["big"], "content": "x" * 9_000}}}
    with pytest.raises(OmoideError) as e:
        import_file(gov, s.as_json(book), "big.json", character="kaito")
    assert e.value.code == "MALFORMED_CHAT_DATA" and "entry 1" in str(e.value)
    assert "9000 characters" in str(e.value)
    assert gov.engine.characters() == []


def test_another_models_index_is_refused_before_writing(gov):
    gov.engine.remember("seraphina", "an old memory")
    gov.engine.select_embedder(HashingEmbedder(seed=7))
    with pytest.raises(OmoideError) as e:
        apply_plan(gov, parse_file(s.as_json(s.CARD_V2), "c.json"))
    assert e.value.code == "MODEL_MISMATCH"
    assert len(gov.engine.stores["seraphina"].records) == 1


# -- the CLI -----------------------------------------------------------------------------------


@pytest.fixture
def cli(tmp_path, capsys) -> Cli:
    return Cli(tmp_path / "ws.db", capsys)


def test_cli_import_and_export(cli, tmp_path):
    card = tmp_path / "Seraphina.png"
    card.write_bytes(s.card_png(s.CARD_V2))
    out = cli.ok("import-tavern", str(card))
    assert out.startswith("card-v2 -> seraphina: stored 5 facts (0 already held)")
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(s.st_chat())
    report = cli.json("import-tavern", str(chat))
    assert report["stored"] == 3 and report["character"] == "seraphina"
    lore = tmp_path / "lore.json"
    assert "wrote 8 World Info entries" in cli.ok("export-worldinfo", "seraphina", str(lore))
    assert cli.json("import-tavern", str(lore), "--character", "copy")["facts"] == 8
    assert len(rows(cli.db)) == 16
    assert json.loads(cli.ok("export-worldinfo", "copy", "-"))["entries"]["0"]["content"]
    # the card's display name is kept, as the web app keeps it (it was dropped)
    [seraphina] = [c for c in json.loads(cli.ok("export", "-"))["characters"]
                   if c["id"] == "seraphina"]
    assert seraphina["name"] == "Seraphina"


def test_cli_refuses_malformed_files_and_writes_nothing(cli, tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(s.tiny_png())
    err = cli.fails("import-tavern", str(bad))
    assert "bad.png: not a valid PNG card" in err and "Nothing was imported" in err
    assert not cli.db.exists()
    lore = tmp_path / "lore.json"
    lore.write_bytes(s.as_json(s.WORLD_INFO))
    assert "does not name its character" in cli.fails("import-tavern", str(lore))
    assert not cli.db.exists()
    assert "no such file" in cli.fails("import-tavern", str(tmp_path / "nope.json"))
    assert "there is no workspace there" in cli.fails("export-worldinfo", "nobody", "-")
    assert not cli.db.exists()  # a read never creates (and stamps) a workspace
    cli.ok("remember", "alice", "I love tea")
    assert "No character" in cli.fails("export-worldinfo", "nobody", "-")


class FailsOnOsaka(HashingEmbedder):
    """The model failing on one text (its runtime out of memory, the user's Ctrl-C)."""

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        if any("Osaka" in t for t in texts):
            raise OmoideError.of("EMBEDDING_FAILED", provider="test", reason="out of memory")
        return super().embed_passages(texts)


def test_cli_import_that_fails_half_way_writes_nothing(cli, tmp_path):
    """The card's facts and the chat's first day were committed before its second day
    failed: the import is one verb of the workspace, as ``import`` is."""
    cli.ok("remember", "seraphina", "already here")
    cli.factory = lambda model_id, dtype: FailsOnOsaka()
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(s.st_chat(messages=[s.CHAT_MESSAGES[1], dict(
        s.CHAT_MESSAGES[3], mes="I live in Osaka.")]))
    before = rows(cli.db)
    assert "out of memory" in cli.fails("import-tavern", str(chat), "--character",
                                        "seraphina")
    assert rows(cli.db) == before
    assert cli.ok("recall", "seraphina", "green tea").count("green tea") == 0


def test_lorebook_entries_with_the_same_trigger_words_are_each_kept(gov):
    """Both entries keyed ["Alice"] got the key ``lore:alice``: the second replaced the
    first (the report said 4 stored, 3 were live), and a second import swapped them."""
    lore = {"entries": {
        "0": {"uid": 0, "key": ["Alice"], "content": "Alice is a knight of the north.",
              "comment": "Alice bio"},
        "1": {"uid": 1, "key": ["Alice"], "content": "Alice is afraid of spiders.",
              "comment": "Alice fear"},
        "2": {"uid": 2, "key": ["moon"], "content": "The kingdom has two moons."},
    }}
    data = json.dumps(lore).encode()
    for _ in range(2):  # importing twice adds nothing and changes nothing
        import_file(gov, data, "lore.json", character="alice")
        assert texts(gov, "alice") == ["Alice is a knight of the north.",
                                       "Alice is afraid of spiders.",
                                       "The kingdom has two moons."]
        assert gov.engine.trash("alice") == []
    keys = sorted(m.key for m in gov.engine.memories("alice"))
    assert keys == ["lore:alice", "lore:alice#2", "lore:moon"]


def test_world_info_round_trip_keeps_every_field_and_adds_nothing(gov):
    """The export kept kind, importance, key, date and meta only: the index context and the
    conversation place came back None, and every memory's meta gained the entry's keys and
    title. Now a round trip gives the memory back as it was; an entry edited in SillyTavern
    (its title here) still brings its edit."""
    e = gov.engine
    e.remember("rin", "Rin moved to Osaka in May", context="asked about the move",
               conversation="chat-1", turn=4, importance=0.7, meta={"mood": "happy"})
    e.remember("rin", "Rin prefers green tea", key="preference:green_tea", kind="preference")
    data = export_world_info(e, "rin")
    [tea_entry] = [x for x in data["entries"].values() if x["content"] == "Rin prefers green tea"]
    tea_entry["comment"] = "Rin's drink"  # the user's edit in SillyTavern
    other = Governor(MemoryEngine(HashingEmbedder(), clock=lambda: 1_800_000_000.0))
    import_file(other, json.dumps(data).encode(), "wi.json", character="rin")
    fields = ("text", "kind", "importance", "key", "created_at", "context", "conversation",
              "turn", "meta")
    before = {m.text: m for m in e.memories("rin")}
    after = {m.text: m for m in other.engine.memories("rin")}
    assert sorted(before) == sorted(after)
    moved = "Rin moved to Osaka in May"
    assert [getattr(after[moved], f) for f in fields] == [
        getattr(before[moved], f) for f in fields]
    tea = after["Rin prefers green tea"]
    assert tea.key == "preference:green_tea" and tea.meta == {"comment": "Rin's drink"}


def test_numbered_keys_never_meet_a_key_the_file_already_holds(gov):
    """An entry exported as ``lore:alice#2`` plus a new "alice" entry numbered #2 again:
    one replaced the other. The next free number is taken."""
    from omoide.interop.importer import distinct_keys
    from omoide.interop.parse import Fact

    facts = [Fact(t, k, {}) for t, k in (("a", "lore:alice"), ("b", "lore:alice"),
                                         ("c", "lore:alice#2"), ("d", None))]
    assert distinct_keys(facts) == ["lore:alice", "lore:alice#3", "lore:alice#2", None]


def test_world_info_with_a_meta_of_another_shape_imports(gov):
    """``secondary_keys`` edited to a number: the export and the re-import raised TypeError."""
    e = gov.engine
    e.remember("rin", "Rin keeps bees", meta={"secondary_keys": 5, "comment": ["x"]})
    data = export_world_info(e, "rin")
    other = Governor(MemoryEngine(HashingEmbedder(), clock=lambda: 1_800_000_000.0))
    import_file(other, json.dumps(data).encode(), "wi.json", character="rin")
    assert [m.text for m in other.engine.memories("rin")] == ["Rin keeps bees"]


def test_two_cards_whose_names_make_one_id_are_two_characters(cli, tmp_path):
    """"Aqua" and "AQUA!" (or "🌸" and "🌙") make one id: the second card's facts went to
    the first character and retired its description (same key). A card now goes to the
    character of its id only when that character has its name (or none); else to the next
    free id, where importing it again finds it."""
    import copy

    def card(name: str, description: str) -> bytes:
        data = copy.deepcopy(s.CARD_V2)
        data["data"].update(name=name, description=description, character_book=None)
        return s.as_json(data)

    goddess, robot = tmp_path / "a.json", tmp_path / "b.json"
    goddess.write_bytes(card("Aqua", "{{char}} is a goddess of water."))
    robot.write_bytes(card("AQUA!", "{{char}} is a cleaning robot."))
    assert cli.json("import-tavern", str(goddess))["character"] == "aqua"
    assert cli.json("import-tavern", str(robot))["character"] == "aqua-2"
    assert cli.json("import-tavern", str(robot))["character"] == "aqua-2"  # found again
    assert cli.json("import-tavern", str(goddess))["facts_skipped"] >= 1
    names = {c["id"]: c["name"] for c in json.loads(cli.ok("export", "-"))["characters"]}
    assert names == {"aqua": "Aqua", "aqua-2": "AQUA!"}
    assert "goddess" in cli.ok("recall", "aqua", "goddess")
    assert "robot" not in cli.ok("recall", "aqua", "robot")
    # a character chosen by the user takes the card, whatever its name
    assert cli.json("import-tavern", str(robot), "--character", "aqua")["character"] == "aqua"


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_a_chat_line_holding_a_unicode_line_separator_is_one_line(gov, separator):
    """JSON.stringify writes U+2028 and the like raw: a line of a .jsonl ends at "\\n" only."""
    said = f"I love green tea.{separator}Really."
    messages = [{**m, "mes": said} if "green tea" in m["mes"] else m for m in s.CHAT_MESSAGES]
    assert messages != s.CHAT_MESSAGES
    report = import_file(gov, s.st_chat(messages=messages), "Seraphina - chat.jsonl")
    assert report["messages"] == import_file(gov, s.st_chat(), "b.jsonl",
                                             dry_run=True)["messages"]
    assert any("green tea" in m.text for m in gov.engine.memories("seraphina"))
