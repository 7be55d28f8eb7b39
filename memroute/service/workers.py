"""Background threads owned by the service: the extraction queue worker."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memroute.errors import StorageFull
from memroute.loops import PeriodicTask
from memroute.store.records import ExtractionJob

log = logging.getLogger("memroute.worker")

POLL_SECONDS = 1.0
BATCH = 20
# After a chat wakes it, the worker waits this long for more turns before its pass, so a
# burst of chats is stored in a few transactions between requests instead of one pass per
# chat running beside the next request (`wait_idle` and `stop` cut the wait short).
GATHER_SECONDS = 0.1
# While the database is full the worker waits 1, 2, 4 … up to 30 s between tries.
FULL_BACKOFF_MAX_SECONDS = 30.0


class ExtractionWorker:
    """Turns queued texts into memories, oldest first.

    Jobs live in the `extraction_jobs` table until the transaction that stored
    their facts also deletes them, so a crash never loses a queued text and the
    worker resumes where it stopped. It polls too, so jobs queued by another
    process (a second gateway worker, the CLI) are picked up.

    `process` stores a fetched batch in one transaction (one commit for many chat
    turns under load). When a batch fails, its jobs are retried one by one, so one
    bad job is marked failed and never holds up the others.

    A pass starts `gather_s` after the first wake-up (see `GATHER_SECONDS`): the chats of
    that window are stored together, after their requests have been answered.

    A full database is not the job's fault: `StorageFull` ends the pass without using
    up an attempt, and the worker tries again after a back-off (sooner when new work is
    queued), so queued texts are stored by themselves once space returns.
    """

    def __init__(
        self,
        fetch: Callable[[int], list[ExtractionJob]],
        process: Callable[[list[ExtractionJob]], None],
        fail: Callable[[ExtractionJob, Exception], None],
        before: Callable[[], object] = lambda: None,
        gather_s: float = GATHER_SECONDS,
    ) -> None:
        """`before` runs at the start of every pass (the chat turns held while the database
        was full are written to the queue then); it may raise StorageFull like `process`."""
        self._gather_s = gather_s
        self._before = before
        self._fetch = fetch
        self._process = process
        self._fail = fail
        self._wake = threading.Event()
        self._hurry = threading.Event()  # someone waits for the queue: no gathering
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # notify() bumps `_requested`; a pass that started after it sets `_completed`.
        self._progress = threading.Condition()
        self._requested = 0
        self._completed = 0
        self._backoff = 0.0  # seconds to wait after a pass the full database stopped

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="memroute-extraction", daemon=True)
            self._thread.start()

    def notify(self) -> None:
        with self._progress:
            self._requested += 1
        self._wake.set()

    def run_pending(self) -> int:
        """Process every job that is due now, in this thread; returns how many were handled.
        Raises `StorageFull` (leaving the jobs queued, attempts untouched) when the
        database has no room for their facts."""
        self._before()
        handled = 0
        while True:
            jobs = self._fetch(BATCH)
            if not jobs:
                return handled
            try:
                self._process(jobs)
            except Exception:
                self._one_by_one(jobs)
            handled += len(jobs)

    def _one_by_one(self, jobs: list[ExtractionJob]) -> None:
        for job in jobs:
            try:
                self._process([job])
            except StorageFull:
                raise  # not this job's fault: it stays queued with its attempts
            except Exception as exc:  # one bad job must not stop the queue
                log.warning("memory.extraction.job_failed job=%s error=%s", job.id, type(exc).__name__)
                self._fail(job, exc)

    def _run(self) -> None:
        while True:
            self._wake.clear()
            stopping = self._stop.is_set()  # read before the pass, so it covers all jobs queued before stop()
            with self._progress:
                pass_for = self._requested
            if self._pass():
                with self._progress:
                    self._completed = max(self._completed, pass_for)
                    self._progress.notify_all()
            if stopping:
                return
            if self._wake.wait(self._backoff or POLL_SECONDS) and not self._backoff:
                self._hurry.wait(self._gather_s)
                self._hurry.clear()

    def _pass(self) -> bool:
        """One pass over the queue; False when the full database stopped it."""
        try:
            self.run_pending()
        except StorageFull:
            self._backoff = min(max(self._backoff * 2, POLL_SECONDS), FULL_BACKOFF_MAX_SECONDS)
            log.warning("memory.extraction.storage_full retryInSeconds=%s", self._backoff)
            return False
        except Exception:  # the database may be briefly unavailable; try again
            log.exception("memory.extraction.worker_error")
        self._backoff = 0.0
        return True

    def wait_idle(self, timeout: float) -> bool:
        """Block until every job queued before this call has been handled; False when the
        timeout passed first or (without the thread) the full database stopped the pass."""
        if self._thread is None:
            try:
                self.run_pending()
            except StorageFull:
                return False
            return True
        with self._progress:
            target = self._requested
        self._hurry.set()
        with self._progress:
            return self._progress.wait_for(lambda: self._completed >= target, timeout)

    def stop(self, drain_timeout: float = 30.0) -> None:
        """Drain the queue (up to `drain_timeout` seconds), then stop the thread.

        Whatever is still queued after the timeout stays in the table for the next start."""
        if self._thread is None:
            return
        self._stop.set()
        self._wake.set()
        self._hurry.set()
        self._thread.join(drain_timeout)
        if self._thread.is_alive():
            log.warning("memory.extraction.drain_timeout seconds=%s", drain_timeout)
        self._thread = None


class AccessRecorder:
    """Collects memory uses from the chat path and writes them about once a second in one
    transaction, so a chat request never waits for (or competes with) a 100-row update.
    Uses not yet written when the process is killed are lost; counts are statistics."""

    def __init__(self, flush: Callable[[dict[str, int]], None], interval: float = 1.0) -> None:
        self._flush = flush
        self._pending: dict[str, int] = {}
        self._lock = threading.Lock()
        self._task = PeriodicTask("access", interval, self.flush)
        self._running = False

    def start(self) -> None:
        self._running = True
        self._task.start()

    def add(self, ids: list[str]) -> None:
        with self._lock:
            for memory_id in ids:
                self._pending[memory_id] = self._pending.get(memory_id, 0) + 1
        if not self._running:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        try:
            self._flush(pending)
        except StorageFull:  # statistics: dropped rather than held while the database is full
            log.warning("memory.access.storage_full dropped=%d", len(pending))

    def stop(self) -> None:
        self._task.stop()
        self._running = False
        self.flush()
