"""Vector kernels: exact / int8-prefiltered top-k over one character's vectors; BM25 scorers.

``default_kernel()`` returns the factory the engine uses when none is given: numpy under
CPython when it is installed, the pure-Python kernel otherwise. In Pyodide the browser's
WebAssembly kernel is passed in explicitly by ``omoide.browser`` (any ``KernelFactory``).
``default_scorer()`` is the same choice for the BM25 postings scorer (the browser passes
the kernel's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omoide._compat import has_numpy
from omoide.kernels.base import KernelFactory, KernelResult, VectorKernel
from omoide.kernels.pure_kernel import PureKernel

if TYPE_CHECKING:  # engine.bm25 imports the engine package, which imports this one
    from omoide.engine.bm25 import PostingsScorer

__all__ = ["KernelFactory", "KernelResult", "PureKernel", "VectorKernel", "default_kernel",
           "default_scorer"]


def default_kernel() -> KernelFactory:
    """The best kernel factory this runtime offers without JavaScript help."""
    if has_numpy():
        from omoide.kernels.numpy_kernel import NumpyKernel

        return NumpyKernel
    return PureKernel


def default_scorer() -> PostingsScorer:
    """The best BM25 postings scorer this runtime offers without JavaScript help."""
    if has_numpy():
        from omoide.kernels.numpy_bm25 import NumpyScorer

        return NumpyScorer()
    from omoide.engine.bm25 import PURE_SCORER

    return PURE_SCORER
