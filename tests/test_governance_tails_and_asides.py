"""Round 16 (issue 14): a clause's mood is its head's, an aside does not hide the speaker, and
a person carried over a te-form keeps their habits theirs.

- A condition, guess or apology in a clause's tail ("I'm 34, if that matters", "…, as the
  travel would not suit my family", "so sorry if i reply late") refused the whole clause as
  a hypothetical; the head is read for it now, and a head that is itself hypothetical ("I'd
  move there, if I could", "If I had a garden, I'd …") still states nothing.
- An aside between a joint and the speaker ("and ugh i honestly cant stand …", "and btw I'm
  colour-blind", "but first: I've decided …") kept a request or a report and the statement
  in one clause, which the request or the report refused.
- Japanese: the one whose taste a は-clause in te-form states goes on doing what follows
  (「美咲は韓国ドラマが好きすぎて、毎晩見とる」), as a person topic did; a が-subject does not
  (「母が入院して、実家に戻ることにした」 is the speaker's decision).
"""

import pytest

from omoide.governance.extract import clauses, extract


def shape(text):
    return [(c.kind, c.key) for c in extract([text])[0]]


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm 34, if that matters", [("fact", "fact:age")]),
    ("im a pharmacist, 12 hr shifts so sorry if i reply late", [("fact", "fact:job")]),
    ("I have decided to decline the promotion, as the extra travel would not suit my family.",
     [("decision", "decision:decline_promotion")]),
    ("i never ever buy anything on credit, if i cant pay cash i dont get it simple as",
     [("pattern", "pattern:buy_anything_on_credit")]),
    ("I would say my favourite time for walking in the hills is late spring",
     [("preference", "preference:favorite_time_for_walking_in_hill")]),
])
def test_a_tail_does_not_make_the_clause_hypothetical(text, expected):
    assert shape(text) == expected


@pytest.mark.parametrize("text", [
    "I'd move there, if I could",
    "If I had a garden, I'd grow tomatoes",
    "I might take up climbing, since the gym is close",
    "maybe I'll learn the cello, because why not",
])
def test_a_hypothetical_head_still_states_nothing(text):
    assert shape(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("did the self checkout at the big tesco again and ugh i honestly cant stand those "
     "machines", [("preference", "preference:those_machine")]),
    ("summarize this thread for me, and btw I'm colour-blind so please avoid red/green",
     [("fact", "fact:colour-blind")]),
    ("Help me plan this, but first: I've decided to run the half marathon in October",
     [("decision", "decision:run_half_marathon")]),
])
def test_an_aside_before_the_speaker_starts_a_clause(text, expected):
    assert len(clauses(text)) == 2
    assert shape(text) == expected


def test_first_thing_is_still_a_frame_not_an_aside():
    assert clauses("First thing I do every morning is read the news") == [
        "First thing I do every morning is read the news"]
    assert shape("First thing I do every morning is read the news") == [
        ("pattern", "pattern:read_news")]


@pytest.mark.parametrize("text", [
    "美咲は韓国ドラマが好きすぎて、毎晩見とる",
    "ケンはサッカーが大好きで、毎週末試合に出てる",
])
def test_the_one_whose_taste_a_te_form_states_goes_on_doing_what_follows(text):
    assert [kind for kind, _ in shape(text)] in ([], ["fact"])


@pytest.mark.parametrize(("text", "expected"), [
    ("梅干しは甘いのより酸っぱいのが好きで、毎日食べてる", "pattern"),
    ("母が入院して、実家に戻ることにした", "decision"),
])
def test_a_thing_or_a_ga_subject_carries_nobody(text, expected):
    assert expected in [kind for kind, _ in shape(text)]


def test_imada_ni_is_no_part_of_a_key():
    assert shape("祖父は九十歳ですが、いまだに毎日散歩しています")[0] == ("fact", "fact:祖父_年齢")
    assert shape("いまだに毎朝ラジオ体操してる") == [("pattern", "pattern:朝_ラジオ体操")]


@pytest.mark.parametrize("text", [
    "ポモドーロって本当に効果あるのかな",
    "血圧の薬飲んでてもロキソニンって大丈夫なんかな",
    "夏と冬どっちが好きかな",
    # what the radio said
    "4月からバス代220円になるってラジオで言ってた",
])
def test_japanese_wondering_and_broadcast_hearsay_state_nothing(text):
    assert shape(text) == []


@pytest.mark.parametrize(("text", "key"), [
    ("冬が好きかな", "preference:冬"),
    # 「どっちか」 is one of two, not "which"; the hedge is no part of the key
    ("どっちかっていうと夏より冬のほうが好きかな", "preference:冬"),
    ("どちらかというと紅茶派", "preference:紅茶"),
])
def test_a_japanese_hedge_keeps_the_statement(text, key):
    assert [k for _, k in shape(text)] == [key]


