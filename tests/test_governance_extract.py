"""Pattern extraction, English and Japanese: kinds, types, polarity, keys, content bounds."""

import pytest

from omoide.governance.extract import (
    MAX_CONTENT,
    clauses,
    extract,
    extract_clause,
    make_key,
    normalize_subject,
)

DESIGN_EN = [
    "I prefer TypeScript.",
    "We'll use Postgres for this project.",
    "I always commit before pushing.",
    "I don't like Python.",
]
DESIGN_JA = [
    "TypeScriptが好きです。",
    "このプロジェクトではPostgresを使います。",
    "いつもプッシュする前にコミットします。",
    "Pythonは好きではありません。",
]
DESIGN_EXPECTED = [
    ("preference", "factual", "like", "preference:typescript"),
    ("decision", "episodic", "like", "decision:postgres_for_this_project"),
    ("pattern", "factual", "like", "pattern:commit_before_pushing"),
    ("preference", "factual", "dislike", "preference:python"),
]


def shape(candidates):
    return [(c.kind, c.type, c.polarity, c.key) for c in candidates]


@pytest.mark.parametrize("sentences", [DESIGN_EN, DESIGN_JA], ids=["en", "ja"])
def test_design_example_gives_exactly_four_memories(sentences):
    one_message, unmatched = extract([" ".join(sentences)])
    assert shape(one_message) == DESIGN_EXPECTED and unmatched == []
    assert [c.text for c in one_message] == sentences
    one_per_message, _ = extract(sentences)
    assert shape(one_per_message) == DESIGN_EXPECTED
    assert [c.source for c in one_per_message] == [0, 1, 2, 3]


def test_both_languages_agree_on_keys_and_importance():
    en, _ = extract(DESIGN_EN)
    ja, _ = extract(DESIGN_JA)
    assert [c.key for c in en] == [c.key for c in ja]
    assert [c.importance for c in en] == [c.importance for c in ja]
    assert {c.lang for c in en} == {"en"} and {c.lang for c in ja} == {"ja"}


@pytest.mark.parametrize(
    ("text", "kind", "polarity", "key"),
    [
        ("I like green tea", "preference", "like", "preference:green_tea"),
        ("I really love the Rust compiler a lot!", "preference", "like",
         "preference:rust_compiler"),
        ("I hate YAML", "preference", "dislike", "preference:yaml"),
        ("I can't stand tabs", "preference", "dislike", "preference:tab"),
        ("I'm not a fan of Java", "preference", "dislike", "preference:java"),
        ("I prefer TypeScript over JavaScript because of types", "preference", "like",
         "preference:typescript"),
        ("I prefer to listen to music while coding", "preference", "like",
         "preference:listen_to_music_while_coding"),
        ("I decided to use Postgres for this project", "decision", "like",
         "decision:postgres_for_this_project"),
        ("We're going with SQLite", "decision", "like", "decision:sqlite"),
        ("Let's go with Vite", "decision", "like", "decision:vite"),
        ("We won't use MongoDB", "decision", "dislike", "decision:mongodb"),
        ("I decided not to learn Perl", "decision", "dislike", "decision:learn_perl"),
        ("I usually drink green tea in the morning", "pattern", "like",
         "pattern:drink_green_tea_in_morning"),
        ("I never deploy on Fridays", "pattern", "dislike", "pattern:deploy_on_fridays"),
        ("Honestly, I always write tests first", "pattern", "like",
         "pattern:write_test_first"),
        ("I like C++ and C#", "preference", "like", "preference:c++_and_c#"),
        ("I like Node.js", "preference", "like", "preference:node.js"),
    ],
)
def test_english_patterns(text, kind, polarity, key):
    c = extract_clause(text)
    assert c is not None, text
    assert (c.kind, c.polarity, c.key) == (kind, polarity, key)


