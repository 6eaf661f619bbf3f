"""Constructions the rules read since round 11 (issue 14), found on the training splits'
out-of-fold errors (``bench/governance_extract_errors.py``; blind9 is a training split from
this round on), each with the statements around it that must stay as they were:

- English: "my go-to / usual / ritual X is Y" is a preference or a habit, not an attribute
  fact, and so is "my X is the best thing I own"; "I've got a (real) soft spot for", "zero
  patience for"; "I'm studying X" (the contraction was never read); "work remotely as";
  ages in words ("turned forty-one"); "for a living" is a job, also of one of the user's
  people; "older sis", "the wife" are the user's people; "me and my sister", "my partner and
  I" are the speaker; a leading "when/whenever …, I …", "twice a year I …", "nine times out
  of ten I …" are habits ("when does it open" still asks); "I'd pick X every time" is a
  standing choice; "could eat X every single day" is no question; registering, pulling the
  trigger, saying yes to an offer, "X secured / locked in", "X is getting deleted" are
  decisions; a "next …" time lead is a plan, not a habit, and a change in the present
  progressive stays a decision when a habit word follows in a tail ("I'm selling it, never
  use it"); "no X after/past T for me" is a habit; payday and "arvo" recur, a weekday can
  "belong to" an activity; "I find X exhausting/relaxing", "X wears me out", "I'm weak
  for", "a bit of a X snob", "(really) rather", the night shift, "been working remotely
  for" are read, and a decision's "that" is no pointer ("pulling the trigger on that…"). A
  named person with "is" and someone's stance ("Mia is obsessed with…"), a city or council doing
  something, weather remarks, "X vs Y, which …" questions, "I'm crying" and "set a reminder"
  requests never reach the stage.
- Japanese: ages with 〜になる and 三十路/四十路; a job word + で + shift or work words; a
  bare name after a relation (「親友のミホは…」) and a topic that is hooked on something
  (「ユウタはサッカーにどハマり中」) are someone else; katakana jobs (ソムリエ, パティシエ) and
  a job word with さん; 「AよりB」 with a kana B or a trailing 断然; 「〜と」 with a present
  verb is a habit (not 〜たら: 「宝くじ当たったら…」 is one hypothetical); godan
  volitional + と思う, 〜ってなった, あきらめる, 〜にしとく, a weekday + に (one day: a plan),
  おさえた, 〜完了 are decisions; 一択, 一筋, 神, 至高, 最強, 地獄, 拷問, しんどい,
  落ち着かない, むり, 〜ないと生きていけない,
  〜へん are stances (a time topic's しんどい is a feeling); reminders (〜しといて), an
  assistant's task (まとめて, 作って), 何 + a counter, どっちから…, 〜たら…かな, 〜知らない
  are requests and questions, 〜って…に書いてあった is hearsay; 実家/地元, 〜の出, 越してきた,
  間借り, 〜語で話してる, a chronic condition, 〜体質でして, 通勤に…かかる,
  きょうだいの真ん中, a pet without が, and a polite
  end before a reason (「…ません、…なので」) are facts; N times a year, ふた月にいっぺん,
  2週間に1回, on the train, a clock time, 〜過ぎたら, 〜主義, two weekdays (月水金は), 朝イチ,
  給料日, 〜よう心がけてる and 「朝は…から始まる」 are habits.
"""

import pytest

from omoide.governance import extract_en, extract_ja
from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str | None]]:
    return [(c.kind, c.polarity) for c in extract(text)[0]]


def kinds(text: str) -> set[str]:
    return {c.kind for c in extract(text)[0]}


