"""Japanese clause -> (kind, polarity, subject, meta), or None.

Japanese drops the speaker, so a clause is the user's own statement unless it names someone
else. How a clause is read, in order:

1. cleaned: NFKC, quoted text (「…」『…』) removed when something else remains, lead fillers
   and the speaker's own topic (私は, 僕は, 実は, ちなみに…) dropped;
2. refused: questions (か, ？, a question word with かな/の/っけ, or one with no か/も/でも
   after it and no polite statement end: 「週末どこ行く」; wondering 〜んだろう), requests
   (ください, 〜して, てほしい), wishes and hypotheticals (〜たら…たい, かも), hearsay (らしい,
   って言ってた, んだって, みたい, そうです after a plain verb, a predicate + って), people in
   general (みんな…, 日本人って…); a past state (「子どもの頃は…だった」) gives at most a fact,
   and a forecast about a thing (「駅ができる予定」) is no plan;
3. someone else: a clause whose topic or subject is another person or a pet (姉は, 兄が,
   兄貴って, 友達が, 彼の好きな…, or 「AはBが好き」 with A not the speaker) gives a fact
   about them when it states one (名前, 歳, 出身, 住んでいる / 〜住み, 仕事: 〜をしている,
   〜で働いている, a job word with を dropped 「八百屋やってる」, 「兄の仕事は…」) and nothing
   otherwise;
4. facts about the user (名前は, 〜歳です, 〜出身, 〜に住んでいる, 〜住み, 〜に引っ越した (a move
   done: the new home), 〜として働いている, 〜で看護師やってる, 〜を飼っている /
   〜飼ってる / ペットかってる, 兄が一人います, 看護師です, 職場は…);
5. preferences (好き, 大好き, 好み, 好物, 〜派, 目がない, ハマっている, 気に入っている, 趣味,
   嫌い, 苦手, 無理, 〜は好きじゃない, 食べられない; 「AよりB」 comparisons);
6. decisions (ことにした, 決めた, 〜にしました, つもり, 予定, 〜ようと思う, 始めた, やめた,
   買った, 申し込んだ, これからは…, 来月から…, 〜を使います);
7. habits (毎朝, 毎週, いつも, よく, たいてい, 週に3回, 〜のが習慣です, 日課, 〜ようにしている,
   〜ことにしている, 〜がち, 癖, a weekday or time-of-day topic).
"""

from __future__ import annotations

import re
import unicodedata

from omoide.governance.keys import JA_FILLER, ja_subject
from omoide.governance.polarity import JA_USED_TO_LEAD

Found = tuple[str, str | None, str, dict[str, str]]

_QUOTED = re.compile(r"「[^」]*」|『[^』]*』")
_LEAD = re.compile(
    r"^(?:(?:えっと|えーと|あの|あのね|実は|ちなみに|正直|正直に言うと|個人的には|やっぱり|ぶっちゃけ|"
    r"どっちかっていうと|どっちかっていえば|どっちかというと|どちらかというと|どちらかといえば|"
    r"どっちかと言うと|どちらかと言うと|どちらかと言えば|どっちかと言えば|"
    r"まあ|でも|あと|それと|そして|ところで|そういえば|ねえ|うん|はい)[、,]?\s*)*"
    r"(?:(?:私|わたし|僕|ぼく|俺|おれ|自分|私たち|僕たち|うち|我々|あたし)(?:(?:は|も|って)[、,]?|[、,])\s*)?"
)
_SELF = r"(?:私|わたし|僕|ぼく|俺|おれ|自分|あたし|うち)"
REL = (r"(?:姉|兄|妹|弟|母|父|夫|妻|彼氏|彼女|彼|友達|友人|親友|同僚|上司|先生|祖父|祖母|"
       r"子供たち|子どもたち|子供|子ども|娘|息子|両親|家族|チーム|隣の人|あの人|その人|人|"
       r"みんな|皆|ルームメイト|部下|先輩|後輩|母親|父親|旦那|嫁|主人|おばあちゃん|"
       r"おじいちゃん|お母さん|お父さん|お兄ちゃん|お姉ちゃん|兄弟|姉妹|いとこ|叔母|叔父|"
       r"彼ら|奥さん|社長|店長|兄貴|姉貴|親父|おやじ|お袋|おふくろ|母さん|父さん|じいちゃん|"
       r"ばあちゃん|甥っ子|姪っ子|甥|姪|孫|義母|義父|義兄|義姉|嫁さん|お向かいさん|お隣さん|"
       r"ご近所さん|近所の人|向かいの人|婚約者|フィアンセ|恋人|パートナー|"
       # the children by their order (長男は…), the teachers and coaches of a club, and a
       # surname with a title (山本部長, 田中先生): people, never the speaker
       r"長男|長女|次男|次女|三男|三女|顧問|担任|監督|コーチ|"
       r"[\u4e00-\u9fff]{1,3}(?:部長|課長|係長|社長|店長|先生|先輩|教授|監督)|"
       r"[\u4e00-\u9fff]{1,2}長|[ァ-ヴー]{2,}(?:さん|くん|ちゃん)|"
       r"お?[\u4e00-\u9fff]{1,3}さん|[\u4e00-\u9fff]{1,3}(?:くん|ちゃん|君)|"
       r"[ぁ-ゖ]{2,4}(?:さん|くん|ちゃん))")
PET = (r"(?:犬|猫|ねこ|いぬ|ネコ|イヌ|うさぎ|ハムスター|金魚|インコ|鳥|ペット|デグー|フェレット|"
       r"カメ|亀|トカゲ|ヘビ|リス|チンチラ|ハリネズミ|モルモット|文鳥|オウム|メダカ|熱帯魚)")

# 「どっちかっていうと」「何か」「いつも」「誰も」 (one or the other, something, always, nobody)
# ask nothing; 「どっちかな」 does
_QUESTION_WORD = re.compile(
    r"(?:何|なに|なん(?:で|て|の)|どこ|どう|いつ|誰|だれ|どっち|どちら|どれ|なぜ|どんな|どの|"
    r"いくら|どのくらい|どれくらい)(?!か(?!な|ね|$)|も|でも)")
# 「…大丈夫なんかな」「…好きなのかな」: the speaker wondering, not a hedged statement
# (「好きかな」 is one); a list's 「…とか」 asks nothing
_QUESTION_END = re.compile(r"(?:(?<!と)か|かね|かい|でしょうか|ですか|ますか|っけ|だっけ|"
                           r"でしたっけ|"
                           r"んだろう|んだろ|のだろう|んだろうね|んだろうな|"
                           r"(?:の|ん)かな(?:あ|ぁ|ー)?)$")
# Question words that a statement does not use without か/も/でも after them (「どこか」
# 「誰でも」「何時でも」): a clause with one asks, with or without a question mark
# (「いつも何時に寝てる」「週末どこ行く」).
# A verb and にも/ても after one (「どこ行くにも」「誰が来ても」) is "any", not asked.
_ASKING_WORD = re.compile(r"(?:何時|何曜|何歳|何人|何色|どこ|誰|だれ|なぜ|どうして|どっち|どちら)"
                          r"(?!(?:と|に|へ|で|を|から|まで)(?:か|も|でも|だって)|"
                          r"(?:か(?!ら)|も|でも|だって)|"
                          r"(?:へ|に|で|が|を)?[ぁ-ゖ\u4e00-\u9fff]{1,6}?(?:にも|ても|でも))")
# 「1リットルって何カップ」: 何 and a counter end the clause; 「〜たら失礼かな」 wonders;
# 「…知らない」 asks the listener (「おすすめの…知らない」)
_ASKING_END = re.compile(r"何(?:[ァ-ヴー]{1,6}|[\u4e00-\u9fff]{1,2})$|"
                         r"(?:たら|ったら|ても)[^、,]{0,8}(?:かな|かなあ|かね)$|知らない$")
# A question word last (「…観葉植物ってどれ」「次の休みはいつ」): asked, with or without a mark
_QUESTION_WORD_END = re.compile(
    r"(?:どれ|どこ|なに|何|いつ|だれ|誰|どっち|どちら|どう|どんな|いくら|いくつ|なんで|なぜ|"
    r"どうして|どのくらい|どれくらい|どのぐらい|どれぐらい)(?:よ|なの|なん|だい)?$")
# A guess (「一等出たら即退職だろうな」「生まれ変わったら学者になってたかもなあ」): what might
# be, never what the speaker likes, does or decided
_GUESS_TAIL = re.compile(
    r"だろう(?:な|なあ|なぁ|ね|ねえ)?$|(?:たら|ったら|れば|なら)[^、,]*(?:でしょう)(?:な|ね)?$|"
    r"かも(?:な|なあ|なぁ|しれないな|しれないなあ|しれんな|しれん)$")
_QUESTION_SOFT_END = re.compile(
    r"(?:かな|の|っけ|だっけ|かなあ|の\?|ばいい|ばいいの|たらいい|といい|"
    # western Japanese asks with ん after a verb (「どうやって計算するん」「どこ住んどるん」)
    r"(?<=[るたうくすいつむぶぐ])ん)$")
_REQUEST_END = re.compile(
    r"(?:ください|下さい|くださいな|(?<!で)(?<!ことに)して|してみて|してほしい|てほしい|ほしいんだけど|てくれる|"
    r"てくれない|てくれ|教えて|お願い|お願いします|なりきって|ふりをして|訳して|手伝って|"
    r"話して|書いて|要約して|リマインドして|考えさせて|[てで](?:ね|よ|な|ね〜|ねー)|"
    r"しといて|といて|ておいて|でおいて|まとめて|作って|調べて|送って|探して|選んで|比べて|"
    r"直して|数えて|考えて|決めて)$"
)
# a stance hedged (「けっこう好きかも」「激辛好きかも」) is still the speaker's stance
_WISH = re.compile(r"(?:たら|なら|れば).*(?:たい|たいな|たいなあ|のに)$|"
                   r"(?<!好き)(?<!嫌い)(?<!苦手)(?<!派)(?<!合ってる)かも(?:ね|しれない)?、|"
                   r"(?:といい|ばいい|たらいい)(?:な|なあ|ね|けど|のに)$|^(?:もし|仮に)|"
                   r"(?:たら|れば|なら).*(?:けど|けどな|のに|のにな)$|"
                   r"(?:たら|れば)(?:なあ|なぁ|な|ねえ|ねぇ)$|"
                   r"(?:し|り|き|べ|み|い|ち|に|び|ぎ|え|け|せ|て|め|れ)たい(?:です|な|なあ|なー)?$|"
                   # 「無人島でぼーっとしたい気分」: a wish of the moment
                   r"たい(?:気分|気持ち)(?:です|だ|だな|かも)?$|"
                   r"(?<!好き)(?<!嫌い)(?<!苦手)(?<!派)(?<!合ってる)(?:かもね|かも|かもしれない|"
                   r"かもしれません)$|(?:たいな|たいなあ|たいなー)$")
_HEARSAY = re.compile(
    r"(?:って言ってた|と言ってた|って言ってる|と言っていた|って言っていた|って言う|と言う|"
    r"みんな言う|んだって|なんだって|だって|らしい|らしいです|らしいよ|らしいね|みたい|"
    r"みたいです|みたいだ|みたいだね|って聞いた|と聞いた|って読んだ|と読んだ|"
    r"(?:る|た|い|ない)そうです|(?:る|た|い|ない)そうだ|そうですよ|(?<=[るたいだうくすつぬむ])って|"
    r"って[^、,]{0,10}で(?:見た|読んだ|聞いた|知った|言ってた|言ってました|言ってる|やってた|"
    r"やってました)|って[^、,]{0,10}(?:に|で)書いて(?:あった|た))$"
)
# Someone's words followed by a verb of saying (「彼『ここ最高』って言って帰った」): reported
# speech wherever it stands in the clause (the quote itself is cut before the rules read it).
_QUOTE_SAID = re.compile(
    r"(?:[」』]|^|^[^、,]{1,10}?[はが])(?:って|と)(?!(?:言|い)う(?:か|より))(?:よく|みんな)?"
    r"(?:言|いっ|い[いうわ])")
# What someone says to the speaker (「趣味を持て、とよく言われる」「早く寝ろって母に言われた」):
# their words, not the speaker's stance, habit or plan.
_TOLD = re.compile(r"(?:って|と)[^、,]{0,10}?(?:言われ|いわれ)(?:る|た|て|ます|ました|てる|ている|"
                   r"ています|ちゃった)(?:んだ|んです|よ|ね|わ)*$")
# Weighing what to do (「バイト辞めるべきかな」「転職したほうがいいのかな」): asked of oneself, no
# decision yet.
_DELIBERATION = re.compile(r"(?:べき|方がいい|ほうがいい)(?:なの|なん)?(?:かな|かなあ|かなー|かね|"
                           r"のかな|のか|だろうか|やろか)$")
# A question word, then a wondering end (「年金はどのくらい減るんでしょうね」「いつ終わるん
# だろうね」): asked, not stated.
_WONDER_END = re.compile(r"(?:でしょう|でしょ|だろう|だろ|やろ)(?:ね|な|なあ|ねえ|か)?$")
# A polite or explanatory end states (「どこでも寝られます」 is covered by the lookahead above;
# 「誰とも話さないです」): a question word before one of these is not asked.
_STATEMENT_END = re.compile(r"(?:です|ます|ました|でした|ません|んです|のです)$")
# 「Xだけは勘弁してほしい」「Xはもう勘弁」: X is what the speaker cannot stand
_SPARE_ME = re.compile(
    r"(?:は|だけは|って)[^、,]{0,20}?(?:から|ので)?[、,]?(?:もう|ほんと|本当に|マジで|まじで|正直|"
    r"ちょっと|絶対)?勘弁(?:して(?:ほしい|欲しい|ほしいです|欲しいです|ください|下さい)?|願いたい|"
    r"だ|です|やな|やわ)?(?:な|わ|ね|よ|よね|…)*$")
_DEICTIC = re.compile(r"^(?:そう|それ|これ|あれ|そんな|こんな|あんな|あなた|君|きみ|お前|おまえ)")
# Thanks, greetings and feelings are not habits even after いつも/毎日 (「いつもありがとう」).
_NOT_HABIT_END = re.compile(
    r"(?:(?<![なた])い|すぎ|すぎる|ありがとう|ありがとうございます|おめでとう|ごめん|ごめんね|"
    r"すみません|お疲れ(?:様|さま)?(?:です)?|よろしく|お世話になって(?:ます|います|おります|る)|"
    r"通り)$")