@pytest.mark.parametrize(
    ("text", "kind", "polarity", "key"),
    [
        ("私はTypeScriptが大好きです", "preference", "like", "preference:typescript"),
        ("Pythonが嫌いです", "preference", "dislike", "preference:python"),
        ("Javaは苦手です", "preference", "dislike", "preference:java"),
        ("Pythonはあまり好きじゃない", "preference", "dislike", "preference:python"),
        ("Reactにしました", "decision", "like", "decision:react"),
        ("Vueに決めました", "decision", "like", "decision:vue"),
        ("MongoDBは使いません", "decision", "dislike", "decision:mongodb"),
        ("仕事ではGoを使います", "decision", "like", "decision:go_at_work"),
        ("必ずテストを書きます", "pattern", "like", "pattern:test_書"),
        ("決して金曜日にデプロイしません", "pattern", "dislike", "pattern:金曜日_deploy"),
        ("朝はいつもコーヒーを飲みます", "pattern", "like", "pattern:朝_コーヒー_飲"),
        ("いつもpushする前にcommitします", "pattern", "like", "pattern:commit_before_pushing"),
        ("ＴｙｐｅＳｃｒｉｐｔが好きです", "preference", "like", "preference:typescript"),
    ],
)
def test_japanese_patterns(text, kind, polarity, key):
    c = extract_clause(text)
    assert c is not None, text
    assert (c.kind, c.polarity, c.key) == (kind, polarity, key)
    assert c.lang == "ja"


def test_japanese_particles_do_not_change_the_key():
    a = extract_clause("いつも朝にコーヒーを飲みます")
    b = extract_clause("いつも朝はコーヒーを飲みます")
    assert a.key == b.key == "pattern:朝_コーヒー_飲"


@pytest.mark.parametrize(
    "text",
    [
        "Do you like Python?", "Pythonは好きですか？", "I'd like a coffee", "hello there",
        "It is raining", "", "   ", "You always say that", "They decided to leave",
        "If I decided to quit, would you mind", "今日は晴れです",
    ],
)
def test_non_statements_give_nothing(text):
    candidates, unmatched = extract([text])
    assert candidates == []
    assert len(unmatched) == 1 and unmatched[0].source == 0


def test_only_user_messages_by_default_and_roles_are_configurable():
    messages = [
        {"role": "assistant", "content": "I love helping you"},
        {"role": "user", "content": "I love sushi"},
        {"role": "system", "content": "I prefer short answers"},
    ]
    found, _ = extract(messages)
    assert [c.key for c in found] == ["preference:sushi"] and found[0].source == 1
    found, _ = extract(messages, roles=("user", "assistant"))
    assert [c.key for c in found] == ["preference:help_you", "preference:sushi"]


def test_openai_content_parts_are_read():
    found, _ = extract([{"role": "user", "content": [{"type": "text", "text": "I hate YAML"}]}])
    assert [c.key for c in found] == ["preference:yaml"]


def test_several_statements_in_one_sentence_are_split():
    assert [c.key for c in extract(["I hate YAML, but I love TOML"])[0]] == [
        "preference:yaml", "preference:toml"]
    found, _ = extract(["TypeScriptが好きですが、Pythonは苦手です"])
    assert [(c.key, c.polarity, c.text) for c in found] == [
        ("preference:typescript", "like", "TypeScriptが好きです"),
        ("preference:python", "dislike", "Pythonは苦手です"),
    ]
    assert clauses("I like tea; we'll use Go") == ["I like tea", "we'll use Go"]


def test_content_is_within_3_to_500_characters():
    long_tail = " ".join(["word"] * 300)
    c = extract_clause(f"I like {long_tail}")
    assert c is not None and 3 <= len(c.text) <= MAX_CONTENT and c.text.endswith("…")
    assert len(c.key) <= len("preference:") + 80
    assert extract_clause("I like X").text == "I like X"


def test_intensity_raises_importance():
    plain = extract_clause("I like tea")
    strong = extract_clause("I really love tea")
    assert strong.importance > plain.importance and strong.key == plain.key


def test_make_key_is_shared_by_both_languages():
    assert make_key("preference", "TypeScript") == "preference:typescript"
    assert make_key("preference", "タイプスクリプト") == "preference:typescript"
    assert make_key("decision", "Postgres for this project") == (
        "decision:postgres_for_this_project")
    assert make_key("fact", "!!!") is None
    assert normalize_subject("Don't  Panic!") == "dont_panic"
