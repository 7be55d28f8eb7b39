"""Dashboard sessions on PostgreSQL: hashed secrets with an expiry, shared by replicas."""

from __future__ import annotations

from memroute.store.postgres.db import PgDatabase


class PgSessionRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def create(self, id_hash: str, token_fingerprint: str, *, now: str, expires_at: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM dashboard_sessions WHERE expires_at <= %s", (now,))
            con.execute(
                "INSERT INTO dashboard_sessions (id_hash, token_fingerprint, created_at, expires_at)"
                " VALUES (%s, %s, %s, %s)",
                (id_hash, token_fingerprint, now, expires_at),
            )

    def expires_at(self, id_hash: str, token_fingerprint: str, *, now: str) -> str | None:
        """When the session ends, or None if it is unknown, expired or from another admin token."""
        row = self.db.fetchone(
            "SELECT expires_at FROM dashboard_sessions"
            " WHERE id_hash = %s AND token_fingerprint = %s AND expires_at > %s",
            (id_hash, token_fingerprint, now),
        )
        return str(row[0]) if row else None

    def delete(self, id_hash: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM dashboard_sessions WHERE id_hash = %s", (id_hash,))

    def take(self, id_hash: str, token_fingerprint: str, *, now: str) -> bool:
        """Delete a live row and say whether this call deleted it (so only one caller can)."""
        with self.db.write() as con:
            done = con.execute(
                "DELETE FROM dashboard_sessions"
                " WHERE id_hash = %s AND token_fingerprint = %s AND expires_at > %s",
                (id_hash, token_fingerprint, now),
            )
            return done.rowcount > 0
