"""An independent numpy forward pass of the BERT encoder, used to verify the ONNX files.

It shares nothing with the ONNX graph but the weights: one sentence at a time (no padding, no
mask), float64 arithmetic, HF Linear layout. If the graph builder or the quantizer got anything
wrong, the pooled embeddings disagree.
"""

from __future__ import annotations

import numpy as np


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not a
    # dependency; the error is far below what the cosine thresholds can see.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return s * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def encode(tensors: dict[str, np.ndarray], config: dict, ids: list[int]) -> np.ndarray:
    """Last hidden state [len(ids), H] for one unpadded sequence (token type 0)."""
    H = int(config["hidden_size"])
    NH = int(config["num_attention_heads"])
    hd = H // NH
    eps = float(config["layer_norm_eps"])
    W = lambda n: tensors[n].astype(np.float64)  # noqa: E731
    L = len(ids)
    # Index before converting: the e5 word table is 250k x 384.
    x = tensors["embeddings.word_embeddings.weight"][ids].astype(np.float64)
    x = x + W("embeddings.position_embeddings.weight")[:L]
    x = x + W("embeddings.token_type_embeddings.weight")[0]
    x = _layer_norm(x, W("embeddings.LayerNorm.weight"), W("embeddings.LayerNorm.bias"), eps)

    def lin(h: np.ndarray, p: str) -> np.ndarray:
        return h @ W(p + ".weight").T + W(p + ".bias")

    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"
        q = lin(x, p + ".attention.self.query").reshape(L, NH, hd).transpose(1, 0, 2)
        k = lin(x, p + ".attention.self.key").reshape(L, NH, hd).transpose(1, 0, 2)
        v = lin(x, p + ".attention.self.value").reshape(L, NH, hd).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(L, H)
        x = _layer_norm(
            x + lin(ctx, p + ".attention.output.dense"),
            W(p + ".attention.output.LayerNorm.weight"),
            W(p + ".attention.output.LayerNorm.bias"),
            eps,
        )
        h = lin(x, p + ".intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / np.sqrt(2.0)))
        x = _layer_norm(
            x + lin(h, p + ".output.dense"),
            W(p + ".output.LayerNorm.weight"),
            W(p + ".output.LayerNorm.bias"),
            eps,
        )
    return x


def sentence_embedding(tensors: dict[str, np.ndarray], config: dict, ids: list[int]) -> np.ndarray:
    """Mean pooling over all tokens (no padding here) + L2 normalisation."""
    v = encode(tensors, config, ids).mean(0)
    return v / np.linalg.norm(v)
