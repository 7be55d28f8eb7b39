"""Writing extracted facts: redaction first, then one memory per fact (a fact with a
key replaces the key's earlier memory), for `remember` and the extraction queue."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from memroute.memory import validate
from memroute.memory.extraction import extract_facts_from_text
from memroute.memory.redact import redact
from memroute.models.records import Fact, MemoryRecord
from memroute.store import ExtractionJob, NewMemory, SqliteStore

log = logging.getLogger("memroute.memory")


class FactWriter:
    def __init__(
        self,
        store: SqliteStore,
        *,
        redact_secrets: bool,
        now: Callable[[], str],
        on_stored: Callable[[], None],
    ) -> None:
        """`on_stored()` is called after new memories were written (they wait for vectors)."""
        self._store = store
        self._redact_secrets = redact_secrets
        self._now = now
        self._on_stored = on_stored

    def redact(self, text: str) -> str:
        """`text` with secrets masked (unless redaction is off)."""
        return redact(text) if self._redact_secrets else text

    def store(
        self, owner: str, session: str, source: str, facts: Sequence[Fact], *, actor: str
    ) -> list[MemoryRecord]:
        """Store `facts` as `owner`'s memories in one transaction; returns them."""
        facts = validate.clean_facts(facts)  # a chat's NUL or control character is dropped, not refused
        now = self._now()
        stored: list[MemoryRecord] = []
        with self._store.db.write():
            for fact in facts:
                metadata = {
                    "category": fact.category,
                    "polarity": fact.polarity,
                    "source": source,
                    "extractedAt": now,
                }
                new = NewMemory(
                    api_key_id=owner,
                    content=fact.content,
                    key=fact.key,
                    type=fact.type,
                    session_id=session,
                    metadata=metadata,
                )
                stored.append(self._store.memories.upsert(new, now=now, actor=actor)[0])
        log.info("memory.extraction.complete apiKeyId=%s factCount=%d", owner, len(stored))
        if stored:
            self._on_stored()
        return stored

    def process_jobs(self, jobs: Sequence[ExtractionJob]) -> None:
        """Store the facts of queued `jobs` and delete the jobs, all in one transaction."""
        # Extract outside the write lock: API writes never wait on regexes.
        found = [(job, extract_facts_from_text(self.redact(job.text))) for job in jobs]
        with self._store.db.write():
            for job, facts in found:
                self.store(job.api_key_id, job.session_id, job.source, facts, actor="extraction")
                self._store.jobs.finish(job.id)
