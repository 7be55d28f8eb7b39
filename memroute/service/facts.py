"""Writing extracted facts: redaction first, at most `max_facts` facts per message (the
last ones stated), then one memory per fact (a fact with a key replaces the key's earlier
memory; a key at its memory cap makes room), for `remember` and the extraction queue."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from memroute.memory import validate
from memroute.memory.extraction import extract_at_most
from memroute.memory.redact import redact
from memroute.models.records import Fact, MemoryRecord
from memroute.service.quota import MemoryCap
from memroute.store import ExtractionJob, NewMemory, SqliteStore

log = logging.getLogger("memroute.memory")


class FactWriter:
    def __init__(
        self,
        store: SqliteStore,
        *,
        redact_secrets: bool,
        max_facts: int,
        cap: MemoryCap,
        now: Callable[[], str],
        on_stored: Callable[[], None],
    ) -> None:
        """`on_stored()` is called after new memories were written (they wait for vectors)."""
        self._store = store
        self._redact_secrets = redact_secrets
        self.max_facts = max_facts
        self._cap = cap
        self._now = now
        self._on_stored = on_stored
        self.facts_dropped = 0  # facts past `max_facts` in a message, since start

    def redact(self, text: str) -> str:
        """`text` with secrets masked (unless redaction is off)."""
        return redact(text) if self._redact_secrets else text

    def extract(self, text: str) -> list[Fact]:
        """The facts of one message to store: redacted, at most `max_facts` (the last stated)."""
        facts, dropped = extract_at_most(self.redact(text), self.max_facts)
        if dropped:
            self.facts_dropped += dropped
            log.info("memory.extraction.capped kept=%d dropped=%d", len(facts), dropped)
        return facts

    def store(
        self, owner: str, session: str, source: str, facts: Sequence[Fact], *, actor: str
    ) -> list[MemoryRecord]:
        """Store `facts` as `owner`'s memories in one transaction; returns them."""
        facts = validate.clean_facts(facts)  # a chat's NUL or control character is dropped, not refused
        now = self._now()
        stored: list[MemoryRecord] = []
        with self._store.db.write():
            incoming = sum(1 for f in facts if self._store.memories.get_by_key(owner, f.key) is None)
            self._cap.make_room(owner, incoming, now=now)
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
        found = [(job, self.extract(job.text)) for job in jobs]
        with self._store.db.write():
            for job, facts in found:
                self.store(job.api_key_id, job.session_id, job.source, facts, actor="extraction")
                self._store.jobs.finish(job.id)
