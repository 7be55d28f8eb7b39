"""The health probe: run the real pipeline on a private owner id —
extraction → store → keyword search → delete — and leave nothing behind."""

from __future__ import annotations

import time
import uuid
from typing import Protocol

from memroute.models.records import MemoryRecord
from memroute.models.results import VerifyReport, VerifySteps

VERIFY_OWNER_PREFIX = "__memroute_verify__:"


class Pipeline(Protocol):
    def remember(
        self, api_key_id: str, text: str, *, session_id: str = "", source: str = "user_message"
    ) -> list[MemoryRecord]: ...

    def search_ids(self, api_key_id: str, query: str) -> list[str]: ...

    def delete_quietly(self, memory_id: str) -> bool: ...

    def count_owner(self, api_key_id: str) -> int: ...


def verify_pipeline(pipeline: Pipeline) -> VerifyReport:
    nonce = uuid.uuid4().hex[:12]
    owner = VERIFY_OWNER_PREFIX + nonce
    word = f"probe{nonce}"
    steps: dict[str, bool] = {"extract": False, "store": False, "search": False, "delete": False}
    started = time.perf_counter()
    stored: list[MemoryRecord] = []
    error: str | None = None
    try:
        stored = pipeline.remember(owner, f"I prefer {word} for health checks.")
        steps["extract"] = bool(stored)
        steps["store"] = any(word in m.content for m in stored)
        found = pipeline.search_ids(owner, f"which {word} do I prefer")
        steps["search"] = any(m.id in found for m in stored)
    except Exception as exc:  # the probe reports failures, it does not raise them
        error = f"{type(exc).__name__}: {exc}"
    finally:
        for memory in stored:
            pipeline.delete_quietly(memory.id)
        steps["delete"] = pipeline.count_owner(owner) == 0
    working = all(steps.values()) and error is None
    if not working and error is None:
        error = "failed steps: " + ", ".join(name for name, ok in steps.items() if not ok)
    return VerifyReport(
        working=working,
        latency_ms=round((time.perf_counter() - started) * 1000, 2),
        steps=VerifySteps(**steps),
        error=error,
    )