def test_nande_after_a_noun_is_a_reason():
    assert clauses("猫アレルギーなんで、猫カフェは無理") == ["猫アレルギー", "猫カフェは無理"]
    assert clauses("なんで、そんなこと言うの")[0] == "なんで"


@pytest.mark.parametrize(("text", "key"), [
    # いつも is "always", not いつ "when"
    ("日曜の夜はいつも銭湯に行くの。", "pattern:日曜_夜_銭湯_行"),
    # a list's とか asks nothing
    ("ミステリー小説めっちゃ好き、東野圭吾とか", "preference:ミステリー小説"),
    # の after a verb makes a thing of it: nobody's favourite
    ("ぬいぐるみ集めるの好きなんだよね、部屋がもう埋まってる", "preference:ぬいぐるみ集"),
    # a stance hedged is still a stance
    ("ラジオとか音声コンテンツ、けっこう好きかも。", "preference:ラジオとか音声コンテンツ"),
    # a decision in te-form before what was done about it
    ("ベランダで家庭菜園やってみることにして、ミニトマトの苗買った！",
     "decision:ベランダ_家庭菜園やってみる"),
])
def test_japanese_words_that_looked_like_questions_or_people(text, key):
    assert [k for _, k in shape(text)] == [key]


@pytest.mark.parametrize("text", ["明日は雨かも", "いつ行くの", "誰か来るの？"])
def test_japanese_guesses_and_questions_still_state_nothing(text):
    assert shape(text) == []


@pytest.mark.parametrize(("text", "key", "polarity"), [
    ("英単語は音声で覚えるほうが性に合ってる", "preference:英単語_音声_覚", "like"),
    ("ああいうまったりしたゲームが性に合ってる", "preference:まったりしたゲーム", "like"),
    ("Excelでの進捗管理、正直うんざりしてる", "preference:excel_進捗管理", "dislike"),
    ("でかい音で音楽かけとる店は好かん", "preference:でかい音_音楽かけとる店", "dislike"),
])
def test_japanese_stances_suits_me_fed_up_and_dialect(text, key, polarity):
    assert [(c.key, c.polarity) for c in extract([text])[0]] == [(key, polarity)]


@pytest.mark.parametrize("text", [
    "I've got tinnitus in my left ear, so there's always a faint ringing",
    "I did marine biology at uni, though I've never used it",
])
def test_a_habit_word_in_a_tail_makes_no_habit(text):
    assert "pattern" not in [kind for kind, _ in shape(text)]


def test_a_habit_word_in_the_head_still_does():
    assert shape("I go running every morning, because it clears my head") == [
        ("pattern", "pattern:go_running_every_morning")]


def test_a_named_persons_job_never_replaces_the_users():
    """「パートナーのジュンは高校で化学を教えてる」 was read as the user's ``fact:仕事``: the
    partner's job superseded the user's own (data safety)."""
    from omoide.engine import MemoryEngine
    from omoide.governance.ingest import ingest
    from tests.test_engine_embedder import HashingEmbedder

    engine = MemoryEngine(HashingEmbedder(64))
    [mine] = ingest(engine, "a", ["私はエンジニアです"]).items
    assert (mine.action, mine.key) == ("stored", "fact:仕事")
    report = ingest(engine, "a", ["パートナーのジュンは高校で化学を教えてる"])
    assert all(item.action != "superseded" for item in report.items)
    assert "私はエンジニアです" in [m.text for m in engine.memories("a")]


@pytest.mark.parametrize("text", [
    "友達のゆみが来春大阪に引っ越すことになった",
    "父が最近スマホデビューして、毎日スタンプだけ送ってくる",
    "母が最近韓国ドラマにどっぷりで、電話するたびにあらすじを聞かされる",
    "私は無人島でぼーっとしたい気分",
    "うわ、味噌汁こぼした最悪",
])
def test_japanese_other_peoples_doings_wishes_and_mishaps(text):
    assert [kind for kind, _ in shape(text)] in ([], ["fact"])


@pytest.mark.parametrize(("text", "key"), [
    ("母のおかゆが最強の癒やし飯", "preference:母のおかゆ"),
    ("ゴキブリ最悪", "preference:ゴキブリ"),
    ("母が入院して、実家に戻ることにした", "decision:実家_戻"),
])
def test_what_the_japanese_narrowing_keeps(text, key):
    assert [k for _, k in shape(text)] == [key]


def test_a_clause_of_punctuation_alone_is_none():
    assert clauses("さっき火事があったみたいで、みんな無事だといいけど。") == [
        "さっき火事があったみたいで", "みんな無事だといい"]