# The endings a remark adds (「毎日暑いですね」「いつも通りだよ」): off before the test above.
_REMARK_END = re.compile(r"(?:です|だ)?(?:ね|よ|よね|なあ|なー|な|わ)*$")

# A time word may come before the person (「最近、姉が…」「昨日母が…」), and the person may be
# named by where they belong (「会社の同僚が…」「大学の友達は…」): still someone else's clause.
_TIME_LEAD = (r"(?:最近|昨日|今日|今朝|昨夜|昨晩|先週|先月|去年|この前|この間|さっき|この頃|"
              r"前から|昔から|先週から|最近は|今日は|昨日は)[、,]?\s*")
_BELONGS = r"(?:[^、,。はがをにでとも]{1,6}の){1,2}"
# Chat drops the particle after the person (「隣の人いつも夜中に洗濯してる」): a frequency word
# right after a person word still makes them the one who does it.
_FREQUENCY_NEXT = r"(?=いつも|毎|よく|しょっちゅう|たまに|たいてい)"
# A close person then a katakana thing without a particle (「彼女サンリオ好き」「親友ホラー
# 映画無理なんよ」): their stance. Only kin and partners, whose words form no compound with a
# katakana noun (チーム does: 「チームスポーツが好き」).
_KIN_BARE = r"(?:母親|父親|兄貴|姉貴|彼氏|彼女|親友|旦那|息子|姉|兄|妹|弟|母|父|夫|妻|嫁|娘)"
_PERSON_LEAD = re.compile(rf"^(?:{_TIME_LEAD})?(?:うちの|{_SELF}の)?")
# A relation, then their bare name in kana (「親友のアンナは」「末っ子のいねが」): the clause is
# about that person. Read for their facts and kept from the stage; a kanji or a kana noun
# after の may be a thing (「母のカレーは最高」 stays the user's preference).
_NAMED_REL = re.compile(
    rf"^(?P<r>{REL})の(?!(?:ころ|とき|ため|こと|もの|ほう|うち|へや|ごはん|おかず|おやつ)(?:は|が))"
    rf"(?:[ァ-ヴ][ァ-ヴー]{{1,7}}|[ぁ-ゖ]{{2,3}})(?:さん|ちゃん|くん)?(?=は|が|って)")


# what leads the rival of a comparison (「最近は紅茶よりコーヒー」): a time or the speaker as
# the topic, a hedge; the rival is 紅茶 (the reversed-comparison rule compares keys of it)
_RIVAL_LEAD = re.compile(r"^(?:(?:今|いま|最近|さいきん|この頃|近頃|昔|前|今日|今年|私|わたし|"
                         r"僕|ぼく|俺|おれ|自分|うち)は)?(?:やっぱり|やっぱ|正直|断然|絶対)?")


def _rival(text: str) -> str:
    return _RIVAL_LEAD.sub("", text.strip(" 、,")) or text


def _named(body: str) -> str | None:
    """「親友のアンナはパイロットです」 -> 「親友はパイロットです」 (the relation as the topic), or
    None."""
    named = _NAMED_REL.match(body)
    return f"{named.group('r')}{body[named.end():]}" if named else None


def _name_of(body: str) -> str | None:
    """The bare name after the relation (「兄のケンは…」 -> ケン), or None."""
    named = _NAMED_REL.match(body)
    return body[len(named.group("r")) + 1:named.end()] if named else None


def _with_name(found: Found | None, relation: str, name: str) -> Found | None:
    """A fact about a named person keyed on them (兄ケンの年齢, not 兄の年齢: two brothers
    are two people, their ages two facts)."""
    if found is None or not found[2].startswith(relation):
        return found
    kind, polarity, subject, meta = found
    return kind, polarity, f"{relation}{name}{subject[len(relation):]}", meta


# A bare name as the topic (「ケンは大阪に住んでいます」「ポチは3歳です」): the facts a person
# has are theirs, not the speaker's (the speaker's own rules would read 大阪 as the speaker's
# home). Only for those attributes: 「コーヒーは好き」 has a katakana topic too.
_NAME_TOPIC = re.compile(
    r"^(?P<n>[ァ-ヴ][ァ-ヴー]{1,7}(?:さん|くん|ちゃん)?|[ぁ-ゖ]{2,4}(?:さん|くん|ちゃん)|"
    r"[\u4e00-\u9fff]{1,4}(?:さん|くん|ちゃん|君))(?:は|が|って)")
# A kanji name without an honorific as the topic (「健太は大阪に住んでいます」): whose home or
# job it is, never the user's (it superseded theirs). Only a personal fact takes it.
_KANJI_NAME_TOPIC = re.compile(r"^(?P<n>[\u4e00-\u9fff]{2,4})(?:は|って)")
_NOT_A_NAME = (r"(?:来年|去年|昨年|今年|毎年|毎月|毎週|先月|来月|先週|来週|昨日|明日|今日|"
               r"実家|地元|将来|老後|結婚後|卒業後|以前|現在|当時|普段|本当|実際|一応|基本)")
_PERSONAL = frozenset(("住まい", "年齢", "出身", "仕事", "勤務先", "言語", "学歴", "身長",
                       "結婚", "名前"))
_OTHER_TOPIC = re.compile(
    rf"^(?:{_TIME_LEAD})?(?:(?:うちの|{_SELF}の)?(?P<k>{_KIN_BARE})(?=[ァ-ヴ][ァ-ヴー])|(?:"
    rf"(?:うちの|{_SELF}の|あの|その|もう一人の|もうひとりの|{_BELONGS})?"
    rf"(?P<r>{REL})(?:たち)?|"
    rf"(?:うちの|{_SELF}の|{_BELONGS})(?P<p>{PET}))(?:は|が|って|も|、|{_FREQUENCY_NEXT}))")
# 「ぬいぐるみ集めるの好きなんだ」: の after a verb makes a thing of it, nobody's liking
_NOMINALIZED = re.compile(r"..[るうくすつむぶぐぬ]$")
_OTHER_POSSESSOR = re.compile(rf"^(?!{_SELF}の)(?P<r>.+?)の(?:一番)?(?:好きな|お気に入り|推し)")
_DOUBLE_SUBJECT = re.compile(
    r"^(?P<a>[^、,は]+?)は(?:(?P<b>[^、,]+?)(?:が|のほうが|の方が)(?:大|だい|とても|すごく|本当に|"
    r"一番)?(?:好き|すき|嫌い|きらい|苦手|大好き)|(?P<camp>[^、,]+?より[^、,]+?派)|"
    # 「ユウタはサッカーにどハマり中」: the topic is the one hooked (the thing takes に)
    r"[^、,]+?に(?:どハマり|ドハマり|どはまり|ハマって|はまって|ハマり|夢中|首ったけ))")
# Who 「AはBよりC派」 may be about: a person word, a pet, or a name (katakana, kanji, kana,
# with or without an honorific); 「梅干しは甘いのより酸っぱいの派」 is the speaker's taste.
_CAN_BE_NAMED = re.compile(
    rf"{REL}|{PET}|[ァ-ヴ][ァ-ヴー]{{1,7}}(?:さん|くん|ちゃん)?|"
    r"[\u4e00-\u9fff]{1,4}(?:さん|くん|ちゃん|君)?|[ぁ-ゖ]{2,4}")
# A bare kana name doing something (「ゆかりは毎週末サーフィン行ってる」「みさきは毎朝走ってる」):
# a thing in kana as the topic (「みかんは毎日食べる」) is not the one who goes or runs.
_KANA_NAME_DOING = re.compile(
    r"^(?P<n>(?![おご])[ぁ-ゖ]{2,4})(?:は|って)[、,]?(?=[^、,]*?(?:行って|行く|行きます|通って|通う|"
    r"来て|遊んで|走って|泳いで|出かけて|出掛けて|習って|働いて|頑張って|がんばって)"
    r"(?:る|ます|います|いる)?(?:んだ|んです|よ|ね|よね)*$)")
# A bare kana name as the subject of a deed (「みさきがバイト辞めた」「はるとが来月引っ越す」
# 「れんが毎晩配信しとる」): the one who acts; a thing in kana with が is rarely the one who
# quits, moves or streams, and a stance (「みかんが好き」) is read as the speaker's.
_KANA_NAME_ACTING = re.compile(
    r"^(?P<n>(?![おご])[ぁ-ゖ]{2,4})が(?![^、,]*(?:好き|すき|嫌い|きらい|苦手|無理|最高|大事))"
    r"[^、,]*(?:[うくすつぬむぶぐる]|た|だ|[てで](?:い)?る|[てで](?:い)?ます|ました|ない|ん)"
    r"(?:んだ|んです|んよ|よ|ね|わ|って)*$")
_KANA_NOT_A_NAME = (r"ここ|そこ|あそこ|どこ|いま|きょう|あした|あす|きのう|あさ|よる|ひる|"
                    r"まえ|あと|これ|それ|あれ|うち|しごと|がっこう|かいしゃ|やすみ|さいきん|むかし|ふだん|"
                    r"まいにち|まいあさ|まいばん|ほんと|じつ|たまに|ときどき|いつも|こんど|つぎ|"
                    r"こっち|そっち|あっち|わたし|ぼく|おれ|あたし|じぶん|みんな|ひとり|ふたり|"
                    r"しゅうまつ|へいじつ|なつ|ふゆ|はる|あき|いつか|いっしょ|きほん|じむ|ぷーる|"
                    r"えき|みせ|やま|うみ|かわ|まち|てら|にわ|のど|あたま|からだ|かぜ|ねつ|せき|"
                    r"あせ|なみだ|ねむけ|やるき|つかれ|めまい|あめ|ゆき|かみなり")
_TIME_TOPIC = re.compile(
    r"^(?:朝|夜|昼|夕方|週末|休日|平日|毎日|今日|最近|冬|夏|春|秋|家|仕事|職場|会社|"
    r"この|今回|今|昔|以前|かつて|前$|普段|休み|.*曜|.*日|.*プロジェクト|エディタ|飲み物|食べ物|音楽|"
    r"スポーツ|フロント|バックエンド)")

# -- facts ----------------------------------------------------------------------------------

_NUM = r"(?:[0-9]+|[一二三四五六七八九十]+)"
# what the user is and may stop being, outside the job slot: a diet, a habit, a standing
_ENDABLE_IDENTITY = (r"(?:ベジタリアン|ヴィーガン|ビーガン|菜食主義者?|喫煙者|スモーカー|愛煙家|"
                     r"会員|メンバー|ファン)")
_ENDABLE_JOB = r"[^、,をがにでは]{0,8}?(?:師|士|員|教師|講師|医|記者|作家|学生|院生)"
_JOB_SUFFIX = re.compile(
    r"(?:師|士|員|者|家|医|官|学生|大学生|院生|生徒|(?<![苦下上])手|デザイナー|エンジニア|シェフ|パイロット|"
    r"プログラマー|ライター|トレーナー|マネージャー|アーティスト|フリーランス|教師|主婦|主夫|"
    r"店長|社長|ナース|コック|バリスタ|講師|作家|画家|記者|翻訳者|通訳|公務員|会社員|"
    r"フリーター|学生さん|職人|職|年生|屋|パティシエ|ソムリエ|カメラマン|スタイリスト|ドライバー|"
    r"ディレクター|プロデューサー|コンサルタント|アナリスト|バーテンダー|ミュージシャン|"
    r"イラストレーター|保育士|美容師|ヘルパー|ケアマネ|薬剤師|大工|先生)(?:さん)?$")
_COPULA_END = re.compile(r"(?:だった|でした|です|だ|なんだ|なんです|なの)$")
_IDENTITY = re.compile(
    r"(?:左利き|右利き|独身|既婚|未婚|ベジタリアン|ヴィーガン|ビーガン|双子|一人っ子|長男|長女|"
    r"次男|次女|末っ子|不耐症|体質|夜型|朝型|色弱|色盲|真ん中|ペスカタリアン)$")
_ATTRIBUTE = (r"(?:誕生日|血液型|身長|体重|出身|星座|職業|仕事|住まい|住所|年齢|専攻|国籍|本名|"
              r"職場|勤務先|実家|地元|最寄り駅|最寄り)")
# 「実家は…」 states where, not how the speaker feels about it (「地元は好き」 is a preference)
_STANCE_WORD = re.compile(r"好き|嫌い|苦手|最高|無理|ムリ|むり|大事|いい|楽しい|つらい|しんどい")
# A person or pet as the topic or the subject (「兄は…」「兄が…」「兄って…」): chat drops は for が
# as often as not, and what is stated about them is the same fact.
_REL_TOPIC = rf"(?P<r>{REL}|{PET})(?:は|が|って|も)[、,]?\s*"
# 〜を / 〜として dropped before the verb (「八百屋やってる」): only a job word says it is a job.
_DOING = r"(?:して|やって)(?:る|ます|います|いる|おります)?$"

# (name, pattern); ``r`` a relation, ``x`` the subject, ``v`` a value kept in the text.
# died, said of a being (亡くなる, 天国に行く, 虹の橋を渡る) or plainly (死んだ: of a phone too,
# so a bare name needs a pet, a relation or うちの before it)
_DIED = (r"亡くなり|亡くなっ|死んだ|死んじゃ|死にまし|天国に行っ|虹の橋を渡[っり]|旅立っ|"
         r"息を引き取っ")
