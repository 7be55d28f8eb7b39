"""Memory settings (SPEC §10, REF §1.6 and the REF §14 memory-settings* tests).

Stored values are read leniently (whatever an old version or a hand edit left in
the table never breaks memory); updates are validated strictly (a bad value is
refused and nothing is stored). Settings live in the database, so every worker
sees a change at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import apsw
import pytest
from memories import NO_MODEL, open_memory

from memroute import InvalidInput, Memory
from memroute.models.wire import to_wire

REF_FIELDS = {
    "enabled": False,
    "maxTokens": 2000,
    "retentionDays": 30,
    "strategy": "hybrid",
    "skillsEnabled": True,
    "embeddingSource": "auto",
    "embeddingProviderModel": None,
    "transformersEnabled": True,  # the reference: false; memroute embeds with the bundled MiniLM
    "staticEnabled": False,
    "rerankEnabled": False,
    "rerankProviderModel": None,
    "vectorStore": "auto",
}
ADDED_FIELDS = {
    "scope": "apiKey",
    "extractionEnabled": True,
    "injectionEnabled": True,
    "captureTurns": "user",
}


def _write_raw(db_path: Path, values: dict[str, Any], *, raw_text: dict[str, str] | None = None) -> None:
    """Put values into the settings table the way an old version or a hand edit would."""
    con = apsw.Connection(str(db_path))
    con.set_busy_timeout(5000)
    try:
        with con:
            for key, value in values.items():
                con.execute(
                    "INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES (?, ?, ?)",
                    (key, json.dumps(value), "2026-01-01T00:00:00.000Z"),
                )
            for key, text in (raw_text or {}).items():
                con.execute(
                    "INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES (?, ?, ?)",
                    (key, text, "2026-01-01T00:00:00.000Z"),
                )
    finally:
        con.close()


def _stored_rows(db_path: Path) -> dict[str, str]:
    con = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return dict(con.execute("SELECT key, value FROM settings").fetchall())
    finally:
        con.close()


# --- defaults and shape ---------------------------------------------------------------------------


def test_defaults(mem: Memory) -> None:
    s = mem.settings()
    assert s.enabled is False  # injection costs tokens: off until the user turns it on
    assert s.max_tokens == 2000
    assert s.retention_days == 30
    assert s.strategy == "hybrid"
    assert s.skills_enabled is True
    assert s.embedding_source == "auto"
    assert s.vector_store == "auto"
    assert s.scope == "apiKey"
    assert s.extraction_enabled is True
    assert s.injection_enabled is True
    assert s.capture_turns == "user"  # the user's own words are kept verbatim


def test_capture_turns_takes_off_user_or_all_and_refuses_anything_else(mem: Memory) -> None:
    assert mem.update_settings(captureTurns="all").capture_turns == "all"
    assert mem.update_settings(capture_turns="off").capture_turns == "off"
    with pytest.raises(InvalidInput, match="captureTurns"):
        mem.update_settings(captureTurns="everything")
    assert mem.settings().capture_turns == "off"


def test_the_wire_object_has_the_twelve_ref_fields_and_the_added_ones(mem: Memory) -> None:
    body = to_wire(mem.settings())
    assert body == {**REF_FIELDS, **ADDED_FIELDS}
    json.dumps(body)  # what the REST API returns must be JSON


# --- lenient reading of stored values -------------------------------------------------------------


def test_ref_normalisation_of_bad_stored_values(db_path: Path, mem: Memory) -> None:
    _write_raw(
        db_path,
        {
            "memoryEnabled": "yes",
            "memoryMaxTokens": 20001,
            "memoryRetentionDays": 0,
            "memoryStrategy": "unsupported",
            "skillsEnabled": True,
        },
    )
    body = to_wire(mem.settings())
    assert body["enabled"] is False
    assert body["maxTokens"] == 16000
    assert body["retentionDays"] == 1
    assert body["strategy"] == "hybrid"
    assert body["skillsEnabled"] is True
    others = {k: v for k, v in body.items() if k not in ("enabled", "maxTokens", "retentionDays", "strategy")}
    assert others == {k: v for k, v in {**REF_FIELDS, **ADDED_FIELDS}.items() if k in others}


def test_a_value_edited_by_hand_is_read_again_even_when_it_compares_equal(db_path: Path, mem: Memory) -> None:
    """`true` edited to `1` turns memory off (a switch must be true or false), though Python
    holds `1 == True`; the reads before and after see the stored text as it is."""
    _write_raw(db_path, {"memoryEnabled": True, "memoryMaxTokens": 300})
    assert (mem.settings().enabled, mem.settings().max_tokens) == (True, 300)
    _write_raw(db_path, {"memoryEnabled": 1})
    assert (mem.settings().enabled, mem.settings().max_tokens) == (False, 300)
    _write_raw(db_path, {"memoryEnabled": True, "memoryMaxTokens": 300.0})
    assert (mem.settings().enabled, mem.settings().max_tokens) == (True, 300)


def test_extended_fields_are_read_and_bad_ones_fall_back(db_path: Path, mem: Memory) -> None:
    _write_raw(
        db_path,
        {
            "memoryRetentionDays": 999,
            "memoryMaxTokens": 1500.6,
            "memoryEmbeddingSource": "static",
            "memoryEmbeddingProviderModel": "  openai/text-embedding-3-small ",
            "memoryTransformersEnabled": True,
            "memoryStaticEnabled": 1,  # not a real boolean
            "memoryRerankEnabled": "true",  # not a real boolean
            "memoryRerankProviderModel": "   ",
            "memoryVectorStore": "pinecone",
            "memoryStrategy": "recent",
        },
    )
    s = mem.settings()
    assert s.retention_days == 365
    assert s.max_tokens == 1501
    assert s.embedding_source == "static"
    assert s.embedding_provider_model == "openai/text-embedding-3-small"
    assert s.transformers_enabled is True
    assert s.static_enabled is False
    assert s.rerank_enabled is False
    assert s.rerank_provider_model is None
    assert s.vector_store == "auto"
    assert s.strategy == "recent"


def test_unreadable_stored_json_falls_back_to_defaults(db_path: Path, mem: Memory) -> None:
    _write_raw(db_path, {}, raw_text={"memoryMaxTokens": "{not json", "memoryEnabled": ""})
    s = mem.settings()
    assert s.max_tokens == 2000
    assert s.enabled is False


@pytest.mark.parametrize("raw", ["2000", None, True, [], {"n": 1}, float("nan")])
def test_a_stored_max_tokens_that_is_not_a_number_takes_the_default(
    db_path: Path, mem: Memory, raw: Any
) -> None:
    if isinstance(raw, float):
        _write_raw(db_path, {}, raw_text={"memoryMaxTokens": "NaN"})
    else:
        _write_raw(db_path, {"memoryMaxTokens": raw})
    assert mem.settings().max_tokens == 2000


# --- strict updates -------------------------------------------------------------------------------


def test_update_accepts_camel_case_and_snake_case(mem: Memory) -> None:
    s = mem.update_settings(
        {"maxTokens": 500, "retention_days": 7}, strategy="semantic", injection_enabled=False
    )
    assert (s.max_tokens, s.retention_days, s.strategy, s.injection_enabled) == (500, 7, "semantic", False)
    s = mem.update_settings(enabled=True, vectorStore="qdrant", scope="session")
    assert (s.enabled, s.vector_store, s.scope) == (True, "qdrant", "session")
    assert to_wire(mem.settings())["maxTokens"] == 500  # earlier changes are kept


def test_update_edges_of_the_ranges(mem: Memory) -> None:
    assert mem.update_settings(maxTokens=0).max_tokens == 0
    assert mem.update_settings(maxTokens=16000).max_tokens == 16000
    assert mem.update_settings(retentionDays=1).retention_days == 1
    assert mem.update_settings(retentionDays=365).retention_days == 365
    assert mem.update_settings(strategy="exact").strategy == "recent"  # the UI name of exact
    assert (
        mem.update_settings(embeddingProviderModel="openai/text-embedding-3-small").embedding_provider_model
        == "openai/text-embedding-3-small"
    )
    assert mem.update_settings(embeddingProviderModel=None).embedding_provider_model is None


@pytest.mark.parametrize(
    "changes",
    [
        {"maxTokens": 16001},
        {"maxTokens": -1},
        {"maxTokens": "2000"},
        {"maxTokens": 2.5},
        {"maxTokens": True},
        {"retentionDays": 0},
        {"retentionDays": 366},
        {"enabled": "yes"},
        {"enabled": 1},
        {"strategy": "fastest"},
        {"embeddingSource": "gpu"},
        {"vectorStore": "pinecone"},
        {"scope": "everyone"},
        {"rerankProviderModel": 42},
        {"memoryEnabled": True},  # a DB key is not an API name
        {"colour": "blue"},
        {"maxTokens": 100, "retentionDays": 0},  # one bad field: nothing is stored
        {"enabled": True, "nope": 1},
    ],
)
def test_bad_updates_are_refused_and_nothing_is_stored(
    db_path: Path, mem: Memory, changes: dict[str, Any]
) -> None:
    before = mem.settings()
    with pytest.raises(InvalidInput):
        mem.update_settings(changes)
    assert mem.settings() == before
    assert _stored_rows(db_path) == {}


def test_invalid_input_names_the_field(mem: Memory) -> None:
    with pytest.raises(InvalidInput) as caught:
        mem.update_settings(maxTokens=99999)
    assert caught.value.field == "maxTokens"
    assert "16000" in str(caught.value)
    with pytest.raises(InvalidInput) as caught:
        mem.update_settings(colour="blue")
    assert "colour" in str(caught.value)


def test_a_change_is_seen_by_another_memory_on_the_same_file(db_path: Path, mem: Memory, clock: Any) -> None:
    other = open_memory(db_path, clock=clock)
    try:
        assert other.settings().enabled is False
        mem.update_settings(enabled=True, maxTokens=300)
        assert other.settings().enabled is True
        assert other.settings().max_tokens == 300
        other.update_settings(strategy="recent")
        assert mem.settings().strategy == "recent"
    finally:
        other.close()


def test_settings_survive_a_reopen(db_path: Path, clock: Any) -> None:
    first = open_memory(db_path, clock=clock, workers=True)
    first.update_settings(enabled=True, retentionDays=90)
    first.close()
    second = open_memory(db_path, clock=clock, workers=True)
    try:
        assert (second.settings().enabled, second.settings().retention_days) == (True, 90)
    finally:
        second.close()


# --- recall(): what the gateway injects -----------------------------------------------------------


def _seed(mem: Memory, clock: Any) -> None:
    mem.add("k", "prefers TypeScript for the backend")  # 9 tokens
    clock.tick()
    mem.add("k", "likes green tea with lunch")  # 7 tokens
    clock.tick()
    mem.add("other", "prefers Kotlin on Android")
    clock.tick()


def test_recall_is_empty_while_memory_is_disabled(mem: Memory, clock: Any) -> None:
    _seed(mem, clock)
    assert mem.recall("k", "TypeScript") == []
    mem.update_settings(enabled=True)
    assert mem.recall("k", "TypeScript")
    mem.update_settings(injectionEnabled=False)
    assert mem.recall("k", "TypeScript") == []
    mem.update_settings(injectionEnabled=True, maxTokens=0)
    assert mem.recall("k", "TypeScript") == []


def test_recall_uses_the_settings_strategy_budget_and_scope(mem: Memory, clock: Any) -> None:
    _seed(mem, clock)
    mem.update_settings(enabled=True, **NO_MODEL)  # what keyword recall finds per strategy
    hybrid = mem.recall("k", "TypeScript")
    assert [i.memory.content for i in hybrid] == [
        "prefers TypeScript for the backend",
        "likes green tea with lunch",
    ]

    mem.update_settings(strategy="recent")  # newest first, the query does not reorder
    assert [i.memory.content for i in mem.recall("k", "TypeScript")] == [
        "likes green tea with lunch",
        "prefers TypeScript for the backend",
    ]

    mem.update_settings(strategy="semantic")
    assert [i.memory.content for i in mem.recall("k", "TypeScript")] == ["prefers TypeScript for the backend"]

    mem.update_settings(strategy="hybrid", maxTokens=9)
    assert [i.memory.content for i in mem.recall("k", "TypeScript")] == ["prefers TypeScript for the backend"]

    mem.update_settings(maxTokens=2000, scope="global")
    assert "prefers Kotlin on Android" in [i.memory.content for i in mem.recall("k", "prefers")]


def test_recall_session_scope(mem: Memory, clock: Any) -> None:
    mem.add("k", "drinks tea", session_id="a")
    mem.add("k", "drinks coffee", session_id="b")
    mem.update_settings(enabled=True, scope="session")
    assert [i.memory.content for i in mem.recall("k", "drinks", session_id="a")] == ["drinks tea"]
    assert [i.memory.content for i in mem.recall("k", "drinks", session_id="b")] == ["drinks coffee"]


def test_recall_uses_the_settings_retention(mem: Memory, clock: Any) -> None:
    mem.add("k", "prefers TypeScript")
    mem.update_settings(enabled=True, retentionDays=10)
    clock.advance(days=11)
    assert mem.recall("k", "TypeScript") == []
    mem.update_settings(retentionDays=30)
    assert [i.memory.content for i in mem.recall("k", "TypeScript")] == ["prefers TypeScript"]


def test_recall_bumps_access(mem: Memory, clock: Any) -> None:
    record = mem.add("k", "prefers TypeScript")
    mem.update_settings(enabled=True)
    mem.recall("k", "TypeScript")
    assert mem.get(record.id).access_count == 1


def test_retrieve_without_arguments_follows_the_settings(mem: Memory, clock: Any) -> None:
    _seed(mem, clock)
    mem.update_settings(maxTokens=8, strategy="recent")
    items = mem.retrieve("k", "TypeScript")
    assert [i.memory.content for i in items] == ["likes green tea with lunch"]
