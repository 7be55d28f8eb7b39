"""Disk full and recovery: the database lives on a small tmpfs (mounted by the bench, so it needs
root), a filler file takes the rest of its space, and while it is full a writer adds memories
through the REST API and states facts in chats; then the filler is deleted. Afterwards every
memory the API acknowledged (a 200 with its id) must be there, and the facts of the chats that
were answered should have been learned.

Why a tmpfs: SQLite's `PRAGMA max_page_count` is per connection (the server's own connections
would not see a limit set from outside), and a file-size rlimit makes writes fail with EFBIG,
which SQLite reports as an I/O error, not as a full disk; a full file system is the real thing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.abuse_attacks import ADMIN, Target, drain_queue
from bench.abuse_load import label

FILLER = "filler.bin"
WRITE_EVERY_S = 0.1


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def small_disk(base_db: Path, directory: Path, size_mb: int) -> Iterator[Path]:
    """A tmpfs of `size_mb` holding a copy of the database; unmounted on exit."""
    mount = directory / "tmpfs"
    mount.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mount)], check=True, timeout=30
    )
    try:
        db = mount / base_db.name
        shutil.copyfile(base_db, db)
        yield db
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, timeout=30)


def fill(folder: Path) -> int:
    """Write a filler file until the file system is full; its size in bytes."""
    piece = b"\0" * (1 << 20)
    written = 0
    with (folder / FILLER).open("wb", buffering=0) as f:
        for size in (1 << 20, 1 << 12, 1):
            with contextlib.suppress(OSError):
                while True:
                    written += f.write(piece[:size])
    return written


async def _add(http: httpx.AsyncClient, t: Target, n: int) -> tuple[str, str | None]:
    body = {"apiKeyId": t.key_id, "content": f"fact number {n} written while the disk was full"}
    try:
        r = await http.post(t.url + "/api/memory", json=body, headers=ADMIN)
        return str(r.status_code), (r.json().get("id") if r.status_code == 200 else None)
    except (httpx.HTTPError, ValueError) as exc:
        return label(exc), None


async def _state(http: httpx.AsyncClient, t: Target, n: int) -> str:
    text = f"I prefer option{n}zeta for the full-disk project."
    body = {"model": "echo-1", "messages": [{"role": "user", "content": text}]}
    try:
        r = await http.post(
            t.url + "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {t.secret}"}
        )
        return str(r.status_code)
    except httpx.HTTPError as exc:
        return label(exc)


async def disk_full(t: Target) -> dict[str, Any]:
    """Fill the disk, write for two thirds of the attack, free the space, write for the rest."""
    folder = Path(t.state["db"]).parent
    filler = fill(folder)
    counts: dict[str, int] = {}
    acked: list[str] = []
    stated: list[int] = []
    freed_at = time.monotonic() + t.seconds * 2 / 3
    end = time.monotonic() + t.seconds
    n = 0
    async with httpx.AsyncClient(timeout=10) as http:
        while time.monotonic() < end:
            if freed_at and time.monotonic() >= freed_at:
                (folder / FILLER).unlink()
                freed_at = 0.0
            phase = "full" if freed_at else "freed"
            status, memory_id = await _add(http, t, n)
            chat = await _state(http, t, n)
            counts[f"add {status} ({phase})"] = counts.get(f"add {status} ({phase})", 0) + 1
            counts[f"chat {chat} ({phase})"] = counts.get(f"chat {chat} ({phase})", 0) + 1
            if memory_id:
                acked.append(memory_id)
            if chat == "200":
                stated.append(n)
            n += 1
            await asyncio.sleep(WRITE_EVERY_S)
    t.state.update(acked=acked, stated=stated)
    return {"attacker": counts, "filler_mb": filler / 1e6, "acknowledged_adds": len(acked)}


async def verify_disk_full(t: Target) -> dict[str, Any]:
    """After recovery: the acknowledged memories that are there, and the stated facts learned."""
    left = await drain_queue(t.url, 30)
    acked: list[str] = t.state.get("acked", [])
    stated: list[int] = t.state.get("stated", [])
    found = learned = 0
    async with httpx.AsyncClient(timeout=10, headers=ADMIN) as http:
        for memory_id in acked:
            with contextlib.suppress(httpx.HTTPError):
                found += (await http.get(f"{t.url}/api/memory/{memory_id}")).status_code == 200
        for n in stated:
            with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                r = await http.get(
                    t.url + "/api/memory", params={"apiKeyId": t.key_id, "q": f"option{n}zeta"}
                )
                learned += r.json()["total"] > 0
    return {
        "acknowledged_adds": len(acked),
        "acknowledged_adds_lost": len(acked) - found,
        "answered_statements": len(stated),
        "statements_learned": learned,
        "extraction_queue_left": left,
    }
