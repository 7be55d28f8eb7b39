"""`Memory`: the facade every edge calls (the library API, the CLI, the REST API, the
gateway and the MCP tools).

It validates input, maps settings onto the logic functions, and starts and stops the
background workers. Its parts are built by `memroute.service.build`; the named
sub-objects `keys`, `sessions`, `providers` and `qdrant` are part of its API.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memroute.clock import Clock, days_ago, parse_time, to_iso, utc_now
from memroute.config import Config
from memroute.errors import InvalidInput, NotFound, WouldBlock
from memroute.memory import injection, maintenance, validate
from memroute.memory.extraction import extract_facts_from_text
from memroute.memory.portability import import_records
from memroute.memory.retrieval import (
    NO_VECTOR_REASON,
    RetrieveParams,
    join_reasons,
    retrieve,
    vector_weight_of,
)
from memroute.memory.said import AlreadySaid
from memroute.memory.settings import MemorySettings, validate_update
from memroute.memory.verify import verify_pipeline
from memroute.models.owners import is_user_owner, owner_for_logs
from memroute.models.records import (
    HistoryEntry,
    ImportReport,
    MemoryFilter,
    MemoryRecord,
    Page,
    Retrieval,
    RetrievedItem,
    Stats,
)
from memroute.models.results import DecayReport, ExtractionQueue, ReindexReport, SummaryReport, VerifyReport
from memroute.models.status import EmbeddingProvider, EngineStatus, MemoryLimits, StorageStatus
from memroute.models.wire import to_wire
from memroute.service.build import Parts, build
from memroute.service.turn_queue import ChatTurn
from memroute.store import NewMemory
from memroute.store.contract import AdminFailures

log = logging.getLogger("memroute.memory")

SOURCES = ("user_message", "llm_response")
_UNSET: Any = object()


class Memory:
    """Persistent memory for API keys, usable without any server.

    >>> mem = Memory.open("/tmp/demo.db")
    >>> mem.remember("k1", "I prefer TypeScript.")[0].content
    'prefers TypeScript'
    """

    def __init__(self, parts: Parts, *, start_workers: bool = True) -> None:
        """A `Memory` on parts built by `memroute.service.build.build` (`Memory.open` does
        both)."""
        self.config = parts.config
        self._clock = parts.clock
        self._store = parts.store
        self._read_settings = parts.settings
        self._decay_policy = parts.decay_policy
        self._facts = parts.facts
        self._turns = parts.turn_queue
        self._cap = parts.cap
        self._extraction = parts.extraction
        self._held = parts.held
        self._access = parts.access
        self._decay_sweep = parts.decay_sweep
        self._leases = parts.leases
        self._semantic = parts.semantic
        self._rendered = parts.rendered
        self._said = parts.said
        self._key_indexes = parts.key_indexes
        self._prune_changes = parts.prune_changes
        self.keys = parts.keys
        self.sessions = parts.sessions
        self.providers = parts.providers
        self.qdrant = parts.qdrant
        if start_workers:
            self._semantic.start()
            self._access.start()
            self._extraction.start()
            self._extraction.notify()  # resume what an earlier run left queued
            self._decay_sweep.start()
            self._prune_changes.start()

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        config: Config | None = None,
        clock: Clock | None = None,
        start_workers: bool = True,
    ) -> Memory:
        """Open (creating and migrating) the database at `path`, or the configured one."""
        if config is None:
            config = Config.for_path(path) if path is not None else Config.from_env()
        elif path is not None:
            config = config.with_overrides(db_path=Path(path))
        return cls(build(config, clock or utc_now), start_workers=start_workers)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, drain_timeout: float = 30.0) -> None:
        """Drain the extraction queue, stop workers and close the database."""
        self._decay_sweep.stop()
        self._prune_changes.stop()
        self._key_indexes.close()
        self._semantic.stop()
        self._access.stop()
        self._extraction.stop(drain_timeout)
        for lease in self._leases:
            lease.release()
        self._store.close()

    def _now(self) -> str:
        return to_iso(self._clock())

    # -- CRUD -------------------------------------------------------------------

    def add(
        self,
        api_key_id: str,
        content: str,
        key: str = "",
        type: str = "factual",
        session_id: str = "",
        metadata: Mapping[str, Any] | None = None,
        expires_at: Any = None,
        *,
        created_at: Any = None,
        actor: str = "api",
    ) -> MemoryRecord:
        """Store a memory; with a `key`, replace the key's earlier memory (kept in history).
        `created_at`: when it was said or happened, if not now (a time in the future is
        taken as now); its age for retention still counts from now, when memroute learns
        it. A new memory of a key at its memory cap is refused (`Conflict`)."""
        clock = self._clock()
        now = to_iso(clock)
        new = NewMemory(
            api_key_id=validate.owner(api_key_id),
            content=self._content(content),
            key=validate.key(key),
            type=validate.memory_type(type),
            session_id=validate.session(session_id),
            metadata=validate.metadata(metadata),
            expires_at=validate.expires_at(expires_at),
            created_at=validate.said_at(created_at, clock),
        )
        if new.created_at is not None:  # said then, learned now
            new = replace(new, updated_at=now)
        with self._store.transaction(savepoints=False):  # any error ends the transaction
            self._cap.admit(new.api_key_id, new.key)
            memory, created = self._store.memories.upsert(new, now=now, actor=actor)
        self._semantic.notify()
        log.info(
            "memory.%s apiKeyId=%s type=%s id=%s",
            "stored" if created else "updated",
            memory.api_key_id,
            memory.type,
            memory.id,
        )
        return memory

    def _content(self, value: object) -> str:
        """A memory's content as it is stored: secrets masked (unless redaction is off),
        then validated, so what is stored is within the content limit."""
        return validate.content(
            self._facts.redact(value) if isinstance(value, str) else value,
            max_bytes=self.config.max_content_bytes,
        )

    def get(self, id: str) -> MemoryRecord | None:
        return self._store.memories.get(validate.memory_id(id))

    def get_by_key(self, api_key_id: str, key: str) -> MemoryRecord | None:
        """The memory `api_key_id` stored under `key` (the one an `add` with that key replaces)."""
        return self._store.memories.get_by_key(validate.owner(api_key_id), validate.key(key))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run several calls as one transaction: all of their writes are kept, or (when the
        block raises) none. Calls inside see their own writes."""
        with self._store.transaction():
            yield

    def update(
        self,
        id: str,
        *,
        content: Any = _UNSET,
        key: Any = _UNSET,
        type: Any = _UNSET,
        metadata: Any = _UNSET,
        expires_at: Any = _UNSET,
        session_id: Any = _UNSET,
        actor: str = "api",
    ) -> MemoryRecord:
        """Change fields of a memory; raises NotFound if it does not exist."""
        changes: dict[str, Any] = {}
        if content is not _UNSET:
            changes["content"] = self._content(content)
        if key is not _UNSET:
            changes["key"] = validate.key(key)
            if not changes["key"]:
                raise InvalidInput("must not be empty (a key cannot be removed, only changed)", "key")
        if type is not _UNSET:
            changes["type"] = validate.memory_type(type)
        if metadata is not _UNSET:
            changes["metadata"] = validate.metadata(metadata)
        if expires_at is not _UNSET:
            changes["expires_at"] = validate.expires_at(expires_at)
        if session_id is not _UNSET:
            changes["session_id"] = validate.session(session_id)
        memory = self._store.memories.update(validate.memory_id(id), changes, now=self._now(), actor=actor)
        if memory is None:
            raise NotFound(f"memory {id} not found")
        log.info("memory.updated id=%s fields=%s", memory.id, ",".join(sorted(changes)))
        if "content" in changes:
            self._semantic.notify()
        return memory

    def delete(self, id: str, *, actor: str = "api") -> bool:
        """Delete one memory (its text stays in history). It works on a full disk too: it
        then uses the room the store keeps aside for freeing space."""
        memory_id, now = validate.memory_id(id), self._now()
        deleted = self._store.reserve.freeing(
            lambda: self._store.memories.delete(memory_id, now=now, actor=actor)
        )
        if deleted is not None:
            log.info("memory.deleted apiKeyId=%s id=%s", owner_for_logs(deleted.api_key_id), deleted.id)
            self.qdrant.notify()
        return deleted is not None

    def clear(
        self,
        api_key_id: str,
        *,
        memory_type: str | None = None,
        older_than: str | None = None,
        actor: str = "api",
    ) -> int:
        """Delete every memory of one key (of one type, created before `older_than`), in one
        transaction; their text stays in history. Returns how many were deleted. An empty
        `api_key_id` is refused: clearing never reaches another key's memories. On a full
        disk it uses the room kept aside for freeing space, like `delete`."""
        owner = validate.owner(api_key_id)
        if not owner:
            raise InvalidInput("must name one API key (an empty id would reach other keys)", "apiKeyId")
        kind = validate.memory_type(memory_type) if memory_type else None
        cutoff = to_iso(parse_time(older_than, "olderThan")) if older_than else None
        now = self._now()

        def delete_all() -> int:
            deleted = 0
            with self._store.transaction():
                for memory_id in self._store.memories.ids_of(owner, type=kind, created_before=cutoff):
                    if self._store.memories.delete(memory_id, now=now, actor=actor) is not None:
                        deleted += 1
            return deleted

        deleted = self._store.reserve.freeing(delete_all)
        log.info("memory.cleared apiKeyId=%s count=%d", owner_for_logs(owner), deleted)
        self.qdrant.notify()
        return deleted

    def list(
        self,
        api_key_id: str | None = None,
        type: str | None = None,
        session_id: str | None = None,
        q: str | None = None,
        limit: Any = 50,
        page: Any = 1,
        *,
        offset: Any = None,
        user_id: str | None = None,
    ) -> Page:
        """Memories newest first; `api_key_id=None` lists every key (read-only path). A
        key's list holds its end users' memories too, unless `user_id` names one user
        ("": the key's own only); without a key, `user_id` picks that user of every key."""
        size, number, start = validate.paging(limit, page, offset)
        owner = None if api_key_id is None else validate.owner(api_key_id)
        user = None if user_id is None else validate.end_user(user_id)
        if owner is not None and is_user_owner(owner):  # one end user's owner, named whole
            user = ""
        if q is not None and not isinstance(q, str):
            raise InvalidInput("must be a string", "q")
        items, total, by_type = self._store.memories.page(
            api_key_id=owner,
            type=validate.optional_type(type),
            session_id=validate.session(session_id) or None,
            q=q,
            limit=size,
            offset=start,
            user_id=user,
        )
        return Page(items=items, total=total, page=number, limit=size, by_type=by_type)

    def stats(self, api_key_id: str | None = None) -> Stats:
        owner = None if api_key_id is None else validate.owner(api_key_id)
        total, by_type, tokens = self._store.memories.stats(owner)
        cache = self._store.memories.cache
        return Stats(
            total=total, by_type=by_type, tokens_used=tokens, cache_hits=cache.hits, cache_misses=cache.misses
        )

    def history(self, id: str) -> builtins.list[HistoryEntry]:
        return self._store.memories.history(validate.memory_id(id))

    # -- retrieval and injection --------------------------------------------------

    def _filter(
        self,
        api_key_id: str | None,
        scope: str,
        session_id: str | None,
        retention_days: int | None,
        memory_type: str | None = None,
    ) -> MemoryFilter:
        now = self._clock()
        owner: str | None = validate.owner(api_key_id)
        if scope == "global" and not (owner and is_user_owner(owner)):  # an end user's never spans
            owner = None
        session = validate.session(session_id) if scope == "session" else None
        since = days_ago(now, retention_days) if retention_days else None
        return MemoryFilter(
            api_key_id=owner,
            now=to_iso(now),
            session_id=session or None,
            updated_since=since,
            type=validate.memory_type(memory_type) if memory_type else None,
            admin_view=not api_key_id,  # a key's global read: every key's own memories only
        )

    def retrieve(
        self,
        api_key_id: str,
        query: str | None = None,
        strategy: str | None = None,
        max_tokens: int | None = None,
        scope: str = "apiKey",
        session_id: str | None = None,
        *,
        retention_days: int | None = None,
        limit: int = 100,
        record_access: bool = True,
        settings: MemorySettings | None = None,
        memory_type: str | None = None,
        already_said: str = "",
        wait_for_model: bool = True,
        light: bool = False,
    ) -> builtins.list[RetrievedItem]:
        """The memories to inject for `query`, best first, within `max_tokens`.

        Unset strategy, budget and retention come from the settings (pass them if already
        read), as does the embedding source. A memory whose text `already_said` holds (a
        request's own messages, see `memroute.memory.turns.said_in`) is left out. Every
        memory returned has its access count bumped (unless `record_access=False`). With
        `wait_for_model=False` (a chat), a local model not loaded yet starts loading in
        the background and this retrieval goes without vectors. With `light`, only from
        what the process holds, briefly (see `KeyIndexes.reader`): else WouldBlock."""
        settings = settings or self.settings()
        if not strategy or max_tokens is None or retention_days is None:
            strategy = strategy or settings.retrieval_strategy
            max_tokens = settings.max_tokens if max_tokens is None else max_tokens
            retention_days = settings.retention_days if retention_days is None else retention_days
        budget = validate.integer(max_tokens, "maxTokens", minimum=0)
        if budget <= 0:
            return []
        result = self._retrieve(
            api_key_id,
            query,
            strategy=validate.strategy(strategy),
            max_tokens=budget,
            scope=validate.scope(scope),
            session_id=session_id,
            retention_days=validate.integer(retention_days, "retentionDays", minimum=1),
            limit=validate.integer(limit, "limit", minimum=1, maximum=1000),
            settings=settings,
            memory_type=memory_type,
            already_said=already_said,
            wait_for_model=wait_for_model,
            light=light,
        )
        if record_access and result.items:
            self.record_access(i.memory.id for i in result.items)
        return result.items

    def record_access(self, ids: Iterable[str]) -> None:
        """Count a use of these memories (what `retrieve` does unless `record_access=False`).

        The gateway retrieves with `record_access=False` and calls this after the
        response, so the write stays off the request path."""
        self._store.memories.record_access(ids, now=self._now())

    def record_access_later(self, ids: Iterable[str]) -> None:
        """Count a use of these memories within about a second, in one batched write
        (what the gateway calls after answering; immediate when workers are off)."""
        self._access.add([i for i in ids if i])

    def retrieve_preview(
        self,
        api_key_id: str | None,
        query: str,
        strategy: str = "hybrid",
        max_tokens: int = 2000,
        limit: int = 20,
    ) -> Retrieval:
        """A dry run of retrieval for the Playground: same filters, no access bump.

        `api_key_id=None` previews over every key."""
        settings = self.settings()
        return self._retrieve(
            api_key_id,
            query,
            strategy=validate.strategy(strategy),
            max_tokens=validate.integer(max_tokens, "maxTokens", minimum=1, maximum=16000),
            scope="global" if api_key_id is None else "apiKey",
            session_id=None,
            retention_days=settings.retention_days,
            limit=validate.integer(limit, "limit", minimum=1, maximum=100),
            settings=settings,
        )

    def _retrieve(
        self,
        api_key_id: str | None,
        query: str | None,
        *,
        strategy: str,
        max_tokens: int,
        scope: str,
        session_id: str | None,
        retention_days: int,
        limit: int,
        settings: MemorySettings | None = None,
        memory_type: str | None = None,
        already_said: str = "",
        wait_for_model: bool = True,
        light: bool = False,
    ) -> Retrieval:
        if query is not None and not isinstance(query, str):
            raise InvalidInput("must be a string", "query")
        flt = self._filter(api_key_id, scope, session_id, retention_days, memory_type)
        owner = flt.api_key_id
        said = self._said.said(owner, already_said) if owner is not None and already_said else already_said
        params = RetrieveParams(
            query=(query or "").strip() or None,
            strategy=strategy,
            max_tokens=max_tokens,
            limit=limit,
            min_score=self.config.min_score,
            vector_k=max(limit, self.config.vec_top_k),
            already_said=said,
        )
        result = self._retrieve_with(flt, params, settings, wait_for_model, light)
        if owner is not None and isinstance(said, AlreadySaid):
            self._said.keep(owner, said)
        return result

    def _retrieve_with(
        self,
        flt: MemoryFilter,
        params: RetrieveParams,
        settings: MemorySettings | None,
        wait_for_model: bool,
        light: bool,
    ) -> Retrieval:
        strategy = params.strategy
        if strategy == "exact" or params.query is None:
            reader = self._key_indexes.reader(flt, light=light)
            return retrieve(reader, flt, params, rendered=self._rendered)
        settings = settings or self.settings()
        plan = self._semantic.plan(settings, params.query, wait_for_model=wait_for_model)
        if light and plan.indexes:
            raise WouldBlock("the recall searches vectors")
        reader = self._key_indexes.reader(flt, light=light)
        weight = self.config.hybrid_vector_weight
        params.vector_weight = vector_weight_of(plan.source.source) if weight is None else weight
        reranker = self._semantic.reranker(settings)[0] if plan.indexes else None
        result = retrieve(
            reader,
            flt,
            params,
            vector_search=plan.vector_search,
            vector_unavailable_reason=plan.reason or NO_VECTOR_REASON,
            reranker=reranker,
            rendered=self._rendered,
        )
        resolution = replace(
            result.resolution,
            embedding_source=plan.source.source,
            embedding_model=plan.source.model,
            fallback_reason=join_reasons(
                plan.reason if plan.indexes else None, result.resolution.fallback_reason
            ),
        )
        return replace(result, resolution=resolution)

    def recall(
        self,
        api_key_id: str,
        query: str | None,
        session_id: str | None = None,
        *,
        settings: MemorySettings | None = None,
        record_access: bool = True,
        already_said: str = "",
        light: bool = False,
    ) -> builtins.list[RetrievedItem]:
        """What the gateway injects: retrieval as the settings say (pass them if already
        read), leaving out what the request already holds (`already_said`), or nothing when
        memory or injection is off. A chat never waits for a model to load: until it is,
        recall goes without vectors. With `light`, WouldBlock unless the recall reads only
        what the process holds, briefly (`recall_searches_vectors` tells part of it)."""
        settings = settings or self.settings()
        if not settings.injects:
            return []
        return self.retrieve(
            api_key_id,
            query,
            strategy=settings.retrieval_strategy,
            max_tokens=settings.max_tokens,
            scope=settings.scope,
            session_id=session_id,
            retention_days=settings.retention_days,
            record_access=record_access,
            settings=settings,
            already_said=already_said,
            wait_for_model=False,
            light=light,
        )

    def recall_searches_vectors(self, settings: MemorySettings) -> bool:
        """Whether a chat's recall with these settings searches vectors (a model or a
        provider embeds the question; Qdrant or sqlite-vec is searched): such a recall
        is never light (see `recall`)."""
        return self._semantic.searches_vectors(settings)

    def inject(
        self,
        request: Mapping[str, Any],
        memories: Sequence[Any],
        provider: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """`request` with the memories added as one message (framed as background facts
        unless MEMROUTE_MEMORY_FRAMING=false, which gives the bare `Memory context:` block)."""
        return injection.inject(request, memories, provider, model, framed=self.config.memory_framing)

    def memory_block(self, memories: Sequence[Any]) -> str:
        """The text `inject` adds for `memories` (one line each, framed as `inject` frames
        them), for a wire format that places it itself; "" when none has text."""
        return injection.memory_block(memories, framed=self.config.memory_framing)

    # -- extraction -------------------------------------------------------------

    def extract(self, text: str) -> builtins.list[Any]:
        """The facts in `text`, without storing them."""
        return extract_facts_from_text(text)

    def remember(
        self,
        api_key_id: str,
        text: str,
        session_id: str = "",
        source: str = "user_message",
        *,
        actor: str = "extraction",
    ) -> builtins.list[MemoryRecord]:
        """Extract facts from `text` and store them now; returns the stored memories. A reply
        (`source="llm_response"`) teaches no facts: the assistant's sentences are not the user's."""
        owner = validate.owner(api_key_id)
        session = validate.session(session_id)
        if source not in SOURCES:
            raise InvalidInput(f"must be one of {', '.join(SOURCES)}", "source")
        if not isinstance(text, str):
            raise InvalidInput("must be a string", "text")
        if source != "user_message":
            return []
        return self._facts.store(owner, session, source, self._facts.extract(text), actor=actor)

    def enqueue_extraction(
        self, api_key_id: str, text: str, session_id: str = "", source: str = "user_message"
    ) -> int | None:
        """Queue `text` for background extraction (durable: survives a crash or restart)."""
        job_ids = self.enqueue_extractions(api_key_id, [(text, source)], session_id)
        return job_ids[0] if job_ids else None

    def enqueue_extractions(
        self, api_key_id: str, texts: Sequence[tuple[str, str]], session_id: str = ""
    ) -> builtins.list[int]:
        """Queue several (text, source) pairs for fact extraction in one transaction. Only
        user messages that can state a fact (with a statement lead such as "I prefer" or
        "my …") are queued: a reply never states facts about the user, and most turns are
        questions. While the database is full the texts are held in this process and
        queued by the worker once there is room (no ids are returned then)."""
        owner = validate.owner(api_key_id)
        session = validate.session(session_id)
        for _, source in texts:
            if source not in SOURCES:
                raise InvalidInput(f"must be one of {', '.join(SOURCES)}", "source")
        return self._turns.queue_texts(owner, texts, session)

    def enqueue_turn(
        self,
        api_key_id: str,
        turn: ChatTurn,
        *,
        settings: MemorySettings | None = None,
        wait: bool = True,
    ) -> builtins.list[int]:
        """Queue one chat exchange for learning, as the settings say: the user's message kept
        as an episode (`captureTurns` user or all) and read for facts, the reply kept as the
        assistant's episode (`captureTurns` all). Nothing when memory or learning is off. On
        PostgreSQL the write does not wait for the server's disk, as a chat waits for it
        (`MEMROUTE_POSTGRES_SYNCHRONOUS`, docs/scaling.md). Without `wait`, WouldBlock
        instead of waiting more than briefly (`Store.briefly`; nothing queued)."""
        settings = settings or self.settings()
        if not settings.extracts:
            return []
        owner = validate.owner(api_key_id)
        turn = replace(turn, session_id=validate.session(turn.session_id))
        with nullcontext() if wait else self._store.briefly():
            return self._turns.queue_turn(owner, turn, capture=settings.capture_turns, facts=True)

    def wait_for_extraction(self, timeout: float = 30.0) -> bool:
        """Block until everything queued so far has been processed (useful in tests and scripts)."""
        return self._extraction.wait_idle(timeout)

    def reindex(self, *, force: bool = False, wait: bool = False) -> ReindexReport:
        """Embed memories still waiting for a vector (every memory with `force`) with the
        configured source. In the background by default; `wait=True` runs it to the end
        here and reports what it processed."""
        return self._semantic.reindex(force=force, wait=wait)

    @property
    def admin_failures(self) -> AdminFailures | None:
        """Where every process of a shared store counts wrong admin tokens (None: each
        process counts its own)."""
        return self._store.admin_failures

    def engine_status(self) -> EngineStatus:
        """Which search tiers are active and why, the extraction queue, and whether the
        database takes writes."""
        return self._semantic.engine_status(self.extraction_queue(), self._storage_status())

    def embedding_providers(self) -> builtins.list[EmbeddingProvider]:
        """Configured providers (for the `remote` source; keys never shown) and the local
        sources with their availability."""
        return self._semantic.embedding_providers()

    def _storage_status(self) -> StorageStatus:
        storage = self._store.storage()
        if storage.full_since is not None:
            since = to_iso(datetime.fromtimestamp(storage.full_since, UTC))
            reason = (
                f"writes fail since {since}: the database or its disk is full; memories are still"
                " read and injected, nothing new is learned until space is freed"
            )
        else:
            reason = "writes succeed"
        return StorageStatus(
            writable=storage.full_since is None,
            reason=reason,
            database_bytes=storage.database_bytes,
            disk_free_bytes=storage.disk_free_bytes,
            limits=MemoryLimits(
                max_facts_per_message=self._facts.max_facts,
                facts_dropped=self._facts.facts_dropped,
                max_memories_per_key=self._cap.limit,
                evicted=self._cap.evicted,
                refused=self._cap.refused,
            ),
        )

    def extraction_queue(self) -> ExtractionQueue:
        """Texts waiting for extraction (those held while the database is full included)
        and jobs that failed for good."""
        pending, failed = self._store.jobs.counts(max_attempts=self.config.extraction_max_attempts)
        return ExtractionQueue(pending=pending + len(self._held), failed=failed)

    # -- settings ---------------------------------------------------------------

    def settings(self) -> MemorySettings:
        """Current settings: the database is asked whether any process changed them (on
        SQLite at every call, on PostgreSQL at most every half second), so a change is in
        force at once (on another replica within half a second)."""
        return self._read_settings()

    def config_checked_once(self) -> AbstractContextManager[None]:
        """Within the block, this thread's reads of the settings and the providers ask the
        database once whether they changed (an admission reads both)."""
        return self._store.config_checked_once()

    def update_settings(self, changes: Mapping[str, Any] | None = None, **kwargs: Any) -> MemorySettings:
        """Validate and store settings (camelCase or snake_case names); returns the new settings.
        The background workers are woken, so switching an embedding source on starts the
        re-index at once (other processes see the change at their next poll)."""
        values = validate_update({**(changes or {}), **kwargs})
        if values:
            self._store.settings.write(values, now=self._now())
            self._semantic.notify()
        return self.settings()

    # -- summarisation, decay, health ---------------------------------------------------

    def summarize(
        self,
        older_than_days: int = 30,
        api_key_id: str | None = None,
        *,
        all_keys: bool = False,
        dry_run: bool = False,
    ) -> SummaryReport:
        """Compact memories not updated for `older_than_days` into summaries per key, in
        bounded transactions (see `memroute.memory.maintenance.summarize`).

        Needs an `api_key_id`, or `all_keys=True` to run over every key."""
        days = validate.integer(older_than_days, "olderThanDays", minimum=1, maximum=365)
        if api_key_id is None and not all_keys:
            raise InvalidInput("give apiKeyId, or allKeys: true to summarise every key", "apiKeyId")
        owner = None if api_key_id is None else validate.owner(api_key_id)
        result = maintenance.summarize(
            self._store,
            owner=owner,
            days=days,
            now=self._clock(),
            dry_run=dry_run,
            max_bytes=self.config.max_content_bytes,
        )
        self._semantic.notify()
        return result

    def decay(
        self, *, dry_run: bool = False, api_key_id: str | None = None, force: bool = False
    ) -> DecayReport:
        """Delete decayed episodic memories. Off unless enabled (or `force`)."""
        if not (self._decay_policy.enabled or force) and not dry_run:
            return DecayReport(
                scanned=0, decayed=0, deleted_ids=[], skipped_disabled=True, capped=False, dry_run=False
            )
        owner = None if api_key_id is None else validate.owner(api_key_id)
        result = maintenance.sweep_decayed(
            self._store, self._decay_policy, owner=owner, now=self._clock(), dry_run=dry_run
        )
        self.qdrant.notify()
        return result

    def verify(self) -> VerifyReport:
        """Run extraction → store → search → delete on a private owner id, inside one write
        transaction that is then rolled back: no other reader ever sees the probe memory
        (not even an all-keys list), and it leaves no history, vector or queue entry."""
        try:
            with self._store.transaction():
                result = verify_pipeline(_VerifyAdapter(self))
                raise _ProbeDone(result)
        except _ProbeDone as done:
            return done.report

    # -- export / import ----------------------------------------------------------

    def export(self, api_key_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Every memory of one key and its end users (or of one end user, or of every key)
        with metadata and timestamps, as its camelCase wire object."""
        owner = None if api_key_id is None else validate.owner(api_key_id)
        family = owner is not None and not is_user_owner(owner)
        for memory in self._store.memories.iter_all(owner, with_users=family):
            yield to_wire(memory)

    def import_(
        self,
        records: Iterable[str | Mapping[str, Any]],
        *,
        actor: str = "import",
        api_key_id: str | None = None,
    ) -> ImportReport:
        """Upsert memories from JSONL lines or dicts. A bad record is reported with its
        line number and skipped; every good record is kept. `api_key_id` overrides owners.
        A new memory for a key at its cap is refused like a REST add (reported, skipped)."""
        report = import_records(
            self._store,
            records,
            now=self._now,
            actor=actor,
            api_key_id=api_key_id,
            content=self._content,
            admit=self._cap.admit,
        )
        self._semantic.notify()
        return report


class _ProbeDone(Exception):
    """Ends the health probe's transaction with a rollback, carrying its report out."""

    def __init__(self, report: VerifyReport) -> None:
        super().__init__("probe done")
        self.report = report


class _VerifyAdapter:
    """The health probe's view of the service."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def remember(
        self, api_key_id: str, text: str, *, session_id: str = "", source: str = "user_message"
    ) -> builtins.list[MemoryRecord]:
        return self.memory.remember(api_key_id, text, session_id, source)

    def search_ids(self, api_key_id: str, query: str) -> builtins.list[str]:
        # sqlite-vec, never Qdrant: a point pushed to Qdrant would outlive the rollback.
        local = replace(self.memory.settings(), vector_store="sqlite-vec")
        items = self.memory.retrieve(
            api_key_id,
            query,
            strategy="semantic",
            max_tokens=2000,
            retention_days=1,
            record_access=False,
            settings=local,
        )
        return [i.memory.id for i in items if i.tier != "recent"]

    def delete_quietly(self, memory_id: str) -> bool:
        deleted = self.memory.delete(memory_id)
        self.memory._store.memories.purge_history(memory_id)
        return deleted

    def count_owner(self, api_key_id: str) -> int:
        return self.memory._store.memories.count_owner(api_key_id)
