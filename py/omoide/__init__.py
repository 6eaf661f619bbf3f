"""Omoide: a local-first long-term memory engine for LLM characters and agents.

The same pure-Python package runs under CPython (numpy, ONNX Runtime) and in Pyodide inside
the browser's engine worker. JavaScript interop lives only in ``omoide.browser``.
"""

__version__ = "0.1.0"
