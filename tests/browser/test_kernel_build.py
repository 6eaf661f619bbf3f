"""The kernel build stage: incremental, both variants valid, a clear error without clang/lld."""

from __future__ import annotations

import pytest

from buildtools import kernel


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "OUT", tmp_path / "dist" / "kernel")
    monkeypatch.setattr(kernel, "CACHE", tmp_path / "cache")
    return tmp_path


def test_builds_both_variants_then_skips_until_flags_change(isolated, monkeypatch):
    logs: list[str] = []
    built = kernel.build_kernel(logs.append)
    assert set(built) == {"topk.wasm", "topk-scalar.wasm"}
    simd = (kernel.OUT / "topk.wasm").read_bytes()
    scalar = (kernel.OUT / "topk-scalar.wasm").read_bytes()
    assert simd.startswith(kernel.WASM_MAGIC) and scalar.startswith(kernel.WASM_MAGIC)
    assert simd != scalar
    assert b"vk_search" in simd and b"vk_append_ptr" in scalar  # exported by name

    logs.clear()
    assert kernel.build_kernel(logs.append) == built
    assert logs == ["kernel: unchanged"]

    monkeypatch.setitem(kernel.VARIANTS, "topk-scalar.wasm", ["-DOMOIDE_TEST_FLAG=1"])
    logs.clear()
    kernel.build_kernel(logs.append)
    assert any(line.startswith("kernel: built topk-scalar.wasm") for line in logs)

    (kernel.OUT / "topk.wasm").unlink()  # a missing output is rebuilt too
    logs.clear()
    kernel.build_kernel(logs.append)
    assert (kernel.OUT / "topk.wasm").read_bytes() == simd


@pytest.mark.parametrize("missing", ["clang", "wasm-ld"])
def test_missing_toolchain_fails_with_the_install_command(isolated, monkeypatch, missing):
    real_which = kernel.shutil.which
    monkeypatch.setattr(kernel.shutil, "which",
                        lambda name: None if name == missing else real_which(name))
    with pytest.raises(SystemExit) as failure:
        kernel.build_kernel(lambda _line: None)
    message = str(failure.value)
    assert missing in message and "apt-get install clang lld" in message
    assert not (kernel.OUT / "topk.wasm").exists()
