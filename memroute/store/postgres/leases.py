"""Leases on background jobs that run in one process at a time, on PostgreSQL: taking
one locks its row, so two replicas can never both hold it."""

from __future__ import annotations

from collections.abc import Callable

from memroute.store.postgres.db import PgDatabase


class PgLeaseRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def take(
        self, name: str, holder: str, *, ttl_s: float, now: float, replaceable: Callable[[str], bool]
    ) -> bool:
        """Take or renew the lease `name` for `holder` until `now + ttl_s`. Refused (False)
        while another holder has it unexpired, unless `replaceable(other)` says it may be
        taken from that holder (e.g. its process has exited)."""
        with self.db.write() as con:
            # The row exists (or is being made) before it is locked: the lock then orders takers.
            con.execute(
                "INSERT INTO worker_leases (name, holder, expires_at) VALUES (%s, '', 0)"
                " ON CONFLICT (name) DO NOTHING",
                (name,),
            )
            row = con.execute(
                "SELECT holder, expires_at FROM worker_leases WHERE name = %s FOR UPDATE", (name,)
            ).fetchone()
            assert row is not None
            other, expires_at = str(row[0]), float(row[1])
            if other and other != holder and expires_at > now and not replaceable(other):
                return False
            con.execute(
                "UPDATE worker_leases SET holder = %s, expires_at = %s WHERE name = %s",
                (holder, now + ttl_s, name),
            )
            return True

    def release(self, name: str, holder: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM worker_leases WHERE name = %s AND holder = %s", (name, holder))
