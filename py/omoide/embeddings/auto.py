"""Pick the best embedding provider available at run time, and say which and why.

Order: the local ONNX model (private, offline, same vectors as the browser) when its files are
built and ONNX Runtime is importable; else an OpenAI-compatible endpoint when one is
configured (argument or ``OMOIDE_REMOTE_URL`` / ``OMOIDE_REMOTE_MODEL`` /
``OMOIDE_REMOTE_API_KEY`` / ``OMOIDE_REMOTE_DIMENSION``). The result is wrapped in the
LRU/TTL cache unless ``cache=False``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import OmoideError
from ..keys import checked_endpoint
from .base import Embedder
from .cache import CachedEmbedder, EmbeddingCache
from .registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID, check_dtype, get_model


@dataclass(frozen=True)
class RemoteConfig:
    """An OpenAI-compatible endpoint. ``base_url`` is shown (repr, the provider line), so
    one holding a user, password, query or fragment is refused when the config is made,
    naming the field (``$OMOIDE_REMOTE_URL`` from ``from_env``), never the URL."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)  # never in a repr or a log
    dimension: int = 384
    timeout: float = 30.0

    def __post_init__(self) -> None:
        checked_endpoint(self.base_url, "base_url")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RemoteConfig | None:
        url, model = env.get("OMOIDE_REMOTE_URL"), env.get("OMOIDE_REMOTE_MODEL")
        if not url or not model:
            return None
        return cls(
            checked_endpoint(url, "$OMOIDE_REMOTE_URL"),
            model,
            env.get("OMOIDE_REMOTE_API_KEY") or None,
            _dimension(env.get("OMOIDE_REMOTE_DIMENSION", "384")),
        )


def _dimension(value: str) -> int:
    """``$OMOIDE_REMOTE_DIMENSION`` as a vector size (a bare ValueError named nothing)."""
    try:
        dimension = int(value)
    except ValueError:
        dimension = 0
    if not 1 <= dimension <= 8192:
        raise OmoideError.of("INVALID_ARGUMENT", name="$OMOIDE_REMOTE_DIMENSION",
                             reason=f"{value[:20]!r} is not a vector size (1 to 8192)")
    return dimension


@dataclass
class Choice:
    embedder: Embedder
    provider: str  # "onnx" or "remote"
    reason: str  # one line for the user: what was picked and why
    skipped: list[str] = field(default_factory=list)  # why better options were not used


def choose_embedder(
    model_id: str = DEFAULT_MODEL_ID,
    dtype: str = DEFAULT_DTYPE,
    *,
    remote: RemoteConfig | None = None,
    env: Mapping[str, str] | None = None,
    cache: EmbeddingCache | bool = True,
) -> Choice:
    env = os.environ if env is None else env
    info = get_model(model_id)
    check_dtype(info, dtype)
    skipped: list[str] = []
    choice: Choice | None = None
    try:
        from .onnx_provider import OnnxEmbedder, find_model_dir
    except ImportError as e:  # Pyodide, or CPython without the ``cpython`` extra
        skipped.append(f"local ONNX: {e.name or e} is not installed")
    else:
        d = find_model_dir(model_id, dtype)
        if d is None:
            skipped.append(f"local ONNX: {model_id} ({dtype}) is not built")
        else:
            choice = Choice(
                OnnxEmbedder(d, dtype, model_id=model_id),
                "onnx",
                f"local {info.display_name} ({dtype}) with ONNX Runtime from {d}",
            )
    if choice is None:
        remote = remote or RemoteConfig.from_env(env)
        if remote is None:
            skipped.append("remote: no endpoint configured (OMOIDE_REMOTE_URL/MODEL)")
        else:
            from .remote import RemoteEmbedder

            choice = Choice(
                RemoteEmbedder(
                    remote.base_url,
                    remote.model,
                    api_key=remote.api_key,
                    dimension=remote.dimension,
                    timeout=remote.timeout,
                ),
                "remote",
                f"remote model {remote.model!r} at {remote.base_url} (local model unavailable)",
            )
    if choice is None:
        raise OmoideError.of("NO_EMBEDDER", reasons="; ".join(skipped))
    choice.skipped = skipped
    if cache is not False:
        choice.embedder = CachedEmbedder(
            choice.embedder, cache if isinstance(cache, EmbeddingCache) else None
        )
    return choice
