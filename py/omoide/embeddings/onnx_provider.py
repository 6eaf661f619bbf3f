"""CPython embeddings with ONNX Runtime + ``tokenizers`` on the very files the browser loads.

Same pipeline as Transformers.js' feature-extraction with ``pooling: "mean", normalize: true``:
the tokenizer.json of the model folder, truncation at ``model_max_length`` from
tokenizer_config.json, ``last_hidden_state`` mean-pooled over the attention mask, then L2
normalisation. The model's query/passage prefixes are added here (the pipeline does not).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..errors import OmoideError
from .base import check_texts
from .registry import ONNX_FILES, ModelInfo, check_dtype, get_model

REPO_ROOT = Path(__file__).resolve().parents[3]
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json")


def model_search_roots() -> list[Path]:
    """Folders that may hold built models: ``$OMOIDE_MODELS`` first, then ``<repo>/dist/models``."""
    roots = []
    env = os.environ.get("OMOIDE_MODELS")
    if env:
        roots.append(Path(env))
    roots.append(REPO_ROOT / "dist" / "models")
    return roots


def find_model_dir(model_id: str, dtype: str = "q8") -> Path | None:
    """The folder of a built model (Transformers.js layout: ``<root>/<model id>``), or None."""
    for root in model_search_roots():
        d = root / model_id
        if all((d / f).is_file() for f in MODEL_FILES) and (d / ONNX_FILES[dtype]).is_file():
            return d
    return None


def damaged(model_id: str, dtype: str, model_dir: Path, error: BaseException) -> OmoideError:
    """A model folder whose files are there but cannot be loaded, as one clear error."""
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
    return OmoideError.of("MODEL_DAMAGED", model=model_id, dtype=dtype, path=str(model_dir),
                          reason=reason)


class OnnxEmbedder:
    """A local model folder, run with ONNX Runtime on the CPU. Implements ``Embedder``."""

    def __init__(
        self,
        model_dir: Path | str,
        dtype: str = "q8",
        *,
        batch_size: int = 16,
        model_id: str | None = None,
        threads: int | None = None,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        # The folder is named after the model id (<root>/omoide/<name>), as Transformers.js
        # resolves it; the registry gives prefixes and limits for that id.
        self.model_id = model_id or f"{model_dir.parent.name}/{model_dir.name}"
        self.info: ModelInfo = get_model(self.model_id)
        self.dtype = check_dtype(self.info, dtype)
        self.dimension = self.info.dimension
        self.stamp = self.info.stamp(self.dtype)
        self.model_dir = model_dir
        self.batch_size = max(1, int(batch_size))
        onnx_path = model_dir / ONNX_FILES[self.dtype]
        if not onnx_path.is_file():
            raise OmoideError.of(
                "MODEL_NOT_BUILT", model=self.model_id, dtype=self.dtype, searched=str(model_dir)
            )
        try:
            tok_config = json.loads((model_dir / "tokenizer_config.json").read_text())
            self.max_length = int(tok_config.get("model_max_length", self.info.max_tokens))
            self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            self.tokenizer.no_padding()  # we pad per batch ourselves
            self.tokenizer.enable_truncation(self.max_length)
            opts = ort.SessionOptions()
            if threads:
                opts.intra_op_num_threads = int(threads)
            self.session = ort.InferenceSession(
                str(onnx_path), opts, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # a damaged file: json, tokenizers and ORT raise their own types
            raise damaged(self.model_id, self.dtype, model_dir, e) from None
        self._inputs = {i.name for i in self.session.get_inputs()}

    @classmethod
    def from_model_id(cls, model_id: str, dtype: str = "q8", **kwargs: object) -> OnnxEmbedder:
        check_dtype(get_model(model_id), dtype)
        d = find_model_dir(model_id, dtype)
        if d is None:
            searched = ", ".join(str(r / model_id) for r in model_search_roots())
            raise OmoideError.of("MODEL_NOT_BUILT", model=model_id, dtype=dtype, searched=searched)
        return cls(d, dtype, model_id=model_id, **kwargs)  # type: ignore[arg-type]

    # -- Embedder protocol (plain lists) ------------------------------------------------
    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self.embed_passages_array(texts).tolist()

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.embed_queries_array(texts).tolist()

    # -- fast path: float32 [n, dimension] ----------------------------------------------
    def embed_passages_array(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.info.passage_prefix + t for t in check_texts(texts)])

    def embed_queries_array(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.info.query_prefix + t for t in check_texts(texts)])

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens fed to the model per text (after truncation), for diagnostics."""
        return [len(e.ids) for e in self.tokenizer.encode_batch(check_texts(texts))]

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = [e.ids for e in self.tokenizer.encode_batch(texts)]
        # Batch texts of similar length together: less padding, same results.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._run([encodings[i] for i in idx])
        return out

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        n = max(len(e) for e in batch)
        ids = np.zeros((len(batch), n), np.int64)
        mask = np.zeros((len(batch), n), np.int64)
        for i, e in enumerate(batch):
            ids[i, : len(e)] = e
            mask[i, : len(e)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = self.session.run(["last_hidden_state"], feeds)
        except Exception as e:  # ORT raises its own exception types
            raise OmoideError.of("EMBEDDING_FAILED", provider="onnx", reason=str(e)) from e
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
