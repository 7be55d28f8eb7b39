"""Timestamps: every stored time is ISO-8601 UTC with milliseconds and `Z`.

One fixed format means string comparison equals time comparison, so SQL can
compare `expires_at > :now` with an index and without `datetime()` calls.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from memroute.errors import InvalidInput

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    """Format as `YYYY-MM-DDTHH:MM:SS.mmmZ` (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC).replace(tzinfo=None)
    # isoformat, not strftime("%Y"): glibc writes year 999 as "999", not "0999", and one
    # fixed width is what makes string order equal time order.
    return moment.isoformat(timespec="milliseconds") + "Z"


def parse_time(value: object, field: str = "date") -> datetime:
    """Parse an ISO-8601 string, a date or a datetime; anything else is InvalidInput."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("expected an ISO-8601 date or timestamp", field)
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"not an ISO-8601 date or timestamp: {value[:40]!r}", field) from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        # In UTC now: an offset can push 0001-01-01 or 9999-12-31 out of datetime's range.
        return parsed.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"is out of range in UTC (years 1-9999): {value[:40]!r}", field) from None


def normalize_time(value: object, field: str = "date") -> str | None:
    """None stays None; anything else is parsed and re-formatted in the stored format."""
    if value is None:
        return None
    return to_iso(parse_time(value, field))


def days_ago(now: datetime, days: float) -> str:
    return to_iso(now - timedelta(days=days))
