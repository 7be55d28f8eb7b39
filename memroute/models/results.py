"""Reports the `Memory` maintenance calls return: summarise, decay, verify, reindex (with
its Qdrant sync) and the extraction queue counts. Their wire objects (REST, CLI, MCP)
come from these fields through `memroute.models.wire`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from memroute.models.records import MemoryRecord
from memroute.models.wire import Wire


@dataclass(slots=True, frozen=True)
class SummaryWritten:
    """One summary memory of a key and how many memories it replaced."""

    api_key_id: str
    summary_id: str
    count: int


@dataclass(slots=True, frozen=True)
class SummaryReport:
    """What `summarize` found and, unless a dry run, wrote: `candidates` holds the oldest
    100 of the `candidate_count` memories found; `summaries` one entry per summary (a key
    gets several when its memories do not fit in one)."""

    candidates: list[MemoryRecord]
    candidate_count: int
    total_tokens: int
    deleted_count: int
    summary_id: str | None  # the summary's id when exactly one summary was written
    summaries: list[SummaryWritten]
    dry_run: bool


@dataclass(slots=True, frozen=True)
class DecayReport:
    """One decay sweep: memories scanned, decayed ones (deleted unless a dry run)."""

    scanned: int
    decayed: int
    deleted_ids: list[str]
    skipped_disabled: bool  # decay is off and the sweep did nothing
    capped: bool  # more memories than one sweep scans
    dry_run: bool


@dataclass(slots=True, frozen=True)
class VerifySteps:
    extract: bool
    store: bool
    search: bool
    delete: bool


@dataclass(slots=True, frozen=True)
class VerifyReport:
    """The health probe: whether each pipeline step worked; `error` only when one did not."""

    __wire__: ClassVar[Wire] = Wire(omitted_when_none=("error",))

    working: bool
    latency_ms: float
    steps: VerifySteps
    error: str | None = None


@dataclass(slots=True, frozen=True)
class QdrantDrain:
    """A sync run to the end (`reindex` with `wait`): `pushed` counts the back-fill's
    points when it succeeded; on a failure `error` says why."""

    __wire__: ClassVar[Wire] = Wire(omitted_when_none=("pushed",))

    ok: bool
    error: str | None
    serving: bool
    pushed: int | None = None


@dataclass(slots=True, frozen=True)
class ReindexReport:
    """A re-index run: `started` is false when no embedding source or index is usable
    (`reason` says why); `processed`/`errors` count what ran here (with `wait`);
    `qdrant` is the Qdrant push when it ran here, else None."""

    started: bool
    pending: int
    processed: int = 0
    errors: int = 0
    reason: str | None = None
    qdrant: QdrantDrain | None = None


@dataclass(slots=True, frozen=True)
class ExtractionQueue:
    """Jobs waiting for the extraction worker, and jobs that failed every attempt."""

    pending: int
    failed: int
