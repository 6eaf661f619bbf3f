import random
import struct

import numpy as np
import pytest

from omoide.kernels import PureKernel, VectorKernel, default_kernel
from omoide.kernels.numpy_kernel import NumpyKernel


def unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    rows = rng.standard_normal((n, d)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def clustered(rng: np.random.Generator, n: int, d: int, clusters: int = 20) -> np.ndarray:
    """Realistic embedding geometry: points around a few centres, not uniform noise."""
    centres = unit_rows(rng, clusters, d)
    rows = centres[rng.integers(0, clusters, n)] + 0.35 * unit_rows(rng, n, d)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


KERNELS = [PureKernel, NumpyKernel, lambda d: NumpyKernel(d, mode="int8")]


@pytest.mark.parametrize("factory", KERNELS)
def test_satisfies_protocol(factory):
    assert isinstance(factory(8), VectorKernel)


def test_default_kernel_is_numpy_under_cpython():
    assert isinstance(default_kernel()(4), NumpyKernel)


def test_exact_kernels_agree_after_adds_and_removes():
    rng = np.random.default_rng(3)
    rows = unit_rows(rng, 300, 24)
    ids = [f"m{i}" for i in range(300)]
    pure, fast = PureKernel(24), NumpyKernel(24)
    for kernel in (pure, fast):
        kernel.add(ids, rows)
        kernel.remove(ids[::7] + ["never-there"])
        kernel.add(["m7"], -rows[8:9])  # re-add a removed id with another vector
    assert sorted(pure.ids()) == sorted(fast.ids())
    for q in unit_rows(rng, 10, 24):
        a, b = pure.top_k(q, 15), fast.top_k(q, 15)
        assert a.ids == b.ids
        assert a.scores == pytest.approx(b.scores, abs=1e-5)
        assert (a.mean, a.std, a.count) == pytest.approx((b.mean, b.std, b.count), abs=1e-5)
        assert pure.scores(q, a.ids) == pytest.approx(b.scores, abs=1e-5)
    assert pure.vector("m7") == pytest.approx(fast.vector("m7"))


def test_moments_are_those_of_all_eligible_rows():
    rng = np.random.default_rng(4)
    rows = unit_rows(rng, 50, 8)
    kernel = NumpyKernel(8)
    kernel.add([str(i) for i in range(50)], rows)
    q = rows[0]
    allowed = [str(i) for i in range(0, 50, 2)]
    result = kernel.top_k(q, 3, allowed)
    all_scores = rows[::2] @ q
    assert result.count == 25
    assert result.mean == pytest.approx(float(all_scores.mean()), abs=1e-6)
    assert result.std == pytest.approx(float(all_scores.std()), abs=1e-6)
    assert set(result.ids) <= set(allowed)


@pytest.mark.parametrize("factory", KERNELS)
def test_allowed_filter_and_small_k(factory):
    kernel = factory(3)
    kernel.add(["a", "b", "c"], [[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0]])
    assert kernel.top_k([1, 0, 0], 1).ids == ["a"]
    assert kernel.top_k([1, 0, 0], 5, allowed=["b", "c", "zz"]).ids == ["c", "b"]
    assert kernel.top_k([1, 0, 0], 5, allowed=[]).ids == []
    assert len(kernel) == 3 and "a" in kernel and "zz" not in kernel


def test_int8_prefilter_recall_against_exact():
    rng = np.random.default_rng(5)
    n, d, k = 20_000, 64, 10
    rows = clustered(rng, n, d)
    ids = [f"m{i}" for i in range(n)]
    exact, int8 = NumpyKernel(d), NumpyKernel(d, mode="int8")
    exact.add(ids, rows)
    int8.add(ids, rows)
    queries = rows[rng.integers(0, n, 50)] + 0.2 * unit_rows(rng, 50, d)
    found = 0
    for q in queries:
        q = q / np.linalg.norm(q)
        truth, approx = exact.top_k(q, k), int8.top_k(q, k)
        found += len(set(truth.ids) & set(approx.ids))
        # reranked scores are exact cosines, not quantized ones
        assert approx.scores == pytest.approx(exact.scores(q, approx.ids), abs=1e-6)
    assert found / (50 * k) >= 0.99


def test_export_is_little_endian_float32_in_id_order():
    for factory in (PureKernel, NumpyKernel):
        kernel = factory(2)
        kernel.add(["x", "y"], [[0.5, -1.0], [0.25, 2.0]])
        kernel.remove(["x"])
        kernel.add(["z"], [[1.0, 0.0]])
        ids, blob = kernel.export_float32()
        values = struct.unpack(f"<{len(ids) * 2}f", blob)
        rows = {i: list(values[2 * p : 2 * p + 2]) for p, i in enumerate(ids)}
        assert rows == {"y": [0.25, 2.0], "z": [1.0, 0.0]}


@pytest.mark.parametrize("factory", KERNELS)
def test_wrong_dimension_is_rejected(factory):
    kernel = factory(4)
    with pytest.raises(ValueError):
        kernel.add(["a"], [[1.0, 0.0]])
    kernel.add(["a"], [[1.0, 0, 0, 0]])
    with pytest.raises(ValueError):
        kernel.top_k([1.0], 1)


def test_numpy_kernel_grows_and_swap_removes_consistently():
    rng = random.Random(6)
    kernel = NumpyKernel(4)
    live: dict[str, list[float]] = {}
    for step in range(400):
        if live and rng.random() < 0.4:
            victim = rng.choice(sorted(live))
            kernel.remove([victim])
            del live[victim]
        else:
            v = [rng.uniform(-1, 1) for _ in range(4)]
            kernel.add([f"r{step}"], [v])
            live[f"r{step}"] = v
    assert sorted(kernel.ids()) == sorted(live)
    for row_id, v in live.items():
        assert kernel.vector(row_id) == pytest.approx(v, abs=1e-6)


@pytest.mark.parametrize("factory", KERNELS)
def test_identical_rows_score_the_same_wherever_they_sit(factory):
    # numpy's matrix-vector product summed rows in blocks of four and the rest otherwise:
    # the same vector scored a float32 step apart by its slot, so ties were not ties
    rng = np.random.default_rng(9)
    row, q = unit_rows(rng, 2, 33)
    kernel = factory(33)
    ids = [f"m{i}" for i in range(7)]
    kernel.add(ids, [row] * 7)
    top = kernel.top_k(q, 7)
    assert len(set(top.scores)) == 1
    assert set(kernel.scores(q, ids[::-1])) == set(top.scores)
    assert set(kernel.top_k(q, 3, ids[2:5]).scores) == set(top.scores)


def test_pure_moments_do_not_depend_on_the_order_of_allowed():
    # recall passes a set (kinds, the time span), whose order changes with each process's
    # string hashes: the sums' rounding made the fused scores differ from run to run
    rng = np.random.default_rng(11)
    ids = [f"m{i}" for i in range(200)]
    kernel = PureKernel(16)
    kernel.add(ids, unit_rows(rng, 200, 16))
    q = unit_rows(rng, 1, 16)[0]
    forward, backward = kernel.top_k(q, 5, ids), kernel.top_k(q, 5, ids[::-1])
    assert (forward.mean, forward.std) == (backward.mean, backward.std)
