"""Verification of a built model folder before it is published.

ONNX Runtime (batched, padded: the path the providers take) against the independent numpy
reference (one unpadded sentence at a time, float64), both mean-pooled and L2-normalised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import reference

# A fixed set: short and long, punctuation, numbers, mixed scripts. Japanese has no spaces, so
# it exercises the tokenizers differently (WordPiece [UNK]s for MiniLM, Unigram for e5).
SENTENCES_EN = [
    "The cat sat quietly on the warm windowsill.",
    "How much protein should an adult eat per day?",
    "I promised Aiko that we would visit the lighthouse again next summer.",
    "Quarterly revenue rose 12% to $4.2 billion, beating analysts' estimates.",
    "She hates loud restaurants but loves small jazz bars.",
    "Remember: the password hint is the name of my first dog, Biscuit.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "We argued about whether pineapple belongs on pizza; neither of us gave in.",
    "Tomorrow's train to Kyoto leaves at 7:45 from platform 3.",
    "ok",
]
SENTENCES_JA = [
    "猫は暖かい窓辺で静かに座っていた。",
    "大人は一日にどれくらいのタンパク質を摂るべきですか？",
    "来年の夏にまた灯台を訪れるとアイコに約束した。",
    "四半期の売上高は12％増の42億ドルとなった。",
    "彼女はうるさいレストランが嫌いだが、小さなジャズバーは大好きだ。",
    "パスワードのヒントは最初に飼った犬の名前、ビスケットです。",
    "光合成は光エネルギーをブドウ糖の化学エネルギーに変える。",
    "パイナップルはピザに合うかどうかで口論になった。",
    "明日の京都行きの電車は3番線から7時45分に出発します。",
    "わたしは東京に住んでいます",
]
FP32_MIN = 0.999
Q8_MIN = 0.98


class VerificationError(RuntimeError):
    """The converted model disagrees with the reference; nothing is published."""


def ort_embed(onnx_path: Path, encodings: list[list[int]]) -> np.ndarray:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    n = max(len(e) for e in encodings)
    ids = np.zeros((len(encodings), n), np.int64)
    mask = np.zeros_like(ids)
    for i, e in enumerate(encodings):
        ids[i, : len(e)] = e
        mask[i, : len(e)] = 1
    (hidden,) = sess.run(
        ["last_hidden_state"],
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
    )
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(1) / m.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def verify_model(
    model_dir: Path, tensors: dict[str, np.ndarray], config: dict, max_length: int
) -> dict[str, dict[str, float]]:
    """Return cosines per dtype and language; raise VerificationError below the thresholds."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length)
    sentences = SENTENCES_EN + SENTENCES_JA
    encodings = [e.ids for e in tok.encode_batch(sentences)]
    ref = np.stack([reference.sentence_embedding(tensors, config, ids) for ids in encodings])
    n_en = len(SENTENCES_EN)
    results: dict[str, dict[str, float]] = {}
    failures = []
    for dtype, fname, threshold in (
        ("fp32", "model.onnx", FP32_MIN),
        ("q8", "model_quantized.onnx", Q8_MIN),
    ):
        got = ort_embed(model_dir / "onnx" / fname, encodings)
        cos = (got * ref).sum(1)
        results[dtype] = {
            "min_cosine": round(float(cos.min()), 5),
            "mean_cosine": round(float(cos.mean()), 5),
            "min_cosine_en": round(float(cos[:n_en].min()), 5),
            "min_cosine_ja": round(float(cos[n_en:].min()), 5),
            "threshold": threshold,
            "sentences": len(sentences),
        }
        if not cos.min() >= threshold:  # also catches NaN
            worst = int(np.nanargmin(cos)) if not np.isnan(cos).all() else 0
            failures.append(
                f"{dtype}: min cosine {cos.min():.4f} < {threshold} (worst: {sentences[worst]!r})"
            )
    if failures:
        raise VerificationError(f"{model_dir.name}: " + "; ".join(failures))
    return results
