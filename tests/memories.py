"""Opening a `Memory` the way the tests do: on a database file (or a config), with the
background workers off unless a test needs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import postgres

from memroute import Memory
from memroute.clock import Clock
from memroute.config import Config

#: The settings that switch the bundled model off (it is on by default): recall is then the
#: key's keywords and meanings alone, what the tests of those tiers check.
NO_MODEL: dict[str, Any] = {"transformers_enabled": False}


def open_memory(
    path: Path | None = None,
    *,
    config: Config | None = None,
    clock: Clock | None = None,
    workers: bool = False,
    model: bool = True,
) -> Memory:
    """A `Memory` on `path` (or `config`'s database), usable as a context manager. Without
    `workers=True` nothing runs in the background: a test seeds or inspects the file. With
    `model=False` its settings switch the bundled model off before anything is stored (and
    before any worker starts)."""
    if config is None:
        assert path is not None
        config = Config.for_path(path)
    elif path is not None:
        config = config.with_overrides(db_path=Path(path))
    url = postgres.url_for(config.db_path)
    if url is not None:
        config = config.with_overrides(database_url=url)
    if not model and workers:
        # Switched off before the workers start: a re-index pass they begin at once must not
        # read the default settings and embed what the test stores next with the model.
        with Memory.open(config=config, clock=clock, start_workers=False) as setup:
            setup.update_settings(**NO_MODEL)
    memory = Memory.open(config=config, clock=clock, start_workers=workers)
    if not model and not workers:
        memory.update_settings(**NO_MODEL)
    return memory


def open_configured(path: Path, *, model: bool = True, **overrides: Any) -> Memory:
    """A `Memory` on `path` with the default configuration but for `overrides` (fields of
    `Config`, e.g. `meanings=False`); nothing runs in the background."""
    return open_memory(config=Config.for_path(path, {}).with_overrides(**overrides), model=model)