_FACTS: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(body)) for name, body in [
        ("rel_name", rf"^(?:{_SELF}の|うちの)?(?P<r>{REL}|{PET}|.+?)の名前は(?P<v>.+)"),
        ("name", rf"^(?:{_SELF}の)?名前は(?P<v>.+)"),
        ("name", r"^(?P<v>.+?)(?:って|と)呼んで"),
        ("name", r"^(?P<v>.+?)(?:と申します|といいます|と言います|って言います|っていいます)$"),
        ("name", r"^(?P<v>[^、。]{1,10}?)(?:です|と申します|っていいます)[、,]\s*(?:よろしく|"
                 r"はじめまして)"),
        ("married", r"^(?:[^、。]{0,4}?)?(?P<x>結婚|離婚|婚約)(?:しました|した|しています|してます|"
                    r"してる|している)$"),
        ("height", r"(?:^|は)(?:[^、。]{0,8}?)(?P<v>[0-9]{2,3}) ?(?:センチ|cm)"),
        ("pet_named", r"^(?P<v>.+?)(?:っていう|という)名前の(?P<x>.+?)を飼って"),
        ("rel_age", rf"^(?:うちの)?(?P<r>{REL}|{PET})(?:は|が)[^、。]{{0,6}}?{_NUM}歳"),
        ("age", rf"^(?:[^、。]{{0,4}}?)?{_NUM}歳(?:です|だ|になりました|になった|$)"),
        # 「今年で28になります」「来週30歳になる」「来月で四十路に突入」
        ("age", rf"^[^、。]{{0,8}}?{_NUM}(?:歳|才)?に(?:なります|なりました|なる|なった|"
                r"なっちゃった|なるよ|なるんだ)"),
        ("age", r"^[^、。]{0,10}?(?:三十路|四十路|五十路|六十路|アラサー|アラフォー|アラフィフ|"
                r"アラ還)(?:に)?"
                r"(?:突入|です|だ|$)"),
        # a job word, then what the job is like (「救急救命士で夜勤やってます」)
        ("job_word_de", rf"^(?P<j>[^、,をがにでは]{{2,12}})で[、,]?\s*(?:[^、,]{{0,6}})?"
                        rf"(?:夜勤|日勤|"
                        rf"夜番|シフト|働いて|勤務|{_NUM}年目)"),
        ("rel_attribute", rf"^(?P<r>{REL}|{PET})の(?P<a>{_ATTRIBUTE})は(?P<v>.+)"),
        ("rel_origin", rf"^{_REL_TOPIC}(?P<v>.+?)(?:出身|生まれ)"),
        ("hometown", r"^(?P<v>.+?)(?:出身|生まれ)(?:です|だ|で|$)"),
        ("hometown", r"^(?P<v>.+?)で(?:育ち|育った|生まれ)"),
        ("hometown", r"^生まれも育ちも(?P<v>.+)"),
        ("hometown", r"^(?P<v>.+?)の出(?:身)?(?:です|だ|なんよ|なんです|なんだ|やねん|やで|$)"),
        ("studies", r"^(?P<v>.+?(?:大学|高校|学校|大学院|専門学校))を(?:卒業|中退)"),
        ("rel_partner", r"^(?P<r>.+?)(?:と|とは)付き合って"),
        # one of the user's pets or people died (「ポチが亡くなりました」「うちの猫のミケが
        # 死んじゃった」): the live facts naming them become history (``dedup``)
        ("died", rf"^(?:{_TIME_LEAD})?(?P<lead>うちの|{_SELF}の|飼ってた|飼っていた)?"
                 rf"(?:(?P<r>{PET}|{REL})の)?(?P<n>[ァ-ヴー]{{2,8}}|[ぁ-ゖ]{{2,4}})(?:が|は)[、,]?"
                 rf"(?:[^、,]{{0,6}}?[、,]?)?(?P<v>{_DIED})"),
        ("died", rf"^(?:{_TIME_LEAD})?(?:うちの|{_SELF}の|飼ってた|飼っていた)?"
                 rf"(?P<r>{PET}|{REL})(?:が|は)[、,]?(?:[^、,]{{0,6}}?[、,]?)?(?P<v>{_DIED})"),
        # a thing of the user's sold, given away or stolen (「ギターを売りました」「自転車を
        # 盗まれた」): the live fact that they have it becomes history (``dedup``)
        ("parted", rf"^(?:{_TIME_LEAD})?(?:{_SELF}の|うちの)?(?P<x>[^、,。をはが]{{1,16}}?)"
                   r"(?:を|は)(?:売っ|売りまし|売っちゃっ|手放し|譲っ|譲りまし|処分し|盗まれ|"
                   r"盗まれちゃっ)(?:た|ました|てしまった|てしまいました|ちゃった)?$"),
        ("own", r"^(?P<x>.+?)(?:は|を)持って(?:いません|ない|ません|います|ます|る|いる)$"),
        ("rel_home", rf"^{_REL_TOPIC}(?P<v>.+?)(?:に住んで|で暮らして|に暮らして|住み(?:です|だ|$)|"
                     r"在住|で一人暮らし)"),
        ("pet", rf"^(?P<x>.+?){_NUM}(?:匹|頭|羽)と暮らして"),
        ("home", r"^(?P<v>.+?)(?:に住んで|で暮らして|と暮らして|に引っ越してきた|に引っ越して"
                 r"きました|在住|で一人暮らし|一人暮らし|住み(?:です|だ|なんだ|なんです|$)|"
                 r"に越してきた|に越してきました|に越した|に間借りして|で間借りして|に下宿して|"
                 r"で下宿して|"
                 # a move done is the new home (「先月東京に引っ越しました」), as "I moved to
                 # Tokyo" is; one ahead or wished (引っ越します, 引っ越したい, 引っ越したら) is not
                 r"[にへ]引っ越し(?:た|ました)(?![いくらり]|こと))"),
        ("rel_job", rf"^{_REL_TOPIC}(?P<v>.+?)(?:を|の仕事を)(?:して|やって)"),
        ("rel_job", rf"^{_REL_TOPIC}(?P<v>.+?)(?:として|で)働いて"),
        ("rel_job_word", rf"^{_REL_TOPIC}(?:[^、,]+?で)?(?P<v>[^、,をがにで]+?)(?:{_DOING}|"
                         r"(?:です|だ|なんだ|なんです|なの)?$)"),
        ("job", r"^(?P<v>.+?)として働いて"),
        ("employer", r"^(?P<v>.+?)(?:で働いて|で働いてる|に勤めて|に勤務|で勤務)"),
        ("job_at", r"^(?P<v>.+?)で(?P<j>[^、でを]+?)(?P<p>を|として)?(?:して|やって|働いて)"),
        ("job", r"^(?P<v>.+?)の仕事を(?:して|やって)"),
        ("job", r"^(?P<v>.+?)を(?:教えて|経営して)"),
        ("pet", rf"^(?P<x>.+?)を?(?:{_NUM}(?:匹|頭|羽))?(?:飼って|飼い(?:始めて|はじめて))"),
        ("pet", rf"^(?P<x>[^、,]*?{PET})を?(?:{_NUM}(?:匹|頭|羽))?かって(?:る|ます|います|いる)"),
        ("have", rf"^(?:[^、がは]{{0,6}}の)?(?P<x>{REL}|{PET}|子供|子ども)(?:と(?:{REL}))*"
                 rf"(?:が|も)?"
                 rf"(?:{_NUM}(?:人|匹))?(?:ずつ)?(?:います|いる|いて|おります)"),
        ("language", r"^(?P<x>.+?)(?:が|も)?(?:話せます|話せる|喋れる|しゃべれる|ペラペラ|"
                     r"ぺらぺら|堪能)"),
        ("language", r"^(?P<x>.+?(?:語|弁))で(?:話して|しゃべって|喋って)(?:る|ます|います|いる)"),
        ("car", r"^(?P<x>.+?)に乗って(?:います|ます|る|いる)$"),
        ("allergy", r"^(?P<x>.+?)アレルギー"),
        ("condition", r"^(?P<x>.*?(?:病|症|喘息|アトピー|持病))(?:があります|がある|です|持ち|"
                      r"を(?:ずっと|昔から)?持って)"),
        ("constitution", r"^(?P<x>.+?)体質(?:です|でして|なんです|なんで|なので|で|だ|$)"),
        # what the body is or cannot do: 「左利きだから…」 (an identity word as a reason),
        # 「足のサイズ22.5」, 「左耳が少し聞こえにくい」
        ("identity_reason", r"^(?P<v>[^、,をがにでは]+?)(?:だから|なので|なんで|だし|で)[、,]?"),
        ("measure", rf"^(?:{_SELF}の)?(?P<a>(?:足|靴|手|指|頭|服|ズボン|帽子|ウエスト)の?サイズ|"
                    r"視力|握力|股下)(?:は|が|って)?[、,]?\s*(?:[0-9][0-9.]*|[SMLX]{1,3}(?![a-z])|"
                    r"[一二三四五六七八九十]+号)"),
        ("impairment", r"^(?P<x>(?:左|右|両|片)?(?:耳|目|眼|膝|ひざ|腰|肩|足|手首|鼻))"
                       r"(?:が|は)[、,]?(?:少し|ちょっと|かなり|昔から|生まれつき|もともと|元々|若干|ほとんど|"
                       r"あまり|全然|ほぼ)?(?:聞こえにくい|聞こえない|聞こえづらい|見えにくい|"
                       r"見えない|見えづらい|悪い|弱い|遠い)"),
        # the language or dialect spoken (「家では関西弁しゃべってる」「職場では英語を話してます」)
        ("language", r"^(?:[^、,]{1,8}?(?:では|だと|で|とは|には)[、,]?)?"
                     r"(?P<x>[^、,でをは]{1,10}?(?:語|弁))(?:で|を)?(?:話して|しゃべって|喋って)(?:る|ます|います|いる)$"),
        # an exam or licence passed (「去年、宅建に受かりました」「簿記2級に合格した」)
        ("passed", rf"^(?:{_TIME_LEAD}|(?:[0-9]+年|今年|春|秋|[0-9]+月)(?:に)?[、,]?\s*)?"
                   r"(?P<x>[^、,がは]+?)(?:に|を)(?:無事|ついに|やっと|一発で|見事)?(?:受かった|"
                   r"受かりました|合格した|合格しました|取得した|取得しました)(?![らり])"),
        ("commute", r"^通勤(?:に|は|で)?(?:片道)?[^、,]{0,10}?(?:かかります|かかる|かかってる|"
                    r"かかっています)"),
        ("instrument",
         r"^(?P<x>.+?)を弾き(?:ます)?$|^(?P<y>.+?)を弾(?:く|ける|けます|いています|いてます|いてる)$"),
        ("attribute", rf"^(?P<a>{_ATTRIBUTE})は(?P<v>.+)"),
        ("rel_job",
         rf"^(?:うちの|{_SELF}の)?(?P<r>{REL}|{PET})は(?P<v>[^、,をがに]+?)(?:です|だ)?$"),
        ("identity", r"^(?P<v>[^、,をがにでは]+?)(?:です|だ|やってます|やってる|をしてます|"
                     r"をしています|してます|をやってます|なんです|なんだ|なので|だから|なんで)?"
                     r"(?:笑|よ|ね|ー)*$"),
    ]
]


# A home or a job in the past (「昔は東京に住んでた」「学生の頃は京都に住んでました」): a fact of
# its own, keyed by its words, never the current value of the slot.
_SLOT_RULES = frozenset({"home", "rel_home", "job", "rel_job", "employer", "job_at"})
_PAST_SLOT = re.compile(
    r"(?:住んで|暮らして|働いて|勤めて|やって|して)(?:い)?(?:た|ました)|^(?:昔|当時|以前|前)は|"
    r"(?:頃|ころ|時|とき)(?:は|に)")


# 「一般人です」「大人です」: a person, not a nationality (「ブラジル人です」「日本人です」)
_NOT_NATIONALITY = re.compile(r"(?:一般|大|成|素|玄|凡|変|苦労|常識|文化|新|老|病|他|本|善|悪|"
                              r"仕事|職|達|名|夜型|朝型|猫|犬|インドア|アウトドア)人$")


def _identity_slot(word: str) -> str:
    """The subject of an identity word: 独身 / 既婚 are values of the marriage slot (結婚,
    what 「結婚しました」 states), the others their own."""
    return "結婚" if word in ("独身", "既婚", "未婚") else word


def _fact(body: str, other: str | None) -> Found | None:
    for name, pattern in _FACTS:
        match = pattern.match(body)
        if not match:
            continue
        groups = match.groupdict()
        rel = groups.get("r")
        if other and not rel and name not in ("rel_name", "have", "rel_partner", "died"):
            continue  # about someone else: only the rules that name them
        if name == "died":
            who, whose = groups.get("n") or "", groups.get("r") or ""
            if who and not whose and not groups.get("lead") and groups["v"].startswith("死"):
                continue  # 「スマホが死んだ」: a thing
            return "fact", None, f"{who or whose} 死去", {"died": who} if who else {}
        if name == "parted":  # a sale or a gift is a decision made, a theft a fact
            thing = groups["x"].strip()
            if "盗" in body[match.end("x"):]:
                return "fact", None, f"{thing} 盗難", {"parted": thing}
            return "decision", "dislike", thing, {"parted": thing}
        if name in _SLOT_RULES and _PAST_SLOT.search(body):
            return "fact", None, body, {}
        if name == "identity":
            value = (groups["v"] or "").strip()
            if _JOB_SUFFIX.search(value):
                return "fact", None, "仕事", {}
            if value.endswith("社会人"):  # a working adult: what they do
                return "fact", None, "仕事", {}
            if value.endswith("人") and len(value) >= 3 and not _NOT_NATIONALITY.search(value):
                return "fact", None, "国籍", {}
            if value.endswith("座") and len(value) >= 3:
                return "fact", None, "星座", {}
            identity = _IDENTITY.search(value)
            if identity:
                return "fact", None, _identity_slot(identity.group(0)), {}
            continue
        if name == "identity_reason":
            identity = _IDENTITY.search((groups["v"] or "").strip())
            if identity:
                return "fact", None, _identity_slot(identity.group(0)), {}
            continue
        if name == "measure":
            return "fact", None, groups["a"], {}
        if name == "job_word_de":
            job = groups["j"]
            if not _JOB_SUFFIX.search(job) or job.endswith("家"):
                continue  # 「実家で」「歯医者で」 are places, not the job
            return "fact", None, "仕事", {}
        if name == "attribute" and _STANCE_WORD.search(groups.get("v") or ""):
            continue
        if name == "rel_job_word":
            if not _JOB_SUFFIX.search((groups.get("v") or "").strip()):
                continue
            return "fact", None, f"{rel}の仕事", {}
        if name == "rel_attribute":
            return "fact", None, f"{rel}の{groups['a']}", {}
        if name == "rel_job":
            # A person has many attributes at once: only a job (a job word, 働いて, の仕事を)
            # is the slot a new job replaces; anything else they are or do is part of the
            # subject (「娘はサッカーをしています」 is no job, 「妻はベジタリアンです」 no
            # contradiction of 「妻は先生です」).
            if re.fullmatch(_ATTRIBUTE, rel or ""):
                return "fact", None, rel, {}  # 「身長は…」: an attribute, not a person
            value = _COPULA_END.sub("", (groups.get("v") or "").strip())
            if _JOB_SUFFIX.search(value) or "働" in body or "の仕事を" in body:
                return "fact", None, f"{rel}の仕事", {}
            return "fact", None, f"{rel}の{value}" if value else rel, {}
        if name == "rel_name":
            if other is None and not re.fullmatch(rf"{REL}|{PET}", rel or ""):
                rel = ja_subject(rel or "")
            return "fact", None, f"{rel}の名前", {}
        if name == "rel_partner":
            return "fact", None, groups["r"], {}
        if name.startswith("rel_"):
            attr = {"rel_age": "年齢", "rel_origin": "出身", "rel_home": "住まい"}[name]
            return "fact", None, f"{rel}の{attr}", {}
        if name == "job_at":
            if not groups.get("p") and not _JOB_SUFFIX.search(groups["j"]):
                continue  # 「公園でサッカーしてる」 is what one does, not a job
            return "fact", None, "仕事" if _JOB_SUFFIX.search(groups["j"]) else "勤務先", {}
        subject = {
            "name": "名前", "age": "年齢", "hometown": "出身", "home": "住まい",
            "job": "仕事", "employer": "勤務先", "language": "言語", "car": "車",
            "studies": "学歴", "married": "結婚", "height": "身長", "constitution": "体質",
            "commute": "通勤",
        }.get(name)
        if subject:
            return "fact", None, subject, {}
        if name == "attribute":
            return "fact", None, groups["a"], {}
        if name == "allergy":
            return "fact", None, f"アレルギー {groups['x']}", {}
        if name == "pet_named":  # ポチという名前の犬, コロという名前の犬: two dogs
            return "fact", None, f"{groups['x']}の{groups['v']}", {}
        x = groups.get("x") or groups.get("y") or ""
        x = re.sub(rf"^(?:うちの|{_SELF}の)|{_NUM}(?:匹|頭|羽|人)$", "", x)
        if x:
            return "fact", None, x, {}
    return None


