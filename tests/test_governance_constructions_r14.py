"""Constructions the rules read since round 14, found on the training splits' out-of-fold
errors (``bench/governance_extract_errors.py``; blind12 and blind13 are training splits from
this round on), each with the statements around it that must stay as they were.

- Japanese: a weekday (or several, 「火曜と木曜に」「月・水・金に」) or a time of the week with
  に and a present progressive, maybe after 今は / 最近は (「今は金曜にジムに行っています」), is
  a weekly habit, where it was a plan or nothing; a plain verb (「金曜に友達と会う」), a past,
  〜てくる, a day of one week (今週の金曜) and a progressive of the mind (〜と思ってる,
  楽しみにしてる) stay as they were. Western Japanese progressive and being with おる
  (住んどる, 勤めとります, 飼っとる, 金魚が5匹おるんよ) and the casual っす read as the standard
  forms; 取る (メモとる) is not a progressive. The short forms of once a month / week / year
  (月1で, 月イチ, 週イチ, 年1で) are a frequency; 〜だけは (絶対) + a negative potential
  (見られない, 乗れない, 食べられへん) is the one thing the speaker cannot bear (a time topic,
  「今日だけは休めない」, is not); 再開 of something the speaker dropped is a decision (a
  subject with が, 「工事が再開した」, is something else going on again).
"""

import pytest

from omoide.governance.extract import extract


def kinds(text: str) -> set[str]:
    return {c.kind for c in extract(text)[0]}


def keys(text: str) -> set[str | None]:
    return {c.key for c in extract(text)[0]}


@pytest.mark.parametrize("text", [
    "今は木曜にテニススクールに通っています",
    "ここ最近は火曜に料理教室に通ってる",
    "火曜と木曜に市民プールで泳いでる",
    "月・水・金にヨガに通ってます",
    "日曜にボランティアで子ども食堂を手伝ってる",
    "土曜に実家の畑を手伝ってます",
])
def test_a_weekday_with_a_progressive_is_a_habit(text):
    assert kinds(text) == {"pattern"}


def test_now_is_no_part_of_the_weekly_habit():
    assert keys("今は木曜にテニススクールに通っています") == keys(
        "木曜にテニススクールに通っています")


@pytest.mark.parametrize("text", [
    "週末に髪切ろうと思ってる", "金曜のライブを楽しみにしてる", "金曜に歯医者に行ってくる",
    "今週の金曜に友達と飲みに行く",
])
def test_a_day_of_one_week_is_no_habit(text):
    assert "pattern" not in kinds(text)


@pytest.mark.parametrize("text", [
    "昨日ジムに行った", "金曜にジム行ってた", "兄は金曜にジムに通ってる",
])
def test_a_past_day_or_someone_elses_is_nothing_of_the_users(text):
    assert kinds(text) <= {"fact"}


@pytest.mark.parametrize("text,key", [
    ("神戸の山の手に住んどるよ", "fact:住まい"),
    ("今は名古屋に住んどる", "fact:住まい"),
    ("駅前の郵便局に勤めとります", "fact:勤務先"),
    ("うちはインコを二羽飼っとるんよ", "fact:インコ"),
    ("メダカが10匹おるんよ", "fact:メダカ"),
    ("今年で三十五歳っす", "fact:年齢"),
])
def test_western_progressive_and_being_read_as_standard(text, key):
    assert key in keys(text)


@pytest.mark.parametrize("text", ["会議のメモとる", "あとで写真とるよ", "姉は広島に住んどる"])
def test_take_and_someone_elses_home_stay_as_they_were(text):
    assert "fact:住まい" not in keys(text)
    assert kinds(text) <= {"fact"}


@pytest.mark.parametrize("text,kind", [
    ("月1で歯のクリーニングに通ってる", "pattern"),
    ("週イチで近所の銭湯に行ってます", "pattern"),
    ("年1で人間ドックを受けてる", "pattern"),
    ("虫だけは絶対触れない", "preference"),
    ("観覧車だけはどうしても乗れない", "preference"),
    ("お化け屋敷だけは入れへん", "preference"),
    ("しばらくサボってた筋トレ、また再開しました", "decision"),
    ("ブログをぼちぼち再開します", "decision"),
])
def test_short_frequencies_only_cannot_and_resume(text, kind):
    assert kind in kinds(text)


def test_only_cannot_is_a_dislike():
    assert [(c.kind, c.polarity) for c in extract("虫だけは絶対触れない")[0]] == [
        ("preference", "dislike")]


@pytest.mark.parametrize("text", [
    "今日だけは休めない", "工事が再開した", "連載が再開しました", "兄が筋トレ再開した",
    "月1回の定例会議がある",
])
def test_a_time_something_else_resuming_and_a_meeting_stay_as_they_were(text):
    assert kinds(text) <= {"fact"}
