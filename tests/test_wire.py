"""One wire format: `to_wire` (CLI, MCP, export) and the derived REST models send the same
JSON for every result record, and the wire object follows its dataclass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from clocks import ManualClock
from pydantic import BaseModel

from memroute import Memory
from memroute.models.results import QdrantDrain, ReindexReport
from memroute.models.wire import Wire, camel, to_wire, wire_names
from memroute.web.schemas import engine, keys, maintenance, memory, qdrant, settings


def _records(mem: Memory, clock: ManualClock) -> list[tuple[type[BaseModel], Any]]:
    """(derived model, a record it describes), from a real database."""
    old = mem.add("k1", "uses vim", key="tool:editor", metadata={"nested": {"a_b": [1, 2]}})
    mem.update(old.id, content="uses helix")
    mem.add("k1", "walked the dog", type="episodic", expires_at="2999-01-01")
    key, _ = mem.keys.create("app")
    provider = mem.providers.add("openai", "https://api.openai.com/v1", api_key="sk-0123456789abcdef")
    records: list[tuple[type[BaseModel], Any]] = [
        (memory.MemoryOut, mem.get(old.id)),
        (memory.HistoryEntryOut, mem.history(old.id)[-1]),
        (memory.ListStats, mem.stats("k1")),
        (memory.PreviewOut, mem.retrieve_preview("k1", "helix")),
        (memory.ImportReportOut, mem.import_(['{"content": "x", "type": "opinion"}', '{"content": "y"}'])),
        (keys.ApiKeyOut, key),
        (keys.ProviderOut, provider),
        (settings.MemorySettingsOut, mem.settings()),
        (engine.ExtractionQueue, mem.extraction_queue()),
        (maintenance.HealthOut, mem.verify()),
    ]
    assert to_wire(records[3][1])["memories"] and to_wire(records[4][1])["errors"], "non-empty lists"
    clock.advance(days=40)
    dry = mem.summarize(30, "k1", dry_run=True)
    assert dry.candidates, "the records are old enough to be summarised"
    return [*records, (maintenance.SummarizeOut, dry), (maintenance.SummarizeOut, mem.summarize(30, "k1"))]


def test_every_derived_model_sends_what_to_wire_sends(mem: Memory, clock: ManualClock) -> None:
    for model, record in _records(mem, clock):
        sent = model.model_validate(record).model_dump(mode="json", by_alias=True)
        if model is maintenance.HealthOut:  # its route leaves `error` out while it is None
            sent = {k: v for k, v in sent.items() if v is not None}
        assert sent == to_wire(record), model.__name__
        assert list(sent) == list(to_wire(record)), f"{model.__name__}: same fields, same order"


def _status_records(mem: Memory) -> list[tuple[type[BaseModel], Any]]:
    """(derived model, a record it describes) of the engine status and the Qdrant page."""
    qs = mem.qdrant
    records: list[tuple[type[BaseModel], Any]] = [
        (engine.EngineStatus, mem.engine_status()),
        *((engine.EmbeddingProvider, p) for p in mem.embedding_providers()),
        (qdrant.QdrantSettingsOut, qs.settings().public()),
        (qdrant.QdrantHealthOut, qs.health()),
        (qdrant.QdrantSearchOut, qs.search_test("tea", 3)),
        (qdrant.QdrantCleanupOut, qs.cleanup()),
        *((qdrant.QdrantModel, m) for m in qs.embedding_models()),
    ]
    return records


def test_every_derived_status_model_sends_what_to_wire_sends(mem: Memory) -> None:
    mem.providers.add("emb", "http://127.0.0.1:9/v1", api_key="sk-0123456789abcdef")
    mem.update_settings(enabled=True, embedding_source="hashing")
    mem.add("k1", "drinks green tea")
    off = _status_records(mem)  # Qdrant off: every report says why
    mem.qdrant.update_settings({"enabled": True, "host": ":memory:", "apiKey": "qdrant-secret-key"})
    drained = mem.reindex(wait=True).qdrant
    assert drained is not None and drained.serving, "Qdrant serves after the re-index"
    on = _status_records(mem)
    answers = dict(on)
    assert to_wire(answers[engine.EngineStatus])["qdrant"]["points"] == 1
    assert to_wire(answers[qdrant.QdrantSearchOut])["results"], "Qdrant answers the search test"
    for model, record in [*off, *on]:
        sent = model.model_validate(record).model_dump(mode="json", by_alias=True)
        assert sent == to_wire(record), model.__name__
        assert list(sent) == list(to_wire(record)), f"{model.__name__}: same fields, same order"
    assert "qdrant-secret-key" not in str([to_wire(record) for _, record in on])


def test_a_failed_qdrant_drain_sends_no_pushed_count() -> None:
    assert to_wire(QdrantDrain(ok=False, error="down", serving=False)) == {
        "ok": False,
        "error": "down",
        "serving": False,
    }
    assert to_wire(QdrantDrain(ok=True, error=None, serving=True, pushed=3))["pushed"] == 3


def test_a_smaller_view_sends_only_its_fields() -> None:
    drained = QdrantDrain(ok=True, error=None, serving=True, pushed=3)
    report = ReindexReport(started=True, pending=3, processed=2, errors=0, reason=None, qdrant=drained)
    sent = maintenance.ReindexOut.model_validate(report).model_dump(by_alias=True)
    assert sent == {"started": True, "pending": 3, "reason": None}


def test_the_wire_object_follows_the_dataclass(mem: Memory) -> None:
    record = mem.add("k1", "likes tea", key="drink", metadata={"snake_key": 1})
    wire = to_wire(record)
    assert wire["apiKeyId"] == "k1" and wire["metadata"] == {"snake_key": 1}  # dict keys are data
    assert list(wire) == [name for _, name in wire_names(type(record))]
    assert wire["userId"] == "" and "keyId" not in wire  # the owner goes out as key and user
    wire["metadata"]["snake_key"] = 2
    assert record.metadata == {"snake_key": 1}  # a copy, never the record's own dict


@dataclass
class _Inner:
    some_value: int


@dataclass
class _Outer:
    items: list[_Inner]
    pair: tuple[_Inner, float]
    inner: _Inner
    labels: dict[str, Any]
    flag: bool
    name: str
    nothing: None = None


def test_records_inside_lists_tuples_and_dicts_go_out_as_wire_objects_and_plain_values_as_they_are() -> None:
    record = _Outer([_Inner(1)], (_Inner(2), 0.5), _Inner(3), {"snake_key": [_Inner(4), "x"]}, True, "n")
    assert to_wire(record) == {
        "items": [{"someValue": 1}],
        "pair": [{"someValue": 2}, 0.5],
        "inner": {"someValue": 3},
        "labels": {"snake_key": [{"someValue": 4}, "x"]},
        "flag": True,
        "name": "n",
        "nothing": None,
    }


def test_a_providers_secret_never_goes_on_the_wire(mem: Memory) -> None:
    provider = mem.providers.add("groq", "https://api.groq.com/openai/v1", api_key="gsk-secret-value-1234")
    wire = to_wire(provider)
    assert "apiKey" not in wire and "gsk-secret-value" not in str(wire)
    assert (wire["hasStoredKey"], wire["apiKeyMasked"], wire["default"]) == (True, "***1234", False)


def test_a_health_error_is_sent_only_when_there_is_one(mem: Memory) -> None:
    assert "error" not in to_wire(mem.verify())
    assert type(mem.verify()).__wire__ == Wire(omitted_when_none=("error",))


def test_camel() -> None:
    assert [camel(n) for n in ("id", "api_key_id", "total_tokens", "latency_ms")] == [
        "id",
        "apiKeyId",
        "totalTokens",
        "latencyMs",
    ]


def test_only_dataclass_instances_have_a_wire_object() -> None:
    with pytest.raises(TypeError):
        to_wire({"a": 1})
    with pytest.raises(TypeError):
        to_wire(ReindexReport)