@pytest.mark.parametrize("text,kind", [
    ("my go-to comfort food is mac and cheese", "preference"),
    ("my go-to pizza topping is mushrooms", "preference"),
    ("my usual breakfast is porridge with honey", "pattern"),
    ("my friday night ritual is takeout and a movie", "pattern"),
    ("my new phone is the best thing I ever bought", "preference"),
    ("I've got a real soft spot for old westerns", "preference"),
    ("I have zero patience for long meetings", "preference"),
    ("I'm studying architecture", "fact"),
    ("I'm studying for the bar exam", "fact"),
    ("I work remotely as a data analyst", "fact"),
    ("turned forty-one in june", "fact"),
    ("I drive a forklift for a living", "fact"),
    ("my uncle fixes boilers for a living", "fact"),
    ("older sis is a vet in Leeds", "fact"),
    ("me and my brother play chess every sunday", "pattern"),
    ("my partner and I go hiking most weekends", "pattern"),
    ("when I'm stressed I bake cookies", "pattern"),
    ("whenever it rains I read indoors", "pattern"),
    ("twice a month I visit my grandparents", "pattern"),
    ("nine times out of ten I order the same thing", "pattern"),
    ("I'd pick the aisle every single time", "preference"),
    ("could eat dumplings every single day", "preference"),
    ("registering for the city marathon", "decision"),
    ("pulling the trigger on a new laptop", "decision"),
    ("I said yes to the offer from the startup", "decision"),
    ("concert tickets secured for march", "decision"),
    ("our holiday's locked in for august", "decision"),
    ("facebook is getting deleted this weekend", "decision"),
    ("Next year I'm biking to work every day", "decision"),
    ("I'm selling my car, never drive it anyway", "decision"),
    ("no sugar after lunch for me", "pattern"),
    ("payday = sushi night", "pattern"),
    ("sunday arvo is gardening time", "pattern"),
    ("saturday mornings belong to the farmers market", "pattern"),
    ("pulling the trigger on that espresso machine", "decision"),
    ("welp, visa application submitted", "decision"),
    ("put down a deposit on a van this week", "decision"),
    ("really rather walk than take the bus", "preference"),
    ("Been working remotely for an agency for 2 years", "fact"),
    ("I do the night shift at a care home", "fact"),
    ("I'm a bit of a coffee snob", "preference"),
    ("I'm weak for truffle fries", "preference"),
    ("I find long phone calls exhausting", "preference"),
    ("I find baking bread really relaxing", "preference"),
    ("crowded gyms wear me out", "preference"),
])
def test_english_constructions_are_read(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize("text,polarity", [
    ("I have zero patience for long meetings", "dislike"),
    ("no sugar after lunch for me", "dislike"),
    ("facebook is getting deleted this weekend", "dislike"),
    ("I'm selling my car, never drive it anyway", "dislike"),
])
def test_english_their_polarity(text, polarity):
    assert polarity in {p for _, p in found(text)}


@pytest.mark.parametrize("text", [
    "Mia is obsessed with horse riding", "Raj is really into cricket",
    "set a reminder for the dentist on friday", "set an alarm for 6",
    "the council is closing the library next year", "so grey and drizzly outside today",
    "oat milk vs soy milk, which has more calcium", "omg I'm crying",
    "when does the pharmacy open", "the wife teaches piano",
])
def test_english_reports_requests_and_remarks_never_reach_the_stage(text):
    assert found(text) == []
    assert extract_en.open_statement(text) is None


def test_english_a_judgement_of_it_is_left_to_the_stage():
    assert found("I find it exhausting") == []


def test_english_the_wife_is_one_of_the_users_people():
    assert extract_en.open_person("the wife teaches piano") is not None


@pytest.mark.parametrize("text", [
    "my usual is fine thanks", "when is your birthday", "when did you last sleep",
    "when I was a kid I walked to school",
    "I'm so tired", "the city is lovely",
])
def test_english_what_stays_as_it_was(text):
    assert "pattern" not in kinds(text) and "decision" not in kinds(text)


@pytest.mark.parametrize("text,kind", [
    ("今年で31になります", "fact"),
    ("来月で四十路に突入", "fact"),
    ("来週30歳になる", "fact"),
    ("薬剤師で夜勤もやってます", "fact"),
    ("親友のミホは保育士です", "fact"),
    ("いとこがソムリエなんだ", "fact"),
    ("猫より断然いぬ", "preference"),
    ("紅茶よりコーヒーかな、断然", "preference"),
    ("ストレスたまるとゲームする", "pattern"),
    ("忙しいとつい夕飯を抜いちゃう", "pattern"),
    ("疲れると甘いもの食べちゃう", "pattern"),
    ("Netflix、しばらく解約しようと思ってる", "decision"),
    ("式は身内だけでやろうってなった", "decision"),
    ("留学はあきらめます", "decision"),
    ("スマホはPixelにしとく", "decision"),
    ("日曜日に新しい自転車を取りに行く", "decision"),
    ("ソウル行きのホテルおさえた", "decision"),
    ("レポート提出完了、あとは結果待ち", "decision"),
    ("仕事中のBGMはジャズ一択", "preference"),
    ("コーヒーはブラック一筋", "preference"),
    ("ほうじ茶ラテまじで神", "preference"),
    ("風呂上がりのアイスが至高", "preference"),
    ("スポーツジムはまじむり", "preference"),
    ("長い会議は正直しんどい", "preference"),
    ("満員のバスは地獄", "preference"),
    ("コーヒーないと生きていけない", "preference"),
    ("パクチーは食べられへん", "preference"),
    ("大きい音の店はどうも落ち着かない", "preference"),
    ("実家は新潟の米農家", "fact"),
    ("地元は福岡のはずれ", "fact"),
    ("実は色弱です", "fact"),
    ("先月、仙台に越してきたばかり", "fact"),
    ("うちは山口の漁村の出なんよ", "fact"),
    ("フィアンセがいます", "fact"),
    ("うち、フェレット二匹いるよ", "fact"),
    ("家族とは広東語で話してる", "fact"),
    ("三人きょうだいの真ん中です", "fact"),
    ("大阪のカフェの二階に間借りしてる", "fact"),
    ("アトピーをずっと持ってて", "fact"),
    ("そば食べるとかゆくなる体質でして", "fact"),
    ("通勤に片道90分かかります", "fact"),
    ("肉は食べません、ヴィーガンなので", "fact"),
    ("年に3回は歯医者に通ってます", "pattern"),
    ("ふた月にいっぺん美容院に行ってる", "pattern"),
    ("3週間に1回まとめ買いしてる", "pattern"),
    ("行き帰りのバスではずっとポッドキャスト聴いてる", "pattern"),
    ("アラームなしでも6時には目が覚めちゃう", "pattern"),
    ("22時過ぎたらスマホは触らない主義", "pattern"),
    ("月水金はほぼジムにいる", "pattern"),
    ("朝イチでメールチェックしちゃう", "pattern"),
    ("給料日には回転寿司に行く", "pattern"),
    ("寝る前に軽く瞑想するよう心がけてる", "pattern"),
    ("夜はヨガから始まる", "pattern"),
])
def test_japanese_constructions_are_read(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize("text,polarity", [
    ("留学はあきらめます", "dislike"),
    ("スポーツジムはまじむり", "dislike"),
    ("長い会議は正直しんどい", "dislike"),
    ("パクチーは食べられへん", "dislike"),
    ("22時過ぎたらスマホは触らない主義", "dislike"),
])
def test_japanese_their_polarity(text, polarity):
    assert polarity in {p for _, p in found(text)}


@pytest.mark.parametrize("text", [
    "ユウタはサッカーにどハマり中", "親友のミホはパンケーキが大好き",
    "明日の9時に会議って通知設定しといて", "この記事3行にまとめて", "春の俳句を作って",
    "1ガロンって何リットル", "PythonとJava、どっちから始めるべきだと思う",
    "お葬式に黒いスニーカー履いてったら失礼かな", "おすすめのポッドキャスト知らない",
    "ワインは体にいいってネットに書いてあった",
])
def test_japanese_other_people_requests_and_questions_never_reach_the_stage(text):
    assert kinds(text) <= {"fact"}
    assert extract_ja.open_statement(text) is None


@pytest.mark.parametrize("text,absent", [
    ("明日晴れたら公園行く", "pattern"),
    ("宝くじ当たったら家を買う", "pattern"),
    ("お城に住むとか無理", "pattern"),
    ("お店は9時に閉まる", "pattern"),
    ("ケンジはいつも辛いカレーを頼む", "preference"),
    ("明日は7時に起きる", "pattern"),
    ("今日はしんどい", "preference"),
    ("今日は地獄", "preference"),
    ("金は大事", "pattern"),
    ("土曜日に映画見た", "decision"),
    ("友達と行く", "pattern"),
])
def test_japanese_what_stays_as_it_was(text, absent):
    assert absent not in kinds(text)
