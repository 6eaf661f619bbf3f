"""Memory governance on top of the engine: extraction, write-time dedup, hot/cold tiers,
trash policy, summarization, audit. Pure Python; runs under CPython and Pyodide alike.

One module per concern: ``extract`` (EN+JA patterns, keys), ``polarity`` (EN+JA negation),
``llm`` (OpenAI-compatible judge/refiner), ``ingest``, ``dedup`` (merge or supersede),
``tiers``, ``trash``, ``summarize``, ``audit``, ``log``;
``Governor`` bundles them with one configuration.
"""

from omoide.governance.audit import AuditReport, HotEntry, audit
from omoide.governance.dedup import DEFAULT_THRESHOLD, DedupIndex, duplicate_pairs
from omoide.governance.extract import Candidate, extract, make_key
from omoide.governance.governor import Governor
from omoide.governance.ingest import IngestItem, IngestReport, ingest
from omoide.governance.llm import ChatClient, Judgement, MemoryLLM
from omoide.governance.log import AuditEvent, AuditLog
from omoide.governance.summarize import SummaryGroup, SummaryReport, summarize
from omoide.governance.tiers import (
    ColdReport,
    ContextBlock,
    RebalanceReport,
    TierPolicy,
    context,
    hot_context,
    maintain_cold,
    promote,
    rebalance,
)
from omoide.governance.trash import RecallResult, purge_expired, recall_reviving

__all__ = [
    "AuditEvent", "AuditLog", "AuditReport", "Candidate", "ChatClient", "ColdReport",
    "ContextBlock", "DEFAULT_THRESHOLD", "DedupIndex", "Governor", "HotEntry", "IngestItem",
    "IngestReport", "Judgement", "MemoryLLM", "RebalanceReport", "RecallResult", "SummaryGroup",
    "SummaryReport", "TierPolicy", "audit", "context", "duplicate_pairs", "extract", "hot_context",
    "ingest", "maintain_cold", "make_key", "promote", "purge_expired", "rebalance",
    "recall_reviving", "summarize",
]
