"""The retrieval-quality set (bench/quality/) is well formed and its queries are paraphrases.

`python -m bench.quality_run` measures recall on it; these checks keep the data honest."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from memroute.models.records import MEMORY_TYPES

ROOT = Path(__file__).resolve().parent.parent
MAX_CONTENT_CHARS = 500
MIN_NO_OVERLAP_SHARE = 0.5


def _load_quality() -> ModuleType:
    """bench/quality/__init__.py by path: `bench` is not an installed package."""
    path = ROOT / "bench" / "quality" / "__init__.py"
    spec = importlib.util.spec_from_file_location("_quality_set", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


quality = _load_quality()


@pytest.fixture(scope="module")
def memories() -> list[dict]:
    return quality.load_memories()


@pytest.fixture(scope="module")
def queries() -> list[dict]:
    return quality.load_queries()


def test_counts(memories: list[dict], queries: list[dict]) -> None:
    assert len(memories) >= 300
    assert len(queries) >= 150


def test_ids_are_unique(memories: list[dict], queries: list[dict]) -> None:
    memory_ids = [m["id"] for m in memories]
    query_ids = [q["id"] for q in queries]
    assert len(set(memory_ids)) == len(memory_ids)
    assert len(set(query_ids)) == len(query_ids)


def test_memories_are_well_formed(memories: list[dict]) -> None:
    for m in memories:
        assert set(m) == {"id", "content", "type"}, m
        assert m["type"] in MEMORY_TYPES, m
        assert m["content"].strip() == m["content"] and m["content"], m
        assert len(m["content"]) <= MAX_CONTENT_CHARS, m["id"]


def test_every_relevant_id_exists(memories: list[dict], queries: list[dict]) -> None:
    known = {m["id"] for m in memories}
    for q in queries:
        assert set(q) == {"id", "query", "relevant"}, q
        assert q["query"].strip(), q
        assert 1 <= len(q["relevant"]) <= 3, q
        assert len(set(q["relevant"])) == len(q["relevant"]), q
        assert set(q["relevant"]) <= known, q


def test_no_query_matches_the_runner_key_prefix(queries: list[dict]) -> None:
    """The runner stores keys "quality:<id>", and FTS indexes keys: a query word "quality"
    would match every memory."""
    for q in queries:
        assert "quality" not in quality.content_words(q["query"]), q


def test_most_queries_are_paraphrases(memories: list[dict], queries: list[dict]) -> None:
    """Share of queries with no content word in common with any of their relevant memories."""
    by_id = {m["id"]: m for m in memories}
    share = sum(not quality.overlaps(q, by_id) for q in queries) / len(queries)
    stemmed = sum(not quality.overlaps(q, by_id, stemmed=True) for q in queries) / len(queries)
    print(
        f"\nno content-word overlap with relevant memories: {share:.1%} of {len(queries)} queries"
        f" (with crude suffix stemming: {stemmed:.1%})"
    )
    assert share >= MIN_NO_OVERLAP_SHARE
