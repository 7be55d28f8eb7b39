"""Every theme a person of the threads set may keep coming back to."""

from __future__ import annotations

from bench.threads.model import Theme
from bench.threads.themes.active import CAMPING, DANCE, GARDENING, RUNNING
from bench.threads.themes.causes import EXAM, STARTUP, SUPPORT_GROUP, VOLUNTEERING
from bench.threads.themes.craft import BAND, COOKING, PAINTING, POTTERY
from bench.threads.themes.home import BOOK_CLUB, DOG, KIDS, RENOVATION

THEMES: tuple[Theme, ...] = (
    PAINTING, POTTERY, COOKING, BAND, RUNNING, CAMPING, GARDENING, DANCE,
    KIDS, DOG, RENOVATION, BOOK_CLUB, VOLUNTEERING, SUPPORT_GROUP, STARTUP, EXAM,
)  # fmt: skip
