"""The only place that talks to JavaScript (Pyodide's ``js`` and ``pyodide.ffi``).

Imported only inside Pyodide; the rest of ``omoide`` stays pure Python.
"""
