"""A later turn that states a DIFFERENT fact never replaces or absorbs an earlier one
(issue 14, never lose a memory to a merge): a past home or job is not the current one, a
stance word is not a job, a favourite of one kind is not of another, another person's
stance is not the user's, a pet's name is not the user's, and notes that differ in a name
or a number are two notes. The pairs were found replacing (or merging away) the first
memory with the real e5 model; the pipeline's decision on them follows keys and words, so
the hashing embedder runs them (the favourites merged by e5's similarity alone: their keys
are checked below)."""

from __future__ import annotations

import itertools

import pytest

from omoide.engine import MemoryEngine
from omoide.governance.extract import extract
from omoide.governance.ingest import ingest
from tests.test_engine_embedder import HashingEmbedder


def ticking(start=1_700_000_000.0):
    counter = itertools.count()
    return lambda: start + next(counter)


def said(*turns: str) -> MemoryEngine:
    engine = MemoryEngine(HashingEmbedder(64), clock=ticking())
    for turn in turns:
        ingest(engine, "a", [{"role": "user", "content": turn}])
    return engine


def live_texts(engine: MemoryEngine) -> list[str]:
    return [m.text for m in engine.memories("a")]


PAIRS = [
    # a past home or job is history of its own, not the current value
    ("I live in Osaka.", "I lived in London as a student."),
    ("I live in Osaka.", "I've lived in three different countries."),
    ("My mom lives in Nara.", "My mom lived in Kobe when she was young."),
    ("My dad works at a bank.", "My dad worked as a taxi driver in the 90s."),
    ("I work as a nurse.", "I taught English in Korea for two years after college."),
    ("I work as a nurse.", "I teach my little brother math on Sundays."),
    ("大阪に住んでる。", "昔は東京に住んでた。"),
    ("今は大阪に住んでます", "学生の頃は京都に住んでました"),
    ("母は奈良に住んでる", "母は若い頃神戸に住んでた"),
    # a kanji name without an honorific as the topic: that person's home and work
    ("大阪に住んでます", "健太は東京に住んでいます"),
    ("病院で働いてます", "田中は銀行で働いてる"),
    # 苦手 / 下手 end in 手 as 運転手 does: a stance, not a job
    ("看護師やってます", "虫苦手なんだよね"),
    ("美容師です", "料理下手なんだよね笑"),
    # a favourite of another kind (今 is no subject)
    ("今一番好きなアニメはダンダダン", "今一番好きな飲み物はコーラ"),
    ("今好きなゲームはスプラ", "今好きな人はクラスの田中くん"),
    # someone else's stance
    ("辛いもの好き", "辛いもの苦手な友達がいてさ"),
    ("ホラー映画大好き", "ホラー映画嫌いな人っているよね"),
    # the name of a pet just mentioned is not the user's name; another pet's is not the first
    ("名前はさくらです。よろしくね", "最近犬を飼い始めたんだ。名前はポチ！"),
    ("犬飼ってるよ。名前はポチ", "猫も飼ってる。名前はタマ"),
    ("誕生日は5月3日だよ", "母の話なんだけど、誕生日は12月なんだ"),
    # a second trip is not a new date of the first
    ("I'm going to Tokyo this Friday.", "I'm going to Tokyo again in August."),
    ("来週京都に行く", "来月また京都に行く"),
]


@pytest.mark.parametrize(("first", "second"), PAIRS,
                         ids=[f"pair{n}" for n in range(len(PAIRS))])
def test_a_different_fact_keeps_the_first_live(first, second):
    engine = said(first)
    before = live_texts(engine)
    assert before, f"{first!r} should be remembered"
    after = said(first, second)
    kept = live_texts(after)
    assert all(text in kept for text in before), (kept, [
        (t.memory.text, t.memory.meta) for t in after.trash("a")])


@pytest.mark.parametrize(("text", "key"), [
    ("今一番好きなアニメはダンダダン", "preference:好きなアニメ"),
    ("今一番好きな飲み物はコーラ", "preference:好きな飲み物"),
    ("今好きなゲームはスプラ", "preference:好きなゲーム"),
])
def test_now_is_no_subject_of_a_favourite(text, key):
    """「今」 was the subject: every favourite said with it shared ``preference:今``."""
    candidates, _ = extract([{"role": "user", "content": text}])
    assert [c.key for c in candidates] == [key]


def test_a_new_value_of_a_fact_a_keyless_memory_states_keeps_both_live():
    """"Same subject" merged the new value into the keyless memory: Osaka went to the trash
    (30 days to its purge) and Kobe stayed the live answer. Superseding would hide the wife
    and the cat the old sentence also says: both stay live."""
    engine = MemoryEngine(HashingEmbedder(64), clock=ticking())
    engine.remember("a", "I live in Kobe with my wife Emi and our cat Tama.", kind="fact")
    ingest(engine, "a", [{"role": "user", "content": "I live in Osaka."}])
    assert sorted(live_texts(engine)) == ["I live in Kobe with my wife Emi and our cat Tama.",
                                          "I live in Osaka."]
    assert engine.trash("a") == []
    again = ingest(engine, "a", [{"role": "user", "content": "I live in Osaka!"}])
    assert [i.action for i in again.items] == ["merged"]  # a repeat still merges


def test_a_transcript_given_as_one_text_keeps_the_characters_lines_out():
    """MCP's ``ingest`` takes "a text": a transcript sent so made the assistant's line the
    user's home, superseding theirs."""
    engine = said("I live in Nagoya.")
    report = ingest(engine, "a", "user: tell me about yourself\n"
                                 "assistant: Of course. I live in the Whispering Forest.")
    assert live_texts(engine) == ["I live in Nagoya."]
    assert all(i.action != "superseded" for i in report.items)
    ingest(engine, "a", "User: I live in Osaka now.\nassistant: Oh, nice!")
    assert live_texts(engine) == ["I live in Osaka now."]  # the user's lines still count
