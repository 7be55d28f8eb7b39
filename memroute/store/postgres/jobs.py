"""The extraction queue on PostgreSQL. Replicas claim batches with `FOR UPDATE SKIP
LOCKED` for `CLAIM_S`: two never work on the same jobs, and the jobs of a replica that
died are handed out again once its claim expires. A job is still finished at most once:
`finish` deletes it in the transaction that stores what it teaches."""

from __future__ import annotations

import time
from collections.abc import Sequence

from memroute.store.jobs import COLUMNS, row_to_job
from memroute.store.postgres.db import PgDatabase
from memroute.store.records import ExtractionJob

# How long a claimed batch is one replica's; a batch takes well under a second, and a
# replica that died leaves its batch to the others this long (a batch run twice is still
# stored once: see `finish`).
CLAIM_S = 10.0


class PgJobRepository:
    """`always_durable`: every job waits for the log's flush (`MEMROUTE_POSTGRES_SYNCHRONOUS=full`)."""

    def __init__(self, db: PgDatabase, *, always_durable: bool = False) -> None:
        self.db = db
        self.always_durable = always_durable

    def enqueue(
        self,
        api_key_id: str,
        session_id: str,
        source: str,
        text: str,
        *,
        now: str,
        request_id: str = "",
        speaker: str = "",
        capture: bool = False,
        facts: bool = True,
        durable: bool = True,
    ) -> int:
        """Queue one text; its job id. Not `durable`, and a transaction of its own: the
        commit does not wait for the write-ahead log's flush (asynchronous commit, set for
        this statement's transaction alone). A later durable commit of any session flushes
        it; the server flushes it within 3 × `wal_writer_delay` (0.6 s by default)."""
        returning = "id"
        if not durable and not self.always_durable and not self.db.in_write_transaction():
            returning = "id, set_config('synchronous_commit', 'off', true)"
        with self.db.write_alone() as con:
            row = con.execute(
                "INSERT INTO extraction_jobs (api_key_id, session_id, source, text, created_at,"
                " request_id, speaker, capture, facts) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                f" RETURNING {returning}",
                (api_key_id, session_id, source, text, now, request_id, speaker, int(capture), int(facts)),
            ).fetchone()
            assert row is not None
            return int(row[0])

    def next_batch(self, *, max_attempts: int, limit: int) -> list[ExtractionJob]:
        """Claim the oldest unclaimed jobs that have not used up their attempts."""
        now = time.time()
        with self.db.write_alone() as con:
            rows = con.execute(
                f"UPDATE extraction_jobs SET claimed_until = %s WHERE id IN ("
                " SELECT id FROM extraction_jobs WHERE attempts < %s AND claimed_until < %s"
                " ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED)"
                f" RETURNING {COLUMNS}",
                (now + CLAIM_S, max_attempts, now, limit),
            ).fetchall()
        return sorted((row_to_job(r) for r in rows), key=lambda job: job.id)

    def finish(self, job_ids: Sequence[int]) -> set[int]:
        """Remove jobs, inside the transaction that stores what they teach; the ids that
        were still there (the others another replica stored: nothing of theirs must be
        stored)."""
        if not job_ids:
            return set()
        with self.db.write() as con:
            rows = con.execute(
                "DELETE FROM extraction_jobs WHERE id = ANY(%s) RETURNING id", (list(job_ids),)
            ).fetchall()
        return {int(row[0]) for row in rows}

    def fail(self, job_id: int, error: str) -> None:
        """Count a failed attempt and hand the job out again."""
        with self.db.write() as con:
            con.execute(
                "UPDATE extraction_jobs SET attempts = attempts + 1, last_error = %s, claimed_until = 0"
                " WHERE id = %s",
                (error[:500], job_id),
            )

    def counts(self, *, max_attempts: int) -> tuple[int, int]:
        """(pending, failed for good)."""
        row = self.db.fetchone(
            "SELECT count(*) FILTER (WHERE attempts < %s), count(*) FILTER (WHERE attempts >= %s)"
            " FROM extraction_jobs",
            (max_attempts, max_attempts),
        )
        assert row is not None
        return int(row[0]), int(row[1])
