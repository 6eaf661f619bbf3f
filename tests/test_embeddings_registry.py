"""Registry (the one source of truth) and Matryoshka slicing."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.embeddings import registry
from omoide.embeddings.matryoshka import slice_embeddings, truncate_renormalize
from omoide.errors import OmoideError


def test_default_is_multilingual_e5_small_q8():
    assert registry.DEFAULT_MODEL_ID == "omoide/multilingual-e5-small"
    assert registry.DEFAULT_DTYPE == "q8"
    assert registry.get_model(registry.DEFAULT_MODEL_ID).multilingual


def test_models_describe_what_the_build_produces():
    e5 = registry.get_model("omoide/multilingual-e5-small")
    minilm = registry.get_model("omoide/all-MiniLM-L6-v2")
    assert (e5.query_prefix, e5.passage_prefix) == ("query: ", "passage: ")
    assert (minilm.query_prefix, minilm.passage_prefix) == ("", "")
    assert (e5.max_tokens, minilm.max_tokens) == (512, 256)
    for m in (e5, minilm):
        assert m.dimension == 384 and m.dtypes == ("fp32", "q8") and m.matryoshka_dims == ()
    assert "ja" in e5.languages and minilm.languages == ("en",)
    assert (e5.license, minilm.license) == ("MIT", "Apache-2.0")


def test_stamp_names_model_dtype_and_dimension():
    e5 = registry.get_model(registry.DEFAULT_MODEL_ID)
    assert e5.stamp("q8") == "omoide/multilingual-e5-small@q8#384"
    assert e5.stamp("fp32") != e5.stamp("q8")


def test_unknown_model_and_dtype_are_clear_errors():
    with pytest.raises(OmoideError) as e:
        registry.get_model("nope/model")
    assert e.value.code == "UNKNOWN_MODEL" and "omoide/multilingual-e5-small" in str(e.value)
    with pytest.raises(OmoideError) as e:
        registry.check_dtype(registry.MINILM, "q4")
    assert e.value.code == "INVALID_ARGUMENT"


def test_json_export_roundtrips_and_takes_sizes_from_the_manifest():
    manifest = {
        "models": {"omoide/all-MiniLM-L6-v2": {"dtype_bytes": {"fp32": 123, "q8": 45}}},
    }
    data = json.loads(registry.registry_json(manifest))
    assert data["default"] == {"model": "omoide/multilingual-e5-small", "dtype": "q8"}
    by_id = {m["id"]: m for m in data["models"]}
    assert set(by_id) == set(registry.MODELS)
    assert by_id["omoide/all-MiniLM-L6-v2"]["sizes"] == {"fp32": 123, "q8": 45}
    assert by_id["omoide/multilingual-e5-small"]["sizes"] == {}
    assert by_id["omoide/multilingual-e5-small"]["onnx_files"]["q8"] == (
        "onnx/model_quantized.onnx"
    )
    assert json.loads(registry.registry_json())["models"][0]["sizes"] == {}


# ----------------------------------------------------------------------------- Matryoshka

MATRYOSHKA = replace(registry.E5_SMALL, id="test/matryoshka", matryoshka_dims=(256, 128, 64))


def _unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def test_slicing_keeps_the_prefix_direction_and_renormalizes():
    v = _unit([float(i % 7 - 3) + 0.5 for i in range(384)])
    (out,) = slice_embeddings(MATRYOSHKA, [v], 128)
    assert len(out) == 128
    assert math.isclose(sum(x * x for x in out), 1.0, rel_tol=1e-12)
    scale = out[0] / v[0]
    assert all(math.isclose(a, b * scale, rel_tol=1e-9) for a, b in zip(out, v[:128], strict=True))


def test_full_dimension_is_allowed_for_any_model():
    v = _unit([1.0] * 384)
    assert slice_embeddings(registry.E5_SMALL, [v], 384) == [pytest.approx(v)]


def test_unsupported_dimension_is_refused_with_the_supported_list():
    with pytest.raises(OmoideError) as e:
        slice_embeddings(registry.E5_SMALL, [[1.0] * 384], 128)
    assert e.value.code == "UNSUPPORTED_DIMENSION"
    assert "not a Matryoshka model" in str(e.value)
    with pytest.raises(OmoideError) as e:
        slice_embeddings(MATRYOSHKA, [[1.0] * 384], 100)
    assert "384, 256, 128, 64" in str(e.value)


def test_short_rows_and_zero_rows():
    with pytest.raises(OmoideError) as e:
        truncate_renormalize([[1.0, 2.0]], 3)
    assert e.value.code == "DIMENSION_MISMATCH"
    assert truncate_renormalize([[0.0] * 8], 4) == [[0.0] * 4]


def test_numpy_rows_give_the_same_result_as_lists():
    np = pytest.importorskip("numpy")
    rows = np.random.default_rng(0).normal(size=(5, 384)).astype(np.float32)
    got = slice_embeddings(MATRYOSHKA, rows, 64)
    assert got.shape == (5, 64)
    want = slice_embeddings(MATRYOSHKA, rows.tolist(), 64)
    assert np.allclose(got, np.asarray(want), atol=1e-6)


@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=384, max_size=384),
    st.sampled_from([64, 128, 256, 384]),
)
def test_sliced_vectors_are_unit_or_zero(v, dim):
    (out,) = slice_embeddings(MATRYOSHKA, [v], dim)
    n = sum(x * x for x in out)
    assert len(out) == dim
    assert math.isclose(n, 1.0, rel_tol=1e-9) or (n == 0.0 and not any(v[:dim]))


def test_protocol_module_imports_without_numpy():
    # Pyodide has no numpy: the pure-Python modules must not import it.
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import omoide.embeddings, omoide.embeddings.cache, omoide.embeddings.remote\n"
        "import omoide.embeddings.matryoshka, omoide.embeddings.auto\n"
        "from omoide.embeddings.auto import choose_embedder\n"
        "try:\n    choose_embedder(env={})\nexcept Exception as e:\n    print(e.code, e)\n"
    )
    from omoide.embeddings import onnx_provider

    root = onnx_provider.REPO_ROOT
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root / "py")},
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("NO_EMBEDDER") and "numpy" in res.stdout
