"""Logging for a running server that can never raise inside the event loop: handlers that
drop a record they cannot write (a full disk, a closed pipe, `Too many open files`), and
an event-loop exception handler that logs without ever failing."""

from __future__ import annotations

import asyncio
import logging
import logging.config
import time
from typing import Any

log = logging.getLogger("memroute.server")


class SafeStreamHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that drops a record it cannot format or write instead of
    reporting the failure, which could itself fail."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            super().emit(record)
        except Exception:  # RecursionError and the like, which StreamHandler re-raises
            self.handleError(record)

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop the record."""


def process_log_config(level: str = "info") -> dict[str, Any]:
    """The logging of `memroute serve`: uvicorn's familiar formats; memroute's and uvicorn's
    records from `level` up, other libraries' from warning up, on stderr; access lines on
    stdout; all through SafeStreamHandler."""
    handler = "memroute.web.logs.SafeStreamHandler"
    upper = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "default": {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(message)s"},
            "access": {
                "()": "uvicorn.logging.AccessFormatter",
                "fmt": '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s',
            },
        },
        "handlers": {
            "default": {"class": handler, "formatter": "default", "stream": "ext://sys.stderr"},
            "access": {"class": handler, "formatter": "access", "stream": "ext://sys.stdout"},
        },
        "root": {"handlers": ["default"], "level": "WARNING"},
        "loggers": {
            "memroute": {"level": upper},
            "uvicorn": {"level": upper},
            "uvicorn.access": {"handlers": ["access"], "level": upper, "propagate": False},
        },
    }


def configure_process_logging(level: str = "info") -> None:
    """Install process_log_config; a handler's own failure is never printed either."""
    logging.raiseExceptions = False
    logging.config.dictConfig(process_log_config(level))


class LogBudget:
    """At most `burst` records per `window` seconds; the rest are counted and the count
    is reported with the next record let through."""

    def __init__(self, burst: int = 10, window: float = 10.0) -> None:
        self.burst, self.window = burst, window
        self.started = -window
        self.used = 0
        self.suppressed = 0

    def take(self) -> int | None:
        """None when this record must be dropped, else how many were dropped before it."""
        now = time.monotonic()
        if now - self.started >= self.window:
            self.started, self.used = now, 0
        if self.used >= self.burst:
            self.suppressed += 1
            return None
        self.used += 1
        skipped, self.suppressed = self.suppressed, 0
        return skipped


def loop_exception_handler(budget: LogBudget) -> Any:
    """An event-loop exception handler that logs within `budget` and never raises: an
    OSError (`Too many open files` on accept, a reset peer) as one line, anything else with
    its traceback. asyncio then goes on, e.g. retries accepting a second later."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        try:
            skipped = budget.take()
            if skipped is None:
                return
            message = str(context.get("message") or "unhandled error in the event loop")
            if skipped:
                message += f" ({skipped} similar errors not logged)"
            error = context.get("exception")
            if isinstance(error, OSError):
                log.warning("%s: %s", message, error)
            else:
                log.error(message, exc_info=error if isinstance(error, BaseException) else None)
        except Exception:  # nothing may escape into the loop
            pass

    return handle
