"""Never lose a memory on write (issue 14): negations never merge into what they negate, a
contradiction supersedes with history, the same key replaces everywhere (engine, CLI, MCP),
history is restorable and never ranked by recall."""

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.cli import main
from omoide.engine import Journal, MemoryEngine
from omoide.governance import Governor
from omoide.governance.extract import extract
from omoide.governance.ingest import ingest
from omoide.governance.polarity import negated, stance
from omoide.mcp import build_server
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_mcp import data, run_with_client


def ticking(start=1_700_000_000.0):
    counter = itertools.count()
    return lambda: start + next(counter)


def make_engine(listeners=()):
    return MemoryEngine(HashingEmbedder(64), clock=ticking(), listeners=listeners)


def trashed(e, character="a"):
    return {t.memory.id: t.memory for t in e.trash(character)}


def said_after(before, after):
    """An engine that heard ``before``, then ``after``: (engine, before's item, after's
    items)."""
    e = make_engine()
    first = ingest(e, "a", [before]).stored[0]
    return e, first, ingest(e, "a", [after]).items


def assert_still_live(e, first):
    assert first.memory_id in {m.id for m in e.memories("a")}
    assert first.memory_id not in trashed(e)


# -- polarity ------------------------------------------------------------------------------

LIKES = ["I love spicy ramen", "I like tea", "I always commit before pushing",
         "No, I love it", "Nothing beats ramen", "I don't hate YAML",
         "私は辛いラーメンが大好きです", "Pythonは嫌いじゃない", "必ず、コミットします",
         "すみません、コーヒーが好きです", "少ない量が好き", "毎朝コーヒーを飲まないと始まらない",
         # idioms of wanting more: their negator is no negation
         "I can never get enough of jazz", "I can't live without coffee",
         "I never thought I'd like jazz", "I couldn't be happier with my bike",
         "コーヒーがないと生きていけない", "ポテチがやめられない", "この香り、たまらない",
         # since long ago and still; the other day; a habit before bed, not "used to";
         # "didn't use to like" (a negated past liking) is no dislike of now
         "昔からコーヒーが好き", "前からずっと走っている", "この前は楽しかった",
         "寝る前は本を読んでた", "前はコーヒーが好きじゃなかった"]
DISLIKES = ["I don't like spicy ramen anymore.", "I no longer drink coffee", "I hate YAML",
            "I can't stand jazz", "I'm not a fan of jazz", "I never skip breakfast",
            "I stopped drinking coffee", "I'm over spicy ramen anymore",
            "もう辛いラーメンは好きじゃない。", "Pythonは好きではありません", "Pythonは嫌いです",
            "タバコはやめた", "コーヒーは飲みません", "納豆は苦手です", "もう行かない",
            # Japanese "used to": a habit or liking that ended
            "前は毎朝ジョギングしてた", "昔はコーヒーが好きだった", "以前はタバコを吸っていました",
            "かつては毎朝走っていました。", "昔、よくゲームをしてました"]


def test_polarity_in_english_and_japanese():
    assert [t for t in LIKES if stance(t) != "like"] == []
    assert [t for t in DISLIKES if stance(t) != "dislike"] == []


NOUNS = ["tea", "spicy ramen", "Python", "jazz", "early mornings", "YAML", "Rust"]
JA_NOUNS = ["辛いラーメン", "お茶", "ジャズ", "納豆", "TypeScript", "朝の散歩"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NOUNS), st.sampled_from(["like", "love", "enjoy"]),
       st.sampled_from(["don't", "do not", "no longer", "never"]))
def test_a_negator_flips_an_english_statement(noun, verb, negator):
    assert stance(f"I {verb} {noun}") == "like"
    assert stance(f"I {negator} {verb} {noun}") == "dislike"
    assert stance(f"I {negator} {verb} {noun} anymore") == "dislike"  # stress, not a 2nd "no"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(JA_NOUNS), st.sampled_from(["じゃない", "ではない", "ではありません",
                                                   "じゃないです"]), st.booleans())
def test_a_negation_flips_a_japanese_statement(noun, negation, mou):
    prefix = "もう" if mou else ""
    assert stance(f"{noun}が好きです") == "like"
    assert negated(f"{prefix}{noun}は好き{negation}")
    assert stance(f"{prefix}{noun}は好き{negation}") == "dislike"
    assert stance(f"{noun}は嫌い{negation}") == "like"  # two negatives


# -- no silent loss ------------------------------------------------------------------------


def test_english_negation_supersedes_and_the_original_stays_restorable():
    e = make_engine()
    first = ingest(e, "a", ["I love spicy ramen"]).stored[0].memory_id
    report = ingest(e, "a", ["I don't like spicy ramen anymore."])
    [item] = report.items
    assert item.action == "superseded" and item.supersedes == first
    assert "like -> dislike" in item.reason
    [live] = e.memories("a")
    assert live.text == "I don't like spicy ramen anymore." and live.meta["supersedes"] == [first]
    old = trashed(e)[first]
    assert old.text == "I love spicy ramen" and old.meta["superseded_by"] == live.id
    assert "like -> dislike" in old.meta["superseded_reason"]
    # recall never ranks the old one, and never revives it however close the query
    gov = Governor(e)
    result = gov.recall("a", "I love spicy ramen")
    assert result.revived == [] and [h.memory.id for h in result.hits] == [live.id]
    # restorable: it comes back and the one that replaced it goes to history instead
    e.restore("a", first)
    assert [m.id for m in e.memories("a")] == [first]
    assert "superseded_by" not in e.get("a", first).meta
    assert trashed(e)[live.id].meta["superseded_by"] == first


def test_a_negation_never_merges_into_a_near_identical_typed_memory():
    """The app's loss: a memory typed without a key, then a pasted negation of it that a
    small model puts above the dedup threshold, was 'merged' and the original text gone."""
    e = make_engine()
    typed = e.remember("a", "私は辛いラーメンが大好きです")
    # threshold 0.05: similarity alone would merge anything
    report = ingest(e, "a", ["もう辛いラーメンは好きじゃない。"], dedup_threshold=0.05)
    [item] = report.items
    assert item.action in ("stored", "superseded")
    assert item.memory_id != typed.id
    live = {m.id: m.text for m in e.memories("a")}
    assert live[item.memory_id] == "もう辛いラーメンは好きじゃない。"
    kept = live.get(typed.id) or trashed(e)[typed.id].text
    assert kept == "私は辛いラーメンが大好きです"
    if item.action == "superseded":  # same subject found: the old one is history
        assert trashed(e)[typed.id].meta["superseded_by"] == item.memory_id


