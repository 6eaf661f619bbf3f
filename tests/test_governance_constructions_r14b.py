"""Constructions the Japanese rules read since round 14's second part, found on the
out-of-fold errors of train14a (reflective notes of older speakers) and train14b (student
chat with slang and western Japanese), each with the statements around it that must stay.

- Someone else: a child by birth order (長男は), a club's teacher (顧問が), a surname with a
  title (山本部長は), kin before a katakana thing with the particle dropped (「彼女サンリオ
  好き」), a bare kana name doing something (「みさきがバイト辞めた」), and a person as the
  topic of a te-form clause carried into the next one (「妹は家を売って、…と決めました」; a
  reason with が is not carried).
- Not a statement: a topic with って and its question kept as one clause (「…始めるのって、
  遅いかな」), weighing what to do (〜べきかな, 〜ほうがいいのかな), a question word with a
  wondering end (〜でしょうね), 仮に, western 〜るん with a question word, what someone tells
  the speaker (〜と言われる).
- One time: a day as the lead (今日は一日中…), a volitional end (〜としよう) and a coming
  time (来月) are no whenever-habit; a feeling about a coming time (明日は不安, 今夜は冷える
  なあ) is no plan.
- The best or worst of all: 「Xほど、…ものは(ほかに)ない / 見当たらない」 (a dislike with
  うんざり, 退屈 and the like), 「Xのが、…何よりの楽しみ / 唯一の救い / 一番の贅沢」 and
  「Xが楽しくて仕方がない」 are preferences keyed on X.
- Decisions in the humble form (〜ことにいたしました / 致します) and a resolve kept in the heart
  (〜と心に決めている, 固く決めている); a standing rule (「…って決めてる」) stays a habit.
"""

import pytest

from omoide.governance.extract import extract
from omoide.governance.extract_ja import open_statement


def kinds(text: str) -> set[str]:
    return {c.kind for c in extract(text)[0]}


@pytest.mark.parametrize("text", [
    "次女は毎朝六時に起きてランニングしている",
    "顧問がいつも練習を延長する",
    "田中課長は朝の会議を絶対に入れない",
    "兄貴ラーメン大好きなんよ",
    "彼氏ホラーゲーム無理らしくて困る",
    "ゆいがサークル辞めた",
    "そうたが毎週末バイトしとる",
    "かなが来年東京に引っ越す",
    "弟は仕事を辞めて、海外に移ると決めた",
])
def test_someone_elses_deed_or_taste_is_not_the_users(text):
    assert kinds(text) <= {"fact"}


@pytest.mark.parametrize("text,kind", [
    ("母が入院して、実家に戻ることにした", "decision"),
    ("兄は反対したけど、私は留学することにした", "decision"),
    ("みかんが大好き", "preference"),
    ("チームスポーツが好き", "preference"),
    ("のどが渇いたらいつもまず水を飲む", "pattern"),
])
def test_a_reason_the_speaker_or_a_thing_stays_the_users(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize("text", [
    "五十から水泳を始めるのって、遅いですかね",
    "夜中にラーメン食べる人って、多いんでしょうか",
    "部活辞めるべきかな",
    "ジム通い始めるべきなのかな",
    "毎朝走るべきかな",
    "ジム辞めた方がいいかな",
    "会社を辞めたら、貯金はどのくらい持つんでしょうね",
    "仮に部活を辞めたら",
    "もっと野菜を食べろ、と毎回言われる",
    "早く寝なさいって母によく言われる",
])
def test_questions_weighing_and_words_said_to_the_speaker_are_nothing(text):
    assert kinds(text) == set()


@pytest.mark.parametrize("text", [
    "今日は一日中ゲームしてた",
    "そろそろ風呂に入るとしよう",
    "明日の面接が正直かなり不安です",
    "今夜は蒸し暑いなあ",
    "明日休みだ、うれし",
])
def test_one_day_and_a_feeling_about_it_are_no_habit_or_plan(text):
    assert kinds(text) == set()


@pytest.mark.parametrize("text,kind", [
    ("明日から毎朝走る", "decision"),
    ("今年はお酒を飲まない", "decision"),
    ("ストレスたまるとカラオケ行く", "pattern"),
    ("毎朝コーヒーを飲む", "pattern"),
])
def test_plans_and_habits_stay(text, kind):
    assert kind in kinds(text)


def test_a_western_question_in_n_is_kept_from_the_learned_stage():
    assert open_statement("レポートってどうやって書くん") is None


@pytest.mark.parametrize("text,polarity", [
    ("朝いちばんに飲むほうじ茶ほど、ほっとするものは、ほかにありません", "like"),
    ("満員電車の乗り換えほど、うんざりするものはない", "dislike"),
    ("庭の草むしりほど、退屈なことは他に見当たらない", "dislike"),
    ("週末に孫と公園へ行くのが、今の私には何よりの楽しみです", "like"),
    ("夜に一人で聴くジャズが、唯一の癒しになっている", "like"),
    ("古い切手を整理する作業が、面白くて仕方がない", "like"),
])
def test_the_best_or_worst_of_all_is_a_preference(text, polarity):
    assert [(c.kind, c.polarity) for c in extract(text)[0]] == [("preference", polarity)]


@pytest.mark.parametrize("text", [
    "姉は、夜に一人で聴くジャズが唯一の癒しらしい",
    "娘は昔から虫ほど怖いものはないと言う",
])
def test_someone_elses_best_thing_stays_theirs(text):
    assert kinds(text) <= {"fact"}


def test_the_best_thing_is_keyed_on_the_thing_not_on_the_joy():
    (found,) = extract("週末に孫と公園へ行くのが、今の私には何よりの楽しみです")[0]
    assert "孫" in found.key and "楽しみ" not in found.key


@pytest.mark.parametrize("text", [
    "引っ越しの手伝いをすることに致します",
    "もう二度と徹夜はしないと固く決めている",
    "今年こそ禁煙しようと心に決めています",
])
def test_humble_decisions_and_a_resolve_are_decisions(text):
    assert kinds(text) == {"decision"}


def test_the_humble_ending_is_no_part_of_the_key():
    (found,) = extract("来年で役員を降りることにいたしました")[0]
    assert "いた" not in found.key


@pytest.mark.parametrize("text,expected", [
    ("寝る前はスマホを見ないって決めてる", {"pattern"}),
    ("息子は留学すると心に決めている", set()),
])
def test_a_standing_rule_and_someone_elses_resolve_stay(text, expected):
    assert kinds(text) == expected


def test_a_carried_topic_reaches_the_learned_stage_as_theirs():
    # the stage may read it as a fact about the sister only (``extract``: person clauses)
    from omoide.governance.extract_ja import carried_person

    assert carried_person("沖縄に移ると決めた", "弟は仕事を辞めて") == "沖縄に移ると決めた"
    assert carried_person("実家に戻ることにした", "母が入院して") is None
    assert carried_person("私は残ることにした", "弟は仕事を辞めて") is None