# -- preferences ----------------------------------------------------------------------------

_X = r"(?P<x>.*?)"
_PREFERENCES: list[tuple[str, str, re.Pattern[str]]] = [
    (name, pol, re.compile(body)) for name, pol, body in [
        ("favorite", "like",
         r"^(?:今|いま|最近|現在)?(?:一番)?(?:好き|すき)な(?P<a>.+?)は(?P<v>.+)"),
        ("not_like", "dislike",
         rf"^{_X}(?:の方|のほう)?(?:は|が|も)?(?:あまり|あんまり|そんなに|それほど|全然|もう)?"
         r"(?:好き|すき)(?:では|じゃ)(?:ありません|ない|なかった|なくなった|なくなりました)"),
        # 「好きくない」(colloquial), 「大好きってわけじゃない」: negated, never "like"
        ("not_like", "dislike",
         rf"^{_X}(?:の方|のほう)?(?:は|が|も|って)?(?:別に|あまり|あんまり|そんなに|それほど)?"
         r"(?:大|だい)?(?:好き|すき)(?:くない|くありません|(?:って|という|な)?(?:わけ|訳)"
         r"(?:では|じゃ)(?:ない|ありません))"),
        # 「嫌いじゃない」: not disliked, a mild like (read as "dislike", it superseded 大好き)
        ("not_dislike", "like",
         rf"^{_X}(?:は|が|も|って)?(?:別に|そんなに|意外と|案外)?(?:嫌い|きらい|苦手)(?:では|じゃ)"
         r"(?:ない|ありません)"),
        ("not_good_at", "dislike",
         rf"^{_X}(?:は|が|も|って)?(?:あまり|あんまり|そんなに|全然)?(?:得意|好き)(?:では|じゃ)"
         r"(?:ない|ありません)"),
        ("soft_no", "dislike", rf"^{_X}(?:は|って)ちょっと(?:ね|な|かな|…|\.\.\.)*$"),
        ("irritates", "dislike",
         rf"^{_X}(?:は|って|に|が)(?:本当に|ほんと|いつも)?(?:イライラする|イラつく|うんざり|"
         r"ストレス|疲れる|耐えられない|気持ち悪くなる|具合が悪くなる|気分が悪くなる)"),
        # 「Xだけは勘弁してほしい」「Xは見るだけで足がすくむから勘弁」
        ("spare_me", "dislike", rf"^{_X}(?:は|だけは|って)[^、,]{{0,20}}?(?:から|ので)?[、,]?"
                                r"(?:もう|ほんと|本当に|マジで|まじで|正直|ちょっと|絶対)?勘弁"),
        # what the thing does to the body (「オペラは聴いてると頭痛くなる」「牡蠣は食べると
        # お腹壊す」): a dislike of X; a time topic is how that time feels (``_preference``)
        ("sickens", "dislike",
         rf"^{_X}(?:は|って)[、,]?[^、,]{{0,12}}?(?:と|たら|だら|だけで|ば)[、,]?(?:すぐ|いつも|必ず|"
         r"絶対)?(?:(?:頭|お腹|おなか|胃|気分|具合|耳)(?:が)?(?:痛く|悪く|重く)|気持ち悪く|"
         r"吐き気が|頭痛が|胸焼け|胃もたれ|お腹(?:を)?壊|おなか(?:を)?壊|酔っ|酔う)"),
        ("mismatch", "dislike",
         rf"^{_X}(?:とは|と|は|って)(?:どうも|あまり|あんまり)?(?:相性が悪い|合わない|合わなくて)"),
        ("unneeded", "dislike", rf"^{_X}(?:は|って)(?:もう)?(?:いらない|要らない|いらん)"),
        ("cannot_like", "dislike",
         rf"^{_X}(?:は|って)(?:あまり|あんまり|どうしても)?(?:楽しいと|好きだと|好きに)?"
         r"(?:思えない|なれない)"),
        ("dislike", "dislike",
         rf"^{_X}(?:は|が|も|って)?(?:ちょっと|本当に|ほんとに|ほんと|マジで|まじで|すごく|とても|"
         r"どうしても|昔から)?(?:大|だい)?(?:嫌い|きらい|キライ|苦手|にがて|無理|ムリ|だめ|ダメ|駄目|"
         # 「味噌汁こぼした最悪」: what just happened, no dislike of a thing
         r"(?<![たっだ])(?<![たっだ][、,])(?:最悪|最低)|好かん|好かない|好きやない|好きちゃう|"
         r"嫌(?:だ|です|$)|受け付けない|耐えられない)"),
        # 「Excelでの進捗管理、正直うんざりしてる」: fed up with it
        ("fed_up", "dislike",
         rf"^{_X}(?:は|に|には|って|、)[、,]?(?:正直|もう|ほんと|本当に|マジで|まじで|ちょっと|"
         r"いい加減)?(?:うんざり|げんなり|辟易)(?:して(?:る|いる|います|ます)|だ|です)?"),
        # 「英単語は音声で覚えるほうが性に合ってる」: it suits the speaker
        ("suits_me", "like",
         rf"^{_X}(?:が|は|って|の(?:ほう|方)が|ほうが|方が)[、,]?(?:やっぱり|やっぱ|一番|断然)?"
         r"(?:性に合(?:う|ってる|っている|ってます|います)|肌に合(?:う|ってる|ってます))"),
        # 「Xだけは(絶対)見られない / 乗れない」: the one thing the speaker cannot bear
        ("only_cannot", "dislike",
         rf"^{_X}だけは[、,]?(?:絶対(?:に)?|どうしても|ほんとに|本当に|マジで|まじで)?"
         r"[^、,]{0,4}?(?:られない|れない|[けせてねめべげ]ない|られへん|れへん)(?:んだ|んです|です|"
         r"よ|ね|わ)*$"),
        ("cannot", "dislike",
         rf"^{_X}(?:は|が)?(?:食べられない|食べられません|食べれない|食べれません|飲めない|"
         r"飲めません|飲まない派|食べない派|食べられへん|食べれへん|飲めへん)"),
        # how hard a thing is to bear (「長電話は正直しんどい」「オープンオフィスは地獄」): a
        # time topic's しんどい is how the day feels (``_preference``)
        ("hard", "dislike",
         rf"^{_X}(?:は|が|って|も)?(?:正直|まじで|マジで|まじ|マジ|ほんと|本当に|どうも|ちょっと|"
         r"ほんとに)?(?:しんどい|つらい|キツい|きつい|地獄|拷問|落ち着かない|むり|ムリ|"
         r"無理やわ)(?:です|だ|やな|やわ|よ|ね|よね|わ|なあ|な|んだ|んです)*$"),
        ("need", "like", rf"^{_X}(?:が|は)?ない(?:と|なんて)(?:生きて|いきて)いけない"),
        # 「椎茸だけは勘弁してください」: spared, not a request
        ("spare_me", "dislike",
         rf"^{_X}(?:だけは|は|って|とか)[、,]?(?:もう|ほんと|本当に|マジで|まじで|正直|絶対)?"
         r"勘弁(?:して(?:ください|下さい|ほしい|欲しい)?|願いたい|です)?(?:な|わ|ね|よ|…|\.)*$"),
        # 「梅干しの酸っぱさがたまらん」「辛いもんはなんぼでもいけるで」
        ("irresistible", "like",
         rf"^{_X}(?:が|は|って)?(?:ほんと|マジで|まじで|まじ|マジ)?(?:たまらん|たまらない|"
         r"たまりません|やめられない|やめられへん)"),
        ("any_amount", "like",
         rf"^{_X}(?:は|なら|って)(?:なんぼでも|いくらでも|何個でも|何杯でも|無限に|永遠に)"
         r"(?:いける|いけます|いけちゃう|食べられる|食べれる|食べられます|飲める|飲めます)"),
        # 「タピオカは黒糖ミルクが優勝」: net slang for the best of its kind
        ("best_of", "like",
         r"^(?:(?P<t>[^、,はが]+?)(?:は|って))?(?P<x>[^、,はが]+?)が(?:優勝|勝たん|最強)"),
        ("only", "like", r"^(?:(?P<t>.+?)(?:は|って)|.+?なら)(?P<x>[^、。]+?)(?:一択|一筋)"),
        ("like", "like",
         rf"^{_X}(?:の方|のほう)?(?:が|は|も|って)?(?:大|だい|とても|すごく|めっちゃ|めちゃくちゃ|"
         r"本当に|ほんとに|一番|超|かなり|結構|けっこう|何より|なにより|何よりも|なによりも)?"
         r"(?:好き|すき|スキ|大好き|好物|大好物)"
         r"(?!(?:では|じゃ|くない|くありません|(?:って|という|な)(?:わけ|訳)|(?:わけ|訳)"
         r"(?:では|じゃ)))"),
        ("prefer", "like", rf"^{_X}(?:が|は|を)?(?:好み|好む|好んで)(?!焼)"),  # not お好み焼き
        # 「コーヒー派から紅茶派になった」「犬派をやめて猫派に転向」: a camp left for another
        # (``was``: the live camp it retires, ``DedupIndex.left_camp``)
        ("camp_switch", "like",
         r"^(?:(?:最近|今|ついに|とうとう|すっかり)は?、?)?(?P<was>[^、。はが]+?)派?"
         r"(?:から|をやめて|を卒業して)(?P<x>[^、。]+?)派(?:に|へ)"
         r"(?:なった|なりました|なってきた|変わった|変わりました|転向|鞍替え|移った|移りました)"),
        # 「紅茶派になりました」「すっかりインドア派になった」: a camp the speaker has come to
        ("camp", "like", rf"^{_X}派(?:です|だ|なんです|かな|になりました|になった|になってきた|"
                         r"になりつつある|に転向(?:した|しました)|$)"),
        ("weakness", "like", rf"^{_X}(?:に|には)(?:目がな|弱い|弱くて|勝てない|惹かれる|"
                                 r"心惹かれる|ときめく)"),
        # 「Xほど退屈なものはない」: the worst of all, a dislike (before the like below)
        ("unmatched_worst", "dislike",
         r"^(?P<x>[^、,]+?)ほど[、,]?(?:[^、。]{0,14}?)(?:うんざり|イライラ|いらいら|腹が立|"
         r"嫌な|いやな|面倒な|めんどくさい|退屈な|つまらない|苦痛な|憂鬱な)[^、。]{0,4}?"
         r"(?:もの|こと)は[、,]?(?:ほかに|他に)?(?:ない|ありません|見当たらない|見当たりません)"),
        # 「Xほど、心が落ち着くものは、ほかに見当たりません」: nothing is better
        ("unmatched", "like",
         r"^(?P<x>[^、,]+?)ほど[、,]?(?:[^、。]{0,14}?)(?:もの|こと)は[、,]?(?:ほかに|他に)?"
         r"(?:ない|ありません|見当たらない|見当たりません)"),
        ("context_best", "like",
         r"^(?:.+?)なら(?:やっぱり|やっぱ|断然|絶対|もちろん)(?P<x>[^、。]+?)(?:が|は)?(?:いちばん|一番|"
         r"最高|最強)?(?:一択|でしょ|だね|かな|です|!)*$"),
        ("endless", "like", rf"^{_X}(?:なら|だったら)(?:いくらでも|何時間でも|毎日でも|何杯でも)"),
        ("happiest", "like",
         rf"^{_X}(?:が|は|って)(?:一日で|人生で|一週間で|一年で)?(?:一番|いちばん)の?(?:楽しみ|幸せ|"
         r"落ち着く|楽しい|"
         r"好き)"),
        # 「Xのが、今の私には何よりの楽しみ」「Xが唯一の救い」「Xことが一番の贅沢」: the best
        # thing in the speaker's life, whatever stands between
        ("dearest", "like",
         rf"^{_X}(?:が|は|って)[、,]?(?:[^、,]{{0,12}}?[、,]?)?(?:何より|なにより|一番|いちばん|唯一|"
         r"最大)の(?:楽しみ|幸せ|贅沢|救い|癒し|息抜き|生きがい|生き甲斐|喜び)"),
        # 「Xが楽しくて仕方がない」: enjoyed past bearing
        ("cannot_stop", "like",
         rf"^{_X}(?:が|は|って)[、,]?(?:楽しくて|面白くて|おもしろくて)(?:仕方|しかた|しょうが)"
         r"(?:が)?(?:ない|ありません)"),
        ("hooked", "like",
         rf"^{_X}(?:に|には|にも)?(?:ハマって|はまって|ハマった|はまった|夢中|凝って|ドハマり|"
         r"どハマり|どはまり|ハマると|はまると)"),
        ("fond", "like", rf"^{_X}(?:が|は|を)?(?:気に入って|お気に入り)"),
        ("hobby", "like", rf"^{_X}(?:が|は)(?:{_SELF}の)?趣味"),
        ("hobby", "like", r"^趣味は(?P<x>.+)"),
        ("better", "like", rf"^{_X}(?:の方|のほう)がいい"),
        ("best", "like", rf"^{_X}(?:が|は|って)?(?:最高|一番いい|いちばんいい)"),
        ("best", "like",
         rf"^{_X}(?:が|は|って)?(?:まじで|マジで|まじ|マジ|ほんと)?(?:(?:最強|至高)(?:の[^、。]{{0,8}})?"
         r"|神(?:すぎ|すぎる)?)(?:です|だ|やな|でしょ)?$"),
        ("rather_better", "like",
         r"^(?P<over>.+?)より(?:も)?(?P<x>[^、。]+?)(?:が|の方が|のほうが)(?:いい|好き|好み)"),
        # 「紙の本のほうが電子書籍より好き」: the thing before が, over the one before より
        ("better_than", "like",
         r"^(?P<x>[^、。がは]+?)(?:の方|のほう)?(?:が|は)(?P<over>[^、。]+?)より(?:も)?"
         r"(?:ずっと|断然|よっぽど|はるかに|全然)?(?:好き|すき|好み)"),
        # 「BよりA派」; the stance word itself is never the thing (「猫が何より好き」 was keyed 好:
        # every such liking merged into the first)
        ("rather", "like",
         r"^(?P<over>.+?)より(?:も)?(?:断然|絶対|やっぱり|やっぱ)?"
         r"(?!(?:大)?(?:好き|すき|嫌い|きらい|苦手|好み)(?:です|だ|な|!|！)*$)"
         r"(?P<x>[^、。]*[^、。るたいだすてくうよねなわかしのさ])"
         r"(?:派|かな|でしょ|だね|です|!)*(?:[、,]\s*(?:断然|絶対|やっぱり|もちろん|圧倒的に))?$"),
    ]
]


