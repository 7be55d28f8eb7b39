"""Learning from queued chat turns: what the extraction worker does with each job.

A job is one message of a chat (the user's last message, or the assistant's reply). When
the job captures, its text is kept as the speaker's episodes: verbatim, in bounded
chunks, each at most once per owner (`memroute.memory.turns`). When the job reads facts,
the facts it states become facts of the speaker; only user messages are read for facts,
so nothing the assistant says is ever stored as a fact about the user. Everything learned
records where it came from (`memroute.memory.origin`). What a job teaches is stored, and
the job deleted, in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from memroute.memory import turns, validate
from memroute.memory.lines import TURN_CATEGORY
from memroute.memory.origin import Origin
from memroute.models.owners import owner_for_logs
from memroute.models.records import Fact, MemoryRecord
from memroute.service.facts import FactWriter
from memroute.service.quota import MemoryCap
from memroute.store import ExtractionJob, NewMemory, Store

log = logging.getLogger("memroute.memory")

ROLES = {"user_message": "user", "llm_response": "assistant"}
JOBS_PER_TRANSACTION = 4

Found = tuple[ExtractionJob, list[turns.Chunk], list[Fact]]  # a job, its chunks and its facts


def origin_of(job: ExtractionJob) -> Origin:
    """Where what `job` teaches came from: its request, session, role, speaker and time."""
    return Origin(
        request_id=job.request_id,
        session_id=job.session_id,
        role=ROLES.get(job.source, "user"),
        speaker=job.speaker,
        learned_at=job.created_at,
    )


class TurnLearner:
    """Stores the episodes and facts of queued jobs (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        facts: FactWriter,
        *,
        cap: MemoryCap,
        on_stored: Callable[[], None],
    ) -> None:
        """`on_stored()` is called after new episodes were written (they wait for vectors)."""
        self._store = store
        self._facts = facts
        self._cap = cap
        self._on_stored = on_stored
        self.turns_captured = 0  # episodes stored since start
        self.turns_repeated = 0  # chunks not stored again: the owner already had their text

    def process_jobs(self, jobs: Sequence[ExtractionJob]) -> None:
        """Store what `jobs` teach and delete the jobs, a few jobs per transaction (a job's
        memories and its deletion are always in one; a job another process has deleted
        meanwhile is skipped, so each is stored once however many processes work). Short
        transactions keep the chat path's own writes (queueing the next turns) from waiting
        behind the worker."""
        # Chunk and extract outside the write lock: API writes never wait on regexes.
        found = [(job, *self._read(job)) for job in jobs]
        stored = 0
        for start in range(0, len(found), JOBS_PER_TRANSACTION):
            group = found[start : start + JOBS_PER_TRANSACTION]
            # Any error ends the whole transaction (the worker then retries the jobs one by
            # one), so nested writes need no savepoints.
            with self._store.transaction(savepoints=False):
                mine = self._store.jobs.finish([job.id for job, _, _ in group])
                # Another process took the others first: stored once, by it.
                group = [item for item in group if item[0].id in mine]
                held = self._held_turns(group)
                for job, chunks, facts in group:
                    origin = origin_of(job)
                    evicted = self._cap.evicted
                    owned = held.get(job.api_key_id)
                    stored += len(self.store_episodes(job.api_key_id, chunks, origin, owned))
                    if facts:
                        self._facts.store(
                            job.api_key_id,
                            job.session_id,
                            job.source,
                            facts,
                            actor="extraction",
                            origin=origin,
                        )
                    if self._cap.evicted != evicted:  # memories were removed: ask again
                        held.clear()
        if stored:
            self._on_stored()

    def _held_turns(self, group: Sequence[Found]) -> dict[str, set[str]]:
        """The chunk keys each owner of `group` already has, read once per owner (in the
        caller's transaction, so they stay true until it ends)."""
        wanted: dict[str, list[str]] = {}
        for job, chunks, _ in group:
            wanted.setdefault(job.api_key_id, []).extend(c.key for c in chunks)
        return {owner: set(self._store.memories.by_keys(owner, keys)) for owner, keys in wanted.items()}

    def _read(self, job: ExtractionJob) -> tuple[list[turns.Chunk], list[Fact]]:
        text = job.text  # redacted before it was queued
        chunks = turns.chunks(text, job.speaker) if job.capture else []
        facts = self._facts.extract(text, job.speaker) if job.facts and job.source == "user_message" else []
        return chunks, facts

    def store_episodes(
        self, owner: str, chunks: Sequence[turns.Chunk], origin: Origin, held: set[str] | None = None
    ) -> list[MemoryRecord]:
        """Store `chunks` as `owner`'s episodes (in the caller's transaction); a chunk whose
        text the owner already has is not stored again. `held`: the chunk keys the owner
        is known to have in this transaction (read here when not given); the keys stored
        are added to it."""
        if held is None:
            held = set(self._store.memories.by_keys(owner, [c.key for c in chunks]))
        fresh = list({c.key: c for c in chunks if c.key not in held}.values())
        self.turns_repeated += len(chunks) - len(fresh)
        if not fresh:
            return []
        self._cap.make_room(owner, len(fresh), now=origin.learned_at)
        stored = []
        for chunk in fresh:
            content = validate.without_refused_chars(chunk.text).strip()
            if not content:
                continue
            metadata: dict[str, object] = {"category": TURN_CATEGORY, **origin.fields()}
            if chunk.count > 1:
                metadata["chunk"] = [chunk.index, chunk.count]
            new = NewMemory(
                api_key_id=owner,
                content=content,
                key=chunk.key,
                type="episodic",
                session_id=origin.session_id,
                metadata=metadata,
            )
            # The turn's text is in the memory itself: its ADD history entry leaves it out.
            memory = self._store.memories.insert(
                new, now=origin.learned_at, actor="capture", text_in_history=False
            )
            held.add(chunk.key)
            stored.append(memory)
        self.turns_captured += len(stored)
        log.debug("memory.capture.complete apiKeyId=%s chunks=%d", owner_for_logs(owner), len(stored))
        return stored
