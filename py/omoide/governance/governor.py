"""``Governor``: one object holding the engine, the optional LLM, the tier policy, the dedup
threshold and the audit log, so an app configures governance once and calls verbs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from omoide.engine.core import on_fresh_state
from omoide.engine.memory import Memory
from omoide.governance import tiers, trash

# Functions, not ``from omoide.governance import audit``: the package re-exports the function
# ``audit`` under the submodule's name, so that import gave the function, not the module.
from omoide.governance.audit import AuditReport
from omoide.governance.audit import audit as audit_report
from omoide.governance.dedup import DEFAULT_THRESHOLD
from omoide.governance.extract import Message
from omoide.governance.ingest import IngestReport
from omoide.governance.ingest import ingest as ingest_messages
from omoide.governance.llm import MemoryLLM
from omoide.governance.log import AuditLog
from omoide.governance.summarize import SummaryReport
from omoide.governance.summarize import summarize as summarize_report

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine


class Governor:
    def __init__(
        self,
        engine: MemoryEngine,
        *,
        llm: MemoryLLM | None = None,
        policy: tiers.TierPolicy | None = None,
        dedup_threshold: float = DEFAULT_THRESHOLD,
        log: AuditLog | None = None,
    ) -> None:
        self.engine = engine
        self.llm = llm
        self.policy = policy or tiers.TierPolicy()
        self.dedup_threshold = dedup_threshold
        self.log = log if log is not None else AuditLog()

    def fresh(self) -> AbstractContextManager[None]:
        """The engine's ``fresh``: a governance verb refreshes once, before it starts."""
        return self.engine.fresh()

    @on_fresh_state
    def ingest(
        self,
        character: str,
        messages: Sequence[Message] | str,
        *,
        dry_run: bool = False,
        meta: Mapping[str, Any] | None = None,
        roles: Iterable[str] = ("user",),
        at: Any = None,
        conversation: str | None = None,
    ) -> IngestReport:
        return ingest_messages(
            self.engine, character, messages, llm=self.llm, dry_run=dry_run,
            dedup_threshold=self.dedup_threshold, roles=roles, tier_policy=self.policy,
            meta=meta, log=self.log, at=at, conversation=conversation,
        )

    @on_fresh_state
    def rebalance(self, character: str) -> tiers.RebalanceReport:
        return tiers.rebalance(self.engine, character, self.policy, log=self.log,
                               dedup_threshold=self.dedup_threshold)

    @on_fresh_state
    def maintain_cold(self, character: str, *, force: bool = False) -> tiers.ColdReport:
        return tiers.maintain_cold(self.engine, character, self.policy, log=self.log,
                                   dedup_threshold=self.dedup_threshold, force=force)

    @on_fresh_state
    def promote(self, character: str, memory_id: str, *, pin: bool = False) -> Memory:
        return tiers.promote(self.engine, character, memory_id, pin=pin, log=self.log)

    @on_fresh_state
    def hot_context(self, character: str) -> str:
        return tiers.hot_context(self.engine, character, self.policy)

    @on_fresh_state
    def context(self, character: str, query: str | None, budget_chars: int = 6_000, *,
                k: int = 8) -> tiers.ContextBlock:
        return tiers.context(self.engine, character, query, budget_chars, k=k,
                             policy=self.policy)

    @on_fresh_state
    def recall(self, character: str, query: str, **recall_args: Any) -> trash.RecallResult:
        return trash.recall_reviving(self.engine, character, query, **recall_args)

    @on_fresh_state
    def purge_expired(self, character: str, *, grace_days: float = 30.0) -> list[str]:
        return trash.purge_expired(self.engine, character, grace_days=grace_days)

    @on_fresh_state
    def summarize(self, character: str, *, older_than_days: float = 30.0,
                  dry_run: bool = True, **options: Any) -> SummaryReport:
        return summarize_report(
            self.engine, character, older_than_days=older_than_days, dry_run=dry_run,
            llm=self.llm, log=self.log, **options,
        )

    @on_fresh_state
    def audit(self, character: str, **options: Any) -> AuditReport:
        return audit_report(self.engine, character, policy=self.policy,
                                  dedup_threshold=self.dedup_threshold, log=self.log, **options)
