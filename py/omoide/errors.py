"""Every error Omoide raises, with its message, in one table (the Orama way).

Raise with ``raise OmoideError.of("CODE", **fields)``; callers (and the browser UI) can switch
on ``err.code`` and show ``str(err)``. Add new codes to ``MESSAGES``; never inline a message.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "EMPTY_TEXT": "Memory text is empty; write at least one visible character.",
    "TEXT_TOO_LONG": "Memory text is {length} characters; the limit is {limit}.",
    "UNKNOWN_CHARACTER": "No character with id {character!r}.",
    "INVALID_CHARACTER_ID": "Character id {character!r} is not valid: {reason}.",
    "UNKNOWN_MEMORY": "No memory with id {memory_id!r} for character {character!r}.",
    "INVALID_ARGUMENT": "Invalid {name}: {reason}.",
    "MODEL_MISMATCH": (
        "The index of {character!r} was built with {stored}, but the selected model is "
        "{selected}. Re-vectorize it (maintenance tab) before recalling by meaning or adding "
        "memories to it; vectors of two models are never mixed."
    ),
    "DIMENSION_MISMATCH": "The model {model!r} returned {got}-d vectors; {expected}-d expected.",
    "CORRUPT_SNAPSHOT": "The snapshot is corrupt or truncated: {reason}.",
    "UNSUPPORTED_SNAPSHOT": "Snapshot format version {version} is not supported (max {max}).",
    "UNKNOWN_MODEL": "No embedding model with id {model!r}; known: {known}.",
    "EMBEDDING_FAILED": "The embedding provider {provider!r} failed: {reason}.",
    "REMOTE_AUTH": "The embedding endpoint {url} refused the API key (HTTP {status}).",
    "REMOTE_RATE_LIMITED": "The endpoint {url} is rate limited; retry after {retry_after} s.",
    "REMOTE_TIMEOUT": "The endpoint {url} did not answer within {timeout} s.",
    "REMOTE_ERROR": "The endpoint {url} answered HTTP {status}: {body}.",
    "CANCELLED": "{operation} was cancelled; it can be resumed.",
    "QUOTA_EXCEEDED": "The browser's storage quota is full; nothing was written. {detail}",
    "MALFORMED_IMPORT": "The import file is not valid: {reason}.",
    "STORAGE_FAILED": "The browser database refused the write; nothing was changed: {reason}.",
    "NOT_READY": "The engine is still loading {what}; try again in a moment.",
    "UNSUPPORTED_DIMENSION": (
        "The model {model!r} cannot produce {dim}-d vectors; supported: {supported}.{hint}"
    ),
    "MODEL_NOT_BUILT": (
        "The files of {model!r} ({dtype}) were not found in {searched}; run `python3 build.py` "
        "or set OMOIDE_MODELS to a folder holding the built models."
    ),
    "MODEL_DAMAGED": (
        "The files of {model!r} ({dtype}) in {path} cannot be loaded ({reason}); build the "
        "models again with `python3 build.py`, or set OMOIDE_MODELS to a folder holding good ones."
    ),
    "NO_EMBEDDER": "No embedding provider is available: {reasons}.",
    "LLM_AUTH": "The chat endpoint {url} refused the API key (HTTP {status}).",
    "LLM_UNREACHABLE": "Cannot reach the chat endpoint {url}: {reason}.",
    "LLM_BAD_ANSWER": "The chat endpoint {url} gave an unusable answer: {reason}.",
    "INVALID_RECORD": "Invalid memory record: {reason}.",
    "BACKEND_CONFLICT": "The backend {backend!r} already holds a memory with id {memory_id!r}.",
    "BACKEND_HTTP": "The backend {url} answered HTTP {status}: {body}",
    "BACKEND_UNREACHABLE": "Cannot reach the backend {url}: {reason}.",
    "BACKEND_TIMEOUT": "The backend {url} did not answer within {timeout} s.",
    "BACKEND_UNAVAILABLE": "No backend could serve {operation}: {reasons}.",
    "BACKEND_WRITE_FAILED": "The database {path} refused the write; nothing was changed: {reason}.",
    "BACKEND_BUSY": ("Other processes kept changing the workspace while this command ran "
                     "({retries} tries); nothing was changed. Run it again."),
    "MEMORY_CONFLICT": (
        "The memory {memory_id!r} was {what} by another process on the same workspace; "
        "nothing was written. Look at it again and retry."
    ),
    "MEMORY_OWNER_CONFLICT": (
        "The memory {memory_id!r} belongs to another character here than the change names "
        "({character!r}); nothing was written."
    ),
    "BACKEND_CONFIG": "The backend configuration is not valid: {reason}.",
    "SERVER_CONFIG": "The server will not start: {reason}.",
    "WORKSPACE_MODEL_MISMATCH": (
        "The workspace {path} uses {stored}, not {selected}. To switch it (every memory is "
        "embedded again), run `python -m omoide revectorize --model {model} --dtype {dtype}`; "
        "to keep {stored}, leave out --model/--dtype."
    ),
    "WORKSPACE_SWITCHED": (
        "The workspace {path} now uses {stored}: another command switched it since this one "
        "started with {running}. Restart this server or command to use {stored}; nothing was "
        "written."
    ),
    "STORE_MODEL_MISMATCH": (
        "The memories of {character!r} were embedded with {stored}, but the workspace's model "
        "is {selected}. Run `python -m omoide revectorize --model {model} --dtype {dtype}` to "
        "embed them again; vectors of two models are never mixed."
    ),
    "FILE_UNREADABLE": "Cannot read {path}: {reason}.",
    "FILE_UNWRITABLE": "Cannot write {path}: {reason}.",
    "MALFORMED_CHAT_DATA": "{path}: not a valid {what}: {reason}. Nothing was imported.",
    "MALFORMED_CONVERSATION": "The conversation file {path} is not valid: {reason}.",
    "MALFORMED_MESSAGE": "The message is not a JSON-RPC 2.0 message: {reason}. Nothing was run.",
    "INVALID_PARAMS": "Invalid request parameters ({fields}). Nothing was run.",
    "NOT_INITIALIZED": (
        "The session is not initialized: send the \"initialize\" request first, then the "
        "\"notifications/initialized\" notification. {method} was not run."
    ),
}


class OmoideError(Exception):
    """An expected failure with a stable ``code`` and a message from ``MESSAGES``."""

    def __init__(self, code: str, message: str, fields: dict[str, object]) -> None:
        super().__init__(message)
        self.code = code
        self.fields = fields

    @classmethod
    def of(cls, code: str, **fields: object) -> OmoideError:
        return cls(code, MESSAGES[code].format(**fields), fields)

    def to_dict(self) -> dict[str, object]:
        """Plain data for the RPC boundary (the page shows ``message``, switches on ``code``)."""
        return {"code": self.code, "message": str(self), "fields": dict(self.fields)}
