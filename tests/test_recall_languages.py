"""Recall asks the vector ranker only about a query the model reads (embeddings/scripts.py):
a query mostly in scripts an English-only model was not trained on is answered in hybrid
mode by the full-text ranker alone; every other query, and every multilingual model, keeps
the fusion."""

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.embeddings.registry import E5_SMALL, MINILM, reads_query
from omoide.embeddings.scripts import reads
from omoide.engine import MemoryEngine
from tests.test_engine_embedder import HashingEmbedder

JAPANESE = ["毎朝コーヒーを飲むのが習慣です", "京都の古いお寺を見に行った", "猫を二匹飼っています",
            "ラーメンは味噌が一番好き", "週末は図書館で本を読む", "来月から新しい仕事を始める",
            "友達と海に行く約束をした", "冬は温泉に行きたい"]
ENGLISH = ["I drink coffee every morning", "We visited an old temple in Kyoto",
           "I have two cats at home", "Miso ramen is my favourite", "I read at the library",
           "I start a new job next month", "We promised to go to the sea", "Hot springs in winter"]


class EnglishOnly(HashingEmbedder):
    """A stand-in with the registry's English-only model id (the vectors stay hashing
    n-grams: what matters is which model recall believes it asks)."""

    def __init__(self) -> None:
        super().__init__(64)
        self.model_id = MINILM.id
        self.stamp = f"{self.model_id}@{self.dtype}#64"


def engine(embedder) -> MemoryEngine:
    e = MemoryEngine(embedder)
    e.remember_many("aoi", [{"text": t} for t in JAPANESE + ENGLISH])
    return e


def ranking(hits) -> list[tuple[str, float]]:
    return [(h.memory.id, h.score) for h in hits]


def test_a_model_reads_its_own_scripts_only() -> None:
    assert not reads(["en"], "稲尾はどこのチーム")
    assert reads(["en"], "Where did Inao play?")
    assert reads(["ja", "en"], "稲尾はどこのチーム")
    assert reads(["en"], "ｆｕｌｌ ｗｉｄｔｈ")  # NFKC: Latin
    assert not reads(["en"], "ｶﾀｶﾅ")  # NFKC: katakana
    assert reads(["en"], "I love 寿司")  # mostly Latin letters
    assert reads(["en"], "2024-05-01 ?!")  # no letters: nothing to refuse
    assert reads(["xx"], "稲尾はどこのチーム")  # a language without a table entry


def test_the_registry_knows_which_model_reads_what() -> None:
    assert not reads_query(MINILM.id, "毎朝コーヒーを飲む")
    assert reads_query(MINILM.id, "coffee every morning")
    assert reads_query(E5_SMALL.id, "毎朝コーヒーを飲む")
    assert reads_query(E5_SMALL.id, "สวัสดีครับ")  # multilingual: beyond its named languages
    assert reads_query("someone/unknown-model", "毎朝コーヒーを飲む")


def test_hybrid_answers_a_query_the_model_cannot_read_from_full_text_alone() -> None:
    e = engine(EnglishOnly())
    query = "コーヒーを飲む習慣"
    hybrid = e.recall("aoi", query, min_relevance=0, touch=False)
    fulltext = e.recall("aoi", query, mode="fulltext", min_relevance=0, touch=False)
    assert hybrid and ranking(hybrid) == ranking(fulltext)
    assert all(h.vector_cosine is None for h in hybrid)
    assert [h.relevance for h in hybrid] == [h.relevance for h in fulltext]


def test_a_query_the_model_reads_keeps_the_fusion() -> None:
    e = engine(EnglishOnly())
    hits = e.recall("aoi", "coffee every morning", min_relevance=0, touch=False)
    assert hits and all(h.vector_cosine is not None for h in hits)
    # vector mode asks the model whatever the language: the caller chose it
    vector = e.recall("aoi", "コーヒーを飲む習慣", mode="vector", min_relevance=0, touch=False)
    assert vector and all(h.vector_cosine is not None for h in vector)


def test_a_multilingual_model_fuses_both_rankers_for_japanese() -> None:
    embedder = HashingEmbedder(64)
    embedder.model_id = E5_SMALL.id
    embedder.stamp = f"{embedder.model_id}@{embedder.dtype}#64"
    e = engine(embedder)
    hits = e.recall("aoi", "コーヒーを飲む習慣", min_relevance=0, touch=False)
    assert hits and all(h.vector_cosine is not None for h in hits)


KANA = st.text(st.characters(min_codepoint=0x3041, max_codepoint=0x30FA), min_size=2,
               max_size=12)
SHARED = engine(EnglishOnly())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["コーヒー", "京都", "猫", "本", "仕事", "海", "温泉"]),
                min_size=1, max_size=3), KANA)
def test_hybrid_equals_full_text_for_any_japanese_query(words: list[str], kana: str) -> None:
    query = "".join(words) + kana
    hybrid = SHARED.recall("aoi", query, min_relevance=0, touch=False)
    fulltext = SHARED.recall("aoi", query, mode="fulltext", min_relevance=0, touch=False)
    assert ranking(hybrid) == ranking(fulltext)
