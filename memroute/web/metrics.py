"""A small Prometheus text-format registry (counters, gauges read on scrape, histograms)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

LATENCY_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    if not labels:
        return ""
    inner = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' for k, v in labels
    )
    return "{" + inner + "}"


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
        self._help: dict[str, tuple[str, str]] = {}
        self._gauges: dict[str, Callable[[], float]] = {}
        self._histograms: dict[str, tuple[list[int], list[float]]] = {}

    def counter(self, name: str, help_text: str) -> None:
        self._help[name] = ("counter", help_text)
        self._counters.setdefault(name, {})

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self._help[name] = ("gauge", help_text)
        self._gauges[name] = read

    def histogram(self, name: str, help_text: str) -> None:
        self._help[name] = ("histogram", help_text)
        self._histograms[name] = ([0] * (len(LATENCY_BUCKETS_S) + 1), [0.0])

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            series = self._counters[name]
            series[key] = series.get(key, 0.0) + amount

    def observe(self, name: str, seconds: float) -> None:
        with self._lock:
            counts, total = self._histograms[name]
            for index, bound in enumerate(LATENCY_BUCKETS_S):
                if seconds <= bound:
                    counts[index] += 1
                    break
            else:
                counts[-1] += 1
            total[0] += seconds

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            for name, (kind, help_text) in self._help.items():
                lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
                if kind == "counter":
                    series = self._counters[name] or {(): 0.0}
                    lines += [f"{name}{_labels(k)} {v:g}" for k, v in sorted(series.items())]
                elif kind == "histogram":
                    counts, total = self._histograms[name]
                    running = 0
                    for bound, count in zip(LATENCY_BUCKETS_S, counts, strict=False):
                        running += count
                        lines.append(f'{name}_bucket{{le="{bound:g}"}} {running}')
                    running += counts[-1]
                    lines += [
                        f'{name}_bucket{{le="+Inf"}} {running}',
                        f"{name}_sum {total[0]:g}",
                        f"{name}_count {running}",
                    ]
                else:
                    try:
                        lines.append(f"{name} {self._gauges[name]():g}")
                    except Exception:  # a gauge that cannot be read has no sample this scrape
                        lines.append(f"# {name} could not be read")
        return "\n".join(lines) + "\n"


def standard_metrics(queue_depth: Callable[[], float]) -> Metrics:
    metrics = Metrics()
    metrics.counter("memroute_requests_total", "HTTP requests by route group and status class.")
    metrics.counter(
        "memroute_chat_requests_total",
        "Gateway requests with memory by route (chat, responses, messages) and memory outcome.",
    )
    metrics.counter("memroute_memories_injected_total", "Memories injected into chat requests.")
    metrics.counter("memroute_memory_tokens_injected_total", "Estimated tokens of injected memories.")
    metrics.counter("memroute_memory_errors_total", "Memory failures that were degraded around.")
    metrics.counter("memroute_gateway_refused_total", "Gateway requests refused (429) by the limit reached.")
    metrics.histogram("memroute_retrieval_seconds", "Time spent retrieving memories for chat requests.")
    metrics.gauge("memroute_extraction_queue_depth", "Texts waiting for fact extraction.", queue_depth)
    return metrics


class CountRequests:
    """ASGI middleware: counts requests by route group (`v1`, `api`, `other`) and status class."""

    def __init__(self, app: Any, metrics: Callable[[], Metrics | None]) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        group = "v1" if path.startswith("/v1/") else "api" if path.startswith("/api/") else "other"
        status = [500]

        async def counting_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            metrics = self.metrics()
            if metrics is not None:
                metrics.inc("memroute_requests_total", group=group, status=f"{status[0] // 100}xx")
