"""The vector kernel protocol: the only place the engine touches vector math.

One kernel instance holds the vectors of ONE character index (isolation by construction: a
query against Alice's kernel cannot even score Bob's rows). Rows are keyed by memory id.
Implementations: ``numpy_kernel`` (CPython), ``pure_kernel`` (Pyodide without numpy, and the
reference), and later the browser's WebAssembly kernel behind ``omoide.browser`` — anything
that satisfies ``VectorKernel`` can be plugged into ``MemoryEngine(kernel=...)``.

Vectors are L2-normalized, so the dot product is the cosine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

Vector = Sequence[float]


@dataclass(frozen=True)
class KernelResult:
    """Top-k rows of one query plus the moments of the score population.

    ``mean``/``std`` describe the scores of every row that was eligible (``count`` rows), not
    just the top k: hybrid fusion uses them to put cosines on a per-query scale.
    """

    ids: list[str]
    scores: list[float]
    mean: float
    std: float
    count: int


@runtime_checkable
class VectorKernel(Protocol):
    dimension: int

    def __len__(self) -> int: ...

    def __contains__(self, row_id: object) -> bool: ...

    def add(self, ids: Sequence[str], vectors: Iterable[Vector]) -> None:
        """Insert (or overwrite) rows."""

    def remove(self, ids: Iterable[str]) -> None:
        """Delete rows; unknown ids are ignored."""

    def ids(self) -> list[str]:
        """Row ids in storage order."""

    def vector(self, row_id: str) -> list[float]:
        """One stored row as float32 values (KeyError when absent)."""

    def scores(self, query: Vector, ids: Sequence[str]) -> list[float]:
        """Exact cosine of ``query`` against the given rows (KeyError for unknown ids)."""

    def top_k(
        self, query: Vector, k: int, allowed: Iterable[str] | None = None
    ) -> KernelResult:
        """The k best rows by cosine, best first; ``allowed`` restricts the candidates."""

    def export_float32(self) -> tuple[list[str], bytes]:
        """All rows as (ids, little-endian float32 bytes, row-major) for snapshots."""


KernelFactory = Callable[[int], VectorKernel]
"""Makes an empty kernel for a given dimension (one per character index)."""


def top_k_by_id(kernel: VectorKernel, query: Vector, k: int,
                allowed: Iterable[str] | None = None) -> KernelResult:
    """``kernel.top_k`` with equal scores ordered by id, whichever of them the kernel put
    first: a kernel breaks ties by its row order, which a removal changes (numpy and the
    WebAssembly kernel move their last row into the hole), so two memories of the same
    vector swapped places after an unrelated memory was forgotten and restored, and at the
    k-th place one replaced the other. Asks for more rows until the k-th score's ties are
    all in (one row more than k unless they run past it)."""
    want = k
    while True:
        result = kernel.top_k(query, want + 1, allowed)
        if len(result.ids) <= want or k <= 0 or result.scores[want] < result.scores[k - 1]:
            break
        want *= 2
    best = sorted(zip(result.scores, result.ids, strict=True),
                  key=lambda pair: (-pair[0], pair[1]))[:max(k, 0)]
    return KernelResult([i for _, i in best], [s for s, _ in best], result.mean, result.std,
                        result.count)


def moments(total: float, total_sq: float, count: int) -> tuple[float, float]:
    """Mean and population standard deviation from running sums (0, 0 when empty)."""
    if count <= 0:
        return 0.0, 0.0
    mean = total / count
    variance = max(total_sq / count - mean * mean, 0.0)
    return mean, variance**0.5