# A time as what is hard (「今日はしんどい」): how that time feels, not a lasting dislike
_FEELING_TIME = re.compile(
    r"^(?:今日|今朝|今夜|今週|今月|今年|最近|昨日|きょう|毎日|朝|夜|昼|夕方|週末|平日|休日|"
    r"[月火水木金土日]曜(?:日)?|この頃|このところ|今|仕事|職場|体|からだ|頭|気分)$")


# Who a topic may name: a relation, someone with an honorific, a name in katakana
_PERSON_TOPIC = re.compile(
    rf"(?:うちの)?(?:{REL}|.{{1,8}}(?:さん|くん|君|ちゃん|先生|氏)|[ァ-ヴ][ァ-ヴー]{{1,5}})")


# A stance word that describes a person (「辛いもの苦手な友達がいて」「猫好きな人って」): their
# stance, never the user's
_DESCRIBES_PERSON = re.compile(
    r"(?:な|の)(?:人|友達|友人|子|奴|やつ|方|彼氏|彼女|彼|同僚|先輩|後輩|家族|仲間|男|女|上司|"
    r"連中|お客|客|生徒|知り合い)")


# an intensifier before the stance word is not the subject (「電話まじ苦手」 was 電話まじ)
_INTENSIFIER_TAIL = re.compile(
    r"(?:まじで|マジで|まじ|マジ|ガチで|ガチ|がちで|ほんとに|ほんと|本当に|めっちゃ|めちゃくちゃ|"
    r"めちゃ|すごく|すっごく|超|とても|かなり|結構|けっこう|わりと|割と|普通に|正直|ちょい|ちょっと)$")


def _preference(body: str, previous: str | None) -> Found | None:
    for name, polarity, pattern in _PREFERENCES:
        match = pattern.match(body)
        if not match:
            continue
        if _DESCRIBES_PERSON.match(body, match.end()):
            return None
        groups = match.groupdict()
        if name == "favorite":
            return "preference", polarity, f"好きな{groups['a']}", {
                "value": groups["v"].strip()}
        raw = groups["x"] or ""
        topic = groups.get("t")
        if topic and _PERSON_TOPIC.fullmatch(topic):
            # 「ケンはラーメン一択」: that person's choice, never the user's stance on the thing
            # (a kind of thing as the topic, 「紅茶はアールグレイ一筋」, stays the user's)
            raw = f"{ja_subject(topic)}_{ja_subject(raw)}"
        meta: dict[str, str] = {"over": _rival(groups["over"])} if groups.get("over") else {}
        if groups.get("was"):
            meta["was"] = _rival(groups["was"])
        for sep in ("よりも", "より"):  # the longer first: 「猫よりも犬派」 is 犬, not も犬
            if sep in raw:
                over, _, raw = raw.rpartition(sep)
                meta["over"] = _rival(over)
                break
        raw = re.sub(r"(?:の方|のほう)$", "", raw)
        raw = _INTENSIFIER_TAIL.sub("", raw) or raw  # 「電話ガチ苦手」 is about 電話
        raw = re.sub(r"[、,]\s*(?:あれ|それ|これ)$", "", raw) or raw  # 「…牛乳、あれがたまらん」
        if name in ("hard", "sickens", "only_cannot") and (_FEELING_TIME.match(raw) or re.search(
                r"(?:日|時|とき|頃|季節|天気|雨|気圧)$", raw)):
            continue  # 「今日はしんどい」: how the day feels
        if name == "camp" and _HABIT_CUE.search(raw) and re.search(
                r"(?:[うくすつぬむぶぐる]|ない)$", raw):
            return None  # 「ご飯のあとは必ず皿を洗う派」: what the speaker always does
        if not ja_subject(raw) or _DEICTIC.match(raw):
            raw = _previous_object(previous) or ""
        if ja_subject(raw):
            return "preference", polarity, raw, meta
    return None


def _previous_object(previous: str | None) -> str | None:
    """What the previous clause was about (「ジャズをよく聴くけど、本当に好き」)."""
    if not previous:
        return None
    text = re.sub(r"^(?:最近|今|昔|前|いつも|毎日)(?:は|も)?", "", _clean(previous))
    match = re.match(r"^(?P<np>[^、,をがは]{1,20}?)(?:ばっかり|ばかり|だけ|を|が|は)", text)
    return match.group("np") if match else None


# What a thing is going to do or become (「駅ができる予定」「夏は暑くなる予定」) is a forecast, not
# the speaker's plan: a topic or subject, then a verb of coming about.
_FORECAST = re.compile(r"(?:が|は)[^、,]*?(?:できる|なる|増える|減る|上がる|下がる)$|くなる$")
_FORECAST_END = re.compile(r"(?:予定|はず|見込み|見通し)(?:です|だ|らしい|みたい)?$")


def forecast(body: str) -> bool:
    """「新しい駅ができる予定」: what a thing will do, said with a plan's ending."""
    end = _FORECAST_END.search(body)
    return end is not None and _FORECAST.search(body[:end.start()]) is not None

# -- decisions and habits ---------------------------------------------------------------------

_DECISIONS: list[tuple[str, str, re.Pattern[str]]] = [
    (name, pol, re.compile(body)) for name, pol, body in [
        ("bare_quit", "dislike",
         r"^(?:仕事を|会社を)?(?P<x>)(?:辞めます|辞めました|辞めた|辞める)(?:!|！)*$"),
        ("wont_use", "dislike",
         r"^(?P<x>.+?)(?:は|を)(?:もう)?(?:使いません|使わない|使用しません|採用しません)"),
        ("decided", "like",
         r"^(?P<x>.+?)(?:ことにした|ことにしました|ことにします|ことにする|ことに決めた|"
         r"ことに決めました|ことになった|ことになりました|って決めた|って決めました|と決めた|"
         r"と決めました|ことにしよう|ことにして$|ことに決めて$|"
         # the humble forms (「手術を受けることにいたしました」) and a resolve kept in the heart
         # (「今回は断ろうと心に決めている」)
         r"ことに(?:いたし|致し)(?:ました|ます)|(?:と|って)(?:心に|固く)決めて(?:いる|います|"
         r"おります|る|ます)$)"),
        ("chose", "like",
         r"^(?P<x>.+?)(?:に|を)(?:決めた|決めました|決定しました|決定した|決まりました|決まった|"
         r"選びました|選んだ|採用しました|採用した|採用します|落ち着いた|落ち着きました)"),
        ("chose", "like", r"^(?P<x>.+?)に(?:しました|します|した|する|しよう|しとく|しておく|"
                          r"しとこう|"
                          r"しときます|しておきます)(?:よ|ね|わ|！|!)*$"),
        ("use", "like",
         r"^(?P<x>.+?)を(?:使い|使う|使用し|使用する|採用し|採用する)(?:ます|ました)|"
         r"^(?P<y>.+?)を(?:使おう|使っていく|使っていきます)"),
        # 「もうベジタリアンじゃない」「もう看護師ではなくなりました」: what the user was, over
        # (a diet, a habit, a standing or a job; 「もう子供じゃない」 says nothing of the sort)
        ("no_longer_am", "dislike",
         rf"^(?:{_SELF}は)?(?:もう|既に|すでに)[、,]?(?P<x>{_ENDABLE_IDENTITY}|{_ENDABLE_JOB})"
         r"(?:じゃ|では)(?:ない|ありません|なくなった|なくなりました|ないです)(?:です|よ|ね)?$"),
        ("no_longer_am", "dislike",
         rf"^(?:{_SELF}は)?(?P<x>{_ENDABLE_IDENTITY}|{_ENDABLE_JOB})(?:じゃ|では)"
         r"(?:なくなった|なくなりました)(?:よ|ね)?$"),
        # 「彼女と別れました」: a partner left (``dedup``: the live fact of having one ends)
        ("stop", "dislike",
         rf"^(?:{_SELF}は)?(?P<x>彼女|彼氏|恋人|パートナー|婚約者|カノジョ|カレシ)と別れ"
         r"(?:た|ました|ちゃった|ちゃいました|てしまった|てしまいました)$"),
        ("stop", "dislike",
         r"^(?P<x>.+?)(?:を|は)?(?:やめました|やめた|やめる|やめます|辞めました|辞めた|辞める|"
         r"止めた|止めました|解約した|解約しました|卒業した|卒業しました|消します|消した|"
         r"やめておく|やめとく|辞めます|断ちする|断ちします|断ち$|を断つ|あきらめます|あきらめた|"
         r"あきらめる|あきらめました|諦めます|諦めた|諦める|諦めました|"
         r"消しました|削除した|削除しました|退会した|退会しました)"),
        # chat: 「アマプラ解約するわ」「あのサーバー抜ける」「バイトリーダーの話、断った」
        # 「フォロー外した」「間食は今日から封印！」「SNSしばらくお休みします」
        ("stop", "dislike",
         r"^(?P<x>[^、,]+?)(?:を|は|も|から)?[、,]?(?:今日から|明日から|もう|しばらく|当分|いったん|"
         r"一旦|全部|ぜんぶ)?(?:解約する|解約します|解約するわ|抜ける|抜けます|抜けた|抜けました|"
         r"脱退する|脱退した|脱退しました|断った|断りました|断ります|断る|外した|外しました|"
         r"封印|封印する|封印します|お休みします|休止します|休止する|"
         r"ブロックした|退部した|退部します|退部する|アンインストールした)"
         r"(?:わ|よ|ね|ことにした|！|!|w|ｗ)*(?:[、,][^、,]*)?$"),
        # 「もう課金しない」「二度とあの店には行かない」: never again
        ("never_again", "dislike",
         r"^(?:もう|二度と)[、,]?(?P<x>[^、,]+?)(?:は|には|に|を|も)?(?:しない|しません|しねえ|"
         r"やらない|やりません|買わない|買いません|行かない|行きません|飲まない|飲みません|"
         r"食べない|食べません|使わない|使いません|頼まない|見ない|見ません|課金しない)"
         r"(?:わ|よ|ぞ|から|って決めた|！|!)*(?:[、,][^、,]*)?$"),
        # 「転職活動はいったん見送ります」: put off (a person seen off takes を: 「母を見送った」)
        ("defer", "dislike",
         r"^(?P<x>[^、,を]+?)(?:は|も)[、,]?(?:いったん|一旦|ひとまず|しばらく|今回は|今回|今年は|"
         r"当面|もう少し)?見送(?:ります|る$|ろう|ることに|りにし|った$|りました|り$|りで)"),
        # 「ピアノ教室は春から週2に増やします」「お酒の量を減らした」: a change the speaker makes
        # (a subject with が is something else changing: 「会社が人を減らした」)
        ("adjust", "like",
         r"^(?P<x>[^、,がは]+?)(?:を|は)(?:[^、,が]{0,12}?(?:に|まで|へ))?(?:増やし|減らし)"
         r"(?:ます|ました|た|ておきます|とく|てみます|てみる)(?:よ|ね|わ)*$|"
         r"^(?P<y>[^、,がは]+?)(?:を|は)(?:[^、,が]{0,12}?(?:に|まで|へ))?"
         r"(?:増やす|減らす|増やそう|減らそう)(?:よ|ね|わ)*$"),
        # 「溶け始めた」「雨が降り始めた」: something began to happen, nobody started it
        ("start", "like",
         r"^(?P<x>.+?)(?<!溶け)(?<!降り)(?<!咲き)(?<!鳴り)(?<!光り)(?<!揺れ)(?<!崩れ)(?<!腫れ)"
         r"(?<!散り)(?<!冷め)(?<!枯れ)(?<!腐り)(?<!壊れ)(?<!荒れ)(?<!痛み)(?<!曇り)"
         r"(?:を|に|が)?(?:始めました|始めた|始めます|始める|始めてみた|始めたところ|"
         r"はじめた|はじめました|はじめます|始まります|始まる|スタートした|スタートします)"),
        # what the speaker dropped and takes up again (「韓国語、また再開します」); a subject
        # with が is something else going on again (「工事が再開した」)
        ("resume", "like",
         r"^(?P<x>[^、,が]+?)(?:を|も)?[、,]?(?:また|再び|ぼちぼち|そろそろ|ようやく|やっと)?"
         r"再開(?:します|しました|した|する$|しよう|することにした)"),
        ("act", "like",
         r"^(?P<x>.+?)(?:を|に)(?:[^、。をに]{0,5}?)(?:予約しました|予約した|買いました|買った|注文しました|"
         r"注文した|申し込みました|申し込んだ|エントリーした|エントリーしました|登録した|"
         r"登録しました|応募した|応募しました|乗り換えました|乗り換えた|変えました|変えた|"
         r"移行します|移行しました|契約した|契約しました|入会した|入会しました|ポチった|"
         r"ポチりました|提出した|提出しました|出した|出しました|迎えた|迎えました|切り替える|"
         r"おさえた|押さえた|おさえました|押さえました|"
         r"切り替えます|切り替えた|切り替えました)"),
        ("secured", "like",
         r"^(?P<x>.+?)(?:を)?(?:おさえた|押さえた|おさえました|押さえました|確保した|確保しました|"
         r"取れた|取れました)(?:よ|わ|！|!)*$"),
        ("life", "like",
         r"^(?P<x>.+?)(?:へ|に)?(?:引っ越|移住|転職|転勤|留学|入学|進学|結婚|独立|起業|入籍)"
         r"(?:します|する$|しました|した$)"),
        ("build_with", "like",
         r"^(?P<x>.+?)で(?:作ります|作る$|書きます|書く$|実装します|開発します|作ることにした)"),
        ("done", "like",
         r"^(?P<x>.+?)[、,]?\s*(?:予約完了|予約済み|申込完了|申し込み完了|購入完了|決定|提出完了|"
         r"手続き完了|申請完了|契約完了)(?:!|！)*(?:[、,].*)?$"),
        ("toward", "like",
         r"^(?P<x>.+?)に向けて(?:準備|トレーニング|練習|勉強)(?:中|してる|しています)"),
        ("intend", "like",
         r"^(?P<x>.+?)(?:つもり|予定(?:です|だ|$)|よう(?:と思|かな)|ようっと|ぞ$|でいきます|"
         r"[おこごそとのぼもろ]う(?:と思|かな)|(?:よう|[こごそとのぼもろ]う)(?:って|と)(?:なった|"
         r"決めた|いう話になった|話になった)|"
         r"でいく$|でいこう|でいきましょう|で行きます|で行く$|ようにします|ようにする$|"
         r"にしましょう|しましょう$)"),
    ]
]
_FUTURE_LEAD = re.compile(
    r"^(?:これからは|これから|(?:今日|今夜|今晩|明日|明後日|今週|来週|今月|来月|今年|来年|新年|"
    r"年明け|春|夏|秋|冬|[0-9]+月|(?:月|火|水|木|金|土|日)曜)(?:から|こそ)(?:は)?|"
    r"(?:月|火|水|木|金|土|日)曜(?:日)?に|"
    r"(?:今年|来年|今月|来月|今週|来週|今週末|来週末)(?:は|こそ)?|明日|明後日|今夜|今晩|"
    r"この(?:夏|冬|春|秋)(?:こそ|は)?|今度|次は|次回は)[、,]?\s*"
)
# How the speaker feels about a coming time (「明日の検査が不安です」「今夜は冷えるなあ」「明日
# 休みや、うれし」): a feeling or a remark, no plan. Not ない (「今年は飲まない」 is one).
_FEELING_END = re.compile(
    r"(?:不安|心配|楽しみ|憂鬱|ゆううつ|緊張|ドキドキ|どきどき|ワクワク|わくわく|うれし|嬉し|"
    r"さみし|寂し|だる|ダル|(?<!な)い)(?:です|だ|や|やな|やわ|ね|よ|な|なあ|わ)*$|"
    r"(?:なあ|なぁ|なー|ねえ|ねぇ|ねー)$")
