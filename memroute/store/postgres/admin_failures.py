"""Wrong admin tokens counted in the database, so that every replica's throttle sees the
failures of all (`web/throttle.py`)."""

from __future__ import annotations

from memroute.store.postgres.db import PgDatabase
from memroute.store.records import FailureCounts

# Failures older than this (seconds) are deleted as new ones are recorded.
KEPT_S = 60.0


class PgAdminFailures:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def since(self, address: str, since: float) -> FailureCounts:
        """The failures from `address` and from everyone after `since`, with the oldest of each."""
        row = self.db.fetchone(
            "SELECT count(*) FILTER (WHERE address = %s), count(*), min(at) FILTER (WHERE address = %s),"
            " min(at) FROM admin_failures WHERE at > %s",
            (address, address, since),
        )
        assert row is not None
        return FailureCounts(int(row[0]), int(row[1]), row[2], row[3])

    def record(self, address: str, at: float) -> None:
        """Count one failure from `address` at Unix time `at` (and forget the old ones)."""
        with self.db.write() as con:
            con.execute("DELETE FROM admin_failures WHERE at < %s", (at - KEPT_S,))
            con.execute("INSERT INTO admin_failures (at, address) VALUES (%s, %s)", (at, address))
