"""The durable `extraction_jobs` queue: texts waiting for fact extraction."""

from __future__ import annotations

from collections.abc import Sequence

from memroute.store.db import Database
from memroute.store.records import ExtractionJob

COLUMNS = (
    "id, api_key_id, session_id, source, text, created_at, attempts, last_error,"
    " request_id, speaker, capture, facts"
)


def row_to_job(row: tuple[object, ...]) -> ExtractionJob:
    (job_id, owner, session, source, text, created, attempts, error, request, speaker, capture, facts) = row
    return ExtractionJob(
        int(job_id),  # type: ignore[call-overload]
        str(owner),
        str(session),
        str(source),
        str(text),
        str(created),
        int(attempts),  # type: ignore[call-overload]
        None if error is None else str(error),
        request_id=str(request),
        speaker=str(speaker),
        capture=bool(capture),
        facts=bool(facts),
    )


class JobRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

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
        durable: bool = True,  # the file's synchronous setting decides for every write
    ) -> int:
        with self.db.write() as con:
            con.execute(
                "INSERT INTO extraction_jobs (api_key_id, session_id, source, text, created_at,"
                " request_id, speaker, capture, facts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (api_key_id, session_id, source, text, now, request_id, speaker, int(capture), int(facts)),
            )
            return int(con.last_insert_rowid())

    def next_batch(self, *, max_attempts: int, limit: int) -> list[ExtractionJob]:
        """Oldest jobs that have not used up their attempts."""
        rows = (
            self.db.read()
            .execute(
                f"SELECT {COLUMNS} FROM extraction_jobs WHERE attempts < ? ORDER BY id LIMIT ?",
                (max_attempts, limit),
            )
            .fetchall()
        )
        return [row_to_job(row) for row in rows]

    def finish(self, job_ids: Sequence[int]) -> set[int]:
        """Remove jobs, inside the transaction that stores what they teach; the ids that
        were still there (the others another process stored: nothing of theirs must be
        stored)."""
        if not job_ids:
            return set()
        marks = ", ".join("?" * len(job_ids))
        with self.db.write() as con:
            rows = con.execute(
                f"DELETE FROM extraction_jobs WHERE id IN ({marks}) RETURNING id", tuple(job_ids)
            )
            return {int(row[0]) for row in rows}

    def fail(self, job_id: int, error: str) -> None:
        with self.db.write() as con:
            con.execute(
                "UPDATE extraction_jobs SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error[:500], job_id),
            )

    def counts(self, *, max_attempts: int) -> tuple[int, int]:
        """(pending, failed for good)."""
        row = (
            self.db.read()
            .execute(
                "SELECT COALESCE(SUM(attempts < ?), 0), COALESCE(SUM(attempts >= ?), 0) FROM extraction_jobs",
                (max_attempts, max_attempts),
            )
            .fetchone()
        )
        assert row is not None  # an aggregate always returns one row
        return int(row[0]), int(row[1])