# How it went after a time word is a report, not a plan (「今週しんどかったね」「今日は雨だった」):
# an adjective's or the copula's past ends no decision.
_PAST_STATE_END = re.compile(r"(?:かった|だった|でした|かったです)$")
# A guess about what will happen is not a plan (「明日雨降るかな」).
_GUESS_END = re.compile(
    r"(?:かな|かなあ|かも|かもね|でしょう|でしょ|だろう|だろうね|はず|そう|そうだ|そうです)$")

_HABIT_CUE = re.compile(
    r"毎朝|毎晩|毎日|毎週|毎月|毎年|毎回|毎食|毎夜|まいあさ|まいにち|まいばん|いつも|必ず|常に|"
    r"普段|ふだん|たいてい|大抵|だいたい|大体|よく|しょっちゅう|ほぼ毎|ほとんど|決して|絶対|"
    r"週に?[一二三四五六七0-9]+回?|週一|週二|週三|月に?[一二三0-9]+(?:回|度)|一日おき|"
    # 「月1で実家に帰ってる」「週イチでジム」: the short form of once a month / week / year
    r"(?:月|週|年)(?:1|一|イチ|いち)(?:で|は|くらい|ぐらい)|月イチ|週イチ|"
    r"年に?[一二三四五六七八九十0-9]+(?:回|度)|"
    r"(?:ふた|[一二三四五六七八九十0-9]+)(?:月|ヶ月|か月|カ月|週間|日)に(?:[一二三0-9]+(?:回|度)|"
    r"いっぺん)|朝イチ|朝いち|朝一(?:で|に|は)|給料日(?:は|には|に)|"
    r"[0-9一二三四五六七八九十]+時(?:半|頃|ごろ)?(?:過ぎ|以降)(?:たら|は|に)|"
    r"^(?:月|火|水|木|金|土|日){2,4}(?:曜)?(?:日)?(?:は|に|も)|る前(?:に|は)|"
    r"(?:電車|バス|行き帰り|移動)(?:の中)?(?:では|中は)|"
    r"よう(?:に)?(?:心がけて|意識して|気をつけて)|主義(?:です|だ)?$|"
    r"(?:1|一)日(?:[0-9一二三]|中)|隔週|習慣|日課|癖|くせ|がち|ことが多い|ようにしている|"
    r"ようにしてる|ようにしています|ことにしている|ことにしてる|ことにしています|ついつい|"
    r"^つい|(?:月|火|水|木|金|土|日)曜(?:日)?(?:の(?:朝|夜|夕方))?(?:は|も)|"
    r"(?:月|火|水|木|金|土|日)曜(?:日)?の(?:朝|夜|夕方)に|"
    r"週末(?:は|に)|休日(?:は|に)|休みの日(?:は|に)|平日(?:は|に)|^朝(?:は|に)|^夜(?:は|に)|"
    r"^昼(?:は|に)|夕方(?:は|に)|寝る前|起きたら|帰ったら|食後|(?:の|した)?(?:あと|後)(?:は|に|で)|"
    r"通勤中|朝食に|夕食後|夕飯は|朝ごはんは|昼ごはんは|ルーティン|お決まり|定番|夜型|朝型|"
    r"まずない|ことはない|以降(?:は|に)?|以前(?:は|に)|たびに|度に|どこでも|いつでも|"
    r"(?:の|る|た)(?:とき|時)(?:は|に)|昼休み|休憩中|帰りに|ように(?:気をつけて|心がけて|意識して)|"
    r"起きてすぐ|起きたらすぐ|帰ったらすぐ|[\u4e00-\u9fff]{2}中(?:は|に)|恒例|"
    r"(?<=[るたうくすつむぶぐ])(?:たび|度)(?:[、,]|ごとに)"
)
# A routine after a recurring moment (「帰ったらまず手洗いうがい」「買い物したらその場で入力
# しちゃう」) or a mood (「イライラしたら掃除する」「ストレス溜まったら散歩に出る」): 〜たら that
# comes back, not the one-off of 「宝くじ当たったら家を買う」.
_ROUTINE = re.compile(
    r"(?:たら|だら)[、,]?\s*(?:まず|すぐ|すぐに|真っ先に|その場で|とりあえず|決まって)|"
    r"(?:イライラ|ムカムカ|モヤモヤ|ムシャクシャ|ストレス|疲れ|落ち込|緊張|眠れな|寂し|さみし|"
    r"不安に|嫌なこと|凹|へこ|煮詰ま|行き詰ま|気が滅入)[^、,]{0,6}?(?:たら|だら)")
_HYPOTHETICAL = re.compile(r"もし|仮に|宝くじ|ジャンボ|一等|生まれ変わ|億円|当たったら|"
                           r"タイムマシン")
_VOLITIONAL_END = re.compile(r"(?:[おこごそとのぼもろよ]う|ましょう|よう)(?:か|ね|よ|な)*$")
_HABIT_ADVERB = re.compile(
    r"いつも|必ず|常に|普段は|普段|ふだん|たいてい|大抵|だいたい|大体|よく|しょっちゅう|ほぼ|"
    r"ほとんど|決して|絶対に|絶対|ついつい|つい|まとめて")
_HABIT_TAIL = re.compile(
    r"(?:のが習慣です|のが習慣|が習慣です|が習慣|のが日課です|のが日課|が日課|のが楽しみ|"
    r"癖がある|くせがある|しがちです|しがち|がちです|がち|ことが多いです|ことが多い|"
    r"ようにしています|ようにしてる|ようにしている|ようにしてます|ないように気をつけてる|"
    r"ように気をつけてる|ことにしています|ことにしてる|ことにしている|てしまう|ちゃう|"
    r"しちゃう|する日|日|のがルーティン|がルーティン|のがお決まり|がお決まり|のが定番|"
    r"ように気をつけてます|ように気をつけています|ように心がけてます|ように心がけています|"
    r"よう心がけてる|よう心がけてます|よう心がけています|ように心がけてる|主義です|主義|"
    r"(?:ってのが|っていうのが|のが|が)恒例(?:行事)?(?:です|だ|なんだ|なんです)?|"
    r"(?<=[うくすつぬむぶぐる])派(?:です|だ|なんです)?)$")
_NEGATIVE_END = re.compile(r"(?:ない|ません|ず|ないように.*|ないこと.*)$")


# Western Japanese says the progressive with おる (「住んどる」「乗っとるんよ」「勤めとった」)
# and being with おる (「金魚が5匹おるんよ」); read as the standard forms the rules know. Only
# after a te-form's last sound, so 「メモとる」「写真とる」 (取る) stay as they are.
_DIALECT_PROGRESSIVE = re.compile(
    r"(?:(?<=[っしいめべれせね])と|(?<=[んい])ど)(る|った|ります|りました|らん)(?![ぁ-ゖ])|"
    r"(?:(?<=[っしいめべれせね])と|(?<=[んい])ど)(る|った)(?=(?:ん|よ|ね|わ|けど|けん|から)+$)")
_STANDARD_TAIL = {"る": "いる", "った": "いた", "ります": "います", "りました": "いました",
                  "らん": "いない"}
_DIALECT_BEING = re.compile(r"(?<=[がも匹人羽頭])おる(?=(?:ん|よ|ね|わ|けど|けん|から)*$)")
# 「二十八歳っす」: the casual です
_CASUAL_DESU = re.compile(r"(?<![安高寒暑熱早遅痛])っす(?=(?:よ|ね|わ)*$)")


def _standard(text: str) -> str:
    """Dialect and casual forms of the progressive, of being and of です, as the standard."""
    def progressive(match: re.Match[str]) -> str:
        te = "て" if match.group(0).startswith("と") else "で"
        return te + _STANDARD_TAIL[match.group(1) or match.group(2)]
    text = _DIALECT_PROGRESSIVE.sub(progressive, text)
    return _CASUAL_DESU.sub("です", _DIALECT_BEING.sub("いる", text))


def _clean(clause: str) -> str:
    text = unicodedata.normalize("NFKC", clause).strip()
    stripped = _QUOTED.sub("", text)
    if stripped.strip(" 、,。.!！?？"):
        text = stripped
    text = text.rstrip("。.!！~〜ー ")
    text = re.sub(r"(?:笑|w+|ｗ+)$", "", text).rstrip("。.!！ ")
    return _LEAD.sub("", _standard(text)).strip(" 、,")


def refused(text: str) -> bool:
    """Questions, requests, wishes and hearsay state nothing about the speaker."""
    if text.endswith(("?", "？")) or _QUESTION_END.search(text):
        return True
    if _SETTING.search(text) or _PROMISE_TO_LISTENER.search(text) or (
            _SOON_VOLITIONAL.search(text) and not _FROM_NOW_ON.search(text)):
        return True
    if _QUESTION_SOFT_END.search(text) and _QUESTION_WORD.search(text):
        return True
    if _ASKING_WORD.search(text) and not _STATEMENT_END.search(text):
        return True
    if _ASKING_END.search(text) or _QUESTION_WORD_END.search(text) or _GUESS_TAIL.search(text):
        return True
    if _DELIBERATION.search(text) or _TOLD.search(_REMARK_END.sub("", text)) or (
            _WONDER_END.search(text) and _QUESTION_WORD.search(text)):
        return True
    if _SPARE_ME.search(text):
        return False  # 「徹夜だけは勘弁してほしい」: a dislike, not a request
    # 「ってよく言うよね」: the endings a remark adds come off before the hearsay ends are read
    return bool(_REQUEST_END.search(text) or _WISH.search(text) or _HEARSAY.search(text)
                or _HEARSAY.search(_REMARK_END.sub("", text)) or _QUOTE_SAID.search(text))


# A roleplay character's profile (「海が大嫌いって設定です」): the story's, not the user's
_SETTING = re.compile(r"(?:って|という|っていう)設定(?:です|だ|で|なので|なんで|ね|よ|にして)?"
                      r"[)）]?$")
# What the speaker will tell the listener (「決まったらちゃんと話すから」「あとで連絡するね」):
# a word for the conversation, no plan
_PROMISE_TO_LISTENER = re.compile(
    r"(?:話す|言う|伝える|連絡する|報告する|知らせる|教える|返事する|返信する)(?:から|ね|よ|わ)+$")
# What the speaker means to do in a moment (「帰ったらすぐお風呂入ろう」「今度お祝いしよう」): no
# lasting decision; 「明日から毎朝走ろう」 is one
_SOON_VOLITIONAL = re.compile(
    r"(?:今度|帰ったら|あとで|後で|この後|このあと|今夜|今日は|寝る前に)"
    r"[^、,]*[ろこそとのもぼごよ]う[!！〜ー]*$")
_FROM_NOW_ON = re.compile(r"から|毎|これから|今後|ずっと")
_ASKED_TOPIC_END = re.compile(r"(?:って|とかって|については|ってさ)$")
_ASKING_START = re.compile(
    r"^(?:何|なに|なん|どれ|どこ|どっち|どちら|どう|どんな|どの|いつ|誰|だれ|なぜ|いくら|"
    r"いくつ|おすすめ|オススメ)")


