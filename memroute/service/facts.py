"""Writing extracted facts: redaction first, at most `max_facts` facts per message (the
last ones stated), then one memory per fact (a fact with a key replaces the key's earlier
memory and keeps a short list of where it was learned; a key at its memory cap makes
room), for `remember` and the extraction queue."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from memroute.memory import validate
from memroute.memory.extraction import extract_at_most, speaker_name
from memroute.memory.origin import Origin, with_source
from memroute.memory.redact import redact
from memroute.models.owners import owner_for_logs
from memroute.models.records import Fact, MemoryRecord
from memroute.service.quota import MemoryCap
from memroute.store import NewMemory, Store

log = logging.getLogger("memroute.memory")


class FactWriter:
    def __init__(
        self,
        store: Store,
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

    def extract(self, text: str, speaker: str = "") -> list[Fact]:
        """The facts of one message to store: redacted, at most `max_facts` (the last stated).
        A speaker's facts are keyed under their name (`caroline/preference:tea`) and their
        content is the bare phrase ("prefers tea"): the name is in `metadata.speaker` and in
        every line that shows the fact ("Caroline prefers tea"), not in the stored text,
        where it made every fact of one person look alike to keyword and vector search."""
        facts, dropped = extract_at_most(self.redact(text), self.max_facts, speaker=speaker or None)
        name = speaker_name(speaker)
        if name:
            facts = [replace(f, content=f.content.removeprefix(name + " ")) for f in facts]
        if dropped:
            self.facts_dropped += dropped
            log.info("memory.extraction.capped kept=%d dropped=%d", len(facts), dropped)
        return facts

    def store(
        self,
        owner: str,
        session: str,
        source: str,
        facts: Sequence[Fact],
        *,
        actor: str,
        origin: Origin | None = None,
    ) -> list[MemoryRecord]:
        """Store `facts` as `owner`'s memories in one transaction; returns them. `origin`
        (the chat message they came from) is recorded on each, and on a fact learned again
        added to its list of sources."""
        facts = validate.clean_facts(facts)  # a chat's NUL or control character is dropped, not refused
        now = self._now()
        stored: list[MemoryRecord] = []
        with self._store.transaction(savepoints=False):  # any error ends the transaction
            earlier = self._store.memories.by_keys(owner, [f.key for f in facts])
            self._cap.make_room(owner, sum(1 for f in facts if f.key not in earlier), now=now)
            for fact in facts:
                metadata: dict[str, object] = {
                    "category": fact.category,
                    "polarity": fact.polarity,
                    "source": source,
                    "extractedAt": now,
                }
                if origin is not None:
                    metadata.update(origin.fields())
                    previous = earlier.get(fact.key)
                    if previous is not None:
                        metadata["sources"] = with_source(previous.metadata, origin)
                new = NewMemory(
                    api_key_id=owner,
                    content=fact.content,
                    key=fact.key,
                    type=fact.type,
                    session_id=session,
                    metadata=metadata,
                )
                stored.append(self._store.memories.upsert(new, now=now, actor=actor)[0])
        log.info("memory.extraction.complete apiKeyId=%s factCount=%d", owner_for_logs(owner), len(stored))
        if stored:
            self._on_stored()
        return stored
