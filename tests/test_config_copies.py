"""The settings and the providers every chat reads come from this process's copy of them,
read again once any process (or any tool writing the file) changed them: an SQLite file
keeps a version number of both tables that its triggers move on at every write."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memroute import Memory
from memroute.errors import UpstreamError


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    opened = Memory.open(tmp_path / "config.db", start_workers=False)
    yield opened
    opened.close()


def _cli(db: Path, *args: str) -> None:
    """memroute's CLI in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-m", "memroute", "--db", str(db), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def _sqlite3(db: Path, sql: str) -> None:
    """A statement run by another program (Python's own sqlite3 module, in a process of its own)."""
    script = f"import sqlite3; c = sqlite3.connect({str(db)!r}); c.executescript({sql!r}); c.close()"
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_a_setting_and_a_provider_another_process_changes_are_in_force_at_the_next_read(
    mem: Memory, tmp_path: Path
) -> None:
    db = tmp_path / "config.db"
    assert mem.settings().max_tokens == 2000
    with pytest.raises(UpstreamError, match="no upstream provider is configured"):
        mem.providers.route("gpt-4o-mini")

    _cli(db, "settings", "set", "maxTokens=700")
    _cli(db, "providers", "add", "local", "--base-url", "http://127.0.0.1:9/v1", "--default")
    assert mem.settings().max_tokens == 700
    assert mem.providers.route("gpt-4o-mini").base_url == "http://127.0.0.1:9/v1"

    # A program that writes the file without memroute is seen too, deletions included.
    _sqlite3(db, "UPDATE settings SET value = '900' WHERE key = 'memoryMaxTokens'; DELETE FROM providers;")
    assert mem.settings().max_tokens == 900
    with pytest.raises(UpstreamError, match="no upstream provider is configured"):
        mem.providers.route("gpt-4o-mini")


def test_an_admission_asks_once_and_the_next_one_sees_a_change_made_meanwhile(
    mem: Memory, tmp_path: Path
) -> None:
    other = Memory.open(tmp_path / "config.db", start_workers=False)  # another process's handle
    try:
        other.providers.add("first", base_url="http://127.0.0.1:9/v1", default=True)
        with mem.config_checked_once():
            assert mem.settings().max_tokens == 2000
            assert mem.providers.route("m").provider_id == "first"
            other.update_settings(max_tokens=500)
            other.providers.add("second", base_url="http://127.0.0.1:10/v1", default=True)
            # The settings and providers of one admission are those it first read.
            assert mem.settings().max_tokens == 2000
            assert mem.providers.route("m").provider_id == "first"
        assert mem.settings().max_tokens == 500
        assert mem.providers.route("m").provider_id == "second"
    finally:
        other.close()


def test_the_stored_settings_a_process_holds_cannot_be_changed_by_a_caller(mem: Memory) -> None:
    mem.update_settings(max_tokens=800)
    stored = mem._store.settings.read_all()
    with pytest.raises(TypeError):
        stored["memoryMaxTokens"] = 1  # type: ignore[index]
    assert mem.settings().max_tokens == 800