def asked_about(clause: str, following: str) -> bool:
    """Whether a clause cut off before a question is what that question asks about
    (「関節リウマチでも楽しめる趣味って、何がありますか」「繰上げ返済と老後資金の積み立て、
    どちらを優先すべきだと思う？」): a topic ending (って), or a question opening with its
    question word after a clause no rule reads as a statement. 「納豆が苦手で、どうしたら
    食べられるかな」 and 「猫を飼い始めたんだけど、名前どうしよう」 keep their first clause."""
    text = unicodedata.normalize("NFKC", clause).strip()
    if not text or text[-1] in "。.!！?？":
        return False
    after = unicodedata.normalize("NFKC", following).strip()
    if _SETTING.search(_clean(following)):
        return True  # 「うちの子は港町育ちで、海が大嫌いって設定です」: all of it is the story's
    if not (after.endswith("?") or refused(_clean(following))):
        return False
    return bool(_ASKED_TOPIC_END.search(text) or (
        _ASKING_START.match(after) and japanese(clause) is None))


# A person as the topic (は) of a te-form clause is the topic of the clause after it too
# (「妹は家を売って、沖縄に移ると決めた」: the sister decided); a subject with が is often a
# reason (「母が倒れて、実家に戻ることにした」: the speaker decided), and a clause naming
# the speaker (「…て、私は残ることにした」) is theirs.
_TE_FORM_END = re.compile(r"[てで]$")
_OWN_TOPIC = re.compile(rf"^[^、,]{{0,8}}?{_SELF}(?:は|が|も|って)")


def _topic_carried(previous: str | None, raw: str) -> str | None:
    """The person a te-form clause before this one was about, when this one names nobody:
    its topic (「妹は家を売って、」「うちの旦那、…ハマってて、」), the one whose taste it states
    (「美咲は韓国ドラマが好きすぎて、毎晩見とる」), or its が-subject when what follows comes
    toward the speaker (``_TOWARD_SPEAKER``). Any other が-subject is not carried: a te-form
    with one is often the reason for what the speaker does (「母が入院して、実家に戻ることにし
    た」)."""
    if not previous or _OWN_TOPIC.match(raw):
        return None
    before = _clean(previous)
    if not _TE_FORM_END.search(before):
        return None
    topic = _OTHER_TOPIC.match(before)
    if topic is None:
        double = _DOUBLE_SUBJECT.match(before)
        return _other_person(before) if double and _CAN_BE_NAMED.fullmatch(
            double.group("a")) else None
    if topic.group(0).endswith(("は", "、")) or (  # 「うちの旦那、…にハマってて、」 is a topic
            topic.group(0).endswith("が") and _TOWARD_SPEAKER.search(raw)):
        return topic.group("r") or topic.group("p")
    return None


# What comes toward the speaker (「父がスマホデビューして、毎日スタンプだけ送ってくる」「母が
# …で、電話するたびにあらすじを聞かされる」): the person before does it, so a が-subject is
# carried to it (「母が入院して、実家に戻ることにした」 is still the speaker's)
_TOWARD_SPEAKER = re.compile(
    r"(?:て|で)(?:くる|くれる|きます|くれます|きた|くれた|きました|くれました)(?:んだ|んです|の|"
    r"よ|ね|わ|し)*[。!！…]*$|(?:かされ|させられ|され)(?:る|た|ます|ました)(?:んだ|の|よ|ね|し)*"
    r"[。!！…]*$")


def _other_person(body: str) -> str | None:
    topic = _OTHER_TOPIC.match(body)
    if topic:
        return topic.group("r") or topic.group("p") or topic.group("k")
    possessor = _OTHER_POSSESSOR.match(body)
    if possessor and len(possessor.group("r")) <= 10 and not _NOMINALIZED.search(
            possessor.group("r")):
        return possessor.group("r")
    double = _DOUBLE_SUBJECT.match(body)
    if double and not _TIME_TOPIC.match(double.group("a")) and not (
            double.group("camp") and not _CAN_BE_NAMED.fullmatch(double.group("a"))):
        return double.group("a")
    kana = _KANA_NAME_DOING.match(body) or _KANA_NAME_ACTING.match(body)
    if kana and not re.fullmatch(_KANA_NOT_A_NAME, kana.group("n")):
        return kana.group("n")
    return None


# 「ホラー映画？絶対ムリ」「納豆？大好き！」: a thing named alone, then a verdict on it. Cut
# apart, the verdict alone was keyed on what it says (``preference:絶対``: every later
# 「X？絶対ムリ」 merged into it) and the thing was lost; ``with_verdicts`` keeps them one
# clause, ``japanese`` reads it.
_VERDICT_DISLIKE = (r"(?:無理|ムリ|むり|パス|ナシ|なし|ないわ|勘弁(?:して)?|嫌い|きらい|キライ|"
                    r"苦手|いらない|いらん|遠慮(?:します|しとく|しておきます)|結構です|ノーサンキュー)")
_VERDICT_LIKE = r"(?:大好き|大好物|好き|すき|スキ|最高|アリ|あり|神|優勝|正義|大歓迎)"
_VERDICT = re.compile(
    rf"^(?:(?:絶対|ぜったい|まじ|マジ|ほんと|本当に|普通に|ちょっと|断然|もう)(?:に)?)?"
    rf"(?:{_VERDICT_DISLIKE}|{_VERDICT_LIKE})"
    r"(?:です|だ|だわ|かな|かも|すぎる|過ぎる|[!！。〜ーｗw笑…])*$")
_VERDICT_IS_LIKE = re.compile(
    rf"^(?:(?:絶対|ぜったい|まじ|マジ|ほんと|本当に|普通に|ちょっと|断然|もう)(?:に)?)?"
    rf"{_VERDICT_LIKE}")
# a thing named alone: no question word, no question ending, no verb or adjective asked
# (「行く？」), a few characters
_TOPIC = re.compile(
    r"^(?!.*(?:何|なに|なん|どう|いつ|どこ|誰|だれ|なぜ|どれ|どっち|どちら|いかが|"
    r"か[?？]|の[?？]|[うくすつぬむぶぐるたいだ][?？]|です|ます))[^?？。、!！]{1,20}[?？]+$")


def with_verdicts(parts: list[str]) -> list[str]:
    """The clauses of a message with each verdict kept on the thing named before it
    (「ホラー映画？」「絶対ムリ」 -> 「ホラー映画？絶対ムリ」)."""
    out: list[str] = []
    for part in parts:
        folded = unicodedata.normalize("NFKC", part).strip()
        if out and _TOPIC.match(unicodedata.normalize("NFKC", out[-1]).strip()) and (
                _VERDICT.match(folded)):
            out[-1] = f"{out[-1]}{part}"
        else:
            out.append(part)
    return out


def _topic_verdict(raw: str) -> Found | None:
    """A thing, then a verdict on it (``with_verdicts``): the user's preference."""
    topic, mark, verdict = raw.partition("?")
    if not mark or not _TOPIC.match(topic + "?") or not _VERDICT.match(verdict.lstrip("?")):
        return None
    polarity = "like" if _VERDICT_IS_LIKE.match(verdict.lstrip("?")) else "dislike"
    # 「辛いの好き？大好き！」: the question echoed is on the thing
    thing = re.sub(r"(?:は|が|って|とか)?(?:好き|すき|嫌い|きらい|苦手)$", "", topic.strip())
    return ("preference", polarity, thing, {}) if thing else None


def japanese(clause: str, previous: str | None = None) -> Found | None:
    """What one Japanese clause states about the user, if anything (see the module doc)."""
    raw = unicodedata.normalize("NFKC", clause).strip()
    verdict = _topic_verdict(raw)
    if verdict:
        return verdict
    body = _clean(clause)
    if not body:
        return None
    named = re.match(r"^(?P<v>.+?)(?:って|と)呼んで", body)
    if named:
        return "fact", None, "名前", {}
    if refused(body) or refused(raw.rstrip("。.! ")) or _PEOPLE_IN_GENERAL.search(body):
        return None
    other = _other_person(body) or _topic_carried(previous, raw)
    if other:
        # the facts' rules name the person first (「姉は…に住んでいます」): the time word
        # and the speaker's possessive in front of them go (「最近、私の姉は…」)
        return _fact(_PERSON_LEAD.sub("", body), other)
    named = _named(body)
    if named and _other_person(named):
        relation = _other_person(named)
        found = _with_name(_fact(named, relation), relation, _name_of(body) or "")
        # 「友達のゆみが来春大阪に引っ越すことになった」「パートナーのジュンは高校で化学を教えて
        # る」: her plan, his job, at most a fact about them, never the user's slot; a stance
        # may still be the user's (「母のおかゆが最強」: a kana word after の is no name)
        return found or _preference(body, previous)
    topic = _NAME_TOPIC.match(body) or _KANJI_NAME_TOPIC.match(body)
    if topic and not _TIME_TOPIC.match(topic.group("n")) and not re.fullmatch(
            rf"{_SELF}|{_NOT_A_NAME}|{_ATTRIBUTE}|{_OWNED_WORDS}", topic.group("n")):
        found = _fact(body, None)
        if found and found[2] in _PERSONAL:
            return found[0], found[1], f"{topic.group('n')}の{found[2]}", found[3]
    owned = _owned_attribute(body, previous)
    if owned:
        return owned
    past = _PAST_STATE.search(body)
    if past:
        return _past(body, past, previous)
    found = _fact(body, None) or _preference(body, previous) or _decision(body) or _habit(body)
    if found and found[0] == "preference" and found[1] == "like" and _DENIED_TAIL.search(body):
        return found[0], "dislike", found[2], found[3]
    if found and _bare_verb(found[2], body):
        # 「（生クリームは苦手で、）いつも残しちゃう」「来月から始めます」 were keyed 残 and 始:
        # every such habit or plan was one key. The thing named before, or all it says.
        thing = _previous_object(previous)
        return found[0], found[1], f"{thing}_{found[2]}" if thing else body, found[3]
    return found


# Verbs that say what is done with a thing, not the activity (走る is running: 「よく走って
# います」 keys 走 as 「昔はよく走っていた」 does)
_BARE_VERB_STEMS = frozenset("始残終続止決使買取出変回送置外")


def _bare_verb(subject: str, body: str) -> bool:
    """Whether a key subject is such a verb's stem alone (「残」 of 残しちゃう, 「始」 of
    始めます)."""
    stem = ja_subject(subject)
    return stem in _BARE_VERB_STEMS and re.search(
        re.escape(stem) + r"[しめけわきっんまらりれろえべみぎびう]", body) is not None


# An attribute without its owner (「名前はポチ」「誕生日は12月なんだ」) right after a clause
# about a pet or a person (「犬を飼い始めたんだ。」「母の話なんだけど、」): theirs, never the
# user's name or birthday.
_OWNED_WORDS = r"(?:名前|誕生日|年齢|血液型|身長|体重|歳|好物|性格)"
_BARE_ATTRIBUTE = re.compile(rf"^{_OWNED_WORDS}(?:は|って)")
_PET_WORD = re.compile(PET)
_REL_WORD = re.compile(REL)


def _owned_attribute(body: str, previous: str | None) -> Found | None:
    if not previous or not _BARE_ATTRIBUTE.match(body):
        return None
    before = _clean(previous) or ""
    owner = _other_person(before) or _PET_WORD.search(before) or _REL_WORD.search(before)
    if owner is None:
        return None
    found = _fact(body, None)
    if found is None or found[0] != "fact":
        return None
    who = owner if isinstance(owner, str) else owner.group(0)
    return "fact", None, f"{who}の{found[2]}", {}


# The stance the clause began with, then denied or put in the past by its tail:
# 「コーヒーが大好き、なんてことはない」「コーヒーが大好きだったのは昔の話」 (the rules read the
# head, 大好き).
_DENIED_TAIL = re.compile(
    r"(?:なんてことは|なんて事は|なんてことも)(?:ない|ありません|ないです|ございません)|"
    r"(?:だった|でした)(?:のは|のも)(?:もう)?(?:昔|過去|前)(?:の話)?(?:です|だ|だよ|ですね)?[。.!！]*$")


# A state the speaker had then, not now: a past time as the topic and a past ending. Either
# "used to" (昔は, 以前は, 前は, かつては: then set against now, ``ended``) or a period of life
# (「子供の頃は」「学生の時は」「当時は」). Never 「昔から」「前から」: since then, and still.
_PERIOD_LEAD = r"(?:[^、,]{1,8}(?:の頃|のころ|の時|のとき)|昔|当時|以前)(?:は|って)?"
_PAST_STATE = re.compile(rf"^(?P<then>(?:(?P<ended>{JA_USED_TO_LEAD})|{_PERIOD_LEAD})"
                         r"(?!から)[、,]?).*(?:だった|でした|かった|ました|てた|でた|ていた|でいた)"
                         r"(?:な|なあ|けど|よ|ね)*$")
# The past progressive of a habit and its present (「走ってた」 -> 「走ってる」,
# 「吸っていました」 -> 「吸っています」): the same register, so the key is the present one's.
_PAST_PROGRESSIVE = re.compile(r"([てで])(?:(い)た|た|(い)?ました)(?:な|なあ|なー|よ|ね|わ)*$")


# A job said with a verb of doing (「前は八百屋やってた」「会社員をしてた」): a past job, no habit
_DOING_JOB = re.compile(r"^(?P<j>[^、,をがにでは]+?)を?(?:して|やって)(?:る|います|ます|いる)$")


def _job(subject: str) -> bool:
    doing = _DOING_JOB.match(subject)
    return doing is not None and _JOB_SUFFIX.search(doing.group("j")) is not None


def _as_present(text: str) -> str | None:
    """「毎朝走ってた」 -> 「毎朝走ってる」, or None when the clause ends in no past progressive."""
    match = _PAST_PROGRESSIVE.search(text)
    if match is None:
        return None
    te, plain_i, polite_i = match.groups()
    ending = f"{polite_i or ''}ます" if "まし" in match.group(0) else f"{plain_i or ''}る"
    return f"{text[:match.start()]}{te}{ending}"


def _past(body: str, past: re.Match[str], previous: str | None) -> Found | None:
    """What a clause about then says about now. After a "used to" lead a liking or a habit
    that ended: the same kind and key as its present form with the other polarity, so it
    retires the live one (English "I used to run every morning" does the same). A past
    home, job or pet stays a fact of its own (``_PAST_SLOT``), and a past dislike says
    nothing of now (「前は嫌いだったけど今は好き」: the later clause says it). After a period
    of life (「子供の頃はよく走ってた」) only a fact: what was true then, which a grown-up's
    habit of today does not contradict."""
    rest = body[past.end("then"):]
    if not past.group("ended") or _other_person(rest):
        return _fact(body, None)  # 「前は兄が毎朝起こしてくれてた」: what someone else did
    liking = _preference(rest, previous)
    if liking and liking[1] == "like":
        return liking[0], "dislike", liking[2], liking[3]
    fact = _fact(body, None)
    if fact or liking:
        return fact
    present = _as_present(rest)
    # the lead makes a past progressive habitual (「以前はタバコを吸っていました」: used to smoke)
    habit = _habit(present, habitual=True) if present else None
    if habit and habit[1] == "like" and not _job(habit[2]):
        return habit[0], "dislike", habit[2], habit[3]
    return None


