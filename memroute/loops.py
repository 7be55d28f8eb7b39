"""Background thread loops: one woken on demand (and polled), one periodic."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("memroute.service.workers")


class WakeLoop:
    """A daemon thread that calls `drain(stopping)` when woken, and every `poll_s` seconds,
    until stopped. `drain` does the work there is and returns (checking `stopping`).

    After a drain it rests `gap_s` before the next one: the wakes that come meanwhile (a
    chat stores a memory every few milliseconds under load) are served by one drain."""

    def __init__(
        self, name: str, poll_s: float, drain: Callable[[threading.Event], None], *, gap_s: float = 0.0
    ) -> None:
        self._name = name
        self._poll_s = poll_s
        self._gap_s = gap_s
        self._drain = drain
        self._wake = threading.Event()
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"memroute-{self._name}", daemon=True)
            self._thread.start()
            self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self.stopping.is_set():
            self._wake.wait(self._poll_s)
            self._wake.clear()
            if not self.stopping.is_set():
                self._drain(self.stopping)
                if self._gap_s:
                    self.stopping.wait(self._gap_s)

    def stop(self, timeout: float = 30.0) -> None:
        self.stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None


class PeriodicTask:
    """Runs `action` now and then every `interval` seconds until stopped (typed decay sweeps)."""

    def __init__(self, name: str, interval: float, action: Callable[[], object]) -> None:
        self._name = name
        self._interval = interval
        self._action = action
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None and self._interval > 0:
            self._thread = threading.Thread(target=self._run, name=f"memroute-{self._name}", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._action()
            except Exception:
                log.exception("worker.%s.failed", self._name)
            self._stop.wait(self._interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
