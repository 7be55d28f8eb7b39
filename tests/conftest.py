"""Shared fixtures: real SQLite files under tmp_path, a clock tests can move, the scripted
upstream provider, the gateway in front of it."""

from __future__ import annotations

import fcntl
import gc
from collections.abc import Iterator
from pathlib import Path

import postgres
import pytest
from clocks import ManualClock
from gateways import Gateway, serve_gateway
from memories import open_memory
from servers import LiveServer, ScriptedUpstream

from memroute import Memory
from memroute.embeddings.distill import build_static_model
from memroute.embeddings.static import DISTILLED_STATIC_NAME, is_model_folder
from memroute.embeddings.word_vectors import machine_cache_dir


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files that hold a slow test run first, the longest first (`slow(seconds=N)`: about how
    long the file takes on an idle core): on parallel workers (whole files each), the long ones
    then start together and run beside the short ones, instead of trailing alone at the end."""
    seconds: dict[Path, float] = {}
    for item in items:
        for marker in item.iter_markers("slow"):
            seconds[item.path] = max(seconds.get(item.path, 0.0), float(marker.kwargs.get("seconds", 0)))
    items.sort(key=lambda item: (item.path not in seconds, -seconds.get(item.path, 0.0)))  # stable


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the collection imported (the SDKs, FastAPI, the test modules: ~400,000 objects)
    lives as long as the run: frozen, every full collection of the run skips it."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def word_model() -> None:
    """The word vectors' model, distilled into the machine's cache once (~15 s, one worker
    builds while the others wait) before any test: every key index then relates words from
    its first question, as a server does once the model is there."""
    cache = machine_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_model_folder(cache / DISTILLED_STATIC_NAME):
            build_static_model(cache / DISTILLED_STATIC_NAME)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module marked `both_stores` runs every test on an SQLite file and on PostgreSQL (but
    those marked `one_store`)."""
    marked = metafunc.definition.get_closest_marker
    if marked("both_stores") is not None and marked("one_store") is None:
        metafunc.parametrize("store_kind", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture(autouse=True)
def store_kind(request: pytest.FixtureRequest) -> Iterator[str]:
    """The store the test's helpers open (tests/memories.py, gateways.py, servers.py): the
    SQLite file, or with `both_stores` also a PostgreSQL database per file path."""
    kind = getattr(request, "param", "sqlite")
    if kind == "sqlite":
        yield kind
        return
    with postgres.use_for_paths():
        yield kind


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh database on the test process's PostgreSQL server (tests/postgres.py): its URL."""
    url = postgres.fresh_database()
    yield url
    postgres.drop_database(url)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memroute.db"


@pytest.fixture
def mem(db_path: Path, clock: ManualClock) -> Iterator[Memory]:
    memory = open_memory(db_path, clock=clock, workers=True)
    yield memory
    memory.close()


@pytest.fixture
def gateway(tmp_path: Path, upstream: ScriptedUpstream) -> Iterator[Gateway]:
    """memroute under uvicorn with memory on, a client key, and the scripted upstream."""
    yield from serve_gateway(tmp_path, upstream)


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    """The scripted upstream provider, served on a free port (its `url`)."""
    scripted = ScriptedUpstream()
    with LiveServer(scripted.app()) as server:
        scripted.url = server.url  # type: ignore[attr-defined]
        yield scripted