def _decision(body: str) -> Found | None:
    if _weekly_progressive(body):
        return None  # 「金曜にジムに行っています」: each week, a habit
    future = _FUTURE_LEAD.match(body)
    rest = body[future.end():] if future else body
    for name, polarity, pattern in _DECISIONS:
        match = pattern.match(rest)
        if not match:
            continue
        x = match.group("x") if match.group("x") is not None else match.groupdict().get("y")
        if name == "decided" and re.search(r"ことにして(?:る|いる|います)", rest):
            return None  # an ongoing rule: a habit
        if name == "intend" and re.search(r"ようにして(?:る|いる|います|ます)", rest):
            return None
        if name == "start" and re.search(r"から始まり?(?:ます|る)$", rest) and _HABIT_CUE.search(
                rest):
            return None  # 「朝はヨガから始まる」: how a recurring time starts, a habit
        if future and re.match(r"(?:月|火|水|木|金|土|日)曜(?:日)?に", future.group(0)) and (
                re.search(r"(?:た|だ)$", rest)):
            return None  # 「土曜日に映画見た」: a report of that day
        if name == "intend" and _FORECAST.search(x):
            return None
        negative = polarity == "dislike" or bool(_NEGATIVE_END.search(x)) or bool(
            re.search(r"(?:を|は)?(?:やめる|辞める|やめ|控える)$", x))
        x = re.sub(r"(?:を|は)?(?:やめる|辞める|控える|始める|はじめる)$", "", x)
        x = re.sub(r"(?:する|します|の)$", "", x)
        meta: dict[str, str] = {}
        if "から" in x and name in ("act", "chose"):
            over, _, x = x.partition("から")
            meta["over"] = _rival(over)
        if name == "bare_quit" or (name == "no_longer_am"
                                   and not re.fullmatch(_ENDABLE_IDENTITY, x)):
            x = "仕事"
        if ja_subject(x):
            return "decision", "dislike" if negative else "like", x, meta
    # 「これからは」「今日から」 start a new rule even with a habit word in it
    # (「これからは毎晩10時に寝る」); a bare time word (「明日」) does not
    starting = future is not None and re.search(r"から(?:は)?[、,]?\s*$", future.group(0))
    one_day = future is not None and re.match(r"(?:月|火|水|木|金|土|日)曜(?:日)?に",
                                              future.group(0))
    past = _PAST_STATE_END.search(_REMARK_END.sub("", rest)) or (
        one_day and re.search(r"(?:た|だ)$", rest))
    if future and ja_subject(rest) and (starting or not _HABIT_CUE.search(rest)) and (
            not _GUESS_END.search(rest)) and not past and not _FEELING_END.search(rest):
        return "decision", "like", rest, {}
    return None


# Not the speaker's current habit: a thing or place pointed at (「この店いつも混んでる」), something
# that exists (「毎週月曜に会議がある」), or a plain past (「よく頑張った」「昔は毎日走ってた」).
_NOT_OWN_HABIT = re.compile(r"^(?:この|あの|その)(?!頃|ごろ|前|間|日|時|後|あと)[^、,]{1,8}?"
                            r"(?:は|が|も|、|って)?|"
                            r"(?:が|も)(?:ある|あります)$|(?<!て)(?:た|だ)$|(?:てた|でた)$")


# 「ストレスたまるとカラオケ行く」「忙しいとついお昼を抜いちゃう」: whenever the condition holds
# (〜と), a present verb follows. Not 〜たら: 「宝くじが当たったらボートを買う」 is one
# hypothetical, said the same way as a habit; not 〜とか (「住むとか」: a list).
_WHENEVER = re.compile(r"(?:[うくすつぬむぶぐる]|い)と(?!か|は|も|いう|いっ)[、,]?")
_PRESENT_END = re.compile(
    r"(?:る|う|く|す|つ|む|ぶ|ぐ|ます|ちゃう|じゃう|てる|でる|ている|ています|てます|ない)"
    r"(?:んだ|んです|んだよね|んよ|よ|ね|よね|わ)*$")
# 「6時には目が覚めちゃう」: a clock time with は (every day by then), not a thing's hours
# (「お店は9時に閉まる」)
_CLOCK = re.compile(r"[0-9一二三四五六七八九十]+時(?:半)?(?:には|までには)")


# A weekday (or several: 「火曜と木曜に」「月・水・金に」) or a time of the week, maybe with a
# time of day, and a present progressive (「金曜にジムに行っています」「今は土曜の朝にバイト
# してる」): what the speaker does on that day each week. A progressive, not a plain verb
# (「金曜に友達と会う」 is a plan) nor a past (「金曜にジム行った」) nor 〜てくる (one errand);
# a day of one week (今週の, 来週の, 今度の) never leads.
_WEEKDAY = r"(?:[月火水木金土日]曜(?:日)?|土日|平日|週末)"
_WEEKDAYS = (rf"(?:{_WEEKDAY}|[月火水木金土日](?:曜(?:日)?)?(?:(?:と|・|、)[月火水木金土日]"
             r"(?:曜(?:日)?)?)+)")
_NOW_LEAD = r"(?:(?:今|いま|最近|現在|この頃|ここ最近)は?[、,]?\s*)"
_WEEKLY_TIME = re.compile(
    rf"^{_NOW_LEAD}?{_WEEKDAYS}(?:の(?:朝|夜|晩|夕方|昼|午前中?|午後|早朝|深夜))?(?:は|に|も|には)"
    r"[、,]?")
_PROGRESSIVE_END = re.compile(
    r"[てで](?:い)?(?:る|ます)(?:んだ|んです|んよ|よ|ね|よね|わ)*$")


# A progressive of the mind is about one coming day (「週末に髪切ろうと思ってる」「金曜の
# ライブを楽しみにしてる」): intending, looking forward, waiting, weighing
_MIND_PROGRESSIVE = re.compile(r"(?:思っ|考え|楽しみにし|期待し|待っ|迷っ|悩ん|予定し|計画し)"
                               r"[てで](?:い)?(?:る|ます)")


def _weekly_progressive(body: str) -> bool:
    """「今は金曜にジムに行っています」: a weekly day and an ongoing present."""
    return (_WEEKLY_TIME.match(body) is not None and _PROGRESSIVE_END.search(body) is not None
            and _MIND_PROGRESSIVE.search(body) is None)


# One day or one coming time (「今日は一日中雨で」「来月引っ越すと」): what happens once, never
# a habit, whatever cue word follows.
_ONE_TIME = re.compile(r"^(?:今日|きょう|昨日|きのう|今朝|昨夜|昨晩|今夜|今晩|明日|あした|"
                       r"さっき|先ほど|この前|この間)(?:は|も|、|,)|"
                       r"来月|来週|来年|明後日|今度の|今週末")


def _recurring(body: str) -> bool:
    # 「早めに休むとしよう」: a volitional end is one intention, not whenever
    return (_FUTURE_LEAD.match(body) is None and _PRESENT_END.search(body) is not None
            and _VOLITIONAL_END.search(_REMARK_END.sub("", body)) is None
            and _ONE_TIME.search(body) is None
            and (_WHENEVER.search(body) is not None or _CLOCK.search(body) is not None))


def _habit(body: str, habitual: bool = False) -> Found | None:
    """A habit the clause states; ``habitual``: its form says so without a cue word."""
    remark = _REMARK_END.sub("", body)
    routine = _ROUTINE.search(body) is not None and not _HYPOTHETICAL.search(body) and (
        not _VOLITIONAL_END.search(remark))
    if routine:
        habitual = True
    if _weekly_progressive(body):
        habitual = True
        body = re.sub(rf"^{_NOW_LEAD}", "", body)  # 「今は」 is no part of the habit
    if _ONE_TIME.match(body) and not habitual:
        return None  # 「今日は一日中雨で」「昨日もよく寝た」: that day
    if not (habitual or _HABIT_CUE.search(body) or _recurring(body)) or (
            _NOT_HABIT_END.search(remark) and not _HABIT_TAIL.search(body) and not routine) or (
            _NOT_OWN_HABIT.search(remark) and not _HABIT_TAIL.search(body)):
        return None
    x = _HABIT_TAIL.sub("", body)
    negative = bool(re.search(r"決して|ないよう|ないこと|ません$|ない$|しない|飲まない|食べない|"
                              r"見ない", x))
    # 「前からずっと毎朝走ってる」: since when is no part of the habit (a filler first)
    x = JA_FILLER.sub("", _HABIT_ADVERB.sub("", x).strip(" 、,"))
    x = re.sub(r"^(?:毎朝|まいあさ)(?:は|に)?", "朝は", x)  # 毎朝X and 朝はいつもX agree
    x = re.sub(r"^(?:毎晩|まいばん|毎夜)(?:は|に)?", "夜は", x)
    x = re.sub(r"^(?:毎日|まいにち)", "", x).strip(" 、,")
    x = JA_FILLER.sub("", x)
    if not x or _DEICTIC.match(x) or not ja_subject(x):
        return None
    return "pattern", "dislike" if negative else "like", x, {}


# People in general (「…って言う人もいる」「…な人が多い」): a report about others.
_PEOPLE_IN_GENERAL = re.compile(
    r"(?:(?<![\u4e00-\u9fff])人|人たち|人達|みんな|誰か)(?:も|が|は)?(?:いる|多い|少ない)|"
    r"^(?:みんな|皆|みな)(?!さん)|"
    r"^(?:日本人|外国人|若者|若い人|若い子|男の人|女の人|男性|女性|男子|女子|大人|社会人|"
    r"[^、,]{1,6}好き)(?:って|は|が|も)")


# How the speaker feels right now (「まぶたが重い…限界」「午後ずっと頭ぼーっとしてて何も手に
# つかん」): small talk, not a lasting preference or habit, for the learned stage
_TRANSIENT_STATE = re.compile(
    r"(?:眠い|ねむい|眠たい|ねむたい|だるい|ダルい|疲れた|つかれた|限界|しんどい|お腹(?:が)?"
    r"(?:すいた|空いた|減った|いっぱい)|腹減った|はらへった|寒い|さむい|暑い|あつい|"
    r"頭(?:が)?(?:痛い|いたい|重い)|まぶたが重い|ぼーっと(?:する|してる|してて)|"
    r"手につか(?:ん|ない)|死にそう|泣きそう|眠すぎ|ねむすぎ)"
    r"(?:[…。、!！〜ーｗw笑.]|です|だ|わ|なあ|な|よ|ね|すぎ|過ぎ|かも)*$")


def open_statement(clause: str) -> str | None:
    """The cleaned clause when no rule refuses it and it is not about someone else, else
    None. What the second, embedding stage may classify; how the speaker feels right now
    (``_TRANSIENT_STATE``) is small talk."""
    body = _clean(clause)
    named = _named(body) if body else None
    if (not body or refused(body) or _other_person(body) or _DEICTIC.match(body)
            or _TRANSIENT_STATE.search(body)
            or _PEOPLE_IN_GENERAL.search(body) or _PAST_STATE.search(body) or forecast(body)
            or (named and _other_person(named))):
        return None
    return body


# Who is not one of the user's people: anyone (人, みんな), a pointed-at person (あの人).
_ANYONE = frozenset({"人", "みんな", "皆", "彼ら", "チーム", "あの人", "その人"})


def open_person(clause: str) -> str | None:
    """The cleaned clause when its topic or subject is one of the user's people or pets
    (「妻は病院で働いてます」「うちの犬はコーギー」) and no rule refuses it, else None. The
    embedding stage may read it as a fact about them and as nothing else."""
    body = _clean(clause)
    if (not body or refused(body) or _DEICTIC.match(body) or body.startswith(("あの", "その"))
            or _PEOPLE_IN_GENERAL.search(body) or _PAST_STATE.search(body) or forecast(body)):
        return None
    topic = _OTHER_TOPIC.match(_named(body) or body)
    if topic is None or (topic.group("r") or topic.group("p") or topic.group("k")) in _ANYONE:
        return None
    return body


def carried_person(clause: str, previous: str) -> str | None:
    """The cleaned clause when the te-form clause before it had another person as its topic
    (「妹は家を売って、」 -> 「沖縄に移ると決めた」) and no rule refuses it, else None: like
    ``open_person``, the embedding stage may read it as a fact about them only."""
    body = _clean(clause)
    raw = unicodedata.normalize("NFKC", clause).strip()
    if not body or refused(body) or _topic_carried(previous, raw) is None:
        return None
    return body


# What a clause the stage classified may say before its subject, or all it says: a decision
# made (「もう決めました、車を売ります」 was keyed ``決めました_車_売``), assent, a verdict
# alone. Keyed on them, every 「決めた。」 was one memory, every 「絶対ムリ」 one key.
_OPEN_LEAD = re.compile(
    r"^(?:(?:よし|よっしゃ|うん|はい|じゃあ|やっぱ|やっぱり|もう|ついに|とうとう)[、,!！]?)*"
    r"(?:決めた|決めました|決めたよ|決めたわ|決定|決まり|決まった|決まりました)[。、,!！]*")
_NAMES_NOTHING = re.compile(
    rf"^(?:(?:よし|よっしゃ|うん|はい|じゃあ|やっぱ|やっぱり|もう|絶対|まじ|マジ)[、,!！]?)*"
    rf"(?:そうする|そうします|やる|やります|やるわ|それで|それな|これで|{_VERDICT_DISLIKE}|"
    rf"{_VERDICT_LIKE})?[。!！ｗw笑]*$")


def open_subject(kind: str, body: str) -> str:
    """A key subject for a clause the embedding stage classified: the clause itself, its
    lead (``_OPEN_LEAD``), habit adverbs and endings off (the key rule does the rest); ""
    when it names nothing on its own (``_NAMES_NOTHING``: it stores nothing)."""
    body = _OPEN_LEAD.sub("", body) or body
    if _NAMES_NOTHING.match(body) or _OPEN_LEAD.fullmatch(body):
        return ""
    return _HABIT_ADVERB.sub("", _HABIT_TAIL.sub("", body)) or body
