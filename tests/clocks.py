"""A clock tests can move (a real `Clock` passed to memroute, not a patch)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    """A clock that stands still until a test moves it (a real `Clock`, not a patch)."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def tick(self) -> None:
        """Move one millisecond, so consecutive writes get distinct timestamps."""
        self.now += timedelta(milliseconds=1)
