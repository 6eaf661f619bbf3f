"""Memory governance on top of the engine: extraction, write-time dedup, hot/cold tiers,
summarization, audit. Pure Python; runs under CPython and Pyodide alike."""
