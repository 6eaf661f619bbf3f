"""WasmKernel in Pyodide behaves like the reference kernels under CPython.

The same scenario (``run_probe``: add in batches, overwrite, remove, top-k with and without an
allowed set, scores, vectors, export, errors) runs in the engine worker against WasmKernel
(rpc ``kernel_probe``) and here against PureKernel (exact) and NumpyKernel (int8, the
reference of the browser's int8 + rerank algorithm).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from omoide.browser.wasm_kernel import run_probe
from omoide.kernels.pure_kernel import PureKernel

from .conftest import engine_call, wait_ready

TOLERANCE = 1e-5


def assert_same(got: Any, want: Any, path: str = "") -> None:
    """Equal structure and values; floats within TOLERANCE."""
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for key in want:
            assert_same(got[key], want[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, float) or isinstance(got, float):
        assert abs(got - want) <= TOLERANCE, (path, got, want)
    else:
        assert got == want, path


@pytest.fixture
def engine(launch, app_url, tmp_path):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    return page


def test_wasm_kernel_matches_reference_kernels(engine):
    info = engine_call(engine, "kernel_info")
    assert info == {"implementation": "wasm-simd", "simd": True}

    spec = {"dimension": 48, "rows": 600, "seed": 7, "queries": 6, "k": 10}
    exact = engine_call(engine, "kernel_probe", {"mode": "exact", **spec})
    assert exact.pop("implementation") == "wasm-simd"
    reference = run_probe(PureKernel, **spec)
    assert exact["len"] == reference["len"] > 0
    assert exact["vector_missing"] == exact["scores_missing"] == "KeyError"
    assert_same(exact, reference)

    numpy_kernel = pytest.importorskip("omoide.kernels.numpy_kernel")
    int8 = engine_call(engine, "kernel_probe", {"mode": "int8", **spec})
    int8.pop("implementation")
    # same algorithm: same candidates, exact scores, and moments of the int8 scores
    assert_same(int8, run_probe(partial(numpy_kernel.NumpyKernel, mode="int8"), **spec))


def test_wasm_kernel_with_a_realistic_dimension(engine):
    spec = {"dimension": 384, "rows": 1500, "seed": 3, "queries": 4, "k": 25}
    got = engine_call(engine, "kernel_probe", {"mode": "exact", **spec})
    got.pop("implementation")
    assert_same(got, run_probe(PureKernel, **spec))
