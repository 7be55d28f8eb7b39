"""Dates said the way people say them, relative to the day of a session, with the exact day
they mean (the answer to a "when" question)."""

from __future__ import annotations

import datetime as dt
import random

from bench.conversations.pools import MONTHS

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def future(rng: random.Random, today: dt.date, *, month_only: bool = False) -> tuple[str, str, dt.date]:
    """A day 2–14 weeks after `today`: (phrase, answer, day)."""
    day = today + dt.timedelta(days=rng.randint(14, 100))
    return say_future(rng, day, month_only=month_only)


def say_future(rng: random.Random, day: dt.date, *, month_only: bool = False) -> tuple[str, str, dt.date]:
    month = MONTHS[day.month - 1]
    if month_only:
        return f"in {month}", f"{month} {day.year}", day
    phrase = rng.choice(
        (
            f"on {month} {day.day}",
            f"on the {ordinal(day.day)} of {month}",
            f"on {WEEKDAYS[day.weekday()]} {ordinal(day.day)} {month}",
            f"on {day.day} {month[:3]}",
        )
    )
    return phrase, day.isoformat(), day


def later(rng: random.Random, day: dt.date) -> tuple[str, str, dt.date]:
    """A day 1–6 weeks after `day` (a postponement)."""
    return say_future(rng, day + dt.timedelta(days=rng.randint(7, 45)))


def past(rng: random.Random, today: dt.date) -> tuple[str, str, dt.date]:
    """A recent day before `today`, said relative to it: (phrase, answer, day)."""
    kind = rng.randrange(5)
    if kind == 0:
        back = (today.weekday() - 5) % 7 or 7  # the Saturday before today
        day = today - dt.timedelta(days=back)
        return "last weekend", f"the weekend of {day.isoformat()}", day
    if kind == 1:
        day = today - dt.timedelta(days=1)
        return "yesterday", day.isoformat(), day
    if kind == 2:
        weekday = rng.randrange(7)
        back = (today.weekday() - weekday) % 7 or 7
        day = today - dt.timedelta(days=back)
        return f"on {WEEKDAYS[weekday]}", day.isoformat(), day
    if kind == 3:
        day = today - dt.timedelta(days=14)
        return "two weeks ago", f"around {day.isoformat()}", day
    day = today - dt.timedelta(days=rng.randint(2, 5))
    return f"on the {ordinal(day.day)}", day.isoformat(), day
