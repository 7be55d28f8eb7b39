"""The labelled set of chat sentences: extraction's precision over it stays ≥ 0.95, and
no sentence labelled as stating nothing yields a fact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memroute.memory.extraction import extract_facts_from_text

SET = Path(__file__).resolve().parent.parent / "data" / "extraction_set.jsonl"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def _found(row: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f.key, f.content) for f in extract_facts_from_text(row["text"], speaker=row.get("speaker"))}


def test_the_set_is_large_and_a_third_of_it_states_nothing() -> None:
    rows = _rows()
    assert len(rows) >= 400
    assert sum(1 for r in rows if not r["facts"]) * 3 >= len(rows)


def test_precision_over_the_set_is_at_least_095() -> None:
    correct = found = 0
    for row in _rows():
        got = _found(row)
        wanted = {(f["key"], f["content"]) for f in row["facts"]}
        correct += len(got & wanted)
        found += len(got)
    assert found > 0 and correct / found >= 0.95


def test_no_sentence_that_states_nothing_yields_a_fact() -> None:
    offenders = [(r["text"], sorted(_found(r))) for r in _rows() if not r["facts"] and _found(r)]
    assert offenders == []
