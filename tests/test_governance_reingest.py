"""A conversation ingested again never replays its changes over newer memories.

Found in session 22: a chat ingested again without a session tag (the CLI's ``ingest`` of
the same file, MCP ``ingest``, the JS client, a SillyTavern chat without dates) was read as
new statements said now: "I live in Tokyo" of January superseded the "Osaka" of March and
sent the user's current home to the trash, purged 30 days on. Dated, it added one more
history copy of Tokyo and one more merge of every repeat at each import. ``remember`` with a
key and an ``at`` older than the live value replaced it too."""

import importlib
import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.governance import Governor
from omoide.interop.importer import import_file
from omoide.mcp import build_server
from omoide.workspace import open_workspace
from tests import tavern_samples as samples
from tests.test_engine_embedder import HashingEmbedder
from tests.test_mcp import data, run_with_client

JANUARY, MARCH, MAY = 1_704_067_200.0, 1_709_251_200.0, 1_714_521_600.0

CHAT1 = [{"role": "user", "content": "I live in Tokyo."},
         {"role": "assistant", "content": "Nice! How do you like it?"},
         {"role": "user", "content": "I love green tea."}]
CHAT2 = [{"role": "user", "content": "Big news: I live in Osaka now."},
         {"role": "assistant", "content": "Congratulations on the move!"}]


def ticking(start=1_800_000_000.0):
    counter = itertools.count()
    return lambda: start + next(counter)


def governor() -> Governor:
    return Governor(MemoryEngine(HashingEmbedder(64), clock=ticking()))


def state(engine: MemoryEngine, character: str = "a") -> tuple[dict, dict]:
    """Everything the store holds of ``character``: live memories and trash, whole."""
    if character not in engine.characters():  # nothing stored yet
        return {}, {}
    return ({m.id: m.to_dict() for m in engine.memories(character)},
            {t.memory.id: (t.memory.to_dict(), t.trashed_at) for t in engine.trash(character)})


def home(engine: MemoryEngine, character: str = "a") -> list[str]:
    return [m.text for m in engine.memories(character) if m.key == "fact:home"]


def test_an_old_chat_ingested_again_without_a_date_keeps_the_newer_value():
    gov = governor()
    gov.ingest("a", CHAT1)
    gov.ingest("a", CHAT2)
    assert home(gov.engine) == ["Big news: I live in Osaka now."]
    before = state(gov.engine)
    again = gov.ingest("a", CHAT1)
    assert home(gov.engine) == ["Big news: I live in Osaka now."]
    assert state(gov.engine) == before  # nothing new, nothing trashed, no merge counted
    assert [i.action for i in again.items] == ["skipped", "skipped"]
    assert "nothing replayed" in again.items[0].reason, again.items[0]
    assert "nothing new" in again.items[1].reason, again.items[1]


def test_an_old_dated_chat_ingested_again_adds_no_history_copy():
    gov = governor()
    gov.ingest("a", CHAT1, at=JANUARY)
    gov.ingest("a", CHAT2, at=MARCH)
    before = state(gov.engine)
    for _ in range(2):
        gov.ingest("a", CHAT1, at=JANUARY)
        gov.ingest("a", CHAT1)  # the same file, its date left out
        assert state(gov.engine) == before


def test_the_replay_is_known_after_the_history_is_purged():
    """The replaced version goes after 30 days; the chat brought again then (without its
    date) superseded the current value once more."""
    gov = governor()
    gov.ingest("a", CHAT1)
    gov.ingest("a", CHAT2)
    gov.engine.purge_trash("a")
    again = gov.ingest("a", CHAT1)
    assert home(gov.engine) == ["Big news: I live in Osaka now."]
    assert gov.engine.trash("a") == [] and again.items[0].action == "skipped"


def test_what_the_user_forgot_stays_forgotten_without_a_session():
    gov = governor()
    gov.ingest("a", CHAT1)
    [tea] = [m for m in gov.engine.memories("a") if "tea" in m.text]
    gov.engine.forget("a", tea.id)
    again = gov.ingest("a", CHAT1)
    assert "I love green tea." not in [m.text for m in gov.engine.memories("a")]
    assert [t.memory.id for t in gov.engine.trash("a")] == [tea.id]
    assert "restore it there" in again.items[1].reason


def test_saying_the_old_value_again_in_a_new_conversation_still_changes_it():
    """What is not a replay still counts: the user moved back (other turns around it), or a
    chat app sent the words alone, now."""
    gov = governor()
    gov.ingest("a", CHAT1)
    gov.ingest("a", CHAT2)
    gov.ingest("a", [{"role": "user", "content": "I live in Tokyo."},
                     {"role": "assistant", "content": "Welcome back to Tokyo!"}])
    assert home(gov.engine) == ["I live in Tokyo."]
    gov.ingest("a", CHAT2)  # a replay: Tokyo, said since, stays
    assert home(gov.engine) == ["I live in Tokyo."]
    gov.ingest("a", ["I live in Osaka."])
    gov.ingest("a", ["I live in Tokyo."])
    assert home(gov.engine) == ["I live in Tokyo."]


