"""Foundation pieces: token estimate, the LRU+TTL cache, timestamps, configuration."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memroute.clock import normalize_time, parse_time, to_iso
from memroute.config import Config
from memroute.errors import InvalidInput
from memroute.lru import LruTtlCache, RecentCounts
from memroute.models.records import Stats, estimate_tokens
from memroute.models.wire import to_wire


@pytest.mark.parametrize(
    ("text", "tokens"), [("", 0), (None, 0), ("abcd", 1), ("abcde", 2), ("x" * 100, 25), ("Hello World", 3)]
)
def test_estimate_tokens(text: str | None, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


class FakeTimer:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_cache_counts_hits_and_misses() -> None:
    cache: LruTtlCache[str] = LruTtlCache(10, 60, timer=FakeTimer())
    assert cache.get("a") is None
    cache.set("a", "A")
    assert cache.get("a") == "A"
    assert cache.get("a") == "A"
    assert cache.get("b") is None
    assert (cache.hits, cache.misses, len(cache)) == (2, 2, 1)


def test_cache_entries_expire_after_ttl() -> None:
    timer = FakeTimer()
    cache: LruTtlCache[str] = LruTtlCache(10, 300, timer=timer)
    cache.set("a", "A")
    timer.now = 299
    assert cache.get("a") == "A"
    timer.now = 360
    assert cache.get("a") is None
    assert len(cache) == 0


def test_recent_counts_start_again_after_the_window_and_forget_the_oldest_key() -> None:
    timer = FakeTimer()
    counts = RecentCounts(30, 2, timer=timer)
    assert [counts.count("a") for _ in range(3)] == [1, 2, 3]
    timer.now = 29  # still within 30 s of the first
    assert counts.count("a") == 4
    timer.now = 31  # the first counted is older than the window: a fresh count
    assert counts.count("a") == 1
    counts.count("b")
    counts.count("c")  # a third key: "a", counted longest ago, is forgotten
    assert counts.count("a") == 1 and counts.count("c") == 2
    counts.forget("c")
    assert counts.count("c") == 1


def test_cache_evicts_least_recently_used_and_get_refreshes() -> None:
    cache: LruTtlCache[int] = LruTtlCache(3, 60, timer=FakeTimer())
    for key in "abc":
        cache.set(key, ord(key))
    assert cache.get("a") == ord("a")  # a is now the most recently used
    cache.set("d", 4)
    assert len(cache) == 3
    assert cache.get("b") is None  # b was the least recently used
    assert cache.get("a") is not None and cache.get("d") == 4


def test_cache_invalidate_and_reset() -> None:
    cache: LruTtlCache[int] = LruTtlCache(3, 60, timer=FakeTimer())
    cache.set("a", 1)
    cache.invalidate("a")
    assert cache.get("a") is None
    cache.reset()
    assert (cache.hits, cache.misses, len(cache)) == (0, 0, 0)


@pytest.mark.parametrize(("hits", "misses", "rate"), [(0, 0, 0.0), (10, 0, 1.0), (5, 5, 0.5), (3, 7, 0.3)])
def test_hit_rate(hits: int, misses: int, rate: float) -> None:
    stats = Stats(total=0, by_type={}, tokens_used=0, cache_hits=hits, cache_misses=misses)
    assert stats.hit_rate == rate
    assert to_wire(stats)["cacheStats"] == {"hits": hits, "misses": misses}


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("2026-04-06T00:00:00.000Z", "2026-04-06T00:00:00.000Z"),
        ("2026-04-06T02:00:00+02:00", "2026-04-06T00:00:00.000Z"),
        ("2026-04-06", "2026-04-06T00:00:00.000Z"),
        ("2026-04-06 10:30:00", "2026-04-06T10:30:00.000Z"),
        (datetime(2026, 4, 6, 1, 2, 3, 456789, tzinfo=UTC), "2026-04-06T01:02:03.456Z"),
        (datetime(2026, 4, 6, 3, tzinfo=timezone(timedelta(hours=3))), "2026-04-06T00:00:00.000Z"),
        (date(2026, 4, 6), "2026-04-06T00:00:00.000Z"),
        (None, None),
    ],
)
def test_times_are_stored_in_one_format(value: object, stored: str | None) -> None:
    assert normalize_time(value) == stored


@pytest.mark.parametrize("value", ["tomorrow", "", "2026-13-01", 12345, [], "2026-04-06T25:00"])
def test_bad_times_are_invalid_input(value: object) -> None:
    with pytest.raises(InvalidInput):
        parse_time(value, "expiresAt")


def test_stored_format_sorts_like_time() -> None:
    early = to_iso(datetime(2026, 1, 1, 9, 59, 59, 999000, tzinfo=UTC))
    late = to_iso(datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC))
    assert early < late


def test_config_reads_environment(tmp_path: Path) -> None:
    env = {
        "MEMROUTE_DATA_DIR": str(tmp_path),
        "MEMROUTE_MAX_CONTENT_BYTES": "1000",
        "MEMORY_HYBRID_VECTOR_WEIGHT": "0.3",
        "MEMORY_TYPED_DECAY_ENABLED": "true",
        "MEMORY_MIN_SCORE": "0.25",
        "MEMORY_VEC_QUANTIZATION": "INT8",
    }
    config = Config.from_env(env)
    assert config.db_path == tmp_path / "memroute.db"
    assert config.max_content_bytes == 1000
    assert config.hybrid_vector_weight == 0.3
    assert config.decay_enabled is True
    assert config.min_score == 0.25
    assert config.vec_quantization == "int8"


def test_config_defaults_to_home_data_dir() -> None:
    config = Config.from_env({})
    assert config.db_path == Path.home() / ".memroute" / "memroute.db"
    assert config.decay_enabled is False and config.hybrid_vector_weight is None  # the source's own
    assert config.workers == 1 and Config.from_env({"MEMROUTE_WORKERS": "4"}).workers == 4
    assert config.chat_threads == 32 > config.key_max_concurrent  # one key cannot hold them all
    assert (
        config.stream_gather_ms == 5
        and Config.from_env({"MEMROUTE_STREAM_GATHER_MS": "0"}).stream_gather_ms == 0
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MEMROUTE_MAX_CONTENT_BYTES", "lots"),
        ("MEMORY_HYBRID_VECTOR_WEIGHT", "1.5"),
        ("MEMORY_HYBRID_VECTOR_WEIGHT", "half"),
        ("MEMROUTE_SQLITE_SYNCHRONOUS", "off"),
        ("MEMROUTE_POSTGRES_SYNCHRONOUS", "off"),
        ("MEMROUTE_KEY_MAX_CONCURRENT", "0"),
        ("MEMROUTE_MAX_CONCURRENT", "0"),
        ("MEMROUTE_KEY_RPM", "-1"),
        ("MEMROUTE_UPSTREAM_TOTAL_TIMEOUT", "0"),
        ("MEMROUTE_MAX_CHAT_MESSAGES", "0"),
        ("MEMROUTE_MAX_UPSTREAM_BODY_BYTES", "10"),
        ("MEMROUTE_WORKERS", "0"),
        ("MEMROUTE_WORKERS", "65"),
        ("MEMROUTE_WORKERS", "two"),
        ("MEMROUTE_CHAT_THREADS", "0"),
        ("MEMROUTE_STREAM_GATHER_MS", "-1"),
        ("MEMROUTE_STREAM_GATHER_MS", "101"),
    ],
)
def test_bad_environment_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        Config.from_env({name: value})


def test_cache_refuses_a_value_read_before_an_invalidation() -> None:
    cache: LruTtlCache[str] = LruTtlCache(3, 60, timer=FakeTimer())
    version = cache.version
    cache.invalidate("a")  # a write committed while the value was being read
    cache.set("a", "stale", if_version=version)
    assert cache.get("a") is None
    cache.set("a", "fresh", if_version=cache.version)
    assert cache.get("a") == "fresh"


def test_one_version_written_in_pyproject_and_reported_everywhere(tmp_path: Path) -> None:
    import tomllib

    import httpx
    from click.testing import CliRunner
    from servers import LiveServer

    from memroute.cli import main
    from memroute.version import package_version
    from memroute.web.app import create_app

    written = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
        "version"
    ]
    assert package_version() == written
    app = create_app(Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_ADMIN_TOKEN": "v" * 32}))
    with LiveServer(app) as server:
        assert httpx.get(server.url + "/healthz").json()["version"] == written
        assert httpx.get(server.url + "/openapi.json").json()["info"]["version"] == written
    assert CliRunner().invoke(main, ["--version"]).output.strip().endswith(f"version {written}")
