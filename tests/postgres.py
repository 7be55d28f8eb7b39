"""A real PostgreSQL for the tests: `pgserver` (a PyPI package shipping PostgreSQL 16
with pgvector) runs one server per test process as its child, on a Unix socket in a
temporary folder; each test gets a database of its own, copied from a migrated template.

In CI (`CI=true`) a server that cannot start fails the tests that need it; elsewhere they
are skipped with the reason.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, NoReturn
from urllib.parse import urlsplit

from environment import missing

TEMPLATE = "memroute_template"

_lock = threading.RLock()
_server: Any = None
_folder: str | None = None
_names = itertools.count(1)
_made_ahead: list[Future[str]] = []  # databases being made (or made) for the next tests
# While a test runs on PostgreSQL (`use_for_paths`): each database file path it names maps
# to a database of its own on the server.
_by_path: dict[str, str] | None = None


def _unavailable(reason: str) -> NoReturn:
    missing(f"PostgreSQL is not available: {reason}")


def _start() -> Any:
    global _server, _folder
    _folder = tempfile.mkdtemp(prefix="memroute-pg-")
    runtime = os.path.join(_folder, "run")  # pgserver asks for one
    os.makedirs(runtime, mode=0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", runtime)
    import pgserver

    atexit.register(_stop)  # before pgserver's own exit hook, so it runs after it
    _server = pgserver.get_server(os.path.join(_folder, "data"), cleanup_mode="stop")
    with _admin() as con:
        con.execute(f"CREATE DATABASE {TEMPLATE}")
    from memroute.store.postgres import PostgresStore

    PostgresStore.open(database_url(TEMPLATE)).close()  # migrated once; copied per test
    return _server


def _stop() -> None:
    if _server is not None:
        try:
            _server.cleanup()
        finally:
            if _folder is not None:
                shutil.rmtree(_folder, ignore_errors=True)


def server() -> Any:
    """The test process's server, started on first use."""
    with _lock:
        if _server is not None:
            return _server
        try:
            return _start()
        except Exception as exc:
            _unavailable(f"{type(exc).__name__}: {exc}")
            raise


def database_url(name: str) -> str:
    """The URL of database `name` on the test server."""
    base = urlsplit(server().get_uri())
    return base._replace(path=f"/{name}").geturl()


def _admin() -> Any:
    import psycopg

    return psycopg.connect(server().get_uri(), autocommit=True)


def fresh_database() -> str:
    """A new, migrated database on the test server: its URL. One made ahead while the last
    test ran is taken when there is one (CREATE DATABASE takes ~0.25 s here), and the next is
    made in the background."""
    with _lock:
        if not _made_ahead:
            _make_ahead()
        made = _made_ahead.pop(0)
        _make_ahead()
    return database_url(made.result())


def _make_ahead() -> None:
    """Start making a database copied from the template in the background (`_made_ahead`)."""
    name = f"memroute_test_{os.getpid()}_{next(_names)}"
    made: Future[str] = Future()

    def create() -> None:
        try:
            with _admin() as con:
                con.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        except BaseException as exc:
            made.set_exception(exc)
        else:
            made.set_result(name)

    server()  # started here, not in the thread
    _made_ahead.append(made)
    threading.Thread(target=create, name="make-test-database", daemon=True).start()


def database_without_extensions() -> str:
    """A new database owned by a user who may not create extensions (pgvector needs a
    superuser): its URL, connecting as that user."""
    name = f"memroute_plain_{os.getpid()}_{next(_names)}"
    with _admin() as con:
        if con.execute("SELECT 1 FROM pg_roles WHERE rolname = 'memroute_plain'").fetchone() is None:
            con.execute("CREATE ROLE memroute_plain LOGIN")
        con.execute(f"CREATE DATABASE {name} OWNER memroute_plain TEMPLATE template0")
    parts = urlsplit(database_url(name))
    return parts._replace(netloc=parts.netloc.replace("postgres", "memroute_plain", 1)).geturl()


def drop_database(url: str) -> None:
    """Drop a database `fresh_database` made (its connections are ended first), in the
    background: the next test need not wait for it."""
    name = urlsplit(url).path.lstrip("/")

    def drop() -> None:
        with _admin() as con:
            con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    threading.Thread(target=drop, name="drop-test-database", daemon=True).start()


def url_for(path: object) -> str | None:
    """The database standing for the file `path` while the test runs on PostgreSQL (made on
    first use, the same for every later use of the path); None on SQLite."""
    if _by_path is None:
        return None
    key = str(path)
    if key not in _by_path:
        _by_path[key] = fresh_database()
    return _by_path[key]


@contextmanager
def use_for_paths() -> Iterator[None]:
    """Run the body on PostgreSQL: every database path the test helpers open becomes a
    fresh database (`url_for`), dropped afterwards."""
    global _by_path
    _by_path = {}
    try:
        yield
    finally:
        made, _by_path = _by_path, None
        for url in made.values():
            drop_database(url)