def test_the_issue_japanese_pair_supersedes_and_keeps_the_original():
    e = make_engine()
    first = ingest(e, "a", ["私は辛いラーメンが大好きです"]).stored[0]
    [item] = ingest(e, "a", ["もう辛いラーメンは好きじゃない。"]).items
    assert item.key == first.key  # もう is not part of the subject
    assert item.action == "superseded" and item.supersedes == first.memory_id
    assert [m.text for m in e.memories("a")] == ["もう辛いラーメンは好きじゃない。"]
    assert trashed(e)[first.memory_id].text == "私は辛いラーメンが大好きです"
    e.restore("a", first.memory_id)  # restorable: the newer one becomes history instead
    assert [m.text for m in e.memories("a")] == ["私は辛いラーメンが大好きです"]


def test_japanese_contradiction_with_the_same_key_supersedes():
    e = make_engine()
    first = ingest(e, "a", ["辛いラーメンが大好きです"]).stored[0]
    report = ingest(e, "a", ["辛いラーメンは好きじゃないです"])
    [item] = report.items
    assert item.key == first.key and item.action == "superseded"
    assert item.supersedes == first.memory_id
    assert [m.text for m in e.memories("a")] == ["辛いラーメンは好きじゃないです"]
    assert trashed(e)[first.memory_id].text == "辛いラーメンが大好きです"


@pytest.mark.parametrize("before, after, live", [
    ("I love coffee.", "I used to love coffee, but now I prefer tea.",
     ["I used to love coffee", "now I prefer tea."]),
    ("I love jazz.", "I used to be a big fan of jazz.", ["I used to be a big fan of jazz."]),
    ("コーヒーが大好き。", "昔はコーヒーが好きだったけど、今は紅茶派です。",
     ["昔はコーヒーが好きだった", "今は紅茶派です。"]),
])
def test_a_liking_the_user_no_longer_has_retires_the_live_one(before, after, live):
    """"I used to love coffee, but now I prefer tea" was one clause keyed by its words
    (e5's stage) or nothing at all: "I love coffee" stayed live beside it, the change
    unseen, and tea was no preference of its own. The past liking supersedes the live one
    (kept as its history) and what the user prefers now is stored."""
    e = make_engine()
    first = ingest(e, "a", [before]).stored[0]
    ingest(e, "a", [after])
    assert sorted(m.text for m in e.memories("a")) == sorted(live)
    assert trashed(e)[first.memory_id].text == before  # restorable


@pytest.mark.parametrize("before, after", [
    ("I love coffee.", "I used to love coffee and I still do."),
    ("コーヒーが好き。", "昔はコーヒーが好きだったけど今も好き。"),
])
def test_a_liking_said_to_last_retires_nothing(before, after):
    e = make_engine()
    first = ingest(e, "a", [before]).stored[0]
    ingest(e, "a", [after])
    assert before in [m.text for m in e.memories("a")] and first.memory_id not in trashed(e)


@pytest.mark.parametrize("before, after", [
    ("I work as a nurse at the city hospital.", "I work as a doctor at the city hospital."),
    ("My favorite drink is tea", "My favorite drink is coffee now"),
    ("I have two cats.", "I have three cats."),
])
def test_a_new_value_for_a_key_supersedes_and_the_old_one_stays_history(before, after):
    """A new value for the same key was merged into the old memory: the report said
    "merged (same key)", the live text kept the old value and the new one was nowhere."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    (live,) = [m for m in e.memories("a") if m.key == first.key]
    assert live.text == after and live.meta.get("value") != first.text
    old = trashed(e)[first.memory_id]
    assert old.text == before and old.meta["superseded_by"] == live.id
    e.restore("a", first.memory_id)  # restorable, and one version live
    assert [m.text for m in e.memories("a") if m.key == first.key] == [before]


@pytest.mark.parametrize("before, after", [
    ("My daughter is five years old.", "My daughter is a doctor."),
    ("My daughter is a doctor.", "My daughter is allergic to peanuts."),
    ("My wife is a vegetarian.", "My wife is a teacher."),
    ("My son is a teenager.", "My son is a nurse"),
    ("My mom is sick.", "My mom is a retiree."),
    ("娘はピーナッツアレルギーです。", "娘は結婚しています。"),
    ("妻はベジタリアンです。", "妻は先生です。"),
    ("娘はサッカーをしています。", "娘は看護師をしています。"),
    ("My phone is broken.", "My phone is an iPhone."),
    ("My job is stressful.", "I work as a nurse."),
    # someone named is not the speaker, two of a relation are two people
    ("私は京都に住んでいます。", "ケンは大阪に住んでいます。"),
    ("私は30歳です。", "ポチは3歳です。"),
    ("私は京都出身です。", "ユキは札幌出身です。"),
    ("兄のケンは30歳です。", "兄のジュンは25歳です。"),
    ("I have a brother named Ken.", "I have a brother named Jun."),
    ("I have two brothers.", "I have a brother named Ken."),
    ("I have a dog named Pochi.", "I have a dog named Koro."),
    ("ポチという名前の犬を飼っています。", "コロという名前の犬を飼っています。"),
])
def test_another_attribute_of_a_person_or_thing_never_supersedes_the_first(before, after):
    """Every "my <person> is ..." fact had one key (fact:daughter, fact:娘): her job
    superseded her age, her allergy her job, 「サッカーをしています」 was read as a job;
    both are true at once, so both stay live."""
    e = make_engine()
    ingest(e, "a", [before])
    [item] = ingest(e, "a", [after]).items
    assert item.action == "stored", item
    assert sorted(m.text for m in e.memories("a")) == sorted([before, after])
    assert trashed(e) == {}


@pytest.mark.parametrize("before, after", [
    ("My daughter is a doctor.", "My daughter is a lawyer now."),
    ("My son is 12.", "My son is thirteen years old."),
    ("娘は看護師をしています。", "娘は医者です。"),
    ("My car's color is red.", "My car's colour is blue now."),
    ("My blood type is A.", "My blood type is O."),
])
def test_an_age_a_job_or_a_named_attribute_is_one_slot(before, after):
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item


@pytest.mark.parametrize("before, after", [
    ("I prefer cats over dogs.", "Actually I prefer dogs over cats now."),
    ("I like tea more than coffee.", "These days I like coffee better than tea."),
    ("I'd pick Vim over Emacs any day.", "Honestly I'd pick Emacs over Vim now."),
    ("私は犬より猫が好きです。", "今は猫より犬のほうが好き。"),
    ("コーヒーより紅茶が好き", "最近は紅茶よりコーヒーの方が好きかな"),
])
def test_a_reversed_comparison_supersedes_the_first_and_keeps_it_as_history(before, after):
    """"cats over dogs", then "dogs over cats now": the two are keyed by their subjects
    (cat, dog), so the same-key rule never met and both stayed live as the user's current
    preference, recall ranking the old one as readily as the new."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert "reversed comparison" in item.reason
    assert [m.text for m in e.memories("a")] == [after]
    old = trashed(e)[first.memory_id]
    assert old.text == before and old.meta["superseded_by"] == item.memory_id
    e.restore("a", first.memory_id)  # restorable: the first is the live one again
    assert [m.text for m in e.memories("a")] == [before]


