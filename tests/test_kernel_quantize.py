"""The kernel's int8 copy of a row (``quantize`` in kernel/topk.c: per-row scale
max|v| / 127, q = rint(v * 127 / max|v|)) is the same bytes in the SIMD build (four lanes at
a time) and the scalar build (one float at a time), and equals numpy's float32 arithmetic of
that rule, for any row: ties at .5 rounded to even, a zero row, a dimension that is not a
multiple of the SIMD width. The int8 scan's candidates and its score statistics (hybrid
fusion) depend on these bytes, so both builds must agree exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import node_kernel

NODE_SERVER = """
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
const builds = {};
for (const [name, file] of [["wasm-simd", "topk.wasm"], ["wasm", "topk-scalar.wasm"]]) {
  const bytes = readFileSync(new URL(file, %(kernel_dir)s));
  builds[name] = (await WebAssembly.instantiate(bytes, {})).instance.exports;
}
for await (const line of createInterface({ input: process.stdin })) {
  const { dim, rows } = JSON.parse(line);
  const n = rows.length / dim;
  const out = {};
  for (const [name, x] of Object.entries(builds)) {
    x.vk_init(dim);
    new Float32Array(x.memory.buffer, x.vk_append_ptr(n), n * dim).set(rows);
    x.vk_commit(n);
    const stride = (dim + 15) & ~15;
    out[name] = {
      q: Array.from(new Int8Array(x.memory.buffer, x.vk_int8_ptr(), n * stride)),
      scales: Array.from(new Float32Array(x.memory.buffer, x.vk_scales_ptr(), n)),
    };
  }
  process.stdout.write(JSON.stringify(out) + "\\n");
}
"""


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    """ask(dim, rows): the int8 rows and scales each build makes of ``rows``."""
    for ask in node_kernel.serve(tmp_path_factory, "quantize", NODE_SERVER):
        def quantize(dim: int, rows: np.ndarray, ask=ask) -> dict:
            return ask({"dim": dim, "rows": rows.ravel().tolist()})

        yield quantize


def reference(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rule in float32, padded to a multiple of 16 bytes with zeros."""
    n, dim = rows.shape
    peak = np.abs(rows).max(axis=1)
    peak[peak == 0] = np.float32(1.0)
    inv = np.float32(127.0) / peak
    q = np.clip(np.rint(rows * inv[:, None]), -127, 127).astype(np.int8)
    padded = np.zeros((n, (dim + 15) // 16 * 16), dtype=np.int8)
    padded[:, :dim] = q
    return padded.ravel(), (peak / np.float32(127.0)).astype(np.float32)


def check(ask, rows: np.ndarray) -> None:
    rows = rows.astype(np.float32)
    got = ask(rows.shape[1], rows)
    want_q, want_scales = reference(rows)
    for build in ("wasm-simd", "wasm"):
        assert got[build]["q"] == want_q.tolist(), build
        assert np.array_equal(np.array(got[build]["scales"], dtype=np.float32), want_scales)


def test_ties_round_to_even_and_a_zero_row_keeps_zeros(quantized):
    # peak 127: the scale is 1, so every product is the value itself (exact .5 ties)
    ties = [127.0, 63.5, -63.5, 0.5, -0.5, 1.5, 2.5, -2.5, 126.5, -127.0] + [0.25] * 10
    rows = np.array([ties, [0.0] * 20, [-3.0] + [0.0] * 19], dtype=np.float32)
    check(quantized, rows)
    q = quantized(20, rows)["wasm-simd"]["q"]
    assert q[:10] == [127, 64, -64, 0, 0, 2, 2, -2, 126, -127]
    assert q[32:52] == [0] * 20  # a zero row: scale 1, zeros


floats = st.floats(-4.0, 4.0, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 3, 4, 15, 16, 17, 31, 33, 384]), st.data())
def test_both_builds_give_the_rules_bytes(quantized, dim, data):
    n = data.draw(st.integers(1, 5))
    rows = np.array(data.draw(st.lists(st.lists(floats, min_size=dim, max_size=dim),
                                       min_size=n, max_size=n)), dtype=np.float32)
    check(quantized, rows)
