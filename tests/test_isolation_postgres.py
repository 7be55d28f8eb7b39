"""Tenant isolation on PostgreSQL, vectors in pgvector: the state machine of
test_isolation.py on a database of its own, in a file of its own so that parallel workers
run it beside the SQLite run."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_isolation import POSTGRES_EXAMPLES, POSTGRES_REQUIRED, open_harness, report_run, run_machine


@pytest.mark.slow(seconds=25)
def test_isolation_on_postgresql_with_pgvector(tmp_path: Path, pg_url: str) -> None:
    with open_harness(tmp_path, qdrant=False, database_url=pg_url) as harness:
        run_machine(harness, POSTGRES_EXAMPLES, "pgvector")
    report_run("pgvector", POSTGRES_REQUIRED)