@pytest.mark.parametrize("before, after", [
    ("I prefer cats over dogs.", "I like cats more than birds."),  # another rival
    ("I prefer cats over dogs.", "I like dogs more than birds."),
    ("I prefer cats over dogs.", "I hate dogs more than cats."),  # agrees with the first
    ("I prefer cats over dogs.", "I like dogs."),  # no rival named: both can hold
    ("私は犬より猫が好きです。", "鳥より犬が好き。"),
])
def test_a_comparison_that_does_not_reverse_the_first_leaves_it_live(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("before, after", [
    ("I run every morning.", "I used to run every morning, but my knees gave out."),
    ("We play chess every Sunday.", "We used to play chess every Sunday."),
    ("I love sushi.", "I used to love sushi."),
])
def test_a_habit_or_liking_the_user_used_to_have_retires_the_live_one(before, after):
    """"I used to run every morning" was stored as a live habit of its own
    (pattern:used_to_run_every_morning, polarity like) beside "I run every morning": both
    said the user runs every morning. It is the same slot with the other polarity."""
    e = make_engine()
    first = ingest(e, "a", [before]).stored[0]
    item = ingest(e, "a", [after]).items[0]
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert item.key == first.key
    assert first.memory_id in trashed(e)


@pytest.mark.parametrize("text", ["I'm used to waking up early", "I got used to the noise",
                                  "She is used to it", "I'm getting used to decaf"])
def test_being_used_to_something_is_no_negation(text):
    assert stance(text) == "like" and not negated(text)


@pytest.mark.parametrize("before, after", [
    ("毎朝ジョギングしています", "前は毎朝ジョギングしてた"),
    ("コーヒーが好きです", "前はコーヒーが好きだった"),
    ("コーヒーが大好き", "以前はコーヒーが大好きでした"),
    ("よく走っています", "昔はよく走っていた"),
    ("毎日タバコを吸っています", "以前はタバコを吸っていました"),
    ("毎日ゲームをしています", "昔はよくゲームをしていました"),
    ("毎朝走っています", "かつては毎朝走っていました"),
])
def test_a_japanese_habit_or_liking_the_user_used_to_have_retires_the_live_one(before, after):
    """「前は毎朝ジョギングしてた」 (昔は/以前は/前は/かつては and a past end: Japanese "used
    to") extracted nothing, so 「毎朝ジョギングしています」 stayed live as the user's habit;
    a past liking after 前は/以前は was read as someone else's (「前はコーヒーが好き」: 前 as
    a person). It is the present statement's slot with the other polarity."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert item.key == first.key and item.polarity == "dislike"
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before
    e.restore("a", first.memory_id)  # restorable: the past statement becomes its history
    assert [m.text for m in e.memories("a")] == [before]


@pytest.mark.parametrize("before, after", [
    ("コーヒーが好きです", "昔からコーヒーが好き"),  # since long ago, and still
    ("毎朝走っています", "前からずっと毎朝走っている"),
])
def test_a_japanese_habit_or_liking_said_to_last_is_the_same_slot_and_retires_nothing(
        before, after):
    """「昔から」「前からずっと」 say how long it has lasted: they were part of the key
    (preference:昔_コーヒー), a second slot beside the first."""
    e, first, [item] = said_after(before, after)
    assert item.key == first.key and item.polarity == "like", item
    assert item.action != "superseded" and first.memory_id not in trashed(e)
    assert before in [m.text for m in e.memories("a")]


@pytest.mark.parametrize("before, after", [
    ("甘いものが大好き", "子供の頃は甘いもの大好きだった"),
    ("毎朝走っています", "学生の頃は毎朝走っていた"),
])
def test_a_habit_or_liking_of_a_period_of_life_retires_nothing(before, after):
    """「子供の頃は…」 says what was true then, not that it has ended (a grown-up still
    may love sweets): the childhood liking retired the live one as a liking that ended."""
    e = make_engine()
    first = ingest(e, "a", [before]).stored[0]
    ingest(e, "a", [after])
    assert before in [m.text for m in e.memories("a")] and first.memory_id not in trashed(e)


@pytest.mark.parametrize("text, found", [
    ("昔は東京に住んでた", [("fact", "fact:昔_東京_住んでた")]),  # a past home: its own fact
    ("前は銀行で働いてた", [("fact", "fact:前_銀行_働いてた")]),
    ("前は八百屋やってた", []),  # a past job said with a verb of doing, no habit
    ("前は兄が毎朝起こしてくれてた", []),  # what someone else did
])
def test_a_used_to_lead_leaves_a_past_home_a_job_and_someone_else_as_they_were(text, found):
    assert [(c.kind, c.key) for c in extract([text])[0]] == found


@pytest.mark.parametrize("text", ["前は嫌いだったけど今は好き", "前は納豆が嫌いだったけど今は好き",
                                  "昔はコーヒーが苦手だったけど、今は大好き"])
def test_a_past_dislike_and_a_liking_now_is_never_stored_as_a_dislike(text):
    """The past clause of 「前は嫌いだったけど今は好き」 was stored as a dislike keyed by its
    lead (preference:前); a past dislike says nothing of now, the later clause does."""
    assert [c.key for c in extract([text])[0] if c.polarity == "dislike"] == []


def test_a_past_dislike_then_a_liking_now_retires_the_live_dislike():
    e = make_engine()
    first = ingest(e, "a", ["納豆が嫌い"]).stored[0]
    ingest(e, "a", ["前は納豆が嫌いだったけど今は好き"])
    assert [m.text for m in e.memories("a")] == ["今は好き"]
    assert first.memory_id in trashed(e)


def test_the_same_words_again_are_a_repeat_not_a_new_value():
    e = make_engine()
    first = ingest(e, "a", ["I love green tea"]).stored[0]
    [item] = ingest(e, "a", ["i love GREEN tea!"]).items
    assert (item.action, item.memory_id) == ("merged", first.memory_id)
    assert [m.text for m in e.memories("a")] == ["I love green tea"]


def test_a_statement_said_before_the_live_one_becomes_its_history():
    """A conversation ingested later but dated earlier ("I love tea" in 2019, after "I hate
    tea" today) replaced today's memory; the older statement is now the history."""
    e = make_engine()
    today = ingest(e, "a", ["I hate tea"]).stored[0]
    [item] = ingest(e, "a", ["I love tea"], at=1_546_300_800.0).items  # 2019-01-01
    assert item.action == "superseded" and item.memory_id == today.memory_id, item
    assert [m.text for m in e.memories("a")] == ["I hate tea"]
    (old,) = [m for m in trashed(e).values() if m.text == "I love tea"]
    assert old.meta["superseded_by"] == today.memory_id
    assert old.id in e.get("a", today.memory_id).meta["supersedes"]


def test_a_typed_memory_without_a_key_is_superseded_by_its_contradiction():
    e = make_engine()
    typed = e.remember("a", "I love spicy ramen")  # no key: its subject comes from its text
    [item] = ingest(e, "a", ["I don't like spicy ramen anymore."]).items
    assert item.action == "superseded" and item.supersedes == typed.id
    assert "same subject" in item.reason
    assert trashed(e)[typed.id].text == "I love spicy ramen"


def test_a_typed_memory_without_a_key_takes_its_repeat_and_the_key():
    e = make_engine()
    typed = e.remember("a", "I love spicy ramen")
    [item] = ingest(e, "a", ["I really love spicy ramen"]).items
    assert (item.action, item.memory_id) == ("merged", typed.id)
    [live] = e.memories("a")
    assert live.text == "I love spicy ramen" and live.key == "preference:spicy_ramen"
    assert live.kind == "fact" and live.meta["merges"] == 1
    assert [(t.memory.text, t.memory.meta["merged_into"]) for t in e.trash("a")] == [
        ("I really love spicy ramen", typed.id)]  # its words kept, restorable


def test_near_identical_notes_of_opposite_polarity_never_merge():
    e = make_engine()
    note = e.remember("a", "We went to the new ramen place and I loved it", kind="diary")
    from omoide.governance.dedup import DedupIndex

    vector = e.embedder.embed_passages(["We went to the new ramen place and I didn't love it"])
    index = DedupIndex(e.stores["a"], threshold=0.05)
    assert index.match("diary", None, vector[0], "dislike") is None
    assert index.match("diary", None, vector[0], "like").memory_id == note.id


def test_a_dry_run_shows_the_supersede_and_writes_nothing():
    journal = Journal()
    e = make_engine([journal])
    ingest(e, "a", ["I love spicy ramen"])
    before = len(journal.changes)
    report = ingest(e, "a", ["I don't like spicy ramen anymore."], dry_run=True)
    assert [i.action for i in report.items] == ["superseded"]
    assert len(journal.changes) == before and e.trash("a") == []


# -- same key replaces, everywhere ---------------------------------------------------------


def test_engine_remember_with_the_same_key_replaces():
    e = make_engine()
    tea = e.remember("a", "Favourite drink: green tea", key="favorite_drink")
    coffee = e.remember("a", "Favourite drink: black coffee", key="favorite_drink")
    assert [m.id for m in e.find_by_key("a", "favorite_drink")] == [coffee.id]
    assert coffee.meta["supersedes"] == [tea.id]
    assert trashed(e)[tea.id].meta["superseded_by"] == coffee.id
    hits = e.recall("a", "Favourite drink: green tea")
    assert tea.id not in {h.memory.id for h in hits}
    # a batch that sets the key twice keeps the last, the first in history
    water, juice = e.remember_many("a", [{"text": "water", "key": "favorite_drink"},
                                         {"text": "orange juice", "key": "favorite_drink"}])
    assert [m.id for m in e.find_by_key("a", "favorite_drink")] == [juice.id]
    assert set(trashed(e)) == {tea.id, coffee.id, water.id}
    # restore swaps back: one key, one live memory
    e.restore("a", tea.id)
    assert [m.id for m in e.find_by_key("a", "favorite_drink")] == [tea.id]
    assert trashed(e)[juice.id].meta["superseded_by"] == tea.id


def test_update_to_a_held_key_replaces_its_holder():
    e = make_engine()
    tea = e.remember("a", "green tea", key="favorite_drink")
    coffee = e.remember("a", "black coffee")
    e.update("a", coffee.id, key="favorite_drink")
    assert [m.id for m in e.find_by_key("a", "favorite_drink")] == [coffee.id]
    assert trashed(e)[tea.id].meta["superseded_by"] == coffee.id


def test_cli_remember_with_the_same_key_replaces(tmp_path, capsys):
    from tests.test_cli import Cli

    cli = Cli(tmp_path / "ws.db", capsys)
    tea = cli.json("remember", "alice", "Favourite drink: green tea", "--key", "favorite_drink")
    out = cli.ok("remember", "alice", "Favourite drink: black coffee", "--key", "favorite_drink")
    assert f"superseded {tea['id']}" in out and "restore" in out
    report = cli.json("audit", "alice")
    assert report["counts"]["live"] == 1 and report["counts"]["trashed"] == 1
    [pair] = report["superseded"]
    assert pair["old"]["id"] == tea["id"] and pair["new"]["live"]
    found = cli.json("recall", "alice", "Favourite drink: green tea")
    assert found["revived"] == []
    assert [h["text"] for h in found["hits"]] == ["Favourite drink: black coffee"]
    cli.ok("restore", "alice", tea["id"])
    assert cli.json("audit", "alice")["superseded"][0]["old"]["text"] == (
        "Favourite drink: black coffee")
    assert main  # the same entry point the Cli helper drives


def test_mcp_remember_with_the_same_key_replaces(tmp_path):
    workspace = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    server = build_server(workspace)

    async def body(c):
        tea = data(await c.call_tool("remember", {"character": "alice", "text": "green tea",
                                                  "key": "favorite_drink"}))
        coffee = data(await c.call_tool("store_fact", {"character": "alice",
                                                       "text": "black coffee",
                                                       "key": "favorite_drink"}))
        assert coffee["meta"]["supersedes"] == [tea["id"]]
        audit = data(await c.call_tool("audit", {"character": "alice"}))
        return tea, coffee, audit

    try:
        tea, coffee, audit = run_with_client(server, body)
        assert audit["counts"]["live"] == 1
        assert audit["superseded"][0]["old"]["id"] == tea["id"]
        assert [m.id for m in workspace.engine.find_by_key("alice", "favorite_drink")] == [
            coffee["id"]]
    finally:
        workspace.close()
    assert json.dumps(audit, ensure_ascii=False)


# -- what a similarity or a subject may take the place of (QA findings, session 16) -------

DIARY = ("Ken told me he is moving to Sapporo next spring. I love spicy ramen. "
         "Mari lent me her camera for the trip.")


def test_a_preference_never_supersedes_a_diary_note_that_mentions_its_subject():
    """A note of several sentences says other things too: "same subject" took it out of the
    live set for a one-line negation (and a repeat was folded into it, its text kept
    nowhere)."""
    for said in ("I don't like spicy ramen anymore.", "I really love spicy ramen"):
        e = make_engine()
        diary = e.remember("a", DIARY, kind="diary")
        [item] = ingest(e, "a", [said], dedup_threshold=0.05).items
        assert item.action == "stored", item
        assert {m.text for m in e.memories("a")} == {DIARY, said}
        assert e.get("a", diary.id).key is None


def test_a_key_and_no_key_never_merge_on_similarity():
    """dedup's rule (a keyed "I love Java" and a keyless "I love JavaScript" are apart
    whatever their cosine): ``keys_compatible(None, key)`` was True, so a keyless candidate
    merged into a keyed memory and its text was kept nowhere."""
    from omoide.governance.dedup import DedupIndex, keys_compatible

    assert keys_compatible(None, None) and keys_compatible("k", "k")
    assert not keys_compatible(None, "k") and not keys_compatible("k", None)
    e = make_engine()
    keyed = e.remember("a", "I love JavaScript", key="preference:javascript",
                       kind="preference")
    index = DedupIndex(e.stores["a"], threshold=0.05)
    vector = e.stores["a"].kernel.vector(keyed.id)
    assert index.match("preference", None, vector, "like") is None


def test_cold_maintenance_never_folds_a_keyed_memory_into_a_keyless_one():
    from omoide.governance import tiers

    e = make_engine()
    java = e.remember("a", "I love Java", key="preference:java", kind="preference")
    e.remember("a", "I love Java!", kind="preference")  # keyless, near-identical
    tiers.maintain_cold(e, "a", force=True, dedup_threshold=0.05)
    assert java.id in {m.id for m in e.memories("a")}
    assert [m.text for m in e.find_by_key("a", "preference:java")] == ["I love Java"]


@pytest.mark.parametrize("new, old, grows", [
    ("I like tea with milk", "I like tea", True),
    ("I like teaching", "I like tea", False),
    ("I love JavaScript", "I love Java", False),
    ("We went to the parking lot", "We went to the park", False),
    ("Oh, I like TEA a lot!", "i like tea", True),
    ("I like tea", "I like tea", False),
    ("お茶が好きです。毎日飲みます", "お茶が好きです", True),
    # scripts written without spaces: a sentence was one "word", never a superset
    ("ฉันชอบชาใส่นม", "ฉันชอบชา", True),  # Thai: I like tea with milk / I like tea
    ("ฉันไม่ชอบชา", "ฉันชอบชา", False),  # I don't like tea
    ("ខ្ញុំចូលចិត្តតែជាមួយទឹកដោះគោ", "ខ្ញុំចូលចិត្តតែ", True),  # Khmer
    ("𠮷野家の牛丼が好き", "𠮷野家", True),  # a CJK character beyond the BMP
])
def test_a_strict_superset_holds_the_old_words_whole(new, old, grows):
    """It compared characters: "I like teaching" 'grew' "I like tea" and replaced it."""
    from omoide.governance.dedup import is_strict_superset

    assert is_strict_superset(new, old) is grows


def test_fields_governance_keeps_in_meta_may_hold_anything_the_user_wrote():
    """The audit and a merge read ``superseded_by``, ``history``, ``merges`` as their own:
    a user's meta of another shape crashed them (TypeError, ValueError)."""
    from omoide.governance.audit import audit

    e = make_engine()
    odd = e.remember("a", "I love spicy ramen", key="preference:spicy_ramen",
                     meta={"merges": "many", "history": 3})
    gone = e.remember("a", "A note", meta={"superseded_by": ["x"], "superseded_reason": 5})
    e.forget("a", gone.id)
    report = audit(e, "a")
    assert report.superseded == [] or all(s["old"]["id"] != gone.id
                                          for s in report.superseded)
    [item] = ingest(e, "a", ["I really love spicy ramen"]).items
    assert item.action == "merged" and e.get("a", odd.id).meta["merges"] == 1


@pytest.mark.parametrize("odd", [5, "zz", {"a": 1}, [[1]], None])
def test_a_users_supersedes_of_another_shape_links_nothing_and_crashes_nothing(odd):
    """``meta.supersedes`` is the engine's list of the ids a memory replaced; a number
    there crashed every later edit of the memory (TypeError), and a text was read as
    one-letter ids."""
    e = make_engine()
    old = e.remember("a", "Alice likes tea", key="drink")
    new = e.remember("a", "Alice likes coffee", key="drink", meta={"supersedes": odd})
    assert new.meta["supersedes"] == [old.id]
    plain = e.remember("a", "Alice keeps a red notebook", meta={"supersedes": odd})
    edited = e.update("a", plain.id, text="Alice keeps a blue notebook")
    [history] = [t.memory for t in e.trash("a") if t.memory.text == "Alice keeps a red notebook"]
    assert edited.meta["supersedes"] == [history.id]


def test_a_chat_with_a_change_imported_again_changes_nothing():
    """"nurse" then "doctor" in one session: a second import of the chat replayed both
    changes (nurse live again, then a new copy of doctor): new ids, the pin left behind,
    two more history entries each time."""
    e = make_engine()
    gov = Governor(e)
    chat = ["I work as a nurse.", "I changed jobs, I work as a doctor now."]
    first = gov.ingest("a", chat, meta={"session": "2024-05-01"})
    [live] = [m for m in e.memories("a") if m.key == "fact:job"]
    assert "doctor" in live.text and first.stored
    gov.promote("a", live.id, pin=True)
    trash_before = sorted(t.memory.id for t in e.trash("a"))
    again = gov.ingest("a", chat, meta={"session": "2024-05-01"})
    assert {i.action for i in again.items} == {"skipped"}
    [still] = [m for m in e.memories("a") if m.key == "fact:job"]
    assert still.id == live.id and still.meta.get("pinned") is True
    assert sorted(t.memory.id for t in e.trash("a")) == trash_before


def test_a_new_value_of_a_pinned_memory_keeps_the_pin():
    """The pin was left on the old version (now history): the slot the user pinned fell out
    of the hot tier with the first new value."""
    e = make_engine()
    gov = Governor(e)
    gov.ingest("a", ["I work as a nurse."])
    [job] = [m for m in e.memories("a") if m.key == "fact:job"]
    gov.promote("a", job.id, pin=True)
    gov.ingest("a", ["I work as a doctor."])
    [now] = [m for m in e.memories("a") if m.key == "fact:job"]
    assert "doctor" in now.text and now.meta.get("pinned") is True
    assert now.meta.get("tier") == "hot"


@pytest.mark.parametrize("before, after", [
    ("I'm getting married in June.", "I'm getting married in October."),
    ("I'm going to quit my job in March.", "I'm going to quit my job in April."),
    ("来年ベルリンに引っ越します。", "来月ベルリンに引っ越します。"),
    ("金曜日にコンサートに行く。", "土曜日にコンサートに行く。"),
])
def test_a_plan_moved_to_another_date_supersedes(before, after):
    """A plan's key leaves its date out (decision:married): the new date merged into the old
    plan, whose live text kept the old date; the new words sat in the trash until a purge."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before


def test_the_same_plan_with_the_same_date_in_other_words_merges():
    e = make_engine()
    first = ingest(e, "a", ["I'm getting married in October."]).stored[0]
    [item] = ingest(e, "a", ["I will get married in October."]).items
    assert (item.action, item.memory_id) == ("merged", first.memory_id), item


@pytest.mark.parametrize("a, b, same", [
    ("on Sat at 5pm", "on Saturday at 5 pm", True),
    ("土曜に", "土曜日に", True),
    ("in May", "in June", False),
    ("I may move in June", "in June", True),  # "may" the verb is no month
    ("next week", "next month", False),
    ("来月", "来年", False),
    ("2024年5月3日", "2024年5月4日", False),
])
def test_time_words_fold_spellings_and_tell_dates_apart(a, b, same):
    from omoide.governance.when_words import time_words
    assert (time_words(a) == time_words(b)) is same


@pytest.mark.parametrize("before, after", [
    ("I love coffee.", "Coffee is not my thing anymore."),
    ("Sushi is my favourite.", "Sushi is no longer my favourite."),
    ("コーヒーが大好きです。", "コーヒーが大好き、なんてことはない。"),
    ("コーヒーが大好きです。", "コーヒーが大好きだったのは昔の話。"),
])
def test_a_denied_or_past_stance_is_a_contradiction_not_a_repeat(before, after):
    """The rules read the stance before its negation ("is not my thing", 「なんてことはない」)
    as a like: it merged into the like, whose text stayed live."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.polarity == "dislike", item
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before


def test_a_chat_dated_before_the_value_was_said_again_does_not_replace_it():
    """"nurse" in January and again in October, then a chat of April saying "doctor"
    imported: it superseded the value the user had confirmed since (only the first time it
    was said was compared)."""
    e = make_engine()
    january, april, october = 1_704_067_200.0, 1_711_929_600.0, 1_727_740_800.0
    first = ingest(e, "a", ["I work as a nurse."], at=january).stored[0]
    assert ingest(e, "a", ["I work as a nurse."], at=october).items[0].action == "merged"
    [item] = ingest(e, "a", ["I work as a doctor."], at=april).items
    assert item.action == "superseded" and item.memory_id == first.memory_id, item
    assert [m.text for m in e.memories("a")] == ["I work as a nurse."]
    assert [t.memory.text for t in e.trash("a")] == ["I work as a doctor."]  # its history


# -- an activity ended (or taken up again) under another key --------------------------------

@pytest.mark.parametrize("before, after", [
    ("I drink coffee every day.", "I quit coffee."),
    ("I go to the gym every Monday.", "I stopped going to the gym."),
    ("I smoke a pack a day.", "I quit smoking last year."),
    ("I decided to learn Spanish.", "I gave up on Spanish."),
    ("毎週月曜にジムに行っています。", "ジムに行くのをやめた。"),
    ("毎朝コーヒーを飲んでいます。", "コーヒーをやめました。"),
    ("スペイン語を勉強することにした。", "スペイン語はやめた。"),
    # taken up again: the newer statement is the truth, the ending its history
    ("I quit coffee.", "I drink coffee every morning again."),
    # ended without a stop verb: it was extracted as nothing at all
    ("I go to the gym every Monday.", "I don't go to the gym anymore."),
    ("I play tennis on weekends.", "I no longer play tennis."),
    ("I go to the gym every Monday.", "I don't go to the gym on Mondays anymore."),
])
def test_an_activity_ended_under_another_key_retires_the_live_one(before, after):
    """"I drink coffee every day" (pattern:drink_coffee_every_day), then "I quit coffee"
    (decision:coffee): two keys, so the same-key rule never met them and both stayed live,
    the habit still read as current. The same for a habit ended in Japanese and a plan given
    up. The ending supersedes what it ends; the old memory is its history, restorable."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before
    e.restore("a", first.memory_id)
    assert first.memory_id in {m.id for m in e.memories("a")}


@pytest.mark.parametrize("before, after", [
    ("I run every morning.", "I don't run on weekends anymore."),  # a part of it ended
    ("I drink coffee every day.", "I quit sugar."),  # another activity
    ("I love coffee.", "I quit coffee."),  # a liking is no activity: stopping is no dislike
    ("I drink coffee every day.", "I quit coffee cake."),
    ("毎朝走っています。", "ジムはやめた。"),
    ("I quit smoking.", "I stopped drinking."),
])
def test_an_ending_of_something_else_retires_nothing(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("text", ["I don't know anymore.", "I don't care anymore",
                                  "I don't have time anymore", "I no longer trust him",
                                  "I don't think so anymore"])
def test_a_state_that_ended_is_no_habit(text):
    """"I don't go to the gym anymore" is a habit ended; a state or a feeling is none."""
    found, _ = extract([text], roles=("user",))
    assert [c for c in found if c.kind == "pattern"] == []


@pytest.mark.parametrize("before, after", [
    ("大阪に住んでいます。", "先月東京に引っ越しました。"),
    ("大阪に住んでいます。", "東京へ引っ越したばかりです。"),
    ("I live in Osaka.", "I moved to Tokyo last month."),
])
def test_a_move_is_a_new_home(before, after):
    """「先月東京に引っ越しました」 was a decision (decision:先月東京, the time word in its
    key) beside the live 「大阪に住んでいます」: both stayed live as where the user lives. A
    move done is the home's new value, as "I moved to Tokyo" is in English."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert [m.text for m in e.memories("a")] == [after]


@pytest.mark.parametrize("text", ["来月東京に引っ越します。", "東京に引っ越したい。",
                                  "東京に引っ越したら犬を飼いたい。"])
def test_a_move_ahead_or_wished_is_no_home(text):
    found, _ = extract([text], roles=("user",))
    assert all(c.key != "fact:住まい" for c in found), found


# -- a habit moved to another time ----------------------------------------------------------

@pytest.mark.parametrize("before, after", [
    ("I run every morning.", "These days I run in the evening instead."),
    ("I go to the gym every Monday.", "I go to the gym on Fridays now."),
    ("毎朝ジョギングしています。", "最近は夜にジョギングするようにしています。"),
    ("毎週月曜にジムに行っています。", "今は毎週金曜にジムに行っています。"),
])
def test_a_habit_moved_to_another_time_retires_the_old_time(before, after):
    """"I run every morning", then "These days I run in the evening instead": two keys
    (run_every_morning, run_in_evening), both stayed live, and recall gave the morning as the
    user's habit. A change said as one (instead, now, these days; 最近は, 今は) of the
    same activity at another recurring time is the habit's new value: it supersedes."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before


@pytest.mark.parametrize("before, after", [
    ("I run every morning.", "I run in the evening too now."),  # added, not moved
    ("I run every morning.", "I also run on weekends now."),
    ("I run every morning.", "I run in the evening."),  # no change said: both may hold
    ("I run every morning.", "These days I swim in the evening."),  # another activity
    ("毎朝ジョギングしています。", "最近は夜もジョギングしています。"),
])
def test_a_habit_added_at_another_time_retires_nothing(before, after):
    e, first, _ = said_after(before, after)
    assert first.memory_id in {m.id for m in e.memories("a")}


# -- life changes of a one-value slot -------------------------------------------------------

@pytest.mark.parametrize("before, after", [
    ("I'm single.", "I got married in June."),
    ("I'm married.", "I got divorced last year."),
    ("I got engaged!", "We got married last weekend, I'm married now."),
    ("独身です。", "6月に結婚しました。"),
    ("結婚しています。", "去年離婚しました。"),
    # a job given up: the job is no longer held
    ("I work as a nurse.", "I quit my job last week."),
    ("I work at Google.", "I resigned last month."),
    ("看護師として働いています。", "仕事を辞めました。"),
])
def test_a_life_change_supersedes_the_state_it_ends(before, after):
    """"I'm single" (fact:single), then "I got married in June" (fact:married): two keys,
    both live, recall gave the user as single and married. "I work as a nurse" (fact:job),
    then "I quit my job" (decision:job): the job stayed the user's. One slot, the newer
    statement the truth and the old its history."""
    e, first, items = said_after(before, after)
    assert [i.action for i in items if i.supersedes == first.memory_id] == ["superseded"], items
    assert first.memory_id in trashed(e)


@pytest.mark.parametrize("before, after", [
    ("I work as a nurse.", "I quit smoking."),
    ("I work as a nurse.", "My sister quit her job."),
    ("I'm single.", "My sister got married in June."),
    ("I'm married.", "I'm vegetarian."),
])
def test_another_change_leaves_the_state(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("before, after", [
    ("I work as a nurse.", "I'm going to quit my job next month."),
    ("I work as a nurse.", "I want to quit my job."),
    ("I drink coffee every day.", "I'm going to quit coffee."),
    ("I go to the gym every Monday.", "I'll stop going to the gym soon."),
    ("看護師として働いています。", "来月仕事を辞めるつもりです。"),
    ("毎朝コーヒーを飲んでいます。", "コーヒーをやめようかな。"),
])
def test_an_ending_ahead_or_wished_retires_nothing_yet(before, after):
    """"I'm going to quit my job next month" superseded "I work as a nurse": the job went to
    the trash while the user still held it. An ending ahead, wished or weighed ends nothing
    until it is done."""
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


def test_an_ending_in_may_is_done():
    e, first, [item] = said_after("I drink coffee every day.", "I quit coffee in May.")
    assert item.supersedes == first.memory_id, item


@pytest.mark.parametrize("before, after", [
    ("I have a dog named Max.", "My dog Max passed away last month."),
    ("I have a cat called Luna.", "our cat Luna was put down last week"),
    ("犬のポチを飼っています。", "ポチが亡くなりました。"),
    ("猫のミケを飼ってる", "うちの猫のミケが死んじゃった"),
    # a bare name, as 「ポチが亡くなりました」 already was
    ("I have a dog named Max.", "Max passed away last night."),
    ("We have a cat called Luna.", "Luna was put to sleep this morning"),
    ("My grandpa lives in Osaka.", "Grandpa passed away in March."),
])
def test_a_pet_or_person_who_died_is_no_longer_had(before, after):
    """"I have a dog named Max", then "My dog Max passed away": the death extracted nothing,
    and the character went on asking after Max. The death is a fact of its own and the live
    fact naming Max becomes its history, restorable."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before


@pytest.mark.parametrize("before, after", [
    ("I have a dog named Max.", "My cat Luna died."),  # another pet
    ("I have a dog named Max.", "My phone died."),  # no being
    ("犬のポチを飼っています。", "スマホが死んだ"),
    ("犬のポチを飼っています。", "祖母が亡くなりました。"),
    ("I have a dog named Max.", "Luna passed away."),  # another name
    ("I have a dog named Max.", "He passed away last year."),  # no name
    ("I have a dog named Max.", "max passed away"),  # no capital: not read as a name
    ("I have a cat called Spotify.", "Spotify died again"),  # a bare "died": apps die too
])
def test_another_death_leaves_the_fact(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("before, after", [
    ("I live with my parents.", "I finally moved out of my parents' place last month."),
    ("I live alone in a tiny flat.", "I moved in with my girlfriend in March."),
    ("I live in Sapporo.", "I moved back home to Osaka."),
])
def test_a_move_out_or_in_is_the_homes_new_value(before, after):
    """"I live with my parents", then "I moved out": the move extracted nothing and the
    character still believed the user lived with their parents. A move done (to, out, in with,
    back) is the home's new value, as "I moved to Tokyo" already was; the old one is history."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert trashed(e)[first.memory_id].text == before


@pytest.mark.parametrize("after", ["I'm moving out next month.", "I want to move out.",
                                   "My sister moved out.", "I moved out of the way."])
def test_a_move_ahead_wished_or_of_someone_else_leaves_the_home(after):
    e, first, _ = said_after("I live with my parents.", after)
    assert_still_live(e, first)



@pytest.mark.parametrize("before, after", [
    ("コーヒー派です。", "コーヒー派から紅茶派になりました。"),
    ("犬派です", "最近、犬派をやめて猫派に転向した"),
    ("I'm a cat person.", "I went from a cat person to a dog person."),
    ("I'm a cat person.", "I used to be a cat person but now I'm a dog person."),
    ("I'm a morning person.", "I'm no longer a morning person."),
])
def test_a_camp_left_for_another_is_history(before, after):
    """「コーヒー派です」, then 「コーヒー派から紅茶派になりました」: the new camp was keyed
    `preference:コーヒー派_紅茶` and both stayed live, so the character offered coffee. A camp
    the user says they left (both named) is now history, restorable."""
    e, first, items = said_after(before, after)
    assert [i.supersedes for i in items if i.supersedes] == [first.memory_id], items
    assert trashed(e)[first.memory_id].text == before


@pytest.mark.parametrize("before, after", [
    ("コーヒー派です。", "今は紅茶派です。"),  # no camp named as left: which camps compete is
    ("I'm a cat person.", "I'm a dog person now."),  # not guessed
    ("犬派です", "コーヒー派から紅茶派になりました。"),  # another camp left
    ("I'm a cat person.", "My sister went from a cat person to a dog person."),
    ("I'm a cat person.", "I used to be a cat person and I still am."),
])
def test_a_camp_not_said_as_left_stays(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("before, after", [
    ("I'm a vegetarian.", "I'm a nurse."),
    ("I'm a smoker.", "I'm a teacher now."),
    ("I'm a Christian.", "I'm a student."),
    ("I'm a perfectionist.", "I'm a software engineer."),
    ("I'm a dog owner.", "I'm an accountant."),
])
def test_what_i_am_that_is_no_job_is_not_retired_by_a_job(before, after):
    """"I'm a vegetarian" was keyed fact:job (its -ian read as a job's suffix), so the next
    "I'm a nurse" superseded it: the diet went to the trash as the old job. A diet, a faith,
    a habit or a standing is keyed by its own noun; only a job takes the job's slot."""
    e, first, items = said_after(before, after)
    assert first.key != "fact:job", first
    assert_still_live(e, first)
    assert [i.action for i in items] == ["stored"], items


@pytest.mark.parametrize("before, after", [
    ("I'm a nurse.", "I'm a teacher now."),
    ("I'm a librarian.", "I'm a baker these days."),
])
def test_a_new_job_still_takes_the_jobs_slot(before, after):
    e, first, items = said_after(before, after)
    assert first.key == "fact:job"
    assert [i.supersedes for i in items] == [first.memory_id], items


@pytest.mark.parametrize("before, after", [
    ("I have a guitar.", "I sold my guitar last week."),
    ("I own a Honda Civic.", "I sold my Honda last month."),
    ("I drive a Prius.", "I finally got rid of my old Prius."),
    ("I have a bike.", "My bike got stolen."),
    ("I have a cat named Tama.", "We gave our cat Tama away to my aunt."),
    ("ギターを持っています。", "ギターを売りました。"),
    ("車を持っています。", "先月、車を手放しました。"),
    ("自転車を持ってる", "自転車を盗まれた"),
])
def test_a_thing_parted_with_is_no_longer_had(before, after):
    """"I have a guitar", then "I sold my guitar": the sale was a decision keyed
    decision:guitar beside the live fact, and the character went on asking about the
    guitar. The sale (a decision; a theft a fact) carries ``meta.parted`` and the live fact
    that the user has the thing becomes its history, restorable."""
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item
    assert [m.text for m in e.memories("a")] == [after]
    assert trashed(e)[first.memory_id].text == before
    e.restore("a", first.memory_id)
    assert first.memory_id in {m.id for m in e.memories("a")}


@pytest.mark.parametrize("before, after", [
    ("I have a guitar.", "I sold my piano."),  # another thing
    ("I have a guitar.", "I want to sell my guitar."),  # not done
    ("I have a guitar.", "I'm selling my guitar next week."),
    ("I have a guitar.", "My sister sold her guitar."),  # someone else's
    ("I play the guitar.", "I sold my guitar."),  # a habit of playing is no possession
    ("I live in a house in Kobe.", "I sold my house last year."),  # the home is its own slot
    ("ギターを持っています。", "ギターを売りたい。"),
    ("ギターを持っています。", "姉がギターを売った。"),
])
def test_a_thing_not_parted_with_stays(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("before, after", [
    ("I'm vegan.", "I quit being vegan."),
    ("I'm a vegetarian.", "I stopped being vegetarian last year."),
    ("私はベジタリアンです。", "ベジタリアンをやめました。"),
    ("I have a girlfriend.", "I broke up with my girlfriend."),
    ("I have a boyfriend.", "I split up with my boyfriend."),
    ("彼女がいます。", "彼女と別れました。"),
])
def test_an_ending_of_what_the_user_is_or_has_retires_that_fact(before, after):
    """"I'm vegan" (fact:vegan), then "I quit being vegan" (decision:being_vegan): two kinds
    under one subject, both live, and the character went on cooking vegan. "I have a
    girlfriend", then "I broke up with my girlfriend" (decision:girlfriend) the same, and
    「彼女と別れました」 extracted nothing at all. The ending supersedes the fact of its own
    subject (looked up by key), restorable."""
    e, first, items = said_after(before, after)
    assert [i.action for i in items if i.supersedes == first.memory_id] == ["superseded"], items
    assert trashed(e)[first.memory_id].text == before
    e.restore("a", first.memory_id)
    assert first.memory_id in {m.id for m in e.memories("a")}


@pytest.mark.parametrize("before, after", [
    ("I'm vegan.", "I'm going to quit being vegan."),  # ahead
    ("I have a girlfriend.", "My sister broke up with her girlfriend."),  # someone else
    ("I have a girlfriend.", "I want to break up with my girlfriend."),  # wished
    ("I have a dog.", "I quit dog sitting."),  # another subject
    ("彼女がいます。", "姉が彼氏と別れた。"),
    ("彼女がいます。", "彼女と別れたい。"),
])
def test_an_ending_ahead_wished_or_of_something_else_leaves_the_fact(before, after):
    e, first, _ = said_after(before, after)
    assert_still_live(e, first)


@pytest.mark.parametrize("text, key", [
    ("I'm a huge Arsenal fan", "preference:arsenal"),
    ("I'm a big coffee drinker.", "preference:coffee"),
    ("I'm a total coffee snob", "preference:coffee"),
    ("I'm a big Marvel fan", "preference:marvel"),
    ("I'm a huge nerd about trains", "preference:train"),
    ("I'm a big reader", "preference:reader"),
    ("I'm a true crime fan", "preference:true_crime"),  # a genre, not an intensifier
    ("I'm a dog lover", "preference:dog"),
])
def test_an_intensifier_is_no_part_of_the_subject(text, key):
    """"I'm a huge Arsenal fan" was keyed preference:huge_arsenal and "I'm a big reader"
    preference:big, so a later "I can't stand Arsenal anymore" met no key and both stayed
    live as the user's stance."""
    found, _ = extract([text], roles=("user",))
    assert [(c.kind, c.key) for c in found] == [("preference", key)]


@pytest.mark.parametrize("before, after", [
    ("I'm a huge Arsenal fan.", "I can't stand Arsenal anymore."),
    ("I'm a big coffee drinker.", "I don't like coffee anymore."),
])
def test_a_stance_said_with_an_intensifier_is_superseded_by_its_reversal(before, after):
    e, first, [item] = said_after(before, after)
    assert item.action == "superseded" and item.supersedes == first.memory_id, item


@pytest.mark.parametrize("before, after", [
    ("I'm vegetarian.", "I'm not vegetarian anymore."),
    ("I'm vegan.", "I'm no longer vegan."),
    ("I'm a smoker.", "I'm not a smoker anymore."),
    ("I'm a nurse.", "I'm no longer a nurse."),
])
def test_an_identity_said_to_be_over_retires_it(before, after):
    """"I'm not vegetarian anymore" extracted nothing, so "I'm vegetarian" stayed the user's
    diet. What the user was, said as over, ends the fact as "I quit being vegetarian" does;
    a mood said as over ("I'm not tired anymore") is no memory at all."""
    e, first, items = said_after(before, after)
    assert [i.action for i in items if i.supersedes == first.memory_id] == ["superseded"], items
    assert trashed(e)[first.memory_id].text == before


@pytest.mark.parametrize("text", ["I'm not tired anymore", "I'm not a kid anymore",
                                  "I'm no longer sure", "I'm not hungry anymore."])
def test_a_mood_or_state_said_to_be_over_is_no_memory(text):
    found, _ = extract([text], roles=("user",))
    assert found == []


@pytest.mark.parametrize("before, after", [
    ("私はベジタリアンです。", "もうベジタリアンじゃない。"),
    ("看護師です。", "もう看護師じゃないです。"),
    ("看護師として働いています。", "もう看護師じゃない"),
])
def test_an_identity_said_to_be_over_retires_it_in_japanese(before, after):
    """「もうベジタリアンじゃない」 extracted nothing: the diet stayed the user's."""
    e, first, items = said_after(before, after)
    assert [i.action for i in items if i.supersedes == first.memory_id] == ["superseded"], items


@pytest.mark.parametrize("text", ["もう子供じゃない", "もう眠くない", "看護師ではありません",
                                  "もう大丈夫じゃない"])
def test_a_japanese_state_said_to_be_over_or_a_plain_no_is_no_ending(text):
    found, _ = extract([text], roles=("user",))
    assert [c for c in found if c.kind == "decision"] == []
