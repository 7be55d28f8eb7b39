"""Freeing space on PostgreSQL: the server manages its own files, so a write that frees
space is simply run (a full disk surfaces as `StorageFull`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class PgReserve:
    def refill(self) -> bool:
        return True

    def freeing(self, work: Callable[[], T]) -> T:
        return work()
