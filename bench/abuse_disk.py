"""Disk full and recovery: the database lives on a small tmpfs (mounted by the bench, so it needs
root), a filler file takes the rest of its space, and while it is full a writer adds memories
through the REST API and states facts in chats (a burst of statements just before the disk
fills leaves their extraction queued); then the filler is deleted. Afterwards every memory the
API acknowledged (a 200 with its id) must be there, and every statement whose chat was answered
(a 200: its turn was queued for extraction) must have been learned.

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
from dataclasses import dataclass, field
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


@dataclass
class Writes:
    """What the server acknowledged: memory ids (REST 200s) and the numbers of answered statements."""

    counts: dict[str, int] = field(default_factory=dict)
    acked: list[str] = field(default_factory=list)
    stated: list[int] = field(default_factory=list)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


async def _burst(http: httpx.AsyncClient, t: Target, writes: Writes, count: int) -> None:
    """`count` statements at once, so the extraction queue still holds them when the disk fills."""
    statuses = await asyncio.gather(*(_state(http, t, n) for n in range(count)))
    for n, status in enumerate(statuses):
        writes.count(f"chat {status} (just before full)")
        if status == "200":
            writes.stated.append(n)


async def disk_full(t: Target) -> dict[str, Any]:
    """A burst of statements, then the disk fills; writes for half the attack's time, then the
    space is freed and the writes go on for the other half."""
    folder = Path(t.state["db"]).parent
    writes = Writes()
    async with httpx.AsyncClient(timeout=10) as http:
        await _burst(http, t, writes, t.sizes.burst_statements)
        filler = fill(folder)
        free_at = time.monotonic() + t.seconds / 2
        end = time.monotonic() + t.seconds
        n = t.sizes.burst_statements
        while time.monotonic() < end:
            full = (folder / FILLER).exists()
            if full and time.monotonic() >= free_at:
                (folder / FILLER).unlink()
                full = False
            phase = "full" if full else "freed"
            status, memory_id = await _add(http, t, n)
            chat = await _state(http, t, n)
            writes.count(f"add {status} ({phase})")
            writes.count(f"chat {chat} ({phase})")
            if memory_id:
                writes.acked.append(memory_id)
            if chat == "200":
                writes.stated.append(n)
            n += 1
            await asyncio.sleep(WRITE_EVERY_S)
    t.state.update(acked=writes.acked, stated=writes.stated)
    return {"attacker": writes.counts, "filler_mb": filler / 1e6}


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
        "answered_statements_lost": len(stated) - learned,
        "extraction_queue_left": left,
    }
