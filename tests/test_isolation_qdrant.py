"""Tenant isolation with Qdrant's local mode as the vector store: the state machine of
test_isolation.py, in a file of its own so that parallel workers run it beside the
sqlite-vec run."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_isolation import QDRANT_EXAMPLES, QDRANT_REQUIRED, open_harness, report_run, run_machine


@pytest.mark.slow(seconds=60)
def test_isolation_with_qdrant(tmp_path: Path) -> None:
    with open_harness(tmp_path, qdrant=True) as harness:
        run_machine(harness, QDRANT_EXAMPLES, "qdrant")
    report_run("qdrant", QDRANT_REQUIRED)
