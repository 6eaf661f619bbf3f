from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine.analyzer import (
    analyze,
    cjk_terms,
    is_cjk,
    normalize,
    query_words,
    script,
    segment_terms,
)


def test_latin_words_are_case_folded_and_stopwords_dropped():
    assert analyze("The Quick brown FOX, and the dog!") == ["quick", "brown", "fox", "dog"]


def test_nfkc_folds_full_width_and_half_width_forms():
    assert analyze("ＴｙｐｅＳｃｒｉｐｔ １２３") == ["typescript", "123"]
    assert analyze("ｶﾀｶﾅ") == ["カタ", "タカ", "カナ", "#カタカナ"]


def test_cjk_runs_become_overlapping_bigrams():
    assert analyze("東京都") == ["東京", "京都", "#東京都"]
    assert cjk_terms("すし") == ["すし"]


def test_single_cjk_character_is_a_unigram():
    assert analyze("猫 と 犬") == ["猫", "#猫", "と", "犬", "#犬"]


def test_mixed_scripts_split_at_script_boundaries():
    assert analyze("Pythonは好きではありません") == [
        "python", "は好", "好き", "きで", "では", "はあ", "あり", "りま", "ませ", "せん", "#好"
    ]


def test_punctuation_and_emoji_separate_tokens():
    assert analyze("寿司、ラーメン🍜ok") == [
        "寿司", "#寿司", "ラー", "ーメ", "メン", "#ラーメン", "ok"]


def test_german_eszett_case_folds():
    assert normalize("STRASSE") == normalize("straße")


def test_is_cjk_boundaries():
    assert is_cjk("あ") and is_cjk("ア") and is_cjk("漢") and is_cjk("々")
    assert not is_cjk("a") and not is_cjk("1") and not is_cjk("。")


# Written out here, not read from the module: a range changed there must fail here.
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
              (0x31F0, 0x31FF), (0x3005, 0x3007), (0x20000, 0x2FA1F))


def test_is_cjk_is_exactly_its_ranges():
    inside = lambda code: any(low <= code <= high for low, high in CJK_RANGES)  # noqa: E731
    edges = {c + d for low, high in CJK_RANGES for c in (low, high) for d in (-1, 0, 1)}
    for code in sorted(edges | set(range(0x3000, 0x3100)) | {0x41, 0x5F, 0xFF21, 0xFF66}):
        assert is_cjk(chr(code)) == inside(code), hex(code)
    assert analyze("\U00020000\U0002fa1f") == ["\U00020000\U0002fa1f",
                                                "#\U00020000\U0002fa1f"]


def test_empty_and_symbol_only_text_has_no_terms():
    assert analyze("") == [] and analyze("!!! ...") == []


def test_script_of_a_character():
    assert [script(c) for c in "あア漢ー・々a1"] == [
        "hiragana", "katakana", "han", "katakana", "katakana", "han", "other", "other"]


def test_query_words_chain_same_script_bigrams_and_drop_junctions():
    assert query_words(analyze("中性子の質量は原子質量単位でいくつか")) == [
        ("中性", "性子"), ("質量",), ("原子", "子質", "質量", "量単", "単位")]
    assert query_words(analyze("MySQLのデータベース")) == [
        ("mysql",), ("デー", "ータ", "タベ", "ベー", "ース")]
    assert query_words(analyze("猫 と 犬")) == [("猫",), ("と",), ("犬",)]  # lone characters
    assert query_words(analyze("蓮の花の色は")) == []  # grammar only


def test_query_words_are_distinct_and_a_dropped_term_ends_a_chain():
    assert query_words(["tea", "tea", "東京", "京都"]) == [("tea",), ("東京", "京都")]
    assert query_words(["原子", "質量"]) == [("原子",), ("質量",)]  # not overlapping


def test_each_kanji_and_katakana_segment_is_also_one_marked_term():
    assert analyze("中性子の質量はデータベース") == [
        "中性", "性子", "子の", "の質", "質量", "量は", "はデ", "デー", "ータ", "タベ", "ベー",
        "ース", "#中性子", "#質量", "#データベース"]
    assert segment_terms("車のかぎ") == ["#車"]  # hiragana is grammar: no segment term
    assert segment_terms("") == []


def test_query_words_skip_segment_terms():
    assert query_words(analyze("東京都")) == [("東京", "京都")]


def _analyze_by_characters(text: str) -> list[str]:
    """The analyzer as it was written first, one Python step per character: the reference
    the one-expression tokenizer must equal on every text."""
    from omoide.engine.analyzer import ENGLISH_STOPWORDS, _folded

    terms: list[str] = []
    word: list[str] = []
    run: list[str] = []

    def flush_word() -> None:
        if word:
            token = "".join(word)
            if token not in ENGLISH_STOPWORDS:
                terms.append(_folded(token))
            word.clear()

    def flush_run() -> None:
        if run:
            joined = "".join(run)
            terms.extend(cjk_terms(joined))
            terms.extend(segment_terms(joined))
            run.clear()

    for char in normalize(text):
        if is_cjk(char):
            flush_word()
            run.append(char)
        elif char.isalnum():
            flush_run()
            word.append(char)
        else:
            flush_word()
            flush_run()
    flush_word()
    flush_run()
    return terms


# Characters near every boundary the analyzer draws: the CJK ranges' ends, underscore,
# digits of other scripts, combining marks, full-width and half-width forms, surrogates'
# neighbours, astral ideographs.
_EDGES = ("_ aZ09é\u00b2\u0660\u0301\u3004\u3005\u3007\u3008\u303f\u3040\u309f\u30a0\u30fb"
          "\u30fc\u30ff\u3100\u31ef\u31f0\u31ff\u3400\u4dbf\u4dc0\u4e00\u9fff\ua000\uf8ff"
          "\uf900\ufaff\ufb00\uff21\uff66\uff9e\U0001f600\U0001ffff\U00020000\U0002fa1f"
          "\U0002fa20\U00030000、。！？ー・")


@given(st.text(st.sampled_from(_EDGES) | st.characters(), max_size=40))
@settings(max_examples=1500)
def test_the_tokenizer_equals_the_loop_over_characters(text):
    assert analyze(text) == _analyze_by_characters(text)
