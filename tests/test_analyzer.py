from omoide.engine.analyzer import analyze, cjk_terms, is_cjk, normalize


def test_latin_words_are_case_folded_and_stopwords_dropped():
    assert analyze("The Quick brown FOX, and the dog!") == ["quick", "brown", "fox", "dog"]


def test_nfkc_folds_full_width_and_half_width_forms():
    assert analyze("ＴｙｐｅＳｃｒｉｐｔ １２３") == ["typescript", "123"]
    assert analyze("ｶﾀｶﾅ") == ["カタ", "タカ", "カナ"]


def test_cjk_runs_become_overlapping_bigrams():
    assert analyze("東京都") == ["東京", "京都"]
    assert cjk_terms("すし") == ["すし"]


def test_single_cjk_character_is_a_unigram():
    assert analyze("猫 と 犬") == ["猫", "と", "犬"]


def test_mixed_scripts_split_at_script_boundaries():
    assert analyze("Pythonは好きではありません") == [
        "python", "は好", "好き", "きで", "では", "はあ", "あり", "りま", "ませ", "せん"
    ]


def test_punctuation_and_emoji_separate_tokens():
    assert analyze("寿司、ラーメン🍜ok") == ["寿司", "ラー", "ーメ", "メン", "ok"]


def test_german_eszett_case_folds():
    assert normalize("STRASSE") == normalize("straße")


def test_is_cjk_boundaries():
    assert is_cjk("あ") and is_cjk("ア") and is_cjk("漢") and is_cjk("々")
    assert not is_cjk("a") and not is_cjk("1") and not is_cjk("。")


def test_empty_and_symbol_only_text_has_no_terms():
    assert analyze("") == [] and analyze("!!! ...") == []
