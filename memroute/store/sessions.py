"""SQL for dashboard sessions (migration 0005): hashed secrets with an expiry."""

from __future__ import annotations

from memroute.store.db import Database


class SessionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, id_hash: str, token_fingerprint: str, *, now: str, expires_at: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM dashboard_sessions WHERE expires_at <= ?", (now,))
            con.execute(
                "INSERT INTO dashboard_sessions (id_hash, token_fingerprint, created_at, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (id_hash, token_fingerprint, now, expires_at),
            )

    def expires_at(self, id_hash: str, token_fingerprint: str, *, now: str) -> str | None:
        """When the session ends, or None if it is unknown, expired or from another admin token."""
        row = (
            self.db.read()
            .execute(
                "SELECT expires_at FROM dashboard_sessions"
                " WHERE id_hash = ? AND token_fingerprint = ? AND expires_at > ?",
                (id_hash, token_fingerprint, now),
            )
            .fetchone()
        )
        return str(row[0]) if row else None

    def delete(self, id_hash: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM dashboard_sessions WHERE id_hash = ?", (id_hash,))

    def take(self, id_hash: str, token_fingerprint: str, *, now: str) -> bool:
        """Delete a live row and say whether this call deleted it (so only one caller can)."""
        with self.db.write() as con:
            con.execute(
                "DELETE FROM dashboard_sessions"
                " WHERE id_hash = ? AND token_fingerprint = ? AND expires_at > ?",
                (id_hash, token_fingerprint, now),
            )
            return bool(con.changes())