def test_the_same_turns_on_another_day_are_a_repeat():
    gov = governor()
    gov.ingest("a", CHAT1, at=JANUARY)
    [report] = [gov.ingest("a", CHAT1[1:], at=MAY)]  # the tea and its turns, in May
    assert [i.action for i in report.items] == ["merged"]
    [tea] = [m for m in gov.engine.memories("a") if "tea" in m.text]
    assert tea.meta["merges"] == 1 and tea.meta["said_at"] == MAY


def test_remember_dated_before_the_live_value_keeps_it_and_becomes_history():
    e = MemoryEngine(HashingEmbedder(64), clock=ticking())
    osaka = e.remember("a", "I live in Osaka", key="fact:home", at=MARCH)
    tokyo = e.remember("a", "I live in Tokyo", key="fact:home", at=JANUARY)
    assert [m.id for m in e.find_by_key("a", "fact:home")] == [osaka.id]
    [entry] = e.trash("a")
    assert entry.memory.id == tokyo.id and entry.memory.meta["superseded_by"] == osaka.id
    assert tokyo.meta["superseded_by"] == osaka.id  # what the caller is told
    assert e.get("a", osaka.id).meta["supersedes"] == [tokyo.id]
    e.restore("a", tokyo.id)  # restorable, as any history
    assert [m.text for m in e.find_by_key("a", "fact:home")] == ["I live in Tokyo"]
    newer = e.remember("a", "I live in Kyoto", key="fact:home", at=MAY)
    assert [m.id for m in e.find_by_key("a", "fact:home")] == [newer.id]
    now = e.remember("a", "I live in Nara", key="fact:home")  # no date: said now
    assert [m.id for m in e.find_by_key("a", "fact:home")] == [now.id]


# -- every path that reads a chat --------------------------------------------------------

def test_a_sillytavern_chat_without_dates_imported_again_replays_nothing():
    """No date in the file (no send_date, no create_date): no session either."""
    gov = governor()
    head = {k: v for k, v in samples.CHAT_HEAD.items() if k != "create_date"}

    def chat(*turns: tuple[bool, str]) -> bytes:
        return samples.st_chat(head, [{"name": "You" if user else "Seraphina",
                                       "is_user": user, "is_system": False, "mes": text}
                                      for user, text in turns])

    first = chat((False, "Where do you live?"), (True, "I live in Tokyo."),
                 (False, "Lovely."), (True, "I love green tea."))
    import_file(gov, first, "a.jsonl", character="a")
    import_file(gov, chat((True, "Big news: I live in Osaka now."), (False, "Wow!")),
                "b.jsonl", character="a")
    assert home(gov.engine) == ["Big news: I live in Osaka now."]
    before = state(gov.engine)
    again = import_file(gov, first, "a.jsonl", character="a")
    assert again["undated"] == 4 and again["sessions"][0]["day"] is None
    assert state(gov.engine) == before
    assert again["stored"] == again["merged"] == 0 and again["skipped"] == 2


def test_the_cli_ingest_of_the_same_file_again_replays_nothing(tmp_path, capsys):
    from tests.test_cli import Cli

    cli = Cli(tmp_path / "ws.db", capsys)
    first, second = tmp_path / "jan.json", tmp_path / "mar.json"
    first.write_text(json.dumps(CHAT1), encoding="utf-8")
    second.write_text(json.dumps(CHAT2), encoding="utf-8")
    cli.json("ingest", "alice", str(first))
    cli.json("ingest", "alice", str(second))
    backup = tmp_path / "before.json"
    cli.ok("export", str(backup))
    report = cli.json("ingest", "alice", str(first))
    assert {i["action"] for i in report["items"]} == {"skipped"}
    after = tmp_path / "after.json"
    cli.ok("export", str(after))
    held = [json.loads(p.read_text(encoding="utf-8"))["characters"] for p in (backup, after)]
    assert held[0] == held[1]


def test_mcp_ingest_of_the_same_chat_again_replays_nothing(tmp_path):
    workspace = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    server = build_server(workspace)

    async def body(c):
        for chat in (CHAT1, CHAT2, CHAT1):
            last = data(await c.call_tool("ingest", {"character": "alice", "messages": chat}))
        return last

    try:
        last = run_with_client(server, body)
        assert {i["action"] for i in last["items"]} == {"skipped"}
        assert home(workspace.engine, "alice") == ["Big news: I live in Osaka now."]
    finally:
        workspace.close()


# -- invariants ---------------------------------------------------------------------------

CITIES = ["Tokyo", "Osaka", "Kyoto", "Nagoya"]
JOBS = ["nurse", "doctor", "teacher"]
SAID = (st.sampled_from([f"I live in {c}." for c in CITIES])
        | st.sampled_from([f"I work as a {j}." for j in JOBS])
        | st.sampled_from(["I love green tea.", "I don't like green tea anymore.",
                           "I always walk at dawn.", "My sister is called Emi.",
                           "We went to the beach and it was lovely.", "Hello there!"]))
REPLIES = st.sampled_from(["Nice!", "Oh, really?", "Tell me more.", "I see."])


