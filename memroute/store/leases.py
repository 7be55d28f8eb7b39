"""The `worker_leases` table: which process runs a background job that must run once at
a time. Taking a lease is one write transaction, so two processes can never both hold it."""

from __future__ import annotations

from collections.abc import Callable

from memroute.store.db import Database


class LeaseRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def take(
        self, name: str, holder: str, *, ttl_s: float, now: float, replaceable: Callable[[str], bool]
    ) -> bool:
        """Take or renew the lease `name` for `holder` until `now + ttl_s`. Refused (False)
        while another holder has it unexpired, unless `replaceable(other)` says it may be
        taken from that holder (e.g. its process has exited)."""
        with self.db.write() as con:
            found = con.execute("SELECT holder, expires_at FROM worker_leases WHERE name = ?", (name,))
            row = found.fetchone()
            if row is not None:
                other, expires_at = str(row[0]), float(row[1])
                if other != holder and expires_at > now and not replaceable(other):
                    return False
            con.execute(
                "INSERT OR REPLACE INTO worker_leases (name, holder, expires_at) VALUES (?, ?, ?)",
                (name, holder, now + ttl_s),
            )
            return True

    def release(self, name: str, holder: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM worker_leases WHERE name = ? AND holder = ?", (name, holder))
