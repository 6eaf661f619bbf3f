"""English suffix folding (``engine/stemmer.py``, Porter step 1) and its use by ``analyze``:
a question meets the statement that answers it across an inflection."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.stemmer import stem
from omoide.kernels.pure_kernel import PureKernel
from tests.test_engine_embedder import HashingEmbedder

# Porter's (1980) examples for step 1 (conflated: after step 5a), and a few of a conversation's
# inflections
PORTER_STEP_1 = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
    "feed": "feed", "agreed": "agree", "plastered": "plaster", "bled": "bled",
    "motoring": "motor", "sing": "sing", "conflated": "conflat", "troubled": "trouble",
    "sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall", "hissing": "hiss",
    "fizzed": "fizz", "failing": "fail", "filing": "file", "happy": "happi", "sky": "sky",
    "painting": "paint", "painted": "paint", "paints": "paint", "researching": "research",
    "volunteering": "volunteer", "volunteers": "volunteer", "loved": "love", "love": "love",
    # step 5a for long stems: the final e goes where -ed / -ing took it
    "receive": "receiv", "received": "receiv", "promote": "promot", "promoting": "promot",
    "create": "create", "created": "create", "house": "house", "houses": "house",
}


def test_porters_step_1_examples():
    assert {word: stem(word) for word in PORTER_STEP_1} == PORTER_STEP_1


def test_short_words_digits_and_other_scripts_are_kept():
    for word in ("is", "as", "2023", "mp3s", "café", "naïve", "東京"):
        assert stem(word) == word


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=0, max_size=12))
def test_a_stem_is_a_nonempty_prefix_up_to_one_changed_letter(word):
    folded = stem(word)
    assert folded or not word
    # it strips suffixes, puts back an e (hop(e), fil(e)) or turns y into i
    assert folded[:-1] == word[: len(folded) - 1] or not folded
    assert len(folded) <= len(word)


def test_question_words_are_never_folded_nor_folded_into():
    # "does" would fold to "doe", "his" to "hi", "used" and "using" to the pronoun "us"
    assert analyze("Does his dog like using what he used") == [
        "does", "his", "dog", "like", "using", "what", "he", "used"]


def test_analyze_folds_words_after_the_stopword_test():
    assert analyze("What did Melanie paint? We love painting; The studies") == [
        "what", "did", "melani", "paint", "we", "love", "paint", "studi"]
    assert analyze("東京タワー abc123 Ｐａｉｎｔｅｄ") == [
        "東京", "京タ", "タワ", "ワー", "#東京", "#タワー", "abc123", "paint"]


def test_recall_meets_an_inflected_answer():
    engine = MemoryEngine(HashingEmbedder(32), kernel=PureKernel)
    engine.remember_many("mel", [
        "Melanie: We love painting together, lately nature scenes",
        "Melanie: The weather was fine at the lake",
        "Caroline: I went to a support group yesterday",
    ])
    hits = engine.recall("mel", "What did Melanie paint recently?", mode="fulltext",
                         min_relevance=0, touch=False)
    assert hits[0].memory.text.startswith("Melanie: We love painting")