@st.composite
def chats(draw, dated=None):
    said = draw(st.lists(SAID, min_size=1, max_size=4))
    turns = []
    for text in said:
        turns.append({"role": "user", "content": text})
        if draw(st.booleans()):
            turns.append({"role": "assistant", "content": draw(REPLIES)})
    at = draw(st.sampled_from([None, JANUARY, MARCH, MAY])) if dated is None else dated
    if at is None and len(turns) == 1:  # one turn alone, undated, is a new statement
        turns.append({"role": "assistant", "content": draw(REPLIES)})
    return turns, at


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(chats(), min_size=1, max_size=3), chats(), st.booleans())
def test_ingesting_any_chat_again_leaves_the_store_as_it_was(history, chat, undated):
    """Any store a few chats made, then a chat, then the same chat again (dated as before,
    or its date left out): the second time writes nothing."""
    gov = governor()
    for turns, at in [*history, chat]:
        gov.ingest("a", turns, at=at)
    before = state(gov.engine)
    turns, at = chat
    if undated and len(turns) > 1:
        at = None
    report = gov.ingest("a", turns, at=at)
    assert state(gov.engine) == before, [(i.action, i.text, i.reason) for i in report.items]
    assert report.count("stored") == report.count("merged") == report.count("superseded") == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(CITIES), REPLIES), min_size=2, max_size=4,
                unique_by=lambda p: p[0]),
       st.randoms(use_true_random=False), st.booleans())
def test_the_batches_of_a_conversation_in_any_order_leave_the_newest_value(moves, rng,
                                                                          twice):
    """Each batch says where the user lives on its day; ingested in any order (and any of
    them again), the home of the newest day is the live one, and each older one is kept
    once, as its history."""
    days = [JANUARY + n * 86_400.0 for n in range(len(moves))]
    batches = [([{"role": "user", "content": f"I live in {city}."},
                 {"role": "assistant", "content": reply}], day)
               for (city, reply), day in zip(moves, days, strict=True)]
    order = list(batches)
    rng.shuffle(order)
    if twice:
        order += rng.sample(batches, len(batches))
    gov = governor()
    for turns, at in order:
        gov.ingest("a", turns, at=at)
    assert home(gov.engine) == [f"I live in {moves[-1][0]}."]
    history = sorted(t.memory.text for t in gov.engine.trash("a"))
    assert history == sorted(f"I live in {city}." for city, _ in moves[:-1])


def test_a_replay_with_the_real_model_in_both_languages(e5):
    """The same with e5's vectors: the held message is found among the candidate's key
    holders and nearest rows whatever the model puts near it."""
    gov = Governor(MemoryEngine(e5, clock=ticking()))
    ja1 = [{"role": "user", "content": "私は東京に住んでいます。"},
           {"role": "assistant", "content": "いいですね！"},
           {"role": "user", "content": "コーヒーが大好きです。"}]
    ja2 = [{"role": "user", "content": "引っ越して、今は大阪に住んでいます。"},
           {"role": "assistant", "content": "おめでとう！"}]
    for chat in (CHAT1, ja1, CHAT2, ja2):
        gov.ingest("a", chat)
    homes = ("fact:home", "fact:住まい")
    live = sorted(m.text for m in gov.engine.memories("a") if m.key in homes)
    assert len(live) == 2, live
    before = state(gov.engine)
    for chat in (CHAT1, ja1, CHAT2, ja2):
        report = gov.ingest("a", chat)
        assert {i.action for i in report.items} == {"skipped"}, report.items
    assert state(gov.engine) == before
    assert not any("東京" in text or "Tokyo" in text for text in live), live


def test_the_trash_is_read_once_per_change_of_it_not_per_ingest(monkeypatch):
    """Every ingest made one pass over the whole trash (15.6 ms at 20,000 trashed): it is
    indexed once per change of the trash, and what the user forgot stays forgotten."""
    ingest_module = importlib.import_module("omoide.governance.ingest")
    builds = []
    made = ingest_module.TrashedMessages.of
    monkeypatch.setattr(ingest_module.TrashedMessages, "of",
                        staticmethod(lambda trash: builds.append(len(trash)) or made(trash)))
    gov = governor()
    gov.ingest("a", CHAT1)
    tea = next(m for m in gov.engine.memories("a") if "tea" in m.text)
    gov.engine.forget("a", tea.id)
    builds.clear()
    before = state(gov.engine)
    for _ in range(3):  # the same chat again: nothing replayed, the trash read once
        gov.ingest("a", CHAT1)
    assert builds == [1]
    assert [m.text for m in gov.engine.memories("a") if "tea" in m.text] == []
    assert state(gov.engine) == before
    gov.engine.restore("a", tea.id)  # the trash changed: indexed again, once
    gov.ingest("a", CHAT1)
    gov.ingest("a", CHAT1)
    gov.engine.forget("a", tea.id)
    gov.ingest("a", CHAT1)
    assert builds == [1, 0, 1]
    assert [t.memory.id for t in gov.engine.trash("a")] == [tea.id]
