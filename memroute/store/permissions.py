"""Who may read the database: its files are the owner's alone (0600), and so is the data
folder memroute keeps them in (0700).

The database holds provider keys and every memory. Its file is created 0600 before
SQLite opens it (SQLite gives the -wal and -shm files the mode of the database file),
and an existing file, -wal or -shm is set to 0600 at every open. The folder is created
0700; an existing folder that others can read is tightened to 0700 when it holds only
memroute's files, and otherwise left as it is with a warning in the log (it may be a
folder shared with other programs).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("memroute.store")

FILE_MODE = 0o600
FOLDER_MODE = 0o700
DB_SUFFIXES = ("", "-wal", "-shm", "-journal")
# Besides the database's own files, what memroute keeps in its data folder.
OWN_FILES = frozenset({"admin_token", "embeddings"})


def prepare_database_file(path: str) -> None:
    """Create the folder and the (empty) database file of `path` for the owner alone,
    or tighten the existing files of the database to 0600."""
    if path == ":memory:":
        return
    db = Path(path)
    _prepare_folder(db.parent, db.name)
    with contextlib.suppress(OSError):  # it exists, or SQLite says why it cannot be created
        os.close(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    for suffix in DB_SUFFIXES:
        _tighten(Path(f"{db}{suffix}"), FILE_MODE)


def _prepare_folder(folder: Path, db_name: str) -> None:
    if not folder.exists():
        folder.mkdir(parents=True, mode=FOLDER_MODE, exist_ok=True)  # only the last one is 0700
        return
    own = OWN_FILES | {db_name + suffix for suffix in DB_SUFFIXES}
    try:
        mode = stat.S_IMODE(folder.stat().st_mode)
        if not mode & 0o077:
            return
        only_ours = all(entry.name in own for entry in folder.iterdir())
    except OSError:  # cannot look inside: SQLite reports what it cannot open
        return
    if only_ours:
        _tighten(folder, FOLDER_MODE)
        return
    log.warning(
        "store.permissions.folder_open path=%s mode=%s: other users can list this folder"
        " (the database files in it are 0600)",
        folder,
        oct(mode),
    )


def _tighten(path: Path, mode: int) -> None:
    """Set `path` to `mode` when it exists and is wider; a file someone else owns is left
    as it is, with a warning."""
    try:
        current = stat.S_IMODE(path.stat().st_mode)
        if current & ~mode:
            os.chmod(path, mode)
    except FileNotFoundError:
        return
    except PermissionError:
        log.warning("store.permissions.not_changed path=%s: not the owner, left as it is", path)
